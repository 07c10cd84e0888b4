package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
)

// The LUBM-40 benchmark: Wukong's L1–L7 (queries/wukong q1–q7) and the
// standard Q14 (queries/std/q14), end to end
// in process (parse, plan, explore, decode every term to N-Triples text),
// on 1 and 4 shards, in each mode. The store is built once into a snapshot
// under $WUKONGD_BENCH_DIR (default: the temp dir) and mapped from there.
//
//	go test ./exec -run '^$' -bench LUBM40 -benchtime 200x -timeout 60m
//
// Besides ns/op it reports the median latency (median-µs) and the fabric
// counters of one run (reads/q, read-B/q, msgs/q, msg-B/q).

var benchStores sync.Map // shards → *graphstore.Store

func lubm40Store(b *testing.B, shards int) *graphstore.Store {
	if s, ok := benchStores.Load(shards); ok {
		return s.(*graphstore.Store)
	}
	src := filepath.Join(lubmDir, "lubm40.nt.gz")
	if _, err := os.Stat(src); err != nil {
		b.Skipf("LUBM-40 not available: %v", err)
	}
	root := os.Getenv("WUKONGD_BENCH_DIR")
	if root == "" {
		root = filepath.Join(os.TempDir(), "wukongd-bench")
	}
	dir := filepath.Join(root, fmt.Sprintf("lubm40-%d", shards))
	if _, err := graphstore.ReadManifest(dir); err != nil {
		b.Logf("building the LUBM-40 snapshot with %d shards in %s", shards, dir)
		gb, err := graphstore.NewBuilder(shards)
		if err != nil {
			b.Fatal(err)
		}
		batch := make([]rdf.Triple, 0, 8192)
		err = loader.ParseFile(src, loader.Options{}, func(q rdf.Quad) error {
			batch = append(batch, q.Triple())
			if len(batch) == cap(batch) {
				if err := gb.AddTriples(batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
			return nil
		})
		if err == nil {
			err = gb.AddTriples(batch)
		}
		if err != nil {
			b.Fatal(err)
		}
		st, err := gb.Build()
		if err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(root, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := graphstore.WriteSnapshot(dir, st); err != nil {
			b.Fatal(err)
		}
		st.Close()
	}
	st, err := graphstore.OpenSnapshot(dir, graphstore.OpenOptions{SkipChecksums: true})
	if err != nil {
		b.Fatal(err)
	}
	benchStores.Store(shards, st)
	return st
}

func BenchmarkLUBM40(b *testing.B) {
	type query struct {
		name, text string
	}
	var qs []query
	for i := 1; i <= 7; i++ {
		text, err := os.ReadFile(filepath.Join(lubmDir, "queries", "wukong", fmt.Sprintf("q%d.rq", i)))
		if err != nil {
			b.Skipf("queries not available: %v", err)
		}
		qs = append(qs, query{fmt.Sprintf("L%d", i), string(text)})
	}
	// Q14 (every undergraduate, 313,671 rows on LUBM-40): the index scan
	// and the output at their largest.
	text, err := os.ReadFile(filepath.Join(lubmDir, "queries", "std", "q14.rq"))
	if err != nil {
		b.Skipf("queries not available: %v", err)
	}
	qs = append(qs, query{"Q14", string(text)})
	// WUKONGD_BENCH_BUDGET=off runs without memory budgets, so without
	// accounting (the A of an A/B of what the budgets cost the reads).
	cfg := Config{}
	if os.Getenv("WUKONGD_BENCH_BUDGET") == "off" {
		cfg.MaxQueryMemory, cfg.MaxMemory = -1, -1
	}
	for _, shards := range []int{1, 4} {
		st := lubm40Store(b, shards)
		e, err := NewGraphEngine(st, cfg)
		if err != nil {
			b.Fatal(err)
		}
		ms := []planner.Mode{planner.ModeAuto}
		if shards > 1 {
			ms = modes
		}
		for _, q := range qs {
			for _, m := range ms {
				name := fmt.Sprintf("shards=%d/%s/%s", shards, q.name, modeName(m))
				b.Run(name, func(b *testing.B) { benchQuery(b, e, q.text, m) })
			}
		}
		e.Close()
	}
}

func modeName(m planner.Mode) string {
	if m == planner.ModeAuto {
		return "planned"
	}
	return m.String()
}

// runEndToEnd runs the query text (parse and plan come from the engine's
// caches after the first run, as in a server) and decodes every term of
// the result to N-Triples text.
func runEndToEnd(e *Engine, text string, opts Options, buf []byte) (*Result, []byte, error) {
	res, err := e.Query(context.Background(), text, opts)
	if err != nil {
		return nil, buf, err
	}
	buf = buf[:0]
	for i := 0; i < res.Len(); i++ {
		for c := range res.Rows.Cols {
			buf = res.AppendNTriples(buf, res.Rows.At(c, i))
			buf = append(buf, '\t')
		}
		buf = append(buf, '\n')
	}
	return res, buf, nil
}

func benchQuery(b *testing.B, e *Engine, text string, m planner.Mode) {
	// One analyzed run for the fabric counters.
	res, _, err := runEndToEnd(e, text, Options{Mode: m, Analyze: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	var tot StepStats
	for _, ea := range res.Analysis.Explores {
		for i := range ea.Steps {
			tot.add(&ea.Steps[i])
		}
	}
	var buf []byte
	lat := make([]time.Duration, 0, b.N)
	cpu0 := cpuTime()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res, buf, err = runEndToEnd(e, text, Options{Mode: m}, buf)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	// CPU time of the process per query: robust to other processes on a
	// shared machine, which wall-clock latency is not.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "median-µs")
	b.ReportMetric(float64(res.Len()), "rows")
	b.ReportMetric(float64(tot.Reads), "reads/q")
	b.ReportMetric(float64(tot.ReadBytes), "read-B/q")
	b.ReportMetric(float64(tot.Messages), "msgs/q")
	b.ReportMetric(float64(tot.MessageBytes), "msg-B/q")
}

// cpuTime returns the user+system CPU time of this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLUBM40Rows decodes every row of L1, L2 and L7 (1 shard) with
// Result.Row, as the service does for its result writers.
func BenchmarkLUBM40Rows(b *testing.B) {
	st := lubm40Store(b, 1)
	e, err := NewGraphEngine(st, Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for _, i := range []int{1, 2, 7} {
		text, err := os.ReadFile(filepath.Join(lubmDir, "queries", "wukong", fmt.Sprintf("q%d.rq", i)))
		if err != nil {
			b.Skipf("queries not available: %v", err)
		}
		res, err := e.Query(context.Background(), string(text), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("L%d", i), func(b *testing.B) {
			b.ReportAllocs()
			var row []rdf.Term
			for n := 0; n < b.N; n++ {
				for r := 0; r < res.Len(); r++ {
					row = res.Row(r, row)
				}
			}
		})
	}
}

// BenchmarkSnapshotLUBM runs L1–L7 over the snapshot in
// $WUKONGD_LUBM_SNAPSHOT (a big one: `wukongd load --shards 16` of
// LUBM-640 or 2560), mapped as `wukongd serve` maps it, counted (rows
// only); skipped without it. $WUKONGD_LUBM_ONLY (e.g. L1,L7) picks the
// queries:
//
//	WUKONGD_LUBM_SNAPSHOT=/work/scratch/big/snap640 go test ./exec -run '^$' \
//	    -bench 'SnapshotLUBM' -benchtime 10x -cpuprofile cpu.out
func BenchmarkSnapshotLUBM(b *testing.B) {
	dir := os.Getenv("WUKONGD_LUBM_SNAPSHOT")
	if dir == "" {
		b.Skip("WUKONGD_LUBM_SNAPSHOT is not set")
	}
	st, err := graphstore.OpenSnapshot(dir, graphstore.OpenOptions{SkipChecksums: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	e, err := NewGraphEngine(st, Config{MaxQueryMemory: -1, MaxMemory: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	only := os.Getenv("WUKONGD_LUBM_ONLY")
	for i := 1; i <= 7; i++ {
		name := fmt.Sprintf("L%d", i)
		if only != "" && !slices.Contains(strings.Split(only, ","), name) {
			continue
		}
		text, err := os.ReadFile(filepath.Join(lubmDir, "queries", "wukong", fmt.Sprintf("q%d.rq", i)))
		if err != nil {
			b.Skipf("queries not available: %v", err)
		}
		b.Run(name, func(b *testing.B) {
			run := func() int {
				res, err := e.Query(context.Background(), string(text), Options{})
				if err != nil {
					b.Fatal(err)
				}
				return res.Len()
			}
			rows := run() // warm-up
			lat := make([]time.Duration, 0, b.N)
			cpu0 := cpuTime()
			b.ReportAllocs()
			b.ResetTimer()
			for j := 0; j < b.N; j++ {
				t0 := time.Now()
				if n := run(); n != rows {
					b.Fatalf("%s: %d rows, then %d", name, rows, n)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "median-µs")
			b.ReportMetric(float64(rows), "rows")
		})
	}
}
