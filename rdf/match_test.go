package rdf

import (
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
	}{
		{"equal without blank nodes", [][]Term{{iri("s"), p, lit}}, [][]Term{{iri("s"), p, lit}}, ""},
		{"renamed blank nodes",
			[][]Term{{b("x"), p, b("y")}, {b("y"), p, b("x")}, {b("x"), q, lit}},
			[][]Term{{b("1"), p, b("2")}, {b("2"), p, b("1")}, {b("2"), q, lit}}, ""},
		{"a blank node in the graph position",
			[][]Term{{b("x"), p, lit, b("g")}}, [][]Term{{b("y"), p, lit, b("h")}}, ""},
		{"one node where two are expected",
			[][]Term{{b("x"), p, b("x")}}, [][]Term{{b("1"), p, b("2")}}, "blank nodes"},
		{"two-cycle and loop against three-cycle",
			[][]Term{{b("x"), p, b("y")}, {b("y"), p, b("x")}, {b("z"), p, b("z")}},
			[][]Term{{b("1"), p, b("2")}, {b("2"), p, b("3")}, {b("3"), p, b("1")}}, "blank nodes"},
		{"a row missing", [][]Term{{lit}}, [][]Term{{lit}, {lit}}, "missing [(\"1\"^^<" + XSDInteger + ">)]"},
		{"unbound", [][]Term{{{}}}, [][]Term{{lit}}, "unexpected [(UNDEF)]"},
		{"bags count duplicates", [][]Term{{b("x")}, {b("x")}}, [][]Term{{b("1")}, {b("2")}}, "blank nodes"},
	} {
		m, diff := MatchBags(tc.a, tc.b)
		switch {
		case tc.want == "" && diff != "":
			t.Errorf("%s: %s", tc.name, diff)
		case tc.want == "" && len(m) == 0 && hasBlankTerm(tc.a[0]):
			t.Errorf("%s: no renaming returned", tc.name)
		case tc.want != "" && !strings.Contains(diff, tc.want):
			t.Errorf("%s: difference %q, want one with %q", tc.name, diff, tc.want)
		}
	}
}
