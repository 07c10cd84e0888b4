package exec

import (
	"runtime"
	"sync"

	"github.com/wukongd/wukongd/planner"
)

// splitRows is the fewest rows an in-place exploration splits over the
// processors (splitParts): below it one goroutine is cheaper than the
// hand-off (a light query's steps make tens of rows). A variable for the
// tests, which split LUBM-1's small explorations.
var splitRows = 4096

// splitHook, when set (tests), is told of each split.
var splitHook func(k, rows, parts int)

// splitParts says into how many parts the rows t of steps[k:] are split,
// each explored by a goroutine of its own (1: not split). An exploration
// of one coordinator in place uses one core however many rows it has;
// every step from k on is row by row (an expansion, a check or an
// intersection makes a row's rows from that row alone, in its order), so
// the parts' results, appended in order, are the rows and the order of
// the whole. It splits only when the rest runs in this node (no fork-join
// step: a fork sends its rows elsewhere), nothing bounds or reduces the
// rows (limit, reduce: stream.go's own order), no pushed FILTER runs (its
// compiled programs are not shared between goroutines), and the query is
// not analyzed (the per-step stats are not shared either). The engine's
// other running jobs count against the processors: a busy engine gains
// nothing from more goroutines.
func (r *task) splitParts(k int, t *Table) int {
	if t.N < splitRows || r.limit > 0 || r.reduce != nil || r.filters != nil || r.analyze {
		return 1
	}
	procs := runtime.GOMAXPROCS(0)
	idle := procs - int(r.eng.busy.Load()) + 1 // this task's worker is one of the busy
	parts := min(idle, procs, t.N/max(splitRows/2, 1))
	if parts < 2 {
		return 1
	}
	if r.eng.store.Shards() > 1 {
		for i := k; i < len(r.steps); i++ {
			if r.steps[i].Mode == planner.ModeForkJoin {
				return 1
			}
		}
	}
	return parts
}

// exploreSplit explores steps[k:] over parts row ranges of t at once (the
// first on this goroutine) and appends their results in order.
func (r *task) exploreSplit(k int, t *Table, parts int) (*Table, error) {
	if splitHook != nil {
		splitHook(k, t.N, parts)
	}
	outs := make([]*Table, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := parts - 1; p >= 0; p-- {
		lo, hi := p*t.N/parts, (p+1)*t.N/parts
		part := &Table{Vars: t.Vars, Cols: make([][]ID, len(t.Cols)), N: hi - lo}
		for c, col := range t.Cols {
			if col != nil {
				part.Cols[c] = col[lo:hi:hi] // shared, read only
			}
		}
		child := *r
		run := func() {
			defer func() {
				if v := recover(); v != nil {
					errs[p] = recovered(v)
				}
			}()
			outs[p], errs[p] = child.explore(k, part)
		}
		if p == 0 {
			run()
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.eng.busy.Add(1)
			defer r.eng.busy.Add(-1)
			run()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	res := &Table{Vars: outs[0].Vars, Cols: make([][]ID, len(t.Cols))}
	for _, o := range outs {
		if o.N > 0 {
			res.appendTable(o)
		}
	}
	return res, nil
}
