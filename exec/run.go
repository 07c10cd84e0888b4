package exec

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/wukongd/wukongd/exec/expr"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// The dispatch of the operator tree (planner/ops.go). Property paths and
// named graphs are evaluated by path.go and dataset.go:
//
//	func (e *Engine) evalPath(ctx context.Context, st Store, n *planner.PathScan, input *Table, mem *memAccount) (*Table, error)
//	func (e *Engine) evalInGraph(ctx context.Context, name sparql.TermOrVar, input *Table, mem *memAccount,
//		run func(ctx context.Context, g *Engine, seed *Table) (*Table, error)) (*Table, error)
//
// where input is the seed's rows (or one empty row) and the result keeps
// every input column; the query's local terms travel in ctx (withLocals).

// queryRun is one evaluation of a plan: what its operators share.
type queryRun struct {
	e      *Engine // the engine (graph) explorations run on
	ctx    context.Context
	opts   Options
	plan   *planner.Plan
	res    *Result
	locals *TermTable
	env    *expr.Env
	mem    *memAccount // nil: not accounted

	mu    sync.Mutex
	progs map[sparql.Expr]*expr.Program
	aggs  map[*sparql.Aggregate]*expr.AggregateProgram
	seeds map[int]*Table // slot → rows (evaluation is sequential)

	rowKeys atomic.Uint64
}

func newQueryRun(ctx context.Context, e *Engine, plan *planner.Plan, opts Options, res *Result) *queryRun {
	q := &queryRun{e: e, opts: opts, plan: plan, res: res, locals: res.locals,
		progs: map[sparql.Expr]*expr.Program{}, aggs: map[*sparql.Aggregate]*expr.AggregateProgram{},
		seeds: map[int]*Table{}}
	q.ctx = withLocals(ctx, q.locals)
	q.env = &expr.Env{Base: plan.Base, Exists: q.exists}
	return q
}

// on returns the run evaluating on graph engine g (GRAPH), sharing
// everything else.
func (q *queryRun) on(g *Engine, ctx context.Context) *queryRun {
	c := &queryRun{e: g, ctx: ctx, opts: q.opts, plan: q.plan, res: q.res, locals: q.locals, env: q.env, mem: q.mem,
		progs: q.progs, aggs: q.aggs, seeds: q.seeds}
	return c
}

// ---------------------------------------------------------------------------
// Terms and IDs

// term decodes an ID: a store ID or a query-local one.
func (q *queryRun) term(id ID) rdf.Term {
	if id == 0 {
		return rdf.Term{}
	}
	if id >= LocalIDBase {
		t, _ := q.locals.Term(id)
		return t
	}
	t, _ := q.e.store.Term(id)
	return t
}

// intern returns the ID of a term: the dictionary's when the store knows
// it (so that joins by ID stay exact), else a query-local one.
func (q *queryRun) intern(t rdf.Term) ID {
	if t.IsZero() {
		return 0
	}
	if id, ok := q.e.store.LookupTerm(t); ok && id != 0 {
		return id
	}
	return q.locals.Intern(t)
}

// ---------------------------------------------------------------------------
// Expressions

func (q *queryRun) program(e sparql.Expr) (*expr.Program, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if p := q.progs[e]; p != nil {
		return p, nil
	}
	p, err := expr.Compile(e, q.env)
	if err != nil {
		return nil, fmt.Errorf("cannot compile %s: %w", e, err)
	}
	q.progs[e] = p
	return p, nil
}

func (q *queryRun) aggregate(a *sparql.Aggregate) (*expr.AggregateProgram, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if p := q.aggs[a]; p != nil {
		return p, nil
	}
	p, err := expr.CompileAggregate(a, q.env)
	if err != nil {
		return nil, err
	}
	q.aggs[a] = p
	return p, nil
}

// rowBinding is row r of a table as an expression sees it. One is reused
// for every row of an operator's pass (programs do not keep it).
type rowBinding struct {
	q      *queryRun
	t      *Table
	cols   map[sparql.Var]int
	r      int
	key    uint64
	cache  map[ID]expr.Value
	exists map[sparql.Pattern][]bool // EXISTS results by row
}

func (q *queryRun) binding(t *Table) *rowBinding {
	cols := make(map[sparql.Var]int, len(t.Vars))
	for c, v := range t.Vars {
		if _, dup := cols[v]; !dup {
			cols[v] = c
		}
	}
	return &rowBinding{q: q, t: t, cols: cols, cache: map[ID]expr.Value{}}
}

func (b *rowBinding) id(v sparql.Var) ID {
	c, ok := b.cols[v]
	if !ok {
		return 0
	}
	return b.t.At(c, b.r)
}

// Lookup implements expr.Binding.
func (b *rowBinding) Lookup(v sparql.Var) (rdf.Term, bool) {
	id := b.id(v)
	if id == 0 {
		return rdf.Term{}, false
	}
	t := b.q.term(id)
	return t, !t.IsZero()
}

// LookupValue implements expr.ValueBinding (decoded values cached by ID).
func (b *rowBinding) LookupValue(v sparql.Var) (expr.Value, bool) {
	id := b.id(v)
	if id == 0 {
		return expr.Value{}, false
	}
	x := b.value(id)
	return x, x.IsBound()
}

// maxDecoded bounds a binding's decoding cache: past it the cache starts
// again (an operator over many distinct terms would otherwise keep a
// decoded copy of each, beyond the memory account).
const maxDecoded = 1 << 16

// value decodes the term of id, once per binding (while the cache holds).
func (b *rowBinding) value(id ID) expr.Value {
	if x, ok := b.cache[id]; ok {
		return x
	}
	x := expr.Decode(b.q.term(id))
	if len(b.cache) >= maxDecoded {
		clear(b.cache)
	}
	b.cache[id] = x
	return x
}

// RowKey implements expr.RowKeyer: the solution's identity for BNODE(str).
func (b *rowBinding) RowKey() uint64 {
	if b.key == 0 {
		return uint64(b.r) + 1<<40
	}
	return b.key
}

// SolutionKey implements expr.SolutionKeyer: the visible variables' IDs
// (one ID per term, so equal keys are equal solutions).
func (b *rowBinding) SolutionKey() string {
	key := make([]byte, 0, 8*len(b.t.Vars))
	for c, v := range b.t.Vars {
		if !v.Visible() {
			continue
		}
		key = appendID(key, b.t.At(c, b.r))
	}
	return string(key)
}

func appendID(b []byte, v ID) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

// exists is the query's expr.ExistsFunc: the answers were computed for the
// whole table before the expressions ran (prepareExists).
func (q *queryRun) exists(pattern sparql.Pattern, row expr.Binding) (bool, error) {
	b, ok := row.(*rowBinding)
	if !ok {
		return false, fmt.Errorf("BUG: EXISTS evaluated on a row of type %T", row)
	}
	res, ok := b.exists[pattern]
	if !ok || b.r >= len(res) {
		return false, fmt.Errorf("BUG: EXISTS %s was not prepared", pattern)
	}
	return res[b.r], nil
}

// prepareExists runs the pattern of every EXISTS of es, seeded with the
// rows of t (a bind join: one exploration for all rows, each row numbered
// in a hidden column), and records which rows have a solution.
func (q *queryRun) prepareExists(t *Table, b *rowBinding, es ...sparql.Expr) error {
	var err error
	for _, e := range es {
		if e == nil {
			continue
		}
		sparql.WalkExpr(e, func(e sparql.Expr) bool {
			x, ok := e.(*sparql.ExistsExpr)
			if !ok || err != nil {
				return err == nil
			}
			if b.exists == nil {
				b.exists = map[sparql.Pattern][]bool{}
			}
			if _, done := b.exists[x.Pattern]; done {
				return true
			}
			ep := q.plan.Exists[x.Pattern]
			if ep == nil {
				err = fmt.Errorf("BUG: no plan for EXISTS %s", x.Pattern)
				return false
			}
			if t.N == 0 {
				b.exists[x.Pattern] = nil
				return true
			}
			var res []bool
			res, err = q.matchedRows(t, ep.Slot, ep.RowVar, ep.Node)
			b.exists[x.Pattern] = res
			return err == nil
		})
	}
	return err
}

// matchedRows evaluates right seeded (in slot) with t's rows numbered in
// rowVar, and reports which rows of t have a solution there (EXISTS, and
// MINUS from numbered rows). When right is an exploration (or a bind join
// into one), each row's exploration stops at its first solution (a semi
// sink, stream.go); else right is evaluated in full.
func (q *queryRun) matchedRows(t *Table, slot int, rowVar sparql.Var, right planner.Node) ([]bool, error) {
	if err := reserve(q.ctx, q.mem, 9*int64(t.N)); err != nil { // the numbers' column, the rows found
		return nil, err
	}
	q.seeds[slot] = withRowNumbers(t, rowVar)
	defer delete(q.seeds, slot)
	n := right
	if j, ok := n.(*planner.Join); ok && j.Algo == planner.BindJoin {
		n = j.Right
	}
	if ex, ok := n.(*planner.Explore); ok {
		var seed *Table
		if ex.Seed != nil {
			s, err := q.eval(ex.Seed)
			if err != nil {
				return nil, err
			}
			seed = s
		}
		out := &sink{semi: newSemiSink(rowVar, t.N)}
		if _, err := q.explore(ex, seed, out); err != nil {
			return nil, err
		}
		return out.semi.found, nil
	}
	r, err := q.eval(right)
	if err != nil {
		return nil, err
	}
	c := r.Col(rowVar)
	if c < 0 {
		return nil, fmt.Errorf("BUG: the right side lost the left rows' numbers (?%s)", rowVar)
	}
	found := make([]bool, t.N)
	for i := 0; i < r.N; i++ {
		if x := r.At(c, i); x > 0 && int(x) <= t.N {
			found[x-1] = true
		}
	}
	return found, nil
}

// withRowNumbers returns t with a column v numbering its rows from 1.
func withRowNumbers(t *Table, v sparql.Var) *Table {
	col := make([]ID, t.N)
	for i := range col {
		col[i] = ID(i + 1)
	}
	return &Table{Vars: append(append([]sparql.Var(nil), t.Vars...), v), Cols: append(append([][]ID(nil), t.Cols...), col), N: t.N}
}

// ---------------------------------------------------------------------------
// Dispatch

// eval evaluates a plan node to its rows. What the node's inputs and
// state cost is released once it returns, and its result charged
// (budget.go).
func (q *queryRun) eval(n planner.Node) (*Table, error) {
	base := q.mem.tablesNow()
	t, err := q.evalNode(n)
	if err != nil {
		return nil, err
	}
	q.mem.settle(base, tableBytes(t))
	return t, q.ctx.Err()
}

func (q *queryRun) evalNode(n planner.Node) (*Table, error) {
	if err := q.ctx.Err(); err != nil {
		return nil, err
	}
	switch n := n.(type) {
	case *planner.Explore:
		var seed *Table
		if n.Seed != nil {
			s, err := q.eval(n.Seed)
			if err != nil {
				return nil, err
			}
			seed = s
		}
		return q.explore(n, seed, nil)
	case *planner.Join:
		if n.Algo == planner.BindJoin {
			return q.eval(n.Right)
		}
		l, err := q.eval(n.Left)
		if err != nil {
			return nil, err
		}
		r, err := q.eval(n.Right)
		if err != nil {
			return nil, err
		}
		return hashJoin(q.ctx, q.mem, l, r)
	case *planner.LeftJoin:
		return q.leftJoin(n)
	case *planner.Union:
		l, err := q.eval(n.Left)
		if err != nil {
			return nil, err
		}
		r, err := q.eval(n.Right)
		if err != nil {
			return nil, err
		}
		return unionTables(q.ctx, q.mem, l, r)
	case *planner.Minus:
		l, err := q.eval(n.Left)
		if err != nil {
			return nil, err
		}
		if l.N == 0 {
			return l, nil
		}
		if n.RowVar != "" {
			return q.antiJoin(l, n)
		}
		r, err := q.eval(n.Right)
		if err != nil {
			return nil, err
		}
		return minus(q.ctx, q.mem, l, r)
	case *planner.Filter:
		t, err := q.eval(n.Input)
		if err != nil {
			return nil, err
		}
		return q.filter(t, n.Exprs)
	case *planner.Extend:
		t, err := q.eval(n.Input)
		if err != nil {
			return nil, err
		}
		return q.extend(t, n.Binds)
	case *planner.Group:
		t, err := q.eval(n.Input)
		if err != nil {
			return nil, err
		}
		return q.group(t, n)
	case *planner.Values:
		return q.values(n), nil
	case *planner.SeedRef:
		t := q.seeds[n.Slot]
		if t == nil {
			return nil, fmt.Errorf("BUG: slot %d read before it is filled", n.Slot)
		}
		return t, nil
	case *planner.Let:
		v, err := q.eval(n.Value)
		if err != nil {
			return nil, err
		}
		q.seeds[n.Slot] = v
		return q.eval(n.Body)
	case *planner.PathScan:
		input := unitTable(0)
		if n.Seed != nil {
			s, err := q.eval(n.Seed)
			if err != nil {
				return nil, err
			}
			input = s
		}
		return q.e.evalPath(q.ctx, q.e.store, n, input, q.mem)
	case *planner.GraphScan:
		input := unitTable(0)
		if n.Seed != nil {
			s, err := q.eval(n.Seed)
			if err != nil {
				return nil, err
			}
			input = s
		}
		return q.e.evalInGraph(q.ctx, n.Graph.Name, input, q.mem, func(ctx context.Context, g *Engine, seed *Table) (*Table, error) {
			t, err := q.on(g, ctx).eval(n.Input)
			if err != nil {
				return nil, err
			}
			return hashJoin(ctx, q.mem, seed, t)
		})
	case *planner.Project:
		t, err := q.eval(n.Input)
		if err != nil {
			return nil, err
		}
		return project(t, n.Vars), nil
	case *planner.Distinct:
		t, err := q.eval(n.Input)
		if err != nil {
			return nil, err
		}
		return distinct(q.ctx, q.mem, t)
	case *planner.OrderBy:
		t, err := q.eval(n.Input)
		if err != nil {
			return nil, err
		}
		return q.orderBy(t, n.Keys)
	case *planner.Slice:
		want := int64(-1)
		if n.Limit >= 0 {
			want = max(n.Offset, 0) + n.Limit
		}
		t, err := q.evalUpTo(n.Input, want)
		if err != nil {
			return nil, err
		}
		return slice(q.ctx, q.mem, t, n.Offset, n.Limit)
	}
	return nil, fmt.Errorf("BUG: plan node %T", n)
}

// evalUpTo evaluates n when only its first want rows are needed (-1: all):
// explorations stop once they have them (stream.go), through the
// operators that keep or extend rows one for one (Project, Extend, a bind
// join's seeded side, Union, Slice); ORDER BY keeps a top-k. Other
// operators evaluate in full. It may return more than want rows.
func (q *queryRun) evalUpTo(n planner.Node, want int64) (*Table, error) {
	if want < 0 || want > maxEarlyStop {
		return q.eval(n)
	}
	if err := q.ctx.Err(); err != nil {
		return nil, err
	}
	if want == 0 {
		want = 1 // an empty answer still needs its columns and errors; one row is cheap
	}
	switch n := n.(type) {
	case *planner.Explore:
		var seed *Table
		if n.Seed != nil {
			s, err := q.eval(n.Seed)
			if err != nil {
				return nil, err
			}
			seed = s
		}
		return q.explore(n, seed, &sink{limit: int(want)})
	case *planner.Join:
		if n.Algo == planner.BindJoin {
			return q.evalUpTo(n.Right, want)
		}
	case *planner.Union:
		l, err := q.evalUpTo(n.Left, want)
		if err != nil {
			return nil, err
		}
		if int64(l.N) >= want {
			return l, nil
		}
		r, err := q.evalUpTo(n.Right, want-int64(l.N))
		if err != nil {
			return nil, err
		}
		return unionTables(q.ctx, q.mem, l, r)
	case *planner.Extend:
		t, err := q.evalUpTo(n.Input, want)
		if err != nil {
			return nil, err
		}
		if t, err = slice(q.ctx, q.mem, t, 0, want); err != nil {
			return nil, err
		}
		return q.extend(t, n.Binds)
	case *planner.Project:
		t, err := q.evalUpTo(n.Input, want)
		if err != nil {
			return nil, err
		}
		return project(t, n.Vars), nil
	case *planner.Slice:
		w := int64(-1)
		if n.Limit >= 0 {
			w = max(n.Offset, 0) + min(n.Limit, want)
		}
		t, err := q.evalUpTo(n.Input, w)
		if err != nil {
			return nil, err
		}
		return slice(q.ctx, q.mem, t, n.Offset, n.Limit)
	case *planner.OrderBy:
		return q.topK(n, int(want))
	case *planner.Distinct:
		return q.distinctUpTo(n, want)
	}
	return q.eval(n)
}

// distinctUpTo evaluates DISTINCT for its first want rows: over an
// exploration (projected or not) the exploration's sink keeps the rows new
// on the projected variables and stops once it has want of them.
func (q *queryRun) distinctUpTo(n *planner.Distinct, want int64) (*Table, error) {
	in := n.Input
	proj, _ := in.(*planner.Project)
	if proj != nil {
		in = proj.Input
	}
	ex, ok := in.(*planner.Explore)
	if !ok {
		return q.eval(n)
	}
	var seed *Table
	if ex.Seed != nil {
		s, err := q.eval(ex.Seed)
		if err != nil {
			return nil, err
		}
		seed = s
	}
	d := &distinctSink{} // no projection: every column
	if proj != nil {
		d.vars = proj.Vars
	}
	t, err := q.explore(ex, seed, &sink{limit: int(want), distinct: d})
	if err != nil {
		return nil, err
	}
	if proj != nil {
		t = project(t, proj.Vars)
	}
	return t, nil
}

// maxEarlyStop is the largest LIMIT (with its OFFSET) evaluated with an
// early stop and a top-k; beyond it the answer is a large share of the
// rows anyway, and a plain evaluation is cheaper.
const maxEarlyStop = 1 << 20

// explore runs an exploration (from the seed's rows when seed is not nil)
// and records its measurements; out, when set, bounds or takes the rows
// (runExploreFrom).
func (q *queryRun) explore(n *planner.Explore, seed *Table, out *sink) (*Table, error) {
	flt, err := q.stepFilters(n)
	if err != nil {
		return nil, err
	}
	t, stats, coord, err := q.e.runExploreFrom(q.ctx, n, seed, flt, q.opts, out, q.mem)
	if err != nil {
		return nil, err
	}
	if a := q.res.Analysis; a != nil {
		stats, byShard := foldStats(stats, len(q.e.nodes))
		q.mu.Lock()
		a.Explores = append(a.Explores, ExploreAnalysis{Coordinator: coord, Steps: stats, Shards: byShard})
		if a.byExplore == nil {
			a.byExplore = map[*planner.Explore]*ExploreAnalysis{}
		}
		if prev := a.byExplore[n]; prev != nil && len(prev.Steps) == len(stats) && len(prev.Shards) == len(byShard) {
			for i := range stats {
				prev.Steps[i].add(&stats[i])
				for j := range byShard[i] {
					prev.Shards[i][j].add(&byShard[i][j])
				}
			}
		} else {
			cp := &ExploreAnalysis{Coordinator: coord, Steps: append([]StepStats(nil), stats...)}
			for _, s := range byShard {
				cp.Shards = append(cp.Shards, append([]StepStats(nil), s...))
			}
			a.byExplore[n] = cp
		}
		q.mu.Unlock()
	}
	return t, nil
}

// recovered turns a panic of a worker into the query's error.
func recovered(r any) error {
	return fmt.Errorf("BUG: panic in the engine: %v\n%s", r, debug.Stack())
}

// constEval evaluates an expression without variables for the planner's
// foldConstants pass.
func constEval(e sparql.Expr) (rdf.Term, error) {
	p, err := expr.Compile(e, nil)
	if err != nil {
		return rdf.Term{}, err
	}
	return p.Eval(expr.MapBinding{})
}
