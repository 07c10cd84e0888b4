package loader

import (
	"errors"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

func parseAll(t *testing.T, f Format, src string, opts Options) ([]rdf.Quad, error) {
	t.Helper()
	var out []rdf.Quad
	err := Parse(strings.NewReader(src), f, opts, func(q rdf.Quad) error {
		out = append(out, q)
		return nil
	})
	return out, err
}

func TestNTriplesTerms(t *testing.T) {
	src := "# comment\n" +
		"<http://a/s> <http://a/p> <http://a/o> .\n" +
		"\n" +
		"_:b1 <http://a/p> \"x\\ty\\u00E9\\U0001F600\" . # trailing\r\n" +
		"<http://a/s>\t<http://a/p>\t\"chat\"@EN-gb .\n" +
		"<http://a/s> <http://a/p> \"01\"^^<http://www.w3.org/2001/XMLSchema#integer>.\n" +
		"<http://a/s> <http://a/p> \"s\"^^<http://www.w3.org/2001/XMLSchema#string> .\n" +
		"<http://a/\\u00E9> <http://a/p> _:b1.\n" +
		"<http://a/s> <http://a/p> \"no newline at end\""
	qs, err := parseAll(t, NTriples, src+" .", Options{BlankPrefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	want := []rdf.Quad{
		{S: rdf.NewIRI("http://a/s"), P: rdf.NewIRI("http://a/p"), O: rdf.NewIRI("http://a/o")},
		{S: rdf.NewBlank("tub1"), P: rdf.NewIRI("http://a/p"), O: rdf.NewLiteral("x\ty\u00e9\U0001F600", "")},
		{S: rdf.NewIRI("http://a/s"), P: rdf.NewIRI("http://a/p"), O: rdf.NewLangLiteral("chat", "en-gb")},
		{S: rdf.NewIRI("http://a/s"), P: rdf.NewIRI("http://a/p"), O: rdf.NewLiteral("01", rdf.XSDInteger)},
		{S: rdf.NewIRI("http://a/s"), P: rdf.NewIRI("http://a/p"), O: rdf.NewLiteral("s", "")},
		{S: rdf.NewIRI("http://a/\u00e9"), P: rdf.NewIRI("http://a/p"), O: rdf.NewBlank("tub1")},
		{S: rdf.NewIRI("http://a/s"), P: rdf.NewIRI("http://a/p"), O: rdf.NewLiteral("no newline at end", "")},
	}
	if len(qs) != len(want) {
		t.Fatalf("got %d quads, want %d: %v", len(qs), len(want), qs)
	}
	for i := range want {
		if qs[i] != want[i] {
			t.Errorf("quad %d = %v, want %v", i, qs[i], want[i])
		}
	}
}

func TestNQuadsGraph(t *testing.T) {
	qs, err := parseAll(t, NQuads, "<http://a/s> <http://a/p> <http://a/o> <http://g/1> .\n<http://a/s> <http://a/p> <http://a/o> .\n_:x <http://a/p> _:y _:g .\n", Options{BlankPrefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 3 || qs[0].G != rdf.NewIRI("http://g/1") || !qs[1].G.IsZero() || qs[2].G != rdf.NewBlank("tug") {
		t.Fatalf("got %v", qs)
	}
	// A graph label is a syntax error in N-Triples.
	if _, err := parseAll(t, NTriples, "<http://a/s> <http://a/p> <http://a/o> <http://g/1> .\n", Options{}); err == nil {
		t.Fatal("N-Triples accepted a graph label")
	}
}

func TestNTriplesErrorPosition(t *testing.T) {
	var b strings.Builder
	for i := 1; i < 1000; i++ {
		b.WriteString("<http://a/s> <http://a/p> \"ok\" .\n")
	}
	b.WriteString("<http://a/s> <http://a/p> \"unterminated .\n")
	b.WriteString("<http://a/s> <http://a/p> <http://a/o> .\n")
	_, err := parseAll(t, NTriples, b.String(), Options{Name: "bad.nt"})
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a SyntaxError", err)
	}
	if se.Line != 1000 || se.Col != 27 || !strings.HasPrefix(se.Error(), "bad.nt:1000:27: ") {
		t.Fatalf("got %q", se.Error())
	}
	// With OnError the bad line is skipped and the rest is read.
	var skipped int
	qs, err := parseAll(t, NTriples, b.String(), Options{OnError: func(*SyntaxError) error { skipped++; return nil }})
	if err != nil || skipped != 1 || len(qs) != 1000 {
		t.Fatalf("skip: err %v, skipped %d, quads %d", err, skipped, len(qs))
	}
}

func TestNTriplesBadInput(t *testing.T) {
	bad := []string{
		"<http://a/s> <http://a/p> <o> .",           // relative IRI
		"<http://a/ s> <http://a/p> <http://a/o> .", // space in IRI
		"<http://a/s> <http://a/p> \"x\" ",          // no dot
		"<http://a/s> <http://a/p> \"x\"@ .",        // empty lang
		"<http://a/s> <http://a/p> \"\\q\" .",       // bad escape
		"<http://a/s> \"p\" <http://a/o> .",         // literal predicate
		"_:a <http://a/p> <http://a/o> . x",         // trailing junk
		"<http://a/\\u00ZZ> <http://a/p> <http://a/o> .",
		"_: <http://a/p> <http://a/o> .",
	}
	for _, src := range bad {
		_, err := parseAll(t, NTriples, src, Options{})
		if err == nil {
			t.Errorf("accepted %q", src)
			continue
		}
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != 1 || se.Col < 1 {
			t.Errorf("%q: error %v, want a *SyntaxError on line 1 with a column", src, err)
		}
	}
}

func TestBlankScopes(t *testing.T) {
	src := "_:a <http://a/p> _:b .\n"
	q1, err1 := parseAll(t, NTriples, src, Options{})
	q2, err2 := parseAll(t, NTriples, src, Options{})
	if err1 != nil || err2 != nil || len(q1) != 1 || len(q2) != 1 || !q1[0].S.IsBlank() || !q1[0].O.IsBlank() {
		t.Fatalf("parse: %v %v, %v %v", q1, err1, q2, err2)
	}
	if q1[0].S == q2[0].S {
		t.Fatalf("blank node _:a of two documents collide: %v", q1[0].S)
	}
	if q1[0].S == q1[0].O {
		t.Fatal("different labels gave the same blank node")
	}
}

func TestFormatForPath(t *testing.T) {
	cases := map[string]Format{"a.nt": NTriples, "a.nt.gz": NTriples, "x/b.NQ": NQuads, "c.ttl.gz": Turtle,
		"d.trig": TriG, "e.owl.gz": RDFXML, "f.rdf": RDFXML, "g.xml": RDFXML}
	for p, want := range cases {
		if f, ok := FormatForPath(p); !ok || f != want {
			t.Errorf("FormatForPath(%q) = %v, %v", p, f, ok)
		}
	}
	if _, ok := FormatForPath("x.txt.gz"); ok {
		t.Error("x.txt.gz has a format")
	}
}
