package exec

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// Named graphs: GRAPH ?g / GRAPH <g> / FROM / FROM NAMED on a small
// dataset, 1 and 4 shards, every mode.

// testDataset: the default graph says which graph talks about what; g1
// and g2 hold p and q edges (a p-chain split over the two graphs), g3 is
// empty.
func testDataset(t testing.TB, shards int) *graphstore.Dataset {
	t.Helper()
	tr := func(s, p, o string) rdf.Triple { return rdf.Triple{S: iri(s), P: iri(p), O: iri(o)} }
	db, err := graphstore.NewDatasetBuilder(shards)
	if err != nil {
		t.Fatal(err)
	}
	add := func(g rdf.Term, ts ...rdf.Triple) {
		if err := db.AddTriples(g, ts); err != nil {
			t.Fatal(err)
		}
	}
	add(rdf.Term{}, tr("a", "about", "g1"), tr("x", "about", "g2"), tr("d", "p", "e"))
	add(iri("g1"), tr("a", "p", "b"), tr("b", "p", "c"), tr("a", "q", "a"), tr("g1", "p", "a"))
	add(iri("g2"), tr("c", "p", "x"), tr("x", "q", "y"), tr("a", "p", "b"))
	if err := db.AddGraph(iri("g3")); err != nil {
		t.Fatal(err)
	}
	ds, err := db.Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	return ds
}

// graphRows renders a result as sorted lines of local names ("-" unbound).
func graphRows(res *Result) []string {
	var out []string
	var row []rdf.Term
	for i := 0; i < res.Len(); i++ {
		row = res.Row(i, row)
		var f []string
		for _, x := range row {
			switch {
			case x.IsZero():
				f = append(f, "-")
			default:
				f = append(f, strings.TrimPrefix(x.Value, px))
			}
		}
		out = append(out, strings.Join(f, " "))
	}
	slices.Sort(out)
	return out
}

func TestDatasetGraphs(t *testing.T) {
	cases := []struct {
		query string
		want  []string
	}{
		// The default graph alone.
		{"SELECT ?s ?o WHERE { ?s :p ?o }", []string{"d e"}},
		// GRAPH ?g: every named graph, ?g bound.
		{"SELECT ?g ?s ?o WHERE { GRAPH ?g { ?s :p ?o } }",
			[]string{"g1 a b", "g1 b c", "g1 g1 a", "g2 a b", "g2 c x"}},
		{"SELECT ?g WHERE { GRAPH ?g { } }", []string{"g1", "g2", "g3"}},
		// ?g used inside the graph: only g1 talks about itself.
		{"SELECT ?g ?o WHERE { GRAPH ?g { ?g :p ?o } }", []string{"g1 a"}},
		// GRAPH <g>: that graph only; a graph the dataset lacks: nothing.
		{"SELECT ?s ?o WHERE { GRAPH :g2 { ?s :p ?o } }", []string{"a b", "c x"}},
		{"SELECT ?s ?o WHERE { GRAPH :nope { ?s :p ?o } }", nil},
		{"SELECT ?s WHERE { GRAPH :g3 { ?s :p ?o } }", nil},
		// ?g bound by the default graph before GRAPH: only that graph.
		{"SELECT ?s ?g ?o WHERE { ?s :about ?g . GRAPH ?g { ?s :p ?o } }", []string{"a g1 b"}},
		{"SELECT ?s ?g ?y WHERE { ?s :about ?g . GRAPH ?g { ?s :q ?y } }", []string{"a g1 a", "x g2 y"}},
		// A join across two GRAPH patterns.
		{"SELECT ?x ?z WHERE { GRAPH :g1 { ?x :p ?y } GRAPH :g2 { ?y :p ?z } }", []string{"b x", "g1 b"}},
		// Paths inside GRAPH.
		{"SELECT ?y WHERE { GRAPH :g1 { :a :p+ ?y } }", []string{"b", "c"}},
		{"SELECT ?g ?y WHERE { GRAPH ?g { :a :p* ?y } }",
			[]string{"g1 a", "g1 b", "g1 c", "g2 a", "g2 b", "g3 a"}},
		// FROM: the default graph is that graph; GRAPH sees no named graph.
		{"SELECT ?s ?o FROM :g1 WHERE { ?s :p ?o }", []string{"a b", "b c", "g1 a"}},
		{"SELECT ?g FROM :g1 WHERE { GRAPH ?g { ?s ?p ?o } }", nil},
		// FROM twice: the merge, so a BGP joins across the graphs.
		{"SELECT ?x ?w FROM :g1 FROM :g2 WHERE { ?x :p ?y . ?y :p ?z . ?z :q ?w }", []string{"b y"}},
		{"SELECT ?s ?o FROM :g1 FROM :g2 WHERE { ?s :p ?o }", []string{"a b", "b c", "c x", "g1 a"}},
		{"SELECT ?y FROM :g1 FROM :g2 WHERE { :a :p+ ?y }", []string{"b", "c", "x"}},
		// FROM NAMED only: an empty default graph, those named graphs.
		{"SELECT ?s WHERE { ?s ?p ?o } ", []string{"a", "d", "x"}},
		{"SELECT ?s FROM NAMED :g2 WHERE { ?s ?p ?o }", nil},
		{"SELECT ?g ?s FROM NAMED :g2 WHERE { GRAPH ?g { ?s :q ?o } }", []string{"g2 x"}},
		{"SELECT ?s FROM NAMED :g2 WHERE { GRAPH :g1 { ?s :q ?o } }", nil},
		{"SELECT ?s ?g FROM :g1 FROM NAMED :g2 WHERE { ?s :q ?o GRAPH ?g { ?s :p ?o2 } }", []string{"a g2"}},
		// A FROM graph the dataset lacks is empty.
		{"SELECT ?s FROM :nope WHERE { ?s ?p ?o }", nil},
	}
	for _, shards := range []int{1, 4} {
		ds := testDataset(t, shards)
		e, err := NewDatasetEngine(ds, Config{})
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []planner.Mode{planner.ModeAuto, planner.ModeInPlace, planner.ModeForkJoin} {
			for _, c := range cases {
				q, err := sparql.ParseQuery("PREFIX : <" + px + "> " + c.query)
				if err != nil {
					t.Fatalf("%s: %v", c.query, err)
				}
				res, err := e.Run(context.Background(), q, Options{Mode: mode})
				if err != nil {
					t.Errorf("%d shards, %s: %s: %v", shards, mode, c.query, err)
					continue
				}
				if got := graphRows(res); strings.Join(got, "|") != strings.Join(c.want, "|") {
					t.Errorf("%d shards, %s: %s:\ngot  %q\nwant %q", shards, mode, c.query, got, c.want)
				}
			}
		}
		e.Close()
	}
}

// TestSingleStoreIsADataset: an engine over one store has no named graphs.
func TestSingleStoreIsADataset(t *testing.T) {
	e := newTestEngine(t, pathGraph(), 4)
	for query, n := range map[string]int{
		"SELECT * WHERE { ?s :p ?o }":                            6,
		"SELECT * WHERE { GRAPH ?g { ?s :p ?o } }":               0,
		"SELECT * WHERE { GRAPH :a { ?s :p ?o } }":               0,
		"SELECT * FROM :a WHERE { ?s :p ?o }":                    0,
		"SELECT * FROM NAMED :a WHERE { GRAPH ?g { ?s ?p ?o } }": 0,
		"SELECT * FROM NAMED :a WHERE { :a :p* ?y }":             1, // the empty default graph: zero length only
	} {
		q, err := sparql.ParseQuery("PREFIX : <" + px + "> " + query)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(context.Background(), q, Options{})
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if res.Len() != n {
			t.Errorf("%s: %d rows, want %d", query, res.Len(), n)
		}
	}
}

// TestDatasetEngineClose: the graph engines, empty graphs and union
// engines a dataset engine starts are all stopped by its Close, also with
// queries running concurrently.
func TestDatasetEngineClose(t *testing.T) {
	ds := testDataset(t, 3)
	base := runtime.NumGoroutine()
	queries := []string{
		"SELECT * WHERE { GRAPH ?g { ?s :p ?o } }",
		"SELECT * WHERE { GRAPH :nope { ?s :p ?o } }",
		"SELECT * FROM :g1 FROM :g2 WHERE { ?s :p ?o }",
		"SELECT * FROM NAMED :g1 WHERE { GRAPH ?g { ?s :p ?o } }",
	}
	for round := 0; round < 2; round++ {
		e, err := NewDatasetEngine(ds, Config{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				q, err := sparql.ParseQuery("PREFIX : <" + px + "> " + queries[i%len(queries)])
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := e.Run(context.Background(), q, Options{}); err != nil {
					t.Errorf("%s: %v", queries[i%len(queries)], err)
				}
			}(i)
		}
		wg.Wait()
		e.Close()
	}
	waitGoroutines(t, base)
}
