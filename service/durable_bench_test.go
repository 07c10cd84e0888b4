package service

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/wukongd/wukongd/web"
)

// BenchmarkDurableInsert is a one-triple INSERT DATA through Update with
// the write-ahead log, from parallel writers (-cpu sets how many).
func BenchmarkDurableInsert(b *testing.B) {
	dir := emptySnapshot(&testing.T{}, b.TempDir(), 4)
	s, err := OpenDurable(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Recover(context.Background()); err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			u := fmt.Sprintf(`INSERT DATA { <http://x/s%d> <http://x/p> %d }`, i, i)
			if err := s.Update(context.Background(), &web.UpdateRequest{Update: u}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
