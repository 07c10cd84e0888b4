package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/client"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
	"github.com/wukongd/wukongd/web"
)

const exNS = "http://example.org/"

func ex(local string) rdf.Term { return rdf.NewIRI(exNS + local) }

// checkOnlyCurrentLive checks that old generations were closed once their
// readers were done (only the current one is live) and that the fabric
// counters track exactly the current dataset's stores.
func checkOnlyCurrentLive(t *testing.T, svc *Service) {
	t.Helper()
	// A request's generation is released when its handler is done, which
	// is after the client has read the response: wait for those releases.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		svc.statsMu.Lock()
		n := len(svc.live)
		svc.statsMu.Unlock()
		if n == 1 {
			break
		}
	}
	svc.statsMu.Lock()
	defer svc.statsMu.Unlock()
	if len(svc.live) != 1 {
		t.Errorf("%d live generations, want 1", len(svc.live))
	}
	cur := storesOf(svc.cur.Load().ds)
	if len(svc.fabrics) != len(cur) {
		t.Errorf("%d fabrics counted live, the current dataset has %d stores", len(svc.fabrics), len(cur))
	}
	for _, st := range cur {
		if n := svc.fabrics[st.Fabric()]; n != 1 {
			t.Errorf("the fabric of a store of the current dataset is held by %d stores of live generations, want 1", n)
		}
	}
}

// graphLines returns the triples of a graph ("" default) as sorted
// N-Triples lines, or the HTTP status of a failure.
func graphLines(t *testing.T, c *client.Client, graph string) ([]string, int) {
	t.Helper()
	tr, err := c.GetGraph(context.Background(), graph)
	var he *client.HTTPError
	if errors.As(err, &he) {
		return nil, he.StatusCode
	}
	if err != nil {
		t.Fatal(err)
	}
	all, err := tr.All()
	if err != nil {
		t.Fatal(err)
	}
	return sortedLines(all), http.StatusOK
}

func nt(triples ...rdf.Triple) []string { return sortedLines(triples) }

func tri(s, p string, o rdf.Term) rdf.Triple { return rdf.Triple{S: ex(s), P: ex(p), O: o} }

func TestNamedGraphStore(t *testing.T) {
	svc := openService(t, NewEmpty, Options{Shards: 3})
	c, hs := serve(t, svc, nil)
	ctx := context.Background()
	g1, g2 := exNS+"g1", exNS+"g2"
	store := func(g string) string { return hs.URL + "/store?graph=" + url.QueryEscape(g) }

	// GET, HEAD and DELETE of a graph that does not exist: 404.
	if _, code := graphLines(t, c, g1); code != http.StatusNotFound {
		t.Errorf("GET of a missing graph: %d, want 404", code)
	}
	if code, _ := do(t, http.MethodHead, store(g1), "", ""); code != http.StatusNotFound {
		t.Errorf("HEAD of a missing graph: %d, want 404", code)
	}
	if code, body := do(t, http.MethodDelete, store(g1), "", ""); code != http.StatusNotFound {
		t.Errorf("DELETE of a missing graph: %d %s, want 404", code, body)
	}

	// PUT creates (201), relative IRIs resolve against the graph IRI; a
	// second PUT replaces (204).
	def := []rdf.Triple{tri("d", "p", rdf.NewLiteral("default", ""))}
	if err := c.PutGraph(ctx, "", def); err != nil {
		t.Fatal(err)
	}
	if code, body := do(t, http.MethodPut, store(g1), "text/turtle", `<a> <http://example.org/p> "one" .`); code != http.StatusCreated {
		t.Fatalf("PUT of a new graph: %d %s, want 201", code, body)
	}
	if got, _ := graphLines(t, c, g1); strings.Join(got, "\n") != `<http://example.org/a> <http://example.org/p> "one" .` {
		t.Fatalf("GET g1 after PUT: %v", got)
	}
	v2 := []rdf.Triple{tri("a", "p", rdf.NewLiteral("two", "")), tri("b", "p", ex("a"))}
	if code, body := do(t, http.MethodPut, store(g1), "application/n-triples", strings.Join(nt(v2...), "\n")+"\n"); code != http.StatusNoContent {
		t.Fatalf("PUT of an existing graph: %d %s, want 204", code, body)
	}
	if got, _ := graphLines(t, c, g1); strings.Join(got, "\n") != strings.Join(nt(v2...), "\n") {
		t.Fatalf("GET g1 after the second PUT: %v", got)
	}
	if code, _ := do(t, http.MethodHead, store(g1), "", ""); code != http.StatusOK {
		t.Errorf("HEAD of g1: %d, want 200", code)
	}

	// POST creates g2 and merges; the default graph and g1 keep their very
	// stores (structural sharing).
	before := svc.cur.Load().ds
	defSt, g1St := before.Default(), mustGraph(t, before, g1)
	if code, body := do(t, http.MethodPost, store(g2), "text/turtle", `<http://example.org/c> <http://example.org/q> [ <http://example.org/r> 1 ] .`); code != http.StatusCreated {
		t.Fatalf("POST to a new graph: %d %s, want 201", code, body)
	}
	if err := c.PostGraph(ctx, g2, []rdf.Triple{tri("c", "q", ex("d"))}); err != nil {
		t.Fatal(err)
	}
	after := svc.cur.Load().ds
	if after.Default() != defSt || mustGraph(t, after, g1) != g1St {
		t.Error("a change of g2 rebuilt the default graph or g1")
	}
	if got, _ := graphLines(t, c, g2); len(got) != 3 {
		t.Errorf("g2 after two POSTs: %v, want 3 triples", got)
	}
	if got, _ := graphLines(t, c, ""); strings.Join(got, "\n") != strings.Join(nt(def...), "\n") {
		t.Errorf("the default graph after changes to named graphs: %v", got)
	}

	// Queries see the named graphs: GRAPH, FROM, FROM NAMED and the
	// protocol's dataset, which overrides FROM.
	got, err := selectTSV(ctx, c, `SELECT ?g ?s WHERE { GRAPH ?g { ?s <http://example.org/p> ?o } }`)
	want := "?g\t?s\n<http://example.org/g1>\t<http://example.org/a>\n<http://example.org/g1>\t<http://example.org/b>\n"
	if err != nil || got != want {
		t.Errorf("GRAPH ?g: %q, %v; want %q", got, err, want)
	}
	got, err = selectTSV(ctx, c, `SELECT ?s ?o WHERE { ?s <http://example.org/p> ?o }`, client.WithDefaultGraph(g1))
	want = "?s\t?o\n<http://example.org/a>\t\"two\"\n<http://example.org/b>\t<http://example.org/a>\n"
	if err != nil || got != want {
		t.Errorf("default-graph-uri g1: %q, %v; want %q", got, err, want)
	}
	got, err = selectTSV(ctx, c, `SELECT ?s ?o FROM <http://example.org/g2> WHERE { ?s <http://example.org/p> ?o }`, client.WithDefaultGraph(g1))
	if err != nil || got != want {
		t.Errorf("default-graph-uri g1 over FROM g2: %q, %v; want %q (the protocol dataset wins)", got, err, want)
	}
	got, err = selectTSV(ctx, c, `SELECT ?g ?s WHERE { GRAPH ?g { ?s ?p ?o } }`, client.WithNamedGraph(g2))
	if err != nil || strings.Contains(got, "<http://example.org/g1>") || !strings.Contains(got, "<http://example.org/g2>\t<http://example.org/c>") {
		t.Errorf("named-graph-uri g2: %q, %v; want only g2", got, err)
	}

	// DELETE removes the graph; the default graph stays.
	if err := c.DeleteGraph(ctx, g1); err != nil {
		t.Fatal(err)
	}
	if _, code := graphLines(t, c, g1); code != http.StatusNotFound {
		t.Errorf("GET after DELETE: %d, want 404", code)
	}
	if got, _ := graphLines(t, c, ""); len(got) != 1 {
		t.Errorf("the default graph after DELETE of g1: %v", got)
	}
	if info := svc.Info(); info.Graphs != 1 || info.Triples != 4 {
		t.Errorf("Info after the changes: %+v, want 1 named graph, 4 quads", info)
	}
	checkOnlyCurrentLive(t, svc)
}

func mustGraph(t *testing.T, ds *graphstore.Dataset, iri string) *graphstore.Store {
	t.Helper()
	st, ok := ds.Graph(rdf.NewIRI(iri))
	if !ok {
		t.Fatalf("no graph <%s>", iri)
	}
	return st
}

// state renders every graph of the service: "GRAPH <g>" headers (the
// default graph as DEFAULT) and sorted N-Triples lines.
func state(t *testing.T, svc *Service) string {
	t.Helper()
	g, err := svc.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer g.release()
	ctx := context.Background()
	var b strings.Builder
	dump := func(label string, st *graphstore.Store) {
		ts, err := graphTriples(ctx, g.ds.Dict(), st)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(label + "\n")
		for _, l := range sortedLines(ts) {
			b.WriteString(l + "\n")
		}
	}
	dump("DEFAULT", g.ds.Default())
	for _, ng := range g.ds.Graphs() {
		dump("GRAPH "+ng.Name.String(), ng.Store)
	}
	return b.String()
}

func TestUpdateAcrossGraphs(t *testing.T) {
	svc := openService(t, NewEmpty, Options{Shards: 2})
	c, _ := serve(t, svc, nil)
	ctx := context.Background()
	const prefix = "PREFIX ex: <http://example.org/>\n"
	steps := []struct {
		update string
		want   string // the state after, or the error status
		status int
	}{
		{`INSERT DATA { ex:a ex:p 1 . GRAPH ex:g1 { ex:a ex:p 2 . ex:b ex:p 3 } GRAPH ex:g2 { ex:c ex:q ex:a } }`, `DEFAULT
<http://example.org/a> <http://example.org/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
GRAPH <http://example.org/g1>
<http://example.org/a> <http://example.org/p> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/b> <http://example.org/p> "3"^^<http://www.w3.org/2001/XMLSchema#integer> .
GRAPH <http://example.org/g2>
<http://example.org/c> <http://example.org/q> <http://example.org/a> .
`, 0},
		// DELETE DATA in a graph; ADD into a new graph; COPY over g2.
		{`DELETE DATA { GRAPH ex:g1 { ex:b ex:p 3 } } ; ADD ex:g1 TO ex:g3 ; COPY DEFAULT TO ex:g2`, `DEFAULT
<http://example.org/a> <http://example.org/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
GRAPH <http://example.org/g1>
<http://example.org/a> <http://example.org/p> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .
GRAPH <http://example.org/g2>
<http://example.org/a> <http://example.org/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
GRAPH <http://example.org/g3>
<http://example.org/a> <http://example.org/p> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .
`, 0},
		// MOVE sees the INSERT before it in the same request; ADD keeps
		// the destination's triples.
		{`INSERT DATA { GRAPH ex:g3 { ex:z ex:p ex:y } } ; MOVE ex:g3 TO ex:g1 ; ADD ex:g2 TO DEFAULT ; ADD ex:g1 TO ex:g2`, `DEFAULT
<http://example.org/a> <http://example.org/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
GRAPH <http://example.org/g1>
<http://example.org/a> <http://example.org/p> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/z> <http://example.org/p> <http://example.org/y> .
GRAPH <http://example.org/g2>
<http://example.org/a> <http://example.org/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/a> <http://example.org/p> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/z> <http://example.org/p> <http://example.org/y> .
`, 0},
		// DELETE/INSERT … WHERE with WITH: the WHERE runs on g2, the
		// templates default to g2; a GRAPH template writes elsewhere; a
		// template triple with a literal subject is skipped.
		{`WITH ex:g2 DELETE { ?s ex:p ?o } INSERT { ?s ex:r ?o . ?o ex:of ?s . GRAPH ex:g4 { ?s ex:was ?o } } WHERE { ?s ex:p ?o . FILTER(isLiteral(?o)) }`, `DEFAULT
<http://example.org/a> <http://example.org/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
GRAPH <http://example.org/g1>
<http://example.org/a> <http://example.org/p> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/z> <http://example.org/p> <http://example.org/y> .
GRAPH <http://example.org/g2>
<http://example.org/a> <http://example.org/r> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/a> <http://example.org/r> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/z> <http://example.org/p> <http://example.org/y> .
GRAPH <http://example.org/g4>
<http://example.org/a> <http://example.org/was> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/a> <http://example.org/was> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .
`, 0},
		// USING: the WHERE reads g2 as its default graph; the template
		// deletes from g1. Then GRAPH ?g in the WHERE and the templates.
		{`DELETE { GRAPH ex:g1 { ?s ?p ?o } } USING ex:g2 WHERE { ?s ?p ?o } ;
DELETE { GRAPH ?g { ?s ex:was ?o } } INSERT { GRAPH ?g { ?s ex:is ?o } } WHERE { GRAPH ?g { ?s ex:was ?o } }`, `DEFAULT
<http://example.org/a> <http://example.org/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
GRAPH <http://example.org/g1>
<http://example.org/a> <http://example.org/p> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .
GRAPH <http://example.org/g2>
<http://example.org/a> <http://example.org/r> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/a> <http://example.org/r> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/z> <http://example.org/p> <http://example.org/y> .
GRAPH <http://example.org/g4>
<http://example.org/a> <http://example.org/is> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/a> <http://example.org/is> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .
`, 0},
		// Errors: nothing of the request changes.
		{`INSERT DATA { ex:x ex:p ex:y } ; DROP GRAPH ex:nope`, "", http.StatusNotFound},
		{`INSERT DATA { ex:x ex:p ex:y } ; CREATE GRAPH ex:g1`, "", http.StatusBadRequest},
		{`INSERT DATA { ex:x ex:p ex:y } ; COPY ex:nope TO ex:g1`, "", http.StatusNotFound},
		// SILENT: the missing or existing graph is ignored. CREATE makes
		// an empty graph; CLEAR NAMED empties every named graph.
		{`DROP SILENT GRAPH ex:nope ; CREATE SILENT GRAPH ex:g1 ; CLEAR SILENT GRAPH ex:nope ; CREATE GRAPH ex:g5 ; CLEAR NAMED ; DROP GRAPH ex:g2 ; DELETE DATA { GRAPH ex:nope { ex:a ex:p 1 } }`, `DEFAULT
<http://example.org/a> <http://example.org/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
GRAPH <http://example.org/g1>
GRAPH <http://example.org/g4>
GRAPH <http://example.org/g5>
`, 0},
		// DELETE WHERE; then DROP ALL.
		{`INSERT DATA { GRAPH ex:g1 { ex:a ex:p 5 } } ; DELETE WHERE { ex:a ex:p ?o }`, `DEFAULT
GRAPH <http://example.org/g1>
<http://example.org/a> <http://example.org/p> "5"^^<http://www.w3.org/2001/XMLSchema#integer> .
GRAPH <http://example.org/g4>
GRAPH <http://example.org/g5>
`, 0},
		{`DROP ALL`, "DEFAULT\n", 0},
	}
	for i, st := range steps {
		before := state(t, svc)
		err := c.Update(ctx, prefix+st.update)
		if st.status != 0 {
			var he *client.HTTPError
			if !errors.As(err, &he) || he.StatusCode != st.status {
				t.Fatalf("step %d: %s: %v, want status %d", i, st.update, err, st.status)
			}
			if got := state(t, svc); got != before {
				t.Fatalf("step %d: a failed request changed the dataset:\n%s", i, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %s: %v", i, st.update, err)
		}
		if got := state(t, svc); got != st.want {
			t.Fatalf("step %d: %s\nstate:\n%s\nwant:\n%s", i, st.update, got, st.want)
		}
	}

	// The blank nodes of each INSERT DATA are new nodes.
	for i := 0; i < 2; i++ {
		if err := c.Update(ctx, prefix+`INSERT DATA { GRAPH ex:b { _:x ex:p _:x } }`); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := graphLines(t, c, exNS+"b")
	if len(got) != 2 {
		t.Fatalf("two INSERT DATA of _:x: %v, want two blank nodes", got)
	}
	for _, l := range got {
		f := strings.Fields(l)
		if f[0] != f[2] || !strings.HasPrefix(f[0], "_:") {
			t.Errorf("%q: want the same blank node as subject and object", l)
		}
	}
	// USING in the update and using-graph-uri in the request: 400.
	err := c.Update(ctx, prefix+`DELETE { ?s ?p ?o } USING ex:b WHERE { ?s ?p ?o }`, client.WithDefaultGraph(exNS+"b"))
	var he *client.HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusBadRequest {
		t.Errorf("USING and using-graph-uri: %v, want 400", err)
	}
	// using-graph-uri alone sets the WHERE's default graph.
	if err := c.Update(ctx, prefix+`INSERT { ?s ex:copied ?o } WHERE { ?s ex:p ?o }`, client.WithDefaultGraph(exNS+"b")); err != nil {
		t.Fatal(err)
	}
	if got, _ := graphLines(t, c, ""); len(got) != 2 || !strings.Contains(got[0], "copied") {
		t.Errorf("INSERT … WHERE with using-graph-uri: default graph %v", got)
	}
	checkOnlyCurrentLive(t, svc)
}

// TestConcurrentReadersNamedGraphs replaces two named graphs together, in
// one update, while readers query them with GRAPH and fetch them with the
// Graph Store Protocol: every answer is entirely one version.
func TestConcurrentReadersNamedGraphs(t *testing.T) {
	const n = 500
	svc := openService(t, NewEmpty, Options{Shards: 2})
	c, _ := serve(t, svc, nil)
	ctx := context.Background()
	version := func(v int) string {
		var b strings.Builder
		b.WriteString("DROP SILENT GRAPH <http://example.org/g1> ; DROP SILENT GRAPH <http://example.org/g2> ;\nINSERT DATA {")
		for _, g := range []string{"g1", "g2"} {
			fmt.Fprintf(&b, " GRAPH <http://example.org/%s> {", g)
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, " <http://example.org/s%d> <http://example.org/p> \"v%d\" .", i, v)
			}
			b.WriteString(" }")
		}
		b.WriteString(" }")
		return b.String()
	}
	if err := c.Update(ctx, version(0)); err != nil {
		t.Fatal(err)
	}
	reads := readWhileWriting(t, 3, 15, func(r int) ([]string, int, error) {
		if r == 0 { // both graphs through GRAPH ?g
			vals, err := selectColumn(ctx, c, `SELECT ?g ?o WHERE { GRAPH ?g { ?s <http://example.org/p> ?o } }`, 1)
			return vals, 2 * n, err
		}
		// one graph through the Graph Store Protocol
		vals, err := graphObjects(ctx, c, fmt.Sprintf("http://example.org/g%d", r))
		return vals, n, err
	}, func(i int) error { return c.Update(ctx, version(i)) })
	t.Logf("%d consistent reads during 15 updates", reads)
	checkOnlyCurrentLive(t, svc)
}

// TestFormat2SnapshotServed serves a dataset snapshot with named graphs
// (which OpenSnapshot refuses): queries and the Graph Store Protocol see
// its graphs, and writes leave the snapshot as it was.
func TestFormat2SnapshotServed(t *testing.T) {
	db, err := graphstore.NewDatasetBuilder(2)
	if err != nil {
		t.Fatal(err)
	}
	quads := []rdf.Quad{
		{S: ex("a"), P: ex("p"), O: ex("b")},
		{S: ex("a"), P: ex("p"), O: ex("c"), G: ex("g1")},
		{S: ex("c"), P: ex("q"), O: rdf.NewLiteral("x", ""), G: ex("g1")},
		{S: ex("b"), P: ex("q"), O: rdf.NewLiteral("y", ""), G: ex("g2")},
	}
	if err := db.AddQuads(quads); err != nil {
		t.Fatal(err)
	}
	ds, err := db.Build()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() + "/snap"
	if err := graphstore.WriteDataset(dir, ds); err != nil {
		t.Fatal(err)
	}
	ds.Close()
	if _, err := graphstore.OpenSnapshot(dir, graphstore.OpenOptions{}); err == nil {
		t.Fatal("OpenSnapshot opened a format-2 snapshot: the test does not test what it says")
	}
	svc, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	if info := svc.Info(); info.Graphs != 2 || info.Triples != 4 || info.Shards != 2 {
		t.Errorf("Info: %+v", info)
	}
	c, _ := serve(t, svc, nil)
	ctx := context.Background()
	got, err := selectTSV(ctx, c, `SELECT ?g ?s ?o WHERE { GRAPH ?g { ?s <http://example.org/q> ?o } }`)
	want := "?g\t?s\t?o\n<http://example.org/g1>\t<http://example.org/c>\t\"x\"\n<http://example.org/g2>\t<http://example.org/b>\t\"y\"\n"
	if err != nil || got != want {
		t.Errorf("GRAPH ?g on the snapshot: %q, %v; want %q", got, err, want)
	}
	// A join of the default graph with a named graph.
	got, err = selectTSV(ctx, c, `SELECT ?o WHERE { <http://example.org/a> <http://example.org/p> ?b . GRAPH <http://example.org/g2> { ?b <http://example.org/q> ?o } }`)
	if err != nil || got != "?o\n\"y\"\n" {
		t.Errorf("default graph joined with g2: %q, %v", got, err)
	}
	if got, _ := graphLines(t, c, exNS+"g1"); len(got) != 2 {
		t.Errorf("GET g1: %v", got)
	}
	// A write with new terms extends the dictionary; old graphs decode.
	if err := c.Update(ctx, `INSERT DATA { GRAPH <http://example.org/g2> { <http://example.org/new> <http://example.org/newp> "z" } }`); err != nil {
		t.Fatal(err)
	}
	if got, _ := graphLines(t, c, exNS+"g1"); strings.Join(got, "\n") != strings.Join(nt(quads[1].Triple(), quads[2].Triple()), "\n") {
		t.Errorf("GET g1 after a write to g2: %v", got)
	}
	reopened, err := graphstore.OpenDataset(dir, graphstore.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if reopened.Triples() != 4 {
		t.Errorf("the snapshot changed: %d triples", reopened.Triples())
	}
}

func TestRowCapHintAndMode(t *testing.T) {
	svc := openService(t, NewDefault, Options{Shards: 4})
	const q = `PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> SELECT ?x WHERE { ?x a ub:GraduateStudent }`
	pq, err := svc.cache.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	r := svc.rewrite(pq, web.FormSelect, &web.QueryRequest{MaxRows: 10})
	if sl, ok := r.Pattern.(*sparql.Slice); !ok || sl.Limit != 11 || r == pq {
		t.Fatalf("row cap 10: pattern %T %v, want a LIMIT 11 on a copy", r.Pattern, r.Pattern)
	}
	if again := svc.rewrite(pq, web.FormSelect, &web.QueryRequest{MaxRows: 10}); again != r {
		t.Error("the same request rewrote the query again (the plan cache would miss)")
	}
	limited, _ := svc.cache.ParseQuery(q + " LIMIT 3")
	if r := svc.rewrite(limited, web.FormSelect, &web.QueryRequest{MaxRows: 10}); r != limited {
		t.Error("a LIMIT under the cap was rewritten")
	}

	// Through HTTP: the cap cuts and says so.
	c, hs := serve(t, svc, func(o *web.Options) { o.MaxRows = 5 })
	rows, err := c.Select(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for rows.Next() {
		k++
	}
	rows.Close()
	if k != 5 || !rows.Truncated {
		t.Errorf("row cap 5: %d rows, truncated %v", k, rows.Truncated)
	}

	// mode= reaches the planner.
	const join = `PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> SELECT ?x ?y WHERE { ?x ub:advisor ?y . ?y ub:worksFor ?d }`
	for _, mode := range []string{"in-place", "fork-join"} {
		p := explain(t, hs, "true&mode="+mode, join)
		saw := false
		for _, s := range p.Steps {
			if s.Mode == mode {
				saw = true
			}
			if s.Mode != "" && s.Mode != mode && s.Mode != "local" {
				t.Errorf("mode=%s: a step in mode %s", mode, s.Mode)
			}
		}
		if !saw {
			t.Errorf("mode=%s: no step in that mode: %+v", mode, p.Steps)
		}
	}
	if code, body := do(t, http.MethodGet, hs.URL+"/sparql?mode=sideways&query="+url.QueryEscape(join), "", ""); code != http.StatusBadRequest {
		t.Errorf("mode=sideways: %d %s, want 400", code, body)
	}
}

// TestExplainNestedOperators: operators with two inputs show them as
// children, each with its own exploration steps; expressions and group
// keys are the steps' patterns.
func TestExplainNestedOperators(t *testing.T) {
	svc := openService(t, NewDefault, Options{Shards: 2})
	_, hs := serve(t, svc, nil)
	const ub = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
	find := func(steps []web.PlanStep, op string) *web.PlanStep {
		var rec func(steps []web.PlanStep) *web.PlanStep
		rec = func(steps []web.PlanStep) *web.PlanStep {
			for i := range steps {
				if steps[i].Op == op {
					return &steps[i]
				}
				if s := rec(steps[i].Children); s != nil {
					return s
				}
			}
			return nil
		}
		return rec(steps)
	}
	for _, mode := range []string{"true", "analyze"} {
		p := explain(t, hs, mode, ub+`SELECT ?x WHERE { { ?x a ub:FullProfessor } UNION { ?x a ub:AssociateProfessor } }`)
		u := find(p.Steps, "union")
		if u == nil || len(u.Children) != 2 || u.Children[0].Op != "left" || u.Children[1].Op != "right" {
			t.Fatalf("explain=%s: no union with left and right inputs: %+v", mode, p.Steps)
		}
		for i, want := range []string{"ub:FullProfessor", "ub:AssociateProfessor"} {
			in := u.Children[i].Children
			if len(in) == 0 || !strings.Contains(in[len(in)-1].Pattern, want) {
				t.Errorf("explain=%s: union input %d: %+v, want a step on %s", mode, i, in, want)
			}
		}
		if u.EstRows != u.Children[0].EstRows+u.Children[1].EstRows || u.EstRows == 0 {
			t.Errorf("explain=%s: union estimate %v, inputs %v and %v", mode, u.EstRows, u.Children[0].EstRows, u.Children[1].EstRows)
		}
		if mode == "analyze" && (p.Fabric == nil || p.Rows == 0) {
			t.Errorf("explain=analyze of a UNION: rows %d, fabric %v", p.Rows, p.Fabric)
		}

		p = explain(t, hs, mode, ub+`SELECT ?x ?e WHERE { ?x a ub:FullProfessor OPTIONAL { ?x ub:emailAddress ?e } }`)
		o := find(p.Steps, "optional")
		if o == nil || len(o.Children) != 2 || find(o.Children[0].Children, "index: type index") == nil ||
			!strings.Contains(fmt.Sprint(o.Children[1].Children), "ub:emailAddress") {
			t.Errorf("explain=%s: OPTIONAL without its two inputs: %+v", mode, o)
		}

		p = explain(t, hs, mode, ub+`SELECT ?d (COUNT(?x) AS ?n) WHERE { ?x ub:worksFor ?d } GROUP BY ?d`)
		if g := find(p.Steps, "group"); g == nil || !strings.Contains(g.Pattern, "GROUP BY ?d") || !strings.Contains(g.Pattern, "COUNT(?x)") {
			t.Errorf("explain=%s: group step %+v, want its keys and aggregate", mode, g)
		}
	}
}
