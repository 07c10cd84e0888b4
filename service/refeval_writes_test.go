package service

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/exec/refeval"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
	"github.com/wukongd/wukongd/web"
)

// TestRandomWritesAgreeWithRefeval: random INSERT DATA, DELETE DATA and
// DELETE … WHERE requests through the write path (delta, versions, a
// vertex that becomes a predicate and a class) on 1 and 4 shards; after
// every request each query, in place, fork-join and auto, gives what the
// reference evaluator gives over the triples the requests leave — where
// refeval also decides what each DELETE … WHERE removes.
func TestRandomWritesAgreeWithRefeval(t *testing.T) {
	const ex = "http://example.org/"
	iri := func(s string) rdf.Term { return rdf.NewIRI(ex + s) }
	// v3 is a vertex, a predicate and (v4) a class by turns.
	verts := []string{"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7"}
	preds := []string{"p0", "p1", "p2", "v3"}
	classes := []string{"C0", "C1", "v4"}
	queries := []string{
		`SELECT ?s ?p ?o WHERE { ?s ?p ?o }`,
		`SELECT ?s ?o WHERE { ?s <http://example.org/p0> ?o }`,
		`SELECT ?s WHERE { ?s a <http://example.org/C0> }`,
		`SELECT ?s WHERE { ?s a <http://example.org/v4> }`,
		`SELECT ?a ?b ?c WHERE { ?a <http://example.org/p0> ?b . ?b <http://example.org/p1> ?c }`,
		`SELECT ?s ?o WHERE { ?s <http://example.org/v3> ?o }`,
		`SELECT ?x ?p WHERE { <http://example.org/v1> ?p ?x }`,
		`SELECT ?x ?p WHERE { ?x ?p <http://example.org/v2> }`,
		`SELECT ?x ?c WHERE { ?x a ?c . ?x <http://example.org/p2> ?y }`,
	}
	parsed := make([]*sparql.Query, len(queries))
	for i, q := range queries {
		var err error
		if parsed[i], err = sparql.ParseQuery(q); err != nil {
			t.Fatal(err)
		}
	}
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(shards), 12))
			svc := openService(t, NewEmpty, Options{Shards: shards})
			model := map[rdf.Triple]bool{}
			triples := func() []rdf.Triple {
				var ts []rdf.Triple
				for tr := range model {
					ts = append(ts, tr)
				}
				return ts
			}
			randTriple := func() rdf.Triple {
				s := iri(verts[rng.IntN(len(verts))])
				if rng.IntN(4) == 0 {
					return rdf.Triple{S: s, P: rdf.NewIRI(rdf.RDFType), O: iri(classes[rng.IntN(len(classes))])}
				}
				o := iri(verts[rng.IntN(len(verts))])
				if rng.IntN(3) == 0 {
					o = rdf.NewLiteral(fmt.Sprint(rng.IntN(3)), "")
				}
				return rdf.Triple{S: s, P: iri(preds[rng.IntN(len(preds))]), O: o}
			}
			nt := func(ts []rdf.Triple) string {
				var b strings.Builder
				for _, tr := range ts {
					fmt.Fprintf(&b, "%s %s %s .\n", tr.S, tr.P, tr.O)
				}
				return b.String()
			}
			for step := 0; step < 60; step++ {
				var u string
				switch k := rng.IntN(5); {
				case k < 3: // INSERT DATA
					ts := make([]rdf.Triple, 1+rng.IntN(5))
					for i := range ts {
						ts[i] = randTriple()
						model[ts[i]] = true
					}
					u = "INSERT DATA {\n" + nt(ts) + "}"
				case k == 3: // DELETE DATA of existing and absent triples
					var ts []rdf.Triple
					for tr := range model {
						if rng.IntN(4) == 0 {
							ts = append(ts, tr)
						}
					}
					ts = append(ts, randTriple())
					for _, tr := range ts {
						delete(model, tr)
					}
					u = "DELETE DATA {\n" + nt(ts) + "}"
				default: // DELETE WHERE: refeval finds the matches
					p, q := preds[rng.IntN(len(preds))], preds[rng.IntN(len(preds))]
					where := fmt.Sprintf("?s <%s%s> ?o . ?o <%s%s> ?x", ex, p, ex, q)
					sel, err := sparql.ParseQuery("SELECT ?s ?o ?x WHERE { " + where + " }")
					if err != nil {
						t.Fatal(err)
					}
					vars, rows, err := refeval.NewGraph(triples()).Eval(sel)
					if err != nil {
						t.Fatal(err)
					}
					col := map[sparql.Var]int{}
					for i, v := range vars {
						col[v] = i
					}
					for _, r := range rows {
						delete(model, rdf.Triple{S: r[col["s"]], P: iri(p), O: r[col["o"]]})
						delete(model, rdf.Triple{S: r[col["o"]], P: iri(q), O: r[col["x"]]})
					}
					u = "DELETE WHERE { " + where + " }"
				}
				if err := svc.Update(context.Background(), &web.UpdateRequest{Update: u}); err != nil {
					t.Fatalf("step %d: %s: %v", step, u, err)
				}
				ref := refeval.NewGraph(triples())
				g, err := svc.acquire()
				if err != nil {
					t.Fatal(err)
				}
				for qi, q := range parsed {
					_, rrows, err := ref.Eval(q)
					if err != nil {
						t.Fatal(err)
					}
					want := renderRows(rrows)
					for _, mode := range []planner.Mode{planner.ModeAuto, planner.ModeInPlace, planner.ModeForkJoin} {
						ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
						res, err := g.eng.Run(ctx, q, exec.Options{Mode: mode})
						cancel()
						if err != nil {
							g.release()
							t.Fatalf("step %d, %s, %v: %v", step, queries[qi], mode, err)
						}
						var rows [][]rdf.Term
						for i := 0; i < res.Len(); i++ {
							rows = append(rows, res.Row(i, nil))
						}
						if got := renderRows(rows); got != want {
							g.release()
							t.Fatalf("step %d after %s\n%s, %v:\ngot\n%s\nwant (refeval)\n%s", step, u, queries[qi], mode, got, want)
						}
					}
				}
				g.release()
			}
			t.Logf("%d triples after 60 requests", len(model))
		})
	}
}

// renderRows renders rows as sorted lines of N-Triples terms.
func renderRows(rows [][]rdf.Term) string {
	lines := make([]string, len(rows))
	for i, r := range rows {
		parts := make([]string, len(r))
		for j, x := range r {
			parts[j] = x.String()
		}
		lines[i] = strings.Join(parts, " ")
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
