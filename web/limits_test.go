package web

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A backend that ignores its deadline keeps its slot after the 504: the
// cap bounds the work running, not only the requests answering; the slot
// comes back once the backend returns.
func TestLateBackendHoldsItsSlot(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxConcurrent = 1 })
	if r := f.get(q("SELECT * { STUCK }", "timeout", "0.1"), ""); r.status != TimeoutStatus {
		t.Fatalf("stuck: %d %s", r.status, r.body)
	}
	if r := f.get(q(selectKnows), ""); r.status != 429 {
		t.Fatalf("while the stuck query still runs: %d, want 429", r.status)
	}
	close(f.b.unstick)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := f.get(q(selectKnows), "")
		if r.status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot not given back after the backend returned: %d", r.status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that sends a query and never reads the response is cut by the
// write progress timeout: the query stops and its slot is free again.
func TestNonReadingClientIsCut(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxConcurrent = 1; o.MaxRows = -1; o.WriteTimeout = 300 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096) // fill the pipe sooner
	}
	if _, err := conn.Write([]byte("GET " + q("SELECT ?n { ENDLESS }", "timeout", "60") + " HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.b.cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the query of a client that never reads was not stopped")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := f.get(q(selectKnows), "")
		if r.status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot not freed: %d", r.status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runAs serves a request from the client at remote (host:port) through
// the handler, returning when it is answered.
func runAs(srv *Server, remote, method, target string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	req.RemoteAddr = remote
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	return w
}

// /api/cancel reaches only the caller's own queries (by client host), or
// any with the update token; a running id is not reused.
func TestCancelIsScopedToTheClient(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.UpdateToken = "s3cret" })
	start := func(remote, id string) chan *httptest.ResponseRecorder {
		ch := make(chan *httptest.ResponseRecorder, 1)
		go func() {
			ch <- runAs(f.srv, remote, "GET", q("SELECT * { SLEEP }"), map[string]string{"X-Query-Id": id})
		}()
		if got := <-f.b.started; got != id {
			t.Fatalf("started %q, want %q", got, id)
		}
		return ch
	}
	a := start("10.0.0.1:1000", "mine")
	if w := runAs(f.srv, "10.0.0.2:2000", "POST", "/api/cancel?id=mine", nil); w.Code != 404 {
		t.Fatalf("another client cancelled: %d %s", w.Code, w.Body)
	}
	// The same id from the same client while it runs: refused.
	if w := runAs(f.srv, "10.0.0.1:1001", "GET", q(selectKnows), map[string]string{"X-Query-Id": "mine"}); w.Code != 409 {
		t.Fatalf("reused id: %d %s", w.Code, w.Body)
	}
	// Another client may use the same id: it is scoped to the client.
	b := start("10.0.0.2:2001", "mine")
	if w := runAs(f.srv, "10.0.0.1:1002", "POST", "/api/cancel?id=mine", nil); w.Code != 200 {
		t.Fatalf("own cancel (another connection): %d %s", w.Code, w.Body)
	}
	if w := <-a; w.Code != statusClientClosed {
		t.Errorf("cancelled query answered %d", w.Code)
	}
	if got := <-f.b.cancelled; got != "mine" {
		t.Errorf("cancelled %q", got)
	}
	select {
	case <-b:
		t.Fatal("cancelling one client's query stopped the other's")
	case <-time.After(50 * time.Millisecond):
	}
	if w := runAs(f.srv, "10.0.0.3:3000", "POST", "/api/cancel?id=mine", map[string]string{"Authorization": "Bearer s3cret"}); w.Code != 200 {
		t.Fatalf("cancel with the token: %d %s", w.Code, w.Body)
	}
	<-b
	<-f.b.cancelled
	if w := runAs(f.srv, "10.0.0.1:1000", "POST", "/api/cancel?id="+strings.Repeat("x", 100), nil); w.Code != 400 {
		t.Errorf("malformed id: %d", w.Code)
	}
}

// Error bodies and log lines repeat no unbounded input.
func TestErrorsEchoBoundedInput(t *testing.T) {
	f := newFixture(t, nil)
	huge := strings.Repeat("text/x-nothing-", 60_000) // 900 KB
	r := f.get(q(selectKnows), huge)
	if r.status != 406 || len(r.body) > 2*maxMessage {
		t.Fatalf("406 body of %d bytes (status %d)", len(r.body), r.status)
	}
	r = f.get(q(selectKnows, "timeout", strings.Repeat("9x", 100_000)), "")
	if r.status != 400 || len(r.body) > 2*maxMessage {
		t.Fatalf("bad timeout: %d, body of %d bytes", r.status, len(r.body))
	}
	r = f.get("/"+strings.Repeat("p", 100_000), "")
	if r.status != 404 || len(r.body) > 2*maxMessage {
		t.Fatalf("404 body of %d bytes", len(r.body))
	}
	if got := clip(strings.Repeat("é", 1000)); len(got) > maxEcho+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("clip: %d bytes", len(got))
	}
}

// Updates have their own slots: updates waiting (here: stuck) take no
// query slot, and past their own cap they get 429 while queries go on.
func TestUpdatesDoNotStarveQueries(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.UpdateToken = "s3cret"; o.MaxConcurrent = 1; o.MaxConcurrentUpdates = 2 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := 0; i < 2; i++ {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", f.ts.URL+"/update", strings.NewReader("SLEEP"))
			req.Header.Set("Content-Type", "application/sparql-update")
			req.Header.Set("Authorization", "Bearer s3cret")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		<-f.b.started
	}
	upd := map[string]string{"Content-Type": "application/sparql-update", "Authorization": "Bearer s3cret"}
	if r := f.do("POST", "/update", upd, "SLEEP"); r.status != 429 {
		t.Errorf("third update: %d, want 429", r.status)
	}
	for i := 0; i < 3; i++ {
		if r := f.get(q(selectKnows), ""); r.status != 200 {
			t.Fatalf("query with two updates waiting: %d", r.status)
		}
	}
	cancel()
	<-f.b.cancelled
	<-f.b.cancelled
}

// LimitListener holds at most n connections: the next waits until one
// closes.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(inner, 2)
	defer ln.Close()
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first := <-accepted
	<-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted over the limit of 2")
	case <-time.After(100 * time.Millisecond):
	}
	first.Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the third connection was not accepted after one closed")
	}
}

// readCounter is a request body that counts the bytes read from it.
type readCounter struct{ n int }

func (r *readCounter) Read(p []byte) (int, error) {
	r.n += len(p)
	for i := range p {
		p[i] = '#'
	}
	return len(p), nil
}

// TestBodyTooLargeByLength: a body whose Content-Length is over
// --max-body is refused with 413 before any of it is read (a query POST, a
// form, the parse endpoint, a Graph Store PUT).
func TestBodyTooLargeByLength(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxBodyBytes = 1000; o.UpdateToken = "tok" })
	for _, c := range []struct{ method, path, ct string }{
		{"POST", "/sparql", "application/sparql-query"},
		{"POST", "/sparql", "application/x-www-form-urlencoded"},
		{"POST", "/update", "application/sparql-update"},
		{"POST", "/api/parse", "application/x-www-form-urlencoded"},
		{"PUT", "/store?default", "text/turtle"},
	} {
		body := &readCounter{}
		req := httptest.NewRequest(c.method, c.path, body)
		req.ContentLength = 1 << 30
		req.Header.Set("Content-Type", c.ct)
		req.Header.Set("Authorization", "Bearer tok")
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, req)
		if w.Code != 413 || body.n != 0 {
			t.Errorf("%s %s with Content-Length 1 GiB: %d after reading %d bytes, want 413 before reading: %.200s", c.method, c.path, w.Code, body.n, w.Body.String())
		}
	}
}

// A query's timeout counts from the request's arrival: a body that takes
// longer than the timeout to arrive leaves the query no time, and it gets
// its 504 once the body is in, not a timeout's worth later (an 8 MB
// INSERT DATA answered 1.0–1.8 s past its deadline by the client's clock
// when the deadline started after the body; issue 13).
func TestTimeoutCountsTheBody(t *testing.T) {
	f := newFixture(t, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	body := selectKnows
	head := "POST /sparql?timeout=0.2 HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n"
	if _, err := io.WriteString(conn, head+body[:10]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // more than the timeout: the body is late
	if _, err := io.WriteString(conn, body[10:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != TimeoutStatus {
		t.Fatalf("a query whose body arrived past its timeout: %d %s, want %d", resp.StatusCode, b, TimeoutStatus)
	}
}
