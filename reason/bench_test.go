package reason_test

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/reason"
)

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkMaterializeSnapshot materializes the explicit triples of the
// snapshot in $WUKONGD_REASON_SNAPSHOT (e.g. LUBM-40 loaded with
// --ontology univ-bench.owl) under owl-rl and reports derived triples per
// second of wall time and per CPU second (the machine is shared).
//
//	WUKONGD_REASON_SNAPSHOT=/tmp/l40r go test ./reason -run - -bench MaterializeSnapshot -benchtime 3x
func BenchmarkMaterializeSnapshot(b *testing.B) {
	dir := os.Getenv("WUKONGD_REASON_SNAPSHOT")
	if dir == "" {
		b.Skip("set WUKONGD_REASON_SNAPSHOT to a snapshot directory")
	}
	ds, err := graphstore.OpenDataset(dir, graphstore.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer ds.Close()
	ctx := context.Background()
	o, explicit, err := reason.LoadOntology(ctx, ds, reason.OWLRL)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var derived uint64
	var wall, cpu float64
	for b.Loop() {
		t0, c0 := time.Now(), cpuSeconds()
		_, inferred, _, err := reason.Materialize(ctx, o, explicit, reason.Options{IsLiteral: ds.Dict().IsLiteral, Distinct: true})
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(t0).Seconds()
		cpu += cpuSeconds() - c0
		derived += uint64(len(inferred))
	}
	b.ReportMetric(float64(derived)/wall, "derived/s")
	b.ReportMetric(float64(derived)/cpu, "derived/cpu-s")
	b.ReportMetric(float64(derived)/float64(b.N), "derived/op")
}
