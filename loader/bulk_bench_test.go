package loader

import (
	"context"
	"os"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
)

// BenchmarkBulkParse* parse an N-Triples file into a graphstore.BulkInsert
// on one worker, its terms looked up in the dictionary of a snapshot, as
// a Graph Store POST's parse does before the write lock (service/graph.go):
// WUKONGD_BENCH_SNAPSHOT is the snapshot directory (LUBM-40:
// `wukongd load --shards 4 --out DIR lubm40.nt.gz`), WUKONGD_BENCH_NT the
// body (LUBM-10 as is, or renamed: `sed s/University/Univ/g`, every term
// new). triples/cpu-s counts the process's CPU, GC included.
func BenchmarkBulkParse(b *testing.B) {
	snap, nt := os.Getenv("WUKONGD_BENCH_SNAPSHOT"), os.Getenv("WUKONGD_BENCH_NT")
	if snap == "" || nt == "" {
		b.Skip("set WUKONGD_BENCH_SNAPSHOT and WUKONGD_BENCH_NT")
	}
	ds, err := graphstore.OpenDataset(snap, graphstore.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer ds.Close()
	n := 0
	cpu0 := cpuTime()
	for b.Loop() {
		f, err := os.Open(nt)
		if err != nil {
			b.Fatal(err)
		}
		bulk := ds.NewBulkInsert()
		err = ParseChunks(context.Background(), f, false, Options{Name: nt}, 1, func(rb RawBatch) error {
			err := bulk.AddRaw(rb.Seq, rb.Triples)
			if rb.Last {
				bulk.EndPart(rb.Seq)
			}
			return err
		})
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		n = bulk.Len()
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds(), "triples/cpu-s")
}
