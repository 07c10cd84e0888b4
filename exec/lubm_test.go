package exec

import (
	"bytes"
	"context"
	"github.com/wukongd/wukongd/internal/shareddata"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

var lubmDir = shareddata.Path("datasets", "lubm")

var (
	lubm1Once    sync.Once
	lubm1Triples []rdf.Triple
	lubm1Err     error
)

// lubm1 returns the triples of the real LUBM-1 (skipping the test when the
// data set is not on this machine).
func lubm1(t testing.TB) []rdf.Triple {
	t.Helper()
	path := filepath.Join(lubmDir, "lubm1.nt.gz")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("LUBM-1 not available: %v", err)
	}
	lubm1Once.Do(func() {
		lubm1Err = loader.ParseFile(path, loader.Options{}, func(q rdf.Quad) error {
			lubm1Triples = append(lubm1Triples, q.Triple())
			return nil
		})
	})
	if lubm1Err != nil {
		t.Fatalf("cannot read LUBM-1: %v", lubm1Err)
	}
	return lubm1Triples
}

// newTestEngine builds a store of triples over shards and an engine on it.
func newTestEngine(t testing.TB, triples []rdf.Triple, shards int) *Engine {
	t.Helper()
	e, err := NewGraphEngine(buildGraph(t, triples, shards), Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() }) // before the store's Close, registered earlier
	return e
}

// tsv renders a result like the reference answer files: a header of
// ?vars, then the rows, terms in N-Triples syntax, sorted bytewise.
func tsv(res *Result) string {
	var lines []string
	var row []rdf.Term
	for i := 0; i < res.Len(); i++ {
		row = res.Row(i, row)
		f := make([]string, len(row))
		for j, x := range row {
			f[j] = x.String()
		}
		lines = append(lines, strings.Join(f, "\t"))
	}
	sort.Strings(lines)
	h := make([]string, len(res.Vars))
	for i, v := range res.Vars {
		h[i] = "?" + string(v)
	}
	return strings.Join(append([]string{strings.Join(h, "\t")}, lines...), "\n") + "\n"
}

var modes = []planner.Mode{planner.ModeAuto, planner.ModeInPlace, planner.ModeForkJoin}

// lubmQuery is one LUBM-1 query of both sets with its reference answer.
type lubmQuery struct {
	name string
	q    *sparql.Query
	want string
}

// lubm1Queries reads the 26 LUBM-1 queries (wukong and std) and their
// reference answers as TSV.
func lubm1Queries(t *testing.T) []lubmQuery {
	t.Helper()
	var queries []lubmQuery
	for _, set := range []string{"wukong", "std"} {
		files, _ := filepath.Glob(filepath.Join(lubmDir, "queries", set, "*.rq"))
		for _, f := range files {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			q, err := sparql.ParseQuery(string(text))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			base := strings.TrimSuffix(filepath.Base(f), ".rq")
			want, err := os.ReadFile(filepath.Join(lubmDir, "answers", "lubm1", set, base+".tsv"))
			if err != nil {
				t.Fatal(err)
			}
			queries = append(queries, lubmQuery{set + "/" + base, q, string(bytes.TrimRight(want, "\n")) + "\n"})
		}
	}
	if len(queries) != 26 {
		t.Fatalf("found %d queries, want 26", len(queries))
	}
	return queries
}

func TestLUBM1Answers(t *testing.T) {
	triples := lubm1(t)
	queries := lubm1Queries(t)
	for _, shards := range []int{1, 4} {
		e := newTestEngine(t, triples, shards)
		for _, m := range modes {
			for _, q := range queries {
				res, err := e.Run(context.Background(), q.q, Options{Mode: m})
				if err != nil {
					t.Errorf("%d shards, %s, %s: %v", shards, m, q.name, err)
					continue
				}
				if got := tsv(res); got != q.want {
					t.Errorf("%d shards, %s, %s: got %d rows, want %d rows\n%s", shards, m, q.name,
						strings.Count(got, "\n")-1, strings.Count(q.want, "\n")-1, Explain(res.Plan, nil, e.Store()))
				}
			}
		}
	}
}

// TestLUBM1AnswersConcurrent runs the LUBM-1 queries of TestLUBM1Answers
// from four goroutines at once on one 4-shard engine: each still gets its
// answer while the steps' list buffers (fetchBufs) are recycled between
// queries running side by side.
func TestLUBM1AnswersConcurrent(t *testing.T) {
	triples := lubm1(t)
	queries := lubm1Queries(t)
	e := newTestEngine(t, triples, 4)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := range 2 * len(queries) {
				i := (n + 7*g) % len(queries) // each goroutine in its own order
				m := modes[(n+g)%len(modes)]
				res, err := e.Run(context.Background(), queries[i].q, Options{Mode: m})
				if err != nil {
					t.Errorf("goroutine %d, %s, query %d: %v", g, m, i, err)
					continue
				}
				if got := tsv(res); got != queries[i].want {
					t.Errorf("goroutine %d, %s, query %d: got %d rows, want %d", g, m, i,
						strings.Count(got, "\n")-1, strings.Count(queries[i].want, "\n")-1)
				}
			}
		}(g)
	}
	wg.Wait()
}
