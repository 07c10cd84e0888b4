package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wukongd/wukongd/client"
	"github.com/wukongd/wukongd/results"
)

// Endpoint is a SPARQL 1.1 Protocol endpoint driven over keep-alive HTTP
// connections. Queries go as form POSTs asking for JSON results, and every
// row is decoded into terms (package results, as package client does) —
// the work a real client does — so the time measured is end to end.
//
// The timed path (Select) keeps its own HTTP/1.1 connections, one per
// concurrent caller, each read and written by the caller's goroutine
// alone: net/http's Transport hands every request to a write goroutine and
// every response from a read goroutine, and on the benchmark's 2 shared
// cores those hand-offs woke the client's idle threads three times a
// query, costing about 120 µs of client CPU and 100 µs of latency per light
// query (the same for every system measured, which is why it is not part of
// any of them; docs/PERFORMANCE.md "The request path, third pass"). The
// untimed calls (Values, CheckJSON, WaitReady) use net/http.
type Endpoint struct {
	URL string
	c   *client.Client
	hc  *http.Client

	addr, host, uri string // dial address, Host header, request URI
	mu              sync.Mutex
	idle            []*benchConn
}

// benchConn is one keep-alive connection of Select.
type benchConn struct {
	c   net.Conn
	br  *bufio.Reader
	buf []byte // the request being written
}

// NewEndpoint returns an endpoint whose transport keeps up to conns idle
// connections open (one per concurrent client).
func NewEndpoint(rawURL string, conns int) *Endpoint {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        max(conns, 2),
		MaxIdleConnsPerHost: max(conns, 2),
		MaxConnsPerHost:     0,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	hc := &http.Client{Transport: tr}
	c := client.New(rawURL)
	c.HTTPClient = hc
	e := &Endpoint{URL: rawURL, c: c, hc: hc}
	if u, err := url.Parse(rawURL); err == nil && u.Scheme == "http" {
		e.host, e.uri = u.Host, u.RequestURI()
		e.addr = u.Host
		if u.Port() == "" {
			e.addr = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	return e
}

// Close closes the idle connections.
func (e *Endpoint) Close() {
	e.hc.CloseIdleConnections()
	e.mu.Lock()
	idle := e.idle
	e.idle = nil
	e.mu.Unlock()
	for _, c := range idle {
		_ = c.c.Close()
	}
}

// solutionAccept is the Accept header of Select: package client's, JSON
// first.
const solutionAccept = "application/sparql-results+json, application/sparql-results+xml;q=0.9, text/tab-separated-values;q=0.8, text/csv;q=0.5"

// Select runs a SELECT query and returns its row count after decoding
// every row.
func (e *Endpoint) Select(ctx context.Context, query string) (int, error) {
	if e.addr == "" { // not plain http: package client over net/http
		return e.selectClient(ctx, query)
	}
	for attempt := 0; ; attempt++ {
		bc, reused, err := e.conn(ctx)
		if err != nil {
			return 0, err
		}
		n, sent, keep, err := e.selectOn(ctx, bc, query)
		if keep && err == nil {
			e.mu.Lock()
			e.idle = append(e.idle, bc)
			e.mu.Unlock()
		} else {
			_ = bc.c.Close()
		}
		// A kept-alive connection the server closed while idle fails
		// before any answer: send again, once, on a new connection.
		if err != nil && reused && !sent && attempt == 0 && ctx.Err() == nil {
			continue
		}
		return n, err
	}
}

// conn returns an idle connection or dials a new one.
func (e *Endpoint) conn(ctx context.Context) (bc *benchConn, reused bool, err error) {
	e.mu.Lock()
	if n := len(e.idle); n > 0 {
		bc = e.idle[n-1]
		e.idle = e.idle[:n-1]
	}
	e.mu.Unlock()
	if bc != nil {
		return bc, true, nil
	}
	d := net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	c, err := d.DialContext(ctx, "tcp", e.addr)
	if err != nil {
		return nil, false, fmt.Errorf("cannot reach %s: %w", e.URL, err)
	}
	return &benchConn{c: c, br: bufio.NewReaderSize(c, 32<<10)}, false, nil
}

// selectOn sends query on bc and decodes the answer. sent reports whether
// any of the answer arrived (a failure before it may be retried); keep
// whether bc may carry the next request.
func (e *Endpoint) selectOn(ctx context.Context, bc *benchConn, query string) (n int, sent, keep bool, err error) {
	if dl, ok := ctx.Deadline(); ok {
		_ = bc.c.SetDeadline(dl)
	} else {
		_ = bc.c.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { _ = bc.c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	body := url.QueryEscape(query)
	b := append(bc.buf[:0], "POST "...)
	b = append(b, e.uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, e.host...)
	b = append(b, "\r\nUser-Agent: wukongd-bench\r\nContent-Type: application/x-www-form-urlencoded\r\nAccept: "...)
	b = append(b, solutionAccept...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len("query=")+len(body)), 10)
	b = append(b, "\r\n\r\nquery="...)
	b = append(b, body...)
	bc.buf = b
	if _, err := bc.c.Write(b); err != nil {
		return 0, false, false, e.fail(ctx, err)
	}
	if _, err := bc.br.Peek(1); err != nil {
		return 0, false, false, e.fail(ctx, err)
	}
	resp, err := http.ReadResponse(bc.br, nil)
	if err != nil {
		return 0, true, false, e.fail(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return 0, true, false, fmt.Errorf("%s answered %s: %s", e.URL, resp.Status, strings.TrimSpace(string(msg)))
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	f := results.ParseFormat(mt, results.SolutionFormats)
	if f == results.FormatNone {
		return 0, true, false, fmt.Errorf("%s answered with %q, not SPARQL results", e.URL, mt)
	}
	sr, err := results.NewSolutionReader(f, resp.Body)
	if err != nil {
		return 0, true, false, e.fail(ctx, fmt.Errorf("reading results: %w", err))
	}
	for {
		if _, err := sr.Next(); err == io.EOF {
			break
		} else if err != nil {
			return n, true, false, e.fail(ctx, fmt.Errorf("reading results: %w", err))
		}
		n++
	}
	// The rest of the document, then the trailer (a row cap hit after the
	// first bytes) and the connection's next response.
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return n, true, false, e.fail(ctx, err)
	}
	if resp.Header.Get("Wukong-Truncated") == "true" || resp.Trailer.Get("Wukong-Truncated") == "true" {
		return n, true, false, fmt.Errorf("the endpoint truncated the result at %d rows", n)
	}
	return n, true, !resp.Close, nil
}

// fail gives the context's error when the context ended the request.
func (e *Endpoint) fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w (%v)", e.URL, ctx.Err(), err)
	}
	if _, ok := ctx.Deadline(); ok && errors.Is(err, os.ErrDeadlineExceeded) {
		// The connection's deadline is the context's, which may not
		// have fired yet.
		return fmt.Errorf("%s: %w (%v)", e.URL, context.DeadlineExceeded, err)
	}
	return fmt.Errorf("%s: %w", e.URL, err)
}

// selectClient is Select through package client (an https endpoint).
func (e *Endpoint) selectClient(ctx context.Context, query string) (int, error) {
	rows, err := e.c.Select(ctx, query)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	if rows.Truncated {
		return n, fmt.Errorf("the endpoint truncated the result at %d rows", n)
	}
	return n, nil
}

// Values runs a one-variable SELECT and returns the IRIs or literals of its
// first column in N-Triples syntax.
func (e *Endpoint) Values(ctx context.Context, query string) ([]string, error) {
	rows, err := e.c.Select(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		if r := rows.Row(); len(r) > 0 {
			out = append(out, r[0].String())
		}
	}
	return out, rows.Err()
}

// CheckJSON sends query once and fails unless the endpoint answers 200 with
// SPARQL JSON results, so a report never compares JSON with another format.
func (e *Endpoint) CheckJSON(ctx context.Context, query string) error {
	body := url.Values{"query": {query}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/sparql-results+json")
	resp, err := e.hc.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", e.URL, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || mt != "application/sparql-results+json" {
		return fmt.Errorf("%s answered %s with %q, not SPARQL JSON results", e.URL, resp.Status, mt)
	}
	return nil
}

// WaitReady polls the endpoint with a trivial query until it answers or
// timeout passes.
func (e *Endpoint) WaitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err = e.Select(c, "SELECT * WHERE { } LIMIT 1")
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not ready after %s: %w", e.URL, timeout, err)
}
