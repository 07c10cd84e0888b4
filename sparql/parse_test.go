package sparql

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestGolden parses every testdata/golden/*.rq (queries) and *.ru
// (updates), compares the algebra and the printed SPARQL with the golden
// .algebra file, and checks the round trip.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.r[qu]")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			text := readText(t, f)
			var got string
			if strings.HasSuffix(f, ".ru") {
				u, err := ParseUpdate(text)
				if err != nil {
					t.Fatal(err)
				}
				printed := u.String()
				got = FormatUpdateAlgebra(u) + "\n" + printed + "\n"
				u2, err := ParseUpdate(printed)
				if err != nil {
					t.Fatalf("printed update does not parse: %v\n%s", err, printed)
				}
				if !sameAlgebra(u, u2) {
					t.Errorf("round trip changed the update\n%s\n%s", printed, u2.String())
				}
			} else {
				q, err := ParseQuery(text)
				if err != nil {
					t.Fatal(err)
				}
				printed := q.String()
				got = FormatAlgebra(q) + "\n" + printed + "\n"
				q2, err := ParseQuery(printed)
				if err != nil {
					t.Fatalf("printed query does not parse: %v\n%s", err, printed)
				}
				if !sameAlgebra(q, q2) {
					t.Errorf("round trip changed the query\n%s\n%s", printed, q2.String())
				}
			}
			golden := strings.TrimSuffix(f, filepath.Ext(f)) + ".algebra"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := readText(t, golden)
			if got != want {
				t.Errorf("output differs from %s (run go test -update):\n--- got:\n%s\n--- want:\n%s", golden, got, want)
			}
		})
	}
}

func TestTerms(t *testing.T) {
	q, err := ParseQuery(`BASE <http://ex.org/dir/x>
PREFIX p: <ns#>
SELECT * { <rel> p:loc "01"^^<http://www.w3.org/2001/XMLSchema#integer>, 01, 1.0, 1e0, "é"@EN-gb, TRUE, _:b, [] }`)
	if err != nil {
		t.Fatal(err)
	}
	bgp := q.Pattern.(*Project).Input.(*BGP)
	wantS := NewTermRef(rdf.NewIRI("http://ex.org/dir/rel"))
	wantP := NewTermRef(rdf.NewIRI("http://ex.org/dir/ns#loc"))
	wantO := []TermOrVar{
		NewTermRef(rdf.NewLiteral("01", rdf.XSDInteger)),
		NewTermRef(rdf.NewLiteral("01", rdf.XSDInteger)),
		NewTermRef(rdf.NewLiteral("1.0", rdf.XSDDecimal)),
		NewTermRef(rdf.NewLiteral("1e0", rdf.XSDDouble)),
		NewTermRef(rdf.NewLangLiteral("é", "en-gb")),
		NewTermRef(rdf.NewLiteral("true", rdf.XSDBoolean)),
		NewVarRef("_:b"),
		NewVarRef("_:b0"),
	}
	if len(bgp.Triples) != len(wantO) {
		t.Fatalf("got %d triples, want %d", len(bgp.Triples), len(wantO))
	}
	for i, tp := range bgp.Triples {
		if tp.S != wantS || tp.P != wantP || tp.O != wantO[i] {
			t.Errorf("triple %d = %v %v %v, want %v %v %v", i, tp.S, tp.P, tp.O, wantS, wantP, wantO[i])
		}
	}
	if len(q.Vars) != 0 {
		t.Errorf("SELECT * projects %v; blank nodes must not be projected", q.Vars)
	}
	if bgp.Triples[0].Pos != (Pos{Line: 3, Col: 24}) {
		t.Errorf("first triple at %v, want 3:24 (its object)", bgp.Triples[0].Pos)
	}
}

func TestResolveIRI(t *testing.T) {
	// RFC 3986 §5.4 examples.
	base := "http://a/b/c/d;p?q"
	for ref, want := range map[string]string{
		"g:h": "g:h", "g": "http://a/b/c/g", "./g": "http://a/b/c/g", "g/": "http://a/b/c/g/",
		"/g": "http://a/g", "//g": "http://g", "?y": "http://a/b/c/d;p?y", "g?y": "http://a/b/c/g?y",
		"#s": "http://a/b/c/d;p?q#s", "g#s": "http://a/b/c/g#s", "g?y#s": "http://a/b/c/g?y#s",
		";x": "http://a/b/c/;x", "g;x": "http://a/b/c/g;x", "": "http://a/b/c/d;p?q", ".": "http://a/b/c/",
		"./": "http://a/b/c/", "..": "http://a/b/", "../": "http://a/b/", "../g": "http://a/b/g",
		"../..": "http://a/", "../../g": "http://a/g", "../../../g": "http://a/g", "/./g": "http://a/g",
		"/../g": "http://a/g", "g.": "http://a/b/c/g.", ".g": "http://a/b/c/.g", "g..": "http://a/b/c/g..",
		"./../g": "http://a/b/g", "./g/.": "http://a/b/c/g/", "g/./h": "http://a/b/c/g/h", "g/../h": "http://a/b/c/h",
	} {
		if got := resolveIRI(base, ref); got != want {
			t.Errorf("resolve(%q) = %q, want %q", ref, got, want)
		}
	}
	// Unlike rdf.ResolveIRI, an absolute IRI keeps its dot segments and a
	// relative base leaves the reference as it is.
	for _, c := range [][3]string{{base, "http://x/./y", "http://x/./y"}, {"a/b", "c", "c"}} {
		if got := resolveIRI(c[0], c[1]); got != c[2] {
			t.Errorf("resolveIRI(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		text      string
		line, col int
		msg       string
	}{
		{"SELECT * WHERE { ?s ?p }", 1, 24, "mismatched input '}'"},
		{"SELECT * WHERE {\n  ?s ?p ?o .\n  FILTER (?o > ) }", 3, 16, "')'"},
		{"SELECT ?x WHERE { ?x ?p ?o", 1, 27, "end of input"},
		{"SELECT * { ?s ?p ?o } GROUP BY ?s", 1, 8, "SELECT * is not allowed"},
		{"SELECT ?o { ?s ?p ?o } GROUP BY ?s", 1, 8, "?o is projected but neither grouped nor aggregated"},
		{"SELECT (?o + 1 AS ?x) { ?s ?p ?o } GROUP BY ?s", 1, 8, "?o is used in a select expression"},
		{"SELECT (1 AS ?X) (1 AS ?X) {}", 1, 24, "projected twice"},
		{"SELECT (1 AS ?o) { ?s ?p ?o }", 1, 14, "already in scope"},
		{"SELECT * { ?s ?p ?o BIND(1 AS ?o) }", 1, 31, "BIND: variable ?o is already in scope"},
		{"SELECT (SUM(MAX(?x)) AS ?y) { ?s ?p ?x }", 1, 13, "aggregate MAX is not allowed here"},
		{"SELECT * { ?s ?p ?o FILTER(COUNT(?o) > 1) }", 1, 28, "aggregate COUNT is not allowed here"},
		{"SELECT * { _:a ?p ?o OPTIONAL { _:a ?q ?r } }", 1, 33, "_:a is already used in another basic graph pattern"},
		{"SELECT * { ?s ?p x:y }", 1, 18, `undefined prefix "x:"`},
		{"SELECT * { } VALUES (?a ?b) { (1) }", 1, 31, "VALUES row has 1 values for 2 variables"},
		{"SELECT * { ?s ?p '\\uD800' }", 1, 18, "not a valid code point"},
		{"SELECT * { ?s A ?o }", 1, 15, "input 'A'"},
		// "TriplesBlock ::= TriplesSameSubjectPath ( '.' TriplesBlock? )?":
		// one '.' between triples, never two.
		{"SELECT * { ?s ?p ?o . . }", 1, 23, "'.' cannot follow '.'"},
		{"SELECT * { ?s ?p ?o . . ?a ?b ?c }", 1, 23, "'.' cannot follow '.'"},
		{"SELECT * { ?s ?p ?o OPTIONAL { ?a ?b ?c . . } }", 1, 43, "'.' cannot follow '.'"},
		{"CONSTRUCT { ?s ?p ?o . . } WHERE { ?s ?p ?o }", 1, 24, "'.' cannot follow '.'"},
		{"CONSTRUCT WHERE { ?s ?p ?o . . }", 1, 30, "'.' cannot follow '.'"},
		{"INSERT DATA { <a> <b> <c> . . }", 1, 29, "'.' cannot follow '.'"},
		{"DELETE WHERE { GRAPH <g> { ?a <b> <c> . . } }", 1, 41, "'.' cannot follow '.'"},
		{"INSERT DATA { ?s <p> 1 }", 1, 15, "variables are not allowed in INSERT DATA"},
		{"DELETE DATA { _:b <p> 1 }", 1, 15, "blank nodes are not allowed in DELETE DATA"},
		{"DELETE WHERE { _:b <p> 1 }", 1, 16, "blank nodes are not allowed in DELETE WHERE"},
		{"INSERT DATA { _:b <p> 1 } ; INSERT DATA { _:b <p> 2 }", 1, 43, "_:b is already used in another basic graph pattern or INSERT DATA"},
		{"CLEAR GRAPH", 1, 12, "end of input"},
		{"LOAD <a> INTO <b>", 1, 15, "GRAPH"},
	} {
		var err error
		if IsQuery(tc.text) {
			_, err = ParseQuery(tc.text)
		} else {
			_, err = ParseUpdate(tc.text)
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v, want a *SyntaxError", tc.text, err)
			continue
		}
		if se.Line != tc.line || se.Col != tc.col || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("%q: got %d:%d %q, want %d:%d containing %q", tc.text, se.Line, se.Col, se.Msg, tc.line, tc.col, tc.msg)
		}
	}
}

func TestParseDispatch(t *testing.T) {
	for text, isQuery := range map[string]bool{
		"PREFIX a: <x:> BASE <y:> ask {}": true,
		"# comment\nSELECT * {}":          true,
		"DESCRIBE <x:a>":                  true,
		"CONSTRUCT {} WHERE {}":           true,
		"PREFIX a: <x:> CLEAR ALL":        false,
		"":                                false,
	} {
		q, u, err := Parse(text)
		if err != nil {
			t.Errorf("%q: %v", text, err)
			continue
		}
		if (q != nil) != isQuery || (u != nil) == isQuery {
			t.Errorf("%q: query=%v update=%v, want query=%v", text, q != nil, u != nil, isQuery)
		}
	}
}

func TestCache(t *testing.T) {
	c := NewCache(2)
	q1, err := c.ParseQuery("SELECT * { ?s ?p ?o }")
	if err != nil {
		t.Fatal(err)
	}
	q1b, _ := c.ParseQuery("SELECT * { ?s ?p ?o }")
	if q1 != q1b {
		t.Error("a cached query must be returned as the same value")
	}
	if _, err := c.ParseQuery("SELECT * {"); err == nil {
		t.Error("bad query accepted")
	}
	if _, err := c.ParseQuery("SELECT * {"); err == nil {
		t.Error("bad query accepted the second time")
	}
	if c.Len() != 1 {
		t.Errorf("cache holds %d entries after a bad query, want 1 (errors are not kept)", c.Len())
	}
	if _, err := c.ParseUpdate("CLEAR ALL"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ParseQuery("ASK {}"); err != nil {
		t.Fatal(err)
	}
	if c.Len() != 2 {
		t.Errorf("cache holds %d entries, want 2 (its capacity)", c.Len())
	}
	if q, _ := c.ParseQuery("SELECT * { ?s ?p ?o }"); q == q1 {
		t.Error("the least recently used entry was not evicted")
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				text := "PREFIX a: <x:a> PREFIX b: <x:b> PREFIX c: <x:c> PREFIX d: <x:d> PREFIX e: <x:e> SELECT * { ?s ?p " + string(rune('a'+(g+i)%5)) + ": }"
				got, err := c.ParseQuery(text)
				if err != nil {
					t.Error(err)
					return
				}
				// The cached query is the one of this text (each names another
				// IRI), not another text's.
				if want, err := ParseQuery(text); err != nil || !sameAlgebra(got, want) {
					t.Errorf("%q: cached query %v, want %v (%v)", text, got, want, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	if c.Len() > 2 {
		t.Errorf("cache grew to %d entries beyond its capacity", c.Len())
	}
}

// TestCacheBytes: the cache keeps no text over MaxCachedText and stays
// within its byte budget, evicting the least recently used.
func TestCacheBytes(t *testing.T) {
	c := NewCacheBytes(1000, 3*entryCost(strings.Repeat("x", 1000)))
	big := "SELECT * { VALUES ?x { " + strings.Repeat("1 ", MaxCachedText/2) + "} }"
	q1, err := c.ParseQuery(big)
	if err != nil {
		t.Fatal(err)
	}
	if q2, _ := c.ParseQuery(big); q2 == q1 || c.Len() != 0 {
		t.Fatalf("a text of %d bytes was cached (%d entries)", len(big), c.Len())
	}
	text := func(i int) string {
		return fmt.Sprintf("SELECT * { ?s ?p %d } #%s", i, strings.Repeat("c", 1000))
	}
	for i := 0; i < 10; i++ {
		if _, err := c.ParseQuery(text(i)); err != nil {
			t.Fatal(err)
		}
		if c.Bytes() > 3*entryCost(strings.Repeat("x", 1000)) {
			t.Fatalf("cache charged %d bytes, over its budget", c.Bytes())
		}
	}
	if c.Len() != 2 {
		t.Errorf("cache holds %d entries, want the 2 that fit", c.Len())
	}
	q9, _ := c.ParseQuery(text(9))
	if q9b, _ := c.ParseQuery(text(9)); q9 != q9b {
		t.Error("the most recent entry was evicted")
	}
}

func TestWalk(t *testing.T) {
	q, err := ParseQuery(`SELECT * { ?s ?p ?o OPTIONAL { ?o ?q ?r } FILTER(NOT EXISTS { ?r ?x ?y MINUS { ?y ?z 1 } }) }`)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	Walk(q.Pattern, func(p Pattern) bool {
		kinds = append(kinds, strings.TrimPrefix(fmt.Sprintf("%T", p), "*sparql."))
		return true
	})
	want := "Project Filter Minus BGP BGP LeftJoin BGP BGP"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("Walk visited %s, want %s", got, want)
	}
	// The patterns of EXISTS in an aggregate's argument are walked too.
	q, err = ParseQuery(`SELECT (SUM(IF(EXISTS { ?s ?q 1 }, 1, 0)) AS ?n) { ?s ?p ?o }`)
	if err != nil {
		t.Fatal(err)
	}
	bgps := 0
	Walk(q.Pattern, func(p Pattern) bool {
		if _, ok := p.(*BGP); ok {
			bgps++
		}
		return true
	})
	if bgps != 2 {
		t.Errorf("Walk visited %d BGPs of a query with one in an aggregate's EXISTS and one in its WHERE, want 2", bgps)
	}
}

// TestParseBase: a base given by the caller resolves relative IRIs until a
// BASE of the text's own; the cache keeps one entry per base.
func TestParseBase(t *testing.T) {
	ctx := context.Background()
	q, err := ParseQueryBase(ctx, `SELECT * { <s> <p> ?o }`, "http://example.org/sparql")
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Pattern.String(); !strings.Contains(got, "http://example.org/s") {
		t.Errorf("relative IRI not resolved: %s", got)
	}
	u, err := ParseUpdateBase(ctx, `INSERT DATA { <s> <p> <o> } ; BASE <http://other/x/> INSERT DATA { <s> <p> <../o> }`, "http://example.org/sparql")
	if err != nil {
		t.Fatal(err)
	}
	if got := u.String(); !strings.Contains(got, "<http://example.org/o>") || !strings.Contains(got, "<http://other/x/s>") || !strings.Contains(got, "<http://other/o>") {
		t.Errorf("update: %s", got)
	}
	c := NewCache(10)
	a, _ := c.ParseQueryBase(ctx, `SELECT * { <s> <p> ?o }`, "http://a/")
	b, _ := c.ParseQueryBase(ctx, `SELECT * { <s> <p> ?o }`, "http://b/")
	if a == b || !strings.Contains(b.Pattern.String(), "http://b/s") {
		t.Errorf("the cache mixed up two bases")
	}
}
