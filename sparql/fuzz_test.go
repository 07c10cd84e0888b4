package sparql

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that no text makes the parser panic, that every error
// is a *SyntaxError with a position, and that whatever parses prints as
// SPARQL that parses again to the same algebra.
func FuzzParse(f *testing.F) {
	for _, file := range queryFiles(f) {
		f.Add(readText(f, file))
	}
	f.Add("INSERT DATA { <a> <b> 1 } ; DELETE WHERE { ?s ?p ?o } ; CLEAR ALL")
	f.Add("WITH <g> DELETE { ?s ?p ?o } INSERT { ?s ?p [] } USING <u> WHERE { ?s ?p ?o }")
	// Near and past the limits: nesting, chains, bad text.
	f.Add("SELECT * WHERE " + strings.Repeat("{", MaxNesting+1) + strings.Repeat("}", MaxNesting+1))
	f.Add("SELECT * WHERE { FILTER(" + strings.Repeat("(", 50) + "?x || ?x && ?x + 1 * 2" + strings.Repeat(")", 50) + ") }")
	f.Add("SELECT * WHERE { ?s <p>/(<q>|^<r>)*/!(<a>|^<b>) [ <c> ( 1 [ <d> 2 ] ) ] OPTIONAL { } MINUS { } BIND(1 AS ?z) }")
	f.Add("SELECT * WHERE { ?s ?p \"\xff\x00\" }")
	f.Fuzz(func(t *testing.T, text string) {
		q, u, err := Parse(text)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Col < 1 {
				t.Fatalf("error %v is not a *SyntaxError with a position", err)
			}
			return
		}
		if q != nil {
			q2, err := ParseQuery(q.String())
			if err != nil {
				t.Fatalf("printed query does not parse: %v\n%s", err, q.String())
			}
			if !sameAlgebra(q, q2) {
				t.Fatalf("round trip changed the query:\n%s\n%s", q.String(), q2.String())
			}
			return
		}
		u2, err := ParseUpdate(u.String())
		if err != nil {
			t.Fatalf("printed update does not parse: %v\n%s", err, u.String())
		}
		if !sameAlgebra(u, u2) {
			t.Fatalf("round trip changed the update:\n%s\n%s", u.String(), u2.String())
		}
	})
}
