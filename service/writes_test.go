package service

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wukongd/wukongd/client"
	"github.com/wukongd/wukongd/web"
)

// lubm1Lines returns the N-Triples lines of LUBM-1 (skipping when absent).
func lubm1Lines(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(lubmDir, "lubm1.nt.gz"))
	if err != nil {
		t.Skipf("LUBM-1 not available: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestLUBM1WrittenInBatches builds LUBM-1 through the write path — Graph
// Store POSTs of batches into an empty store, some triples deleted again
// with DELETE DATA and put back — and checks that all 26 LUBM queries
// answer exactly as the reference, on 1 and 4 shards, in every mode; then
// again after a compaction.
func TestLUBM1WrittenInBatches(t *testing.T) {
	lines := lubm1Lines(t)
	type query struct{ name, text, want string }
	var queries []query
	for _, set := range []string{"wukong", "std"} {
		files, _ := filepath.Glob(filepath.Join(lubmDir, "queries", set, "*.rq"))
		for _, f := range files {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			base := strings.TrimSuffix(filepath.Base(f), ".rq")
			want, err := os.ReadFile(filepath.Join(lubmDir, "answers", "lubm1", set, base+".tsv"))
			if err != nil {
				t.Fatal(err)
			}
			queries = append(queries, query{set + "/" + base, string(text), string(bytes.TrimRight(want, "\n")) + "\n"})
		}
	}
	ctx := context.Background()
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			svc := openService(t, NewEmpty, Options{Shards: shards, CompactDeltaBytes: -1})
			const batches = 7
			for b := 0; b < batches; b++ {
				part := lines[b*len(lines)/batches : (b+1)*len(lines)/batches]
				if _, err := svc.PostGraph(ctx, web.GraphName{Default: true}, web.GraphBody{MediaType: "application/n-triples",
					Body: strings.NewReader(strings.Join(part, "\n") + "\n")}); err != nil {
					t.Fatal(err)
				}
			}
			// Every 50th triple deleted, then inserted again.
			var some []string
			for i := 0; i < len(lines); i += 50 {
				some = append(some, lines[i])
			}
			update(t, svc, "DELETE DATA { "+strings.Join(some, "\n")+" }")
			update(t, svc, "INSERT DATA { "+strings.Join(some, "\n")+" }")
			c, _ := serve(t, svc, nil)
			check := func(when string) {
				for _, mode := range []string{"", "in-place", "fork-join"} {
					var opts []client.Option
					if mode != "" {
						opts = append(opts, client.WithMode(mode))
					}
					for _, q := range queries {
						got, err := selectTSV(ctx, c, q.text, opts...)
						if err != nil {
							t.Fatalf("%s %s %s: %v", when, mode, q.name, err)
						}
						if got != q.want {
							t.Errorf("%s, mode %q, %s: got %d rows, want %d", when, mode, q.name, strings.Count(got, "\n")-1, strings.Count(q.want, "\n")-1)
						}
					}
				}
			}
			check("written in batches")
			if _, err := svc.Compact(ctx); err != nil {
				t.Fatal(err)
			}
			check("compacted")
		})
	}
}

// TestWritesAreAtomicForReaders moves a token between the two resources
// of each of several pairs, one request per move, while readers check on
// every query that each pair holds exactly one token (an invariant every
// version keeps), in-place and fork-join, on 4 shards.
func TestWritesAreAtomicForReaders(t *testing.T) {
	svc := openService(t, NewEmpty, Options{Shards: 4, CompactDeltaBytes: -1})
	ctx := context.Background()
	const pairs = 40
	const prefix = "PREFIX ex: <http://example.org/>\n"
	var init strings.Builder
	for i := 0; i < pairs; i++ {
		fmt.Fprintf(&init, "ex:a%d ex:token ex:t%d . ex:a%d ex:pair ex:p%d . ex:b%d ex:pair ex:p%d .\n", i, i, i, i, i, i)
	}
	update(t, svc, prefix+"INSERT DATA { "+init.String()+" }")
	// Per pair: the resources holding its token, joined through the pair
	// (a plan with several steps, forked in fork-join mode).
	const check = prefix + `SELECT ?p (COUNT(?x) AS ?n) WHERE { ?x ex:pair ?p . ?x ex:token ?t } GROUP BY ?p`
	var stop atomic.Bool
	var moves, reads, violations atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at := make([]bool, pairs) // false: a holds it
			for i := w; !stop.Load(); i += 2 {
				k := i % pairs
				from, to := "a", "b"
				if at[k] {
					from, to = to, from
				}
				u := fmt.Sprintf(prefix+"DELETE DATA { ex:%s%d ex:token ex:t%d } ; INSERT DATA { ex:%s%d ex:token ex:t%d }", from, k, k, to, k, k)
				if err := svc.Update(ctx, &web.UpdateRequest{Update: u}); err != nil {
					t.Error(err)
					return
				}
				at[k] = !at[k]
				moves.Add(1)
			}
		}()
	}
	for _, mode := range []web.ExecMode{web.ModeInPlace, web.ModeForkJoin} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				res, err := svc.Query(ctx, &web.QueryRequest{Query: check, Mode: mode})
				if err != nil {
					t.Error(err)
					return
				}
				n, bad := countPairs(t, res)
				if n != pairs || bad > 0 {
					violations.Add(1)
				}
				reads.Add(1)
			}
		}()
	}
	time.Sleep(2 * time.Second)
	stop.Store(true)
	wg.Wait()
	t.Logf("%d moves, %d checked reads, %d violations", moves.Load(), reads.Load(), violations.Load())
	if violations.Load() != 0 {
		t.Fatalf("%d reads saw a pair without exactly one token", violations.Load())
	}
	if moves.Load() < 10 || reads.Load() < 10 {
		t.Fatalf("too little concurrency to check: %d moves, %d reads", moves.Load(), reads.Load())
	}
}

// countPairs reads the rows of the check query: the pairs seen, and those
// whose count is not 1.
func countPairs(t *testing.T, res *web.Result) (pairs, bad int) {
	defer res.Rows.Close()
	for res.Rows.Next() {
		pairs++
		if n := res.Rows.Row()[1]; n.Value != "1" {
			bad++
		}
	}
	if err := res.Rows.Err(); err != nil {
		t.Error(err)
	}
	return pairs, bad
}
