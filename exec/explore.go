package exec

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
)

// StepStats are the measurements of one step (EXPLAIN ANALYZE), summed over
// every node that ran a part of it.
type StepStats struct {
	RowsIn, RowsOut uint64
	Time            time.Duration // summed over nodes
	Reads           uint64        // one-sided fabric READs
	ReadBytes       uint64
	RoundTrips      uint64
	Messages        uint64 // fabric messages sent (sub-queries and replies)
	MessageBytes    uint64
	Forks           uint64 // sub-queries sent
}

// addCost adds a fabric read's cost to s; a nil s (not analyzed) keeps none.
func (s *StepStats) addCost(c ReadCost) {
	if s == nil {
		return
	}
	s.Reads += c.Reads
	s.ReadBytes += c.Bytes
	s.RoundTrips += c.RoundTrips
}

// newStepStats returns the measurements of steps steps on every shard:
// step k on shard sh is [k*shards+sh] (task.stat). Sub-query replies
// carry them so (their sum is elementwise); foldStats sums the shards.
func (e *Engine) newStepStats(steps int) []StepStats {
	return make([]StepStats, steps*len(e.nodes))
}

// stat returns the measurements of step k on the task's node.
func (r *task) stat(k int) *StepStats { return &r.stats[k*len(r.eng.nodes)+r.node] }

// foldStats sums per-shard measurements (newStepStats) into one per
// step, and returns the per-shard ones by step.
func foldStats(flat []StepStats, shards int) (steps []StepStats, byShard [][]StepStats) {
	if shards <= 0 || len(flat)%shards != 0 {
		return flat, nil
	}
	n := len(flat) / shards
	steps = make([]StepStats, n)
	byShard = make([][]StepStats, n)
	for k := range steps {
		byShard[k] = flat[k*shards : (k+1)*shards : (k+1)*shards]
		for i := range byShard[k] {
			steps[k].add(&byShard[k][i])
		}
	}
	return steps, byShard
}

func (s *StepStats) add(o *StepStats) {
	s.RowsIn += o.RowsIn
	s.RowsOut += o.RowsOut
	s.Time += o.Time
	s.Reads += o.Reads
	s.ReadBytes += o.ReadBytes
	s.RoundTrips += o.RoundTrips
	s.Messages += o.Messages
	s.MessageBytes += o.MessageBytes
	s.Forks += o.Forks
}

// task is an exploration (or the rest of one) run by one node: the node,
// the context of the query, the steps and where the stats go.
type task struct {
	eng     *Engine
	node    int
	ctx     context.Context
	steps   []planner.Step
	ncols   int
	analyze bool
	stats   []StepStats  // per step; nil unless analyze
	filters *stepFilters // pushed FILTERs (nil: none, as in a forked child)
	// limit is the number of rows the exploration must make (0: all):
	// with a limit it runs depth first in batches and stops once it has
	// them (stream.go); a fork sends it to the children.
	limit int
	// reduce, when set, reduces the rows as a semi or distinct sink of
	// the fork's parent asks (stream.go); a fork sends it on.
	reduce *reduceSpec
	// mem is the account of the query (or sub-query) the rows are
	// charged to (nil: none).
	mem *memAccount
}

// explore runs steps[k:] over t and returns the rows (full history), or
// with r.limit set at least min(r.limit, all) of them.
func (r *task) explore(k int, t *Table) (*Table, error) {
	if r.limit > 0 || r.reduce != nil {
		out := r.reduce.newSink(r, r.limit, t)
		if _, err := r.stream(k, t, out); err != nil {
			return nil, err
		}
		res := out.result(len(t.Cols))
		res.Vars = t.Vars
		return res, nil
	}
	var held int64 // the charge of the rows of the last step made here
	defer func() { r.mem.charge(-held) }()
	for ; k < len(r.steps); k++ {
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		if b := tableBytes(t); held > 0 || b > 0 {
			r.mem.charge(b - held)
			held = b
		}
		if t.N == 0 {
			return t, nil
		}
		if parts := r.splitParts(k, t); parts > 1 {
			r.mem.charge(-held) // the parts charge their rows
			held = 0
			return r.exploreSplit(k, t, parts)
		}
		s := &r.steps[k]
		var st *StepStats
		var t0 time.Time
		if r.analyze {
			st = r.stat(k)
			t0 = time.Now()
		}
		shards := r.eng.store.Shards()
		switch {
		case s.Mode == planner.ModeForkJoin && shards > 1 && s.Kind == planner.StepIndex:
			return r.forkAll(k, t, st, t0)
		case s.Mode == planner.ModeForkJoin && shards > 1 && s.From.Kind == planner.OpConst:
			if owner := r.eng.store.Owner(s.From.ID); owner != r.node {
				return r.forkTo(k, t, owner, st, t0)
			}
		case s.Mode == planner.ModeForkJoin && shards > 1:
			return r.forkSplit(k, t, st, t0)
		}
		// Rows are counted by the node that runs the step on them (a fork
		// counts nothing here: the local part and the children count theirs).
		if st != nil {
			st.RowsIn += uint64(t.N)
		}
		var err error
		if s.Kind == planner.StepIndex {
			t, err = r.index(s, t, st)
		} else {
			t, err = r.apply(s, t, st)
		}
		if err != nil {
			return nil, stepError(k, err)
		}
		t = r.filters.apply(k, t)
		if st != nil {
			st.RowsOut += uint64(t.N)
			st.Time += time.Since(t0)
		}
	}
	return t, nil
}

// stepError says which step (counted from 1) failed.
func stepError(k int, err error) error {
	return fmt.Errorf("step %d: %w", k+1, err)
}

// lookup reads keys of one shard, accounting the fabric cost.
func (r *task) lookup(shard int, keys []Key, out [][]ID, st *StepStats) error {
	c, err := r.eng.store.Lookup(r.ctx, r.node, shard, keys, out)
	if err != nil {
		return err
	}
	st.addCost(c)
	return nil
}

// appendLookup is lookup from gs into *buf (grown there).
func (r *task) appendLookup(gs *GraphStore, shard int, keys []Key, out [][]ID, buf *[]ID, st *StepStats) error {
	b, c, err := gs.appendLookup(r.ctx, r.node, shard, keys, out, *buf)
	*buf = b
	if err != nil {
		return err
	}
	st.addCost(c)
	return nil
}

// indexList returns the index vertex (0, p, d): this shard's part when
// local, else the union over every shard. p == TypeID with d == Out means
// every typed vertex; p == 0 every subject.
func (r *task) indexList(p ID, d planner.Dir, local bool, st *StepStats) ([]ID, error) {
	parts, err := r.indexListParts(p, d, local, st)
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return mergeUnion(parts), nil
}

// indexListParts returns the sorted lists whose union is indexList's.
func (r *task) indexListParts(p ID, d planner.Dir, local bool, st *StepStats) ([][]ID, error) {
	var parts [][]ID
	for sh := 0; sh < r.eng.store.Shards(); sh++ {
		if local && sh != r.node {
			continue
		}
		keys, err := r.shardIndexKeys(sh, p, d, st)
		if err != nil {
			return nil, err
		}
		if len(keys) == 0 {
			continue
		}
		out := make([][]ID, len(keys))
		if err := r.lookup(sh, keys, out, st); err != nil {
			return nil, err
		}
		parts = append(parts, out...)
	}
	return parts, nil
}

// shardIndexKeys returns the keys of shard sh whose lists' union is the
// shard's index list (see indexList): one index vertex, or for every
// subject (every typed vertex) one per predicate (class) of the shard.
func (r *task) shardIndexKeys(sh int, p ID, d planner.Dir, st *StepStats) ([]Key, error) {
	switch {
	case p == graphstore.AllPredicates || (p == graphstore.TypeID && d == planner.Out):
		var keys []Key
		if p == graphstore.TypeID {
			for c := range r.eng.stats().Classes {
				keys = append(keys, graphstore.MakeKey(graphstore.IndexVertex, c, planner.In))
			}
			return keys, nil
		}
		out := make([][]ID, 1)
		if err := r.lookup(sh, []Key{graphstore.MakeKey(graphstore.IndexVertex, graphstore.AllPredicates, planner.Out)}, out, st); err != nil {
			return nil, err
		}
		for _, q := range out[0] {
			if q == graphstore.TypeID {
				for c := range r.eng.stats().Classes {
					keys = append(keys, graphstore.MakeKey(graphstore.IndexVertex, c, planner.In))
				}
				continue
			}
			keys = append(keys, graphstore.MakeKey(graphstore.IndexVertex, q, planner.Out))
		}
		return keys, nil
	case p > graphstore.MaxPredicate:
		return nil, nil
	}
	return []Key{graphstore.MakeKey(graphstore.IndexVertex, p, d)}, nil
}

// index runs an index step: every row × the index list, bound to To.
func (r *task) index(s *planner.Step, t *Table, st *StepStats) (*Table, error) {
	p := ID(0)
	if s.Pred.Kind == planner.OpConst {
		p = s.Pred.ID
	}
	local := s.Mode == planner.ModeLocal
	list, err := r.indexList(p, s.Dir, local, st)
	if err != nil {
		return nil, err
	}
	return r.cross(t, list, s.To.Col)
}

// cross returns every row of t × the IDs of list, bound to column to.
func (r *task) cross(t *Table, list []ID, to int) (*Table, error) {
	rowBytes := int64(8*len(t.Cols) + 12)
	total := t.N * len(list)
	var src []int32
	var vals []ID
	g := growth{m: r.mem}
	defer g.done()
	sc := stopCheck{ctx: r.ctx}
	if r.mem.bounded() {
		// A cross product has exactly t.N × len(list) rows: under a budget
		// they are charged before any is made — one past the budget fails
		// at once, not after its deadline's worth of rows — and sized
		// once, so no append copies the rows made so far (hundreds of MB,
		// between two looks at the context).
		g.to(int64(total) * rowBytes)
		if err := ctxErr(r.ctx); err != nil {
			return nil, err
		}
		src, vals = make([]int32, 0, total), make([]ID, 0, total)
	} else {
		// Far larger than what a deadline lets it make: sized up to a
		// bound, then grown as it goes.
		n := min(total, maxPresize)
		src, vals = make([]int32, 0, n), make([]ID, 0, n)
		sc.grow = func() { g.to(int64(len(src)) * rowBytes) }
	}
	for row := 0; row < t.N; row++ {
		if err := sc.add(1 + len(list)); err != nil {
			return nil, err
		}
		var err error
		if src, err = growSlice(r.ctx, src, len(list)); err != nil {
			return nil, err
		}
		if vals, err = growSlice(r.ctx, vals, len(list)); err != nil {
			return nil, err
		}
		for _, x := range list {
			src = append(src, int32(row))
			vals = append(vals, x)
		}
	}
	out, err := t.gatherCtx(r.ctx, src)
	if err != nil {
		return nil, err
	}
	out.Cols[to] = vals
	return out, nil
}

// maxPresize bounds the rows an index step allocates before making them.
const maxPresize = 1 << 22

// fetch collects the keys a step needs, deduplicated, and reads them per
// owner shard: locally, or through the fabric in one batch per shard.
type fetch struct {
	r       *task
	lastKey Key
	lastH   int32
	handle  *keySet
	// sampled local keys past the run check, and how many of them repeated
	sampled, repeats int
	keys             [][]Key   // per shard
	pos              [][]int32 // per shard: handle of each key
	lists            [][]ID    // by handle
	vertex           []ID      // by handle: the key's vertex
	// buf holds the lists read from a *GraphStore (appendLookup):
	// taken from fetchBufs, given back by release once the step is done
	// with the lists (they are copied into the step's output).
	buf *[]ID
}

// fetchBufs recycles the fetches' list buffers across steps and queries.
// A step's lists are garbage as soon as it has made its rows, and at
// LUBM-40 they are most of a query's allocation (L1: ~45 %, L7 more):
// reading them into fresh buffers made the collector's pace, not the
// work, decide small queries' CPU (PERFORMANCE, "Why 662ac06 slowed 4
// shards at LUBM-40").
var fetchBufs = sync.Pool{New: func() any { return new([]ID) }}

// maxPooledIDs bounds the buffers fetchBufs keeps (32 MiB): a big step's
// buffer is left to the collector rather than held for small ones.
const maxPooledIDs = 1 << 22

// release gives f's list buffer back; f's lists must not be used after.
func (f *fetch) release() {
	if f.buf == nil {
		return
	}
	if cap(*f.buf) <= maxPooledIDs {
		*f.buf = (*f.buf)[:0]
		fetchBufs.Put(f.buf)
	}
	f.buf = nil
}

func newFetch(r *task, rows int) *fetch {
	n := r.eng.store.Shards()
	return &fetch{r: r, lastH: -1, handle: newKeySet(min(rows, 2*dedupSample)), keys: make([][]Key, n), pos: make([][]int32, n)}
}

func (f *fetch) want(v, p ID, d planner.Dir) int32 {
	if v == 0 || v > graphstore.MaxID || p > graphstore.MaxPredicate {
		return -1
	}
	k := graphstore.MakeKey(v, p, d)
	if k == f.lastKey && f.lastH >= 0 {
		return f.lastH // rows from one expansion repeat their values in runs
	}
	sh := f.r.eng.store.Owner(v)
	// The key set finds repeats that are not in runs. It is skipped for local
	// keys once a sample shows they hardly repeat (fresh values of the
	// last expansion): reading a rare repeat twice is cheaper than hashing
	// every key. Remote keys always go through it (it saves fabric reads).
	useMap := sh != f.r.node || f.sampled < dedupSample || f.repeats*32 >= f.sampled
	if useMap {
		if h, ok := f.handle.get(k); ok {
			f.lastKey, f.lastH = k, h
			if sh == f.r.node && f.sampled < dedupSample {
				f.sampled++
				f.repeats++
			}
			return h
		}
	}
	if sh == f.r.node && f.sampled < dedupSample {
		f.sampled++
	}
	h := int32(len(f.lists))
	if useMap {
		f.handle.put(k, h)
	}
	f.lastKey, f.lastH = k, h
	f.lists = append(f.lists, nil)
	f.vertex = append(f.vertex, v)
	f.keys[sh] = append(f.keys[sh], k)
	f.pos[sh] = append(f.pos[sh], h)
	return h
}

// dedupSample is the number of local keys whose repeats decide whether
// the rest of a step's local keys are deduplicated through the map.
const dedupSample = 1024

// run reads every pending key.
func (f *fetch) run(st *StepStats) error {
	var out [][]ID
	for sh, keys := range f.keys {
		if len(keys) == 0 {
			continue
		}
		out = append(out[:0], make([][]ID, len(keys))...)
		// Only the store itself, not a wrapper that embeds it (its
		// Lookup is what the wrapper changes).
		if gs, ok := f.r.eng.store.(*GraphStore); ok {
			if f.buf == nil {
				f.buf = fetchBufs.Get().(*[]ID)
			}
			if err := f.r.appendLookup(gs, sh, keys, out, f.buf, st); err != nil {
				return err
			}
		} else if err := f.r.lookup(sh, keys, out, st); err != nil {
			return err
		}
		for i, h := range f.pos[sh] {
			f.lists[h] = out[i]
		}
		f.keys[sh] = keys[:0]
		f.pos[sh] = f.pos[sh][:0]
	}
	f.lastH = -1
	return nil
}

func (f *fetch) list(h int32) []ID {
	if h < 0 {
		return nil
	}
	return f.lists[h]
}

// predList is one predicate of a vertex with its neighbours (a variable
// predicate step).
type predList struct {
	p ID
	h int32 // fetch handle; -2: the type index list in typeIdx
}

// apply runs an expand or check step over the rows of t, reading local
// adjacency directly and remote adjacency through batched fabric READs.
func (r *task) apply(s *planner.Step, t *Table, st *StepStats) (*Table, error) {
	if out, ok, err := r.typeCheckByIndex(s, t, st); ok {
		return out, err
	}
	if out, ok, err := r.checkFromTo(s, t, st); ok {
		return out, err
	}
	if s.Intersect {
		if s.Pred.ID == graphstore.TypeID && s.Dir == planner.In {
			return r.unfuseIntersect(s, t, st) // the type index, not a list
		}
		return r.intersect(s, t, st)
	}
	var keep *idSet // fused type check: the class's instances
	if s.TypeCheck != 0 {
		set, ok, err := r.fusedTypeSets(s, t, st)
		if err != nil {
			return nil, err
		}
		if !ok {
			// No bitmaps: expand, then check the type as its own step.
			return r.thenTypeCheck(s, t, st, r.apply)
		}
		keep = set
	}
	f := newFetch(r, t.N)
	defer f.release()
	from := func(row int) ID {
		if s.From.Kind == planner.OpConst {
			return s.From.ID
		}
		return t.At(s.From.Col, row)
	}
	pred := func(row int) ID {
		if s.Pred.Kind == planner.OpConst {
			return s.Pred.ID
		}
		return t.At(s.Pred.Col, row)
	}
	typeIdx := map[ID][]ID{} // class → instances (rdf:type In lists)
	h := make([]int32, t.N)
	sc := stopCheck{ctx: r.ctx}
	// The common case, a constant predicate (not rdf:type backwards) from
	// a bound column, runs without the per-row closures below.
	var fromCol []ID
	if !s.PredNew && s.Pred.Kind == planner.OpConst && s.Pred.ID != 0 &&
		!(s.Pred.ID == graphstore.TypeID && s.Dir == planner.In) && s.From.Kind == planner.OpVar {
		fromCol = t.Cols[s.From.Col]
	}
	for row := 0; fromCol != nil && row < t.N; row++ {
		if err := sc.add(1); err != nil {
			return nil, err
		}
		h[row] = f.want(fromCol[row], s.Pred.ID, s.Dir)
	}
	for row := 0; fromCol == nil && row < t.N; row++ {
		if err := sc.add(1); err != nil {
			return nil, err
		}
		v := from(row)
		switch {
		case s.PredNew:
			h[row] = f.want(v, graphstore.AllPredicates, s.Dir)
		default:
			p := pred(row)
			if p == graphstore.TypeID && s.Dir == planner.In {
				typeIdx[v] = nil
				h[row] = -2
				continue
			}
			if p == 0 {
				h[row] = -1
				continue
			}
			h[row] = f.want(v, p, s.Dir)
		}
	}
	if err := f.run(st); err != nil {
		return nil, err
	}
	// Variable predicate: a second round for (v, p, dir) of each predicate.
	var preds map[int32][]predList
	if s.PredNew {
		preds = map[int32][]predList{}
		nall := len(f.lists)
		for ha := int32(0); ha < int32(nall); ha++ {
			v := f.vertex[ha]
			var pl []predList
			for _, p := range f.lists[ha] {
				if p == graphstore.TypeID && s.Dir == planner.In {
					continue // never an In list: the type index below
				}
				pl = append(pl, predList{p: p, h: f.want(v, p, s.Dir)})
			}
			if s.Dir == planner.In && r.eng.store.IsClass(v) {
				typeIdx[v] = nil
				pl = append(pl, predList{p: graphstore.TypeID, h: -2})
			}
			preds[ha] = pl
		}
		if err := f.run(st); err != nil {
			return nil, err
		}
	}
	for c := range typeIdx {
		l, err := r.indexList(c, planner.In, false, st)
		if err != nil {
			return nil, err
		}
		typeIdx[c] = l
	}

	// Size the output once: an expansion makes one row per neighbour.
	size := t.N
	if s.ToNew && !s.PredNew {
		size = 0
		for row := 0; row < t.N; row++ {
			switch hr := h[row]; {
			case hr == -2:
				size += len(typeIdx[from(row)])
			default:
				size += len(f.list(hr))
			}
		}
	}
	src := make([]int32, 0, size)
	var newTo, newPred []ID
	g := growth{m: r.mem}
	defer g.done()
	rowBytes := int64(8*len(t.Cols) + 12)
	sc.grow = func() { g.to(int64(len(src)) * rowBytes) }
	if s.ToNew {
		newTo = make([]ID, 0, size)
	}
	predCol := -1
	if s.PredNew {
		predCol = s.Pred.Col
	}
	to := func(row int) ID {
		if s.To.Kind == planner.OpConst {
			return s.To.ID
		}
		return t.At(s.To.Col, row)
	}
	made := 0 // rows made when the context was last counted
	if fromCol != nil && predCol < 0 {
		// The common case without closures: expand, or check against a
		// bound column.
		var toCol []ID
		if !s.ToNew && s.To.Kind == planner.OpVar {
			toCol = t.Cols[s.To.Col]
			if toCol == nil {
				toCol = make([]ID, t.N) // unbound everywhere: no row has the edge
			}
		}
		for row := 0; row < t.N; row++ {
			if err := sc.add(1 + len(src) - made); err != nil {
				return nil, err
			}
			made = len(src)
			l := f.list(h[row])
			if s.ToNew {
				// Room for the row's values, grown with looks at the
				// context (an append would copy every row made so far).
				var err error
				if src, err = growSlice(r.ctx, src, len(l)); err != nil {
					return nil, err
				}
				if newTo, err = growSlice(r.ctx, newTo, len(l)); err != nil {
					return nil, err
				}
			}
			switch {
			case s.ToNew && keep != nil:
				for _, x := range l {
					if keep.has(x) {
						src = append(src, int32(row))
						newTo = append(newTo, x)
					}
				}
			case s.ToNew:
				for _, x := range l {
					src = append(src, int32(row))
					newTo = append(newTo, x)
				}
			case toCol != nil:
				if contains(l, toCol[row]) {
					src = append(src, int32(row))
				}
			default:
				if contains(l, s.To.ID) {
					src = append(src, int32(row))
				}
			}
		}
		out, err := t.gatherCtx(r.ctx, src)
		if err != nil {
			return nil, err
		}
		if s.ToNew {
			out.Cols[s.To.Col] = newTo
		}
		return out, nil
	}
	emit := func(row int, p ID, l []ID) {
		if s.ToNew {
			for _, x := range l {
				if predCol >= 0 && s.To.Col == predCol && x != p {
					continue
				}
				if keep != nil && !keep.has(x) {
					continue
				}
				src = append(src, int32(row))
				newTo = append(newTo, x)
				if predCol >= 0 {
					newPred = append(newPred, p)
				}
			}
			return
		}
		if contains(l, to(row)) {
			src = append(src, int32(row))
			if predCol >= 0 {
				newPred = append(newPred, p)
			}
		}
	}
	for row := 0; row < t.N; row++ {
		if err := sc.add(1 + len(src) - made); err != nil {
			return nil, err
		}
		made = len(src)
		hr := h[row]
		switch {
		case s.PredNew:
			if hr < 0 {
				continue
			}
			for _, pl := range preds[hr] {
				if pl.h == -2 {
					emit(row, pl.p, typeIdx[f.vertex[hr]])
				} else {
					emit(row, pl.p, f.list(pl.h))
				}
			}
		case hr == -2:
			emit(row, 0, typeIdx[from(row)])
		default:
			emit(row, 0, f.list(hr))
		}
	}
	out, err := t.gatherCtx(r.ctx, src)
	if err != nil {
		return nil, err
	}
	if predCol >= 0 {
		out.Cols[predCol] = newPred
	}
	if s.ToNew {
		out.Cols[s.To.Col] = newTo
	}
	return out, nil
}

// thenTypeCheck runs step s without its fused type check (by run: the
// expansion or the intersection), then checks the type of what it made as
// a step of its own — the path of a fused check that has no bitmap.
func (r *task) thenTypeCheck(s *planner.Step, t *Table, st *StepStats,
	run func(*planner.Step, *Table, *StepStats) (*Table, error)) (*Table, error) {
	u := *s
	u.TypeCheck = 0
	out, err := run(&u, t, st)
	if err != nil || out.N == 0 {
		return out, err
	}
	chk := planner.Step{Kind: planner.StepCheck, Pattern: s.CheckPattern, From: planner.Column(s.To.Col),
		Pred: planner.Const(graphstore.TypeID), Dir: planner.Out, To: planner.Const(s.TypeCheck),
		Mode: s.Mode, Partitioned: -1, EstRows: s.EstRows}
	return r.apply(&chk, out, st)
}

// typeCheckByIndex runs a type check (?x rdf:type C, ?x bound) by testing
// each row's value against a bitmap of C's instances (built from every
// shard's type index once and cached by the node) instead of looking up
// every row's types. It reports false when the rows are too few for that
// to pay, C's instances are too sparse for a bitmap, or C is also a
// predicate (its index vertex then mixes objects and instances).
func (r *task) typeCheckByIndex(s *planner.Step, t *Table, st *StepStats) (*Table, bool, error) {
	if s.Kind != planner.StepCheck || s.PredNew || s.Pred.Kind != planner.OpConst || s.Pred.ID != graphstore.TypeID ||
		s.Dir != planner.Out || s.To.Kind != planner.OpConst || s.From.Kind != planner.OpVar {
		return nil, false, nil
	}
	c := s.To.ID
	if _, punned := r.eng.stats().Preds[c]; punned {
		return nil, false, nil
	}
	if !r.eng.typeSetsPay(r.node, c, t.N) {
		return nil, false, nil
	}
	col := t.Cols[s.From.Col]
	// Rows all on this node's shard (a forked or local step) test the
	// bitmap of its own instances, read without the fabric; others the
	// bitmap of every shard's.
	shard := r.node
	for _, v := range col {
		if r.eng.store.Owner(v) != r.node {
			shard = allShards
			break
		}
	}
	set, err := r.typeSet(c, shard, st)
	if err != nil {
		return nil, true, err
	}
	if set == nil {
		return nil, false, nil // too sparse for a bitmap
	}
	src := make([]int32, 0, t.N)
	sc := stopCheck{ctx: r.ctx}
	for row := 0; row < t.N; row++ {
		if err := sc.add(1); err != nil {
			return nil, true, err
		}
		if set.has(col[row]) {
			src = append(src, int32(row))
		}
	}
	return t.gather(src), true, nil
}

// fusedTypeSets returns, for an expansion with a fused type check
// (Step.TypeCheck), the bitmap of the class's instances, or false when the
// check should run as its own step instead: the class is also a
// predicate, the rows are too few to pay for building the bitmap, or the
// instances are too sparse for one.
func (r *task) fusedTypeSets(s *planner.Step, t *Table, st *StepStats) (*idSet, bool, error) {
	c := s.TypeCheck
	if _, punned := r.eng.stats().Preds[c]; punned {
		return nil, false, nil
	}
	if !r.eng.typeSetsPay(r.node, c, t.N) {
		return nil, false, nil
	}
	set, err := r.typeSet(c, allShards, st)
	if err != nil || set == nil {
		return nil, false, err
	}
	return set, true, nil
}

// idSet is a bitmap of IDs in [lo, lo+64·len(bits)), lo a multiple of 64.
type idSet struct {
	lo   ID
	bits []uint64
}

func (s *idSet) has(x ID) bool {
	if x < s.lo {
		return false
	}
	i := x - s.lo
	return i>>6 < ID(len(s.bits)) && s.bits[i>>6]&(1<<(i&63)) != 0
}

// add sets x, growing the bitmap to cover it.
func (s *idSet) add(x ID) {
	if len(s.bits) == 0 {
		s.lo = x &^ 63
		s.bits = make([]uint64, 1)
	}
	if x < s.lo {
		lo := x &^ 63
		shift := int((s.lo - lo) >> 6)
		bits := make([]uint64, shift+len(s.bits))
		copy(bits[shift:], s.bits)
		s.lo, s.bits = lo, bits
	}
	i := x - s.lo
	if w := int(i >> 6); w >= len(s.bits) {
		s.bits = slices.Grow(s.bits, w+1-len(s.bits))[:w+1]
	}
	s.bits[i>>6] |= 1 << (i & 63)
}

// maxSetWords bounds one class's bitmap (32 MiB, a span of 2^28 IDs: every
// class of LUBM-2560's 84 M terms); a bitmap with fewer than one instance
// in 4 words is kept only up to maxSparseWords (256 KiB). Classes beyond
// are checked row by row.
//
// The bitmap is the class's instances on every shard, one per node: the
// shards hash-partition the vertices, so each shard's instances span the
// class's whole ID range at a sixteenth of the density (with 16 shards),
// and a bitmap per shard cost 16 times the memory and, past 8 MiB a shard
// (LUBM-2560's UndergraduateStudent), no bitmap at all.
//
// A node's bitmap of its own shard's instances (the rows of a forked or
// local step are all there) keeps the bound of maxShardWords (8 MiB), as
// every node holds one.
const (
	maxSetWords    = 1 << 22
	maxShardWords  = 1 << 20
	maxSparseWords = 1 << 15
)

type typeSetKey struct {
	node, shard int // shard: allShards, or the node's own shard only
	class       ID
}

// allShards as a typeSetKey's shard: the bitmap of every shard's instances.
const allShards = -1

func (e *Engine) hasTypeSets(node int, c ID) bool {
	_, ok := e.typeSets.Load(typeSetKey{node, allShards, c})
	if !ok {
		_, ok = e.typeSets.Load(typeSetKey{node, node, c})
	}
	return ok
}

// typeSetsPay reports whether a type check of class c over rows rows on
// node should test the class's bitmap (building it if need be) rather
// than look up each row's types: when it is built already, when the
// rows are many (64), or once the rows this node checked row by row reach
// 1/64 of the class's instances — building the bitmap reads and sets
// about one bit per instance, a lookup costs about as much as 64 of those,
// so by then the lookups have cost what the bitmap would (a light query
// repeated with new constants, each checking a few rows, pays for it).
func (e *Engine) typeSetsPay(node int, c ID, rows int) bool {
	if rows >= 64 || e.hasTypeSets(node, c) {
		return true
	}
	k := typeSetKey{node, node, c}
	v, ok := e.typeRows.Load(k)
	if !ok {
		v, _ = e.typeRows.LoadOrStore(k, new(atomic.Int64))
	}
	done := v.(*atomic.Int64).Add(int64(rows))
	return uint64(done)*64 >= e.stats().Classes[c]
}

// typeSet returns node r.node's bitmap of c's instances on shard (the
// node's own) or on every shard (allShards), reading the shards' type
// index (through the fabric when remote) the first time, or nil when they
// are too sparse for one. The store is immutable, so the bitmap never goes
// stale.
func (r *task) typeSet(c ID, shard int, st *StepStats) (*idSet, error) {
	k := typeSetKey{r.node, shard, c}
	if v, ok := r.eng.typeSets.Load(k); ok {
		return v.(*idSet), nil
	}
	set := &idSet{}
	n := 0
	out := make([][]ID, 1)
	for sh := range r.eng.store.Shards() {
		if shard != allShards && sh != shard {
			continue
		}
		out[0] = nil
		if err := r.lookup(sh, []Key{graphstore.MakeKey(graphstore.IndexVertex, c, planner.In)}, out, st); err != nil {
			return nil, err
		}
		l := out[0]
		if len(l) == 0 {
			continue
		}
		n += len(l)
		// The words the bitmap would span with this list: give up before
		// allocating past the bound.
		lo, hi := l[0], l[len(l)-1]
		if len(set.bits) > 0 {
			lo, hi = min(lo, set.lo), max(hi, set.lo+ID(64*len(set.bits)-1))
		}
		words := uint64(hi-(lo&^63))/64 + 1
		if words > maxSetWords || (shard != allShards && words > maxShardWords) {
			set = nil
			break
		}
		set.add(l[0])
		set.add(l[len(l)-1]) // grown to cover the list: set its bits directly
		for _, x := range l {
			i := x - set.lo
			set.bits[i>>6] |= 1 << (i & 63)
		}
	}
	if set != nil && len(set.bits) > 4*n && len(set.bits) > maxSparseWords {
		set = nil
	}
	v, _ := r.eng.typeSets.LoadOrStore(k, set)
	return v.(*idSet), nil
}

// checkFromTo runs a known→known check (?a p ?b, both bound) from the To
// side when that reads less. A lookup (a cache miss or two in the table)
// costs about as much as decoding 64 list entries; the From side needs one
// lookup per distinct value (estimated), the To side at most one per run
// of equal values (an expansion repeats its source value). Looking up To,
// a row is kept when its From value is in (To, p, reverse Dir); rows of
// one run usually hold ascending From values, so the search gallops on
// from the previous row's position (a semi-join of the run's values with
// the list). It reports false when the From side is cheaper.
func (r *task) checkFromTo(s *planner.Step, t *Table, st *StepStats) (*Table, bool, error) {
	if s.Kind != planner.StepCheck || s.PredNew || s.Pred.Kind != planner.OpConst || s.From.Kind != planner.OpVar ||
		s.To.Kind != planner.OpVar || t.N < 1024 {
		return nil, false, nil
	}
	p := s.Pred.ID
	if p == graphstore.TypeID || p == 0 || p > graphstore.MaxPredicate {
		return nil, false, nil // (class, rdf:type, In) is the type index, not a list
	}
	from, to := t.Cols[s.From.Col], t.Cols[s.To.Col]
	if from == nil || to == nil {
		return nil, false, nil
	}
	ps, ok := r.eng.stats().Preds[p]
	if !ok || ps.Subjects == 0 || ps.Objects == 0 {
		return nil, false, nil
	}
	degFrom := float64(ps.Triples) / float64(ps.Subjects)
	degTo := float64(ps.Triples) / float64(ps.Objects)
	if s.Dir == planner.In {
		degFrom, degTo = degTo, degFrom
	}
	if 1.25*float64(runs(to))*(64+degTo) > distinctEstimate(from)*(64+degFrom) {
		return nil, false, nil
	}
	f := newFetch(r, t.N)
	defer f.release()
	h := make([]int32, t.N)
	sc := stopCheck{ctx: r.ctx}
	for row, v := range to {
		if err := sc.add(1); err != nil {
			return nil, true, err
		}
		h[row] = f.want(v, p, 1-s.Dir)
	}
	if err := f.run(st); err != nil {
		return nil, true, err
	}
	src := make([]int32, 0, t.N)
	prevH, pos, prev := int32(-1), 0, ID(0)
	for row, x := range from {
		if err := sc.add(1); err != nil {
			return nil, true, err
		}
		hr := h[row]
		if hr < 0 {
			continue
		}
		l := f.lists[hr]
		if hr != prevH || x < prev {
			pos = 0
		}
		pos = gallop(l, pos, x)
		prevH, prev = hr, x
		if pos < len(l) && l[pos] == x {
			src = append(src, int32(row))
		}
	}
	return t.gather(src), true, nil
}

// intersect runs an expansion with a fused known→known check
// (Step.Intersect): a row's neighbours (From, Pred, Dir) that are also in
// the list (its IntersectCol value, IntersectPred, IntersectDir), and of
// class TypeCheck if that is fused too, make its rows — the same rows, in
// the same order, as the expansion followed by the check.
func (r *task) intersect(s *planner.Step, t *Table, st *StepStats) (*Table, error) {
	var keep *idSet
	if s.TypeCheck != 0 {
		set, ok, err := r.fusedTypeSets(s, t, st)
		if err != nil {
			return nil, err
		}
		if !ok {
			// No bitmaps: intersect, then check the type of what is left
			// as its own step (the intersection is usually far smaller
			// than the expansion: L1's 2,528 rows of 256 M neighbours at
			// LUBM-2560).
			return r.thenTypeCheck(s, t, st, r.intersect)
		}
		keep = set
	}
	wcol := t.Cols[s.IntersectCol]
	var fromCol []ID
	if s.From.Kind == planner.OpVar {
		fromCol = t.Cols[s.From.Col]
	}
	if wcol == nil || (s.From.Kind == planner.OpVar && fromCol == nil) {
		return t.gather(nil), nil // unbound everywhere: no row has the edges
	}
	fa, fb := newFetch(r, t.N), newFetch(r, t.N)
	defer fa.release()
	defer fb.release()
	ha, hb := make([]int32, t.N), make([]int32, t.N)
	sc := stopCheck{ctx: r.ctx}
	for row := 0; row < t.N; row++ {
		if err := sc.add(1); err != nil {
			return nil, err
		}
		v := s.From.ID
		if fromCol != nil {
			v = fromCol[row]
		}
		ha[row] = fa.want(v, s.Pred.ID, s.Dir)
		hb[row] = fb.want(wcol[row], s.IntersectPred, s.IntersectDir)
	}
	if err := fa.run(st); err != nil {
		return nil, err
	}
	if err := fb.run(st); err != nil {
		return nil, err
	}
	src := make([]int32, 0, t.N)
	var newTo []ID
	g := growth{m: r.mem}
	defer g.done()
	rowBytes := int64(8*len(t.Cols) + 12)
	sc.grow = func() { g.to(int64(len(src)) * rowBytes) }
	made := 0
	for row := 0; row < t.N; row++ {
		if err := sc.add(1 + len(src) - made); err != nil {
			return nil, err
		}
		made = len(src)
		at := len(newTo)
		newTo = appendIntersection(newTo, fa.list(ha[row]), fb.list(hb[row]))
		n := at
		for _, x := range newTo[at:] {
			if keep != nil && !keep.has(x) {
				continue
			}
			newTo[n] = x
			n++
			src = append(src, int32(row))
		}
		newTo = newTo[:n]
	}
	out := t.gather(src)
	out.Cols[s.To.Col] = newTo
	return out, nil
}

// unfuseIntersect runs an expansion with a fused check as the two steps it
// stands for (when its fused type check has no bitmaps to test).
func (r *task) unfuseIntersect(s *planner.Step, t *Table, st *StepStats) (*Table, error) {
	u := *s
	u.Intersect = false
	out, err := r.apply(&u, t, st)
	if err != nil || out.N == 0 {
		return out, err
	}
	chk := planner.Step{Kind: planner.StepCheck, Pattern: s.IntersectPattern, From: planner.Column(s.IntersectCol),
		Pred: planner.Const(s.IntersectPred), Dir: s.IntersectDir, To: planner.Column(s.To.Col),
		Mode: s.Mode, Partitioned: -1, EstRows: s.EstRows}
	return r.apply(&chk, out, st)
}
