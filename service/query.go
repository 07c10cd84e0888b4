package service

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/internal/cpugate"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
	"github.com/wukongd/wukongd/web"
)

// queryOptions are the engine's options for req.
func (s *Service) queryOptions(req *web.QueryRequest) (exec.Options, error) {
	mode := s.opts.Mode
	if req.Mode != web.ModeAuto {
		m, ok := planner.ParseMode(string(req.Mode))
		if !ok {
			return exec.Options{}, fmt.Errorf("%w: mode %q (auto, in-place or fork-join)", web.ErrBadRequest, req.Mode)
		}
		mode = m
	}
	// HoldMemory: the answer stays charged to the query's budget while
	// web writes it, with web's response buffer (Grow); the iterators
	// release it at Close.
	return exec.Options{Mode: mode, ForkThreshold: s.opts.ForkThreshold, Analyze: req.Explain == web.ExplainAnalyze,
		Explicit: req.ExplicitOnly, HoldMemory: true}, nil
}

// QueryInline implements web.InlineQuerier: a query of a known shape (the
// template's plan bound to its constants, queryShape: no parse, no plan
// search, a run that checks ctx) runs on the caller's goroutine. Any other
// query — a new shape, EXPLAIN, a protocol dataset, a bad mode, constants
// the plan cannot take — is left to Query (ok false) after the shape's
// lookup only.
func (s *Service) QueryInline(ctx context.Context, req *web.QueryRequest) (*web.Result, bool, error) {
	opts, err := s.queryOptions(req)
	if err != nil {
		return nil, false, nil
	}
	cpugate.Default.Foreground() // bulk writes leave it a processor
	return s.queryShape(ctx, req, opts)
}

// Query implements web.Backend.
func (s *Service) Query(ctx context.Context, req *web.QueryRequest) (*web.Result, error) {
	cpugate.Default.Foreground() // bulk writes leave it a processor
	opts, err := s.queryOptions(req)
	if err != nil {
		return nil, err
	}
	if res, ok, err := s.queryShape(ctx, req, opts); ok {
		return res, err
	}
	q, err := s.cache.ParseQueryBase(ctx, req.Query, req.Base)
	if err != nil {
		return nil, err // *sparql.SyntaxError
	}
	s.shapes.Learn(ctx, req.Query, req.Base, q)
	form, err := formOf(q)
	if err != nil {
		return nil, err
	}
	run := s.rewrite(q, form, req)
	g, err := s.acquire()
	if err != nil {
		return nil, err
	}
	if req.Explain == web.ExplainPlan {
		defer g.release()
		plan, err := g.eng.Plan(run, opts)
		if err != nil {
			return nil, engineError(err, q)
		}
		return &web.Result{Form: form, Plan: webPlan(q, plan, nil, g.eng.Store())}, nil
	}
	res, err := g.eng.Run(ctx, run, opts)
	return s.answer(ctx, req, g, q, form, res, err)
}

// queryShape answers a query whose shape has a template (sparql.Shapes):
// the template's plan bound to the query's constants, without parsing or
// planning. ok is false when the query takes the ordinary path: no
// template, EXPLAIN, a protocol dataset, or a plan that cannot be bound
// to these constants (exec.ErrNotBindable).
func (s *Service) queryShape(ctx context.Context, req *web.QueryRequest, opts exec.Options) (*web.Result, bool, error) {
	if req.Explain != web.ExplainNone || len(req.DefaultGraphs) > 0 || len(req.NamedGraphs) > 0 {
		return nil, false, nil
	}
	tq, params, ok := s.shapes.Lookup(req.Query, req.Base)
	if !ok {
		return nil, false, nil
	}
	form, err := formOf(tq)
	if err != nil {
		return nil, false, nil
	}
	run := s.rewrite(tq, form, req)
	g, err := s.acquire()
	if err != nil {
		return nil, true, err
	}
	res, err := g.eng.RunParams(ctx, run, params, opts)
	if errors.Is(err, exec.ErrNotBindable) {
		g.release()
		return nil, false, nil
	}
	r, err := s.answer(ctx, req, g, tq, form, res, err)
	return r, true, err
}

// answer makes the web result of a query run on g (res, err from the
// engine); it releases g, or hands it to the result's iterator.
func (s *Service) answer(ctx context.Context, req *web.QueryRequest, g *generation, q *sparql.Query, form web.Form, res *exec.Result, err error) (*web.Result, error) {
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
		res.Release()
		return &web.Result{Form: form, Plan: webPlan(q, res.Plan, res.Analysis, g.eng.Store())}, nil
	}
	switch form {
	case web.FormAsk:
		defer g.release()
		res.Release()
		return &web.Result{Form: form, Boolean: res.Boolean}, nil
	case web.FormConstruct, web.FormDescribe:
		return &web.Result{Form: form, Triples: newTripleIter(ctx, g, res)}, nil
	}
	return &web.Result{Form: web.FormSelect, Vars: res.VarNames(), Rows: newRowIter(ctx, g, res)}, nil
}

// formOf maps the query form.
func formOf(q *sparql.Query) (web.Form, error) {
	switch q.Form {
	case sparql.FormSelect:
		return web.FormSelect, nil
	case sparql.FormAsk:
		return web.FormAsk, nil
	case sparql.FormConstruct:
		return web.FormConstruct, nil
	case sparql.FormDescribe:
		return web.FormDescribe, nil
	}
	return 0, unsupported(q.Pos, q.Form.String()+" queries")
}

// rewriteKey identifies a rewritten query: the parsed query (one per text
// through the parse cache), the protocol dataset and the row cap.
type rewriteKey struct {
	q       *sparql.Query
	dataset string
	limit   int64
}

// rewrite returns the query the engine runs for q, of form form: q with
// the request's protocol dataset (default-graph-uri and named-graph-uri
// replace FROM and FROM NAMED, SPARQL Protocol §2.1.4) and, for a SELECT,
// the row cap as a LIMIT hint (MaxRows+1 rows: the one past the cap tells
// web the result was cut). The rewritten queries are kept (keyed by the
// parsed query), so the engine's plan cache, which is keyed by query,
// still works for them.
func (s *Service) rewrite(q *sparql.Query, form web.Form, req *web.QueryRequest) *sparql.Query {
	k := rewriteKey{q: q, limit: -1}
	if len(req.DefaultGraphs) > 0 || len(req.NamedGraphs) > 0 {
		k.dataset = strings.Join(req.DefaultGraphs, " ") + "\n" + strings.Join(req.NamedGraphs, " ")
	}
	if req.Explain == web.ExplainNone && form == web.FormSelect && req.MaxRows > 0 {
		k.limit = int64(req.MaxRows) + 1
		if sl, ok := q.Pattern.(*sparql.Slice); ok && sl.Limit >= 0 && sl.Limit <= k.limit {
			k.limit = -1 // the query's own LIMIT is below the cap
		}
	}
	if k.dataset == "" && k.limit < 0 {
		return q
	}
	s.rewriteMu.Lock()
	defer s.rewriteMu.Unlock()
	if r, ok := s.rewrites[k]; ok {
		return r
	}
	c := *q // the parsed query is shared through the cache: copy
	if k.dataset != "" {
		c.Dataset = &sparql.Dataset{Default: req.DefaultGraphs, Named: req.NamedGraphs}
	}
	if k.limit >= 0 && c.Pattern != nil {
		if sl, ok := c.Pattern.(*sparql.Slice); ok {
			n := *sl
			n.Limit = k.limit
			c.Pattern = &n
		} else {
			c.Pattern = &sparql.Slice{Pos: c.Pattern.Position(), Input: c.Pattern, Limit: k.limit}
		}
	}
	if s.rewrites == nil || len(s.rewrites) >= rewriteCacheSize {
		s.rewrites = map[rewriteKey]*sparql.Query{} // simple bound: start over
	}
	s.rewrites[k] = &c
	return &c
}

// rewriteCacheSize bounds Service.rewrites.
const rewriteCacheSize = 1024

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
	var me *exec.MemoryError
	switch {
	case errors.As(err, &me) && me.Server:
		return fmt.Errorf("%w: %v", web.ErrServerMemory, err)
	case errors.Is(err, exec.ErrMemoryBudget):
		return fmt.Errorf("%w: %v", web.ErrQueryMemory, err)
	case errors.Is(err, exec.ErrValueTooLarge):
		return fmt.Errorf("%w: %v", web.ErrValueTooLarge, err)
	}
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

// genCursor is what the result iterators share: the request's context,
// checked every ctxCheckEvery calls of Next, the reference to the
// generation the result was made on (held until Close), the result (its
// memory held in the query's budget until Close: web.Memory) and the
// error that ended the iteration.
type genCursor struct {
	ctx  context.Context
	g    *generation
	res  *exec.Result
	i    int // counts the calls of Next from its start value
	err  error
	done bool
}

// Grow implements web.Memory: web's response buffer, charged to the
// query's budget.
func (c *genCursor) Grow(n int64) error {
	if err := c.res.Grow(n); err != nil {
		return engineError(err, nil)
	}
	return nil
}

// ctxCheckEvery is how many rows pass between checks of the context.
const ctxCheckEvery = 256

// step starts a Next: false when the iteration is over or the context is
// done.
func (c *genCursor) step() bool {
	if c.done {
		return false
	}
	c.i++
	if c.i%ctxCheckEvery == 0 {
		if err := c.ctx.Err(); err != nil {
			c.stop(err)
			return false
		}
	}
	return true
}

// stop ends the iteration with err (nil: the result is exhausted).
func (c *genCursor) stop(err error) { c.err, c.done = err, true }

func (c *genCursor) Err() error { return c.err }

var _ web.Memory = (*genCursor)(nil)

func (c *genCursor) Close() error {
	if c.g != nil {
		c.done = true
		c.res.Release()
		c.g.release()
		c.g = nil
	}
	return nil
}

// rowIter streams a SELECT result, decoding one row per Next. It holds a
// reference to the generation the query ran on until Close.
type rowIter struct {
	genCursor // i: the current row
	row       []rdf.Term
}

func newRowIter(ctx context.Context, g *generation, res *exec.Result) *rowIter {
	return &rowIter{genCursor: genCursor{ctx: ctx, g: g, res: res, i: -1}}
}

func (it *rowIter) Next() bool {
	if !it.step() {
		return false
	}
	if it.i >= it.res.Len() {
		it.stop(nil)
		return false
	}
	it.row = it.res.Row(it.i, it.row)
	return true
}

func (it *rowIter) Row() []rdf.Term { return it.row }

// tripleIter streams the triples of a CONSTRUCT or DESCRIBE, decoding one
// per Next. It holds a reference to the generation the query ran on until
// Close.
type tripleIter struct {
	genCursor // i: the current triple
	cur       rdf.Triple
}

func newTripleIter(ctx context.Context, g *generation, res *exec.Result) *tripleIter {
	return &tripleIter{genCursor: genCursor{ctx: ctx, g: g, res: res, i: -1}}
}

func (it *tripleIter) Next() bool {
	if !it.step() {
		return false
	}
	if it.i >= it.res.NumTriples() {
		it.stop(nil)
		return false
	}
	it.cur = it.res.Triple(it.i)
	return true
}

func (it *tripleIter) Triple() rdf.Triple { return it.cur }
