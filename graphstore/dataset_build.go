package graphstore

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

// DatasetBuilder builds a Dataset: it interns the terms of every graph
// into one dictionary (a Builder's interning stripes), keeps each graph's
// triples apart, and at Build renumbers once and builds one store per
// graph over the shared dictionary. Add* may be called from many
// goroutines at once; Build is called once, after every Add* has
// returned.
type DatasetBuilder struct {
	b *Builder

	mu      sync.RWMutex // Add* hold it shared, Build exclusively
	built   bool
	def     *graphChunks
	namedMu sync.Mutex // guards named (Add* run concurrently)
	named   map[rdf.Term]*graphChunks
	after   DatasetCounters // set by Build
	spill   *spillState     // SpillTo
	// layer: the default graph's inferred layer (AddInferredTriples),
	// written by WriteSnapshot with reasoning as its profile.
	layer     *graphChunks
	reasoning string
}

// graphChunks are the provisional triples (s, p, o tns) of one graph.
type graphChunks struct {
	name   rdf.Term
	tn     uint32 // the name's provisional number (named graphs)
	read   atomic.Uint64
	mu     sync.Mutex
	chunks [][]uint32
	file   chunkFile // spilled chunks (SpillTo)
}

// GraphCounters are the counts of one graph of a DatasetBuilder.
type GraphCounters struct {
	Name       rdf.Term // zero for the default graph
	Read       uint64   // triples added
	Duplicates uint64   // repeats dropped (known after Build)
	Distinct   uint64   // distinct triples stored (known after Build)
}

// DatasetCounters are a DatasetBuilder's counts: the totals over all graphs
// (Terms counts graph names too) and per graph, the default graph first,
// then the named graphs in the order of Dataset.Graphs.
type DatasetCounters struct {
	BuildCounters
	Graphs []GraphCounters
	// Inferred is the distinct triples of the inferred layer
	// (AddInferredTriples; known after WriteSnapshot).
	Inferred uint64
}

// NewDatasetBuilder returns a builder of a dataset whose stores have shards
// shards.
func NewDatasetBuilder(shards int) (*DatasetBuilder, error) {
	b, err := NewBuilder(shards)
	if err != nil {
		return nil, err
	}
	return &DatasetBuilder{b: b, def: &graphChunks{}, named: map[rdf.Term]*graphChunks{}}, nil
}

// graph returns the chunks of graph name (zero: the default graph),
// interning the name of a new named graph. The caller holds db.mu shared.
func (db *DatasetBuilder) graph(name rdf.Term) (*graphChunks, error) {
	if name.IsZero() {
		return db.def, nil
	}
	db.namedMu.Lock()
	g, ok := db.named[name]
	db.namedMu.Unlock()
	if ok {
		return g, nil
	}
	if err := checkGraphName(name); err != nil {
		return nil, err
	}
	tn, err := db.b.internTerm(name, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot intern graph name %v: %w", name, err)
	}
	db.namedMu.Lock()
	defer db.namedMu.Unlock()
	if g, ok := db.named[name]; ok {
		return g, nil
	}
	g = &graphChunks{name: name, tn: tn}
	db.named[name] = g
	return g, nil
}

// AddGraph makes graph name part of the dataset even if no triple is
// added to it (it is built as an empty store).
func (db *DatasetBuilder) AddGraph(name rdf.Term) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.built {
		return fmt.Errorf("cannot add graph %v: the dataset was already built", name)
	}
	_, err := db.graph(name)
	return err
}

// AddTriples interns a batch of triples of graph name (the zero Term for
// the default graph; else an IRI or a blank node) and adds them. The batch
// is not retained. It is safe for concurrent use.
func (db *DatasetBuilder) AddTriples(name rdf.Term, batch []rdf.Triple) error {
	return db.addBatch(name, len(batch), func(views []termView) { viewTriples(views, batch) })
}

// AddRawTriples is AddTriples for terms given as bytes
// (Builder.AddRawTriples): no string is allocated for a term already
// interned. The batch is not retained; it is safe for concurrent use.
func (db *DatasetBuilder) AddRawTriples(name rdf.Term, batch []RawTriple) error {
	return db.addBatch(name, len(batch), func(views []termView) { viewRawTriples(views, batch) })
}

// addBatch adds n triples of graph name, whose terms view fills in
// (internTriples).
func (db *DatasetBuilder) addBatch(name rdf.Term, n int, view func([]termView)) error {
	if n == 0 {
		return nil
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.built {
		return fmt.Errorf("cannot add triples: the dataset was already built")
	}
	g, err := db.graph(name)
	if err != nil {
		return fmt.Errorf("cannot add triples: %w", err)
	}
	tns, err := db.b.internTriples(n, view)
	if err != nil {
		return fmt.Errorf("cannot add triples: %w", err)
	}
	g.add(tns, n)
	return db.maybeSpill(g, len(tns))
}

// AddQuads interns a batch of quads and adds each to its graph (G zero:
// the default graph). The batch is not retained; runs of quads of the same
// graph are cheapest. It is safe for concurrent use.
func (db *DatasetBuilder) AddQuads(batch []rdf.Quad) error {
	if len(batch) == 0 {
		return nil
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.built {
		return fmt.Errorf("cannot add quads: the dataset was already built")
	}
	tns, err := db.b.internTriples(len(batch), func(views []termView) {
		for i := range batch {
			q := &batch[i]
			views[3*i], views[3*i+1], views[3*i+2] = termViewOf(&q.S), termViewOf(&q.P), termViewOf(&q.O)
		}
	})
	if err != nil {
		return fmt.Errorf("cannot add quads: %w", err)
	}
	for i := 0; i < len(batch); {
		j := i + 1
		for j < len(batch) && batch[j].G == batch[i].G {
			j++
		}
		g, err := db.graph(batch[i].G)
		if err != nil {
			return fmt.Errorf("cannot add quads: %w", err)
		}
		chunk := tns[3*i : 3*j]
		if j-i < len(batch) {
			chunk = slices.Clone(chunk) // Build frees each graph's chunks on their own
		}
		g.add(chunk, j-i)
		if err := db.maybeSpill(g, len(chunk)); err != nil {
			return fmt.Errorf("cannot add quads: %w", err)
		}
		i = j
	}
	return nil
}

func (g *graphChunks) add(chunk []uint32, triples int) {
	g.mu.Lock()
	g.chunks = append(g.chunks, chunk)
	g.mu.Unlock()
	g.read.Add(uint64(triples))
}

// Counters returns the counts so far (duplicates and distinct triples are
// known after Build).
func (db *DatasetBuilder) Counters() DatasetCounters {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.built {
		return db.after
	}
	c := DatasetCounters{}
	c.Terms = db.b.Counters().Terms
	gs := db.sortedGraphs()
	for _, g := range gs {
		r := g.read.Load()
		c.Read += r
		c.Graphs = append(c.Graphs, GraphCounters{Name: g.name, Read: r})
	}
	return c
}

// sortedGraphs returns the default graph, then the named graphs by name.
func (db *DatasetBuilder) sortedGraphs() []*graphChunks {
	db.namedMu.Lock()
	gs := make([]*graphChunks, 0, len(db.named)+1)
	for _, g := range db.named {
		gs = append(gs, g)
	}
	db.namedMu.Unlock()
	slices.SortFunc(gs, func(a, b *graphChunks) int { return compareGraphNames(a.name, b.name) })
	return append([]*graphChunks{db.def}, gs...)
}

// Build renumbers the terms once (every graph's terms and the graph names)
// and builds one store per graph over the shared dictionary, one graph
// after the other (each build parallel over shards).
func (db *DatasetBuilder) Build() (*Dataset, error) {
	db.mu.Lock()
	if db.built {
		db.mu.Unlock()
		return nil, fmt.Errorf("cannot build: already built")
	}
	db.built = true
	gs := db.sortedGraphs()
	layer := db.layer
	db.mu.Unlock()
	if layer != nil {
		return nil, fmt.Errorf("cannot build in memory: the dataset has an inferred layer (WriteSnapshot writes it)")
	}

	b := db.b
	dict, remap, err := b.buildDict()
	if err != nil {
		return nil, fmt.Errorf("cannot build the dictionary: %w", err)
	}
	for s := range b.stripes {
		b.stripes[s] = stripe{}
	}
	dref := newDictRef(nil)
	var refs []*graphRef
	fail := func(err error) (*Dataset, error) {
		for _, r := range refs {
			r.release()
		}
		dref.release()
		return nil, err
	}
	var after DatasetCounters
	after.Terms = uint64(dict.Len())
	for _, g := range gs {
		chunks, err := g.allChunks()
		if err != nil {
			return fail(err)
		}
		outs, ins := b.partition(chunks, &remap)
		st, dups, dist, err := buildGraph(b.shards, dict, outs, ins)
		if err != nil {
			if g.name.IsZero() {
				return fail(fmt.Errorf("cannot build the default graph: %w", err))
			}
			return fail(fmt.Errorf("cannot build graph %v: %w", g.name, err))
		}
		refs = append(refs, newGraphRef(st, dref))
		read := g.read.Load()
		after.Read += read
		after.Duplicates += dups
		after.Distinct += dist
		after.Graphs = append(after.Graphs, GraphCounters{Name: g.name, Read: read, Duplicates: dups, Distinct: dist})
	}
	named := make([]namedGraph, 0, len(gs)-1)
	for i, g := range gs[1:] {
		id := remap.id(g.tn)
		named = append(named, namedGraph{name: g.name, id: id, g: refs[i+1]})
	}
	db.mu.Lock()
	db.after = after
	db.mu.Unlock()
	return newDataset(dict, dref, b.shards, refs[0], named), nil
}

// buildGraph builds one store over dict from edges partitioned per worker
// and per shard (Builder.partition, partitionIDs): the same steps as the
// end of Builder.Build. It returns the duplicates dropped and the distinct
// triples stored.
func buildGraph(shards int, dict *Dict, outs, ins [][][]rec) (*Store, uint64, uint64, error) {
	width := valueWidth(dict.MaxID())
	tables := make([][]byte, shards)
	parts := make([]*shardStats, shards)
	errs := make([]error, shards)
	var dups, dist atomic.Uint64
	parallel(shards, func(i int) {
		out := concat(outs, i)
		in := concat(ins, i)
		for w := range outs {
			outs[w][i], ins[w][i] = nil, nil
		}
		tables[i], parts[i], errs[i] = buildShard(out, in, width, denseOf(dict), &dups, &dist)
	})
	for i, err := range errs {
		if err != nil {
			return nil, 0, 0, fmt.Errorf("cannot build shard %d: %w", i, err)
		}
	}
	stats := mergeStats(parts, uint64(dict.Len()))
	regions := make([]*rdmakv.Region, shards)
	for i, t := range tables {
		regions[i] = rdmakv.NewRegion(t)
	}
	st, err := newStore(dict, stats, regions, nil, nil)
	if err != nil {
		return nil, 0, 0, err
	}
	return st, dups.Load(), dist.Load(), nil
}

// idTriple is a triple of IDs.
type idTriple struct{ s, p, o ID }

func cmpIDTriple(a, b idTriple) int {
	switch {
	case a.s != b.s:
		return cmp.Compare(a.s, b.s)
	case a.p != b.p:
		return cmp.Compare(a.p, b.p)
	}
	return cmp.Compare(a.o, b.o)
}

// partitionIDs splits ID triples into per-shard out- and in-edge lists,
// in the shape Builder.partition returns (one worker).
func partitionIDs(triples []idTriple, shards int) (outs, ins [][][]rec) {
	out := make([][]rec, shards)
	in := make([][]rec, shards)
	for _, t := range triples {
		so := ownerOf(t.s, shards)
		out[so] = append(out[so], rec{MakeKey(t.s, t.p, Out), t.o})
		if t.p != TypeID {
			oo := ownerOf(t.o, shards)
			in[oo] = append(in[oo], rec{MakeKey(t.o, t.p, In), t.s})
		}
	}
	return [][][]rec{out}, [][][]rec{in}
}
