package web

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/wukongd/wukongd/rdf"
)

// Backend is what the HTTP service needs from a query engine and store. The
// web package owns it (STYLE.md 7); the engine adapts to it. See doc.go for
// the contract in prose: streaming, cancellation, atomicity, errors.
type Backend interface {
	// Query parses and runs a SPARQL query. It returns as soon as the
	// first result can be produced; rows or triples then stream from the
	// Result's iterator. ctx carries the query's deadline and is cancelled
	// when the client goes away: Query and the iterators must stop
	// promptly (well within a second) and return ctx.Err(), possibly
	// wrapped. Explain modes return a Plan instead of results.
	Query(ctx context.Context, req *QueryRequest) (*Result, error)

	// Update runs a SPARQL 1.1 Update request. A backend that does not
	// support updates returns an error wrapping ErrUnsupported.
	Update(ctx context.Context, req *UpdateRequest) error

	// GetGraph streams the triples of a graph. A named graph that does not
	// exist is ErrNotFound; the default graph always exists.
	GetGraph(ctx context.Context, g GraphName) (TripleIterator, error)

	// PutGraph replaces the graph with the RDF in body (Graph Store
	// Protocol PUT); PostGraph adds it (POST, RDF merge). Both parse the
	// body completely before publishing anything, and publish atomically:
	// a query or GetGraph that runs concurrently sees the data entirely
	// before or entirely after the change, never a mixture, and a body that
	// fails to parse changes nothing. created reports whether the graph did
	// not exist before.
	PutGraph(ctx context.Context, g GraphName, body GraphBody) (created bool, err error)
	PostGraph(ctx context.Context, g GraphName, body GraphBody) (created bool, err error)

	// DeleteGraph removes a graph (Graph Store Protocol DELETE), atomically
	// like PutGraph. Deleting the default graph empties it. A named graph
	// that does not exist is ErrNotFound.
	DeleteGraph(ctx context.Context, g GraphName) error
}

// Optional interfaces a Backend may implement.
type (
	// FabricStatser reports cumulative fabric (cross-node) traffic for
	// /metrics. Counters only grow.
	FabricStatser interface {
		FabricStats() FabricStats
	}
	// Readier reports whether the backend can serve queries yet (/readyz);
	// nil means ready. A backend without it is ready.
	// Compactor merges the backend's write delta into a new base
	// (POST /admin/compact, which needs the update token); it returns
	// the version compacted.
	Compactor interface {
		Compact(ctx context.Context) (uint64, error)
	}

	Readier interface {
		Ready(ctx context.Context) error
	}
	// Prefixer gives namespace prefixes (prefix → IRI) used to abbreviate
	// Turtle and RDF/XML output.
	Prefixer interface {
		Prefixes() map[string]string
	}
	// InlineQuerier is a Backend that can run some queries on the
	// handler's goroutine instead of a worker's (a hand-off that costs a
	// light query a goroutine wake-up, often on the other processor).
	// QueryInline runs req as Query would when the backend knows the query
	// will stop within gracePeriod of ctx ending (its plan is ready and its
	// run checks ctx), and returns ok; for any other query it returns ok
	// false having done only that cheap test, and the web layer calls
	// Query on a worker, which answers by the deadline even if the backend
	// does not.
	InlineQuerier interface {
		QueryInline(ctx context.Context, req *QueryRequest) (res *Result, ok bool, err error)
	}
)

// QueryRequest is one SPARQL query from the protocol layer.
type QueryRequest struct {
	// ID identifies the query in logs, errors and /api/cancel.
	ID string
	// Query is the query text, as received.
	Query string
	// Base is the base IRI of relative IRIs the query does not resolve
	// with a BASE of its own: the endpoint's URL ("" leaves them as
	// written).
	Base string
	// DefaultGraphs and NamedGraphs are the protocol's default-graph-uri
	// and named-graph-uri parameters (the RDF dataset of the request, which
	// overrides FROM and FROM NAMED in the query).
	DefaultGraphs []string
	NamedGraphs   []string
	// Explain asks for the physical plan instead of (ExplainPlan) or
	// after running the query and discarding its results (ExplainAnalyze).
	Explain ExplainMode
	// Mode is the execution mode the request asks for (the mode=
	// parameter): ModeAuto (""), ModeInPlace or ModeForkJoin. A backend
	// without modes ignores it.
	Mode ExecMode
	// ExplicitOnly asks for the explicit triples only (infer=false): a
	// backend with reasoning leaves the inferred triples out; one without
	// has none to leave out.
	ExplicitOnly bool
	// MaxRows is the server's result row cap (0: none). The web layer
	// enforces it on the stream; a backend may use it as a LIMIT hint.
	MaxRows int
	// AllowedServices are the endpoint IRIs a SERVICE clause may call
	// ("*": any). The web layer has already refused queries with other
	// SERVICE endpoints; a backend that federates must honour it too.
	AllowedServices []string
}

// UpdateRequest is one SPARQL 1.1 Update request.
type UpdateRequest struct {
	ID     string
	Update string
	// Base is the base IRI of relative IRIs (as QueryRequest.Base).
	Base string
	// UsingGraphs and UsingNamedGraphs are using-graph-uri and
	// using-named-graph-uri.
	UsingGraphs      []string
	UsingNamedGraphs []string
	// AllowedLoads are the IRIs LOAD may fetch ("*": any); the web layer
	// has already refused other LOADs.
	AllowedLoads []string
}

// ExplainMode says whether a query runs or is explained.
type ExplainMode uint8

const (
	// ExplainNone runs the query and returns results.
	ExplainNone ExplainMode = iota
	// ExplainPlan returns the physical plan without running the query.
	ExplainPlan
	// ExplainAnalyze runs the query, discards its results and returns the
	// plan with actual rows, times and fabric traffic per step.
	ExplainAnalyze
)

// ExecMode is how a query reaches data owned by other shards (Wukong's
// in-place and fork-join execution), as a request asks for it.
type ExecMode string

const (
	// ModeAuto lets the backend choose (its default mode).
	ModeAuto ExecMode = ""
	// ModeInPlace reads remote adjacency lists one-sidedly.
	ModeInPlace ExecMode = "in-place"
	// ModeForkJoin ships partial results to the shards that own the data.
	ModeForkJoin ExecMode = "fork-join"
)

// Form is the query form.
type Form uint8

const (
	FormSelect Form = iota + 1
	FormAsk
	FormConstruct
	FormDescribe
)

// String returns the lower-case name used in metrics labels.
func (f Form) String() string {
	switch f {
	case FormSelect:
		return "select"
	case FormAsk:
		return "ask"
	case FormConstruct:
		return "construct"
	case FormDescribe:
		return "describe"
	}
	return "unknown"
}

// Result is the outcome of Query. Exactly one of the following holds:
//   - Plan != nil: an explain request; no iterator is set.
//   - Form == FormSelect: Vars and Rows are set.
//   - Form == FormAsk: Boolean is the answer.
//   - Form == FormConstruct or FormDescribe: Triples is set.
//
// The web layer always calls Close on the iterator it receives.
type Result struct {
	Form    Form
	Vars    []string // SELECT: variable names without '?', in projection order
	Rows    RowIterator
	Boolean bool
	Triples TripleIterator
	Plan    *Plan
}

// RowIterator streams SELECT solutions.
//
//	for it.Next() { row := it.Row() … }
//	if err := it.Err(); err != nil { … }
//	it.Close()
type RowIterator interface {
	// Next advances to the next row; false at the end or on error.
	Next() bool
	// Row returns the current row: Row()[i] binds Vars[i]; the zero
	// rdf.Term is unbound. The slice is valid until the next call to Next
	// or Close.
	Row() []rdf.Term
	// Err returns the error that ended the iteration (ctx.Err() on
	// cancellation or timeout), or nil at a normal end.
	Err() error
	// Close releases the iterator; it stops the query if it is still
	// running. It is safe to call more than once.
	Close() error
}

// TripleIterator streams triples (CONSTRUCT, DESCRIBE, GetGraph), with the
// same rules as RowIterator.
type TripleIterator interface {
	Next() bool
	Triple() rdf.Triple
	Err() error
	Close() error
}

// GraphName names the target of a Graph Store Protocol request.
type GraphName struct {
	// Default is true for the default graph (?default); IRI is empty then.
	Default bool
	// IRI is the named graph (?graph=IRI), absolute.
	IRI string
}

// String is "default" or the IRI in angle brackets.
func (g GraphName) String() string {
	if g.Default {
		return "default"
	}
	return "<" + g.IRI + ">"
}

// GraphBody is RDF data sent with a PUT or POST.
type GraphBody struct {
	// MediaType is the Content-Type without parameters, lower-case
	// (text/turtle, application/n-triples, application/rdf+xml, …). A
	// backend that cannot parse it returns ErrUnsupportedMediaType.
	MediaType string
	// Boundary is set for a multipart/form-data POST (MediaType
	// "multipart/form-data"): Body is then several RDF documents, one a
	// part, each with its own Content-Type, all merged into the graph in
	// one change.
	Boundary string
	// Base is the base IRI for relative IRIs: the graph IRI, or the
	// request URL for the default graph.
	Base string
	// Body is the request body; reading past the server's body cap fails
	// with an error the web layer turns into 413.
	Body io.Reader
}

// Plan is a physical query plan as EXPLAIN shows it, serialized as JSON.
type Plan struct {
	// Form is the query form.
	Form string `json:"form"`
	// Shards is the number of shards the plan runs on.
	Shards int `json:"shards,omitempty"`
	// Steps are the exploration steps in execution order.
	Steps []PlanStep `json:"steps"`
	// Analyzed is true when the plan carries actual figures.
	Analyzed bool `json:"analyzed"`
	// Rows and Elapsed are the actual result rows and run time (analyze).
	Rows    int64    `json:"rows,omitempty"`
	Elapsed Duration `json:"elapsedMs,omitempty"`
	// Fabric is the total traffic of the query (analyze).
	Fabric *FabricStats `json:"fabric,omitempty"`
	// Notes are free-form remarks of the planner (chosen thresholds, …).
	Notes []string `json:"notes,omitempty"`
}

// PlanStep is one step of a plan.
type PlanStep struct {
	// Op is the step kind: "const-to-var", "index-to-var",
	// "known-to-var", "known-to-known", "filter", "optional", "union",
	// "hash-join", … as the planner names it.
	Op string `json:"op"`
	// Pattern is the triple pattern (or operator) in SPARQL syntax.
	Pattern string `json:"pattern"`
	// Start is where exploration starts or continues from: a constant, an
	// index ("index:ub:GraduateStudent") or a variable.
	Start string `json:"start,omitempty"`
	// Direction is "out" (subject to object) or "in".
	Direction string `json:"direction,omitempty"`
	// Mode is "in-place" or "fork-join".
	Mode string `json:"mode,omitempty"`
	// EstRows is the planner's estimate of the rows after this step.
	EstRows float64 `json:"estRows"`
	// Actual figures (analyze only).
	ActualRows *int64       `json:"actualRows,omitempty"`
	Elapsed    Duration     `json:"elapsedMs,omitempty"`
	Fabric     *FabricStats `json:"fabric,omitempty"`
	// Shards are the actual figures of an exploration step on each shard
	// (analyze; by shard).
	Shards []ShardStepStats `json:"shards,omitempty"`
	// Children are nested sub-plans (UNION branches, OPTIONAL sides, …).
	Children []PlanStep `json:"children,omitempty"`
}

// ShardStepStats are one step's actual figures on one shard: the rows it
// made there and the fabric traffic of the node running it there.
type ShardStepStats struct {
	Shard int      `json:"shard"`
	Rows  int64    `json:"rows"`
	Time  Duration `json:"elapsedMs"`
	FabricStats
}

// FabricStats counts cross-node traffic.
type FabricStats struct {
	Reads        int64 `json:"reads"`
	ReadBytes    int64 `json:"readBytes"`
	Messages     int64 `json:"messages"`
	MessageBytes int64 `json:"messageBytes"`
}

// Duration marshals as fractional milliseconds in JSON.
type Duration time.Duration

// MarshalJSON writes d in milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	ms := float64(d) / float64(time.Millisecond)
	return strconv.AppendFloat(nil, ms, 'f', -1, 64), nil
}

// UnmarshalJSON reads milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	ms, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*d = Duration(ms * float64(time.Millisecond))
	return nil
}

// Errors a Backend returns, wrapped with context as it likes (errors.Is and
// errors.As see through wrapping). statusOf in errors.go maps them to HTTP.
var (
	// ErrUnsupported: the backend does not implement this (501).
	ErrUnsupported = errors.New("not supported")
	// ErrNotFound: the named graph does not exist (404).
	ErrNotFound = errors.New("not found")
	// ErrBadRequest: the request is malformed beyond syntax (400).
	ErrBadRequest = errors.New("bad request")
	// ErrUnsupportedMediaType: the body's media type cannot be parsed (415).
	ErrUnsupportedMediaType = errors.New("unsupported media type")
	// ErrForbidden: the request asks for something the server refuses,
	// such as a SERVICE endpoint that is not allow-listed (403).
	ErrForbidden = errors.New("forbidden")
	// ErrNotReady: the backend is still loading (503).
	ErrNotReady = errors.New("not ready")
	// ErrQueryMemory: the query needed more than its memory budget (507).
	ErrQueryMemory = errors.New("query memory budget exceeded")
	// ErrValueTooLarge: an expression would make a string past the
	// value size limit (507).
	ErrValueTooLarge = errors.New("value too large")
	// ErrServerMemory: the running queries together need more than the
	// server's memory budget (503, retry later).
	ErrServerMemory = errors.New("server memory budget exceeded")
	// ErrUpstream: a source the request names (LOAD <iri>) could not be
	// fetched or parsed (502).
	ErrUpstream = errors.New("upstream failure")
)

// Besides those: *sparql.SyntaxError (400 with line and column),
// *loader.SyntaxError (400 with line and column, for bodies),
// context.DeadlineExceeded (the query timeout: 504) and context.Canceled
// (the client went away: logged, nothing sent).
