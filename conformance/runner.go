package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wukongd/wukongd/results"
	"github.com/wukongd/wukongd/sparql"
)

// Status is the outcome of one test.
type Status uint8

const (
	Pass Status = iota + 1
	Fail
	Skip
)

func (s Status) String() string {
	switch s {
	case Pass:
		return "pass"
	case Fail:
		return "FAIL"
	case Skip:
		return "skip"
	}
	return "?"
}

// Outcome is the result of running one test once.
type Outcome struct {
	ID     string
	Dir    string // for per-directory counts
	Status Status
	// Reason is one line: why the test failed or is skipped. It names no
	// blank-node labels, timings or memory addresses, so that the
	// known-failures list stays stable from run to run.
	Reason string
	// Detail is everything else worth printing for a failure: the query,
	// the dataset, a panic's stack.
	Detail string
	// Note is a remark on a passing test (e.g. the order was not checked).
	Note string
}

// RunOptions configure Run.
type RunOptions struct {
	Shards  int
	Timeout time.Duration // per test (default 10s)
	Eval    Evaluator     // default Evaluate
	// NumbersByValue compares numeric literals of one datatype by value
	// (NumbersByValue); the W3C tests are run so, our own tests not.
	NumbersByValue bool
	// Shapes runs the query through the template of its shape
	// (ShapeEvaluator) instead of Eval; Templated, if set, counts the
	// queries that got one.
	Shapes    bool
	Templated *atomic.Int64
}

// Run runs the test t: it parses the query (with the query file's W3C
// location as base IRI), loads the dataset, reads the expected result,
// evaluates the query with opts.Eval under RunGuarded, and compares.
func (s *Suite) Run(ctx context.Context, t Test, opts RunOptions) Outcome {
	out := Outcome{ID: t.ID, Dir: t.Dir}
	fail := func(reason string, detail ...string) Outcome {
		out.Status, out.Reason = Fail, firstLine(reason)
		out.Detail = strings.Join(detail, "\n")
		if rest := restLines(reason); rest != "" {
			out.Detail = rest + "\n" + out.Detail
		}
		return out
	}
	text, err := os.ReadFile(t.Query.Path)
	if err != nil {
		return fail(fmt.Sprintf("cannot read the query: %v", err))
	}
	q, err := ParseQuery(string(text), t.Query.IRI)
	if err != nil {
		return fail(fmt.Sprintf("parser: %v", err), string(text))
	}
	ds, err := s.dataset(t, q)
	if err != nil {
		return fail(err.Error(), string(text))
	}
	want, err := ReadExpected(t.Result)
	if err != nil {
		return fail(fmt.Sprintf("expected result %s: %v", t.Result.IRI, err), string(text))
	}
	// The result-format tests check our writers: the answer goes through
	// the writer and reader of the expected file's format.
	want.RoundTrip = t.Type == "CSVResultFormatTest" || t.Dir == "csv-tsv-res" || t.Dir == "json-res"
	if opts.Shapes {
		opts.Eval = ShapeEvaluator(string(text), t.Query.IRI, opts.Templated)
	}
	return finish(ctx, out, q, string(text), ds, want, opts)
}

// finish evaluates q over ds and compares the answer with want.
func finish(ctx context.Context, out Outcome, q *sparql.Query, text string, ds *Dataset, want *Answer, opts RunOptions) Outcome {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Eval == nil {
		opts.Eval = Evaluate
	}
	if opts.Shards <= 0 {
		opts.Shards = 1
	}
	detail := "query:\n" + strings.TrimRight(text, "\n") + "\ndataset: " + ds.describe()
	got, err := RunGuarded(ctx, opts.Timeout, opts.Eval, ds, q, opts.Shards)
	if err != nil {
		out.Status = Fail
		var pe *PanicError
		if errors.As(err, &pe) {
			out.Reason = "engine panic: " + firstLine(fmt.Sprint(pe.Value))
			out.Detail = detail + "\n" + pe.Stack
			return out
		}
		out.Reason = firstLine(err.Error())
		out.Detail = detail
		if rest := restLines(err.Error()); rest != "" {
			out.Detail = rest + "\n" + detail
		}
		return out
	}
	keys, checked := OrderKeys(q)
	if opts.NumbersByValue && want.Format != results.FormatCSV {
		want, got = NumbersByValue(want), NumbersByValue(got)
	}
	if diff := Compare(want, got, keys); diff != "" {
		out.Status, out.Reason = Fail, firstLine(diff)
		out.Detail = diff + "\n" + detail
		return out
	}
	out.Status = Pass
	if !checked {
		out.Note = "order not checked: an ORDER BY key is not a projected variable"
	}
	return out
}

// ParseQuery parses query text with base as its base IRI. The parser has
// no base option, so a BASE declaration is put in front of the text, on
// the same line so that error positions keep their line numbers (columns
// on line 1 shift); a BASE in the query still applies after it.
func ParseQuery(text, base string) (*sparql.Query, error) {
	if base != "" {
		text = "BASE <" + base + "> " + text
	}
	return sparql.ParseQuery(text)
}

// dataset builds the RDF dataset of a test: qt:data merged into the
// default graph, each qt:graphData as a named graph named by its IRI, and
// the graphs of the query's FROM and FROM NAMED clauses as named graphs
// under their IRIs (the engine selects them as the query says).
func (s *Suite) dataset(t Test, q *sparql.Query) (*Dataset, error) {
	ds := &Dataset{}
	for _, d := range t.Data {
		ts, err := readGraph(d)
		if err != nil {
			return nil, fmt.Errorf("qt:data %s: %v", d.IRI, err)
		}
		ds.Default = append(ds.Default, ts...)
	}
	named := func(iri string) error {
		for _, g := range ds.Named {
			if g.IRI == iri {
				return nil
			}
		}
		doc, err := s.doc(iri)
		if err != nil {
			return err
		}
		ts, err := readGraph(doc)
		if err != nil {
			return err
		}
		ds.AddNamed(iri, ts)
		return nil
	}
	for _, d := range t.GraphData {
		if err := named(d.IRI); err != nil {
			return nil, fmt.Errorf("qt:graphData %s: %v", d.IRI, err)
		}
	}
	if q.Dataset != nil {
		for _, iri := range append(append([]string(nil), q.Dataset.Default...), q.Dataset.Named...) {
			if err := named(iri); err != nil {
				return nil, fmt.Errorf("FROM <%s>: %v", iri, err)
			}
		}
	}
	return ds, nil
}

// OrderKeys returns the variables of the query's top-level ORDER BY when
// the order of the answer is defined by it and can be checked from the
// answer: every condition is a variable that the query projects. checked
// is false when the query has an ORDER BY whose order cannot be checked
// that way (the answer is then compared as a bag).
func OrderKeys(q *sparql.Query) (keys []string, checked bool) {
	// The solution modifiers sit on top in the spec's order: Slice,
	// Distinct or Reduced, Project, OrderBy. Below the query's own Project
	// starts the WHERE pattern (where a sub-query's ORDER BY orders
	// nothing).
	p := q.Pattern
	for projected := false; ; {
		switch n := p.(type) {
		case *sparql.Slice:
			p = n.Input
		case *sparql.Distinct:
			p = n.Input
		case *sparql.Reduced:
			p = n.Input
		case *sparql.Project:
			if projected {
				return nil, true
			}
			projected = true
			p = n.Input
		case *sparql.OrderBy:
			if q.Form != sparql.FormSelect {
				return nil, true
			}
			proj := map[sparql.Var]bool{}
			for _, v := range q.Vars {
				proj[v] = true
			}
			for _, c := range n.Conds {
				v, ok := c.Expr.(*sparql.VarExpr)
				if !ok || !proj[v.Var] {
					return nil, false
				}
				keys = append(keys, string(v.Var))
			}
			return keys, true
		default:
			return nil, true
		}
		if projected {
			if _, ok := p.(*sparql.OrderBy); !ok {
				return nil, true
			}
		}
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

func restLines(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return ""
}
