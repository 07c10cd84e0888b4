package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/service"
	"github.com/wukongd/wukongd/web"
)

// count runs a SELECT on b and returns its number of rows.
func count(t *testing.T, b web.Backend, q string) int {
	t.Helper()
	res, err := b.Query(context.Background(), &web.QueryRequest{Query: q})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer res.Rows.Close()
	n := 0
	for res.Rows.Next() {
		n++
	}
	if err := res.Rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestServeBackend(t *testing.T) {
	closeB := func(b web.Backend) { b.(*service.Service).Close() }

	// The embedded default: LUBM with one university, generated.
	b, err := newServeBackend("", false)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT ?u WHERE { ?u a <http://swat.cse.lehigh.edu/onto/univ-bench.owl#University> }`); n < 1 {
		t.Errorf("default data set: %d universities", n)
	}
	closeB(b)

	// --empty.
	b, err = newServeBackend("", true)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT * WHERE { ?s ?p ?o }`); n != 0 {
		t.Errorf("empty store: %d triples", n)
	}
	closeB(b)

	// --data: a snapshot is mapped and served.
	dir := filepath.Join(t.TempDir(), "snap")
	st, err := service.BuildStore(2, func(emit func(rdf.Triple) error) error {
		for _, o := range []string{"a", "b", "c"} {
			if err := emit(rdf.Triple{S: rdf.NewIRI("http://x/s"), P: rdf.NewIRI("http://x/p"), O: rdf.NewLiteral(o, "")}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := graphstore.WriteSnapshot(dir, st); err != nil {
		t.Fatal(err)
	}
	st.Close()
	b, err = newServeBackend(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT ?o WHERE { <http://x/s> <http://x/p> ?o }`); n != 3 {
		t.Errorf("snapshot: %d rows, want 3", n)
	}
	closeB(b)

	if _, err := newServeBackend(filepath.Join(t.TempDir(), "missing"), false); err == nil {
		t.Error("a missing --data directory is accepted")
	}
}
