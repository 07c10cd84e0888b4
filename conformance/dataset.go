package conformance

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
)

// Dataset is the RDF dataset a query runs over: the default graph and the
// named graphs, each named by an IRI.
type Dataset struct {
	Default []rdf.Triple
	Named   []NamedGraph // sorted by IRI, names distinct
}

// NamedGraph is one named graph of a Dataset.
type NamedGraph struct {
	IRI     string
	Triples []rdf.Triple
}

// AddNamed adds triples to the named graph iri (creating it).
func (d *Dataset) AddNamed(iri string, triples []rdf.Triple) {
	i := sort.Search(len(d.Named), func(i int) bool { return d.Named[i].IRI >= iri })
	if i == len(d.Named) || d.Named[i].IRI != iri {
		d.Named = append(d.Named, NamedGraph{})
		copy(d.Named[i+1:], d.Named[i:])
		d.Named[i] = NamedGraph{IRI: iri}
	}
	d.Named[i].Triples = append(d.Named[i].Triples, triples...)
}

// AddQuads adds quads: those with a graph name to that named graph, the
// others to the default graph (TriG data in our own tests).
func (d *Dataset) AddQuads(quads []rdf.Quad) error {
	named := map[string][]rdf.Triple{}
	var names []string
	for _, q := range quads {
		switch {
		case q.G.IsZero():
			d.Default = append(d.Default, q.Triple())
		case q.G.IsIRI():
			if named[q.G.Value] == nil {
				names = append(names, q.G.Value)
			}
			named[q.G.Value] = append(named[q.G.Value], q.Triple())
		default:
			return fmt.Errorf("graph name %s is not an IRI", q.G)
		}
	}
	for _, n := range names {
		d.AddNamed(n, named[n])
	}
	return nil
}

// rdfCache keeps parsed data files: many tests share them.
var rdfCache sync.Map // path + "\x00" + base → rdfFile

type rdfFile struct {
	quads []rdf.Quad
	err   error
}

// ReadRDF parses the RDF file at path (format by extension) with base as
// its base IRI, with our loader. Results are cached per (path, base); the
// returned slice must not be modified. Blank nodes are scoped to the file.
func ReadRDF(path, base string) ([]rdf.Quad, error) {
	key := path + "\x00" + base
	if f, ok := rdfCache.Load(key); ok {
		return f.(rdfFile).quads, f.(rdfFile).err
	}
	var quads []rdf.Quad
	err := loader.ParseFile(path, loader.Options{Base: base}, func(q rdf.Quad) error {
		quads = append(quads, q)
		return nil
	})
	if err != nil {
		err = fmt.Errorf("loader: %w", err)
		quads = nil
	}
	rdfCache.Store(key, rdfFile{quads, err})
	return quads, err
}

// readGraph reads a file that must hold triples only.
func readGraph(d Doc) ([]rdf.Triple, error) {
	quads, err := ReadRDF(d.Path, d.IRI)
	if err != nil {
		return nil, err
	}
	out := make([]rdf.Triple, 0, len(quads))
	for _, q := range quads {
		if !q.G.IsZero() {
			return nil, fmt.Errorf("%s: statement in a named graph", d.Path)
		}
		out = append(out, q.Triple())
	}
	return out, nil
}

// describe summarizes a dataset for failure messages.
func (d *Dataset) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "default graph: %d triples", len(d.Default))
	for _, g := range d.Named {
		fmt.Fprintf(&b, "; <%s>: %d triples", g.IRI, len(g.Triples))
	}
	return b.String()
}
