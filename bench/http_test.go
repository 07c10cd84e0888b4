package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// jsonRows is a SPARQL JSON result of n rows.
func jsonRows(n int) string {
	var b strings.Builder
	b.WriteString(`{"head":{"vars":["x"]},"results":{"bindings":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"x":{"type":"uri","value":"http://e/%d"}}`, i)
	}
	b.WriteString("]}}")
	return b.String()
}

// TestEndpointSelect drives Select's own connections against net/http's
// server: every row decoded, with Content-Length and chunked answers, one
// connection reused, errors and a truncated result reported.
func TestEndpointSelect(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			http.Error(w, "bad request form", http.StatusBadRequest)
			return
		}
		q := r.FormValue("query")
		switch {
		case strings.HasPrefix(q, "ROWS "):
			var n int
			fmt.Sscan(strings.TrimPrefix(q, "ROWS "), &n)
			w.Header().Set("Content-Type", "application/sparql-results+json; charset=utf-8")
			body := jsonRows(n)
			if n%2 == 0 {
				w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			}
			_, _ = io.WriteString(w, body) // odd n: chunked once it passes the buffer
		case q == "FAIL":
			http.Error(w, "no such thing", http.StatusBadRequest)
		case q == "HTML":
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html></html>")
		case q == "CUT":
			w.Header().Set("Content-Type", "application/sparql-results+json")
			w.Header().Set("Trailer", "Wukong-Truncated")
			_, _ = io.WriteString(w, jsonRows(3))
			w.Header().Set("Wukong-Truncated", "true")
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	e := NewEndpoint(srv.URL+"/sparql?x=1", 1)
	defer e.Close()
	ctx := context.Background()
	for _, n := range []int{0, 1, 10, 5000, 5001} {
		got, err := e.Select(ctx, fmt.Sprintf("ROWS %d", n))
		if err != nil || got != n {
			t.Fatalf("ROWS %d: got %d rows, %v", n, got, err)
		}
	}
	if c := conns.Load(); c != 1 {
		t.Errorf("%d connections for 5 sequential queries, want 1 (keep-alive)", c)
	}
	if _, err := e.Select(ctx, "FAIL"); err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "no such thing") {
		t.Errorf("FAIL: %v, want the 400 and its message", err)
	}
	if _, err := e.Select(ctx, "HTML"); err == nil || !strings.Contains(err.Error(), "text/html") {
		t.Errorf("HTML: %v, want a not-SPARQL-results error", err)
	}
	if _, err := e.Select(ctx, "CUT"); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("CUT: %v, want the truncation reported", err)
	}
	// The server drops its idle connections: the next query goes on a
	// new one.
	srv.CloseClientConnections()
	time.Sleep(10 * time.Millisecond)
	if got, err := e.Select(ctx, "ROWS 2"); err != nil || got != 2 {
		t.Fatalf("after the server closed the connection: %d rows, %v", got, err)
	}
	// A context that ends stops the query.
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Select(c, "ROWS 2"); err == nil {
		t.Errorf("a cancelled context: no error")
	}
}

// TestEndpointSelectTimeout: a server that never answers fails the query
// at the context's deadline.
func TestEndpointSelectTimeout(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	e := NewEndpoint(srv.URL, 1)
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := e.Select(ctx, "ROWS 1"); err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("got %v, want the deadline", err)
	}
}
