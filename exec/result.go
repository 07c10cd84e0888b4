package exec

import (
	"context"
	"time"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// Result is the answer of a query: the result variables and the rows as ID
// columns (Rows.Cols[i] binds Vars[i]), decoded to terms on demand.
type Result struct {
	// Form is the query form: SELECT answers with Vars and Rows, ASK with
	// Boolean, CONSTRUCT and DESCRIBE with Triples (Rows then holds the
	// solutions of the pattern, with no columns).
	Form     sparql.Form
	Vars     []sparql.Var
	Rows     *Table
	Boolean  bool
	Triples  [][3]ID // a set: no triple twice; decode with Triple or Term
	Plan     *planner.Plan
	Analysis *Analysis // nil unless Options.Analyze
	// PeakMemory is the most memory the query accounted at once (bytes;
	// budget.go), on the coordinator (forked sub-queries account apart).
	PeakMemory int64
	store      Store
	locals     *TermTable
	mem        *memAccount // held for the caller (Options.HoldMemory)
}

// NumTriples returns the number of triples of a CONSTRUCT or DESCRIBE.
func (r *Result) NumTriples() int { return len(r.Triples) }

// Triple decodes triple i of a CONSTRUCT or DESCRIBE.
func (r *Result) Triple(i int) rdf.Triple {
	t := r.Triples[i]
	return rdf.Triple{S: r.Term(t[0]), P: r.Term(t[1]), O: r.Term(t[2])}
}

// Len returns the number of rows.
func (r *Result) Len() int { return r.Rows.N }

// Term decodes an ID of the result (0 is the zero Term: unbound).
func (r *Result) Term(id ID) rdf.Term {
	if id == 0 {
		return rdf.Term{}
	}
	if id >= LocalIDBase && r.locals != nil {
		t, _ := r.locals.Term(id)
		return t
	}
	t, _ := r.store.Term(id)
	return t
}

// AppendNTriples appends the N-Triples form of id to dst (nothing for 0,
// unbound), without building an rdf.Term when the store can write it
// directly.
func (r *Result) AppendNTriples(dst []byte, id ID) []byte {
	if id == 0 {
		return dst
	}
	if id < LocalIDBase {
		if a, ok := r.store.(ntAppender); ok {
			if out, ok := a.AppendNTriples(dst, id); ok {
				return out
			}
		}
	}
	return rdf.AppendNTriples(dst, r.Term(id))
}

// ntAppender is implemented by stores that write a term's N-Triples form
// straight from the dictionary.
type ntAppender interface {
	AppendNTriples(dst []byte, id ID) ([]byte, bool)
}

// Row decodes row i into dst (grown as needed) and returns it.
func (r *Result) Row(i int, dst []rdf.Term) []rdf.Term {
	dst = dst[:0]
	for c := range r.Rows.Cols {
		dst = append(dst, r.Term(r.Rows.At(c, i)))
	}
	return dst
}

// VarNames returns the result variables as strings (without '?').
func (r *Result) VarNames() []string {
	out := make([]string, len(r.Vars))
	for i, v := range r.Vars {
		out[i] = string(v)
	}
	return out
}

// Analysis is what EXPLAIN ANALYZE measured.
type Analysis struct {
	PlanTime  time.Duration
	ExecTime  time.Duration
	Explores  []ExploreAnalysis // in the order the explorations ran
	TotalRows int
	// byExplore sums the runs of each exploration (one that runs more
	// than once: DESCRIBE rounds, an EXISTS in a nested filter).
	byExplore map[*planner.Explore]*ExploreAnalysis
}

// Of returns the measurements of exploration ex (nil if it did not run).
func (a *Analysis) Of(ex *planner.Explore) *ExploreAnalysis {
	if a == nil {
		return nil
	}
	return a.byExplore[ex]
}

// ExploreAnalysis is one exploration's measurements.
type ExploreAnalysis struct {
	Coordinator int
	Steps       []StepStats
	// Shards are each step's measurements on each shard (the node that
	// ran the step there): Shards[k][sh]; Steps[k] is their sum.
	Shards [][]StepStats
}

// Execute runs a plan made by Plan (or planner.Build over this engine's
// store). A panic while running it is returned as an error.
func (e *Engine) Execute(ctx context.Context, plan *planner.Plan, opts Options) (res *Result, err error) {
	t0 := time.Now()
	res = &Result{Form: plan.Form, Vars: plan.Vars, Plan: plan, store: e.store, locals: &TermTable{}}
	if res.Form == 0 {
		res.Form = sparql.FormSelect
	}
	if opts.Analyze {
		res.Analysis = &Analysis{}
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, recovered(r)
		}
	}()
	// A budget or value-size overrun cancels the query with its cause.
	res0 := res
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	mem := e.newMemAccount(e.cfg.MaxQueryMemory, abort, opts.Analyze)
	held := false
	defer func() {
		if !held {
			mem.close()
		}
	}()
	res.locals.account(mem)
	q := newQueryRun(ctx, e, plan, opts, res)
	q.mem = mem
	q.env.MaxValue, q.env.Abort, q.env.Ctx = e.cfg.MaxValueBytes, abort, ctx
	defer func() {
		if err != nil {
			if c := limitCause(ctx); c != nil {
				res, err = nil, c
			}
		}
		if res != nil && mem != nil {
			res.PeakMemory = mem.peak.Load()
		}
		res0.locals.account(nil) // accounted no more once the query is done
	}()
	t := unitTable(0)
	if plan.Root != nil {
		if t, err = q.eval(plan.Root); err != nil {
			return nil, err
		}
	}
	switch plan.Form {
	case sparql.FormAsk:
		res.Boolean = t.N > 0
	case sparql.FormConstruct:
		if res.Triples, err = q.construct(t, plan.Template); err != nil {
			return nil, err
		}
	case sparql.FormDescribe:
		var root *Table
		if plan.Root != nil {
			root = t
		}
		if res.Triples, err = q.describe(root, plan.Describe); err != nil {
			return nil, err
		}
	}
	out := project(t, plan.Vars)
	res.Rows = out
	if res.Analysis != nil {
		res.Analysis.ExecTime = time.Since(t0)
		res.Analysis.TotalRows = out.N
	}
	if opts.HoldMemory && mem != nil {
		// The answer stays charged (what else the query used is
		// garbage now) until the caller releases it.
		mem.settle(0, resultBytes(res))
		res.mem, held = mem, true
	}
	return res, nil
}

// project keeps vars, in order; a variable t does not bind is unbound.
func project(t *Table, vars []sparql.Var) *Table {
	out := &Table{Vars: vars, Cols: make([][]ID, len(vars)), N: t.N}
	for i, v := range vars {
		if c := t.Col(v); c >= 0 {
			out.Cols[i] = t.Cols[c]
		}
	}
	return out
}

// distinct keeps the first of equal rows (IDs are terms: equal IDs are
// the same term).
func distinct(ctx context.Context, mem *memAccount, t *Table) (*Table, error) {
	seen := make(map[string]struct{}, min(t.N, maxSizeHint))
	var src []int32
	key := make([]byte, 0, 8*len(t.Cols))
	g := growth{m: mem}
	defer g.done()
	sc := stopCheck{ctx: ctx, grow: func() { g.to(int64(len(src)) * int64(8*len(t.Cols)+52)) }}
	for r := 0; r < t.N; r++ {
		if err := sc.add(1); err != nil {
			return nil, err
		}
		key = key[:0]
		for c := range t.Cols {
			v := t.At(c, r)
			key = append(key, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
		}
		if _, ok := seen[string(key)]; ok {
			continue
		}
		seen[string(key)] = struct{}{}
		src = append(src, int32(r))
	}
	if len(src) == t.N {
		return t, nil
	}
	return gatherCharged(ctx, mem, t, src)
}

// slice skips offset rows and keeps limit (-1: all); its copy (of at
// most t's rows) is charged to mem before it is made.
func slice(ctx context.Context, mem *memAccount, t *Table, offset, limit int64) (*Table, error) {
	lo := min(max(offset, 0), int64(t.N))
	hi := int64(t.N)
	if limit >= 0 && lo+limit < hi {
		hi = lo + limit
	}
	if lo == 0 && hi == int64(t.N) {
		return t, nil
	}
	if err := reserve(ctx, mem, 4*(hi-lo)); err != nil {
		return nil, err
	}
	src := make([]int32, 0, hi-lo)
	for r := lo; r < hi; r++ {
		src = append(src, int32(r))
	}
	return gatherCharged(ctx, mem, t, src)
}
