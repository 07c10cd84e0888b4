package service

import (
	"context"
	"errors"
	"fmt"
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
