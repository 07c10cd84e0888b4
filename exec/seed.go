package exec

import (
	"context"
	"fmt"

	"github.com/wukongd/wukongd/exec/expr"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/sparql"
)

// stepFilters are the FILTERs pushed into an exploration (pushFilters),
// compiled, by the step after which they run (-1: on the seed rows). They
// run on the node holding the rows: the coordinator and the local part of
// a fork; a forked child runs none, and its parent applies the filters of
// the steps the child ran to the rows it sends back.
type stepFilters struct {
	q     *queryRun
	vars  []sparql.Var
	after map[int][]*expr.Program
	max   int
}

// stepFilters compiles the filters of n (nil when it has none).
func (q *queryRun) stepFilters(n *planner.Explore) (*stepFilters, error) {
	if len(n.Filters) == 0 {
		return nil, nil
	}
	f := &stepFilters{q: q, vars: n.Vars, after: map[int][]*expr.Program{}, max: -1}
	for _, sf := range n.Filters {
		p, err := q.program(sf.Expr)
		if err != nil {
			return nil, err
		}
		f.after[sf.After] = append(f.after[sf.After], p)
		f.max = max(f.max, sf.After)
	}
	return f, nil
}

// apply keeps the rows of t that pass the filters of step k.
func (f *stepFilters) apply(k int, t *Table) *Table {
	if f == nil {
		return t
	}
	return f.run(t, f.after[k])
}

// applyFrom applies the filters of steps k and after (rows that ran those
// steps on another node, which applied none).
func (f *stepFilters) applyFrom(k int, t *Table) *Table {
	if f == nil {
		return t
	}
	var progs []*expr.Program
	for s := k; s <= f.max; s++ {
		progs = append(progs, f.after[s]...)
	}
	return f.run(t, progs)
}

func (f *stepFilters) run(t *Table, progs []*expr.Program) *Table {
	if len(progs) == 0 || t.N == 0 {
		return t
	}
	view := &Table{Vars: f.vars, Cols: t.Cols[:len(f.vars)], N: t.N}
	b := f.q.binding(view)
	var keep []int32
	for r := 0; r < t.N; r++ {
		b.r, b.key = r, f.q.rowKeys.Add(1)
		ok := true
		for _, p := range progs {
			if !p.EvalBool(b) {
				ok = false
				break
			}
		}
		if ok {
			keep = append(keep, int32(r))
		}
	}
	if len(keep) == t.N {
		return t
	}
	return t.gather(keep)
}

// seedTable lays out the rows an exploration starts from: one empty row,
// or the seed's rows with its columns of the exploration's variables in
// place and its other columns after them (carried along, full history).
// A seed column of a variable the exploration binds itself (not one of
// SeedVars) is carried under a hidden name and checked afterwards
// (checkCarried).
func seedTable(ex *planner.Explore, seed *Table) (t *Table, clashes [][2]int) {
	vars := append([]sparql.Var(nil), ex.Vars...)
	if seed == nil {
		t = unitTable(len(vars))
		t.Vars = vars
		return t, nil
	}
	isSeedVar := map[sparql.Var]bool{}
	for _, v := range ex.SeedVars {
		isSeedVar[v] = true
	}
	t = &Table{Cols: make([][]ID, len(vars)), N: seed.N}
	for c, v := range seed.Vars {
		col := seed.Cols[c]
		if col != nil {
			col = col[:seed.N]
		}
		if i := indexOf(ex.Vars, v); i >= 0 {
			if isSeedVar[v] {
				t.Cols[i] = col
				continue
			}
			clashes = append(clashes, [2]int{i, len(vars)})
			vars = append(vars, sparql.Var(fmt.Sprintf(".carried%d", len(vars))))
			t.Cols = append(t.Cols, col)
			continue
		}
		vars = append(vars, v)
		t.Cols = append(t.Cols, col)
	}
	t.Vars = vars
	return t, clashes
}

func indexOf(vs []sparql.Var, v sparql.Var) int {
	for i, x := range vs {
		if x == v {
			return i
		}
	}
	return -1
}

// checkCarried keeps the rows whose carried seed values agree with what
// the exploration bound, and drops the carried columns.
func checkCarried(t *Table, clashes [][2]int) *Table {
	if len(clashes) == 0 {
		return t
	}
	var keep []int32
	for r := 0; r < t.N; r++ {
		ok := true
		for _, cl := range clashes {
			if s := t.At(cl[1], r); s != 0 && s != t.At(cl[0], r) {
				ok = false
				break
			}
		}
		if ok {
			keep = append(keep, int32(r))
		}
	}
	out := t.gather(keep)
	drop := map[int]bool{}
	for _, cl := range clashes {
		drop[cl[1]] = true
	}
	res := &Table{N: out.N}
	for c := range out.Cols {
		if !drop[c] {
			res.Vars = append(res.Vars, out.Vars[c])
			res.Cols = append(res.Cols, out.Cols[c])
		}
	}
	return res
}

// runExploreFrom runs one exploration on its coordinator node, from the
// seed's rows (nil: one empty row), with the filters pushed into it. A
// panic on the worker becomes the query's error.
func (e *Engine) runExploreFrom(ctx context.Context, ex *planner.Explore, seed *Table, flt *stepFilters, opts Options) (*Table, []StepStats, int, error) {
	start, clashes := seedTable(ex, seed)
	if ex.Empty {
		return &Table{Vars: start.Vars, Cols: make([][]ID, len(start.Vars))}, nil, 0, nil
	}
	start = flt.apply(-1, start)
	if len(ex.Steps) == 0 || start.N == 0 {
		return checkCarried(start, clashes), nil, 0, nil
	}
	coord := e.local[e.rr.Add(1)%uint64(len(e.local))]
	if ex.StartConst != 0 {
		if o := e.store.Owner(ex.StartConst); e.nodes[o] != nil {
			coord = o
		}
	}
	t := &task{eng: e, node: coord, ctx: ctx, steps: ex.Steps, ncols: len(start.Vars), analyze: opts.Analyze, filters: flt}
	if opts.Analyze {
		t.stats = make([]StepStats, len(ex.Steps))
	}
	type result struct {
		t   *Table
		err error
	}
	done := make(chan result, 1)
	err := e.submit(ctx, coord, func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{nil, recovered(r)}
			}
		}()
		res, err := t.explore(0, start)
		done <- result{res, err}
	})
	if err != nil {
		return nil, nil, coord, err
	}
	select {
	case res := <-done:
		if res.err != nil {
			return nil, nil, coord, res.err
		}
		res.t.Vars = start.Vars
		return checkCarried(res.t, clashes), t.stats, coord, nil
	case <-e.ctx.Done():
		return nil, nil, coord, ErrClosed
	}
}
