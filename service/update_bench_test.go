package service

import (
	"context"
	"fmt"
	"testing"

	"github.com/wukongd/wukongd/web"
)

// BenchmarkUpdateOneTriple measures one INSERT DATA of one triple on
// LUBM-1 in memory (parse, Apply through the delta, publish a new
// version with its engine): the in-memory part of a write's latency.
func BenchmarkUpdateOneTriple(b *testing.B) {
	st := lubm1Store(b, 4)
	s := newService(b, st, Options{Shards: 4})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := fmt.Sprintf(`INSERT DATA { <http://bench.example/s%d> <http://bench.example/p> "v%d" }`, i, i)
		if err := s.Update(ctx, &web.UpdateRequest{Update: q}); err != nil {
			b.Fatal(err)
		}
	}
}
