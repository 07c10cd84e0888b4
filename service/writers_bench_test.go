package service

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/web"
)

// BenchmarkDurableWriters16 is a one-triple INSERT DATA through Update on
// a durable LUBM-1 (write-ahead log, fdatasync) from 16 concurrent
// writers: the service's part of the HTTP writers benchmark (parse,
// Apply, log record, group commit, publish).
func BenchmarkDurableWriters16(b *testing.B) {
	st := lubm1Store(b, 4)
	dir := filepath.Join(b.TempDir(), "data")
	if err := graphstore.WriteSnapshot(dir, st); err != nil {
		b.Fatal(err)
	}
	st.Close()
	s, err := OpenDurable(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Recover(context.Background()); err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			u := fmt.Sprintf(`INSERT DATA { <http://bench.example/s%d> <http://bench.example/p> "v%d" }`, i, i)
			if err := s.Update(context.Background(), &web.UpdateRequest{Update: u}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
