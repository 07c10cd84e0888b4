package service

import (
	"context"
	"fmt"
	"testing"

	"github.com/wukongd/wukongd/web"
)

// BenchmarkInsertOneTriple is an INSERT DATA of one triple (a new student
// taking a course: with owl-rl it derives Student, Person and more) on
// LUBM-1 + univ-bench, with the default graph materialized (reasoning)
// and without (the same data, not materialized).
//
//	go test ./service -run - -bench InsertOneTriple -benchtime 50x
func BenchmarkInsertOneTriple(b *testing.B) {
	for _, reasoning := range []bool{false, true} {
		b.Run(fmt.Sprintf("reasoning=%v", reasoning), func(b *testing.B) {
			ds := reasoningLUBM1(b, reasoning)
			svc, err := NewDataset(ds, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer svc.Close()
			ctx := context.Background()
			// Warm up: the first update builds the maintainer from the
			// stores (read once, not measured).
			if err := svc.Update(ctx, &web.UpdateRequest{Update: `INSERT DATA { <http://example.org/w> a <http://example.org/W> }`}); err != nil {
				b.Fatal(err)
			}
			i := 0
			c0 := processCPU()
			for b.Loop() {
				i++
				q := fmt.Sprintf(`INSERT DATA { <http://example.org/s%d> <http://swat.cse.lehigh.edu/onto/univ-bench.owl#takesCourse> <http://www.Department0.University0.edu/GraduateCourse0> }`, i)
				if err := svc.Update(ctx, &web.UpdateRequest{Update: q}); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time per insert: on a shared machine the fair figure
			// (wall time there is mostly waiting for a core).
			b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}
