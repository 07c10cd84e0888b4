package web

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// testBackend is an in-memory Backend for testing the protocol layer. Its
// "query engine" understands one triple pattern:
//
//	[PREFIX …] SELECT (*|?v …) [WHERE] { s p o } [LIMIT n]
//	ASK { s p o }      CONSTRUCT WHERE { s p o }      DESCRIBE <iri>
//
// with s, p, o each a ?variable, an <IRI> or a "literal", over the union of
// the requested default graphs (the default graph when none). Magic words
// in the query drive the protocol tests:
//
//	SYNTAX_ERROR  → *sparql.SyntaxError at 2:5
//	SLEEP         → blocks until ctx is done (records the cancellation)
//	STUCK         → blocks, ignoring ctx, until the test closes unstick
//	ENDLESS       → an endless SELECT stream that honours ctx (records
//	                the cancellation when Next sees ctx done or the
//	                stream is closed after it)
//	BUDGET        → with ENDLESS: the iterator is a Memory with a budget
//	                of 256 KiB (budgetRows)
//
// The data is an immutable snapshot behind an atomic pointer: PutGraph and
// PostGraph build a new snapshot and swap it in, so readers see the old
// data or the new, never a mixture.
type testBackend struct {
	data      atomic.Pointer[dataset]
	writeMu   sync.Mutex // serializes writers (readers never wait)
	cancelled chan string
	unstick   chan struct{}
	started   chan string // query ids, as queries start (non-blocking send)
	budgets   chan *budgetRows
	fabric    atomic.Int64
}

type dataset struct {
	graphs map[string][]rdf.Triple // "" is the default graph
}

func newTestBackend(triples []rdf.Triple) *testBackend {
	b := &testBackend{cancelled: make(chan string, 16), unstick: make(chan struct{}), started: make(chan string, 64), budgets: make(chan *budgetRows, 16)}
	b.data.Store(&dataset{graphs: map[string][]rdf.Triple{"": triples}})
	return b
}

var _ Backend = (*testBackend)(nil)
var _ FabricStatser = (*testBackend)(nil)
var _ Prefixer = (*testBackend)(nil)

func (b *testBackend) FabricStats() FabricStats {
	n := b.fabric.Load()
	return FabricStats{Reads: n, ReadBytes: 64 * n, Messages: n / 2, MessageBytes: 100 * (n / 2)}
}

func (b *testBackend) Prefixes() map[string]string {
	return map[string]string{"ex": "http://example.org/"}
}

var (
	reForm     = regexp.MustCompile(`(?is)^\s*(?:PREFIX\s+\S*:\s*<[^>]*>\s*)*(SELECT|ASK|CONSTRUCT|DESCRIBE)\b(.*)$`)
	rePattern  = regexp.MustCompile(`(?s)^(.*?)(?:WHERE\s*)?\{(.*)\}\s*(?:LIMIT\s+(\d+))?\s*$`)
	reDescribe = regexp.MustCompile(`^\s*<([^>]*)>\s*$`)
	reComment  = regexp.MustCompile(`(?m)(^|\s)#.*$`)
)

func (b *testBackend) Query(ctx context.Context, req *QueryRequest) (*Result, error) {
	select {
	case b.started <- req.ID:
	default:
	}
	q := reComment.ReplaceAllString(req.Query, "")
	switch {
	case strings.Contains(q, "SYNTAX_ERROR"):
		return nil, fmt.Errorf("cannot parse query: %w", &sparql.SyntaxError{Line: 2, Col: 5, Msg: "unexpected SYNTAX_ERROR"})
	case strings.Contains(q, "SLEEP"):
		<-ctx.Done()
		b.cancelled <- req.ID
		return nil, fmt.Errorf("query stopped: %w", ctx.Err())
	case strings.Contains(q, "STUCK"):
		<-b.unstick
		return nil, errors.New("unstuck")
	case strings.Contains(q, "ENDLESS") && strings.Contains(q, "BUDGET"):
		rows := &budgetRows{endlessRows: endlessRows{ctx: ctx, b: b, id: req.ID}, limit: 256 << 10}
		b.budgets <- rows
		return &Result{Form: FormSelect, Vars: []string{"n"}, Rows: rows}, nil
	case strings.Contains(q, "ENDLESS"):
		return &Result{Form: FormSelect, Vars: []string{"n"}, Rows: &endlessRows{ctx: ctx, b: b, id: req.ID}}, nil
	}
	m := reForm.FindStringSubmatch(q)
	if m == nil {
		return nil, &sparql.SyntaxError{Line: 1, Col: 1, Msg: "the test backend understands one triple pattern"}
	}
	form := map[string]Form{"SELECT": FormSelect, "ASK": FormAsk, "CONSTRUCT": FormConstruct, "DESCRIBE": FormDescribe}[strings.ToUpper(m[1])]
	snap := b.data.Load()
	var graph []rdf.Triple
	if len(req.DefaultGraphs) == 0 {
		graph = snap.graphs[""]
	}
	for _, g := range req.DefaultGraphs {
		graph = append(graph, snap.graphs[g]...)
	}
	b.fabric.Add(int64(len(graph)))
	if form == FormDescribe {
		dm := reDescribe.FindStringSubmatch(m[2])
		if dm == nil {
			return nil, &sparql.SyntaxError{Line: 1, Col: 10, Msg: "DESCRIBE needs one IRI here"}
		}
		var out []rdf.Triple
		for _, t := range graph {
			if t.S == rdf.NewIRI(dm[1]) {
				out = append(out, t)
			}
		}
		return &Result{Form: form, Triples: &sliceTriples{ts: out}}, nil
	}
	pm := rePattern.FindStringSubmatch(m[2])
	if pm == nil {
		return nil, &sparql.SyntaxError{Line: 1, Col: len(m[1]) + 1, Msg: "expected { s p o }"}
	}
	pat, err := parsePattern(pm[2])
	if err != nil {
		return nil, err
	}
	limit := -1
	if pm[3] != "" {
		limit, _ = strconv.Atoi(pm[3])
	}
	var matches []rdf.Triple
	for _, t := range graph {
		if pat.match(t) && (limit < 0 || len(matches) < limit) {
			matches = append(matches, t)
		}
	}
	if req.Explain != ExplainNone {
		plan := &Plan{Form: form.String(), Shards: 1, Steps: []PlanStep{{
			Op: "index-to-var", Pattern: strings.TrimSpace(pm[2]), Start: "index:" + pat.terms[1], Direction: "out",
			Mode: "in-place", EstRows: float64(len(graph)),
			Children: []PlanStep{{Op: "filter", Pattern: "<child>", Mode: "fork-join", EstRows: 1}},
		}}}
		if req.Explain == ExplainAnalyze {
			n := int64(len(matches))
			plan.Analyzed, plan.Rows, plan.Elapsed = true, n, Duration(1500*time.Microsecond)
			plan.Fabric = &FabricStats{Reads: 3, ReadBytes: 192, Messages: 1, MessageBytes: 100}
			plan.Steps[0].ActualRows = &n
			plan.Steps[0].Elapsed = Duration(time.Millisecond)
			plan.Steps[0].Fabric = &FabricStats{Reads: 3, ReadBytes: 192, Messages: 1, MessageBytes: 100}
		}
		return &Result{Form: form, Plan: plan}, nil
	}
	switch form {
	case FormAsk:
		return &Result{Form: form, Boolean: len(matches) > 0}, nil
	case FormConstruct:
		return &Result{Form: form, Triples: &sliceTriples{ts: matches}}, nil
	}
	vars := pat.vars()
	if proj := strings.Fields(strings.TrimSpace(pm[1])); len(proj) > 0 && proj[0] != "*" {
		vars = nil
		for _, v := range proj {
			vars = append(vars, strings.TrimLeft(v, "?$"))
		}
	}
	rows := make([][]rdf.Term, len(matches))
	for i, t := range matches {
		rows[i] = pat.bind(t, vars)
	}
	return &Result{Form: form, Vars: vars, Rows: &sliceRows{rows: rows, ctx: ctx}}, nil
}

type pattern struct{ terms [3]string }

func parsePattern(s string) (pattern, error) {
	f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(s), "."))
	if len(f) != 3 {
		return pattern{}, &sparql.SyntaxError{Line: 1, Col: 1, Msg: "expected three terms"}
	}
	return pattern{[3]string{f[0], f[1], f[2]}}, nil
}

func termMatches(pat string, t rdf.Term) bool {
	switch {
	case strings.HasPrefix(pat, "?"):
		return true
	case strings.HasPrefix(pat, "<"):
		return t == rdf.NewIRI(strings.Trim(pat, "<>"))
	case strings.HasPrefix(pat, `"`):
		return t.IsLiteral() && t.Value == strings.Trim(pat, `"`)
	}
	return false
}

func (p pattern) match(t rdf.Triple) bool {
	return termMatches(p.terms[0], t.S) && termMatches(p.terms[1], t.P) && termMatches(p.terms[2], t.O)
}

func (p pattern) vars() []string {
	var vs []string
	for _, t := range p.terms {
		if strings.HasPrefix(t, "?") {
			vs = append(vs, t[1:])
		}
	}
	return vs
}

func (p pattern) bind(t rdf.Triple, vars []string) []rdf.Term {
	row := make([]rdf.Term, len(vars))
	vals := [3]rdf.Term{t.S, t.P, t.O}
	for i, v := range vars {
		for j, pt := range p.terms {
			if pt == "?"+v {
				row[i] = vals[j]
			}
		}
	}
	return row
}

type sliceRows struct {
	ctx  context.Context
	rows [][]rdf.Term
	i    int
	err  error
}

func (r *sliceRows) Next() bool {
	if r.err = r.ctx.Err(); r.err != nil {
		return false
	}
	r.i++
	return r.i <= len(r.rows)
}
func (r *sliceRows) Row() []rdf.Term { return r.rows[r.i-1] }
func (r *sliceRows) Err() error      { return r.err }
func (r *sliceRows) Close() error    { return nil }

// endlessRows reports its query as cancelled once its context is done and
// either Next sees it or the server closes the stream: the server also
// checks the context itself between rows and may stop without another
// Next.
type endlessRows struct {
	ctx     context.Context
	b       *testBackend
	id      string
	n       int
	row     [1]rdf.Term
	err     error
	stopped sync.Once
}

func (r *endlessRows) stop() {
	r.stopped.Do(func() { r.b.cancelled <- r.id })
}

func (r *endlessRows) Next() bool {
	if r.err = r.ctx.Err(); r.err != nil {
		r.stop()
		return false
	}
	r.n++
	if r.n%1000 == 0 {
		time.Sleep(time.Millisecond) // a slow engine
	}
	r.row[0] = rdf.NewLiteral(strconv.Itoa(r.n), rdf.XSDInteger)
	return true
}
func (r *endlessRows) Row() []rdf.Term { return r.row[:] }
func (r *endlessRows) Err() error      { return r.err }
func (r *endlessRows) Close() error {
	if r.ctx.Err() != nil {
		r.stop()
	}
	return nil
}

// budgetRows are endless rows with a memory budget: Grow fails past
// limit, charging nothing.
type budgetRows struct {
	endlessRows
	limit int64
	used  atomic.Int64
	peak  atomic.Int64
}

func (r *budgetRows) Grow(n int64) error {
	if u := r.used.Load() + n; n > 0 && u > r.limit {
		return fmt.Errorf("%w: the test budget is %d bytes", ErrQueryMemory, r.limit)
	}
	u := r.used.Add(n)
	r.peak.Store(max(r.peak.Load(), u))
	return nil
}

type sliceTriples struct {
	ts []rdf.Triple
	i  int
}

func (s *sliceTriples) Next() bool         { s.i++; return s.i <= len(s.ts) }
func (s *sliceTriples) Triple() rdf.Triple { return s.ts[s.i-1] }
func (s *sliceTriples) Err() error         { return nil }
func (s *sliceTriples) Close() error       { return nil }

func (b *testBackend) Update(ctx context.Context, req *UpdateRequest) error {
	if strings.Contains(req.Update, "SLEEP") {
		select {
		case b.started <- req.ID:
		default:
		}
		<-ctx.Done()
		b.cancelled <- req.ID
		return ctx.Err()
	}
	return fmt.Errorf("test backend: %w", ErrUnsupported)
}

func graphKey(g GraphName) string {
	if g.Default {
		return ""
	}
	return g.IRI
}

func (b *testBackend) GetGraph(ctx context.Context, g GraphName) (TripleIterator, error) {
	ts, ok := b.data.Load().graphs[graphKey(g)]
	if !ok {
		return nil, fmt.Errorf("graph %s: %w", g, ErrNotFound)
	}
	return &sliceTriples{ts: ts}, nil
}

func (b *testBackend) parse(body GraphBody) ([]rdf.Triple, error) {
	f, ok := loader.FormatForMediaType(body.MediaType)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedMediaType, body.MediaType)
	}
	var ts []rdf.Triple
	err := loader.Parse(body.Body, f, loader.Options{Base: body.Base}, func(q rdf.Quad) error {
		ts = append(ts, q.Triple())
		return nil
	})
	return ts, err
}

// swap publishes a new snapshot with graph g replaced by ts (nil: deleted).
func (b *testBackend) swap(g GraphName, ts []rdf.Triple, keep bool) (existed bool) {
	old := b.data.Load()
	next := &dataset{graphs: make(map[string][]rdf.Triple, len(old.graphs)+1)}
	for k, v := range old.graphs {
		next.graphs[k] = v
	}
	_, existed = old.graphs[graphKey(g)]
	if keep {
		next.graphs[graphKey(g)] = ts
	} else {
		delete(next.graphs, graphKey(g))
	}
	b.data.Store(next)
	return existed
}

func (b *testBackend) PutGraph(ctx context.Context, g GraphName, body GraphBody) (bool, error) {
	ts, err := b.parse(body)
	if err != nil {
		return false, err
	}
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	return !b.swap(g, ts, true) && !g.Default, nil
}

func (b *testBackend) PostGraph(ctx context.Context, g GraphName, body GraphBody) (bool, error) {
	ts, err := b.parse(body)
	if err != nil {
		return false, err
	}
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	old := b.data.Load().graphs[graphKey(g)]
	merged := append(append([]rdf.Triple(nil), old...), ts...)
	return !b.swap(g, merged, true) && !g.Default, nil
}

func (b *testBackend) DeleteGraph(ctx context.Context, g GraphName) error {
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	if g.Default {
		b.swap(g, nil, true)
		return nil
	}
	if _, ok := b.data.Load().graphs[g.IRI]; !ok {
		return fmt.Errorf("graph %s: %w", g, ErrNotFound)
	}
	b.swap(g, nil, false)
	return nil
}

// sortedTriples is for comparisons.
func sortedTriples(ts []rdf.Triple) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.S.String() + " " + t.P.String() + " " + t.O.String()
	}
	sort.Strings(out)
	return out
}
