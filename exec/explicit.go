package exec

import (
	"context"
	"slices"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
)

// Explicit triples only (Options.Explicit).
//
// A dataset with reasoning (graphstore.Dataset.Inferred) stores the
// default graph's closure, explicit and inferred triples together, and
// beside it the inferred layer. A query for the explicit triples only
// runs on an explicitStore: every list is the closure's list less the
// layer's. For an edge list (v, p, d) that difference is exact (a triple
// is either explicit or inferred); so for a type index (0, c, In). An
// index list of a predicate (0, p, d) and the predicate lists (v|0, ALL,
// d) keep an entry the layer also has only if some explicit edge is left
// for it, which costs a lookup per such entry: queries with inferred
// triples (the default) pay nothing, explicit-only queries pay for the
// differences. The planner's statistics are the closure's (estimates).

// explicitStore is the default graph of a dataset with reasoning less its
// inferred layer.
type explicitStore struct {
	all, inf *datasetGraph
	dict     *graphstore.Dict
}

var _ Store = (*explicitStore)(nil)

func (x *explicitStore) Shards() int                      { return x.all.Shards() }
func (x *explicitStore) Owner(v ID) int                   { return x.all.Owner(v) }
func (x *explicitStore) LookupTerm(t rdf.Term) (ID, bool) { return x.dict.Lookup(t) }
func (x *explicitStore) Term(id ID) (rdf.Term, bool)      { return x.dict.Term(id) }
func (x *explicitStore) IsClass(id ID) bool               { return x.dict.IsClass(id) }
func (x *explicitStore) PlannerStats() *planner.Stats     { return x.all.PlannerStats() }

func (x *explicitStore) Lookup(ctx context.Context, self, shard int, keys []Key, out [][]ID) (ReadCost, error) {
	inf := make([][]ID, len(keys))
	cost, err := x.all.Lookup(ctx, self, shard, keys, out)
	if err != nil {
		return cost, err
	}
	c, err := x.inf.Lookup(ctx, self, shard, keys, inf)
	cost.add(c)
	if err != nil {
		return cost, err
	}
	for i, k := range keys {
		if len(inf[i]) == 0 || len(out[i]) == 0 {
			continue
		}
		v, p, d := k.Vertex(), k.Pred(), k.Dir()
		if v != graphstore.IndexVertex && p != graphstore.AllPredicates {
			out[i] = differenceSorted(out[i], inf[i])
			continue
		}
		if v == graphstore.IndexVertex && p != graphstore.AllPredicates && d == graphstore.In && x.dict.IsClass(p) && !x.dict.IsPredicate(p) {
			out[i] = differenceSorted(out[i], inf[i]) // a type index
			continue
		}
		// An index or predicate list: keep a shared entry if an explicit
		// edge is left for it.
		keep := make([]ID, 0, len(out[i]))
		var probe []Key
		var probeOf []ID
		j := 0
		for _, e := range out[i] {
			for j < len(inf[i]) && inf[i][j] < e {
				j++
			}
			if j >= len(inf[i]) || inf[i][j] != e {
				keep = append(keep, e)
				continue
			}
			probeOf = append(probeOf, e)
			switch {
			case v == graphstore.IndexVertex && p == graphstore.AllPredicates:
				probe = append(probe, graphstore.MakeKey(graphstore.IndexVertex, e, d)) // (0, e, d)
			case v == graphstore.IndexVertex:
				probe = append(probe, graphstore.MakeKey(e, p, d)) // (e, p, d)
			default:
				probe = append(probe, graphstore.MakeKey(v, e, d)) // (v, e, d)
			}
		}
		if len(probe) > 0 {
			lists := make([][]ID, len(probe))
			c, err := x.Lookup(ctx, self, shard, probe, lists)
			cost.add(c)
			if err != nil {
				return cost, err
			}
			for n, l := range lists {
				ok := len(l) > 0
				if !ok && v == graphstore.IndexVertex && p != graphstore.AllPredicates && d == graphstore.In && x.dict.IsClass(p) {
					// Punning: p is also a class; (e type p) may be explicit.
					types := make([][]ID, 1)
					c, err := x.Lookup(ctx, self, shard, []Key{graphstore.MakeKey(probeOf[n], graphstore.TypeID, graphstore.Out)}, types)
					cost.add(c)
					if err != nil {
						return cost, err
					}
					for _, t := range types[0] {
						ok = ok || t == p
					}
				}
				if ok {
					keep = append(keep, probeOf[n])
				}
			}
			slices.Sort(keep)
		}
		out[i] = keep
	}
	return cost, nil
}

// explicitEngine returns the engine over the explicit triples of the
// dataset's default graph (started on first use), or nil when the dataset
// has no reasoning.
func (d *datasetState) explicitEngine() (*Engine, error) {
	inf := d.ds.Inferred()
	if inf == nil {
		return nil, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	if d.explicit != nil {
		return d.explicit, nil
	}
	all, err := newDatasetGraph(d.ds, d.ds.Default())
	if err != nil {
		return nil, err
	}
	layer, err := newDatasetGraph(d.ds, inf)
	if err != nil {
		return nil, err
	}
	st := &explicitStore{all: all, inf: layer, dict: d.ds.Dict()}
	e := New(st, newChanTransport(st.Shards()), d.cfg)
	e.graphs.ds = d
	d.explicit = e
	return e, nil
}
