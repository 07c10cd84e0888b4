package exec

import (
	"slices"

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

// valid reports whether every lookup of cp's planning has the same answer
// in cat.
func (cp *cachedPlan) valid(cat planner.Catalog) bool {
	for _, l := range cp.terms {
		if id, ok := cat.LookupTerm(l.t); ok != l.ok || id != l.id {
			return false
		}
	}
	return true
}

// check validates the inherited template plan cp kept for k against cat:
// it then counts as this engine's own (true), or is dropped (false).
func (c *templatePlans) check(k planKey, cp *cachedPlan, cat planner.Catalog) bool {
	ok := cp.valid(cat)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[k] == cp {
		if ok {
			c.m[k] = &cachedPlan{p: cp.p, terms: cp.terms}
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
			out[k] = &cachedPlan{p: cp.p, terms: cp.terms, inherited: true}
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
