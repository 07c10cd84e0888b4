package exec

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/sparql"
)

// TestSplitSameRows runs every LUBM-1 query with in-place explorations
// split over goroutines from two rows on and without splitting: the same
// rows in the same order, and some explorations were split.
func TestSplitSameRows(t *testing.T) {
	triples := lubm1(t)
	var texts []string
	for _, set := range []string{"wukong", "std"} {
		files, _ := filepath.Glob(filepath.Join(lubmDir, "queries", set, "*.rq"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(b))
		}
	}
	if len(texts) != 26 {
		t.Fatalf("found %d queries, want 26", len(texts))
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // parts even on one core
	oldRows := splitRows
	defer func() { splitRows, splitHook = oldRows, nil }()
	var splits atomic.Int64
	splitHook = func(k, rows, parts int) {
		if parts < 2 || parts > rows {
			t.Errorf("step %d: %d rows split into %d parts", k+1, rows, parts)
		}
		splits.Add(1)
	}
	for _, shards := range []int{1, 4} {
		e := newTestEngine(t, triples, shards)
		for _, m := range []planner.Mode{planner.ModeAuto, planner.ModeInPlace} {
			for i, text := range texts {
				q, err := sparql.ParseQuery(text)
				if err != nil {
					t.Fatal(err)
				}
				splitRows = 1 << 30
				want, err := e.Run(context.Background(), q, Options{Mode: m})
				if err != nil {
					t.Fatalf("query %d: %v", i, err)
				}
				splitRows = 2
				got, err := e.Run(context.Background(), q, Options{Mode: m})
				if err != nil {
					t.Fatalf("query %d, split: %v", i, err)
				}
				if got.Len() != want.Len() || !slices.Equal(got.Vars, want.Vars) {
					t.Fatalf("%d shards, %s, query %d: split %d rows, unsplit %d", shards, m, i, got.Len(), want.Len())
				}
				// In place the order is the exploration's; with forks it is
				// the replies' (not fixed): then the rows as a multiset.
				ordered := m == planner.ModeInPlace
				if g, w := rowKeys(got, ordered), rowKeys(want, ordered); !slices.Equal(g, w) {
					t.Fatalf("%d shards, %s, query %d: the split rows differ (ordered %v)", shards, m, i, ordered)
				}
			}
		}
	}
	if splits.Load() == 0 {
		t.Fatal("no exploration was split")
	}
	t.Logf("%d explorations split", splits.Load())
}

// rowKeys renders each row's IDs, sorted unless ordered.
func rowKeys(res *Result, ordered bool) []string {
	keys := make([]string, res.Len())
	for r := range keys {
		var b []byte
		for c := range res.Rows.Cols {
			b = appendID(b, res.Rows.At(c, r))
		}
		keys[r] = string(b)
	}
	if !ordered {
		slices.Sort(keys)
	}
	return keys
}
