package service

import (
	"context"
	"testing"
	"time"

	"github.com/wukongd/wukongd/web"
)

// BenchmarkCompleteLUBM40 measures the console's completion requests on
// LUBM-40 (4 shards), the term index already built (its build is
// reported once as index-build-ms). The snapshot is the one exec's
// LUBM-40 benchmarks write (go test ./exec -run '^$' -bench LUBM40 builds
// it in $WUKONGD_BENCH_DIR, default $TMPDIR/wukongd-bench):
//
//	go test ./service -run '^$' -bench CompleteLUBM40 -benchtime 200x
func BenchmarkCompleteLUBM40(b *testing.B) {
	dir := lubm40BenchSnapshot(b)
	s := openService(b, func(o Options) (*Service, error) { return Open(dir, o) }, Options{})
	ctx := context.Background()
	const ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
	t0 := time.Now()
	completeWait(b, s, &web.CompleteRequest{Kind: web.CompleteEntity, Text: "x", Limit: 1})
	b.Logf("term index built in %v", time.Now().Sub(t0))
	for _, bc := range []struct {
		name string
		req  web.CompleteRequest
	}{
		{"class", web.CompleteRequest{Kind: web.CompleteClass, Text: "Gr"}},
		{"predicate", web.CompleteRequest{Kind: web.CompletePredicate, Namespace: ub, Text: "m"}},
		{"predicate-of-class", web.CompleteRequest{Kind: web.CompletePredicate, Classes: []string{ub + "GraduateStudent"}}},
		{"predicate-of-subject", web.CompleteRequest{Kind: web.CompletePredicate, Subject: "http://www.Department0.University0.edu/GraduateStudent1"}},
		{"entity-by-name", web.CompleteRequest{Kind: web.CompleteEntity, Text: "GraduateStudent1"}},
		{"entity-by-iri", web.CompleteRequest{Kind: web.CompleteEntity, Namespace: "http://www.Department3.University7.edu/", Text: "Assoc"}},
		{"entity-by-label", web.CompleteRequest{Kind: web.CompleteEntity, Text: "University3"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			req := bc.req
			req.Limit = 20
			n := 0
			for i := 0; i < b.N; i++ {
				ans, err := s.Complete(ctx, &req)
				if err != nil {
					b.Fatal(err)
				}
				n = len(ans.Items)
			}
			if n == 0 {
				b.Fatalf("%s: no completions", bc.name)
			}
			b.ReportMetric(float64(n), "items")
		})
	}
}
