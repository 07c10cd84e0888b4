package results

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"github.com/wukongd/wukongd/internal/shareddata"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

var testVars = []string{"s", "o", "x"}

var testRows = [][]rdf.Term{
	{rdf.NewIRI("http://ex.org/a"), rdf.NewLiteral("plain, \"quoted\"", ""), rdf.Term{}},
	{rdf.NewBlank("b0"), rdf.NewLangLiteral("chat", "FR"), rdf.NewLiteral("42", rdf.XSDInteger)},
	{rdf.NewIRI("http://ex.org/<&>"), rdf.NewLiteral("line\nbreak\ttab\r", ""), rdf.NewLiteral("1.5e3", rdf.XSDDouble)},
	{rdf.Term{}, rdf.Term{}, rdf.Term{}},
}

func writeSolutions(t *testing.T, f Format, vars []string, rows [][]rdf.Term) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewSolutionWriter(f, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHead(vars); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.WriteRow(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestSolutionWritersExact(t *testing.T) {
	want := map[Format]string{
		FormatJSON: `{"head":{"vars":["s","o","x"]},
"results":{"bindings":[
{"s":{"type":"uri","value":"http://ex.org/a"},"o":{"type":"literal","value":"plain, \"quoted\""}},
{"s":{"type":"bnode","value":"b0"},"o":{"type":"literal","value":"chat","xml:lang":"fr"},"x":{"type":"literal","value":"42","datatype":"http://www.w3.org/2001/XMLSchema#integer"}},
{"s":{"type":"uri","value":"http://ex.org/<&>"},"o":{"type":"literal","value":"line\nbreak\ttab\r"},"x":{"type":"literal","value":"1.5e3","datatype":"http://www.w3.org/2001/XMLSchema#double"}},
{}
]}}
`,
		FormatCSV: "s,o,x\r\n" +
			"http://ex.org/a,\"plain, \"\"quoted\"\"\",\r\n" +
			"_:b0,chat,42\r\n" +
			"http://ex.org/<&>,\"line\nbreak\ttab\r\",1.5e3\r\n" +
			",,\r\n",
		FormatTSV: "?s\t?o\t?x\n" +
			"<http://ex.org/a>\t\"plain, \\\"quoted\\\"\"\t\n" +
			"_:b0\t\"chat\"@fr\t\"42\"^^<http://www.w3.org/2001/XMLSchema#integer>\n" +
			"<http://ex.org/\\u003C&\\u003E>\t\"line\\nbreak\\ttab\\r\"\t\"1.5e3\"^^<http://www.w3.org/2001/XMLSchema#double>\n" +
			"\t\t\n",
		FormatXML: `<?xml version="1.0" encoding="UTF-8"?>
<sparql xmlns="http://www.w3.org/2005/sparql-results#">
  <head>
    <variable name="s"/>
    <variable name="o"/>
    <variable name="x"/>
  </head>
  <results>
    <result>
      <binding name="s"><uri>http://ex.org/a</uri></binding>
      <binding name="o"><literal>plain, "quoted"</literal></binding>
    </result>
    <result>
      <binding name="s"><bnode>b0</bnode></binding>
      <binding name="o"><literal xml:lang="fr">chat</literal></binding>
      <binding name="x"><literal datatype="http://www.w3.org/2001/XMLSchema#integer">42</literal></binding>
    </result>
    <result>
      <binding name="s"><uri>http://ex.org/&lt;&amp;&gt;</uri></binding>
      <binding name="o"><literal>line
break	tab&#xD;</literal></binding>
      <binding name="x"><literal datatype="http://www.w3.org/2001/XMLSchema#double">1.5e3</literal></binding>
    </result>
    <result>
    </result>
  </results>
</sparql>
`,
	}
	for f, w := range want {
		got := writeSolutions(t, f, testVars, testRows)
		if got != w {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", f, got, w)
		}
	}
}

func TestSolutionRoundTrip(t *testing.T) {
	for _, f := range []Format{FormatJSON, FormatXML, FormatTSV} {
		doc := writeSolutions(t, f, testVars, testRows)
		res, err := Read(f, strings.NewReader(doc))
		if err != nil {
			t.Fatalf("%s: %v\n%s", f, err, doc)
		}
		if !reflect.DeepEqual(res.Vars, testVars) {
			t.Errorf("%s: vars %v", f, res.Vars)
		}
		if !reflect.DeepEqual(res.Rows, testRows) {
			t.Errorf("%s: rows\n%v\nwant\n%v", f, res.Rows, testRows)
		}
	}
	// CSV loses kinds and datatypes.
	res, err := Read(FormatCSV, strings.NewReader(writeSolutions(t, FormatCSV, testVars, testRows)))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]rdf.Term{
		{rdf.NewIRI("http://ex.org/a"), rdf.NewLiteral("plain, \"quoted\"", ""), {}},
		{rdf.NewBlank("b0"), rdf.NewLiteral("chat", ""), rdf.NewLiteral("42", "")},
		{rdf.NewLiteral("http://ex.org/<&>", ""), rdf.NewLiteral("line\nbreak\ttab\r", ""), rdf.NewLiteral("1.5e3", "")},
		{{}, {}, {}},
	}
	if !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("csv rows\n%v\nwant\n%v", res.Rows, want)
	}
}

func TestEmptyAndBoolean(t *testing.T) {
	for _, f := range SolutionFormats {
		doc := writeSolutions(t, f, nil, nil)
		res, err := Read(f, strings.NewReader(doc))
		if err != nil {
			t.Fatalf("%s: %v\n%q", f, err, doc)
		}
		if len(res.Vars) != 0 || len(res.Rows) != 0 || res.IsBoolean {
			t.Errorf("%s: %+v", f, res)
		}
	}
	for _, f := range BooleanFormats {
		for _, b := range []bool{true, false} {
			var buf bytes.Buffer
			if err := WriteBoolean(f, &buf, b); err != nil {
				t.Fatal(err)
			}
			res, err := Read(f, &buf)
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsBoolean || res.Boolean != b {
				t.Errorf("%s %v: %+v", f, b, res)
			}
		}
	}
	if err := WriteBoolean(FormatCSV, io.Discard, true); err == nil {
		t.Error("boolean in CSV accepted")
	}
}

func TestWriterMisuse(t *testing.T) {
	w, _ := NewSolutionWriter(FormatJSON, io.Discard)
	if err := w.WriteRow(nil); err == nil {
		t.Error("row before head accepted")
	}
	_ = w.WriteHead([]string{"a"})
	if err := w.WriteRow([]rdf.Term{{}, {}}); err == nil {
		t.Error("row of wrong width accepted")
	}
	if _, err := NewSolutionWriter(FormatTurtle, io.Discard); err == nil {
		t.Error("turtle as solution format accepted")
	}
}

func TestJSONStringEscaping(t *testing.T) {
	for _, s := range []string{"", "a\"b\\c", "\x00\x1f\u2028\u2029", "é中😀", "bad\xffutf8"} {
		enc := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("%q -> %s: %v", s, enc, err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if got != want {
			t.Errorf("%q -> %s -> %q", s, enc, got)
		}
	}
}

func TestJSONReaderResultsBeforeHead(t *testing.T) {
	doc := `{"results":{"bindings":[{"a":{"type":"typed-literal","value":"1","datatype":"` + rdf.XSDInteger + `"}}]},"head":{"vars":["a"]}}`
	res, err := Read(FormatJSON, strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0][0] != rdf.NewLiteral("1", rdf.XSDInteger) {
		t.Errorf("%+v", res)
	}
	for _, bad := range []string{``, `[]`, `{"head":{"vars":["a"]},"results":{"bindings":[{"b":{"type":"uri","value":"x"}}]}}`, `{"head":{"vars":["a"]},"results":{"bindings":[{"a":{"type":"what","value":"x"}}]}}`} {
		if _, err := Read(FormatJSON, strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestParseTerm(t *testing.T) {
	cases := []struct {
		in   string
		want rdf.Term
		n    int
	}{
		{"<http://a/b>", rdf.NewIRI("http://a/b"), 12},
		{"<http://a/\\u00E9>", rdf.NewIRI("http://a/é"), 17},
		{"_:b0 .", rdf.NewBlank("b0"), 4},
		{"_:b0.", rdf.NewBlank("b0"), 4},
		{`"a\tb"@en-GB`, rdf.NewLangLiteral("a\tb", "en-gb"), 12},
		{`"x"^^<http://www.w3.org/2001/XMLSchema#string>`, rdf.NewLiteral("x", ""), 46},
		{`'single'`, rdf.NewLiteral("single", ""), 8},
		{`"""long "q" """`, rdf.NewLiteral(`long "q" `, ""), 15},
		{"4", rdf.NewLiteral("4", rdf.XSDInteger), 1},
		{"-5.5", rdf.NewLiteral("-5.5", rdf.XSDDecimal), 4},
		{"1e0", rdf.NewLiteral("1e0", rdf.XSDDouble), 3},
		{".5E-2", rdf.NewLiteral(".5E-2", rdf.XSDDouble), 5},
		{"true", rdf.NewLiteral("true", rdf.XSDBoolean), 4},
		{`"\U0001F600"`, rdf.NewLiteral("😀", ""), 12},
	}
	for _, c := range cases {
		got, n, err := ParseTerm(c.in)
		if err != nil || got != c.want || n != c.n {
			t.Errorf("ParseTerm(%q) = %v, %d, %v; want %v, %d", c.in, got, n, err, c.want, c.n)
		}
	}
	for _, bad := range []string{"", "<abc", `"abc`, `"a\qb"`, "_:", "x", "1e", `"a"@`, "+"} {
		if _, _, err := ParseTerm(bad); err == nil {
			t.Errorf("ParseTerm(%q) accepted", bad)
		}
	}
}

// The W3C result files the evaluation tests compare against must read.
func TestReadW3CFiles(t *testing.T) {
	dir := shareddata.Path("w3c", "sparql11")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("W3C suite not present:", err)
	}
	res, err := readFile(filepath.Join(dir, "csv-tsv-res/csvtsv02.tsv"), FormatTSV)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Vars, []string{"s", "p", "o", "p2", "o2"}) || len(res.Rows) != 6 {
		t.Fatalf("csvtsv02.tsv: %v, %d rows", res.Vars, len(res.Rows))
	}
	if got := res.Rows[3][2]; got != rdf.NewLiteral("4", rdf.XSDInteger) {
		t.Errorf("row 3 ?o = %v", got)
	}
	if !res.Rows[1][3].IsZero() || res.Rows[5][2] != rdf.NewBlank("b0") {
		t.Errorf("rows %v", res.Rows)
	}
	res, err = readFile(filepath.Join(dir, "csv-tsv-res/csvtsv01.csv"), FormatCSV)
	if err != nil || len(res.Rows) != 6 || res.Rows[5][2] != rdf.NewBlank("a") || res.Rows[0][2] != rdf.NewIRI("http://example.org/s2") {
		t.Fatalf("csvtsv01.csv: %v %+v", err, res)
	}
	res, err = readFile(filepath.Join(dir, "json-res/jsonres01.srj"), FormatJSON)
	if err != nil || len(res.Rows) == 0 || res.Rows[0][0] != rdf.NewIRI("http://example.org/s1") {
		t.Fatalf("jsonres01.srj: %v %+v", err, res)
	}
	// Every .srx and .srj file reads.
	n := 0
	err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		var f Format
		switch filepath.Ext(p) {
		case ".srx":
			f = FormatXML
		case ".srj":
			f = FormatJSON
		case ".tsv":
			f = FormatTSV
		default:
			return nil
		}
		if _, err := readFile(p, f); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("read %d W3C result files", n)
}

func readFile(path string, f Format) (*Results, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return Read(f, fh)
}

func TestNegotiate(t *testing.T) {
	cases := []struct {
		accept string
		offers []Format
		want   Format
	}{
		{"", SolutionFormats, FormatJSON},
		{"*/*", SolutionFormats, FormatJSON},
		{"text/csv", SolutionFormats, FormatCSV},
		{"text/tab-separated-values, text/csv;q=0.9", SolutionFormats, FormatTSV},
		{"text/csv;q=0.5, application/sparql-results+xml", SolutionFormats, FormatXML},
		{"application/json", SolutionFormats, FormatJSON},
		{"text/*", SolutionFormats, FormatXML}, // text/xml
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", SolutionFormats, FormatXML},
		{"text/html", SolutionFormats, FormatNone},
		{"text/csv;q=0", SolutionFormats, FormatNone},
		{"*/*;q=0.1, text/csv;q=0", SolutionFormats, FormatJSON},
		{"text/turtle", GraphFormats, FormatTurtle},
		{"application/n-triples", GraphFormats, FormatNTriples},
		{"text/plain", GraphFormats, FormatNTriples},
		{"application/ld+json", GraphFormats, FormatJSONLD},
		{"application/json", GraphFormats, FormatJSONLD},
		{"application/rdf+xml", GraphFormats, FormatRDFXML},
		{"application/sparql-results+json", GraphFormats, FormatNone},
		{"APPLICATION/N-TRIPLES; charset=utf-8", GraphFormats, FormatNTriples},
		{"text/csv", BooleanFormats, FormatNone},
		{"garbage", SolutionFormats, FormatNone},
	}
	for _, c := range cases {
		if got := Negotiate(c.accept, c.offers); got != c.want {
			t.Errorf("Negotiate(%q) = %s, want %s", c.accept, got, c.want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	cases := []struct {
		s      string
		offers []Format
		want   Format
	}{
		{"json", SolutionFormats, FormatJSON},
		{"srx", SolutionFormats, FormatXML},
		{"CSV", SolutionFormats, FormatCSV},
		{"text/tab-separated-values", SolutionFormats, FormatTSV},
		{"ttl", GraphFormats, FormatTurtle},
		{"nt", GraphFormats, FormatNTriples},
		{"json-ld", GraphFormats, FormatJSONLD},
		{"xml", GraphFormats, FormatRDFXML},
		{"json", GraphFormats, FormatJSONLD},
		{"html", SolutionFormats, FormatNone},
	}
	for _, c := range cases {
		if got := ParseFormat(c.s, c.offers); got != c.want {
			t.Errorf("ParseFormat(%q) = %s, want %s", c.s, got, c.want)
		}
	}
}

var testTriples = []rdf.Triple{
	{S: rdf.NewIRI("http://ex.org/a"), P: rdf.NewIRI(rdf.RDFType), O: rdf.NewIRI("http://ex.org/C")},
	{S: rdf.NewIRI("http://ex.org/a"), P: rdf.NewIRI("http://ex.org/name"), O: rdf.NewLiteral("A \"b\"", "")},
	{S: rdf.NewIRI("http://ex.org/a"), P: rdf.NewIRI("http://ex.org/name"), O: rdf.NewLangLiteral("ah", "en")},
	{S: rdf.NewIRI("http://ex.org/a"), P: rdf.NewIRI("http://other.org/v#age"), O: rdf.NewLiteral("7", rdf.XSDInteger)},
	{S: rdf.NewIRI("http://ex.org/a"), P: rdf.NewIRI(rdf.RDFType), O: rdf.NewIRI("http://ex.org/D")},
	{S: rdf.NewBlank("n1"), P: rdf.NewIRI("http://ex.org/knows"), O: rdf.NewIRI("http://ex.org/a")},
}

func writeGraph(t *testing.T, f Format, triples []rdf.Triple, opts GraphOptions) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewGraphWriter(f, &buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range triples {
		if err := w.WriteTriple(tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestNTriplesWriteRead(t *testing.T) {
	doc := writeGraph(t, FormatNTriples, testTriples, GraphOptions{})
	want := `<http://ex.org/a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/C> .
<http://ex.org/a> <http://ex.org/name> "A \"b\"" .
<http://ex.org/a> <http://ex.org/name> "ah"@en .
<http://ex.org/a> <http://other.org/v#age> "7"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://ex.org/a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/D> .
_:n1 <http://ex.org/knows> <http://ex.org/a> .
`
	if doc != want {
		t.Errorf("got\n%s\nwant\n%s", doc, want)
	}
	r := NewNTriplesReader(strings.NewReader("# comment\n\n" + doc))
	var got []rdf.Triple
	for {
		tr, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tr)
	}
	if !reflect.DeepEqual(got, testTriples) {
		t.Errorf("read back %v", got)
	}
	for _, bad := range []string{"<a> <b> <c>\n", "<a> <b> .\n", "\"lit\" <b> <c> .\n", "<a> <b> <c> . junk\n"} {
		if _, err := NewNTriplesReader(strings.NewReader(bad)).Next(); err == nil || err == io.EOF {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestTurtleWriter(t *testing.T) {
	doc := writeGraph(t, FormatTurtle, testTriples, GraphOptions{Prefixes: map[string]string{"ex": "http://ex.org/", "xsd": rdf.XSD, "bad prefix": "http://x/"}})
	want := `@prefix ex: <http://ex.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

ex:a a ex:C ;
    ex:name "A \"b\"" ,
        "ah"@en ;
    <http://other.org/v#age> "7"^^xsd:integer ;
    a ex:D .
_:n1 ex:knows ex:a .
`
	if doc != want {
		t.Errorf("got\n%s\nwant\n%s", doc, want)
	}
	if got := writeGraph(t, FormatTurtle, nil, GraphOptions{}); got != "" {
		t.Errorf("empty graph: %q", got)
	}
}

func TestJSONLDWriter(t *testing.T) {
	doc := writeGraph(t, FormatJSONLD, testTriples, GraphOptions{})
	var nodes []map[string]any
	if err := json.Unmarshal([]byte(doc), &nodes); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, doc)
	}
	// rdf:type comes back after other predicates: a second node object for
	// the same subject, so that no key repeats.
	if len(nodes) != 3 {
		t.Fatalf("%d node objects:\n%s", len(nodes), doc)
	}
	want0 := map[string]any{
		"@id":   "http://ex.org/a",
		"@type": []any{"http://ex.org/C"},
		"http://ex.org/name": []any{
			map[string]any{"@value": `A "b"`},
			map[string]any{"@value": "ah", "@language": "en"},
		},
		"http://other.org/v#age": []any{map[string]any{"@value": "7", "@type": rdf.XSDInteger}},
	}
	if !reflect.DeepEqual(nodes[0], want0) {
		t.Errorf("node 0 = %v", nodes[0])
	}
	if !reflect.DeepEqual(nodes[1], map[string]any{"@id": "http://ex.org/a", "@type": []any{"http://ex.org/D"}}) {
		t.Errorf("node 1 = %v", nodes[1])
	}
	if !reflect.DeepEqual(nodes[2], map[string]any{"@id": "_:n1", "http://ex.org/knows": []any{map[string]any{"@id": "http://ex.org/a"}}}) {
		t.Errorf("node 2 = %v", nodes[2])
	}
	if got := writeGraph(t, FormatJSONLD, nil, GraphOptions{}); strings.TrimSpace(got) != "[\n]" {
		t.Errorf("empty graph: %q", got)
	}
}

func TestRDFXMLWriter(t *testing.T) {
	doc := writeGraph(t, FormatRDFXML, testTriples, GraphOptions{Prefixes: map[string]string{"ex": "http://ex.org/"}})
	// Decode it back with encoding/xml as an RDF/XML consumer would see it.
	type prop struct {
		XMLName  xml.Name
		Resource string `xml:"http://www.w3.org/1999/02/22-rdf-syntax-ns# resource,attr"`
		Datatype string `xml:"http://www.w3.org/1999/02/22-rdf-syntax-ns# datatype,attr"`
		Lang     string `xml:"http://www.w3.org/XML/1998/namespace lang,attr"`
		Text     string `xml:",chardata"`
	}
	type desc struct {
		About  string `xml:"http://www.w3.org/1999/02/22-rdf-syntax-ns# about,attr"`
		NodeID string `xml:"http://www.w3.org/1999/02/22-rdf-syntax-ns# nodeID,attr"`
		Props  []prop `xml:",any"`
	}
	var root struct {
		Descs []desc `xml:"http://www.w3.org/1999/02/22-rdf-syntax-ns# Description"`
	}
	if err := xml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	var got []rdf.Triple
	for _, d := range root.Descs {
		s := rdf.NewIRI(d.About)
		if d.NodeID != "" {
			s = rdf.NewBlank(d.NodeID)
		}
		for _, p := range d.Props {
			o := rdf.NewLiteral(p.Text, p.Datatype)
			if p.Lang != "" {
				o = rdf.NewLangLiteral(p.Text, p.Lang)
			}
			if p.Resource != "" {
				o = rdf.NewIRI(p.Resource)
			}
			got = append(got, rdf.Triple{S: s, P: rdf.NewIRI(p.XMLName.Space + p.XMLName.Local), O: o})
		}
	}
	// The blank object is written with rdf:nodeID; this decoder does not
	// read it, so compare the first five triples.
	if !reflect.DeepEqual(got[:5], testTriples[:5]) {
		t.Errorf("read back %v\n%s", got, doc)
	}
	bad := rdf.Triple{S: rdf.NewIRI("http://a"), P: rdf.NewIRI("http://ex.org/p/"), O: rdf.NewIRI("http://b")}
	w, _ := NewGraphWriter(FormatRDFXML, io.Discard, GraphOptions{})
	if err := w.WriteTriple(bad); err == nil {
		t.Error("unsplittable predicate accepted")
	}
}

func BenchmarkJSONWriter(b *testing.B) {
	w, _ := NewSolutionWriter(FormatJSON, io.Discard)
	_ = w.WriteHead(testVars)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = w.WriteRow(testRows[i%len(testRows)])
	}
	_ = w.Close()
}

func BenchmarkTSVWriter(b *testing.B) {
	w, _ := NewSolutionWriter(FormatTSV, io.Discard)
	_ = w.WriteHead(testVars)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = w.WriteRow(testRows[i%len(testRows)])
	}
	_ = w.Close()
}
