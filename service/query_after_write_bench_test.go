package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wukongd/wukongd/web"
)

// BenchmarkQueryAfterWrite measures L4-L6 on LUBM-1 (4 shards, in
// memory) alone, and each right after a one-triple INSERT DATA has
// published a new version: query-ns/op is the query's own time (the
// write excluded), so the difference is what a reader pays for meeting
// a version no query has run on yet (its engine's caches start empty).
func BenchmarkQueryAfterWrite(b *testing.B) {
	st := lubm1Store(b, 4)
	s := newService(b, st, Options{Shards: 4})
	ctx := context.Background()
	for _, qn := range []string{"q4", "q5", "q6"} {
		text, err := os.ReadFile(filepath.Join(lubmDir, "queries", "wukong", qn+".rq"))
		if err != nil {
			b.Skip(err)
		}
		for _, write := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/write=%v", qn, write), func(b *testing.B) {
				var qt time.Duration
				for i := 0; i < b.N; i++ {
					if write {
						u := fmt.Sprintf(`INSERT DATA { <http://bench.example/%s/s%d> <http://bench.example/p> "v%d" }`, qn, i, i)
						if err := s.Update(ctx, &web.UpdateRequest{Update: u}); err != nil {
							b.Fatal(err)
						}
					}
					t := time.Now()
					if _, err := s.Query(ctx, &web.QueryRequest{Query: string(text)}); err != nil {
						b.Fatal(err)
					}
					qt += time.Since(t)
				}
				b.ReportMetric(float64(qt.Nanoseconds())/float64(b.N), "query-ns/op")
			})
		}
	}
}
