package web

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// newLoopFixture serves a test backend with HTTPServer and the options
// given (the fixture's own server is not used).
func newLoopFixture(t *testing.T, mod func(*Options), hopts HTTPOptions) (*fixture, *HTTPServer, string) {
	t.Helper()
	f := newFixture(t, mod)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := NewHTTPServer(f.srv, hopts)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return f, hs, ln.Addr().String()
}

func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	return c, bufio.NewReader(c)
}

func readResp(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	return resp, string(b)
}

const selectKnowsText = "SELECT ?s ?o WHERE { ?s <http://example.org/knows> ?o }"

// Requests sent back to back on one connection (pipelined) are answered in
// order, whichever side serves them: the loop (queries), net/http (the
// rest, after which the connection stays with net/http).
func TestLoopPipelinedKeepAlive(t *testing.T) {
	_, _, addr := newLoopFixture(t, nil, HTTPOptions{})
	c, br := dial(t, addr)
	form := "query=" + url.QueryEscape(selectKnowsText)
	get := "GET /sparql?query=" + url.QueryEscape(selectKnowsText) + " HTTP/1.1\r\nHost: x\r\nAccept: text/csv\r\n\r\n"
	post := "POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nAccept: text/csv\r\nContent-Length: " +
		strconv.Itoa(len(form)) + "\r\n\r\n" + form
	health := "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
	if _, err := io.WriteString(c, get+post+health+get); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"s,o", "s,o", "ok", "s,o"} {
		resp, body := readResp(t, br)
		if resp.StatusCode != 200 || !strings.HasPrefix(body, want) {
			t.Fatalf("answer %d: %d %q", i, resp.StatusCode, body)
		}
		if i < 2 && (resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) > 0) {
			t.Errorf("answer %d: a short answer should have a Content-Length (%d, %v)", i, resp.ContentLength, resp.TransferEncoding)
		}
		if i < 2 && resp.Header.Get("X-Query-Id") == "" || resp.Header.Get("Date") == "" {
			t.Errorf("answer %d: header %v", i, resp.Header)
		}
	}
}

// A long answer is chunked, and a row cap hit after its first bytes is a
// trailer.
func TestLoopChunkedWithTrailer(t *testing.T) {
	_, _, addr := newLoopFixture(t, func(o *Options) { o.MaxRows, o.ResponseBuffer = 20000, minResponseBuffer }, HTTPOptions{})
	c, br := dial(t, addr)
	if _, err := io.WriteString(c, "GET "+q("SELECT ?n { ENDLESS }")+" HTTP/1.1\r\nHost: x\r\nAccept: text/csv\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, body := readResp(t, br)
	if resp.StatusCode != 200 || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("%d %v", resp.StatusCode, resp.TransferEncoding)
	}
	if n := strings.Count(body, "\n"); n != 20001 {
		t.Errorf("%d lines, want the header and 20,000 rows", n)
	}
	if resp.Trailer.Get(truncatedHeader) != "true" {
		t.Errorf("trailer %v", resp.Trailer)
	}
	// The connection carries the next request.
	if _, err := io.WriteString(c, "GET "+q(selectKnowsText)+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if resp, _ := readResp(t, br); resp.StatusCode != 200 {
		t.Errorf("next request: %d", resp.StatusCode)
	}
}

// closedWithin reports whether the server closes c (EOF or reset) within d.
func closedWithin(c net.Conn, br *bufio.Reader, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, br)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

func TestLoopTimeouts(t *testing.T) {
	_, _, addr := newLoopFixture(t, nil, HTTPOptions{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 600 * time.Millisecond, IdleTimeout: 400 * time.Millisecond})
	t.Run("header", func(t *testing.T) {
		c, br := dial(t, addr)
		_, _ = io.WriteString(c, "GET /sparql?query=x HTTP/1.1\r\nHost: x\r\n")
		if !closedWithin(c, br, 5*time.Second) {
			t.Error("a header never finished was not cut")
		}
	})
	t.Run("silent", func(t *testing.T) {
		c, br := dial(t, addr)
		if !closedWithin(c, br, 5*time.Second) {
			t.Error("a connection that never sent a request was not closed")
		}
	})
	t.Run("idle", func(t *testing.T) {
		c, br := dial(t, addr)
		_, _ = io.WriteString(c, "GET "+q(selectKnowsText)+" HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, _ := readResp(t, br); resp.StatusCode != 200 {
			t.Fatal(resp.Status)
		}
		start := time.Now()
		if !closedWithin(c, br, 5*time.Second) {
			t.Error("an idle keep-alive connection was not closed")
		}
		if time.Since(start) < 300*time.Millisecond {
			t.Errorf("closed after %s, before the idle timeout", time.Since(start))
		}
	})
	t.Run("body", func(t *testing.T) {
		c, br := dial(t, addr)
		_, _ = io.WriteString(c, "POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nquery=")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("a body that stops arriving: %d, want 408", resp.StatusCode)
		}
		if !closedWithin(c, br, 5*time.Second) {
			t.Error("the connection was kept after a body timeout")
		}
	})
}

// A body over the limit by its Content-Length is refused before it is
// read, the answer readable, and the connection closed.
func TestLoopBodyTooLarge(t *testing.T) {
	_, _, addr := newLoopFixture(t, func(o *Options) { o.MaxBodyBytes = 1000 }, HTTPOptions{})
	c, br := dial(t, addr)
	_, _ = io.WriteString(c, "POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\nContent-Length: 1000000\r\n\r\n"+strings.Repeat("x", 5000))
	resp, body := readResp(t, br)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || strings.Contains(body, "xxxx") {
		t.Errorf("%d %q", resp.StatusCode, body)
	}
	if !resp.Close {
		t.Error("the answer to an unread body should close the connection")
	}
	if !closedWithin(c, br, 5*time.Second) {
		t.Error("the connection stayed open")
	}
}

// What the loop does not serve goes to net/http, which answers it by its
// own rules.
func TestLoopFallsBackToNetHTTP(t *testing.T) {
	_, _, addr := newLoopFixture(t, nil, HTTPOptions{})
	query := q(selectKnowsText)
	for _, tc := range []struct {
		name, req string
		status    int
	}{
		{"HTTP/1.0", "GET " + query + " HTTP/1.0\r\nHost: x\r\n\r\n", 200},
		{"chunked POST", "POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\nTransfer-Encoding: chunked\r\n\r\n" +
			strconv.FormatInt(int64(len(selectKnowsText)), 16) + "\r\n" + selectKnowsText + "\r\n0\r\n\r\n", 200},
		{"Expect", "POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\nExpect: 100-continue\r\nContent-Length: " +
			strconv.Itoa(len(selectKnowsText)) + "\r\n\r\n" + selectKnowsText, 200},
		{"long header", "GET " + query + " HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", fastHeaderMax) + "\r\n\r\n", 200},
		{"no Host", "GET " + query + " HTTP/1.1\r\n\r\n", 400},
		{"two Hosts", "GET " + query + " HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400},
		{"two lengths", "POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx", 400},
		{"bad length", "POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400},
		{"space in name", "GET " + query + " HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", 400},
		{"other path", "GET /store?default HTTP/1.1\r\nHost: x\r\nAccept: application/n-triples\r\n\r\n", 200},
		{"escaped path", "GET /sp%61rql?query=" + url.QueryEscape(selectKnowsText) + " HTTP/1.1\r\nHost: x\r\n\r\n", 200},
		{"HEAD", "HEAD " + query + " HTTP/1.1\r\nHost: x\r\n\r\n", 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, br := dial(t, addr)
			if _, err := io.WriteString(c, tc.req); err != nil {
				t.Fatal(err)
			}
			var resp *http.Response
			for resp == nil || resp.StatusCode == http.StatusContinue {
				var err error
				if resp, err = http.ReadResponse(br, &http.Request{Method: strings.Fields(tc.req)[0]}); err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			if resp.StatusCode != tc.status {
				t.Errorf("%d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
}

// Shutdown closes idle connections and ends Serve.
func TestLoopShutdown(t *testing.T) {
	f := newFixture(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := NewHTTPServer(f.srv, HTTPOptions{})
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	c, br := dial(t, ln.Addr().String())
	_, _ = io.WriteString(c, "GET "+q(selectKnowsText)+" HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, _ := readResp(t, br); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve: %v", err)
	}
	if !closedWithin(c, br, 5*time.Second) {
		t.Error("an idle connection survived Shutdown")
	}
}

// Whatever parseHead takes, net/http reads the same way: the loop serves
// no request net/http would have refused or read otherwise.
func FuzzParseHead(f *testing.F) {
	for _, s := range []string{
		"GET /sparql?query=ASK%7B%7D HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /query HTTP/1.1\r\nHost: a:1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\n",
		"GET /sparql HTTP/1.1\r\nhost: x\r\nConnection: close\r\naccept: text/csv\r\n\r\n",
		"GET /sparql HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nX-A: 2\r\n\r\n",
		"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Length: 00\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		h, ok := parseHead(raw)
		if !ok {
			return
		}
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(string(raw))))
		if err != nil {
			t.Fatalf("parseHead took %q, net/http refuses it: %v", raw, err)
		}
		if r.Method != h.method || r.Host != h.host || r.URL.Path != h.path || r.URL.RawQuery != h.rawQuery || r.RequestURI != h.target ||
			r.ContentLength != h.contentLength || r.Close != h.close {
			t.Fatalf("%q: net/http %s %q %q %q %d close=%v, parseHead %+v", raw, r.Method, r.Host, r.URL.Path, r.URL.RawQuery, r.ContentLength, r.Close, h)
		}
		for k, vs := range r.Header {
			if got := h.header[k]; strings.Join(got, "\x00") != strings.Join(vs, "\x00") {
				t.Fatalf("%q: header %s: net/http %q, parseHead %q", raw, k, vs, got)
			}
		}
		for k := range h.header {
			if _, ok := r.Header[k]; !ok {
				t.Fatalf("%q: header %s only in parseHead", raw, k)
			}
		}
	})
}

// The background read (bgReadAfter) and the loop never read the connection
// at once: a timer fire that comes late — after its request has ended and
// the next has started — starts no read, and no read outlives its request.
// The hooks make every other request's timer fire at once and late (after
// the request has been answered and the next one has started) and the
// others' never; before the fix such a fire started a read in the next
// request that nobody stopped, which took the first byte of the one after
// (a keep-alive POST answered 405 'OST is not allowed'). Keep-alive GETs
// and POSTs, one at a time and pipelined, on several connections.
func TestLoopLateBackgroundFire(t *testing.T) {
	f := newFixture(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := NewHTTPServer(f.srv, HTTPOptions{})
	var n atomic.Int64
	hs.bgArmHook = func() time.Duration {
		if n.Add(1)%2 == 1 {
			return 0
		}
		return time.Hour
	}
	hs.bgFireHook = func() { time.Sleep(2 * time.Millisecond) }
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	addr := ln.Addr().String()
	form := "query=" + url.QueryEscape(selectKnowsText)
	get := "GET /sparql?query=" + url.QueryEscape(selectKnowsText) + " HTTP/1.1\r\nHost: x\r\nAccept: text/csv\r\n\r\n"
	post := "POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nAccept: text/csv\r\nContent-Length: " +
		strconv.Itoa(len(form)) + "\r\n\r\n" + form
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for k := 0; k < 4; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(60 * time.Second))
			br := bufio.NewReader(c)
			for i := 0; i < 150; i++ {
				// One at a time, then (every third round) three pipelined.
				batch := []string{post}
				if i%2 == 1 {
					batch = []string{get}
				}
				if i%3 == 2 {
					batch = []string{post, get, post}
				}
				if _, err := io.WriteString(c, strings.Join(batch, "")); err != nil {
					errs <- fmt.Errorf("conn %d round %d: write: %w", k, i, err)
					return
				}
				for j := range batch {
					resp, err := http.ReadResponse(br, nil)
					if err != nil {
						errs <- fmt.Errorf("conn %d round %d answer %d: %w", k, i, j, err)
						return
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(string(b), "s,o") {
						errs <- fmt.Errorf("conn %d round %d answer %d: %d %q %v", k, i, j, resp.StatusCode, b, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
