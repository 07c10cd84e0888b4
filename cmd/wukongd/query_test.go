package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// writeResult writes each query form in its own kind of format.
func TestWriteResultForms(t *testing.T) {
	b, err := graphstore.NewBuilder(2)
	if err != nil {
		t.Fatal(err)
	}
	p := rdf.NewIRI("http://e/p")
	if err := b.AddTriples([]rdf.Triple{
		{S: rdf.NewIRI("http://e/a"), P: p, O: rdf.NewLiteral("1", rdf.XSDInteger)},
	}); err != nil {
		t.Fatal(err)
	}
	st, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := exec.NewGraphEngine(st, exec.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, c := range []struct{ query, format, want string }{
		{`ASK { ?s <http://e/p> 1 }`, "", `{"head":{},"boolean":true}`},
		{`ASK { ?s <http://e/p> 2 }`, "xml", "false"},
		{`CONSTRUCT { ?s <http://e/q> ?w } WHERE { ?s <http://e/p> ?v BIND(?v + 1 AS ?w) }`, "",
			"<http://e/a> <http://e/q> \"2\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n"},
		{`SELECT ?v WHERE { ?s <http://e/p> ?v }`, "", "?v\n\"1\"^^<http://www.w3.org/2001/XMLSchema#integer>\n"},
	} {
		q, err := sparql.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		f, err := resultFormat(q.Form, c.format)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(context.Background(), q, exec.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := writeResult(&out, f, res); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(out.Bytes(), []byte(c.want)) {
			t.Errorf("%s: got %q, want it to contain %q", c.query, out.String(), c.want)
		}
	}
	if _, err := resultFormat(sparql.FormAsk, "tsv"); err == nil {
		t.Error("ASK results as TSV: no error")
	}
	if _, err := resultFormat(sparql.FormConstruct, "json"); err != nil {
		t.Errorf("CONSTRUCT as JSON-LD (json): %v", err)
	}
}
