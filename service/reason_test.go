package service

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/reason"
)

// reasoningLUBM1 builds LUBM-1 + univ-bench, materialized under owl-rl
// if materialize.
func reasoningLUBM1(t testing.TB, materialize bool) *graphstore.Dataset {
	t.Helper()
	data, onto := filepath.Join(lubmDir, "lubm1.nt.gz"), filepath.Join(lubmDir, "univ-bench.owl")
	for _, f := range []string{data, onto} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("LUBM data not available: %v", err)
		}
	}
	ctx := context.Background()
	inputs, err := loader.ExpandInputs([]string{data, onto})
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err := loader.BuildDataset(ctx, inputs, loader.BuildOptions{Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !materialize {
		return raw
	}
	defer raw.Close()
	ds, _, err := reason.MaterializeDataset(ctx, raw, reason.OWLRL, reason.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// checkClosure fails unless the served default graph is exactly the
// closure of its explicit triples (a fresh materialization).
func checkClosure(t *testing.T, svc *Service) {
	t.Helper()
	ctx := context.Background()
	ds := svc.cur.Load().ds
	o, explicit, err := reason.LoadOntology(ctx, ds, reason.OWLRL)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _, _, err := reason.Materialize(ctx, o, explicit, reason.Options{IsLiteral: ds.Dict().IsLiteral})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = ds.Default().EachTriple(ctx, func(s, p, o graphstore.ID) error {
		n++
		if !fresh.Has(reason.Triple{S: s, P: p, O: o}) {
			t.Errorf("served triple (%d %d %d) does not follow", s, p, o)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != fresh.Len() {
		t.Fatalf("served default graph has %d triples, the closure of its explicit ones %d", n, fresh.Len())
	}
}

// TestUpdateWithReasoning: SPARQL updates on a materialized LUBM-1 derive
// their consequences and retract what no longer follows; the explicit
// triples stay apart (infer=false).
func TestUpdateWithReasoning(t *testing.T) {
	ds := reasoningLUBM1(t, true)
	svc := openService(t, func(o Options) (*Service, error) { return NewDataset(ds, o) }, Options{})
	c, hs := serve(t, svc, nil)
	ctx := context.Background()
	const prefix = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\nPREFIX ex: <http://example.org/>\n"
	q10 := prefix + `SELECT ?X WHERE { ?X a ub:Student . ?X ub:takesCourse <http://www.Department0.University0.edu/GraduateCourse0> }`
	rows := func(infer bool) int {
		t.Helper()
		u := hs.URL + "/sparql?format=tsv&query=" + url.QueryEscape(q10)
		if !infer {
			u += "&infer=false"
		}
		code, body := do(t, http.MethodGet, u, "", "")
		if code != http.StatusOK {
			t.Fatalf("query: %d %s", code, body)
		}
		return strings.Count(body, "\n") - 1
	}
	if got := rows(true); got != 4 {
		t.Fatalf("Q10 before: %d rows, want 4", got)
	}
	// A new person taking GraduateCourse0 is a Student (Student = Person
	// and takesCourse some Course; GraduateCourse ⊑ Course).
	if err := c.Update(ctx, prefix+`INSERT DATA { ex:s1 a ub:Person ; ub:takesCourse <http://www.Department0.University0.edu/GraduateCourse0> }`); err != nil {
		t.Fatal(err)
	}
	if got, gotExplicit := rows(true), rows(false); got != 5 || gotExplicit != 0 {
		t.Fatalf("Q10 after the insert: %d rows (%d explicit only), want 5 (0)", got, gotExplicit)
	}
	checkClosure(t, svc)
	// Deleting the type retracts Student; deleting an inferred triple does
	// nothing (it still follows).
	if err := c.Update(ctx, prefix+`DELETE DATA { ex:s1 a ub:Person } ; DELETE DATA { <http://www.Department0.University0.edu/GraduateStudent1> a ub:Student }`); err != nil {
		t.Fatal(err)
	}
	if got := rows(true); got != 4 {
		t.Fatalf("Q10 after the delete: %d rows, want 4", got)
	}
	checkClosure(t, svc)
	// A WHERE-driven delete of explicit triples, and a TBox change (the
	// rules change: materialized again).
	if err := c.Update(ctx, prefix+`DELETE { ?x ub:takesCourse ?c } WHERE { ?x ub:takesCourse ?c . FILTER(?c = <http://www.Department0.University0.edu/GraduateCourse0>) }`); err != nil {
		t.Fatal(err)
	}
	if got := rows(true); got != 0 {
		t.Fatalf("Q10 after deleting the course's takesCourse: %d rows, want 0", got)
	}
	checkClosure(t, svc)
	if err := c.Update(ctx, prefix+`INSERT DATA { ub:attends <http://www.w3.org/2000/01/rdf-schema#subPropertyOf> ub:takesCourse . ex:s2 a ub:Person ; ub:attends <http://www.Department0.University0.edu/GraduateCourse0> }`); err != nil {
		t.Fatal(err)
	}
	if got := rows(true); got != 1 {
		t.Fatalf("Q10 after the TBox insert: %d rows, want 1", got)
	}
	checkClosure(t, svc)
}

// TestDurableReasoning: writes to a durable dataset with reasoning are
// replayed after a restart through the same maintenance, giving the same
// closure and the same explicit/inferred split.
func TestDurableReasoning(t *testing.T) {
	ds := reasoningLUBM1(t, true)
	dir := filepath.Join(t.TempDir(), "data")
	err := graphstore.WriteDataset(dir, ds)
	ds.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := openDurable(t, dir)
	const prefix = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\nPREFIX ex: <http://example.org/>\n"
	update(t, s, prefix+`INSERT DATA { ex:s1 a ub:Person ; ub:takesCourse <http://www.Department0.University0.edu/GraduateCourse0> }`)
	update(t, s, prefix+`DELETE DATA { <http://www.Department0.University0.edu/UndergraduateStudent0> a ub:UndergraduateStudent }`)
	update(t, s, prefix+`INSERT DATA { ex:s2 ub:headOf <http://www.Department0.University0.edu> } ; DELETE DATA { ex:s1 a ub:Person }`)
	checkClosure(t, s)
	want := s.cur.Load().ds
	wantInf, wantExp := want.InferredTriples(), want.ExplicitTriples()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openDurable(t, dir)
	defer s.Close()
	got := s.cur.Load().ds
	if got.InferredTriples() != wantInf || got.ExplicitTriples() != wantExp {
		t.Fatalf("after a restart: %d explicit + %d inferred, before %d + %d", got.ExplicitTriples(), got.InferredTriples(), wantExp, wantInf)
	}
	checkClosure(t, s)
}
