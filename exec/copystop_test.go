package exec

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/sparql"
)

// lookCounter is a context that counts the looks at it (Err) and is done
// from look doneAt on (0: never): a deadline that falls at a chosen point
// of the work, whatever the machine's speed.
type lookCounter struct {
	context.Context
	looks  atomic.Int64
	doneAt int64
}

func (c *lookCounter) Err() error {
	if n := c.looks.Add(1); c.doneAt > 0 && n >= c.doneAt {
		return context.DeadlineExceeded
	}
	return nil
}

// TestCrossProductChargedUpFront: issue 13's GROUP BY (and ORDER BY,
// DISTINCT) cross product probe answered more than a second past its
// deadline on a loaded machine: the cross product grew its rows by append,
// and each growth copied every row made so far (hundreds of MB under a
// 768 MiB budget) between two looks at the context. A cross product has a
// known size: under a budget it is now charged before any row is made, so
// one past the budget fails at once — having allocated next to nothing,
// where it used to fill its preallocated 48 MB and more first.
func TestCrossProductChargedUpFront(t *testing.T) {
	const budget = 16 << 20
	for _, shards := range []int{1, 4} {
		e := newBudgetEngine(t, shards, Config{MaxQueryMemory: budget})
		for _, m := range modes {
			for _, q := range []string{
				`SELECT ?a ?d (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f } GROUP BY ?a ?d`,
				`SELECT * { ?a ?b ?c . ?d ?e ?f } ORDER BY STR(?c) ?f`,
				`SELECT DISTINCT ?a ?f { ?a ?b ?c . ?d ?e ?f }`,
			} {
				// TotalAlloc counts every goroutine of the process, and
				// one left behind by an earlier test of the package can
				// allocate meanwhile (CI saw 44 MB once): the query's own
				// figure is the least of three tries, which background
				// work only raises.
				a := uint64(1<<64 - 1)
				for try := 0; try < 3 && a > budget/2; try++ {
					runtime.GC()
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					_, err := e.Query(context.Background(), q, Options{Mode: m})
					runtime.ReadMemStats(&after)
					if !errors.Is(err, ErrMemoryBudget) {
						t.Errorf("%d shards %v: %.50s: %v, want ErrMemoryBudget", shards, m, q, err)
					}
					a = min(a, after.TotalAlloc-before.TotalAlloc)
				}
				if a > budget/2 {
					t.Errorf("%d shards %v: %.50s: %d bytes allocated before the budget's error, want at most %d (the product is charged before it is made)",
						shards, m, q, a, budget/2)
				}
			}
		}
	}
}

// TestCopiesLookAtTheContext: a large slice's growth and a large gather
// copy at most copyChunk elements between two looks at the context, and
// stop at the first look past the deadline.
func TestCopiesLookAtTheContext(t *testing.T) {
	const n = 4 * copyChunk
	s := make([]int32, n)
	ctx := &lookCounter{Context: context.Background()}
	g, err := growSlice(ctx, s, 1)
	if err != nil || len(g) != n || cap(g) <= n {
		t.Fatalf("growSlice: len %d cap %d, %v", len(g), cap(g), err)
	}
	if l := ctx.looks.Load(); l < n/copyChunk {
		t.Errorf("growSlice of %d elements looked at the context %d times, want at least %d", n, l, n/copyChunk)
	}
	ctx = &lookCounter{Context: context.Background(), doneAt: 3}
	if g, err := growSlice(ctx, s, 1); !errors.Is(err, context.DeadlineExceeded) || cap(g) != n {
		t.Errorf("growSlice past the deadline: cap %d, %v; want the slice as it was and the deadline", cap(g), err)
	}

	tab := &Table{Vars: []sparql.Var{"a", "b"}, Cols: [][]ID{make([]ID, n), make([]ID, n)}, N: n}
	src := make([]int32, n)
	for i := range src {
		src[i] = int32(n - 1 - i)
		tab.Cols[0][i] = ID(i)
	}
	ctx = &lookCounter{Context: context.Background()}
	out, err := tab.gatherCtx(ctx, src)
	if err != nil || out.N != n || out.Cols[0][0] != ID(n-1) {
		t.Fatalf("gatherCtx: %v", err)
	}
	if l := ctx.looks.Load(); l < 2*n/copyChunk {
		t.Errorf("gatherCtx of %d rows × 2 columns looked at the context %d times, want at least %d", n, l, 2*n/copyChunk)
	}
	ctx = &lookCounter{Context: context.Background()}
	if _, err := merge(ctx, tab, tab, src, src); err != nil {
		t.Fatal(err)
	}
	if l := ctx.looks.Load(); l < 2*n/copyChunk {
		t.Errorf("merge of %d rows × 2 columns looked at the context %d times, want at least %d", n, l, 2*n/copyChunk)
	}
}

// TestGroupResultsLookAtTheContext: GROUP BY computes and interns each
// group's aggregates after its rows are grouped; with as many groups as
// rows that loop is as long as the grouping, and it looks at the context
// as often: a deadline that falls in it stops the query there.
func TestGroupResultsLookAtTheContext(t *testing.T) {
	e := newBudgetEngine(t, 1, Config{})
	const rows = 16 * checkEvery
	tab := &Table{Vars: []sparql.Var{"s"}, Cols: [][]ID{make([]ID, rows)}, N: rows}
	for i := range tab.Cols[0] {
		tab.Cols[0][i] = ID(i + 1) // every row its own group
	}
	n := &planner.Group{Keys: []sparql.Expr{&sparql.VarExpr{Var: "s"}},
		Aggs: []sparql.AggregateBinding{{Var: "n", Agg: &sparql.Aggregate{Name: "COUNT"}}}}
	run := func(ctx context.Context) (*Table, error) {
		q := newQueryRun(ctx, e, &planner.Plan{}, Options{}, &Result{locals: &TermTable{}})
		return q.group(tab, n)
	}
	ctx := &lookCounter{Context: context.Background()}
	out, err := run(ctx)
	if err != nil || out.N != rows {
		t.Fatalf("GROUP BY of %d rows: %v", rows, err)
	}
	looks := ctx.looks.Load()
	if looks < 2*rows/checkEvery {
		t.Errorf("GROUP BY of %d rows into as many groups looked at the context %d times, want at least %d (the rows and the groups' results)", rows, looks, 2*rows/checkEvery)
	}
	// The deadline at the last look, in the groups' results: the query
	// stops there.
	if _, err := run(&lookCounter{Context: context.Background(), doneAt: looks}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a deadline among the groups' results: %v, want the deadline", err)
	}
}
