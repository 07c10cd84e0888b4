package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/service"
	"github.com/wukongd/wukongd/web"
)

// UpdateManifest is the top manifest of the SPARQL 1.1 Update suite.
const UpdateManifest = "manifest-sparql11-update.ttl"

const (
	utNS      = "http://www.w3.org/2009/sparql/tests/test-update#"
	rdfsLabel = "http://www.w3.org/2000/01/rdf-schema#label"
)

// UpdateTest is one mf:UpdateEvaluationTest: a request run on a dataset,
// and the dataset it must leave.
type UpdateTest struct {
	ID, Name, Dir string
	Request       Doc          // ut:request (a .ru file)
	Before, After GraphDataset // mf:action and mf:result
}

// GraphDataset is a dataset of a manifest: ut:data (the default graph)
// and ut:graphData (named graphs, each a file and the graph's IRI in
// rdfs:label).
type GraphDataset struct {
	Default []Doc
	Named   []NamedDoc
}

// NamedDoc is a file loaded as the named graph IRI.
type NamedDoc struct {
	IRI string
	Doc Doc
}

// LoadUpdates reads the Update manifest under root, with the manifests it
// includes, and returns its mf:UpdateEvaluationTest entries (the syntax
// tests are the sparql package's).
func LoadUpdates(root string) ([]UpdateTest, error) {
	s := &Suite{Root: root}
	var out []UpdateTest
	err := s.eachEntry(SuiteBase+UpdateManifest, map[string]bool{}, func(g graph, e rdf.Term, dir string) error {
		if g.one(e, rdf.RDFType).Value != mfNS+"UpdateEvaluationTest" {
			return nil
		}
		t, err := s.updateTest(g, e, dir)
		if err != nil {
			return fmt.Errorf("test <%s>: %w", e.Value, err)
		}
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Suite) updateTest(g graph, e rdf.Term, dir string) (UpdateTest, error) {
	id, ok := strings.CutPrefix(e.Value, SuiteBase)
	if !e.IsIRI() || !ok {
		return UpdateTest{}, fmt.Errorf("test is not named by an IRI under %s", SuiteBase)
	}
	t := UpdateTest{ID: id, Name: g.one(e, mfNS+"name").Value, Dir: dir}
	action := g.one(e, mfNS+"action")
	var err error
	if t.Request, err = s.doc(g.one(action, utNS+"request").Value); err != nil {
		return UpdateTest{}, fmt.Errorf("ut:request: %w", err)
	}
	if t.Before, err = s.graphDataset(g, action); err != nil {
		return UpdateTest{}, fmt.Errorf("mf:action: %w", err)
	}
	if t.After, err = s.graphDataset(g, g.one(e, mfNS+"result")); err != nil {
		return UpdateTest{}, fmt.Errorf("mf:result: %w", err)
	}
	return t, nil
}

func (s *Suite) graphDataset(g graph, node rdf.Term) (GraphDataset, error) {
	var d GraphDataset
	if node.IsZero() {
		return d, nil
	}
	for _, x := range g.all(node, utNS+"data") {
		doc, err := s.doc(x.Value)
		if err != nil {
			return d, fmt.Errorf("ut:data: %w", err)
		}
		d.Default = append(d.Default, doc)
	}
	for _, gd := range g.all(node, utNS+"graphData") {
		doc, err := s.doc(g.one(gd, utNS+"graph").Value)
		if err != nil {
			return d, fmt.Errorf("ut:graphData: %w", err)
		}
		name := g.one(gd, rdfsLabel).Value
		if name == "" {
			return d, errors.New("ut:graphData without rdfs:label")
		}
		d.Named = append(d.Named, NamedDoc{IRI: name, Doc: doc})
	}
	return d, nil
}

// dataset reads the files of d.
func (d GraphDataset) dataset() (*Dataset, error) {
	ds := &Dataset{}
	for _, doc := range d.Default {
		ts, err := readGraph(doc)
		if err != nil {
			return nil, err
		}
		ds.Default = append(ds.Default, ts...)
	}
	for _, n := range d.Named {
		ts, err := readGraph(n.Doc)
		if err != nil {
			return nil, err
		}
		ds.AddNamed(n.IRI, ts)
	}
	return ds, nil
}

// RunUpdate runs an Update test on a service (package service, as the
// server runs it: the request's operations in order, published as one
// change) over a dataset of shards shards built from the test's data, and
// compares the dataset it leaves with the expected one: the default graph
// and every non-empty named graph, as one set of quads up to a one-to-one
// renaming of blank nodes.
func RunUpdate(ctx context.Context, t UpdateTest, shards int, timeout time.Duration) Outcome {
	out := Outcome{ID: t.ID, Dir: t.Dir}
	fail := func(reason string, detail ...string) Outcome {
		out.Status, out.Reason = Fail, firstLine(reason)
		out.Detail = strings.Join(detail, "\n")
		return out
	}
	text, err := os.ReadFile(t.Request.Path)
	if err != nil {
		return fail(fmt.Sprintf("cannot read the request: %v", err))
	}
	before, err := t.Before.dataset()
	if err != nil {
		return fail(err.Error())
	}
	after, err := t.After.dataset()
	if err != nil {
		return fail(err.Error())
	}
	svc, err := newService(before, shards)
	if err != nil {
		return fail(err.Error())
	}
	defer svc.Close()
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req := "BASE <" + t.Request.IRI + ">\n" + string(text)
	detail := "request:\n" + strings.TrimRight(string(text), "\n") + "\ndataset before: " + before.describe()
	if err := svc.Update(ctx, &web.UpdateRequest{Update: req}); err != nil {
		return fail("update: "+err.Error(), detail)
	}
	got, err := dumpQuads(ctx, svc)
	if err != nil {
		return fail(err.Error(), detail)
	}
	if _, diff := rdf.MatchBags(got, datasetQuads(after)); diff != "" {
		return fail(fmt.Sprintf("dataset differs (%d quads, want %d): %s", len(got), len(datasetQuads(after)), diff), detail)
	}
	out.Status = Pass
	return out
}

// newService serves ds with a service of shards shards.
func newService(ds *Dataset, shards int) (*service.Service, error) {
	b, err := graphstore.NewDatasetBuilder(shards)
	if err != nil {
		return nil, err
	}
	if err := b.AddTriples(rdf.Term{}, ds.Default); err != nil {
		return nil, fmt.Errorf("graphstore: %w", err)
	}
	for _, g := range ds.Named {
		name := rdf.NewIRI(g.IRI)
		if err := b.AddGraph(name); err != nil {
			return nil, fmt.Errorf("graphstore: %w", err)
		}
		if err := b.AddTriples(name, g.Triples); err != nil {
			return nil, fmt.Errorf("graphstore: %w", err)
		}
	}
	st, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("graphstore: %w", err)
	}
	return service.NewDataset(st, service.Options{Shards: shards})
}

// dumpQuads reads every quad of the backend's dataset (the default
// graph's with an empty graph term) by a query.
func dumpQuads(ctx context.Context, b web.Backend) ([][]rdf.Term, error) {
	res, err := b.Query(ctx, &web.QueryRequest{Query: "SELECT ?s ?p ?o ?g WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }"})
	if err != nil {
		return nil, fmt.Errorf("reading the dataset back: %w", err)
	}
	defer res.Rows.Close()
	var out [][]rdf.Term
	for res.Rows.Next() {
		out = append(out, append([]rdf.Term(nil), res.Rows.Row()...))
	}
	if err := res.Rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the dataset back: %w", err)
	}
	return dedupTuples(out), nil
}

// datasetQuads is ds as a set of quads (s, p, o, g).
func datasetQuads(ds *Dataset) [][]rdf.Term {
	var out [][]rdf.Term
	for _, t := range ds.Default {
		out = append(out, []rdf.Term{t.S, t.P, t.O, {}})
	}
	for _, g := range ds.Named {
		for _, t := range g.Triples {
			out = append(out, []rdf.Term{t.S, t.P, t.O, rdf.NewIRI(g.IRI)})
		}
	}
	return dedupTuples(out)
}

func dedupTuples(in [][]rdf.Term) [][]rdf.Term {
	key := func(r []rdf.Term) string {
		var b strings.Builder
		for _, t := range r {
			b.WriteString(t.String())
			b.WriteByte(0)
		}
		return b.String()
	}
	sort.Slice(in, func(i, j int) bool { return key(in[i]) < key(in[j]) })
	out := in[:0]
	for i, r := range in {
		if i > 0 && key(r) == key(in[i-1]) {
			continue
		}
		out = append(out, r)
	}
	return out
}
