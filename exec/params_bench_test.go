package exec

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/bench"
	"github.com/wukongd/wukongd/sparql"
)

// BenchmarkTextToPlan measures a light query of a known shape from its
// text to a plan ready to run: the shape lexer, the template lookup, the
// constants' dictionary lookups and the plan's binding (Shapes.Lookup +
// Engine.BindParams), against the ordinary path of a text never seen
// before (ANTLR parse + planner), on LUBM-1 over 4 shards. Each iteration
// takes the next of 64 constants, so no exact-text cache helps.
func BenchmarkTextToPlan(b *testing.B) {
	e := newTestEngine(b, lubm1(b), 4)
	for _, tm := range bench.WukongMix {
		res, err := e.Query(context.Background(), bench.InstancesQuery(tm.Class), Options{})
		if err != nil {
			b.Fatal(err)
		}
		var texts []string
		for i := 0; i < res.Len() && len(texts) < 64; i++ {
			texts = append(texts, strings.ReplaceAll(tm.Text, "%C", res.Term(res.Rows.At(0, i)).String()))
		}
		shapes := sparql.NewShapes(1000, 0)
		for _, text := range texts[:2] {
			q, err := sparql.ParseQuery(text)
			if err != nil {
				b.Fatal(err)
			}
			shapes.Learn(context.Background(), text, "", q)
		}
		b.Run(tm.Name+"/shape", func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				text := texts[i%len(texts)]
				tq, params, ok := shapes.Lookup(text, "")
				if !ok {
					b.Fatal("no template")
				}
				if _, err := e.BindParams(tq, params, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu0)
		})
		b.Run(tm.Name+"/parse+plan", func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				q, err := sparql.ParseQuery(texts[i%len(texts)])
				if err != nil {
					b.Fatal(err)
				}
				if _, err := planCold(e, q); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu0)
		})
	}
}

// planCold plans q without the plan cache.
func planCold(e *Engine, q *sparql.Query) (any, error) {
	return e.planCtx(context.Background(), q, Options{})
}

func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
