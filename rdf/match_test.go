package rdf

import (
	"maps"
	"strings"
	"testing"
)

func TestMatchBags(t *testing.T) {
	b := NewBlank
	iri := func(s string) Term { return NewIRI("http://ex.org/" + s) }
	p, q := iri("p"), iri("q")
	lit := NewLiteral("1", XSDInteger)
	for _, tc := range []struct {
		name string
		a, b [][]Term
		want string // "" or a part of the difference
		// renaming is the only blank node mapping of a onto b (when want is "")
		renaming map[Term]Term
	}{
		{"equal without blank nodes", [][]Term{{iri("s"), p, lit}}, [][]Term{{iri("s"), p, lit}}, "", nil},
		{"renamed blank nodes",
			[][]Term{{b("x"), p, b("y")}, {b("y"), p, b("x")}, {b("x"), q, lit}},
			[][]Term{{b("1"), p, b("2")}, {b("2"), p, b("1")}, {b("2"), q, lit}}, "",
			map[Term]Term{b("x"): b("2"), b("y"): b("1")}},
		{"a blank node in the graph position",
			[][]Term{{b("x"), p, lit, b("g")}}, [][]Term{{b("y"), p, lit, b("h")}}, "",
			map[Term]Term{b("x"): b("y"), b("g"): b("h")}},
		{"one node where two are expected",
			[][]Term{{b("x"), p, b("x")}}, [][]Term{{b("1"), p, b("2")}}, "blank nodes", nil},
		{"two-cycle and loop against three-cycle",
			[][]Term{{b("x"), p, b("y")}, {b("y"), p, b("x")}, {b("z"), p, b("z")}},
			[][]Term{{b("1"), p, b("2")}, {b("2"), p, b("3")}, {b("3"), p, b("1")}}, "blank nodes", nil},
		{"a row missing", [][]Term{{lit}}, [][]Term{{lit}, {lit}}, "missing [(\"1\"^^<" + XSDInteger + ">)]", nil},
		{"unbound", [][]Term{{{}}}, [][]Term{{lit}}, "unexpected [(UNDEF)]", nil},
		{"bags count duplicates", [][]Term{{b("x")}, {b("x")}}, [][]Term{{b("1")}, {b("2")}}, "blank nodes", nil},
	} {
		m, diff := MatchBags(tc.a, tc.b)
		switch {
		case tc.want == "" && diff != "":
			t.Errorf("%s: %s", tc.name, diff)
		case tc.want == "" && len(m) == 0 && hasBlankTerm(tc.a[0]):
			t.Errorf("%s: no renaming returned", tc.name)
		case tc.want == "" && !maps.Equal(m, tc.renaming):
			t.Errorf("%s: renaming %v, want %v", tc.name, m, tc.renaming)
		case tc.want != "" && !strings.Contains(diff, tc.want):
			t.Errorf("%s: difference %q, want one with %q", tc.name, diff, tc.want)
		}
	}
}
