package exec

import (
	"slices"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
)

// A plan depends on the store it was made for in two ways only: the IDs
// its constants resolved to (planner.Catalog.LookupTerm, where an unknown
// constant makes the exploration Empty) and the statistics (cost
// estimates, which choose among plans that all give the same rows, and
// the shard count and rdf:type's ID, which shape the steps). The executor
// reads the statistics it enumerates (the classes of a variable class,
// punned predicates) from its own engine at run time, not from the plan.
// So a plan made on one version of a dataset gives the same rows on a
// later version when the shard count and rdf:type's ID are the same and
// every constant resolves as it did: same ID, or still unknown. With
// different estimates it is only maybe slower.

// cachedPlan is a kept plan (nil: a template that cannot be bound) with
// the lookups its planning made; inherited marks one taken over from an
// earlier engine (InheritPlans) whose lookups are not yet checked here.
type cachedPlan struct {
	p         *planner.Plan
	terms     []termLookup
	stats     *planner.Stats // the statistics it was planned with
	inherited bool
}

// termLookup is one answer of the catalog to the planner.
type termLookup struct {
	t  rdf.Term
	id ID
	ok bool
}

// recordingCatalog passes the planner's lookups to cat and records them
// (one planner.Build at a time: not safe for concurrent use).
type recordingCatalog struct {
	cat   planner.Catalog
	terms []termLookup
}

func (c *recordingCatalog) LookupTerm(t rdf.Term) (ID, bool) {
	id, ok := c.cat.LookupTerm(t)
	c.terms = append(c.terms, termLookup{t: t, id: id, ok: ok})
	return id, ok
}

// valid reports whether the inherited plan cp serves an engine with
// catalog cat and statistics now: every lookup of its planning has the
// same answer in cat (else its rows could differ), and the counts its
// estimates read have not drifted (else it is planned again with the new
// statistics, so plans follow the data as it grows: statsClose).
func (cp *cachedPlan) valid(cat planner.Catalog, now *planner.Stats) bool {
	for _, l := range cp.terms {
		if id, ok := cat.LookupTerm(l.t); ok != l.ok || id != l.id {
			return false
		}
	}
	return statsClose(cp.stats, now, cp.terms)
}

// statsClose reports whether the statistics now are within a quarter of
// then in the counts a plan's estimates read: the store's triples and
// vertices, the numbers of predicates and classes, and the triples of
// each predicate and the instances of each class among its constants.
// Counts are compared with 64 added to each, so a handful of writes to
// a small class does not count as drift.
func statsClose(then, now *planner.Stats, terms []termLookup) bool {
	if then == nil || now == nil {
		return false
	}
	near := func(a, b uint64) bool {
		x, y := float64(a)+64, float64(b)+64
		return x <= 1.25*y && y <= 1.25*x
	}
	if !near(then.Triples, now.Triples) || !near(then.Vertices, now.Vertices) ||
		!near(uint64(len(then.Preds)), uint64(len(now.Preds))) || !near(uint64(len(then.Classes)), uint64(len(now.Classes))) {
		return false
	}
	for _, l := range terms {
		if !l.ok {
			continue
		}
		if !near(then.Preds[l.id].Triples, now.Preds[l.id].Triples) || !near(then.Classes[l.id], now.Classes[l.id]) {
			return false
		}
	}
	return true
}

// settle validates the inherited plan cp kept for k against cat: it then
// counts as this engine's own (true), or is dropped (false).
func (c *planMap) settle(k planKey, cp *cachedPlan, cat planner.Catalog, now *planner.Stats) bool {
	ok := cp.valid(cat, now)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[k] == cp {
		if ok {
			c.m[k] = &cachedPlan{p: cp.p, terms: cp.terms, stats: cp.stats}
		} else {
			delete(c.m, k)
			c.bytes -= k.q.Weight()
		}
	}
	return ok
}

// InheritPlans takes over old's cached plans (of queries and of
// templates), for an engine over a later version of old's dataset (the
// service starts an engine per published version). Each is used only
// after its constants resolve here as they did there (cachedPlan.valid);
// none is taken when the plans' shape could differ: another shard count,
// rdf:type's ID, cost model or set of local shards. Call it before e runs
// any query.
func (e *Engine) InheritPlans(old *Engine) {
	if old == nil || old == e {
		return
	}
	ost, nst := old.stats(), e.stats()
	if ost == nil || nst == nil || ost.Shards != nst.Shards || ost.TypeID != nst.TypeID ||
		old.cfg.Cost != e.cfg.Cost || !slices.Equal(old.local, e.local) || old.store.Shards() != e.store.Shards() {
		return
	}
	inherit := func(m map[planKey]*cachedPlan) map[planKey]*cachedPlan {
		out := make(map[planKey]*cachedPlan, len(m))
		for k, cp := range m {
			out[k] = &cachedPlan{p: cp.p, terms: cp.terms, stats: cp.stats, inherited: true}
		}
		return out
	}
	old.plans.mu.Lock()
	pm, pb := inherit(old.plans.m), old.plans.bytes
	old.plans.mu.Unlock()
	old.tplans.mu.Lock()
	tm, tb := inherit(old.tplans.m), old.tplans.bytes
	old.tplans.mu.Unlock()
	e.plans.mu.Lock()
	if len(e.plans.m) == 0 {
		e.plans.m, e.plans.bytes = pm, pb
	}
	e.plans.mu.Unlock()
	e.tplans.mu.Lock()
	if len(e.tplans.m) == 0 {
		e.tplans.m, e.tplans.bytes = tm, tb
	}
	e.tplans.mu.Unlock()
}

// A class's bitmap (typeSet) depends on nothing but its type index, the
// lists (IndexVertex, c, In) of the shards. A write that adds or removes
// no instance of c leaves them as they were, so a version's engine can
// take over the bitmaps of its predecessor for every class the writes
// between them did not touch, and build (on first use) only the others:
// under a stream of small writes each version touches a few classes, and
// rebuilding every class's bitmap for each version cost the first query
// on it a read of every big class's instances.

// versionedStore is a store that can tell whether a list reads the same
// as on an earlier version's store (GraphStore, over graphstore.Store).
type versionedStore interface {
	listsSameAs(old Store, k Key) bool
}

func (g *GraphStore) listsSameAs(old Store, k Key) bool {
	o, ok := old.(interface{ Graph() *graphstore.Store })
	return ok && g.s.ListsSameAs(o.Graph(), k)
}

// InheritTypeSets takes over old's bitmaps of classes' instances for
// every class whose type index reads the same on e's store as on old's
// (graphstore.Store.ListsSameAs: no write between them touched it), for
// an engine over a later version of old's dataset. It returns the number
// of bitmaps taken over. As InheritPlans, nothing is taken when shard
// count, rdf:type's ID or the local shards differ; call it before e runs
// any query.
func (e *Engine) InheritTypeSets(old *Engine) int {
	if old == nil || old == e {
		return 0
	}
	vs, ok := e.store.(versionedStore)
	if !ok || old.store.Shards() != e.store.Shards() || !slices.Equal(old.local, e.local) {
		return 0
	}
	if ost, nst := old.stats(), e.stats(); ost == nil || nst == nil || ost.TypeID != nst.TypeID {
		return 0
	}
	same := map[ID]bool{}
	n := 0
	old.typeSets.Range(func(k, v any) bool {
		tk := k.(typeSetKey)
		ok, seen := same[tk.class]
		if !seen {
			ok = vs.listsSameAs(old.store, graphstore.MakeKey(graphstore.IndexVertex, tk.class, planner.In))
			same[tk.class] = ok
		}
		if ok {
			if _, loaded := e.typeSets.LoadOrStore(tk, v); !loaded {
				n++
			}
		}
		return true
	})
	return n
}
