package exec

import (
	"fmt"
	"testing"

	"github.com/wukongd/wukongd/planner"
)

// BenchmarkLUBM40EarlyStop: queries whose answer bounds their work (issue
// 13's probes), on LUBM-40 with 1 and 4 shards, in each mode:
//
//	go test ./exec -run '^$' -bench LUBM40EarlyStop -benchtime 200x -timeout 60m
func BenchmarkLUBM40EarlyStop(b *testing.B) {
	qs := []struct{ name, text string }{
		{"limit100", `SELECT * WHERE { ?s ?p ?o } LIMIT 100`},
		{"ask", `ASK { ?s ?p ?o }`},
		{"cross-limit10", `SELECT * { ?a ?b ?c . ?d ?e ?f } LIMIT 10`},
		{"orderby-limit10", `PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>
SELECT ?x WHERE { ?x a ub:UndergraduateStudent } ORDER BY ?x LIMIT 10`},
	}
	for _, shards := range []int{1, 4} {
		st := lubm40Store(b, shards)
		e, err := NewGraphEngine(st, Config{})
		if err != nil {
			b.Fatal(err)
		}
		ms := []planner.Mode{planner.ModeAuto}
		if shards > 1 {
			ms = modes
		}
		for _, q := range qs {
			for _, m := range ms {
				b.Run(fmt.Sprintf("shards=%d/%s/%s", shards, q.name, modeName(m)), func(b *testing.B) { benchQuery(b, e, q.text, m) })
			}
		}
		e.Close()
	}
}
