package bench

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wukongd/wukongd/client"
)

// Endpoint is a SPARQL 1.1 Protocol endpoint driven over keep-alive HTTP
// connections. Queries go as form POSTs asking for JSON results, and every
// row is decoded into terms by package client — the work a real client
// does — so the time measured is end to end.
type Endpoint struct {
	URL string
	c   *client.Client
	hc  *http.Client
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
	return &Endpoint{URL: rawURL, c: c, hc: hc}
}

// Close closes the idle connections.
func (e *Endpoint) Close() { e.hc.CloseIdleConnections() }

// Select runs a SELECT query and returns its row count after decoding
// every row.
func (e *Endpoint) Select(ctx context.Context, query string) (int, error) {
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
