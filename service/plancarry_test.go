package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/web"
)

// selectValues runs q and returns its first column's values, sorted.
func selectValues(t *testing.T, s *Service, q string, opts ...func(*web.QueryRequest)) []string {
	t.Helper()
	req := &web.QueryRequest{Query: q}
	for _, o := range opts {
		o(req)
	}
	res, err := s.Query(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer res.Rows.Close()
	var out []string
	for res.Rows.Next() {
		out = append(out, res.Rows.Row()[0].Value)
	}
	if err := res.Rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestPlansCarriedAcrossVersionsSeeWrites: each write publishes a version
// whose engine takes over the last one's cached plans (exec.InheritPlans).
// A query over a class is answered after each insert and delete of its
// rdf:type triples exactly as the data then says — with the class unknown
// at first (its plan was Empty), a class that was a plain vertex before,
// and type checks over enough rows that the class's bitmap is built
// (exec.typeSet) on one version and must not answer for the next.
func TestPlansCarriedAcrossVersionsSeeWrites(t *testing.T) {
	for _, mode := range []planner.Mode{planner.ModeAuto, planner.ModeInPlace, planner.ModeForkJoin} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			s, err := NewEmpty(Options{Shards: 4, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			const prefix = "PREFIX ex: <http://carry.example/>\n"
			byClass := prefix + `SELECT ?x WHERE { ?x a ex:C }`
			byOther := prefix + `SELECT ?x WHERE { ?x a ex:D }` // the same shape: the template's plan
			checked := prefix + `SELECT ?y WHERE { ex:hub ex:link ?y . ?y a ex:C }`
			ask := func(q string, want ...string) {
				t.Helper()
				if got := selectValues(t, s, q); !slices.Equal(got, want) {
					t.Fatalf("%s\ngot  %v\nwant %v", q, got, want)
				}
			}
			iri := func(names ...string) []string {
				out := make([]string, len(names))
				for i, n := range names {
					out[i] = "http://carry.example/" + n
				}
				slices.Sort(out)
				return out
			}
			ask(byClass)
			ask(checked)
			update(t, s, prefix+`INSERT DATA { ex:a a ex:C }`)
			ask(byClass, iri("a")...)
			update(t, s, prefix+`INSERT DATA { ex:b a ex:C . ex:z ex:link ex:D }`) // D: a plain vertex
			ask(byClass, iri("a", "b")...)
			ask(byOther)
			update(t, s, prefix+`INSERT DATA { ex:d a ex:D }`) // D becomes a class
			ask(byOther, iri("d")...)
			update(t, s, prefix+`DELETE DATA { ex:a a ex:C }`)
			ask(byClass, iri("b")...)

			// 200 linked vertices, every other one a C: the type check of
			// 200 rows builds C's bitmap.
			var ins strings.Builder
			var want []string
			for i := 0; i < 200; i++ {
				fmt.Fprintf(&ins, "ex:hub ex:link ex:v%d . ", i)
				if i%2 == 0 {
					fmt.Fprintf(&ins, "ex:v%d a ex:C . ", i)
					want = append(want, fmt.Sprintf("v%d", i))
				}
			}
			update(t, s, prefix+`INSERT DATA { `+ins.String()+`}`)
			ask(checked, iri(want...)...)
			update(t, s, prefix+`INSERT DATA { ex:v1 a ex:C }`)
			ask(checked, iri(append(want, "v1")...)...)
			update(t, s, prefix+`DELETE DATA { ex:v0 a ex:C . ex:v1 a ex:C }`)
			ask(checked, iri(want[1:]...)...)
			update(t, s, prefix+`DELETE WHERE { ?v a ex:C }`)
			ask(checked)
			ask(byClass)
		})
	}
}
