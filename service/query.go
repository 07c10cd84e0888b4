package service

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
	"github.com/wukongd/wukongd/web"
)

// Query implements web.Backend.
func (s *Service) Query(ctx context.Context, req *web.QueryRequest) (*web.Result, error) {
	q, err := s.cache.ParseQuery(req.Query)
	if err != nil {
		return nil, err // *sparql.SyntaxError
	}
	if len(req.DefaultGraphs) > 0 || len(req.NamedGraphs) > 0 {
		return nil, fmt.Errorf("%w: default-graph-uri and named-graph-uri need named graphs, which the store does not have yet", web.ErrUnsupported)
	}
	run, form, err := engineQuery(q)
	if err != nil {
		return nil, err
	}
	g, err := s.acquire()
	if err != nil {
		return nil, err
	}
	opts := exec.Options{Mode: s.opts.Mode, ForkThreshold: s.opts.ForkThreshold, Analyze: req.Explain == web.ExplainAnalyze}
	if req.Explain == web.ExplainPlan {
		defer g.release()
		plan, err := g.eng.Plan(run, opts)
		if err != nil {
			return nil, engineError(err, q)
		}
		return &web.Result{Form: form, Plan: webPlan(q, plan, nil, g.eng.Store())}, nil
	}
	res, err := g.eng.Run(ctx, run, opts)
	if err != nil {
		g.release()
		if ctxErr := ctx.Err(); ctxErr != nil && !isCtxErr(err) {
			// The engine failed because the query was stopped (a
			// sub-query's error text does not wrap the context's error).
			return nil, fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return nil, engineError(err, q)
	}
	if req.Explain == web.ExplainAnalyze {
		defer g.release()
		return &web.Result{Form: form, Plan: webPlan(q, res.Plan, res.Analysis, g.eng.Store())}, nil
	}
	switch form {
	case web.FormAsk:
		defer g.release()
		return &web.Result{Form: form, Boolean: res.Len() > 0}, nil
	case web.FormConstruct:
		return &web.Result{Form: form, Triples: newConstructIter(ctx, g, res, q.Template)}, nil
	}
	return &web.Result{Form: web.FormSelect, Vars: res.VarNames(), Rows: newRowIter(ctx, g, res)}, nil
}

// engineQuery returns the SELECT query the engine runs for q and the form
// of the answer: ASK and CONSTRUCT run their pattern as a SELECT (of no
// variable, or of the template's variables) and are finished here.
func engineQuery(q *sparql.Query) (*sparql.Query, web.Form, error) {
	switch q.Form {
	case sparql.FormSelect:
		return q, web.FormSelect, nil
	case sparql.FormAsk:
		c := *q // the parsed query is shared through the cache: copy
		c.Form, c.Vars = sparql.FormSelect, nil
		return &c, web.FormAsk, nil
	case sparql.FormConstruct:
		c := *q
		c.Form, c.Vars, c.Template = sparql.FormSelect, templateVars(q.Template), nil
		return &c, web.FormConstruct, nil
	}
	return nil, 0, unsupported(q.Pos, q.Form.String()+" queries")
}

// templateVars returns the variables of a CONSTRUCT template, in order of
// first appearance.
func templateVars(tps []sparql.TriplePattern) []sparql.Var {
	var vars []sparql.Var
	seen := map[sparql.Var]bool{}
	for _, tp := range tps {
		for _, x := range []sparql.TermOrVar{tp.S, tp.P, tp.O} {
			if x.IsVar() && !seen[x.Var] {
				seen[x.Var] = true
				vars = append(vars, x.Var)
			}
		}
	}
	return vars
}

// unsupportedError is a query feature the engine does not run yet.
type unsupportedError struct {
	what string
	pos  sparql.Pos
}

func unsupported(pos sparql.Pos, what string) error { return &unsupportedError{what: what, pos: pos} }

func (e *unsupportedError) Error() string {
	msg := web.ErrUnsupported.Error() + ": " + e.what
	if e.pos.Line > 0 {
		msg += fmt.Sprintf(" (line %d, column %d)", e.pos.Line, e.pos.Col)
	}
	return msg + " — the engine does not run this yet"
}

func (e *unsupportedError) Is(target error) bool { return target == web.ErrUnsupported }

// featureNames names the algebra nodes after the SPARQL syntax that makes
// them, for error messages.
var featureNames = map[string]string{
	"PathPattern":  "property paths",
	"LeftJoin":     "OPTIONAL",
	"Filter":       "FILTER",
	"Union":        "UNION",
	"Minus":        "MINUS",
	"Graph":        "GRAPH",
	"Extend":       "BIND or a SELECT expression",
	"Group":        "GROUP BY or aggregates",
	"Values":       "VALUES",
	"Service":      "SERVICE",
	"OrderBy":      "ORDER BY",
	"Project":      "a sub-select",
	"Distinct":     "DISTINCT in a sub-select",
	"Reduced":      "REDUCED in a sub-select",
	"Slice":        "LIMIT/OFFSET in a sub-select",
	"BGP":          "a basic graph pattern",
	"Join":         "a group",
	"ExistsExpr":   "EXISTS",
	"Aggregate":    "aggregates",
	"FuncExpr":     "a function call",
	"CallExpr":     "a built-in function",
	"BinaryExpr":   "an expression",
	"UnaryExpr":    "an expression",
	"InExpr":       "IN",
	"VarExpr":      "a variable",
	"TermExpr":     "a constant",
	"SequencePath": "property paths",
}

// groupsAtTop reports whether a Group lies under the solution modifiers,
// BINDs and HAVING filters at the top of p.
func groupsAtTop(p sparql.Pattern) bool {
	for p != nil {
		switch n := p.(type) {
		case *sparql.Group:
			return true
		case *sparql.Slice:
			p = n.Input
		case *sparql.Distinct:
			p = n.Input
		case *sparql.Reduced:
			p = n.Input
		case *sparql.Project:
			p = n.Input
		case *sparql.OrderBy:
			p = n.Input
		case *sparql.Extend:
			p = n.Input
		case *sparql.Filter:
			p = n.Input
		default:
			return false
		}
	}
	return false
}

var algebraType = regexp.MustCompile(`\*sparql\.([A-Za-z]+)`)

// engineError turns the planner's and engine's errors into the errors web
// maps: unsupported features become web.ErrUnsupported, with the algebra
// type named after its SPARQL syntax.
func engineError(err error, q *sparql.Query) error {
	if !errors.Is(err, planner.ErrUnsupported) {
		return err
	}
	msg := err.Error()
	if strings.Contains(msg, "*sparql.Extend") && q != nil && groupsAtTop(q.Pattern) {
		// The aggregates' results are bound by an Extend above the Group.
		msg = strings.Replace(msg, "*sparql.Extend", "*sparql.Group", 1)
	}
	if i := strings.Index(msg, planner.ErrUnsupported.Error()+": "); i >= 0 {
		msg = msg[i+len(planner.ErrUnsupported.Error())+2:]
	}
	msg = algebraType.ReplaceAllStringFunc(msg, func(m string) string {
		if name, ok := featureNames[m[len("*sparql."):]]; ok {
			return name
		}
		return m
	})
	return &unsupportedError{what: msg}
}

// rowIter streams a SELECT result, decoding one row per Next. It holds a
// reference to the generation the query ran on until Close.
type rowIter struct {
	ctx  context.Context
	g    *generation
	res  *exec.Result
	i    int
	row  []rdf.Term
	err  error
	done bool
}

func newRowIter(ctx context.Context, g *generation, res *exec.Result) *rowIter {
	return &rowIter{ctx: ctx, g: g, res: res, i: -1}
}

// ctxCheckEvery is how many rows pass between checks of the context.
const ctxCheckEvery = 256

func (it *rowIter) Next() bool {
	if it.done {
		return false
	}
	it.i++
	if it.i%ctxCheckEvery == 0 {
		if err := it.ctx.Err(); err != nil {
			it.err, it.done = err, true
			return false
		}
	}
	if it.i >= it.res.Len() {
		it.done = true
		return false
	}
	it.row = it.res.Row(it.i, it.row)
	return true
}

func (it *rowIter) Row() []rdf.Term { return it.row }
func (it *rowIter) Err() error      { return it.err }

func (it *rowIter) Close() error {
	if it.g != nil {
		it.done = true
		it.g.release()
		it.g = nil
	}
	return nil
}

// constructIter instantiates a CONSTRUCT template for each row of res,
// skipping triples with an unbound or ill-placed term (a literal subject,
// a non-IRI predicate) and triples already produced.
type constructIter struct {
	ctx      context.Context
	g        *generation
	res      *exec.Result
	tmpl     []sparql.TriplePattern
	cols     map[sparql.Var]int
	i, k     int
	row      []rdf.Term
	bnodes   map[string]rdf.Term
	seen     map[rdf.Triple]struct{}
	cur      rdf.Triple
	err      error
	done     bool
	solution int
}

func newConstructIter(ctx context.Context, g *generation, res *exec.Result, tmpl []sparql.TriplePattern) *constructIter {
	cols := map[sparql.Var]int{}
	for i, v := range res.Vars {
		cols[v] = i
	}
	return &constructIter{ctx: ctx, g: g, res: res, tmpl: tmpl, cols: cols, i: -1, k: len(tmpl),
		seen: map[rdf.Triple]struct{}{}}
}

func (it *constructIter) term(x sparql.TermOrVar) rdf.Term {
	if x.IsVar() {
		if c, ok := it.cols[x.Var]; ok {
			return it.row[c]
		}
		return rdf.Term{}
	}
	if x.Term.IsBlank() {
		// Template blank nodes are fresh per solution.
		b, ok := it.bnodes[x.Term.Value]
		if !ok {
			b = rdf.NewBlank(fmt.Sprintf("c%d_%s", it.solution, x.Term.Value))
			it.bnodes[x.Term.Value] = b
		}
		return b
	}
	return x.Term
}

func (it *constructIter) Next() bool {
	for !it.done {
		if it.k >= len(it.tmpl) {
			it.i++
			if it.i%ctxCheckEvery == 0 {
				if err := it.ctx.Err(); err != nil {
					it.err, it.done = err, true
					return false
				}
			}
			if it.i >= it.res.Len() || len(it.tmpl) == 0 {
				it.done = true
				return false
			}
			it.row = it.res.Row(it.i, it.row)
			it.k = 0
			it.solution++
			clear(it.bnodes)
			if it.bnodes == nil {
				it.bnodes = map[string]rdf.Term{}
			}
		}
		tp := it.tmpl[it.k]
		it.k++
		t := rdf.Triple{S: it.term(tp.S), P: it.term(tp.P), O: it.term(tp.O)}
		if t.S.IsZero() || t.S.IsLiteral() || !t.P.IsIRI() || t.O.IsZero() {
			continue
		}
		if _, dup := it.seen[t]; dup {
			continue
		}
		it.seen[t] = struct{}{}
		it.cur = t
		return true
	}
	return false
}

func (it *constructIter) Triple() rdf.Triple { return it.cur }
func (it *constructIter) Err() error         { return it.err }

func (it *constructIter) Close() error {
	if it.g != nil {
		it.done = true
		it.g.release()
		it.g = nil
	}
	return nil
}
