package loader

import (
	"errors"
	"strings"
	"testing"
)

// TestNestingLimit: documents nesting past MaxNesting are syntax errors
// (not stack overflows), in every syntax that nests; at the limit they
// parse.
func TestNestingLimit(t *testing.T) {
	rep := strings.Repeat
	deep := 200_000
	for _, tc := range []struct {
		name string
		f    Format
		doc  string
	}{
		{"turtle lists", Turtle, "<s> <p> " + rep("[ <p> ", deep) + "1" + rep(" ]", deep) + " ."},
		{"turtle collections", Turtle, "<s> <p> " + rep("( ", deep) + rep(") ", deep) + "."},
		{"turtle subject collection", Turtle, rep("( ", deep) + rep(") ", deep) + "<p> 1 ."},
		{"trig", TriG, "<g> { <s> <p> " + rep("[ <p> ", deep) + "1" + rep(" ]", deep) + " . }"},
		{"rdf/xml", RDFXML, `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">` +
			rep(`<rdf:Description><ex:p>`, deep) + rep(`</ex:p></rdf:Description>`, deep) + `</rdf:RDF>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseAll(t, tc.f, tc.doc, Options{Name: "deep"})
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(se.Msg, "nest deeper than the limit") {
				t.Fatalf("got %v, want the nesting limit", err)
			}
		})
	}
	ok := "<s> <p> " + rep("[ <p> ", MaxNesting) + "1" + rep(" ]", MaxNesting) + " ."
	if qs, err := parseAll(t, Turtle, ok, Options{}); err != nil || len(qs) != MaxNesting+1 {
		t.Fatalf("at the limit: %d quads, %v", len(qs), err)
	}
	// After a too-deep statement, with OnError, the next statement parses.
	bad := "<s> <p> " + rep("( ", MaxNesting+1) + rep(") ", MaxNesting+1) + ".\n<a> <b> <c> ."
	var n int
	qs, err := parseAll(t, Turtle, bad, Options{OnError: func(*SyntaxError) error { n++; return nil }})
	if err != nil || n != 1 || len(qs) != 1 {
		t.Fatalf("recovery: %d quads, %d errors, %v", len(qs), n, err)
	}
}
