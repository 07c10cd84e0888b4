package web

import (
	"bufio"
	"context"
	"errors"

	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// The SPARQL query endpoint's own HTTP/1.1 connection loop (docs/DESIGN.md
// §8.2). net/http serves every request on two goroutines at least — the
// connection's, and a background reader started for each request to notice
// a client that goes away — and on two cores each hand-off between them
// wakes the idle processor's thread: about half the server's CPU of a
// light query (docs/PERFORMANCE.md, "The request path, third pass").
// HTTPServer reads each connection's requests on one goroutine, runs the
// handler there and writes the answer with one write(2) when it is small.
//
// The rule: the loop serves a request itself only when it is a GET or a
// POST with a Content-Length, of HTTP/1.1, to exactly /sparql or /query,
// whose header is at most fastHeaderMax bytes of plain ASCII with one Host,
// no Transfer-Encoding, no Expect and no Upgrade. Anything else — the Graph
// Store, updates sent elsewhere, the console, uploads in chunks, HTTP/1.0,
// a header it does not fully understand — hands the connection, with the
// bytes read so far, to a net/http server for the rest of its life. The
// loop never answers a malformed request itself: net/http's rules (400,
// 431, 501 …) stay the only ones.

// HTTPOptions are the timeouts and limits of an HTTPServer; zero values
// get the defaults noted (serve's flags set them).
type HTTPOptions struct {
	// ReadHeaderTimeout bounds the time from a request's first byte to the
	// end of its header (default 10s); ReadTimeout the time to the end of
	// its body (default 1m).
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	// IdleTimeout bounds the wait for a keep-alive connection's next
	// request (default 2m).
	IdleTimeout time.Duration
	// MaxHeaderBytes caps a request's header on the net/http side (default
	// 1 MiB); the loop's own requests are at most fastHeaderMax.
	MaxHeaderBytes int
}

// fastHeaderMax is the largest request header the loop serves itself
// (a GET's query is in it); a longer one goes to net/http, which applies
// MaxHeaderBytes.
const fastHeaderMax = 64 << 10

// bgReadAfter is how long a request runs before the loop starts watching
// its connection for the client going away (a read in the background, as
// net/http does for every request): a light query ends before it and pays
// nothing; a longer one is cancelled within this long of its client
// closing the connection.
const bgReadAfter = 10 * time.Millisecond

// HTTPServer serves a Server over HTTP/1.1 (see the rule above).
type HTTPServer struct {
	s        *Server
	opts     HTTPOptions
	fallback *http.Server
	handoff  *handoffListener
	startFB  sync.Once
	fbErr    chan error

	// Test hooks, nil outside tests, set before Serve: bgArmHook returns
	// the delay of the background read's timer for the request starting
	// now (instead of bgReadAfter); bgFireHook runs first in every timer
	// fire (a test makes a fire late with it).
	bgArmHook  func() time.Duration
	bgFireHook func()

	closing atomic.Bool
	mu      sync.Mutex
	conns   map[*h1conn]struct{}
	lns     map[net.Listener]struct{}
}

// NewHTTPServer returns the HTTP/1.1 server of s.
func NewHTTPServer(s *Server, opts HTTPOptions) *HTTPServer {
	if opts.ReadHeaderTimeout <= 0 {
		opts.ReadHeaderTimeout = 10 * time.Second
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = time.Minute
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 2 * time.Minute
	}
	if opts.MaxHeaderBytes <= 0 {
		opts.MaxHeaderBytes = 1 << 20
	}
	h := &HTTPServer{s: s, opts: opts, conns: map[*h1conn]struct{}{}, lns: map[net.Listener]struct{}{}, fbErr: make(chan error, 1)}
	// No WriteTimeout: it would cut long results that keep flowing; the
	// web layer's progress timeout (--write-timeout) bounds each write.
	h.fallback = &http.Server{Handler: s, ReadHeaderTimeout: opts.ReadHeaderTimeout, ReadTimeout: opts.ReadTimeout,
		IdleTimeout: opts.IdleTimeout, MaxHeaderBytes: opts.MaxHeaderBytes, ConnContext: ConnContext}
	return h
}

// Serve accepts connections on ln until it fails or the server is shut
// down (then http.ErrServerClosed).
func (h *HTTPServer) Serve(ln net.Listener) error {
	h.startFB.Do(func() {
		h.handoff = newHandoffListener(ln.Addr())
		go func() { h.fbErr <- h.fallback.Serve(h.handoff) }()
	})
	h.mu.Lock()
	if h.closing.Load() {
		h.mu.Unlock()
		return http.ErrServerClosed
	}
	h.lns[ln] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.lns, ln)
		h.mu.Unlock()
	}()
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if h.closing.Load() {
				return http.ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of file descriptors and the like: wait, as net/http does.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			time.Sleep(delay)
			continue
		}
		delay = 0
		cc := h.newConn(c)
		if cc == nil {
			_ = c.Close()
			return http.ErrServerClosed
		}
		go cc.serve()
	}
}

// Shutdown stops accepting, closes idle connections and waits until the
// active ones have answered (or ctx ends), here and on the net/http side.
func (h *HTTPServer) Shutdown(ctx context.Context) error {
	h.closeListeners()
	fbDone := make(chan error, 1)
	go func() { fbDone <- h.fallback.Shutdown(ctx) }()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if h.closeIdle() == 0 {
			return <-fbDone
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Close closes the listeners and every connection at once.
func (h *HTTPServer) Close() error {
	h.closeListeners()
	h.mu.Lock()
	for cc := range h.conns {
		cc.state.Store(stateClosed)
		_ = cc.c.Close()
	}
	h.mu.Unlock()
	return h.fallback.Close()
}

func (h *HTTPServer) closeListeners() {
	h.mu.Lock()
	h.closing.Store(true)
	for ln := range h.lns {
		_ = ln.Close()
	}
	h.mu.Unlock()
}

// closeIdle closes the connections waiting for a request and returns how
// many connections are left.
func (h *HTTPServer) closeIdle() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	for cc := range h.conns {
		if cc.state.CompareAndSwap(stateIdle, stateClosed) {
			_ = cc.c.Close()
		}
	}
	return len(h.conns)
}

func (h *HTTPServer) newConn(c net.Conn) *h1conn {
	cc := &h1conn{h: h, c: c, remote: c.RemoteAddr().String()}
	cc.rd.cc = cc
	cc.br = bufio.NewReaderSize(&cc.rd, 4<<10)
	cc.ctx, cc.cancel = context.WithCancel(context.WithValue(context.Background(), connKey{}, c))
	cc.w.cc = cc
	cc.w.header = http.Header{}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing.Load() {
		return nil
	}
	h.conns[cc] = struct{}{}
	return cc
}

func (h *HTTPServer) forget(cc *h1conn) {
	h.mu.Lock()
	delete(h.conns, cc)
	h.mu.Unlock()
}

// Connection states (h1conn.state).
const (
	stateIdle int32 = iota // waiting for a request (Shutdown may close it)
	stateActive
	stateClosed
)

// h1conn is one connection served by the loop.
type h1conn struct {
	h      *HTTPServer
	c      net.Conn
	rd     connReader
	br     *bufio.Reader
	raw    []byte // the request's header as read
	remote string
	ctx    context.Context // the connection's: cancelled when the client goes away
	cancel context.CancelFunc
	state  atomic.Int32
	w      h1writer
	body   bodyReader
	served int // requests served so far

	// The background read (bgReadAfter) that notices a client going away
	// while a request runs; under bgMu.
	bgMu      sync.Mutex
	bgTimer   *time.Timer
	bgDue     time.Time // when the current request's timer is due
	inHandler bool
	bodyDone  bool // the request's body is read to its end
	bgWanted  bool // the timer fired before the body was read
	bgRunning bool
	bgAbort   bool // stopBG woke the read on purpose
	bgDone    chan struct{}
	gone      bool // the background read failed: the client went away
	stash     bool // the background read took the next request's first byte
	stashB    [1]byte
}

// connReader reads the connection, the stashed byte first.
type connReader struct{ cc *h1conn }

func (r *connReader) Read(p []byte) (int, error) {
	cc := r.cc
	if cc.stash && len(p) > 0 {
		p[0], cc.stash = cc.stashB[0], false
		return 1, nil
	}
	return cc.c.Read(p)
}

// serve runs the connection's request loop.
func (cc *h1conn) serve() {
	handedOff := false
	defer func() {
		if handedOff {
			return
		}
		cc.h.forget(cc)
		cc.cancel()
		if cc.w.hijacked {
			return
		}
		_ = cc.c.Close()
	}()
	for {
		// Wait for the next request (its first byte), at most the idle
		// timeout (the header timeout for a connection's first request).
		if cc.br.Buffered() == 0 {
			cc.state.Store(stateIdle)
			if cc.h.closing.Load() {
				return
			}
			wait := cc.h.opts.IdleTimeout
			if cc.served == 0 {
				wait = cc.h.opts.ReadHeaderTimeout
			}
			_ = cc.c.SetReadDeadline(time.Now().Add(wait))
			if _, err := cc.br.Peek(1); err != nil {
				return
			}
			if !cc.state.CompareAndSwap(stateIdle, stateActive) {
				return // closed by Shutdown
			}
		} else {
			cc.state.Store(stateActive)
		}
		t0 := time.Now()
		req, ok, err := cc.readRequest(t0)
		if err != nil {
			return // a timeout or EOF within the header: close, as net/http does
		}
		if !ok {
			handedOff = cc.handOff()
			return
		}
		cc.served++
		if !cc.serveRequest(req) {
			return
		}
	}
}

// readRequest reads a request's header and returns the request if the loop
// serves it (ok), or ok false to hand the connection to net/http with the
// header read (cc.raw). err is a read error (timeout, EOF) within the
// header.
func (cc *h1conn) readRequest(t0 time.Time) (req *http.Request, ok bool, err error) {
	// The header timeout, unless the whole header is here already.
	if buf, _ := cc.br.Peek(cc.br.Buffered()); !hasHeaderEnd(buf) {
		_ = cc.c.SetReadDeadline(t0.Add(cc.h.opts.ReadHeaderTimeout))
	}
	raw := cc.raw[:0]
	for {
		line, err := cc.br.ReadSlice('\n')
		raw = append(raw, line...)
		if err == bufio.ErrBufferFull {
			if len(raw) > fastHeaderMax {
				cc.raw = raw
				return nil, false, nil
			}
			continue
		}
		if err != nil {
			cc.raw = raw
			return nil, false, err
		}
		if len(raw) > fastHeaderMax {
			cc.raw = raw
			return nil, false, nil
		}
		if (len(line) == 2 && line[0] == '\r') || len(line) == 1 {
			break
		}
	}
	cc.raw = raw
	head, ok := parseHead(raw)
	if !ok {
		return nil, false, nil
	}
	return cc.newRequest(head, t0), true, nil
}

// hasHeaderEnd reports whether b holds the blank line ending a header.
func hasHeaderEnd(b []byte) bool {
	for i := 0; i+3 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' && b[i+2] == '\r' && b[i+3] == '\n' {
			return true
		}
	}
	return false
}

// newRequest builds the http.Request of a parsed head, its body reading
// the connection (bounded by ReadTimeout from t0).
func (cc *h1conn) newRequest(hd head, t0 time.Time) *http.Request {
	r := (&http.Request{}).WithContext(cc.ctx)
	r.Method = hd.method
	r.URL = &url.URL{Path: hd.path, RawQuery: hd.rawQuery}
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	r.Header = hd.header
	r.Host = hd.host
	r.RemoteAddr = cc.remote
	r.RequestURI = hd.target
	r.Close = hd.close
	cc.body = bodyReader{cc: cc, left: hd.contentLength}
	if hd.contentLength > 0 {
		r.ContentLength = hd.contentLength
		r.Body = &cc.body
		if int64(cc.br.Buffered()) < hd.contentLength {
			_ = cc.c.SetReadDeadline(t0.Add(cc.h.opts.ReadTimeout))
		}
	} else {
		r.Body = http.NoBody
	}
	return r
}

// serveRequest runs the handler on req and finishes its answer; it
// reports whether the connection may carry another request.
func (cc *h1conn) serveRequest(req *http.Request) (keep bool) {
	w := &cc.w
	w.reset()
	w.closeAfter = req.Close
	cc.startBG(cc.body.left == 0)
	panicked := cc.runHandler(w, req)
	cc.stopBG()
	if w.hijacked {
		return false
	}
	if panicked {
		resetConn(cc.c)
		return false
	}
	if cc.body.left > 0 {
		// An unread body (a refused upload): answer, then close the way
		// net/http does, so that the client reads the answer before the
		// reset its unread bytes cause.
		w.closeAfter = true
		w.finish()
		if w.err == nil {
			closeWriteAndWait(cc.c)
		}
		return false
	}
	if req.Close || cc.h.closing.Load() || cc.gone {
		w.closeAfter = true
	}
	w.finish()
	if len(cc.raw) > 2*fastHeaderMax/4 {
		cc.raw = nil // a rare long header: not kept for the next request
	}
	return w.err == nil && !w.closeAfter
}

// runHandler calls the Server's handler and reports whether it panicked
// (a panic other than http.ErrAbortHandler is logged, as net/http does).
func (cc *h1conn) runHandler(w *h1writer, req *http.Request) (panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			panicked = true
			if p != http.ErrAbortHandler {
				cc.h.s.log.Error().Interface("panic", p).Bytes("stack", debug.Stack()).Msg("panic serving a request")
			}
		}
	}()
	cc.h.s.ServeHTTP(w, req)
	return false
}

// handOff gives the connection, with what was read of it, to the net/http
// server; it reports whether that took it.
func (cc *h1conn) handOff() bool {
	pre := append([]byte(nil), cc.raw...)
	if n := cc.br.Buffered(); n > 0 {
		b, _ := cc.br.Peek(n)
		pre = append(pre, b...)
	}
	// net/http sets its own read deadlines, and no write deadline outside
	// a handler (progressWriter sets one in each): none of the loop's is
	// left behind.
	_ = cc.c.SetDeadline(time.Time{})
	cc.h.forget(cc)
	if !cc.h.handoff.hand(&replayConn{Conn: cc.c, pre: pre}) {
		cc.h.mu.Lock()
		cc.h.conns[cc] = struct{}{}
		cc.h.mu.Unlock()
		return false
	}
	return true
}

// The background read and the loop never read the connection at once, by
// construction: the read starts only under bgMu, only while a handler runs
// (inHandler) whose body is read to its end (bodyDone) — the loop reads
// nothing then — and stopBG, which every request passes before the loop
// reads again, clears inHandler and waits for a running read to end
// whatever the timer says. The byte such a read took (the stash) is handed
// over by that wait. A timer fire can come late — after its request ended
// and the next one began (Timer.Stop reports false, the fire's goroutine
// not yet in bgFire): a fire before the current request's due time
// (bgDue) is such a stale one and starts nothing.

// startBG arms the background read for the request starting now.
func (cc *h1conn) startBG(bodyDone bool) {
	d := bgReadAfter
	if cc.h.bgArmHook != nil {
		d = cc.h.bgArmHook()
	}
	cc.bgMu.Lock()
	cc.inHandler, cc.bgWanted, cc.bodyDone = true, false, bodyDone
	cc.bgDue = time.Now().Add(d)
	cc.bgMu.Unlock()
	if cc.bgTimer == nil {
		cc.bgTimer = time.AfterFunc(d, cc.bgFire)
	} else {
		cc.bgTimer.Reset(d)
	}
}

// bgFire runs when a request has run for bgReadAfter: it starts the
// background read once the body is read (it cannot read the connection
// before). A late fire meant for an earlier request does nothing.
func (cc *h1conn) bgFire() {
	if cc.h.bgFireHook != nil {
		cc.h.bgFireHook()
	}
	cc.bgMu.Lock()
	defer cc.bgMu.Unlock()
	if !cc.inHandler || cc.bgRunning || time.Now().Before(cc.bgDue) {
		return
	}
	if !cc.bodyDone {
		cc.bgWanted = true
		return
	}
	cc.bgStartLocked()
}

// bodyEOF is told by the body reader that the body is read: a wanted
// background read starts.
func (cc *h1conn) bodyEOF() {
	cc.bgMu.Lock()
	defer cc.bgMu.Unlock()
	cc.bodyDone = true
	if cc.inHandler && cc.bgWanted && !cc.bgRunning {
		cc.bgStartLocked()
	}
}

func (cc *h1conn) bgStartLocked() {
	if cc.br.Buffered() > 0 || cc.stash {
		return // the next request is here already: the client is alive
	}
	cc.bgRunning, cc.bgAbort = true, false
	cc.bgDone = make(chan struct{})
	// Set before the read starts (stopBG's wake-up must come after it).
	_ = cc.c.SetReadDeadline(time.Time{})
	go cc.bgRead()
}

func (cc *h1conn) bgRead() {
	n, err := cc.c.Read(cc.stashB[:])
	cc.bgMu.Lock()
	if n > 0 {
		cc.stash = true
	}
	if err != nil && !cc.bgAbort {
		cc.gone = true
		cc.cancel() // the client went away: the request's context ends
	}
	cc.bgRunning = false
	close(cc.bgDone)
	cc.bgMu.Unlock()
}

// stopBG ends the request's background read (waking it if it runs): when
// it returns, no read of the connection but the loop's runs or can start.
func (cc *h1conn) stopBG() {
	cc.bgTimer.Stop()
	cc.bgMu.Lock()
	cc.inHandler = false
	running, done := cc.bgRunning, cc.bgDone
	if running {
		cc.bgAbort = true
	}
	cc.bgMu.Unlock()
	if running {
		_ = cc.c.SetReadDeadline(time.Unix(1, 0))
		<-done
	}
}

// bodyReader reads a request's body of Content-Length bytes.
type bodyReader struct {
	cc   *h1conn
	left int64
	err  error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left <= 0 {
		return 0, errEOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.cc.br.Read(p)
	b.left -= int64(n)
	if b.left == 0 {
		b.cc.bodyEOF()
		if err == nil {
			err = errEOF
		}
		return n, err
	}
	if err != nil {
		if err == errEOF {
			err = errUnexpectedEOF
		}
		b.err = err
	}
	return n, err
}

func (b *bodyReader) Close() error { return nil }

// replayConn is a connection handed to net/http: its reads return what
// the loop had read first.
type replayConn struct {
	net.Conn
	pre []byte
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// NetConn returns the connection it wraps (setLinger, resetConn).
func (c *replayConn) NetConn() net.Conn { return c.Conn }

// handoffListener is the net/http server's listener: the connections the
// loop hands over.
type handoffListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
	addr net.Addr
}

func newHandoffListener(addr net.Addr) *handoffListener {
	return &handoffListener{ch: make(chan net.Conn), done: make(chan struct{}), addr: addr}
}

func (l *handoffListener) hand(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.addr }

// closeWriteAndWait half-closes conn and waits a moment before the close
// (net/http's rstAvoidanceDelay): closing with unread request bytes sends
// a reset, which can make the client lose the answer it has not read yet.
func closeWriteAndWait(conn net.Conn) {
	for nc := conn; nc != nil; {
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
			time.Sleep(500 * time.Millisecond)
			return
		}
		u, ok := nc.(interface{ NetConn() net.Conn })
		if !ok {
			return
		}
		nc = u.NetConn()
	}
}
