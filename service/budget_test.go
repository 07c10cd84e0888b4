package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/web"
)

// TestAnswerChargedWhileWritten: a query's answer stays charged to the
// engine's budget while web writes it, web's response buffer is charged
// to the query's budget through the iterator (web.Memory: past the budget
// the error is web.ErrQueryMemory, a 507), and Close gives everything
// back.
func TestAnswerChargedWhileWritten(t *testing.T) {
	st, err := BuildStore(2, func(emit func(rdf.Triple) error) error {
		for i := 0; i < 5000; i++ {
			if err := emit(rdf.Triple{S: rdf.NewIRI(fmt.Sprintf("http://example.org/s%d", i)), P: rdf.NewIRI("http://example.org/p"),
				O: rdf.NewLiteral(fmt.Sprint(i), rdf.XSD+"integer")}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	const budget = 8 << 20
	s := newService(t, st, Options{MaxQueryMemory: budget})
	g, err := s.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer g.release()
	for _, q := range []string{`SELECT ?s ?o { ?s ?p ?o }`, `CONSTRUCT { ?s <http://example.org/q> ?o } WHERE { ?s ?p ?o }`} {
		res, err := s.Query(context.Background(), &web.QueryRequest{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		var it interface{ Close() error }
		if res.Rows != nil {
			it = res.Rows
		} else {
			it = res.Triples
		}
		m, ok := it.(web.Memory)
		if !ok {
			t.Fatalf("%s: the iterator %T is not a web.Memory", q, it)
		}
		held := g.eng.MemoryUsed()
		if held < 5000*8 {
			t.Errorf("%s: %d bytes charged while the answer of 5,000 rows is written", q, held)
		}
		if err := m.Grow(1 << 20); err != nil {
			t.Errorf("%s: a 1 MiB buffer inside the budget: %v", q, err)
		}
		if err := m.Grow(budget); !errors.Is(err, web.ErrQueryMemory) {
			t.Errorf("%s: a buffer past the query's budget: %v, want web.ErrQueryMemory", q, err)
		}
		if got := g.eng.MemoryUsed(); got != held+1<<20 {
			t.Errorf("%s: charged %d after the refused Grow, want %d", q, got, held+1<<20)
		}
		it.Close()
		if got := g.eng.MemoryUsed(); got != 0 {
			t.Errorf("%s: %d bytes still charged after Close", q, got)
		}
	}
	res, err := s.Query(context.Background(), &web.QueryRequest{Query: `ASK { ?s ?p ?o }`})
	if err != nil || !res.Boolean {
		t.Fatal(err)
	}
	if got := g.eng.MemoryUsed(); got != 0 {
		t.Errorf("%d bytes charged after an ASK", got)
	}
}

// TestGraphGetCharged: the Graph Store GET's response buffer is charged
// as a query's answer is — to the engine's budgets through the graph's
// iterator (web.Memory) — for the default and a named graph: past the
// query's budget it is refused (over HTTP a 507 with its body), and Close
// gives the charge back.
func TestGraphGetCharged(t *testing.T) {
	st, err := BuildStore(2, func(emit func(rdf.Triple) error) error {
		for i := 0; i < 20000; i++ {
			if err := emit(rdf.Triple{S: rdf.NewIRI(fmt.Sprintf("http://example.org/s%d", i)), P: rdf.NewIRI("http://example.org/p"),
				O: rdf.NewLiteral(fmt.Sprint(i), rdf.XSD+"integer")}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	const budget = 256 << 10
	s := newService(t, st, Options{MaxQueryMemory: budget})
	if err := s.Update(context.Background(), &web.UpdateRequest{Update: `INSERT DATA { GRAPH <http://example.org/g> { <http://example.org/a> <http://example.org/p> 1 } }`}); err != nil {
		t.Fatal(err)
	}
	g, err := s.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer g.release()
	for _, gn := range []web.GraphName{{Default: true}, {IRI: "http://example.org/g"}} {
		it, err := s.GetGraph(context.Background(), gn)
		if err != nil {
			t.Fatal(err)
		}
		m, ok := it.(web.Memory)
		if !ok {
			t.Fatalf("%v: the iterator %T is not a web.Memory", gn, it)
		}
		eng, err := g.engine()
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Grow(64 << 10); err != nil {
			t.Errorf("%v: a 64 KiB buffer inside the budget: %v", gn, err)
		}
		if got := eng.MemoryUsed(); got != 64<<10 {
			t.Errorf("%v: %d bytes charged for a 64 KiB buffer", gn, got)
		}
		if err := m.Grow(budget); !errors.Is(err, web.ErrQueryMemory) {
			t.Errorf("%v: a buffer past the query's budget: %v, want web.ErrQueryMemory", gn, err)
		}
		it.Close()
		if got := eng.MemoryUsed(); got != 0 {
			t.Errorf("%v: %d bytes still charged after Close", gn, got)
		}
	}

	// Over HTTP: the default graph (about 1 MB of N-Triples) outgrows a
	// 256 KiB budget inside a 4 MiB response buffer: a 507, not a 200.
	_, hs := serve(t, s, func(o *web.Options) { o.ResponseBuffer = 4 << 20 })
	for _, path := range []string{"/store?default", "/store?graph=http://example.org/g"} {
		req, _ := http.NewRequest("GET", hs.URL+path, nil)
		req.Header.Set("Accept", "application/n-triples")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := web.QueryMemoryStatus
		if path != "/store?default" {
			want = 200 // one triple: inside the budget
		}
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d (%d bytes), want %d", path, resp.StatusCode, len(body), want)
		}
	}
	eng, _ := g.engine()
	if got := eng.MemoryUsed(); got != 0 {
		t.Errorf("%d bytes still charged after the GETs", got)
	}
}

// TestBulkBodyCharged: a Graph Store POST's body is charged to the memory
// budgets while it is parsed and held: a body past --max-query-memory fails
// with web.ErrQueryMemory (507) and writes nothing, one inside it is
// written, and nothing stays charged afterwards.
func TestBulkBodyCharged(t *testing.T) {
	st, err := BuildStore(2, func(emit func(rdf.Triple) error) error {
		return emit(rdf.Triple{S: rdf.NewIRI("http://example.org/a"), P: rdf.NewIRI("http://example.org/p"), O: rdf.NewIRI("http://example.org/b")})
	})
	if err != nil {
		t.Fatal(err)
	}
	const budget = 4 << 20
	s := newService(t, st, Options{MaxQueryMemory: budget})
	doc := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "<http://example.org/s%d> <http://example.org/p> \"%d\" .\n", i, i)
		}
		return b.String()
	}
	def := web.GraphName{Default: true}
	for _, f := range []string{"application/n-triples", "text/turtle"} {
		big := doc(budget / 40) // ~55 bytes a line: past the budget
		_, err := s.PostGraph(context.Background(), def, web.GraphBody{MediaType: f, Body: strings.NewReader(big)})
		if !errors.Is(err, web.ErrQueryMemory) {
			t.Errorf("%s: a %d-byte body with a budget of %d: %v, want web.ErrQueryMemory", f, len(big), budget, err)
		}
		if n := graphSize(t, s, def); n != 1 {
			t.Errorf("%s: %d triples after the refused POST, want 1", f, n)
		}
	}
	if _, err := s.PostGraph(context.Background(), def, web.GraphBody{MediaType: "application/n-triples", Body: strings.NewReader(doc(1000))}); err != nil {
		t.Fatalf("a body inside the budget: %v", err)
	}
	if n := graphSize(t, s, def); n != 1001 {
		t.Errorf("%d triples after the POST, want 1,001", n)
	}
	g, err := s.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer g.release()
	if eng, err := g.engine(); err != nil || eng.MemoryUsed() != 0 {
		t.Errorf("after the POSTs the engine accounts %d bytes (%v), want 0", eng.MemoryUsed(), err)
	}
}
