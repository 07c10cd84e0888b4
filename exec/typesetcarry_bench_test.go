package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// BenchmarkVersionTypeSets: the cost of a version as a reader meets it,
// on LUBM-1 over 4 shards: per op a one-triple write (no type triple, as
// bench-writes sends), an engine over the new version taking over the
// last one's plans, and, with carry, its class bitmaps
// (InheritTypeSets), then one LUBM query on it. query-ns/op is the query
// alone; carry=false is the cost before (every bitmap built again).
func BenchmarkVersionTypeSets(b *testing.B) {
	ctx := context.Background()
	triples := lubm1(b)
	for _, qn := range []string{"q4", "q5", "q6"} {
		text, err := os.ReadFile(filepath.Join(lubmDir, "queries", "wukong", qn+".rq"))
		if err != nil {
			b.Skip(err)
		}
		q, err := sparql.ParseQuery(string(text))
		if err != nil {
			b.Fatal(err)
		}
		for _, carry := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/carry=%v", qn, carry), func(b *testing.B) {
				ds := graphstore.NewDataset(buildGraph(b, triples, 4))
				e, err := NewDatasetEngine(ds, Config{Workers: 2})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.Run(ctx, q, Options{}); err != nil {
					b.Fatal(err)
				}
				var qt time.Duration
				carried := 0
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					nd, err := ds.Apply(ctx, graphstore.GraphChange{Insert: []rdf.Triple{{
						S: rdf.NewIRI(fmt.Sprintf("http://bench.example/%s/s%d", qn, i)), P: rdf.NewIRI("http://bench.example/p"),
						O: rdf.NewIRI(fmt.Sprintf("http://bench.example/v%d", i))}}})
					if err != nil {
						b.Fatal(err)
					}
					ne, err := NewDatasetEngine(nd, Config{Workers: 2})
					if err != nil {
						b.Fatal(err)
					}
					ne.InheritPlans(e)
					if carry {
						carried += ne.InheritTypeSets(e)
					}
					t := time.Now()
					if _, err := ne.Run(ctx, q, Options{}); err != nil {
						b.Fatal(err)
					}
					qt += time.Since(t)
					e.Close()
					ds.Close()
					e, ds = ne, nd
				}
				b.StopTimer()
				b.ReportMetric(float64(qt.Nanoseconds())/float64(b.N), "query-ns/op")
				b.ReportMetric(float64(carried)/float64(b.N), "carried/op")
				e.Close()
				ds.Close()
			})
		}
	}
}
