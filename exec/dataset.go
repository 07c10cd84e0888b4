package exec

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// Named graphs (SPARQL 1.1 §13).
//
// An engine made by NewDatasetEngine runs over a graphstore.Dataset: its
// own store is the default graph, and each named graph is its own store
// (same shards, same dictionary: a term has one ID in every graph). A
// graph other than the engine's own is reached through a graph engine: an
// Engine over that graph's store with its own nodes and workers, started
// on first use and stopped by the dataset engine's Close. An engine made
// by New or NewGraphEngine is a dataset with no named graphs.
//
//   - GRAPH <g> { P } evaluates P on g's engine, seeded with the rows; a
//     graph that is not one of the query's named graphs matches nothing.
//   - GRAPH ?g { P } evaluates P on each named graph in turn (in the order
//     of Dataset.Graphs), seeded with the rows whose ?g is unbound or that
//     graph, with ?g bound to the graph's name; the results are
//     concatenated.
//   - FROM / FROM NAMED replace the dataset for the query: the query runs on
//     the engine of its default graph — one FROM graph: that graph's engine;
//     several: a union store whose lists are the merged lists of the graphs,
//     so that a basic graph pattern matches over the RDF merge (a pattern
//     can join triples of two graphs), run by a temporary engine; none (only
//     FROM NAMED): an empty graph — and GRAPH sees only the FROM NAMED
//     graphs. A FROM graph the dataset does not have is empty.

// NewDatasetEngine returns an engine over ds: the default graph is its
// store, the named graphs are reached by GRAPH and FROM / FROM NAMED.
// Constants are looked up and results decoded in ds's dictionary. The
// engine does not own ds: close the engine before the dataset.
func NewDatasetEngine(ds *graphstore.Dataset, cfg Config) (*Engine, error) {
	st, err := newDatasetGraph(ds, ds.Default())
	if err != nil {
		return nil, fmt.Errorf("cannot run the default graph: %w", err)
	}
	e := New(st, st.Port(), cfg)
	e.graphs.ds = &datasetState{ds: ds, cfg: cfg, root: e, engines: map[*graphstore.Store]*Engine{ds.Default(): e}}
	return e, nil
}

// Dataset returns the dataset of an engine made by NewDatasetEngine, or
// nil.
func (e *Engine) Dataset() *graphstore.Dataset {
	if e.graphs.ds == nil {
		return nil
	}
	return e.graphs.ds.ds
}

// datasetState is what the engines of one dataset share: the dataset and
// the graph engines started so far.
type datasetState struct {
	ds       *graphstore.Dataset
	cfg      Config
	root     *Engine // the dataset engine
	mu       sync.Mutex
	engines  map[*graphstore.Store]*Engine // the default graph's is the dataset engine
	explicit *Engine                       // the default graph's explicit triples (explicit.go), started on first use
	closed   bool
}

// datasetGraph is a graph of a dataset as the engine reads it: the
// graph's store, with the dataset's dictionary (a graph shared from an
// older dataset may have an older, smaller one).
type datasetGraph struct {
	*GraphStore
	dict *graphstore.Dict
}

func newDatasetGraph(ds *graphstore.Dataset, st *graphstore.Store) (*datasetGraph, error) {
	g, err := NewGraphStore(st)
	if err != nil {
		return nil, err
	}
	return &datasetGraph{GraphStore: g, dict: ds.Dict()}, nil
}

func (g *datasetGraph) LookupTerm(t rdf.Term) (ID, bool) { return g.dict.Lookup(t) }
func (g *datasetGraph) Term(id ID) (rdf.Term, bool)      { return g.dict.Term(id) }
func (g *datasetGraph) IsClass(id ID) bool               { return g.dict.IsClass(id) }

// graphEngine returns the engine of graph st, starting it on first use.
func (d *datasetState) graphEngine(st *graphstore.Store) (*Engine, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	if e := d.engines[st]; e != nil {
		return e, nil
	}
	g, err := newDatasetGraph(d.ds, st)
	if err != nil {
		return nil, err
	}
	e := New(g, g.Port(), d.cfg)
	e.graphs.ds = d
	d.engines[st] = e
	return e, nil
}

// close stops the graph engines (not the dataset engine itself).
func (d *datasetState) close() {
	d.mu.Lock()
	d.closed = true
	var es []*Engine
	if d.explicit != nil {
		es = append(es, d.explicit)
	}
	for _, e := range d.engines {
		if e != d.root {
			es = append(es, e)
		}
	}
	d.mu.Unlock()
	for _, e := range es {
		e.Close()
	}
}

// engineGraphs is what an Engine knows of named graphs.
type engineGraphs struct {
	ds    *datasetState // nil: a single graph, no named graphs
	mu    sync.Mutex
	empty *Engine // an empty graph's engine (GRAPH <not a graph>), started on first use
	// stripped: queries with FROM / FROM NAMED → the same without.
	stripped map[*sparql.Query]*sparql.Query
}

// closeGraphs stops the engines e started for graphs: its empty graph
// and, for a dataset engine, the graph engines.
func (e *Engine) closeGraphs() {
	e.graphs.mu.Lock()
	empty := e.graphs.empty
	e.graphs.mu.Unlock()
	if empty != nil {
		empty.Close()
	}
	if e.graphs.ds != nil && e.graphs.ds.root == e {
		e.graphs.ds.close()
	}
}

// queryDataset is the dataset of one query (FROM / FROM NAMED), carried
// by the context from the dataset engine to the engine that runs it.
type queryDataset struct {
	named []graphstore.NamedGraph // the graphs GRAPH sees, in Dataset.Graphs order
}

type queryDatasetKey struct{}

// namedGraphs returns the named graphs the query running under ctx sees.
func (e *Engine) namedGraphs(ctx context.Context) []graphstore.NamedGraph {
	if qd, ok := ctx.Value(queryDatasetKey{}).(*queryDataset); ok {
		return qd.named
	}
	if e.graphs.ds == nil {
		return nil
	}
	return e.graphs.ds.ds.Graphs()
}

// runDataset runs a query that has FROM / FROM NAMED on the engine of its
// default graph, with its named graphs in the context; ok is false when q
// has no dataset clause (or this is already the engine running it).
func (e *Engine) runDataset(ctx context.Context, q *sparql.Query, opts Options) (res *Result, ok bool, err error) {
	if q.Dataset == nil || ctx.Value(queryDatasetKey{}) != nil {
		return nil, false, nil
	}
	qd := &queryDataset{}
	var defaults []*graphstore.Store
	if e.graphs.ds != nil {
		seen := map[*graphstore.Store]bool{}
		for _, iri := range q.Dataset.Default {
			if st, found := e.graphs.ds.ds.Graph(rdf.NewIRI(iri)); found && !seen[st] {
				seen[st] = true
				defaults = append(defaults, st)
			}
		}
		want := map[rdf.Term]bool{}
		for _, iri := range q.Dataset.Named {
			want[rdf.NewIRI(iri)] = true
		}
		for _, g := range e.graphs.ds.ds.Graphs() {
			if want[g.Name] {
				qd.named = append(qd.named, g)
			}
		}
	}
	ctx = context.WithValue(ctx, queryDatasetKey{}, qd)
	var run *Engine
	switch len(defaults) {
	case 0:
		run = New(&emptyStore{Store: e.store}, newChanTransport(e.store.Shards()), e.cfg)
		defer run.Close()
	case 1:
		if run, err = e.graphs.ds.graphEngine(defaults[0]); err != nil {
			return nil, true, err
		}
	default:
		u, err := e.unionStore(defaults)
		if err != nil {
			return nil, true, err
		}
		run = New(u, newChanTransport(u.Shards()), e.cfg)
		defer run.Close()
	}
	run.graphs.ds = e.graphs.ds
	// The engine running q sees its dataset through ctx: the planner gets
	// the query without the clause.
	res, err = run.Run(ctx, e.withoutDataset(q), opts)
	return res, true, err
}

// withoutDataset returns q without its FROM / FROM NAMED clause: the
// same copy for the same q, so that a repeated query hits the plan cache
// of the engine that runs it.
func (e *Engine) withoutDataset(q *sparql.Query) *sparql.Query {
	g := &e.graphs
	g.mu.Lock()
	defer g.mu.Unlock()
	if c := g.stripped[q]; c != nil {
		return c
	}
	if g.stripped == nil || len(g.stripped) >= planCacheSize {
		g.stripped = map[*sparql.Query]*sparql.Query{} // simple bound: start over
	}
	c := *q
	c.Dataset = nil
	g.stripped[q] = &c
	return &c
}

// unionStore returns the merge of graphs as one store.
func (e *Engine) unionStore(graphs []*graphstore.Store) (*unionStore, error) {
	u := &unionStore{dict: e.graphs.ds.ds.Dict()}
	for _, st := range graphs {
		g, err := newDatasetGraph(e.graphs.ds.ds, st)
		if err != nil {
			return nil, err
		}
		u.parts = append(u.parts, g)
	}
	u.stats = mergePlannerStats(u.parts)
	return u, nil
}

// evalInGraph evaluates a pattern inside GRAPH name, joined with the rows
// of input: run evaluates it on a graph's engine, seeded with rows.
func (e *Engine) evalInGraph(ctx context.Context, name sparql.TermOrVar, input *Table, mem *memAccount,
	run func(ctx context.Context, g *Engine, seed *Table) (*Table, error)) (*Table, error) {
	graphs := e.namedGraphs(ctx)
	if name.Var == "" {
		var id ID
		if e.graphs.ds != nil {
			id, _ = e.graphs.ds.ds.Dict().Lookup(name.Term)
		}
		for _, g := range graphs {
			if id != 0 && g.ID == id {
				ge, err := e.graphs.ds.graphEngine(g.Store)
				if err != nil {
					return nil, err
				}
				return run(ctx, ge, input)
			}
		}
		// Not a named graph of the query: no solutions.
		return run(ctx, e.emptyGraph(), &Table{Vars: input.Vars, Cols: make([][]ID, len(input.Cols))})
	}
	gcol := input.Col(name.Var)
	var out *Table
	// Memory: each graph's seed (a copy of the input's rows for it, with
	// the graph's column) is charged before it is made and released once
	// the graph's pattern has run; the pattern's own state is released
	// then too (settled to its result, which stays charged as out's
	// rows), and gr carries out's spare capacity. The loops look at ctx.
	var resBytes int64
	gr := growth{m: mem}
	defer gr.done()
	sc := stopCheck{ctx: ctx}
	for _, g := range graphs {
		var rows []int32
		for r := 0; r < input.N; r++ {
			if err := sc.add(1); err != nil {
				return nil, err
			}
			if gcol < 0 || input.At(gcol, r) == 0 || input.At(gcol, r) == g.ID {
				rows = append(rows, int32(r))
			}
		}
		if len(rows) == 0 {
			continue
		}
		gr.to(tableBytes(out) - resBytes + 4*int64(cap(rows)) + gatherBytes(input, len(rows)) + 8*int64(len(rows)))
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		seed := input.gather(rows)
		if gcol < 0 {
			seed.Vars = append(slices.Clone(seed.Vars), name.Var)
			seed.Cols = append(seed.Cols, nil)
		}
		c := seed.Col(name.Var)
		seed.Cols[c] = make([]ID, seed.N)
		for i := range seed.Cols[c] {
			seed.Cols[c][i] = g.ID
		}
		ge, err := e.graphs.ds.graphEngine(g.Store)
		if err != nil {
			return nil, err
		}
		base := mem.tablesNow()
		res, err := run(ctx, ge, seed)
		if err != nil {
			return nil, err
		}
		// Every row of this graph binds ?g to it, whether the inner
		// pattern kept the column or not.
		rc := res.Col(name.Var)
		if rc < 0 {
			res.Vars = append(slices.Clone(res.Vars), name.Var)
			res.Cols = append(res.Cols, nil)
			rc = len(res.Vars) - 1
		}
		res.Cols[rc] = make([]ID, res.N)
		for i := range res.Cols[rc] {
			res.Cols[rc][i] = g.ID
		}
		rb := tableBytes(res)
		mem.settle(base, rb)
		resBytes += rb
		if out == nil {
			out = res
		} else {
			appendByName(out, res)
		}
		gr.to(tableBytes(out) - resBytes)
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
	}
	if out == nil {
		vars := input.Vars
		if gcol < 0 {
			vars = append(slices.Clone(vars), name.Var)
		}
		return &Table{Vars: vars, Cols: make([][]ID, len(vars))}, nil
	}
	return out, nil
}

// emptyGraph returns an engine over an empty graph (started on first use).
func (e *Engine) emptyGraph() *Engine {
	e.graphs.mu.Lock()
	defer e.graphs.mu.Unlock()
	if e.graphs.empty == nil {
		e.graphs.empty = New(&emptyStore{Store: e.store}, newChanTransport(e.store.Shards()), e.cfg)
		e.graphs.empty.graphs.ds = e.graphs.ds
	}
	return e.graphs.empty
}

// appendByName appends the rows of o to t, matching columns by variable
// (a variable t lacks becomes a new column, unbound in t's rows).
func appendByName(t, o *Table) {
	for _, v := range o.Vars {
		if t.Col(v) < 0 {
			t.Vars = append(t.Vars, v)
			t.Cols = append(t.Cols, nil)
		}
	}
	aligned := &Table{Vars: t.Vars, Cols: make([][]ID, len(t.Vars)), N: o.N}
	for c, v := range t.Vars {
		if oc := o.Col(v); oc >= 0 {
			aligned.Cols[c] = o.Cols[oc]
		}
	}
	t.appendTable(aligned)
}

// emptyStore is a graph with no triples over another store's dictionary
// and shards (the default graph of a query with FROM NAMED only).
type emptyStore struct {
	Store
	once  sync.Once
	stats *planner.Stats
}

func (s *emptyStore) Lookup(ctx context.Context, self, shard int, keys []Key, out [][]ID) (ReadCost, error) {
	for i := range keys {
		out[i] = nil
	}
	return ReadCost{}, ctx.Err()
}

func (s *emptyStore) PlannerStats() *planner.Stats {
	s.once.Do(func() {
		s.stats = &planner.Stats{Shards: s.Store.Shards(), TypeID: graphstore.TypeID,
			Preds: map[ID]planner.PredStats{}, Classes: map[ID]uint64{}}
	})
	return s.stats
}

// unionStore is the RDF merge of graphs of one dataset: every list is the
// sorted union of the graphs' lists of that key (index vertices included).
type unionStore struct {
	parts []*datasetGraph
	dict  *graphstore.Dict
	stats *planner.Stats
}

var _ Store = (*unionStore)(nil)

func (u *unionStore) Shards() int                      { return u.parts[0].Shards() }
func (u *unionStore) Owner(v ID) int                   { return u.parts[0].Owner(v) }
func (u *unionStore) LookupTerm(t rdf.Term) (ID, bool) { return u.dict.Lookup(t) }
func (u *unionStore) Term(id ID) (rdf.Term, bool)      { return u.dict.Term(id) }
func (u *unionStore) IsClass(id ID) bool               { return u.dict.IsClass(id) }
func (u *unionStore) PlannerStats() *planner.Stats     { return u.stats }

func (u *unionStore) Lookup(ctx context.Context, self, shard int, keys []Key, out [][]ID) (ReadCost, error) {
	var cost ReadCost
	per := make([][][]ID, len(u.parts))
	for i, g := range u.parts {
		per[i] = make([][]ID, len(keys))
		c, err := g.Lookup(ctx, self, shard, keys, per[i])
		if err != nil {
			return cost, err
		}
		cost.add(c)
	}
	lists := make([][]ID, len(u.parts))
	for k := range keys {
		n := 0
		for i := range u.parts {
			lists[i] = per[i][k]
			if len(lists[i]) > 0 {
				n++
			}
		}
		if n <= 1 {
			out[k] = nil
			for i := range u.parts {
				if len(lists[i]) > 0 {
					out[k] = lists[i]
				}
			}
			continue
		}
		out[k] = mergeUnion(lists)
	}
	return cost, nil
}

// mergePlannerStats adds up the graphs' statistics (an estimate of the
// merge's: triples in two graphs count twice).
func mergePlannerStats(parts []*datasetGraph) *planner.Stats {
	st := &planner.Stats{Shards: parts[0].Shards(), TypeID: graphstore.TypeID,
		Preds: map[ID]planner.PredStats{}, Classes: map[ID]uint64{}, ClassPreds: map[planner.ClassPred]planner.ClassPredStats{}}
	for _, g := range parts {
		s := g.PlannerStats()
		st.Triples += s.Triples
		st.Vertices = max(st.Vertices, s.Vertices)
		for p, x := range s.Preds {
			y := st.Preds[p]
			y.Triples += x.Triples
			y.Subjects += x.Subjects
			y.Objects += x.Objects
			st.Preds[p] = y
		}
		for c, n := range s.Classes {
			st.Classes[c] += n
		}
		for k, x := range s.ClassPreds {
			y := st.ClassPreds[k]
			y.Vertices += x.Vertices
			y.Edges += x.Edges
			st.ClassPreds[k] = y
		}
	}
	return st
}

// chanTransport carries the messages of an engine over a store that has
// no fabric of its own (an empty graph, a union of graphs): one queue per
// node, in process.
type chanTransport struct {
	qs []chan chanMsg
}

type chanMsg struct {
	from int
	msg  []byte
}

func newChanTransport(nodes int) *chanTransport {
	t := &chanTransport{qs: make([]chan chanMsg, nodes)}
	for i := range t.qs {
		t.qs[i] = make(chan chanMsg, 256)
	}
	return t
}

func (t *chanTransport) Send(ctx context.Context, from, to int, msg []byte) error {
	select {
	case t.qs[to] <- chanMsg{from, slices.Clone(msg)}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *chanTransport) Recv(ctx context.Context, node int) (int, []byte, error) {
	select {
	case m := <-t.qs[node]:
		return m.from, m.msg, nil
	case <-ctx.Done():
		return 0, nil, ctx.Err()
	}
}

// AppendNTriples writes a term from the dataset's dictionary.
func (g *datasetGraph) AppendNTriples(dst []byte, id ID) ([]byte, bool) {
	return g.dict.AppendNTriples(dst, id)
}
