package conformance

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/results"
)

// AnswerKind says which of the three kinds of answers an Answer is.
type AnswerKind uint8

const (
	// Solutions: SELECT.
	Solutions AnswerKind = iota + 1
	// Boolean: ASK.
	Boolean
	// Graph: CONSTRUCT and DESCRIBE.
	Graph
)

func (k AnswerKind) String() string {
	switch k {
	case Solutions:
		return "solutions"
	case Boolean:
		return "boolean"
	case Graph:
		return "graph"
	}
	return "none"
}

// Answer is the answer to a query, expected or actual.
type Answer struct {
	Kind    AnswerKind
	Vars    []string     // Solutions: variable names without '?'
	Rows    [][]rdf.Term // Solutions: row[i] binds Vars[i]; the zero Term is unbound
	Boolean bool         // Boolean
	Graph   []rdf.Triple // Graph
	// Format is the results format the expected answer was read from; CSV
	// loses term kinds and datatypes, so the actual answer is compared
	// after a round trip through our CSV writer and reader.
	Format results.Format
	// RoundTrip asks for the same round trip through Format for the other
	// formats too (the result-format tests, which test our writers).
	RoundTrip bool
}

const rsNS = "http://www.w3.org/2001/sw/DataAccess/tests/result-set#"

// ReadExpected reads an expected result: SPARQL results in XML (.srx),
// JSON (.srj), TSV or CSV with our results readers; a graph in Turtle,
// RDF/XML or N-Triples with our loader, which is either a CONSTRUCT or
// DESCRIBE answer or a result set in the DAWG rs: vocabulary.
func ReadExpected(d Doc) (*Answer, error) {
	if d.Path == "" {
		return nil, fmt.Errorf("the test gives no mf:result")
	}
	ext := strings.ToLower(filepath.Ext(d.Path))
	var f results.Format
	switch ext {
	case ".srx":
		f = results.FormatXML
	case ".srj":
		f = results.FormatJSON
	case ".tsv":
		f = results.FormatTSV
	case ".csv":
		f = results.FormatCSV
	case ".ttl", ".rdf", ".nt":
		triples, err := readGraph(d)
		if err != nil {
			return nil, err
		}
		if a, ok, err := resultSetGraph(triples); ok || err != nil {
			return a, err
		}
		return &Answer{Kind: Graph, Graph: triples}, nil
	default:
		return nil, fmt.Errorf("unknown result file type %q", ext)
	}
	data, err := os.ReadFile(d.Path)
	if err != nil {
		return nil, err
	}
	r, err := results.Read(f, bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("results reader (%s): %w", f, err)
	}
	if r.IsBoolean {
		return &Answer{Kind: Boolean, Boolean: r.Boolean, Format: f}, nil
	}
	return &Answer{Kind: Solutions, Vars: r.Vars, Rows: r.Rows, Format: f}, nil
}

// resultSetGraph converts a graph holding an rs:ResultSet to an answer.
// ok is false when the graph holds no result set.
func resultSetGraph(triples []rdf.Triple) (a *Answer, ok bool, err error) {
	g := graph{}
	var set rdf.Term
	for _, t := range triples {
		if g[t.S] == nil {
			g[t.S] = map[string][]rdf.Term{}
		}
		g[t.S][t.P.Value] = append(g[t.S][t.P.Value], t.O)
		if t.P.Value == rdf.RDFType && t.O == rdf.NewIRI(rsNS+"ResultSet") {
			if !set.IsZero() && set != t.S {
				return nil, true, fmt.Errorf("more than one rs:ResultSet")
			}
			set = t.S
		}
	}
	if set.IsZero() {
		return nil, false, nil
	}
	if b := g.one(set, rsNS+"boolean"); !b.IsZero() {
		return &Answer{Kind: Boolean, Boolean: b.Value == "true" || b.Value == "1"}, true, nil
	}
	a = &Answer{Kind: Solutions}
	col := map[string]int{}
	for _, v := range g.all(set, rsNS+"resultVariable") {
		col[v.Value] = len(a.Vars)
		a.Vars = append(a.Vars, v.Value)
	}
	sols := g.all(set, rsNS+"solution")
	type indexed struct {
		index int
		row   []rdf.Term
	}
	rows := make([]indexed, 0, len(sols))
	for _, s := range sols {
		row := make([]rdf.Term, len(a.Vars))
		for _, b := range g.all(s, rsNS+"binding") {
			name := g.one(b, rsNS+"variable").Value
			c, known := col[name]
			if !known {
				return nil, true, fmt.Errorf("rs:binding of %q, which is not an rs:resultVariable", name)
			}
			row[c] = g.one(b, rsNS+"value")
		}
		idx := -1
		if i := g.one(s, rsNS+"index"); !i.IsZero() {
			if idx, err = strconv.Atoi(i.Value); err != nil {
				return nil, true, fmt.Errorf("bad rs:index %s", i)
			}
		}
		rows = append(rows, indexed{idx, row})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].index < rows[j].index })
	for _, r := range rows {
		a.Rows = append(a.Rows, r.row)
	}
	return a, true, nil
}
