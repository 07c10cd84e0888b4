package loader

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

func TestRDFXMLNoExternalEntities(t *testing.T) {
	doc := `<?xml version="1.0"?>
<!DOCTYPE rdf:RDF [
  <!ENTITY ex "http://example.org/">
  <!ENTITY secret SYSTEM "file:///etc/passwd">
]>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">
  <rdf:Description rdf:about="&ex;a"><ex:p>&secret;</ex:p></rdf:Description>
</rdf:RDF>`
	_, err := parseAll(t, RDFXML, doc, Options{Name: "x.rdf"})
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "secret") {
		t.Fatalf("external entity: got %v, want a syntax error naming it", err)
	}
	// An internal entity with a literal value is expanded.
	ok := strings.Replace(doc, "&secret;", "v", 1)
	qs, err := parseAll(t, RDFXML, ok, Options{})
	if err != nil || len(qs) != 1 || qs[0].S != rdf.NewIRI("http://example.org/a") || qs[0].O != rdf.NewLiteral("v", "") {
		t.Fatalf("got %v, %v", qs, err)
	}
}

func TestRDFXMLFeatures(t *testing.T) {
	doc := `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/"
  xml:base="http://example.org/base/doc" xml:lang="EN">
  <ex:Thing rdf:ID="t" ex:attr="a">
    <ex:list rdf:parseType="Collection"><rdf:Description rdf:about="#x"/></ex:list>
    <ex:bag><rdf:Bag><rdf:li>one</rdf:li><rdf:li xml:lang="">two</rdf:li></rdf:Bag></ex:bag>
    <ex:n rdf:datatype="http://www.w3.org/2001/XMLSchema#integer">01</ex:n>
    <ex:r rdf:ID="st" rdf:resource="other"/>
  </ex:Thing>
</rdf:RDF>`
	qs, err := parseAll(t, RDFXML, doc, Options{BlankPrefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`<http://example.org/base/doc#t> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/Thing>`,
		`<http://example.org/base/doc#t> <http://example.org/attr> "a"@en`,
		`_:tg1 <http://www.w3.org/1999/02/22-rdf-syntax-ns#first> <http://example.org/base/doc#x>`,
		`_:tg1 <http://www.w3.org/1999/02/22-rdf-syntax-ns#rest> <http://www.w3.org/1999/02/22-rdf-syntax-ns#nil>`,
		`<http://example.org/base/doc#t> <http://example.org/list> _:tg1`,
		`_:tg2 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://www.w3.org/1999/02/22-rdf-syntax-ns#Bag>`,
		`_:tg2 <http://www.w3.org/1999/02/22-rdf-syntax-ns#_1> "one"@en`,
		`_:tg2 <http://www.w3.org/1999/02/22-rdf-syntax-ns#_2> "two"`,
		`<http://example.org/base/doc#t> <http://example.org/bag> _:tg2`,
		`<http://example.org/base/doc#t> <http://example.org/n> "01"^^<http://www.w3.org/2001/XMLSchema#integer>`,
		`<http://example.org/base/doc#t> <http://example.org/r> <http://example.org/base/other>`,
		`<http://example.org/base/doc#st> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://www.w3.org/1999/02/22-rdf-syntax-ns#Statement>`,
		`<http://example.org/base/doc#st> <http://www.w3.org/1999/02/22-rdf-syntax-ns#subject> <http://example.org/base/doc#t>`,
		`<http://example.org/base/doc#st> <http://www.w3.org/1999/02/22-rdf-syntax-ns#predicate> <http://example.org/r>`,
		`<http://example.org/base/doc#st> <http://www.w3.org/1999/02/22-rdf-syntax-ns#object> <http://example.org/base/other>`,
	}
	var got []string
	for _, q := range qs {
		got = append(got, q.S.String()+" "+q.P.String()+" "+q.O.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRDFXMLEntityExpansionBounded: "billion laughs" (entities of
// entities, declared in a few hundred bytes) is a syntax error, found
// without expanding it; entities of entities within the budget expand, in
// attributes and text.
func TestRDFXMLEntityExpansionBounded(t *testing.T) {
	var dtd strings.Builder
	dtd.WriteString(`<!ENTITY lol0 "lol">`)
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&dtd, `<!ENTITY lol%d "%s">`, i, strings.Repeat(fmt.Sprintf("&lol%d;", i-1), 10))
	}
	doc := func(use string) string {
		return `<?xml version="1.0"?><!DOCTYPE rdf:RDF [` + dtd.String() + `]>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">
  <rdf:Description rdf:about="http://example.org/a"><ex:p>` + use + `</ex:p></rdf:Description>
</rdf:RDF>`
	}
	for _, use := range []string{"&lol10;", "&lol6;", strings.Repeat("&lol4;", 200)} {
		_, err := parseAll(t, RDFXML, doc(use), Options{Name: "laughs.rdf"})
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, "expand to more than") {
			t.Fatalf("%.20s: got %v, want the expansion limit", use, err)
		}
	}
	qs, err := parseAll(t, RDFXML, doc("&lol3;&lol0;"), Options{})
	if err != nil || len(qs) != 1 || qs[0].O != rdf.NewLiteral(strings.Repeat("lol", 1001), "") {
		t.Fatalf("lol3: got %d quads, %v", len(qs), err)
	}
	attr := strings.Replace(doc("x"), `rdf:about="http://example.org/a"`, `rdf:about="http://example.org/&lol2;"`, 1)
	qs, err = parseAll(t, RDFXML, attr, Options{})
	if err != nil || len(qs) != 1 || qs[0].S != rdf.NewIRI("http://example.org/"+strings.Repeat("lol", 100)) {
		t.Fatalf("attribute: got %v, %v", qs, err)
	}
}
