package service

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/client"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/reason"
	"github.com/wukongd/wukongd/web"
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

// TestRandomUpdatesWithReasoning: random INSERT DATA / DELETE DATA
// requests on a materialized LUBM-1 (new people taking courses, heading
// departments, joining groups; explicit triples of the data deleted and
// put back) leave, after every request, the served default graph equal
// to a fresh materialization of the explicit triples the test tracks,
// and the inferred layer equal to that closure minus those explicit
// triples.
func TestRandomUpdatesWithReasoning(t *testing.T) {
	ds := reasoningLUBM1(t, true)
	svc := openService(t, func(o Options) (*Service, error) { return NewDataset(ds, o) }, Options{})
	ctx := context.Background()
	const ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
	const dept = "http://www.Department0.University0.edu/"
	cur := svc.cur.Load().ds
	_, base, err := reason.LoadOntology(ctx, cur, reason.OWLRL)
	if err != nil {
		t.Fatal(err)
	}
	dict := cur.Dict()
	term := func(id graphstore.ID) rdf.Term {
		x, ok := dict.Term(id)
		if !ok {
			t.Fatalf("ID %d has no term", id)
		}
		return x
	}
	explicit := map[[3]rdf.Term]bool{}
	var data [][3]rdf.Term // explicit triples of the data (not TBox) to delete
	voc := reason.NewVocab(func(iri string) (graphstore.ID, bool) { return dict.Lookup(rdf.NewIRI(iri)) })
	for _, x := range base {
		tr := [3]rdf.Term{term(x.S), term(x.P), term(x.O)}
		explicit[tr] = true
		if !voc.IsTBox(x) {
			data = append(data, tr)
		}
	}
	r := rand.New(rand.NewPCG(16, 1))
	iri := rdf.NewIRI
	preds := []string{"takesCourse", "headOf", "memberOf", "worksFor", "advisor", "teacherOf", "doctoralDegreeFrom", "subOrganizationOf"}
	objs := []string{dept + "GraduateCourse0", dept + "Course3", dept, dept + "FullProfessor2", "http://www.University0.edu", dept + "ResearchGroup1"}
	classes := []string{"Person", "GraduateStudent", "Faculty", "Organization", "Course", "Chair"}
	var deleted [][3]rdf.Term
	nt := func(tr [3]rdf.Term) string {
		return tr[0].String() + " " + tr[1].String() + " " + tr[2].String() + " ."
	}
	for step := range 12 {
		var ins, del [][3]rdf.Term
		for range 1 + r.IntN(3) {
			switch k := r.IntN(6); {
			case k < 2:
				s := iri(fmt.Sprintf("http://example.org/x%d", r.IntN(8)))
				ins = append(ins, [3]rdf.Term{s, iri(ub + preds[r.IntN(len(preds))]), iri(objs[r.IntN(len(objs))])})
			case k == 2:
				s := iri(fmt.Sprintf("http://example.org/x%d", r.IntN(8)))
				ins = append(ins, [3]rdf.Term{s, iri(reason.Type), iri(ub + classes[r.IntN(len(classes))])})
			case k == 3 && len(deleted) > 0:
				ins = append(ins, deleted[r.IntN(len(deleted))])
			default:
				del = append(del, data[r.IntN(len(data))])
			}
		}
		var u strings.Builder
		if len(del) > 0 {
			u.WriteString("DELETE DATA {\n")
			for _, tr := range del {
				u.WriteString(nt(tr) + "\n")
			}
			u.WriteString("}")
		}
		if len(ins) > 0 {
			if u.Len() > 0 {
				u.WriteString(" ;\n")
			}
			u.WriteString("INSERT DATA {\n")
			for _, tr := range ins {
				u.WriteString(nt(tr) + "\n")
			}
			u.WriteString("}")
		}
		if err := svc.Update(ctx, &web.UpdateRequest{Update: u.String()}); err != nil {
			t.Fatalf("step %d: %v\n%s", step, err, u.String())
		}
		for _, tr := range del {
			delete(explicit, tr)
			deleted = append(deleted, tr)
		}
		for _, tr := range ins {
			explicit[tr] = true
		}
		checkSplit(t, svc, explicit)
	}
}

// checkSplit fails unless the served default graph is the closure of
// explicit and its inferred layer that closure minus explicit.
func checkSplit(t *testing.T, svc *Service, explicit map[[3]rdf.Term]bool) {
	t.Helper()
	ctx := context.Background()
	ds := svc.cur.Load().ds
	dict := ds.Dict()
	var ids []reason.Triple
	var tbox []reason.Triple
	voc := reason.NewVocab(func(iri string) (graphstore.ID, bool) { return dict.Lookup(rdf.NewIRI(iri)) })
	for tr := range explicit {
		var x [3]graphstore.ID
		for i, term := range tr {
			id, ok := dict.Lookup(term)
			if !ok {
				t.Fatalf("explicit term %v is not in the dictionary", term)
			}
			x[i] = id
		}
		id := reason.Triple{S: x[0], P: x[1], O: x[2]}
		ids = append(ids, id)
		if voc.IsTBox(id) {
			tbox = append(tbox, id)
		}
	}
	o := reason.Compile(reason.OWLRL, voc, tbox, false)
	fresh, _, _, err := reason.Materialize(ctx, o, ids, reason.Options{IsLiteral: dict.IsLiteral})
	if err != nil {
		t.Fatal(err)
	}
	isExplicit := map[reason.Triple]bool{}
	for _, x := range ids {
		isExplicit[x] = true
	}
	n := 0
	if err := ds.Default().EachTriple(ctx, func(s, p, o graphstore.ID) error {
		n++
		if x := (reason.Triple{S: s, P: p, O: o}); !fresh.Has(x) {
			t.Errorf("served triple (%d %d %d) does not follow", s, p, o)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != fresh.Len() {
		t.Fatalf("served default graph has %d triples, the closure of the explicit ones %d", n, fresh.Len())
	}
	layer := 0
	if err := ds.Inferred().EachTriple(ctx, func(s, p, o graphstore.ID) error {
		layer++
		x := reason.Triple{S: s, P: p, O: o}
		if isExplicit[x] || !fresh.Has(x) {
			t.Errorf("layer triple (%d %d %d): explicit %v, follows %v", s, p, o, isExplicit[x], fresh.Has(x))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if layer != fresh.Len()-len(ids) {
		t.Fatalf("inferred layer has %d triples, the closure minus the explicit ones %d", layer, fresh.Len()-len(ids))
	}
}

// TestNamedGraphsNotReasoned: on a dataset with reasoning only the
// default graph is materialized. A named graph takes updates as usual,
// its triples are stored and queried as given (GRAPH sees no
// inferences), and they neither enter the closure nor change it.
func TestNamedGraphsNotReasoned(t *testing.T) {
	ds := reasoningLUBM1(t, true)
	svc := openService(t, func(o Options) (*Service, error) { return NewDataset(ds, o) }, Options{})
	c, hs := serve(t, svc, nil)
	ctx := context.Background()
	const prefix = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\nPREFIX ex: <http://example.org/>\n"
	count := func(q string) int {
		t.Helper()
		code, body := do(t, http.MethodGet, hs.URL+"/sparql?format=tsv&query="+url.QueryEscape(prefix+q), "", "")
		if code != http.StatusOK {
			t.Fatalf("query: %d %s", code, body)
		}
		return strings.Count(body, "\n") - 1
	}
	inferredBefore := svc.cur.Load().ds.InferredTriples()
	if err := c.Update(ctx, prefix+`INSERT DATA { GRAPH ex:g { ex:n1 a ub:GraduateStudent ; ub:takesCourse <http://www.Department0.University0.edu/GraduateCourse0> } }`); err != nil {
		t.Fatal(err)
	}
	if got := count(`SELECT ?x WHERE { GRAPH ex:g { ?x a ub:GraduateStudent } }`); got != 1 {
		t.Fatalf("GRAPH ex:g, explicit type: %d rows, want 1", got)
	}
	if got := count(`SELECT ?x WHERE { GRAPH ex:g { ?x a ub:Student } }`); got != 0 {
		t.Fatalf("GRAPH ex:g, a type that would follow: %d rows, want 0 (named graphs are not reasoned over)", got)
	}
	if got := count(`SELECT ?x WHERE { ex:n1 a ?x }`); got != 0 {
		t.Fatalf("the default graph has %d types of a named graph's subject, want 0", got)
	}
	if got := svc.cur.Load().ds.InferredTriples(); got != inferredBefore {
		t.Fatalf("a named graph's insert changed the inferred triples: %d, before %d", got, inferredBefore)
	}
	checkClosure(t, svc)
}

// TestReasoningRejectsNewRole: a request that makes a term of the data a
// class or a predicate (which moves it to a new ID) is refused with 400 on
// a dataset with reasoning — through the single-write path (one change of
// the default graph) and through the two-write path (several) alike —
// and leaves the served closure as it was.
func TestReasoningRejectsNewRole(t *testing.T) {
	ds := reasoningLUBM1(t, true)
	svc := openService(t, func(o Options) (*Service, error) { return NewDataset(ds, o) }, Options{})
	c, _ := serve(t, svc, nil)
	ctx := context.Background()
	const prefix = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\nPREFIX ex: <http://example.org/>\n"
	const course = "<http://www.Department0.University0.edu/GraduateCourse0>"
	before := svc.cur.Load().ds
	wantExp, wantInf := before.ExplicitTriples(), before.InferredTriples()
	for _, tc := range []struct{ name, update string }{
		{"one change, new class", `INSERT DATA { ex:c1 a ` + course + ` }`},
		{"two changes, new class", `INSERT DATA { ex:s1 a ub:Person } ; INSERT DATA { ex:c1 a ` + course + ` }`},
		{"two changes, new predicate", `INSERT DATA { ex:s1 a ub:Person } ; INSERT DATA { ex:c1 ` + course + ` ex:c2 }`},
		{"delete then insert, new class", `DELETE DATA { <http://www.Department0.University0.edu/UndergraduateStudent0> a ub:UndergraduateStudent } ; INSERT DATA { ex:c1 a ` + course + ` }`},
	} {
		err := c.Update(ctx, prefix+tc.update)
		var he *client.HTTPError
		if !errors.As(err, &he) || he.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s: %v, want a 400 refusal", tc.name, err)
		}
		got := svc.cur.Load().ds
		if got.ExplicitTriples() != wantExp || got.InferredTriples() != wantInf {
			t.Fatalf("%s: the refused request changed the dataset: %d explicit + %d inferred, before %d + %d",
				tc.name, got.ExplicitTriples(), got.InferredTriples(), wantExp, wantInf)
		}
		checkClosure(t, svc)
	}
	// A term new in the request may become a class in it, and a class
	// may become a predicate (it is in the low range already): no data
	// moves.
	if err := c.Update(ctx, prefix+`INSERT DATA { ex:s1 a ub:Person } ; INSERT DATA { ex:s3 a ex:NewClass . ex:s4 ex:newProp ex:s3 . ex:s4 ub:Course ex:s3 }`); err != nil {
		t.Fatal(err)
	}
	checkClosure(t, svc)
}
