package service

import (
	"context"
	"fmt"
	"strings"
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
			svc := openService(b, func(o Options) (*Service, error) { return NewDataset(reasoningLUBM1(b, reasoning), o) }, Options{})
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

// BenchmarkDeleteOneTriple is a DELETE DATA of one explicit triple (a
// student's takesCourse: with owl-rl DRed retracts Student and what
// follows from it) on LUBM-1 + univ-bench, with reasoning and without.
// The triples are inserted before the timing, all in one request.
//
//	go test ./service -run - -bench DeleteOneTriple -benchtime 200x
func BenchmarkDeleteOneTriple(b *testing.B) {
	for _, reasoning := range []bool{false, true} {
		b.Run(fmt.Sprintf("reasoning=%v", reasoning), func(b *testing.B) {
			svc := openService(b, func(o Options) (*Service, error) { return NewDataset(reasoningLUBM1(b, reasoning), o) }, Options{})
			ctx := context.Background()
			triple := func(i int) string {
				return fmt.Sprintf(`<http://example.org/s%d> <http://swat.cse.lehigh.edu/onto/univ-bench.owl#takesCourse> <http://www.Department0.University0.edu/GraduateCourse0>`, i)
			}
			var all strings.Builder
			for i := range b.N {
				all.WriteString(triple(i) + " .\n")
			}
			if err := svc.Update(ctx, &web.UpdateRequest{Update: "INSERT DATA { " + all.String() + " }"}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			c0 := processCPU()
			for i := range b.N {
				if err := svc.Update(ctx, &web.UpdateRequest{Update: "DELETE DATA { " + triple(i) + " }"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}
