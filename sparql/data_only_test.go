package sparql

import (
	"context"
	"reflect"
	"testing"
)

// TestParseDataOnlyAgrees checks that the updates parseDataOnly takes
// parse to exactly what the generated parser's path builds, and that it
// leaves the others to it.
func TestParseDataOnlyAgrees(t *testing.T) {
	for _, c := range []struct {
		text string
		fast bool // parseDataOnly takes it
	}{
		{`INSERT DATA { <http://bench.example/s1> <http://bench.example/p> "v1" }`, true},
		{"  # a comment\n insert\tdata{<http://e/s> <http://e/p> 1 , 2.5 , -3e2 , true ; <http://e/q> \"x\"@en-GB, \"y\"^^<http://e/t> . }\n", true},
		{"INSERT DATA { <s> <p> <o> }", true}, // relative: resolved against the base
		{"INSERT DATA { _:b1 <http://e/p> _:b2 . _:b2 a <http://e/C> }", true},
		{"INSERT DATA { GRAPH <http://e/g> { <http://e/s> <http://e/p> <http://e/o> } <http://e/a> <http://e/b> <http://e/c> }", true},
		{"DELETE DATA { <http://e/s> <http://e/p> \"v\" . GRAPH <http://e/g> { <http://e/s> <http://e/p> 7 } }", true},
		{"INSERT DATA { }", true},
		{"DELETE DATA { _:b <http://e/p> 1 }", false},  // an error: the parser reports it
		{"INSERT DATA { ex:s <http://e/p> 1 }", false}, // undeclared prefix
		{"PREFIX ex: <http://e/> INSERT DATA { ex:s ex:p 1 }", false},
		{"INSERT DATA { <http://e/s> <http://e/p> 1 } ; INSERT DATA { <http://e/s> <http://e/p> 2 }", false},
		{"INSERT DATA { <http://e/s> <http://e/p> 1 } ;", false},
		{"INSERT DATA { <http://e/s> <http://e/p> ?x }", false},
		{"INSERT { <http://e/s> <http://e/p> 1 } WHERE {}", false},
		{"DELETE WHERE { ?s ?p ?o }", false},
		{"INSERTDATA { <http://e/s> <http://e/p> 1 }", false},
		{"INSERT DATA { <http://e/s> <http://e/p> 1 } junk", false},
	} {
		fu, ferr, ok := parseDataOnly(context.Background(), c.text, "http://base.example/")
		if ok != c.fast {
			t.Errorf("%q: taken %v, want %v", c.text, ok, c.fast)
			continue
		}
		gu, gerr := parseUpdateGenerated(context.Background(), c.text, "http://base.example/")
		if !ok {
			// ParseUpdateBase gives the generated parser's answer.
			u, err := ParseUpdateBase(context.Background(), c.text, "http://base.example/")
			if !reflect.DeepEqual(u, gu) || (err == nil) != (gerr == nil) {
				t.Errorf("%q: ParseUpdateBase %v, %v; want %v, %v", c.text, u, err, gu, gerr)
			}
			continue
		}
		if (ferr == nil) != (gerr == nil) || ferr != nil && ferr.Error() != gerr.Error() {
			t.Errorf("%q: error %v, generated parser %v", c.text, ferr, gerr)
			continue
		}
		if !reflect.DeepEqual(fu, gu) {
			t.Errorf("%q:\n got %#v\nwant %#v", c.text, fu, gu)
			if fu != nil && gu != nil {
				t.Errorf("ops %#v vs %#v", fu.Operations[0], gu.Operations[0])
			}
		}
	}
}

// BenchmarkParseOneTripleInsert is a writer's one-triple INSERT DATA:
// ParseUpdateBase (parseDataOnly) against the generated parser's path.
func BenchmarkParseOneTripleInsert(b *testing.B) {
	const u = `INSERT DATA { <http://bench.example/1764691200/s12345> <http://bench.example/p> "v12345" }`
	for _, c := range []struct {
		name  string
		parse func(context.Context, string, string) (*Update, error)
	}{{"ParseUpdateBase", ParseUpdateBase}, {"generated", parseUpdateGenerated}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := c.parse(context.Background(), u, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
