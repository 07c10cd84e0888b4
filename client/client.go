package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/results"
)

// Client talks to one SPARQL endpoint. Its fields may be set after New and
// before first use; a Client is safe for concurrent use.
type Client struct {
	// QueryURL receives queries, UpdateURL updates, StoreURL Graph Store
	// Protocol requests.
	QueryURL, UpdateURL, StoreURL string
	// HTTPClient is used for requests (http.DefaultClient when nil).
	HTTPClient *http.Client
	// Token, when set, is sent as "Authorization: Bearer <Token>".
	Token string
	// Header holds extra headers sent with every request.
	Header http.Header
}

// New returns a client for the endpoint URL (e.g.
// http://127.0.0.1:8080/sparql). Updates go to the same URL; the Graph
// Store is the sibling "/store" of the endpoint's path.
func New(endpoint string) *Client {
	c := &Client{QueryURL: endpoint, UpdateURL: endpoint}
	if u, err := url.Parse(endpoint); err == nil {
		u.RawQuery = ""
		if i := strings.LastIndexByte(u.Path, '/'); i >= 0 {
			u.Path = u.Path[:i] + "/store"
		} else {
			u.Path = "/store"
		}
		c.StoreURL = u.String()
	}
	return c
}

// Option adjusts one request.
type Option func(url.Values)

// WithTimeout asks the server to stop the query after d (wukongd's
// timeout parameter, in seconds). Cancel ctx for a client-side limit.
func WithTimeout(d time.Duration) Option {
	return func(v url.Values) { v.Set("timeout", strconv.FormatFloat(d.Seconds(), 'f', -1, 64)) }
}

// WithDefaultGraph adds a default-graph-uri (using-graph-uri for updates).
func WithDefaultGraph(iri string) Option {
	return func(v url.Values) { v.Add("default-graph-uri", iri) }
}

// WithNamedGraph adds a named-graph-uri.
func WithNamedGraph(iri string) Option {
	return func(v url.Values) { v.Add("named-graph-uri", iri) }
}

// WithMode asks for an execution mode (the mode parameter of wukongd:
// "in-place", "fork-join" or "auto"); other endpoints ignore it.
func WithMode(mode string) Option {
	return func(v url.Values) { v.Set("mode", mode) }
}

// WithParam sets any other request parameter.
func WithParam(name, value string) Option {
	return func(v url.Values) { v.Set(name, value) }
}

// ErrTimeout matches errors of queries the server stopped at their timeout.
var ErrTimeout = errors.New("query timed out")

// HTTPError is a request the server refused or failed.
type HTTPError struct {
	StatusCode int
	// Kind, Message and QueryID come from a wukongd error body; for other
	// servers Message holds the start of the body.
	Kind    string
	Message string
	QueryID string
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("sparql endpoint: HTTP %d", e.StatusCode)
	if e.Kind != "" {
		s += " " + e.Kind
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.QueryID != "" {
		s += " (query " + e.QueryID + ")"
	}
	return s
}

// Is makes errors.Is(err, ErrTimeout) true for server-side timeouts.
func (e *HTTPError) Is(target error) bool {
	return target == ErrTimeout && (e.Kind == "timeout" || (e.Kind == "" && e.StatusCode == http.StatusGatewayTimeout))
}

// SyntaxError is a query the server could not parse.
type SyntaxError struct {
	Line, Col int
	Msg       string
	QueryID   string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("syntax error at %d:%d: %s", e.Line, e.Col, e.Msg)
}

func (c *Client) httpClient() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return http.DefaultClient
}

func (c *Client) do(ctx context.Context, method, target string, body io.Reader, contentType, accept string, auth bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, fmt.Errorf("cannot build request: %w", err)
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if auth && c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", method, target, ctx.Err())
		}
		return nil, fmt.Errorf("%s %s: %w", method, target, err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, readError(resp)
	}
	return resp, nil
}

// send makes a request (with the Token) whose answer has no body of
// interest: only its status counts.
func (c *Client) send(ctx context.Context, method, target string, body io.Reader, contentType string) error {
	resp, err := c.do(ctx, method, target, body, contentType, "", true)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func readError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body struct {
		Error   string `json:"error"`
		Message string `json:"message"`
		QueryID string `json:"queryId"`
		Line    int    `json:"line"`
		Col     int    `json:"col"`
	}
	he := &HTTPError{StatusCode: resp.StatusCode, QueryID: resp.Header.Get("X-Query-Id")}
	if json.Unmarshal(b, &body) == nil && (body.Error != "" || body.Message != "") {
		if body.Error == "syntax_error" && body.Line > 0 {
			return &SyntaxError{Line: body.Line, Col: body.Col, Msg: body.Message, QueryID: body.QueryID}
		}
		he.Kind, he.Message = body.Error, body.Message
		if body.QueryID != "" {
			he.QueryID = body.QueryID
		}
		return he
	}
	msg := strings.TrimSpace(string(b))
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	he.Message = msg
	return he
}

// query sends a query as a form POST (no URL length limits).
func (c *Client) query(ctx context.Context, query, accept string, opts []Option) (*http.Response, error) {
	v := url.Values{"query": {query}}
	for _, o := range opts {
		o(v)
	}
	return c.do(ctx, http.MethodPost, c.QueryURL, strings.NewReader(v.Encode()), "application/x-www-form-urlencoded", accept, false)
}

func formatOf(resp *http.Response, offers []results.Format) (results.Format, error) {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		return results.FormatNone, fmt.Errorf("the server sent no usable Content-Type: %w", err)
	}
	if f := results.ParseFormat(mt, offers); f != results.FormatNone {
		return f, nil
	}
	return results.FormatNone, fmt.Errorf("the server sent %s, which this client cannot read", mt)
}

const solutionAccept = "application/sparql-results+json, application/sparql-results+xml;q=0.9, text/tab-separated-values;q=0.8, text/csv;q=0.5"

// Rows streams the solutions of a SELECT query.
type Rows struct {
	r   results.SolutionReader
	row []rdf.Term
	err error
	// Truncated is set at the end when the server cut the result at its
	// row cap (wukongd's Wukong-Truncated header or trailer).
	Truncated bool
	resp      *http.Response
}

// Select runs a SELECT query and streams its rows. Close the Rows.
func (c *Client) Select(ctx context.Context, query string, opts ...Option) (*Rows, error) {
	resp, err := c.query(ctx, query, solutionAccept, opts)
	if err != nil {
		return nil, err
	}
	f, err := formatOf(resp, results.SolutionFormats)
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	sr, err := results.NewSolutionReader(f, resp.Body)
	if err != nil {
		resp.Body.Close()
		return nil, ctxErr(ctx, err)
	}
	if sr.IsBoolean() {
		resp.Body.Close()
		return nil, errors.New("the query is an ASK query; use Ask")
	}
	return &Rows{r: sr, resp: resp, Truncated: resp.Header.Get("Wukong-Truncated") == "true"}, nil
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

// Vars returns the variable names, without '?'.
func (r *Rows) Vars() []string { return r.r.Vars() }

// Next advances to the next row.
func (r *Rows) Next() bool {
	if r.err != nil {
		return false
	}
	row, err := r.r.Next()
	if err == io.EOF {
		// Read the rest of the document (the reader stops after the last
		// row): the trailer arrives after it, and a body read to its end
		// lets the connection be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(r.resp.Body, 64<<10))
		if r.resp.Trailer.Get("Wukong-Truncated") == "true" {
			r.Truncated = true
		}
		r.err = io.EOF
		return false
	}
	if err != nil {
		r.err = ctxErr(r.resp.Request.Context(), fmt.Errorf("reading results: %w", err))
		return false
	}
	r.row = row
	return true
}

// Row returns the current row: Row()[i] binds Vars()[i], the zero Term is
// unbound. The slice is valid until the next call to Next.
func (r *Rows) Row() []rdf.Term { return r.row }

// Err returns the error that stopped Next, if any.
func (r *Rows) Err() error {
	if r.err == io.EOF {
		return nil
	}
	return r.err
}

// Close releases the connection; it is safe to call more than once.
func (r *Rows) Close() error { return r.resp.Body.Close() }

// Ask runs an ASK query.
func (c *Client) Ask(ctx context.Context, query string, opts ...Option) (bool, error) {
	resp, err := c.query(ctx, query, "application/sparql-results+json, application/sparql-results+xml;q=0.9", opts)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	f, err := formatOf(resp, results.BooleanFormats)
	if err != nil {
		return false, err
	}
	res, err := results.Read(f, resp.Body)
	if err != nil {
		return false, ctxErr(ctx, err)
	}
	if !res.IsBoolean {
		return false, errors.New("the server did not answer with a boolean; is this an ASK query?")
	}
	return res.Boolean, nil
}

// Triples streams the triples of a CONSTRUCT, DESCRIBE or graph GET.
type Triples struct {
	body io.ReadCloser
	r    *results.NTriplesReader
	ctx  context.Context
	t    rdf.Triple
	err  error
}

// Construct runs a CONSTRUCT or DESCRIBE query and streams the triples.
func (c *Client) Construct(ctx context.Context, query string, opts ...Option) (*Triples, error) {
	resp, err := c.query(ctx, query, "application/n-triples, text/plain;q=0.5", opts)
	if err != nil {
		return nil, err
	}
	return newTriples(ctx, resp)
}

func newTriples(ctx context.Context, resp *http.Response) (*Triples, error) {
	if _, err := formatOf(resp, []results.Format{results.FormatNTriples}); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return &Triples{body: resp.Body, r: results.NewNTriplesReader(resp.Body), ctx: ctx}, nil
}

// Next advances to the next triple.
func (t *Triples) Next() bool {
	if t.err != nil {
		return false
	}
	tr, err := t.r.Next()
	if err != nil {
		if err != io.EOF {
			err = ctxErr(t.ctx, err)
		}
		t.err = err
		return false
	}
	t.t = tr
	return true
}

// Triple returns the current triple.
func (t *Triples) Triple() rdf.Triple { return t.t }

// Err returns the error that stopped Next, if any.
func (t *Triples) Err() error {
	if t.err == io.EOF {
		return nil
	}
	return t.err
}

// Close releases the connection.
func (t *Triples) Close() error { return t.body.Close() }

// All reads the remaining triples into a slice and closes t.
func (t *Triples) All() ([]rdf.Triple, error) {
	defer t.Close()
	var out []rdf.Triple
	for t.Next() {
		out = append(out, t.Triple())
	}
	return out, t.Err()
}

// Update runs a SPARQL 1.1 Update request (sent with the Token).
func (c *Client) Update(ctx context.Context, update string, opts ...Option) error {
	v := url.Values{"update": {update}}
	for _, o := range opts {
		o(v)
	}
	if g, ok := v["default-graph-uri"]; ok {
		v["using-graph-uri"] = g
		delete(v, "default-graph-uri")
	}
	if g, ok := v["named-graph-uri"]; ok {
		v["using-named-graph-uri"] = g
		delete(v, "named-graph-uri")
	}
	return c.send(ctx, http.MethodPost, c.UpdateURL, strings.NewReader(v.Encode()), "application/x-www-form-urlencoded")
}

// storeURL addresses a graph: "" is the default graph.
func (c *Client) storeURL(graph string) string {
	sep := "?"
	if strings.Contains(c.StoreURL, "?") {
		sep = "&"
	}
	if graph == "" {
		return c.StoreURL + sep + "default"
	}
	return c.StoreURL + sep + "graph=" + url.QueryEscape(graph)
}

// GetGraph streams the triples of a graph ("" for the default graph).
func (c *Client) GetGraph(ctx context.Context, graph string) (*Triples, error) {
	resp, err := c.do(ctx, http.MethodGet, c.storeURL(graph), nil, "", "application/n-triples", false)
	if err != nil {
		return nil, err
	}
	return newTriples(ctx, resp)
}

// PutGraph replaces a graph ("" for the default graph) with triples.
func (c *Client) PutGraph(ctx context.Context, graph string, triples []rdf.Triple) error {
	return c.sendGraph(ctx, http.MethodPut, graph, triples)
}

// PostGraph adds triples to a graph ("" for the default graph).
func (c *Client) PostGraph(ctx context.Context, graph string, triples []rdf.Triple) error {
	return c.sendGraph(ctx, http.MethodPost, graph, triples)
}

// PutGraphData replaces a graph with an RDF document of the given media
// type (text/turtle, application/n-triples, application/rdf+xml, …).
func (c *Client) PutGraphData(ctx context.Context, graph, mediaType string, body io.Reader) error {
	return c.send(ctx, http.MethodPut, c.storeURL(graph), body, mediaType)
}

func (c *Client) sendGraph(ctx context.Context, method, graph string, triples []rdf.Triple) error {
	pr, pw := io.Pipe()
	go func() {
		gw, err := results.NewGraphWriter(results.FormatNTriples, pw, results.GraphOptions{})
		for i := 0; err == nil && i < len(triples); i++ {
			err = gw.WriteTriple(triples[i])
		}
		if err == nil {
			err = gw.Close()
		}
		pw.CloseWithError(err)
	}()
	err := c.send(ctx, method, c.storeURL(graph), pr, "application/n-triples")
	pr.Close()
	return err
}

// DeleteGraph deletes a graph ("" empties the default graph).
func (c *Client) DeleteGraph(ctx context.Context, graph string) error {
	return c.send(ctx, http.MethodDelete, c.storeURL(graph), nil, "")
}
