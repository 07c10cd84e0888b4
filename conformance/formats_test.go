package conformance

import (
	"bytes"
	"testing"

	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/results"
)

// TestFormatsRoundTrip checks our results writers against our readers and
// our loader on the whole W3C corpus: every expected answer (solutions and
// booleans) goes through the XML, JSON and TSV writers and back through
// the readers, and every expected graph and every data graph goes through
// the N-Triples, Turtle and RDF/XML writers and back through the loader;
// each must come back equal (up to blank-node renaming).
func TestFormatsRoundTrip(t *testing.T) {
	suite, _ := loadSuite(t)
	graphs := map[string]bool{}
	var answers, graphsChecked int
	for _, tc := range suite.Tests {
		for _, d := range append(append([]Doc(nil), tc.Data...), tc.GraphData...) {
			if graphs[d.Path] {
				continue
			}
			graphs[d.Path] = true
			ts, err := readGraph(d)
			if err != nil {
				t.Errorf("%s: %v", d.IRI, err)
				continue
			}
			graphsChecked++
			checkGraphRoundTrip(t, d.IRI, ts)
		}
		if tc.Result.Path == "" {
			continue
		}
		want, err := ReadExpected(tc.Result)
		if err != nil {
			t.Errorf("%s: %v", tc.ID, err)
			continue
		}
		switch want.Kind {
		case Graph:
			if !graphs[tc.Result.Path] {
				graphs[tc.Result.Path] = true
				graphsChecked++
				checkGraphRoundTrip(t, tc.Result.IRI, want.Graph)
			}
		case Boolean:
			answers++
			for _, f := range results.BooleanFormats {
				var buf bytes.Buffer
				if err := results.WriteBoolean(f, &buf, want.Boolean); err != nil {
					t.Errorf("%s: %s writer: %v", tc.ID, f, err)
					continue
				}
				back, err := results.Read(f, &buf)
				if err != nil || !back.IsBoolean || back.Boolean != want.Boolean {
					t.Errorf("%s: %s round trip of %v: %+v, %v", tc.ID, f, want.Boolean, back, err)
				}
			}
		case Solutions:
			if want.Format == results.FormatCSV {
				continue // lossy by design
			}
			answers++
			for _, f := range []results.Format{results.FormatXML, results.FormatJSON, results.FormatTSV} {
				back, err := roundTrip(want, f)
				if err != nil {
					t.Errorf("%s: %s round trip: %v", tc.ID, f, err)
					continue
				}
				if diff := Compare(want, back, nil); diff != "" {
					t.Errorf("%s (%s): %s round trip changes the answer: %s", tc.ID, tc.Result.IRI, f, diff)
				}
			}
		}
	}
	t.Logf("%d answers and %d graphs went through the writers and back", answers, graphsChecked)
	if answers < 200 || graphsChecked < 100 {
		t.Errorf("only %d answers and %d graphs checked", answers, graphsChecked)
	}
}

func checkGraphRoundTrip(t *testing.T, name string, ts []rdf.Triple) {
	t.Helper()
	for _, f := range []results.Format{results.FormatNTriples, results.FormatTurtle, results.FormatRDFXML} {
		var buf bytes.Buffer
		w, err := results.NewGraphWriter(f, &buf, results.GraphOptions{Prefixes: map[string]string{"ex": "http://example.org/", "rdf": rdf.RDFNS}})
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range ts {
			if err = w.WriteTriple(tr); err != nil {
				break
			}
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			t.Errorf("%s: %s writer: %v", name, f, err)
			continue
		}
		lf := map[results.Format]loader.Format{results.FormatNTriples: loader.NTriples, results.FormatTurtle: loader.Turtle, results.FormatRDFXML: loader.RDFXML}[f]
		var back []rdf.Triple
		err = loader.Parse(bytes.NewReader(buf.Bytes()), lf, loader.Options{Name: name + " as " + f.String()}, func(q rdf.Quad) error {
			back = append(back, q.Triple())
			return nil
		})
		if err != nil {
			t.Errorf("%s: the loader cannot read our %s: %v\n%s", name, f, err, buf.String())
			continue
		}
		if diff := Compare(&Answer{Kind: Graph, Graph: ts}, &Answer{Kind: Graph, Graph: back}, nil); diff != "" {
			t.Errorf("%s: %s round trip changes the graph: %s", name, f, diff)
		}
	}
}
