package results

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"github.com/wukongd/wukongd/internal/shareddata"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wukongd/wukongd/rdf"
)

// benchDoc writes n rows shaped like LUBM answers: two IRIs (the second
// repeating, as ?y of L2 does) and a literal that is typed, language-tagged
// or plain in turn.
func benchDoc(f Format, n int) []byte {
	var buf bytes.Buffer
	w, _ := NewSolutionWriter(f, &buf)
	_ = w.WriteHead([]string{"x", "y", "z"})
	row := make([]rdf.Term, 3)
	for i := 0; i < n; i++ {
		row[0] = rdf.NewIRI(fmt.Sprintf("http://www.Department%d.University%d.edu/GraduateStudent%d", i%15, i%40, i))
		row[1] = rdf.NewIRI(fmt.Sprintf("http://www.University%d.edu", i%40))
		switch i % 3 {
		case 0:
			row[2] = rdf.NewLiteral(fmt.Sprint(i), rdf.XSDInteger)
		case 1:
			row[2] = rdf.NewLangLiteral("GraduateStudent"+fmt.Sprint(i), "en")
		default:
			row[2] = rdf.NewLiteral("name \"quoted\"\n"+fmt.Sprint(i), "")
		}
		_ = w.WriteRow(row)
	}
	_ = w.Close()
	return buf.Bytes()
}

func benchRead(b *testing.B, f Format, n int) {
	doc := benchDoc(f, n)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sr, err := NewSolutionReader(f, bytes.NewReader(doc))
		if err != nil {
			b.Fatal(err)
		}
		rows := 0
		for {
			_, err := sr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows++
		}
		if rows != n {
			b.Fatalf("%d rows, want %d", rows, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
}

func BenchmarkReadJSON10(b *testing.B)    { benchRead(b, FormatJSON, 10) }
func BenchmarkReadJSON10000(b *testing.B) { benchRead(b, FormatJSON, 10000) }
func BenchmarkReadXML10000(b *testing.B)  { benchRead(b, FormatXML, 10000) }
func BenchmarkReadTSV10000(b *testing.B)  { benchRead(b, FormatTSV, 10000) }
func BenchmarkReadCSV10000(b *testing.B)  { benchRead(b, FormatCSV, 10000) }

// readAllJSON reads a document with a reader constructor and returns what
// a consumer sees: vars, boolean, rows up to the first error.
type jsonOutcome struct {
	Vars            []string
	IsBool, Boolean bool
	Rows            [][]rdf.Term
	Err             error
}

func readOutcome(sr SolutionReader, err error) jsonOutcome {
	if err != nil {
		return jsonOutcome{Err: err}
	}
	o := jsonOutcome{Vars: sr.Vars(), IsBool: sr.IsBoolean(), Boolean: sr.Boolean()}
	for {
		row, err := sr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			o.Err = err
			break
		}
		o.Rows = append(o.Rows, append([]rdf.Term(nil), row...))
	}
	return o
}

// compareWithOracle checks the scanner against the encoding/json reader it
// replaced: on valid JSON both must give the same outcome; on invalid JSON
// the scanner may refuse what the old reader let through (it stopped at
// EOF or ']' where '}' belonged) but must not accept more.
func compareWithOracle(t *testing.T, doc []byte) {
	t.Helper()
	want := readOutcome(newOldJSONReader(bytes.NewReader(doc)))
	for _, r := range []io.Reader{bytes.NewReader(doc), iotest.OneByteReader(bytes.NewReader(doc)), iotest.HalfReader(bytes.NewReader(doc))} {
		got := readOutcome(newJSONReader(r))
		if (got.Err != nil) != (want.Err != nil) && !(got.Err != nil && !json.Valid(doc)) {
			t.Fatalf("%q:\nscanner error %v\noracle error %v", doc, got.Err, want.Err)
		}
		if got.Err != nil || want.Err != nil {
			if len(got.Rows) > len(want.Rows) {
				t.Fatalf("%q: scanner read %d rows before its error, oracle %d", doc, len(got.Rows), len(want.Rows))
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nscanner %#v\noracle  %#v", doc, got, want)
		}
	}
}

var jsonSeeds = []string{
	`{"head":{"vars":["a"]},"results":{"bindings":[]}}`,
	`{"head":{"vars":["a","b"]},"results":{"bindings":[{"a":{"type":"uri","value":"x"}},{"b":{"type":"literal","value":"1","datatype":"http://www.w3.org/2001/XMLSchema#integer"}},{}]}}`,
	`{"head":{"vars":["a"]},"results":{"bindings":[{"a":{"type":"literal","value":"chat","xml:lang":"FR"}},null]}}`,
	`{"head":{"vars":["a"]},"results":{"bindings":[{"a":{"TYPE":"bnode","Value":"b0"}}]}}`,
	`{"head":{"vars":["a"]},"results":{"bindings":[{"a":{"type":"what","value":"x"},"a":{"type":"uri","value":"y"}}]}}`,
	`{"head":{"vars":["a"]},"results":{"bindings":[{"a":null}]}}`,
	`{"head":{"vars":["a"]},"results":{"bindings":[{"b":{"type":"uri","value":"x"}}]}}`,
	`{"head":{"vars":["a"]},"results":{"bindings":[{"a":{"type":"uri","value":"x","extra":[1,-2.5e3,{"k":null},true,false]}}]}}`,
	`{"head":{"vars":["a"],"link":["http://l"]},"results":{"ordered":true,"distinct":false,"bindings":[{"a":{"type":"uri","value":"\u00e9\ud83d\ude00\ud800x\/\"\\\b\f\n\r\t"}}]}}`,
	`{"head":{"VARS":["a"],"vars":[null,"b"]},"results":{"bindings":[]}}`,
	`{"head":{"vars":["a","b","c"],"vars":[null]},"results":{"bindings":[]}}`,
	`{"head":{"vars":[]},"results":{"bindings":[]}}`,
	`{"head":null,"results":{"bindings":[{}]}}`,
	`{"head":{},"boolean":true}`,
	`{"head":{},"boolean":null}`,
	`{"boolean":false,"head":{}}`,
	`{"results":{"bindings":[{"a":{"type":"typed-literal","value":"1","datatype":"http://www.w3.org/2001/XMLSchema#integer"}}]},"head":{"vars":["a"]}}`,
	`{"results":{"BINDINGS":[{"a":{"type":"uri","value":"1"}}]},"head":{"vars":["a"]}}`,
	`{"head":{"vars":["a"]},"results":{"BINDINGS":[]}}`,
	`{"head":{"vars":["a"]},"results":null}`,
	`{"head":{"vars":["a"]}}`,
	`{"head":{"vars":["a"]},"results":{"bindings":[{"a":{"type":"uri","value":5}}]}}`,
	`{"head":{"vars":["a"]},"results":{"bindings":[{"a":{"type":"uri","value":"x"}} {"a":{"type":"uri","value":"y"}}]}}`,
	`{"head":{"vars":["a"]},"results":{"bindings":[{"a":{"type":"uri","value":"x"}},]}}`,
	"{\"head\":{\"vars\":[\"a\"]},\"results\":{\"bindings\":[{\"a\":{\"type\":\"uri\",\"value\":\"bad\xff\xe4\xb8utf8\xed\xa0\x80\"}}]}}",
	`{"head":{"vars":["a","a"]},"results":{"bindings":[{"a":{"type":"uri","value":"x"}}]}}`,
	`{"head":{"vars":["a","b","c","d","e","f","g","h","i","j"]},"results":{"bindings":[{"j":{"type":"uri","value":"x"},"a":{"type":"bnode","value":"y"}}]}}`,
	`{"head":{"vars":["a"]},"results":{"bindings":[{"a":{"type":"literal","value":"x","xml:lang":null,"datatype":"http://www.w3.org/2001/XMLSchema#string"}}]}}`,
	`{"head":{"vars":["a"]},"results":{"bindings":[{"\u0061":{"type":"uri","value":"x"}}]}}`,
	`[]`, ``, `{}`, `{"head":{"vars":["a"]},"results":{"bindings":[{"a":{"type":"uri","value":"x"}}`,
}

func TestJSONReaderMatchesOracle(t *testing.T) {
	for _, d := range jsonSeeds {
		compareWithOracle(t, []byte(d))
	}
	for _, n := range []int{0, 1, 10, 3000} {
		compareWithOracle(t, benchDoc(FormatJSON, n))
	}
	compareWithOracle(t, []byte(writeSolutions(t, FormatJSON, testVars, testRows)))
	dir := shareddata.Path("w3c", "sparql11")
	var files []string
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && filepath.Ext(p) == ".srj" {
			files = append(files, p)
		}
		return nil
	})
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		compareWithOracle(t, b)
	}
	t.Logf("%d W3C .srj files", len(files))
}

func FuzzJSONReader(f *testing.F) {
	for _, d := range jsonSeeds {
		f.Add([]byte(d))
	}
	f.Add(benchDoc(FormatJSON, 4))
	f.Fuzz(func(t *testing.T, doc []byte) {
		compareWithOracle(t, doc)
	})
}

func TestPlainString8(t *testing.T) {
	var b [8]byte
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			for k := range b {
				b[k] = 'a'
			}
			b[pos] = byte(c)
			want := plainStringByte[c]
			if got := plainString8(binary.LittleEndian.Uint64(b[:])); got != want {
				t.Fatalf("byte %#x at %d: %v, want %v", c, pos, got, want)
			}
		}
	}
}

func BenchmarkNegotiate(b *testing.B) {
	const accept = "application/sparql-results+json, application/sparql-results+xml;q=0.9, text/tab-separated-values;q=0.8, text/csv;q=0.5"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if Negotiate(accept, SolutionFormats) != FormatJSON || Negotiate(accept, GraphFormats) != FormatNone {
			b.Fatal("bad negotiation")
		}
	}
}

func TestNegotiateCached(t *testing.T) {
	for _, accept := range []string{"", "*/*", "text/csv", "application/json;q=0.1, text/*", "application/sparql-results+xml;q=0, */*;q=0.5", strings.Repeat("x", 600)} {
		for _, offers := range [][]Format{SolutionFormats, GraphFormats, BooleanFormats, nil} {
			want := negotiate(accept, offers)
			for i := 0; i < 2; i++ {
				if got := Negotiate(accept, offers); got != want {
					t.Errorf("Negotiate(%q, %v) = %v, want %v (call %d)", accept, offers, got, want, i)
				}
			}
		}
	}
}

// BenchmarkSmallResponse writes a 10-row JSON response per op, as the
// server does for the small LUBM queries.
func BenchmarkSmallResponse(b *testing.B) {
	b.ReportAllocs()
	var out bytes.Buffer
	for i := 0; i < b.N; i++ {
		out.Reset()
		w, _ := NewSolutionWriter(FormatJSON, &out)
		_ = w.WriteHead(testVars)
		for k := 0; k < 10; k++ {
			_ = w.WriteRow(testRows[k%len(testRows)])
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
