package exec

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/wukongd/wukongd/exec/expr"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/sparql"
)

// stepFilters are the FILTERs pushed into an exploration (pushFilters),
// compiled, by the step after which they run (-1: on the seed rows). They
// run on the node holding the rows, right after the step: a forked child
// gets them with the sub-query (as SPARQL text, wire) and compiles them
// itself, so rows are pruned before they are expanded or shipped back.
type stepFilters struct {
	q     *queryRun
	vars  []sparql.Var
	after map[int][]*expr.Program
	wf    *wireFilters
}

// stepFilters compiles the filters of n (nil when it has none).
func (q *queryRun) stepFilters(n *planner.Explore) (*stepFilters, error) {
	if len(n.Filters) == 0 {
		return nil, nil
	}
	f := &stepFilters{q: q, vars: n.Vars, after: map[int][]*expr.Program{}}
	for _, sf := range n.Filters {
		p, err := q.program(sf.Expr)
		if err != nil {
			return nil, err
		}
		f.after[sf.After] = append(f.after[sf.After], p)
	}
	f.wf = &wireFilters{now: q.env.Now, base: q.env.Base}
	for _, sf := range n.Filters {
		f.wf.after = append(f.wf.after, sf.After)
		f.wf.exprs = append(f.wf.exprs, sf.Expr.String())
	}
	for _, v := range n.Vars {
		f.wf.vars = append(f.wf.vars, string(v))
	}
	return f, nil
}

// setVars names the columns of the rows the filters run on: the
// exploration's variables, then the seed's carried columns.
func (f *stepFilters) setVars(vars []sparql.Var) {
	if f == nil {
		return
	}
	f.vars = vars
	f.wf.vars = f.wf.vars[:0]
	for _, v := range vars {
		f.wf.vars = append(f.wf.vars, string(v))
	}
}

// wire returns the filters as a forked child receives them (nil: none).
func (f *stepFilters) wire() *wireFilters {
	if f == nil {
		return nil
	}
	return f.wf
}

// remoteFilters compiles the filters a sub-query brought (nil: none). The
// rows' values decode through the store; a query-local ID is not known
// here and reads as unbound — such a value can only sit in a seeded
// variable, whose row a later step drops anyway (no edge has it).
func (e *Engine) remoteFilters(w *wireFilters) (*stepFilters, error) {
	if w == nil {
		return nil, nil
	}
	q := &queryRun{e: e, ctx: e.ctx, locals: &TermTable{}, env: &expr.Env{Now: w.now, Base: w.base},
		progs: map[sparql.Expr]*expr.Program{}, aggs: map[*sparql.Aggregate]*expr.AggregateProgram{},
		seeds: map[int]*Table{}}
	f := &stepFilters{q: q, after: map[int][]*expr.Program{}, wf: w}
	for _, v := range w.vars {
		f.vars = append(f.vars, sparql.Var(v))
	}
	for i, text := range w.exprs {
		x, err := parseFilterExpr(text)
		if err != nil {
			return nil, err
		}
		p, err := q.program(x)
		if err != nil {
			return nil, err
		}
		f.after[w.after[i]] = append(f.after[w.after[i]], p)
	}
	return f, nil
}

// filterExprs caches parsed filter expressions by text (they are
// immutable): a forked exploration brings the same few every time.
var filterExprs struct {
	sync.Mutex
	m map[string]sparql.Expr
}

// parseFilterExpr parses the SPARQL text of a FILTER expression.
func parseFilterExpr(text string) (sparql.Expr, error) {
	filterExprs.Lock()
	x, ok := filterExprs.m[text]
	filterExprs.Unlock()
	if ok {
		return x, nil
	}
	q, err := sparql.ParseQuery("SELECT * WHERE { FILTER(" + text + ") }")
	if err != nil {
		return nil, fmt.Errorf("cannot parse a pushed filter %q: %w", text, err)
	}
	sparql.Walk(q.Pattern, func(p sparql.Pattern) bool {
		if f, ok := p.(*sparql.Filter); ok && x == nil && len(f.Exprs) == 1 {
			x = f.Exprs[0]
		}
		return x == nil
	})
	if x == nil {
		return nil, fmt.Errorf("BUG: a pushed filter %q parsed to no expression", text)
	}
	filterExprs.Lock()
	if filterExprs.m == nil || len(filterExprs.m) >= 4096 {
		filterExprs.m = map[string]sparql.Expr{}
	}
	filterExprs.m[text] = x
	filterExprs.Unlock()
	return x, nil
}

// apply keeps the rows of t that pass the filters of step k.
func (f *stepFilters) apply(k int, t *Table) *Table {
	if f == nil {
		return t
	}
	return f.run(t, f.after[k])
}

func (f *stepFilters) run(t *Table, progs []*expr.Program) *Table {
	if len(progs) == 0 || t.N == 0 {
		return t
	}
	view := &Table{Vars: f.vars, Cols: t.Cols[:min(len(f.vars), len(t.Cols))], N: t.N}
	b := f.q.binding(view)
	keep, _ := f.q.passingRows(b, t.N, progs, stopCheck{}, nil) // no context: never stops
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
		if i := slices.Index(ex.Vars, v); i >= 0 {
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
// seed's rows (nil: one empty row), with the filters pushed into it. With
// out set, the rows go to out: out.limit bounds the rows made (early
// stop), and out.each, when set, takes every batch on the caller's
// goroutine while the exploration goes on (the returned table is then
// empty). A panic on the worker becomes the query's error. It returns
// once the worker has stopped: when ctx ends, the worker stops at its next
// look at the context (exec/cancel.go), or never starts.
func (e *Engine) runExploreFrom(ctx context.Context, ex *planner.Explore, seed *Table, flt *stepFilters, opts Options, out *sink, mem *memAccount) (*Table, []StepStats, int, error) {
	start, clashes := seedTable(ex, seed)
	flt.setVars(start.Vars)
	if ex.Empty {
		return &Table{Vars: start.Vars, Cols: make([][]ID, len(start.Vars))}, nil, 0, nil
	}
	start = flt.apply(-1, start)
	// A semi or distinct sink takes the rows on the worker: it checks the
	// carried columns itself (its result keeps them, for checkCarried).
	var direct *sink
	if out != nil && (out.semi != nil || out.distinct != nil) {
		direct = out
		out.clashes = clashes
		if m := out.semi; m != nil {
			if m.col = slices.Index(start.Vars, m.v); m.col < 0 {
				return nil, nil, 0, fmt.Errorf("BUG: the exploration lost the rows' numbers (?%s)", m.v)
			}
		}
		if d := out.distinct; d != nil {
			d.cols = d.cols[:0]
			for _, v := range d.vars {
				if c := slices.Index(start.Vars, v); c >= 0 {
					d.cols = append(d.cols, c)
				}
			}
			if d.vars == nil { // every column but the carried copies
				carried := map[int]bool{}
				for _, cl := range clashes {
					carried[cl[1]] = true
				}
				for c := range start.Vars {
					if !carried[c] {
						d.cols = append(d.cols, c)
					}
				}
			}
			if d.seen == nil {
				d.seen = map[string]struct{}{}
			}
		}
	}
	if direct != nil && (len(ex.Steps) == 0 || start.N == 0) {
		if _, err := direct.put(start); err != nil {
			return nil, nil, 0, err
		}
		res := direct.result(len(start.Vars))
		res.Vars = start.Vars
		return checkCarried(res, clashes), nil, 0, nil
	}
	if len(ex.Steps) == 0 || start.N == 0 {
		t := checkCarried(start, clashes)
		if out != nil && out.each != nil {
			if err := out.each(t); err != nil {
				return nil, nil, 0, err
			}
			return &Table{Vars: t.Vars, Cols: make([][]ID, len(t.Vars))}, nil, 0, nil
		}
		return t, nil, 0, nil
	}
	coord := e.local[e.rr.Add(1)%uint64(len(e.local))]
	if ex.StartConst != 0 {
		if o := e.store.Owner(ex.StartConst); e.nodes[o] != nil {
			coord = o
		}
	}
	t := &task{eng: e, node: coord, ctx: ctx, steps: ex.Steps, ncols: len(start.Vars), analyze: opts.Analyze, filters: flt, mem: mem}
	if opts.Analyze {
		t.stats = e.newStepStats(len(ex.Steps))
	}
	// A streaming consumer runs on this goroutine: the worker hands it
	// each batch (with carried columns checked) and waits for its answer.
	type batch struct {
		t   *Table
		ack chan error
	}
	var batches chan batch
	var wout *sink
	if out != nil && direct == nil {
		t.limit = out.limit
		if out.each != nil {
			batches = make(chan batch)
			wout = &sink{each: func(b *Table) error {
				b.Vars = start.Vars
				ack := make(chan error, 1)
				select {
				case batches <- batch{checkCarried(b, clashes), ack}:
				case <-ctx.Done():
					return ctx.Err()
				}
				return <-ack
			}}
			if tk := out.topk; tk != nil {
				// The forks' parts keep their k least rows (by the
				// exploration's columns of the keys' variables).
				spec := &topKSpec{k: tk.k}
				for _, v := range tk.keys {
					c := slices.Index(start.Vars, v.Var)
					if c < 0 {
						spec = nil
						break
					}
					spec.cols = append(spec.cols, c)
					spec.desc = append(spec.desc, v.Desc)
				}
				wout.topk, wout.clashes = spec, clashes
			}
		}
	}
	if wout == nil {
		// Run on this goroutine: the hand-off to a worker of coord and
		// back cost a light query two goroutine switches (a wake of the
		// other processor on 2 cores) and, under load, a wait in the
		// worker's run queue (the slowest 1 % of L4-L6 reads spent about
		// a third of their time in that select: writers-trace.sh). The
		// worker's loop waited for a running exploration to end after
		// ctx did, so the caller returns no later than before; it is
		// counted busy as a worker's job is (split.go).
		if err := ctx.Err(); err != nil {
			return nil, nil, coord, err
		}
		if e.ctx.Err() != nil {
			return nil, nil, coord, ErrClosed
		}
		var res *Table
		var err error
		e.run(func() {
			defer func() {
				if r := recover(); r != nil {
					res, err = nil, recovered(r)
				}
			}()
			if direct != nil {
				_, err = t.stream(0, start, direct)
				res = direct.result(len(start.Vars))
				return
			}
			res, err = t.explore(0, start)
		})
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, nil, coord, cerr
			}
			return nil, nil, coord, err
		}
		res.Vars = start.Vars
		return checkCarried(res, clashes), t.stats, coord, nil
	}
	type result struct {
		t   *Table
		err error
	}
	done := make(chan result, 1)
	var state atomic.Int32 // 0 queued, 1 running, 2 abandoned before it ran
	err := e.submit(ctx, coord, func() {
		if !state.CompareAndSwap(0, 1) {
			return
		}
		defer func() {
			if r := recover(); r != nil {
				done <- result{nil, recovered(r)}
			}
		}()
		if direct != nil {
			_, err := t.stream(0, start, direct)
			done <- result{direct.result(len(start.Vars)), err}
			return
		}
		if wout != nil {
			_, err := t.stream(0, start, wout)
			done <- result{&Table{Cols: make([][]ID, len(start.Vars))}, err}
			return
		}
		res, err := t.explore(0, start)
		done <- result{res, err}
	})
	if err != nil {
		return nil, nil, coord, err
	}
	ctxDone := ctx.Done()
	for {
		select {
		case res := <-done:
			if res.err != nil {
				if err := ctx.Err(); err != nil {
					return nil, nil, coord, err
				}
				return nil, nil, coord, res.err
			}
			res.t.Vars = start.Vars
			return checkCarried(res.t, clashes), t.stats, coord, nil
		case b := <-batches:
			b.ack <- out.each(b.t)
		case <-ctxDone:
			if state.CompareAndSwap(0, 2) {
				return nil, nil, coord, ctx.Err() // it never ran
			}
			// Running: it stops at its next look at the context; wait
			// for that, so that the query's work has ended when Run
			// returns.
			ctxDone = nil
		case <-e.ctx.Done():
			return nil, nil, coord, ErrClosed
		}
	}
}
