package sparql

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// withLiftMin runs f with the lifting thresholds (VALUES and DATA
// blocks) set to n.
func withLiftMin(n int, f func()) {
	saved, savedData := liftMin, liftDataMin
	liftMin, liftDataMin = n, n
	defer func() { liftMin, liftDataMin = saved, savedData }()
	f()
}

// unlifted runs f with nothing lifted: the generated parser's reference.
func unlifted(f func()) { withLiftMin(1<<40, f) }

// TestLiftedValuesSameAlgebra: a VALUES block parsed by liftValues and
// the builder gives the algebra the generated parser gives, for every
// kind of value; errors stay errors, at the same place where it matters.
func TestLiftedValuesSameAlgebra(t *testing.T) {
	values := []string{
		"<http://example.org/a>", "<rel/b>", "<>", "ex:a", "ex:", ":x", "ex:a.b", "ex:a-b_c:d",
		`"s"`, `'s'`, `"a\"b\\n"`, `"é ü"`, `"x"@en`, `"x"@en-GB`, `"1"^^xsd:integer`, `"1"^^<http://example.org/dt>`,
		"1", "+1", "-1", "1.5", "-.5", "1e3", "1.E-3", ".5e+2", "true", "FALSE", "UNDEF",
	}
	prologue := "BASE <http://example.org/base/> PREFIX ex: <http://example.org/> PREFIX : <http://example.org/d#> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
	var one, full strings.Builder
	for i, v := range values {
		fmt.Fprintf(&one, "%s # comment %d\n", v, i)
		fmt.Fprintf(&full, "( %s %s )(%s ex:z)\n", v, values[(i+3)%len(values)], v)
	}
	texts := []string{
		prologue + "SELECT * WHERE { VALUES ?x { " + one.String() + " } ?x ?p ?o }",
		prologue + "SELECT * WHERE { ?s ?p ?o VALUES (?x ?y) {\n" + full.String() + "} } LIMIT 3",
		prologue + "SELECT * WHERE { } VALUES (?x ?y) { " + full.String() + " } ",
		prologue + "SELECT * WHERE { VALUES () { () () } VALUES ?x {} FILTER(?x < 3 || ?y > \"VALUES ?q { 1 }\") }",
		prologue + "DELETE { ?x ?p ?o } WHERE { VALUES ?x { " + one.String() + " } ?x ?p ?o }",
		prologue + "SELECT ?values WHERE { ?values ex:VALUES ?o . VALUES ?o { 1 2 } }",
	}
	for _, text := range texts {
		var want, got any
		var wantErr, gotErr error
		if IsQuery(text) {
			unlifted(func() { want, wantErr = ParseQuery(text) })
			withLiftMin(0, func() { got, gotErr = ParseQuery(text) })
		} else {
			unlifted(func() { want, wantErr = ParseUpdate(text) })
			withLiftMin(0, func() { got, gotErr = ParseUpdate(text) })
		}
		if wantErr != nil || gotErr != nil {
			t.Fatalf("%.80q: errors %v / lifted %v", text, wantErr, gotErr)
		}
		if !sameAlgebra(want, got) {
			t.Errorf("%.80q: lifted algebra differs:\n%v\n%v", text, want, got)
		}
	}
	// Lifting really happens for these texts (not for the VALUES in a
	// string, nor for ?values and ex:VALUES).
	withLiftMin(0, func() {
		for i, want := range []int{1, 1, 1, 2, 1, 1} {
			if _, lifted := liftValues(nil, texts[i]); len(lifted) != want {
				t.Errorf("text %d: %d blocks lifted, want %d", i, len(lifted), want)
			}
		}
	})
	// Errors: bad rows, undefined prefixes, bad strings — still errors,
	// and positions after a lifted block are unchanged.
	for _, tc := range []struct{ text, msg string }{
		{"SELECT * { VALUES (?x ?y) { (1) } }", "VALUES row has 1 values for 2 variables"},
		{"SELECT * { VALUES ?x { nope:a } }", `undefined prefix "nope:"`},
		{"SELECT * { VALUES ?x { (1) } }", ""},
		{"SELECT * { VALUES (?x) { 1 } }", ""},
		{"SELECT * { VALUES ?x { \"a\\qb\" } }", ""},
		{"SELECT * { VALUES ?x { 1. } }", ""},
		{"SELECT * { VALUES ?x {\n 1\n 2 } ?s ?p }", "mismatched input '}'"},
	} {
		var plainErr, liftedErr error
		unlifted(func() { _, plainErr = ParseQuery(tc.text) })
		withLiftMin(0, func() { _, liftedErr = ParseQuery(tc.text) })
		var a, b *SyntaxError
		if !errors.As(plainErr, &a) || !errors.As(liftedErr, &b) {
			t.Errorf("%q: errors %v / lifted %v, want syntax errors", tc.text, plainErr, liftedErr)
			continue
		}
		if tc.msg != "" && (!strings.Contains(b.Msg, tc.msg) || a.Line != b.Line || a.Col != b.Col) {
			t.Errorf("%q: lifted error %v, want %v", tc.text, b, a)
		}
	}
}

// BenchmarkDenseValues: parsing a 4 MB VALUES query, lifted (the default)
// and through the generated parser.
func BenchmarkDenseValues(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("SELECT * WHERE { VALUES ?x { ")
	for i := 0; sb.Len() < 4<<20; i++ {
		fmt.Fprintf(&sb, "<http://example.org/r%d> ", i)
	}
	sb.WriteString("} }")
	text := sb.String()
	for _, lift := range []bool{true, false} {
		b.Run(fmt.Sprintf("lifted=%v", lift), func(b *testing.B) {
			n := liftMin
			if !lift {
				n = 1 << 40
			}
			withLiftMin(n, func() {
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := ParseQuery(text); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
