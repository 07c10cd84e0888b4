package graphstore

import (
	"cmp"
	"context"
	"slices"

	"github.com/wukongd/wukongd/internal/cpugate"
)

// Writing a change into a store's deltas (DESIGN.md §9, "Bulk writes").
//
// Every key a write toggles, and every list it reads to decide, is on one
// shard: the (s, p, Out) list and the index entries of s on s's shard,
// the (o, p, In) list and the index entries of o on o's shard, a vertex's
// statistics on its own. So a big write runs one goroutine per shard
// (shardWriter), each appending only to its shard's delta table and
// count map: first the statistics of the shard's vertices before and the
// out-edges of its subjects, which find the in-edges to toggle on every
// shard; then, after all have finished, the in-edges, the index vertices
// and the statistics after. Each shard's table gets the same appends in
// the same order as from one goroutine, so the bytes are the same.

// parallelWriteMin is the fewest triples a write spreads over the shards
// (below it the goroutines cost more than they save).
var parallelWriteMin = 4096

// writeYield is how many keys a write's goroutine toggles between two
// yield points (cpugate.Yield): a bulk write runs on every processor but
// one while queries run, on every one otherwise, and a goroutine one too
// many gives its processor back within a few tens of microseconds of
// work.
const writeYield = 256

// krec is a toggle of value v under key k on shard o.
type krec struct {
	o int
	k Key
	v ID
}

func cmpKrec(a, b krec) int {
	if c := cmp.Compare(a.o, b.o); c != 0 {
		return c
	}
	if c := cmp.Compare(a.k, b.k); c != 0 {
		return c
	}
	return cmp.Compare(a.v, b.v)
}

// shardWriter is one goroutine of a write: the shards it writes (one, or
// all), the undo of its count changes and its vertices' statistics.
type shardWriter struct {
	r      *applyRun
	st     *Store
	sign   int64
	insert bool
	fresh  ID // vertices from fresh on have no list yet (applyRun.fresh)
	nets   []netSaved
	added  map[int][]Key // keys new in shard o's count map
	sd     statsDelta
	in     [][]krec // in-edge toggles by shard (parallel) or all in in[0]
	idx    []krec
	punned []krec
	n      int // keys toggled, for yields
	yield  bool
	list   []ID
	ids    []uint64
	// The In lists a hosted write read (out), by key: the in-edges it
	// decides are toggled only after out, so they hold for the whole
	// call, and a hot object's list is read once, not once per triple
	// (its triples are spread over its subjects: a Graph Store PUT or a
	// CLEAR of a whole graph read it thousands of times).
	inLists  map[Key][]ID
	inChecks map[Key]int // point checks of an In list not read whole (hostedHas)
}

func (r *applyRun) newShardWriter(st *Store, insert bool, inShards int, yield bool) *shardWriter {
	w := &shardWriter{r: r, st: st, sign: 1, insert: insert, fresh: r.fresh, added: map[int][]Key{}, in: make([][]krec, inShards), yield: yield}
	if !insert {
		w.sign = -1
	}
	return w
}

// untouched reports whether vertex v was made by this run and no write
// has touched it yet: all its lists are empty.
func (w *shardWriter) untouched(v ID) bool {
	return w.fresh != 0 && v >= w.fresh && v >= FirstVertexID
}

// list returns the newest list of key k of shard o; fresh: k's vertex has
// no list.
func (w *shardWriter) tipList(o int, k Key) []ID {
	if w.untouched(k.Vertex()) {
		return w.list[:0]
	}
	w.list = w.st.tipList(w.list[:0], o, k)
	return w.list
}

// hostedReadAll is how many point checks of one In list out's hosted path
// makes before it reads the whole list once (hostedInList) for the rest.
var hostedReadAll = 16

// hostedHas reports whether s is in key k's newest list of local shard o,
// for out's hosted path (k is the In list of an object whose subject s is
// on another node). A subject or object this run made has no lists; a
// list checked a few times is searched where it lies (the base list and
// the delta's records, nothing copied), one checked more often is read
// once whole. A hot object (every new subject's triple names it) has a
// list as long as the writes so far, which reading whole for every entry
// made the apply cost grow with the store.
func (w *shardWriter) hostedHas(o int, k Key, s ID) bool {
	if w.untouched(s) || w.untouched(k.Vertex()) {
		return false
	}
	if l, ok := w.inLists[k]; ok {
		_, member := slices.BinarySearch(l, s)
		return member
	}
	if w.inChecks == nil {
		w.inChecks = map[Key]int{}
	}
	if w.inChecks[k]++; w.inChecks[k] > hostedReadAll {
		_, member := slices.BinarySearch(w.hostedInList(o, k), s)
		return member
	}
	return w.st.tipHas(o, k, s)
}

// hostedInList is tipList of key k of shard o for out's hosted path,
// which reads the In lists of objects whose subjects are elsewhere: each
// key once per call of out.
func (w *shardWriter) hostedInList(o int, k Key) []ID {
	if l, ok := w.inLists[k]; ok {
		return l
	}
	if w.inLists == nil {
		w.inLists = map[Key][]ID{}
	}
	var l []ID
	if !w.untouched(k.Vertex()) {
		l = w.st.tipList(nil, o, k) // o is k's vertex's shard: the key names it
	}
	w.inLists[k] = l
	return l
}

// toggle appends ids (sorted, distinct) to key k of shard o, each
// entering (sign +1) or leaving (-1) the list, and returns the list's
// length before.
func (w *shardWriter) toggle(o int, k Key, ids []uint64, sign int64) (int64, error) {
	var before int64
	if !w.untouched(k.Vertex()) {
		before = w.st.tipCount(o, k)
	}
	if len(ids) == 0 {
		return before, nil
	}
	if w.n++; w.yield && w.n%writeYield == 0 {
		cpugate.Default.Yield()
		if err := w.r.ctx.Err(); err != nil {
			return 0, err
		}
	}
	t, err := w.st.deltaTable(o)
	if err != nil {
		return 0, err
	}
	tu := w.r.tus[t]
	if tu == nil { // one writer for all shards (the parallel ones have theirs)
		tu = &tableUndo{t: t}
		t.Mark(&tu.u)
		w.r.tus[t] = tu
	}
	if err := t.Append(uint64(k), w.r.stamp, ids, &tu.u); err != nil {
		return 0, err
	}
	m := w.st.sh.w.net[o]
	old, had := m[k]
	if had {
		w.nets = append(w.nets, netSaved{m: m, k: k, old: old, had: true})
	} else {
		w.added[o] = append(w.added[o], k)
	}
	m[k] = old + sign*int64(len(ids))
	return before, nil
}

// stats adds sign times the statistics share of verts (shard o's, or any
// shard's with one writer).
func (w *shardWriter) stats(verts []ID, sign int64) error {
	for i, v := range verts {
		if i%4096 == 4095 {
			if err := w.r.ctx.Err(); err != nil {
				return err
			}
			if w.yield {
				cpugate.Default.Yield()
			}
		}
		if sign < 0 && w.untouched(v) {
			continue // no share yet
		}
		w.sd.vertex(w.st, v, sign)
	}
	return nil
}

// out toggles the out-edges of triples (sorted, distinct; subjects of
// this writer's shards) and finds the in-edges and index entries that
// follow.
func (w *shardWriter) out(triples []idTriple) error {
	st, r, insert := w.st, w.r, w.insert
	inAt := func(o int) *[]krec { return &w.in[o%len(w.in)] }
	w.inLists, w.inChecks = nil, nil
	w.reserve(triples)
	for i := 0; i < len(triples); {
		if i%4096 == 0 {
			if err := r.ctx.Err(); err != nil {
				return err
			}
		}
		s, p := triples[i].s, triples[i].p
		j := i
		for j < len(triples) && triples[j].s == s && triples[j].p == p {
			j++
		}
		o := st.Owner(s)
		if r.hosted && st.tables[o] == nil {
			// s's shard is elsewhere: a triple whose object is here is
			// decided on its In list (it holds s iff the triple exists).
			if p != TypeID { // type triples live wholly on s's shard
				for _, t := range triples[i:j] {
					oo := st.Owner(t.o)
					if st.tables[oo] == nil {
						continue
					}
					k := MakeKey(t.o, p, In)
					if w.hostedHas(oo, k, s) != insert {
						*inAt(oo) = append(*inAt(oo), krec{oo, k, s})
					}
				}
			}
			i = j
			continue
		}
		k := MakeKey(s, p, Out)
		list := w.tipList(o, k)
		w.ids = w.ids[:0]
		for _, t := range triples[i:j] {
			_, member := slices.BinarySearch(list, t.o)
			if member != insert {
				w.ids = append(w.ids, uint64(t.o))
				if p == TypeID {
					*inAt(o) = append(*inAt(o), krec{o, MakeKey(IndexVertex, t.o, In), s})
				} else {
					oo := st.Owner(t.o)
					*inAt(oo) = append(*inAt(oo), krec{oo, MakeKey(t.o, p, In), s})
				}
			}
		}
		i = j
		before, err := w.toggle(o, k, w.ids, w.sign)
		if err != nil {
			return err
		}
		if after := before + w.sign*int64(len(w.ids)); (before == 0) != (after == 0) {
			w.idx = append(w.idx, krec{o, MakeKey(IndexVertex, p, Out), s}, krec{o, MakeKey(s, AllPredicates, Out), p})
		}
	}
	return nil
}

// reserve makes room for what out appends for triples at most: an
// in-edge (or type index) record per triple on its shard, two index
// records per (s, p) group. A big write's lists have millions of
// records, which growing by doubling copies about twice over.
func (w *shardWriter) reserve(triples []idTriple) {
	if len(triples) < parallelWriteMin {
		return
	}
	counts := make([]int, len(w.in))
	groups := 0
	for i, t := range triples {
		o := t.o
		if t.p == TypeID {
			o = t.s
		}
		counts[w.st.Owner(o)%len(w.in)]++
		if i == 0 || t.s != triples[i-1].s || t.p != triples[i-1].p {
			groups++
		}
	}
	for o, n := range counts {
		w.in[o] = slices.Grow(w.in[o], n)
	}
	w.idx = slices.Grow(w.idx, 2*groups)
}

// rest toggles the in-edges and the type index (inRecs), then the index
// vertices, then the predicates of each shard, then the shared lists of
// IDs that are both a class and a predicate.
func (w *shardWriter) rest(inRecs []krec) error {
	r := w.r
	if len(inRecs) >= parallelWriteMin {
		w.idx = slices.Grow(w.idx, 2*len(inRecs)) // at most two a key
	}
	if err := w.toggleGroups(inRecs, w.sign, func(o int, k Key, before, after int64) {
		if v := k.Vertex(); v != IndexVertex && (before == 0) != (after == 0) {
			w.idx = append(w.idx, krec{o, MakeKey(IndexVertex, k.Pred(), In), v}, krec{o, MakeKey(v, AllPredicates, In), k.Pred()})
		}
	}, true); err != nil {
		return err
	}
	var allRecs []krec
	if err := w.toggleGroups(w.idx, w.sign, func(o int, k Key, before, after int64) {
		if k.Vertex() == IndexVertex && k.Pred() != AllPredicates && (before == 0) != (after == 0) {
			if k.Dir() == In && r.dict.IsClass(k.Pred()) {
				return // a class's (0, c, In) also holds instances: see fixPunned
			}
			allRecs = append(allRecs, krec{o, MakeKey(IndexVertex, AllPredicates, k.Dir()), k.Pred()})
		}
	}, true); err != nil {
		return err
	}
	if err := w.toggleGroups(allRecs, w.sign, nil, false); err != nil {
		return err
	}
	return w.fixPunned(w.punned)
}

// toggleGroups sorts recs and toggles each key's values, calling after
// (if not nil) with each key's length before and after. Keys (0, c, In)
// of a class c that is also a predicate hold the instances of c and the
// objects of predicate c in one list: their records go to w.punned
// instead (fixPunned), if punned.
func (w *shardWriter) toggleGroups(recs []krec, sign int64, after func(o int, k Key, before, after int64), punned bool) error {
	r, st := w.r, w.st
	sortKrecs(recs)
	recs = slices.Compact(recs)
	tip := r.dict
	for i, n := 0, 0; i < len(recs); n++ {
		if n%4096 == 4095 {
			if err := r.ctx.Err(); err != nil {
				return err
			}
		}
		j := i
		for j < len(recs) && recs[j].o == recs[i].o && recs[j].k == recs[i].k {
			j++
		}
		o, k := recs[i].o, recs[i].k
		if r.hosted && st.tables[o] == nil {
			i = j // another node's shard
			continue
		}
		if punned && k.Vertex() == IndexVertex && k.Dir() == In && k.Pred() != AllPredicates &&
			tip.IsClass(k.Pred()) && tip.IsPredicate(k.Pred()) {
			w.punned = append(w.punned, recs[i:j]...)
			i = j
			continue
		}
		w.ids = w.ids[:0]
		for _, x := range recs[i:j] {
			w.ids = append(w.ids, uint64(x.v))
		}
		i = j
		before, err := w.toggle(o, k, w.ids, sign)
		if err != nil {
			return err
		}
		if after != nil {
			after(o, k, before, before+sign*int64(len(w.ids)))
		}
	}
	return nil
}

// fixPunned brings the shared (0, c, In) lists of IDs that are both a
// class and a predicate in line, after the other lists changed: v is in
// the list if it is an instance of c or an object of c; c is in (0, ALL,
// In) if the list has an object of c.
func (w *shardWriter) fixPunned(recs []krec) error {
	st := w.st
	sortKrecs(recs)
	recs = slices.Compact(recs)
	var list, types []ID
	for i := 0; i < len(recs); {
		o, k := recs[i].o, recs[i].k
		c := k.Pred()
		var add, del []uint64
		list = st.tipList(list[:0], o, k)
		j := i
		for ; j < len(recs) && recs[j].o == o && recs[j].k == k; j++ {
			v := recs[j].v
			types = st.tipList(types[:0], o, MakeKey(v, TypeID, Out))
			_, isInst := slices.BinarySearch(types, c)
			want := isInst || st.tipCount(o, MakeKey(v, c, In)) > 0
			if _, in := slices.BinarySearch(list, v); in != want {
				if want {
					add = append(add, uint64(v))
				} else {
					del = append(del, uint64(v))
				}
			}
		}
		i = j
		if _, err := w.toggle(o, k, add, 1); err != nil {
			return err
		}
		if _, err := w.toggle(o, k, del, -1); err != nil {
			return err
		}
		list = st.tipList(list[:0], o, k)
		hasObj := false
		for _, v := range list {
			if st.tipCount(o, MakeKey(v, c, In)) > 0 {
				hasObj = true
				break
			}
		}
		all := MakeKey(IndexVertex, AllPredicates, In)
		cur := st.tipList(nil, o, all)
		if _, in := slices.BinarySearch(cur, c); in != hasObj {
			sign := int64(1)
			if !hasObj {
				sign = -1
			}
			if _, err := w.toggle(o, all, []uint64{uint64(c)}, sign); err != nil {
				return err
			}
		}
	}
	return nil
}

// done hands the writer's undo and statistics to the run and graph g.
func (w *shardWriter) done(g *writeGraph) {
	u := w.r.undo
	u.nets = append(u.nets, w.nets...)
	for o, keys := range w.added {
		u.added = append(u.added, netAdded{m: w.st.sh.w.net[o], keys: keys})
	}
	w.nets, w.added = nil, nil
	g.sd.add(&w.sd)
}

// write inserts (insert) or deletes triples (sorted, distinct) in g.
func (r *applyRun) write(ctx context.Context, g *writeGraph, triples []idTriple, insert bool) error {
	if len(triples) == 0 {
		return nil
	}
	if !g.touched {
		g.touched, g.sd = true, &statsDelta{}
	}
	if r.ctx == nil {
		r.ctx = ctx
	}
	// Vertices made from now on are untouched until the next write.
	defer r.markWritten()
	// The statistics are sums over vertices: take the touched vertices'
	// share out before and add it back after.
	verts := make([]ID, 0, 2*len(triples))
	for _, t := range triples {
		verts = append(verts, t.s, t.o)
	}
	slices.Sort(verts)
	verts = slices.Compact(verts)
	st := g.st
	if len(triples) < parallelWriteMin || r.hosted || st.n == 1 {
		w := r.newShardWriter(st, insert, 1, false)
		defer w.done(g)
		if err := w.stats(verts, -1); err != nil {
			return err
		}
		if err := w.out(triples); err != nil {
			return err
		}
		if err := w.rest(w.in[0]); err != nil {
			return err
		}
		return w.stats(verts, +1)
	}
	return r.writeShards(g, triples, verts, insert)
}

// writeShards is write with one goroutine per shard.
func (r *applyRun) writeShards(g *writeGraph, triples []idTriple, verts []ID, insert bool) error {
	st := g.st
	n := st.n
	// The delta tables and their undo, made before the goroutines.
	for o := range n {
		t, err := st.deltaTable(o)
		if err != nil {
			return err
		}
		if r.tus[t] == nil {
			tu := &tableUndo{t: t}
			t.Mark(&tu.u)
			r.tus[t] = tu
		}
	}
	tri := partitionBy(triples, n, func(t idTriple) int { return st.Owner(t.s) })
	vs := partitionBy(verts, n, st.Owner)
	ws := make([]*shardWriter, n)
	for o := range ws {
		ws[o] = r.newShardWriter(st, insert, n, true)
	}
	defer func() {
		for _, w := range ws {
			w.done(g)
		}
	}()
	errs := make([]error, n)
	round := func(fn func(o int, w *shardWriter) error) error {
		parallel(n, func(o int) {
			cpugate.Default.Enter()
			defer cpugate.Default.Leave()
			errs[o] = fn(o, ws[o])
		})
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := round(func(o int, w *shardWriter) error {
		if err := w.stats(vs[o], -1); err != nil {
			return err
		}
		return w.out(tri[o])
	}); err != nil {
		return err
	}
	return round(func(o int, w *shardWriter) error {
		n := 0
		for _, x := range ws {
			n += len(x.in[o])
		}
		in := make([]krec, 0, n)
		for _, x := range ws {
			in = append(in, x.in[o]...)
		}
		for _, x := range ws {
			x.in[o] = nil
		}
		if err := w.rest(in); err != nil {
			return err
		}
		return w.stats(vs[o], +1)
	})
}

// partitionBy splits xs into n lists by shard(x), keeping their order.
func partitionBy[T any](xs []T, n int, shard func(T) int) [][]T {
	counts := make([]int, n)
	for _, x := range xs {
		counts[shard(x)]++
	}
	out := make([][]T, n)
	for o := range out {
		out[o] = make([]T, 0, counts[o])
	}
	for _, x := range xs {
		o := shard(x)
		out[o] = append(out[o], x)
	}
	return out
}

// markWritten records that every vertex made so far may have lists.
func (r *applyRun) markWritten() {
	r.fresh = r.dict.vertexEnd()
}

// add adds the statistics change o to sd.
func (sd *statsDelta) add(o *statsDelta) {
	sd.triples += o.triples
	sd.subjects += o.subjects
	sd.objects += o.objects
	sd.outPreds += o.outPreds
	sd.inPreds += o.inPreds
	sd.untyped += o.untyped
	for p, x := range o.preds {
		y := sd.pred(p)
		for i := range x {
			y[i] += x[i]
		}
	}
	for c, n := range o.classes {
		if sd.classes == nil {
			sd.classes = map[ID]int64{}
		}
		sd.classes[c] += n
	}
	for k, x := range o.cp {
		y := sd.classPred(k.c, k.p, k.d)
		y[0] += x[0]
		y[1] += x[1]
	}
	for s, n := range o.shards {
		if sd.shards == nil {
			sd.shards = map[int]int64{}
		}
		sd.shards[s] += n
	}
}
