package sparql

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/internal/shareddata"
)

// sameUpdate parses text with nothing lifted (the generated parser) and
// with every block lifted (thresholds 0), and reports a difference: in the
// algebra, or in the error and its position.
func sameUpdate(t *testing.T, name, text string) {
	t.Helper()
	var want, got *Update
	var wantErr, gotErr error
	unlifted(func() { want, wantErr = ParseUpdate(text) })
	withLiftMin(0, func() { got, gotErr = ParseUpdate(text) })
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: error %v, lifted %v", name, wantErr, gotErr)
	}
	if wantErr != nil {
		var a, b *SyntaxError
		if !errors.As(wantErr, &a) || !errors.As(gotErr, &b) || a.Line != b.Line || a.Col != b.Col {
			t.Fatalf("%s: error %v, lifted %v", name, wantErr, gotErr)
		}
		return
	}
	if !sameAlgebra(want, got) {
		t.Fatalf("%s: lifted algebra differs at %s", name, firstDiff("", reflect.ValueOf(want), reflect.ValueOf(got)))
	}
}

// TestLiftedQuadDataSameAlgebra: INSERT DATA and DELETE DATA blocks lexed
// by liftQuadData give the algebra the generated parser gives (every kind
// of term, ';' and ',' lists, GRAPH blocks, blank node scopes, several
// operations with their own prologues); texts that are not plain data or
// not valid give the parser's error at its position.
func TestLiftedQuadDataSameAlgebra(t *testing.T) {
	prologue := "BASE <http://example.org/base/> PREFIX ex: <http://example.org/> PREFIX : <http://example.org/d#> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
	objects := []string{
		"<http://example.org/a>", "<rel/b>", "<>", "ex:a", "ex:", ":x", "ex:a.b", "ex:a-b_c:d", "_:b1",
		`"s"`, `'s'`, `"a\"b\\n"`, `"é ü"`, `"x"@en`, `"x"@en-GB`, `"1"^^xsd:integer`, `"1"^^<http://example.org/dt>`,
		"1", "+1", "-1", "1.5", "-.5", "1e3", "1.E-3", ".5e+2", "true", "FALSE",
	}
	var data strings.Builder
	for i, o := range objects {
		fmt.Fprintf(&data, "ex:s%d ex:p %s # comment\n ; a ex:C , ex:D ;\n <http://example.org/q> %s .\n", i, o, objects[(i+5)%len(objects)])
		if i%7 == 0 {
			fmt.Fprintf(&data, "GRAPH ex:g%d { _:b%d ex:p %s ; ex:q 1 } .\nGRAPH <http://example.org/h> { ex:x ex:y ex:z . }\n", i, i, o)
		}
	}
	ground := strings.ReplaceAll(strings.ReplaceAll(data.String(), "_:b", "ex:b"), " <>", " <x>")
	texts := map[string]string{
		"insert":         prologue + "INSERT DATA { " + data.String() + " }",
		"delete":         prologue + "DELETE DATA {\n" + ground + "}",
		"two ops":        prologue + "INSERT DATA { " + data.String() + " } ;\nPREFIX ex: <http://other.example/> DELETE DATA { " + ground + " } ; INSERT DATA {}",
		"trailing ;":     prologue + "INSERT DATA { ex:a ex:b ex:c ; ; ex:d ex:e ; . ex:f ex:g ex:h ; }",
		"graph then dot": prologue + "INSERT DATA { GRAPH ex:g { ex:a ex:b ex:c } . ex:a ex:b ex:c . GRAPH ex:g {} }",
		"case":           prologue + "insert data { ex:a ex:b ex:c } ; Delete Data { graph ex:g { ex:a ex:b true } }",
		"values too":     prologue + "INSERT DATA { ex:a ex:b ex:c } ; DELETE { ?s ?p ?o } WHERE { VALUES ?s { ex:a ex:b } ?s ?p ?o }",
		// Not plain data, or errors: left to the parser.
		"blank in delete":   prologue + "DELETE DATA { _:b ex:p ex:o }",
		"variable":          prologue + "INSERT DATA { ?s ex:p ex:o }",
		"literal subject":   prologue + "INSERT DATA { \"s\" ex:p ex:o }",
		"two dots":          prologue + "INSERT DATA { ex:s ex:p ex:o .. ex:s ex:p ex:o }",
		"bnode list":        prologue + "INSERT DATA { ex:s ex:p [ ex:q 1 ] }",
		"undefined prefix":  prologue + "INSERT DATA { ex:s ex:p ex:o .\n ex:s nope:p ex:o }",
		"reused label":      prologue + "INSERT DATA { _:x ex:p 1 } ; INSERT DATA { _:x ex:p 2 }",
		"missing object":    prologue + "INSERT DATA { ex:s ex:p ex:o ; ex:q }",
		"nested graph":      prologue + "INSERT DATA { GRAPH ex:g { GRAPH ex:h { ex:a ex:b ex:c } } }",
		"unclosed":          prologue + "INSERT DATA { ex:s ex:p ex:o ",
		"dot before number": prologue + "INSERT DATA { ex:s ex:p 1. }",
		"long string":       prologue + "INSERT DATA { ex:s ex:p \"\"\"x\ny\"\"\" }",
		"error after":       prologue + "INSERT DATA { " + data.String() + " } ;\n INSERT DATA { ex:s ex:p ?o }",
	}
	for name, text := range texts {
		sameUpdate(t, name, text)
	}
	withLiftMin(0, func() {
		for name, want := range map[string]int{"insert": 1, "delete": 1, "two ops": 3, "graph then dot": 1, "case": 2, "values too": 2, "blank in delete": 0, "variable": 0, "error after": 1} {
			if _, lifted := liftValues(nil, texts[name]); len(lifted) != want {
				t.Errorf("%s: %d blocks lifted, want %d", name, len(lifted), want)
			}
		}
	})
}

// TestLiftedQuadDataW3C: every update of the W3C update syntax suites
// parses (or fails, at the same position) the same with every data block
// lifted.
func TestLiftedQuadDataW3C(t *testing.T) {
	n := 0
	for _, dir := range []string{"syntax-update-1", "syntax-update-2", "basic-update", "delete-data", "delete-insert", "add", "copy", "move", "clear", "drop"} {
		files, _ := filepath.Glob(filepath.Join(shareddata.Path("w3c", "sparql11", dir), "*.ru"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sameUpdate(t, f, string(b))
			n++
		}
	}
	if n == 0 {
		t.Skip("W3C suites not available")
	}
	t.Logf("%d updates", n)
}

// BenchmarkDenseInsertData: parsing a 4 MB INSERT DATA, lifted (the
// default) and through the generated parser.
func BenchmarkDenseInsertData(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("PREFIX ex: <http://example.org/>\nINSERT DATA {\n")
	for i := 0; sb.Len() < 4<<20; i++ {
		fmt.Fprintf(&sb, "<http://example.org/r%d> ex:p%d \"v%d\" ; ex:q %d .\n", i, i%10, i, i)
	}
	sb.WriteString("}")
	text := sb.String()
	for _, lift := range []bool{true, false} {
		b.Run(fmt.Sprintf("lifted=%v", lift), func(b *testing.B) {
			n := liftDataMin
			if !lift {
				n = len(text) + 1
			}
			withLiftMin(n, func() {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := ParseUpdate(text); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// TestSmallDataBlocksLifted: by default every INSERT DATA / DELETE DATA
// block of plain data is lifted, however small (the one-triple INSERTs of
// many writers), and small VALUES blocks are not.
func TestSmallDataBlocksLifted(t *testing.T) {
	for text, want := range map[string]int{
		`INSERT DATA { <http://e/s1> <http://e/p> "v1" }`:                             1,
		`DELETE DATA { <http://e/s1> <http://e/p> "v1" } ; INSERT DATA { <a> <b> 1 }`: 2,
		`INSERT DATA { }`:                               1,
		`SELECT * { VALUES ?x { 1 2 } }`:                0,
		`INSERT DATA { <http://e/s1> <http://e/p> ?v }`: 0, // not data: the parser reports it
	} {
		if _, lifted := liftValues(nil, text); len(lifted) != want {
			t.Errorf("%q: %d blocks lifted, want %d", text, len(lifted), want)
		}
		sameUpdateOrQuery(t, text)
	}
}

func sameUpdateOrQuery(t *testing.T, text string) {
	t.Helper()
	if IsQuery(text) {
		return
	}
	sameUpdate(t, text, text)
}
