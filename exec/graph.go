package exec

import (
	"context"
	"fmt"
	"slices"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

// GraphStore adapts a *graphstore.Store (every shard local to this
// process, one fabric node per shard) to the engine's Store and Transport:
// a node reads its own shard from its region and other shards through the
// store's fabric (batched one-sided READs); an engine sends its messages
// through the same fabric, on a port of its own (Port).
type GraphStore struct {
	s     *graphstore.Store
	stats *planner.Stats
}

var _ Store = (*GraphStore)(nil)

// NewGraphStore wraps s. Every shard must be local, on its own fabric node.
func NewGraphStore(s *graphstore.Store) (*GraphStore, error) {
	if len(s.LocalShards()) != s.NumShards() {
		return nil, fmt.Errorf("engine needs every shard in this process (%d of %d local)", len(s.LocalShards()), s.NumShards())
	}
	if s.Nodes() != s.NumShards() {
		return nil, fmt.Errorf("engine needs one fabric node per shard (%d nodes, %d shards)", s.Nodes(), s.NumShards())
	}
	return &GraphStore{s: s, stats: plannerStats(s)}, nil
}

// NewGraphEngine returns an engine over s, using s's fabric as transport.
func NewGraphEngine(s *graphstore.Store, cfg Config) (*Engine, error) {
	g, err := NewGraphStore(s)
	if err != nil {
		return nil, err
	}
	return New(g, g.Port(), cfg), nil
}

// Graph returns the wrapped store.
func (g *GraphStore) Graph() *graphstore.Store { return g.s }

// PlannerStats converts a store's statistics for the planner's cost
// model (also for stores of which a process holds only some shards; see
// package cluster).
func PlannerStats(s *graphstore.Store) *planner.Stats { return plannerStats(s) }

func plannerStats(s *graphstore.Store) *planner.Stats {
	gs := s.Stats()
	st := &planner.Stats{
		Shards: s.NumShards(), TypeID: graphstore.TypeID, Triples: gs.Triples,
		Vertices: max(gs.Subjects, gs.Objects),
		Preds:    make(map[ID]planner.PredStats, len(gs.Predicates)),
		Classes:  make(map[ID]uint64, len(gs.Classes)),
	}
	for _, p := range gs.Predicates {
		st.Preds[p.Pred] = planner.PredStats{Triples: p.Triples, Subjects: p.Subjects, Objects: p.Objects}
	}
	for _, c := range gs.Classes {
		st.Classes[c.Class] = c.Instances
	}
	st.ClassPreds = make(map[planner.ClassPred]planner.ClassPredStats, len(gs.ClassPredicates))
	for _, x := range gs.ClassPredicates {
		st.ClassPreds[planner.ClassPred{Class: x.Class, Pred: x.Pred, Dir: x.Dir}] = planner.ClassPredStats{Vertices: x.Vertices, Edges: x.Edges}
	}
	return st
}

func (g *GraphStore) Shards() int                      { return g.s.NumShards() }
func (g *GraphStore) Owner(v ID) int                   { return g.s.Owner(v) }
func (g *GraphStore) LookupTerm(t rdf.Term) (ID, bool) { return g.s.Dict().Lookup(t) }
func (g *GraphStore) Term(id ID) (rdf.Term, bool)      { return g.s.Dict().Term(id) }
func (g *GraphStore) AppendNTriples(dst []byte, id ID) ([]byte, bool) {
	return g.s.Dict().AppendNTriples(dst, id)
}
func (g *GraphStore) IsClass(id ID) bool           { return g.s.Dict().IsClass(id) }
func (g *GraphStore) PlannerStats() *planner.Stats { return g.stats }

// Lookup implements Store. Keys of another shard are read through the
// fabric (base and delta, batched: graphstore.ShardView.AppendEdgesBatch);
// the cost is what the fabric metered for this call.
func (g *GraphStore) Lookup(ctx context.Context, self, shard int, keys []Key, out [][]ID) (ReadCost, error) {
	_, c, err := g.appendLookup(ctx, self, shard, keys, out, nil)
	return c, err
}

// appendLookup is Lookup reading into buf's spare capacity (grown to the
// keys' size hint if short): out's lists are slices of the returned
// buffer, which the caller may reuse once it is done with them
// (fetch.release).
func (g *GraphStore) appendLookup(ctx context.Context, self, shard int, keys []Key, out [][]ID, buf []ID) ([]ID, ReadCost, error) {
	v := g.s.Shard(self)
	var m *rdmakv.Meter
	if shard != self {
		m = &rdmakv.Meter{}
		ctx = rdmakv.ContextWithMeter(ctx, m)
	}
	buf = slices.Grow(buf, g.sizeHint(keys))
	start := len(buf)
	buf, ends, err := v.AppendShardBatch(ctx, shard, keys, buf, make([]int, 0, len(keys)))
	if err != nil {
		if shard != self {
			return buf, ReadCost{}, fmt.Errorf("cannot read %d keys of shard %d: %w", len(keys), shard, err)
		}
		return buf, ReadCost{}, err
	}
	for i, e := range ends {
		out[i] = buf[start:e:e]
		start = e
	}
	if m == nil {
		return buf, ReadCost{}, nil
	}
	c := m.Snapshot()
	return buf, ReadCost{Reads: c.Reads, Bytes: c.ReadBytes, RoundTrips: c.RoundTrips}, nil
}

// sizeHint estimates the entries of the lists of keys from the first key's
// predicate (the keys of a batch mostly share it): the average fan-out
// rounded up, times the keys. Sizing the buffer once saves growing it by
// copies, which cost as much as the lookups (LUBM-40 L7: 138,000 entries
// in three batches).
func (g *GraphStore) sizeHint(keys []Key) int {
	n := len(keys)
	if n == 0 {
		return 0
	}
	k := keys[0]
	if k.Vertex() == graphstore.IndexVertex {
		return n
	}
	ps, ok := g.stats.Preds[k.Pred()]
	div := ps.Subjects
	if k.Dir() == graphstore.In {
		div = ps.Objects
	}
	if !ok || div == 0 {
		return n
	}
	deg := (ps.Triples + div - 1) / div
	return int(min(uint64(n)*deg, 1<<24))
}

// Port returns a new port on the store's fabric (mux.go): the transport
// of one engine over g, which New's engine detaches when it closes. Each
// engine needs its own: engines over one fabric must not take each
// other's messages off its rings.
func (g *GraphStore) Port() Transport {
	return attachPort(g.s.Fabric(), g.s.Nodes(), g.s.NodeOf)
}
