package loader

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// BenchmarkLoad* run Load (parse, intern, Build, WriteDataset) of a LUBM
// .nt.gz into a temporary snapshot directory, as `wukongd load --shards 4`
// does. triples/cpu-s counts the process's user+system CPU (GC included).
func BenchmarkLoadLUBM10(b *testing.B) { benchLoad(b, "lubm10.nt.gz") }
func BenchmarkLoadLUBM40(b *testing.B) { benchLoad(b, "lubm40.nt.gz") }

func benchLoad(b *testing.B, name string) {
	path := lubmDir + "/" + name
	needFile(b, path)
	out := b.TempDir() + "/snap"
	var sum Summary
	cpu0 := cpuTime()
	for b.Loop() {
		var err error
		sum, err = Load(context.Background(), Config{Inputs: []string{path}, Out: out, BuildOptions: BuildOptions{Shards: 4}})
		if err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(out)
	}
	cpu := cpuTime() - cpu0
	n := float64(sum.Triples) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "triples/s")
	b.ReportMetric(n/cpu.Seconds(), "triples/cpu-s")
	b.ReportMetric(sum.ParseSeconds, "parse-s")
	b.ReportMetric(sum.BuildSeconds, "build-s")
	b.ReportMetric(sum.BytesPerTriple(), "snapB/triple")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
