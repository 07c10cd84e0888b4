package conformance

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
)

// SuiteBase is where the W3C publishes the SPARQL 1.1 tests. Relative IRIs
// in the manifests, queries, data and expected results resolve against the
// files' locations under it; Suite maps such IRIs back to local files.
const SuiteBase = "http://www.w3.org/2009/sparql/docs/tests/data-sparql11/"

// TopManifests are the manifests Load reads, relative to the suite root:
// the query-language manifest, the result-format manifest (CSV/TSV/JSON),
// the federation manifest (SERVICE) and the entailment manifest, which no
// top-level manifest includes. Tests of the last two are in the skip list.
var TopManifests = []string{
	"manifest-sparql11-query.ttl",
	"manifest-sparql11-results.ttl",
	"manifest-sparql11-fed.ttl",
	"entailment/manifest.ttl",
}

// Vocabularies of the manifests.
const (
	mfNS = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#"
	qtNS = "http://www.w3.org/2001/sw/DataAccess/tests/test-query#"
	sdNS = "http://www.w3.org/ns/sparql-service-description#"
)

// Test is one query-evaluation test of a manifest.
type Test struct {
	// ID is the test IRI relative to SuiteBase ("aggregates/manifest#agg01");
	// the skip list and the known-failures list name tests by it.
	ID   string
	Name string // mf:name
	Type string // local name of the rdf:type (QueryEvaluationTest, CSVResultFormatTest)
	Dir  string // the manifest's directory relative to the root ("aggregates")

	Query     Doc   // qt:query
	Data      []Doc // qt:data: merged into the default graph
	GraphData []Doc // qt:graphData: one named graph each, named by its IRI
	Result    Doc   // mf:result (Path is "" when the manifest gives none)

	// Regimes are the sd:entailmentRegime IRIs (none: simple entailment).
	Regimes []string
	// ServiceData counts qt:serviceData entries (SERVICE endpoints).
	ServiceData int
}

// Doc is a file of the suite: its IRI under SuiteBase and its local path.
type Doc struct {
	IRI  string
	Path string
}

// Suite is the set of tests read from a local copy of the suite.
type Suite struct {
	Root  string // local directory of SuiteBase
	Tests []Test // in manifest order
}

// Load reads the manifests (TopManifests when none are given) under root
// and the manifests they include, and returns their query-evaluation tests
// (mf:QueryEvaluationTest and mf:CSVResultFormatTest; syntax and update
// tests are left out). Manifests are parsed with our Turtle parser.
func Load(root string, manifests ...string) (*Suite, error) {
	if len(manifests) == 0 {
		manifests = TopManifests
	}
	s := &Suite{Root: root}
	seen := map[string]bool{}
	ids := map[string]bool{}
	for _, m := range manifests {
		if err := s.readManifest(SuiteBase+m, seen, ids); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Path maps an IRI under SuiteBase to the local file.
func (s *Suite) Path(iri string) (string, error) {
	rel, ok := strings.CutPrefix(iri, SuiteBase)
	if !ok || rel == "" {
		return "", fmt.Errorf("IRI <%s> is not under %s", iri, SuiteBase)
	}
	if i := strings.IndexAny(rel, "#?"); i >= 0 {
		rel = rel[:i]
	}
	clean := path.Clean(rel)
	if strings.HasPrefix(clean, "../") || clean == ".." {
		return "", fmt.Errorf("IRI <%s> leaves the suite", iri)
	}
	return filepath.Join(s.Root, filepath.FromSlash(clean)), nil
}

func (s *Suite) doc(iri string) (Doc, error) {
	p, err := s.Path(iri)
	return Doc{IRI: iri, Path: p}, err
}

// graph is a manifest's triples indexed by subject and predicate.
type graph map[rdf.Term]map[string][]rdf.Term

func (g graph) all(s rdf.Term, p string) []rdf.Term { return g[s][p] }

func (g graph) one(s rdf.Term, p string) rdf.Term {
	if o := g[s][p]; len(o) > 0 {
		return o[0]
	}
	return rdf.Term{}
}

// list returns the members of the RDF collection at head.
func (g graph) list(head rdf.Term) ([]rdf.Term, error) {
	var out []rdf.Term
	for n := 0; head != rdf.NewIRI(rdf.RDFNil); n++ {
		if head.IsZero() || n > 100000 {
			return nil, errors.New("malformed RDF collection")
		}
		out = append(out, g.one(head, rdf.RDFFirst))
		head = g.one(head, rdf.RDFRest)
	}
	return out, nil
}

func (s *Suite) readManifest(iri string, seen, ids map[string]bool) error {
	return s.eachEntry(iri, seen, func(g graph, e rdf.Term, dir string) error {
		typ, _ := strings.CutPrefix(g.one(e, rdf.RDFType).Value, mfNS)
		if typ != "QueryEvaluationTest" && typ != "CSVResultFormatTest" {
			return nil
		}
		t, err := s.test(g, e, typ, dir)
		if err != nil {
			return fmt.Errorf("%s: test <%s>: %w", iri, e.Value, err)
		}
		if ids[t.ID] {
			return fmt.Errorf("%s: test %s listed twice", iri, t.ID)
		}
		ids[t.ID] = true
		s.Tests = append(s.Tests, t)
		return nil
	})
}

// eachEntry reads the manifest at iri and, once each, the manifests it
// includes (mf:include), and calls fn for every member of their mf:entries
// lists, with the graph of the manifest listing it and the suite directory
// that manifest is in (e.g. "basic-update").
func (s *Suite) eachEntry(iri string, seen map[string]bool, fn func(g graph, e rdf.Term, dir string) error) error {
	if seen[iri] {
		return nil
	}
	seen[iri] = true
	g, err := s.readGraph(iri)
	if err != nil {
		return err
	}
	me := rdf.NewIRI(iri)
	for _, l := range g.all(me, mfNS+"include") {
		incs, err := g.list(l)
		if err != nil {
			return fmt.Errorf("%s: mf:include: %w", iri, err)
		}
		for _, inc := range incs {
			if err := s.eachEntry(inc.Value, seen, fn); err != nil {
				return err
			}
		}
	}
	dir := strings.TrimSuffix(path.Dir(strings.TrimPrefix(iri, SuiteBase)), "/")
	for _, l := range g.all(me, mfNS+"entries") {
		entries, err := g.list(l)
		if err != nil {
			return fmt.Errorf("%s: mf:entries: %w", iri, err)
		}
		for _, e := range entries {
			if err := fn(g, e, dir); err != nil {
				return err
			}
		}
	}
	return nil
}

// readGraph parses the manifest at iri into a graph.
func (s *Suite) readGraph(iri string) (graph, error) {
	file, err := s.Path(iri)
	if err != nil {
		return nil, err
	}
	g := graph{}
	err = loader.ParseFile(file, loader.Options{Base: iri}, func(q rdf.Quad) error {
		if g[q.S] == nil {
			g[q.S] = map[string][]rdf.Term{}
		}
		g[q.S][q.P.Value] = append(g[q.S][q.P.Value], q.O)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read manifest: %w", err)
	}
	if g[rdf.NewIRI(iri)] == nil {
		return nil, fmt.Errorf("%s: no manifest resource <%s>", file, iri)
	}
	return g, nil
}

func (s *Suite) test(g graph, e rdf.Term, typ, dir string) (Test, error) {
	id, ok := strings.CutPrefix(e.Value, SuiteBase)
	if !e.IsIRI() || !ok {
		return Test{}, fmt.Errorf("test is not named by an IRI under %s", SuiteBase)
	}
	t := Test{ID: id, Name: g.one(e, mfNS+"name").Value, Type: typ, Dir: dir}
	action := g.one(e, mfNS+"action")
	var err error
	if t.Query, err = s.doc(g.one(action, qtNS+"query").Value); err != nil {
		return Test{}, fmt.Errorf("qt:query: %w", err)
	}
	for _, d := range g.all(action, qtNS+"data") {
		doc, err := s.doc(d.Value)
		if err != nil {
			return Test{}, fmt.Errorf("qt:data: %w", err)
		}
		t.Data = append(t.Data, doc)
	}
	for _, d := range g.all(action, qtNS+"graphData") {
		doc, err := s.doc(d.Value)
		if err != nil {
			return Test{}, fmt.Errorf("qt:graphData: %w", err)
		}
		t.GraphData = append(t.GraphData, doc)
	}
	t.ServiceData = len(g.all(action, qtNS+"serviceData"))
	if r := g.one(e, mfNS+"result"); !r.IsZero() {
		if t.Result, err = s.doc(r.Value); err != nil {
			return Test{}, fmt.Errorf("mf:result: %w", err)
		}
	}
	for _, r := range append(g.all(action, sdNS+"entailmentRegime"), g.all(e, sdNS+"entailmentRegime")...) {
		if r.IsIRI() {
			t.Regimes = append(t.Regimes, r.Value)
			continue
		}
		items, err := g.list(r)
		if err != nil {
			return Test{}, fmt.Errorf("sd:entailmentRegime: %w", err)
		}
		for _, it := range items {
			t.Regimes = append(t.Regimes, it.Value)
		}
	}
	return t, nil
}
