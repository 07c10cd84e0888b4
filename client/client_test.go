package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestNewStoreURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8080/sparql":   "http://h:8080/store",
		"http://h/a/b/query?x=1": "http://h/a/b/store",
		"http://h":               "http://h/store",
	} {
		if got := New(in).StoreURL; got != want {
			t.Errorf("New(%q).StoreURL = %q, want %q", in, got, want)
		}
	}
	c := New("http://h/sparql")
	if got := c.storeURL(""); got != "http://h/store?default" {
		t.Errorf("default: %s", got)
	}
	if got := c.storeURL("http://g/1?a=b"); got != "http://h/store?graph=http%3A%2F%2Fg%2F1%3Fa%3Db" {
		t.Errorf("named: %s", got)
	}
}

func TestErrorDecoding(t *testing.T) {
	var status int
	var body, ctype string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("X-Query-Id", "hdr-id")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	defer srv.Close()
	c := New(srv.URL + "/sparql")
	ctx := context.Background()

	status, ctype, body = 400, "application/json", `{"status":400,"error":"syntax_error","message":"unexpected }","queryId":"q1","line":3,"col":7}`
	_, err := c.Select(ctx, "SELECT")
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 3 || se.Col != 7 || se.QueryID != "q1" {
		t.Errorf("syntax: %#v", err)
	}
	status, body = 504, `{"status":504,"error":"timeout","message":"too slow","queryId":"q2"}`
	_, err = c.Ask(ctx, "ASK {}")
	var he *HTTPError
	if !errors.Is(err, ErrTimeout) || !errors.As(err, &he) || he.StatusCode != 504 || he.QueryID != "q2" {
		t.Errorf("timeout: %#v", err)
	}
	status, ctype, body = 502, "text/html", "<html>bad gateway</html>"
	_, err = c.Construct(ctx, "CONSTRUCT {} WHERE {}")
	if !errors.As(err, &he) || he.StatusCode != 502 || he.Message != "<html>bad gateway</html>" || he.QueryID != "hdr-id" || errors.Is(err, ErrTimeout) {
		t.Errorf("other: %#v", err)
	}
	status, ctype, body = 200, "text/html", "<html>hello</html>"
	if _, err = c.Select(ctx, "SELECT * {}"); err == nil {
		t.Error("HTML accepted as results")
	}
}

func TestOptionsReachTheServer(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		got = []string{r.Form.Get("mode"), strings.Join(r.Form["default-graph-uri"], ","),
			strings.Join(r.Form["named-graph-uri"], ","), strings.Join(r.Form["using-graph-uri"], ",")}
		w.Header().Set("Content-Type", "application/sparql-results+json")
		w.Write([]byte(`{"head":{},"boolean":true}`))
	}))
	defer srv.Close()
	c := New(srv.URL + "/sparql")
	ctx := context.Background()
	if _, err := c.Ask(ctx, "ASK {}", WithMode("fork-join"), WithDefaultGraph("http://g/1"), WithDefaultGraph("http://g/2"), WithNamedGraph("http://g/3")); err != nil {
		t.Fatal(err)
	}
	if want := []string{"fork-join", "http://g/1,http://g/2", "http://g/3", ""}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("query parameters %q, want %q", got, want)
	}
	c.UpdateURL = srv.URL + "/update"
	if err := c.Update(ctx, "CLEAR DEFAULT", WithDefaultGraph("http://g/1")); err != nil {
		t.Fatal(err)
	}
	if got[1] != "" || got[3] != "http://g/1" {
		t.Errorf("update parameters %q: default-graph-uri should become using-graph-uri", got)
	}
}

// The rows end where the results reader stops (after the bindings); the
// rest of the body must still be read so that the trailer is seen and the
// connection is reused.
func TestRowsReadToEndOfBody(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/sparql-results+json")
		w.Header().Set("Trailer", "Wukong-Truncated")
		w.Write([]byte(`{"head":{"vars":["a"]},"results":{"bindings":[{"a":{"type":"uri","value":"http://x"}}]}}` + strings.Repeat(" ", 10000) + "\n"))
		w.(http.Flusher).Flush()
		w.Header().Set("Wukong-Truncated", "true")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := New(srv.URL + "/sparql")
	for i := 0; i < 3; i++ {
		rows, err := c.Select(context.Background(), "SELECT * {}")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil || n != 1 || !rows.Truncated {
			t.Fatalf("%d rows, %v, truncated %v", n, err, rows.Truncated)
		}
		rows.Close()
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 3 requests", n)
	}
}
