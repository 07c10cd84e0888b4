package graphstore

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

// BuildCounters are a builder's counts.
type BuildCounters struct {
	Read       uint64 // triples added
	Duplicates uint64 // triples dropped as repeats (known after Build)
	Distinct   uint64 // distinct triples stored (known after Build)
	Terms      uint64 // distinct terms interned so far
}

// Builder turns triples into a Store. AddTriples may be called from many
// goroutines at once; Build is called once, after every AddTriples has
// returned.
type Builder struct {
	shards  int
	stripes [stripeCount]stripe
	annots  annotTable
	typeTN  uint32

	mu     sync.Mutex
	chunks [][]uint32 // provisional triples: s, p, o tns
	built  bool

	read       atomic.Uint64
	dups, dist atomic.Uint64
	builtTerms atomic.Uint64 // terms of the built dictionary
	// termsSpilled counts the bytes of sealed interning generations
	// (bounded interning, intern_spill.go).
	termsSpilled atomic.Uint64
	scratch      sync.Pool
}

// NewBuilder returns a builder of a store with shards shards.
func NewBuilder(shards int) (*Builder, error) {
	if shards < 1 || shards > 1<<16 {
		return nil, fmt.Errorf("cannot build a store of %d shards", shards)
	}
	b := &Builder{shards: shards}
	b.annots.langs, b.annots.dts = map[string]uint32{}, map[string]uint32{}
	typeTN, err := b.internTerm(rdf.NewIRI(rdf.RDFType), rolePredicate)
	if err != nil {
		panic("BUG: interning into an empty stripe failed: " + err.Error())
	}
	b.typeTN = typeTN
	b.scratch.New = func() any { return new(termScratch) }
	return b, nil
}

// AddTriples interns and adds a batch. The batch is not retained. It is
// safe for concurrent use; batches of a few thousand triples amortize the
// locking.
func (b *Builder) AddTriples(batch []rdf.Triple) error {
	if len(batch) == 0 {
		return nil
	}
	tns, err := b.internTriples(len(batch), func(views []termView) { viewTriples(views, batch) })
	if err != nil {
		return fmt.Errorf("cannot add triples: %w", err)
	}
	return b.addChunk(tns)
}

// RawTerm is a term given as bytes, for a parser that does not want to
// allocate strings: Value is the IRI, blank node label or lexical form as
// it will be stored (unescaped); a literal has Datatype (empty or
// xsd:string for a simple literal) or Lang. The bytes are only read during
// the AddRawTriples call.
type RawTerm struct {
	Kind     rdf.Kind
	Value    []byte
	Datatype []byte
	Lang     []byte
}

// RawTriple is a triple of RawTerms.
type RawTriple struct{ S, P, O RawTerm }

// AddRawTriples is AddTriples for terms given as bytes: no string is
// allocated for a term already interned. Language tags are lower-cased.
// The batch is not retained; it is safe for concurrent use.
func (b *Builder) AddRawTriples(batch []RawTriple) error {
	if len(batch) == 0 {
		return nil
	}
	tns, err := b.internTriples(len(batch), func(views []termView) { viewRawTriples(views, batch) })
	if err != nil {
		return fmt.Errorf("cannot add triples: %w", err)
	}
	return b.addChunk(tns)
}

// internTriples interns the terms of n triples, which view writes into
// views (s, p, o of each triple in turn), and returns their term numbers
// (a slice of its own). The views are cleared before it returns: no
// reference to the caller's strings or bytes is kept.
func (b *Builder) internTriples(n int, view func(views []termView)) ([]uint32, error) {
	sc := b.scratch.Get().(*termScratch)
	defer b.scratch.Put(sc)
	views := grow(sc.views, 3*n)
	sc.views = views
	view(views)
	tns, err := b.internBatch(views, sc)
	clear(views)
	if err != nil {
		return nil, err
	}
	return slices.Clone(tns), nil
}

// viewTriples writes the views of batch's terms into views.
func viewTriples(views []termView, batch []rdf.Triple) {
	for i := range batch {
		t := &batch[i]
		views[3*i], views[3*i+1], views[3*i+2] = termViewOf(&t.S), termViewOf(&t.P), termViewOf(&t.O)
	}
}

// viewRawTriples writes the views of batch's terms into views.
func viewRawTriples(views []termView, batch []RawTriple) {
	for i := range batch {
		t := &batch[i]
		views[3*i], views[3*i+1], views[3*i+2] = rawView(&t.S), rawView(&t.P), rawView(&t.O)
	}
}

func termViewOf(t *rdf.Term) termView {
	return termView{value: t.Value, datatype: t.Datatype, lang: t.Lang, kind: t.Kind}
}

// rawView views a RawTerm's bytes as strings without copying. The views
// live only during AddRawTriples, which copies whatever it keeps (into the
// dictionary arena, the annotation table, the predicate cache).
func rawView(t *RawTerm) termView {
	v := termView{kind: t.Kind, value: bytesView(t.Value), datatype: bytesView(t.Datatype), lang: bytesView(t.Lang)}
	for _, c := range t.Lang {
		if 'A' <= c && c <= 'Z' {
			v.lang = strings.ToLower(v.lang)
			break
		}
	}
	return v
}

func bytesView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// addChunk adds the term numbers of interned triples (3 a triple).
func (b *Builder) addChunk(chunk []uint32) error {
	b.mu.Lock()
	if b.built {
		b.mu.Unlock()
		return fmt.Errorf("cannot add triples: the store was already built")
	}
	b.chunks = append(b.chunks, chunk)
	b.mu.Unlock()
	b.read.Add(uint64(len(chunk) / 3))
	return nil
}

// Counters returns the counts so far.
func (b *Builder) Counters() BuildCounters {
	terms := b.builtTerms.Load()
	if terms == 0 {
		for s := range b.stripes {
			st := &b.stripes[s]
			st.mu.Lock()
			terms += uint64(st.base) + uint64(len(st.offs)) // sealed repeats counted again
			st.mu.Unlock()
		}
	}
	return BuildCounters{Read: b.read.Load(), Duplicates: b.dups.Load(), Distinct: b.dist.Load(), Terms: terms}
}

// rec is one edge of a shard: key (v, p, dir) and the neighbour.
type rec struct {
	k Key
	v ID
}

func cmpRec(a, b rec) int {
	if c := cmp.Compare(a.k, b.k); c != 0 {
		return c
	}
	return cmp.Compare(a.v, b.v)
}

// ownerOf returns the shard of vertex v among n shards.
func ownerOf(v ID, n int) int {
	hi, _ := mulHi(mixID(uint64(v)), uint64(n))
	return int(hi)
}

// Build renumbers the terms, partitions the triples, and builds every
// shard's table and the statistics. The store uses a loopback fabric of
// one node per shard; see Store.
func (b *Builder) Build() (*Store, error) {
	b.mu.Lock()
	if b.built {
		b.mu.Unlock()
		return nil, fmt.Errorf("cannot build: already built")
	}
	b.built = true
	chunks := b.chunks
	b.chunks = nil
	b.mu.Unlock()

	ren, old, err := b.renumberAll()
	if err != nil {
		return nil, fmt.Errorf("cannot build the dictionary: %w", err)
	}
	// The dictionary is laid out alongside the partitioning and the
	// shards, which need only the new IDs.
	dictc := make(chan *Dict, 1)
	go func(r renumbering) { dictc <- b.layoutDict(r) }(ren)
	if old != nil {
		composeRemap(&ren.remap, old)
	}
	outs, ins := b.partition(chunks, &ren.remap)
	chunks = nil
	ren.remap = termRemap{}
	width := valueWidth(ren.maxID())
	dn := ren.dense()
	tables := make([][]byte, b.shards)
	parts := make([]*shardStats, b.shards)
	errs := make([]error, b.shards)
	var dups, dist atomic.Uint64
	parallel(b.shards, func(i int) {
		out := concat(outs, i)
		in := concat(ins, i)
		for w := range outs {
			outs[w][i], ins[w][i] = nil, nil
		}
		tables[i], parts[i], errs[i] = buildShard(out, in, width, dn, &dups, &dist)
	})
	dict := <-dictc
	b.builtTerms.Store(uint64(dict.Len()))
	// Free the stripes: the dictionary has its own copy. (Under their
	// locks: Counters may be reading them.)
	for s := range b.stripes {
		st := &b.stripes[s]
		st.mu.Lock()
		st.arena, st.offs, st.hashes, st.roles, st.table = nil, nil, nil, nil, nil
		st.prefixes, st.prefixIdx, st.lastPrefix = prefixTable{}, nil, 0
		st.mu.Unlock()
	}
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("cannot build shard %d: %w", i, err)
		}
	}
	b.dups.Store(dups.Load())
	b.dist.Store(dist.Load())
	stats := mergeStats(parts, uint64(dict.Len()))
	regions := make([]*rdmakv.Region, b.shards)
	for i, t := range tables {
		regions[i] = rdmakv.NewRegion(t)
	}
	return newStore(dict, stats, regions, nil, nil)
}

// valueWidth is the bytes per stored ID of a store whose largest ID is
// max: 3 below 2^24 (up to 8.4 M vertex terms), 4 below 2^32, else 8.
func valueWidth(max ID) int {
	switch {
	case max < 1<<24:
		return 3
	case max <= math.MaxUint32:
		return 4
	}
	return 8
}

// partition maps provisional triples to IDs and splits them into per
// worker, per shard out- and in-edge lists.
func (b *Builder) partition(chunks [][]uint32, remap *termRemap) (outs, ins [][][]rec) {
	workers := runtime.GOMAXPROCS(0)
	if workers > len(chunks) {
		workers = max(1, len(chunks))
	}
	outs = make([][][]rec, workers)
	ins = make([][][]rec, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	n := b.shards
	total := 0
	for _, c := range chunks {
		total += len(c) / 3
	}
	// Each worker sees about total/workers triples, spread evenly over the
	// shards by the hash: pre-size to avoid regrowing the largest slices.
	per := total/(workers*n) + total/(workers*n)/16 + 64
	for w := 0; w < workers; w++ {
		outs[w] = make([][]rec, n)
		ins[w] = make([][]rec, n)
		for i := 0; i < n; i++ {
			outs[w][i] = make([]rec, 0, per)
			ins[w][i] = make([]rec, 0, per)
		}
		wg.Add(1)
		go func(out, in [][]rec) {
			defer wg.Done()
			id := remap.id
			for {
				c := int(next.Add(1)) - 1
				if c >= len(chunks) {
					return
				}
				ch := chunks[c]
				for j := 0; j+2 < len(ch); j += 3 {
					s, p, o := id(ch[j]), id(ch[j+1]), id(ch[j+2])
					so := ownerOf(s, n)
					out[so] = append(out[so], rec{MakeKey(s, p, Out), o})
					if p != TypeID {
						oo := ownerOf(o, n)
						in[oo] = append(in[oo], rec{MakeKey(o, p, In), s})
					}
				}
				chunks[c] = nil
			}
		}(outs[w], ins[w])
	}
	wg.Wait()
	return outs, ins
}

func concat(parts [][][]rec, shard int) []rec {
	n := 0
	for _, p := range parts {
		n += len(p[shard])
	}
	if len(parts) == 1 {
		return parts[0][shard]
	}
	r := make([]rec, 0, n)
	for _, p := range parts {
		r = append(r, p[shard]...)
	}
	return r
}

// parallel runs fn(0..n-1) on up to GOMAXPROCS goroutines.
func parallel(n int, fn func(i int)) {
	parallelN(n, runtime.GOMAXPROCS(0), fn)
}

// denseIndex maps the IDs of a dictionary onto 0..n-1 (IDs are dense in
// two ranges).
type denseIndex struct{ npc, n uint64 }

// denseOf returns the dense index of every ID d hands out (its overlay's
// too).
func denseOf(d *Dict) denseIndex {
	return denseIndex{npc: uint64(d.NumPredicatesAndClasses()), n: uint64(d.Len())}
}

func (x denseIndex) of(v ID) uint64 {
	if v < FirstVertexID {
		return uint64(v) - 1
	}
	return uint64(v-FirstVertexID) + x.npc
}

// sortRecs sorts r by (key, neighbour): a counting sort by vertex (IDs are
// dense, so this is two linear passes), then each vertex's few records by
// predicate, direction and neighbour. It returns a new slice; r is
// released.
func sortRecs(r []rec, dn denseIndex) []rec {
	if len(r) < 1024 {
		slices.SortFunc(r, cmpRec)
		return r
	}
	ends := make([]uint32, dn.n+1)
	for _, x := range r {
		ends[dn.of(x.k.Vertex())+1]++
	}
	for i := 1; i < len(ends); i++ {
		ends[i] += ends[i-1]
	}
	out := make([]rec, len(r))
	for _, x := range r {
		i := dn.of(x.k.Vertex())
		out[ends[i]] = x
		ends[i]++
	}
	// ends[i] is now the end of vertex i's group.
	start := uint32(0)
	for _, end := range ends[:dn.n] {
		if g := out[start:end]; len(g) > 1 {
			if len(g) <= 24 {
				for a := 1; a < len(g); a++ {
					for b := a; b > 0 && cmpRec(g[b], g[b-1]) < 0; b-- {
						g[b], g[b-1] = g[b-1], g[b]
					}
				}
			} else {
				slices.SortFunc(g, cmpRec)
			}
		}
		start = end
	}
	return out
}

// idLists collects sorted ID lists per predicate or class ID.
type idLists struct {
	dense  [][]uint64 // indexed by ID when IDs are small
	sparse map[ID][]uint64
}

func newIDLists() *idLists { return &idLists{dense: make([][]uint64, 1024), sparse: map[ID][]uint64{}} }

func (l *idLists) add(k ID, v ID) {
	if int(k) < len(l.dense) {
		l.dense[k] = append(l.dense[k], uint64(v))
		return
	}
	l.sparse[k] = append(l.sparse[k], uint64(v))
}

// each calls fn for every non-empty list in ascending ID order.
func (l *idLists) each(fn func(k ID, vals []uint64) error) error {
	for k, v := range l.dense {
		if len(v) > 0 {
			if err := fn(ID(k), v); err != nil {
				return err
			}
		}
	}
	keys := make([]ID, 0, len(l.sparse))
	for k := range l.sparse {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := fn(k, l.sparse[k]); err != nil {
			return err
		}
	}
	return nil
}

// buildShard sorts a shard's edges and lays out its table in memory (see
// buildShardTable).
func buildShard(out, in []rec, width int, dn denseIndex, dups, dist *atomic.Uint64) ([]byte, *shardStats, error) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		in = sortRecs(in, dn)
	}()
	out = sortRecs(out, dn)
	wg.Wait()
	outs := &sliceRecs{r: out}
	tb, st, err := buildShardTable(shardEdges{edges: len(out) + len(in), out: outs, in: &sliceRecs{r: in}, types: func() (recStream, error) {
		return &sliceRecs{r: out, typesOnly: true}, nil
	}}, width, dups, dist)
	if err != nil {
		return nil, nil, err
	}
	buf, err := tb.Build()
	if err != nil {
		return nil, nil, err
	}
	return buf, st, nil
}

// recStream yields edge records in (key, neighbour) order; repeats may
// occur (they are dropped by the reader). err reports a failure that ended
// the stream early.
type recStream interface {
	next() (rec, bool)
	err() error
}

// sliceRecs streams a sorted slice; typesOnly keeps only rdf:type out-edges.
type sliceRecs struct {
	r         []rec
	i         int
	typesOnly bool
}

func (s *sliceRecs) next() (rec, bool) {
	for s.i < len(s.r) {
		x := s.r[s.i]
		s.i++
		if s.typesOnly && (x.k.Pred() != TypeID || x.k.Dir() != Out) {
			continue
		}
		return x, true
	}
	return rec{}, false
}

func (s *sliceRecs) err() error { return nil }

// shardEdges are the sorted inputs of one shard's table: its out-edges,
// its in-edges, and (opened once out has been read to the end) its
// rdf:type out-edges again, which the in-edge pass walks in step for the
// types of each object.
type shardEdges struct {
	edges   int // out and in records (with repeats): sizes the table
	out, in recStream
	types   func() (recStream, error)
}

// groups reads a recStream as runs of one key: each call of next returns
// the key and its distinct neighbours (valid until the next call).
type groups struct {
	s       recStream
	pending rec
	has     bool
	vals    []uint64
	dups    uint64 // repeated records dropped
	recs    uint64 // distinct records returned
}

func newGroups(s recStream) *groups {
	g := &groups{s: s}
	g.pending, g.has = s.next()
	return g
}

func (g *groups) next() (Key, []uint64, bool) {
	if !g.has {
		return 0, nil, false
	}
	k := g.pending.k
	g.vals = append(g.vals[:0], uint64(g.pending.v))
	for {
		x, ok := g.s.next()
		if !ok {
			g.has = false
			break
		}
		if x.k != k {
			g.pending = x
			break
		}
		if uint64(x.v) == g.vals[len(g.vals)-1] {
			g.dups++
			continue
		}
		g.vals = append(g.vals, uint64(x.v))
	}
	g.recs += uint64(len(g.vals))
	return k, g.vals, true
}

// buildShardTable lays out a shard's table from its sorted edges: the edge
// lists, the index vertices and the per-vertex predicate lists. It returns
// the table builder, filled, for the caller to lay out in memory
// (TableBuilder.Build) or write to a file (TableBuilder.WriteTo).
func buildShardTable(e shardEdges, width int, dups, dist *atomic.Uint64) (*rdmakv.TableBuilder, *shardStats, error) {
	st := newShardStats()
	tb, err := rdmakv.NewTableBuilder(rdmakv.TableOptions{Width: width,
		Keys: e.edges*2/3 + 1024, Values: e.edges*3/4 + 1024})
	if err != nil {
		return nil, nil, err
	}
	var preds []uint64
	idxOut, idxIn, typeIdx := newIDLists(), newIDLists(), newIDLists()

	// Out-edges, grouped by (s, p); rdf:type (ID 1) is the first group of
	// each subject, so its classes are known for the fan-out statistics.
	var types []uint64
	curS, haveS, typed := ID(0), false, false
	flushS := func() error {
		if !haveS {
			return nil
		}
		st.subjects++
		st.outPreds += uint64(len(preds))
		if !typed {
			st.untyped++
		}
		return tb.AddShared(uint64(MakeKey(curS, AllPredicates, Out)), preds)
	}
	og := newGroups(e.out)
	for {
		k, vals, ok := og.next()
		if !ok {
			break
		}
		s, p := k.Vertex(), k.Pred()
		if !haveS || s != curS {
			if err := flushS(); err != nil {
				return nil, nil, err
			}
			curS, haveS, typed = s, true, false
			preds, types = preds[:0], types[:0]
		}
		if err := tb.Add(uint64(k), vals); err != nil {
			return nil, nil, err
		}
		preds = append(preds, uint64(p))
		idxOut.add(p, s)
		ps := st.pred(p)
		ps.Triples += uint64(len(vals))
		ps.Subjects++
		if p == TypeID {
			typed = true
			types = append(types, vals...)
			for _, c := range vals {
				typeIdx.add(ID(c), s)
				st.classes[ID(c)]++
			}
			continue
		}
		for _, c := range types {
			x := st.classPred(ID(c), p, Out)
			x.Vertices++
			x.Edges += uint64(len(vals))
		}
	}
	if err := e.out.err(); err != nil {
		return nil, nil, err
	}
	if err := flushS(); err != nil {
		return nil, nil, err
	}
	dups.Add(og.dups)
	dist.Add(og.recs)
	st.triples = og.recs

	// In-edges, grouped by (o, p). The types of o are in this shard's
	// out-edges (the shard owns o): a second reader of them walks in step.
	ts, err := e.types()
	if err != nil {
		return nil, nil, err
	}
	tg := newGroups(ts)
	tk, tvals, tok := tg.next()
	curO, haveO := ID(0), false
	flushO := func() error {
		if !haveO {
			return nil
		}
		st.objects++
		st.inPreds += uint64(len(preds))
		return tb.AddShared(uint64(MakeKey(curO, AllPredicates, In)), preds)
	}
	ig := newGroups(e.in)
	for {
		k, vals, ok := ig.next()
		if !ok {
			break
		}
		o, p := k.Vertex(), k.Pred()
		if !haveO || o != curO {
			if err := flushO(); err != nil {
				return nil, nil, err
			}
			curO, haveO = o, true
			preds, types = preds[:0], types[:0]
			want := MakeKey(o, TypeID, Out)
			for tok && tk < want {
				tk, tvals, tok = tg.next()
			}
			if tok && tk == want {
				types = append(types, tvals...)
			}
		}
		if err := tb.Add(uint64(k), vals); err != nil {
			return nil, nil, err
		}
		preds = append(preds, uint64(p))
		idxIn.add(p, o)
		st.pred(p).Objects++
		for _, c := range types {
			x := st.classPred(ID(c), p, In)
			x.Vertices++
			x.Edges += uint64(len(vals))
		}
	}
	if err := e.in.err(); err != nil {
		return nil, nil, err
	}
	if err := ts.err(); err != nil {
		return nil, nil, err
	}
	if err := flushO(); err != nil {
		return nil, nil, err
	}

	// Index vertices. An ID that is both a predicate and a class shares
	// (0, id, In) between its objects and its instances: the lists are
	// merged (see doc.go).
	var allOut, allIn []uint64
	if err := idxOut.each(func(p ID, v []uint64) error {
		allOut = append(allOut, uint64(p))
		return tb.Add(uint64(MakeKey(IndexVertex, p, Out)), v)
	}); err != nil {
		return nil, nil, err
	}
	merged := map[ID][]uint64{}
	if err := idxIn.each(func(p ID, v []uint64) error {
		allIn = append(allIn, uint64(p))
		merged[p] = v
		return nil
	}); err != nil {
		return nil, nil, err
	}
	if err := typeIdx.each(func(c ID, v []uint64) error {
		if m, ok := merged[c]; ok {
			u := append(slices.Clone(m), v...)
			slices.Sort(u)
			merged[c] = slices.Compact(u)
			return nil
		}
		merged[c] = v
		return nil
	}); err != nil {
		return nil, nil, err
	}
	// In ID order, so that the same edges always give the same bytes.
	for _, k := range slices.Sorted(maps.Keys(merged)) {
		if err := tb.Add(uint64(MakeKey(IndexVertex, k, In)), merged[k]); err != nil {
			return nil, nil, err
		}
	}
	if err := tb.Add(uint64(MakeKey(IndexVertex, AllPredicates, Out)), allOut); err != nil {
		return nil, nil, err
	}
	if err := tb.Add(uint64(MakeKey(IndexVertex, AllPredicates, In)), allIn); err != nil {
		return nil, nil, err
	}
	return tb, st, nil
}
