package exec

import (
	"context"
	"fmt"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// classSets returns e's bitmaps by class (typeSetKey → *idSet).
func classSets(e *Engine) map[ID]map[typeSetKey]*idSet {
	out := map[ID]map[typeSetKey]*idSet{}
	e.typeSets.Range(func(k, v any) bool {
		tk := k.(typeSetKey)
		if out[tk.class] == nil {
			out[tk.class] = map[typeSetKey]*idSet{}
		}
		out[tk.class][tk] = v.(*idSet)
		return true
	})
	return out
}

// TestInheritTypeSets: on 4 shards, in place and fork-join, an engine over
// a later version takes over the bitmaps of the classes whose instances
// no write since changed (the same bitmaps), and builds again those of a
// class a write gave or took an instance — the new version's answers
// then count it (with a carried stale bitmap the type check would drop
// the new instance and keep the deleted one).
func TestInheritTypeSets(t *testing.T) {
	ctx := context.Background()
	ex := func(f string, a ...any) rdf.Term {
		return rdf.NewIRI("http://typesets.example/" + fmt.Sprintf(f, a...))
	}
	typ := rdf.NewIRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
	hub, p, q := ex("hub"), ex("p"), ex("q")
	var base []rdf.Triple
	for i := 0; i < 200; i++ {
		c := ex("A")
		if i >= 100 {
			c = ex("B")
		}
		base = append(base, rdf.Triple{S: hub, P: p, O: ex("x%d", i)}, rdf.Triple{S: ex("x%d", i), P: typ, O: c})
	}
	for i := 0; i < 2000; i++ { // big classes: the plans start from the hub
		base = append(base, rdf.Triple{S: ex("a%d", i), P: typ, O: ex("A")}, rdf.Triple{S: ex("b%d", i), P: typ, O: ex("B")})
	}
	query := func(c string) *sparql.Query {
		return readQueryText(t, fmt.Sprintf(`SELECT ?x WHERE { <http://typesets.example/hub> <http://typesets.example/p> ?x . ?x a <http://typesets.example/%s> }`, c))
	}
	for _, mode := range []planner.Mode{planner.ModeInPlace, planner.ModeForkJoin} {
		t.Run(mode.String(), func(t *testing.T) {
			ds := graphstore.NewDataset(buildGraph(t, base, 4))
			defer ds.Close()
			engine := func(ds *graphstore.Dataset) *Engine {
				e, err := NewDatasetEngine(ds, Config{Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { e.Close() })
				return e
			}
			rows := func(e *Engine, c string) int {
				res, err := e.Run(ctx, query(c), Options{Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				return res.Len()
			}
			apply := func(ds *graphstore.Dataset, ch graphstore.GraphChange) *graphstore.Dataset {
				nd, err := ds.Apply(ctx, ch)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { nd.Close() })
				return nd
			}
			id := func(e *Engine, term rdf.Term) ID {
				x, ok := e.store.LookupTerm(term)
				if !ok {
					t.Fatalf("%v has no ID", term)
				}
				return x
			}
			// check runs both queries on e (inheriting from prev, if any)
			// and wants the rows a fresh engine over the same version
			// gives, and the bitmaps of the classes in carried taken over
			// from prev, the others not.
			check := func(ds *graphstore.Dataset, prev *Engine, wantA, wantB int, carried ...string) *Engine {
				t.Helper()
				e := engine(ds)
				n := e.InheritTypeSets(prev)
				was := classSets(prev)
				now := classSets(e)
				want := 0
				for _, c := range []string{"A", "B"} {
					cid := id(e, ex("%s", c))
					keep := false
					for _, k := range carried {
						keep = keep || k == c
					}
					if len(was[cid]) == 0 {
						t.Fatalf("the last version's engine has no bitmap of %s", c)
					}
					for k, set := range was[cid] {
						if got, ok := now[cid][k]; keep && (!ok || got != set) {
							t.Errorf("bitmap %+v of untouched class %s not taken over", k, c)
						} else if !keep && ok {
							t.Errorf("bitmap %+v of class %s taken over after a write changed its instances", k, c)
						}
						if keep {
							want++
						}
					}
				}
				if n != want {
					t.Errorf("InheritTypeSets took %d bitmaps, want %d", n, want)
				}
				if a, b := rows(e, "A"), rows(e, "B"); a != wantA || b != wantB {
					t.Errorf("rows of A, B on the new version: %d, %d, want %d, %d", a, b, wantA, wantB)
				}
				fresh := engine(ds)
				if a, b := rows(fresh, "A"), rows(fresh, "B"); a != wantA || b != wantB {
					t.Fatalf("a fresh engine: rows of A, B %d, %d, want %d, %d", a, b, wantA, wantB)
				}
				if len(classSets(e)[id(e, ex("A"))]) == 0 || len(classSets(e)[id(e, ex("B"))]) == 0 {
					t.Fatal("the type checks built no bitmap: the test checks nothing")
				}
				return e
			}
			e1 := engine(ds)
			if a, b := rows(e1, "A"), rows(e1, "B"); a != 100 || b != 100 {
				t.Fatalf("rows of A, B: %d, %d, want 100, 100", a, b)
			}
			// A new instance of A (linked from the hub): A's type index changes.
			d2 := apply(ds, graphstore.GraphChange{Insert: []rdf.Triple{{S: hub, P: p, O: ex("new")}, {S: ex("new"), P: typ, O: ex("A")}}})
			e2 := check(d2, e1, 101, 100, "B")
			// An instance of B loses its type: B's type index changes.
			d3 := apply(d2, graphstore.GraphChange{Delete: []rdf.Triple{{S: ex("x150"), P: typ, O: ex("B")}}})
			e3 := check(d3, e2, 101, 99, "A")
			// A write of no type triple: both carried.
			d4 := apply(d3, graphstore.GraphChange{Insert: []rdf.Triple{{S: hub, P: q, O: ex("x1")}}})
			e4 := check(d4, e3, 101, 99, "A", "B")
			// Two writes since the last engine (a group commit publishes
			// the second only): the earlier one touched A.
			d5 := apply(d4, graphstore.GraphChange{Delete: []rdf.Triple{{S: ex("x7"), P: typ, O: ex("A")}}})
			d6 := apply(d5, graphstore.GraphChange{Insert: []rdf.Triple{{S: hub, P: q, O: ex("x2")}}})
			check(d6, e4, 100, 99, "B")
		})
	}
}
