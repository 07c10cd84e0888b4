package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wukongd/wukongd/bench"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/sparql"
)

// BenchmarkLUBM40Mix runs Wukong's light mixed workload (bench.WukongMix:
// A1–A3, L4–L6 with a constant drawn from the type index of a class) on
// LUBM-40 in process, as `wukongd bench` does for its in-process
// throughput, with GOMAXPROCS goroutines at once (b.RunParallel):
//
//	go test ./exec -run '^$' -bench 'LUBM40Mix' -benchtime 100000x -timeout 60m
//
// Sub-benchmarks by what a query costs:
//   - text: every query text is new to the engine — sparql.ParseQuery and
//     Run, as `wukongd bench`'s in-process throughput does;
//   - query: Engine.Query (its parse and plan caches);
//   - exec: Execute of plans made beforehand (the engine alone).
//
// q/s is the rate of the whole run (all goroutines); allocs/op and B/op
// are per query.
func BenchmarkLUBM40Mix(b *testing.B) {
	for _, shards := range []int{4, 1} {
		st := lubm40Store(b, shards)
		e, err := NewGraphEngine(st, Config{})
		if err != nil {
			b.Fatal(err)
		}
		texts := mixTexts(b, e, 4096)
		plans := make([]*planner.Plan, len(texts))
		for i, text := range texts {
			q, err := sparql.ParseQuery(text)
			if err != nil {
				b.Fatal(err)
			}
			if plans[i], err = planner.Build(q, e.store, e.stats(), planner.Options{ConstEval: constEval}); err != nil {
				b.Fatal(err)
			}
		}
		run := map[string]func(i int) (*Result, error){
			"text": func(i int) (*Result, error) {
				q, err := sparql.ParseQuery(texts[i])
				if err != nil {
					return nil, err
				}
				return e.Run(context.Background(), q, Options{})
			},
			"query": func(i int) (*Result, error) { return e.Query(context.Background(), texts[i], Options{}) },
			"exec":  func(i int) (*Result, error) { return e.Execute(context.Background(), plans[i], Options{}) },
		}
		for _, name := range []string{"text", "query", "exec"} {
			f := run[name]
			b.Run(fmt.Sprintf("shards=%d/%s", shards, name), func(b *testing.B) { benchMix(b, f, len(texts)) })
		}
		e.Close()
	}
}

func benchMix(b *testing.B, f func(i int) (*Result, error), n int) {
	for i := 0; i < n; i++ { // warm: the caches, the type bitmaps
		if _, err := f(i); err != nil {
			b.Fatal(err)
		}
	}
	var next, rows atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	t0 := time.Now()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := f(int(next.Add(1)) % n)
			if err != nil {
				b.Error(err)
				return
			}
			rows.Add(int64(res.Len()))
		}
	})
	el := time.Since(t0)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "q/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(rows.Load())/float64(b.N), "rows/op")
}

// mixTexts draws n query texts of the mix (seeded: the same sequence every
// run), its constants listed from the engine's type index.
func mixTexts(b *testing.B, e *Engine, n int) []string {
	consts := map[string][]string{}
	for _, class := range bench.Classes(bench.WukongMix) {
		res, err := e.Query(context.Background(), bench.InstancesQuery(class), Options{})
		if err != nil {
			b.Fatal(err)
		}
		vals := make([]string, 0, res.Len())
		for i := 0; i < res.Len(); i++ {
			vals = append(vals, res.Term(res.Rows.At(0, i)).String())
		}
		sort.Strings(vals)
		consts[class] = vals
	}
	mix, err := bench.NewMix(bench.WukongMix, consts)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, n)
	for i := range texts {
		_, texts[i] = mix.Next(rng)
	}
	return texts
}

// BenchmarkSnapshotMix runs the same mix over the snapshot in
// $WUKONGD_MIX_SNAPSHOT (a big one: `wukongd load --shards 16` of
// LUBM-2560), mapped as `wukongd serve` maps it; skipped without it:
//
//	WUKONGD_MIX_SNAPSHOT=/work/scratch/big/snap2560 go test ./exec -run '^$' \
//	    -bench 'SnapshotMix' -benchtime 200000x -timeout 60m
func BenchmarkSnapshotMix(b *testing.B) {
	dir := os.Getenv("WUKONGD_MIX_SNAPSHOT")
	if dir == "" {
		b.Skip("WUKONGD_MIX_SNAPSHOT is not set")
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
	texts := mixTexts(b, e, 4096)
	b.Run("query", func(b *testing.B) {
		benchMix(b, func(i int) (*Result, error) { return e.Query(context.Background(), texts[i], Options{}) }, len(texts))
	})
}
