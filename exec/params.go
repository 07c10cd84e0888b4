package exec

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// ErrNotBindable is returned by RunParams when the template's plan cannot
// serve the query: a constant the dictionary does not know (the pattern
// then matches nothing, which is a plan of its own), a template the
// planner rejects or whose plan keeps a parameter where Bind does not
// reach. The caller then parses and plans the query's own text.
var ErrNotBindable = errors.New("the plan of the query's shape cannot be bound to its constants")

// RunParams runs the template q (sparql.Shapes) with params as its
// parameters (params[i] for sparql.ParamIndex i; zero terms for slots that
// are not parameters). The template is planned once per options, with
// planner.ParamID(i) for parameter i, and the plan bound to the
// parameters' IDs for every run (planner.Plan.Bind).
func (e *Engine) RunParams(ctx context.Context, q *sparql.Query, params []rdf.Term, opts Options) (*Result, error) {
	if e.closed.Load() {
		return nil, ErrClosed
	}
	if opts.Explicit && e.graphs.ds != nil && e.graphs.ds.root == e {
		x, err := e.graphs.ds.explicitEngine()
		if err != nil {
			return nil, err
		}
		if x != nil {
			return x.RunParams(ctx, q, params, opts)
		}
	}
	if q.Dataset != nil {
		return nil, ErrNotBindable // FROM / FROM NAMED: a dataset engine of its own
	}
	t0 := time.Now()
	plan, err := e.BindParams(q, params, opts)
	if err != nil {
		return nil, err
	}
	planTime := time.Since(t0)
	res, err := e.Execute(ctx, plan, opts)
	if res != nil && res.Analysis != nil {
		res.Analysis.PlanTime = planTime
	}
	return res, err
}

// BindParams returns the plan of template q bound to params (see
// RunParams): from the text's shape to a plan without the parser or the
// planner.
func (e *Engine) BindParams(q *sparql.Query, params []rdf.Term, opts Options) (*planner.Plan, error) {
	tp, err := e.templatePlan(q, opts)
	if err != nil {
		return nil, err
	}
	var buf [8]ID
	ids := buf[:0]
	for _, t := range params {
		var id ID
		if !t.IsZero() {
			var ok bool
			if id, ok = e.store.LookupTerm(t); !ok || id == 0 {
				return nil, ErrNotBindable
			}
		}
		ids = append(ids, id)
	}
	plan, _ := tp.Bind(ids)
	return plan, nil
}

// paramCatalog resolves a template's sentinels to parameter IDs and every
// other term through the store.
type paramCatalog struct{ store Store }

func (c paramCatalog) LookupTerm(t rdf.Term) (ID, bool) {
	if i, ok := sparql.ParamIndex(t); ok {
		return planner.ParamID(i), true
	}
	return c.store.LookupTerm(t)
}

// templatePlans keeps the plans of templates, keyed like planCache; a
// template whose plan cannot be bound is kept as such (nil plan).
type templatePlans struct{ planMap }

func (e *Engine) templatePlan(q *sparql.Query, opts Options) (*planner.Plan, error) {
	k := planKey{q, opts.Mode, opts.ForkThreshold}
	c := &e.tplans
	c.mu.Lock()
	cp, seen := c.m[k]
	c.mu.Unlock()
	if seen && cp.inherited {
		seen = c.settle(k, cp, paramCatalog{e.store}, e.stats())
	}
	if seen {
		if cp.p == nil {
			return nil, ErrNotBindable
		}
		return cp.p, nil
	}
	epoch := e.planEpoch.Load()
	cat := &recordingCatalog{cat: paramCatalog{e.store}}
	stats := e.stats()
	p, err := planner.Build(q, cat, stats, planner.Options{
		Mode: opts.Mode, ForkThreshold: opts.ForkThreshold, Cost: e.cfg.Cost, ConstEval: constEval,
	})
	if err != nil {
		// The query's own planning gives the error (with its constants).
		p = nil
	} else if !bindable(p) {
		p = nil
	}
	w := q.Weight()
	if w <= maxPlanWeight && e.planEpoch.Load() == epoch {
		c.mu.Lock()
		if c.m == nil || len(c.m) >= planCacheSize || c.bytes+w > planCacheBytes {
			c.m = map[planKey]*cachedPlan{} // simple bound: start over
			c.bytes = 0
		}
		if c.m[k] != nil {
			c.bytes -= w
		}
		c.m[k] = &cachedPlan{p: p, terms: cat.terms, stats: stats}
		c.bytes += w
		c.mu.Unlock()
	}
	if p == nil {
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotBindable, err)
		}
		return nil, ErrNotBindable
	}
	return p, nil
}

// bindable reports whether Bind reaches every parameter ID of p: bound to
// term IDs, the plan must hold no parameter ID anywhere (checked once per
// template, by reflection over the whole plan).
func bindable(p *planner.Plan) bool {
	ids := make([]ID, 64) // sparql.Shapes makes at most 64 slots
	for i := range ids {
		ids[i] = 1 // any term ID
	}
	b, n := p.Bind(ids)
	return n > 0 && !holdsParam(reflect.ValueOf(b), map[uintptr]bool{})
}

var (
	idType   = reflect.TypeOf(ID(0))
	termType = reflect.TypeOf(rdf.Term{})
)

// holdsParam reports whether v holds a parameter ID or a sentinel term
// (the keys of maps, the EXISTS patterns of Plan.Exists, are not looked
// at).
func holdsParam(v reflect.Value, seen map[uintptr]bool) bool {
	switch v.Kind() {
	case reflect.Uint64:
		if v.Type() == idType {
			_, ok := planner.IsParam(ID(v.Uint()))
			return ok
		}
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return false
		}
		seen[v.Pointer()] = true
		return holdsParam(v.Elem(), seen)
	case reflect.Interface:
		if !v.IsNil() {
			return holdsParam(v.Elem(), seen)
		}
	case reflect.Struct:
		if v.Type() == termType {
			_, ok := sparql.ParamIndex(rdf.Term{Kind: rdf.Kind(v.Field(0).Uint()), Value: v.Field(1).String(),
				Datatype: v.Field(2).String(), Lang: v.Field(3).String()})
			return ok
		}
		for i := 0; i < v.NumField(); i++ {
			if holdsParam(v.Field(i), seen) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return false
		}
		for i := 0; i < v.Len(); i++ {
			if holdsParam(v.Index(i), seen) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if holdsParam(it.Value(), seen) {
				return true
			}
		}
	}
	return false
}
