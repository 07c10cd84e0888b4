package web

import (
	"io"
	"net"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// maxEcho is the most of any request input (a header, a parameter, a
// token of the query) that an error body or a log line repeats; the rest
// is cut with "…".
const maxEcho = 256

// clip shortens s to maxEcho bytes (at a rune boundary) for echoing.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// maxMessage caps the message of an error body (and its log line): an
// error's text can quote input (a syntax error its token, a loader error
// its line).
const maxMessage = 1024

func clipMessage(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// writeProgress makes every write of the response progress-bounded: before
// a write reaches the connection its write deadline is moved to
// WriteTimeout from now, so a client that stops reading makes a write
// fail within WriteTimeout (the connection is then cut, the query's
// context cancelled and its slot freed), while a long result that keeps
// flowing is never cut. The deadline is also renewed when the handler
// returns, for the final flush.
func (s *Server) writeProgress(c *gin.Context) {
	r := requestOf(c) // the request's state starts here, with its writer
	r.arrived = time.Now()
	pw := &r.pw
	*pw = progressWriter{ResponseWriter: c.Writer, rc: *http.NewResponseController(c.Writer), timeout: s.opts.WriteTimeout}
	c.Writer = pw
	defer func() {
		// A finished answer's last bytes are not cut, and its connection
		// closes normally again.
		pw.cut = time.Time{}
		pw.renew(true)
		if r.streaming != nil && r.aborted == "" {
			setLinger(r.streaming, -1)
		}
	}()
	c.Next()
}

// progressWriter is a gin.ResponseWriter that renews the connection's
// write deadline (at most every renewEvery) before each write.
type progressWriter struct {
	gin.ResponseWriter
	rc      http.ResponseController
	timeout time.Duration
	last    time.Time
	// cut, when set, caps the write deadline: a streaming answer's
	// deadline (stream.go), so that a write blocked on a slow reader
	// fails when the query's time is up.
	cut time.Time
}

const renewEvery = 250 * time.Millisecond

func (w *progressWriter) renew(force bool) {
	now := time.Now()
	if !force && now.Sub(w.last) < renewEvery {
		return
	}
	w.last = now
	d := now.Add(w.timeout)
	if !w.cut.IsZero() && w.cut.Before(d) {
		d = w.cut
	}
	_ = w.rc.SetWriteDeadline(d) // not supported by a test recorder: no deadline
}

// cutAt caps the write deadline at t from now on.
func (w *progressWriter) cutAt(t time.Time) {
	w.cut = t
	w.renew(true)
}

func (w *progressWriter) Write(p []byte) (int, error) {
	w.renew(false)
	return w.ResponseWriter.Write(p)
}

func (w *progressWriter) WriteString(p string) (int, error) {
	w.renew(false)
	return w.ResponseWriter.WriteString(p)
}

func (w *progressWriter) WriteHeaderNow() {
	w.renew(false)
	w.ResponseWriter.WriteHeaderNow()
}

func (w *progressWriter) Flush() {
	w.renew(false)
	w.ResponseWriter.Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *progressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// LimitListener returns a listener that holds at most n connections open
// at once: past n, Accept waits until one closes (the connection waits in
// the kernel's backlog), so a flood of idle or dribbling connections
// cannot exhaust the process's file descriptors.
func LimitListener(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// NetConn returns the connection it wraps (abortStream's reset).
func (c *limitConn) NetConn() net.Conn { return c.Conn }

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// slotRef is a concurrency slot (one element of slots) shared by the
// handler and, when the backend answers after the handler gave up waiting,
// the goroutine that waits for it: the slot is given back when the last
// holder drops it.
type slotRef struct {
	mu    sync.Mutex
	refs  int
	slots chan struct{}
}

// init makes r the one holder of a slot just taken from slots.
func (r *slotRef) init(slots chan struct{}) { r.refs, r.slots = 1, slots }

func (r *slotRef) hold() {
	r.mu.Lock()
	r.refs++
	r.mu.Unlock()
}

func (r *slotRef) drop() {
	r.mu.Lock()
	r.refs--
	last := r.refs == 0
	r.mu.Unlock()
	if last {
		<-r.slots
	}
}

// limitBody bounds a request's body to MaxBodyBytes. A body whose
// Content-Length already says it is larger is refused at once (413, its
// bytes never read: the upload of a body that will be refused does not
// spend the read timeout, a core and the client's bandwidth first).
func (s *Server) limitBody(c *gin.Context) (io.ReadCloser, error) {
	if n := c.Request.ContentLength; n > s.opts.MaxBodyBytes {
		return nil, &http.MaxBytesError{Limit: s.opts.MaxBodyBytes}
	}
	return http.MaxBytesReader(c.Writer, c.Request.Body, s.opts.MaxBodyBytes), nil
}
