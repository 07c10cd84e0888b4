package web

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// How an answer reaches the client (docs/DESIGN.md §12, "Streaming and
// its cut"):
//
//   - Its first Options.ResponseBuffer bytes (--response-buffer, default
//     4 MiB) are held back (commitBuffer), charged to the query's memory
//     budget as the buffer grows. An answer that ends within them is sent
//     whole with its 200; an error, the deadline, a budget or a cancel
//     before then gets its own status and body (504, 507, 503, 499 …).
//     So an answer that fits the buffer is never a 200 followed by a cut.
//   - An answer that outgrows the buffer commits its 200 and streams. If
//     it must then stop (the deadline, a budget, a cancel, a failed
//     write), abortStream ends the response so that no HTTP client can
//     take it for a complete answer: the connection is reset (TCP RST)
//     without the chunked encoding's last chunk, the event is logged and
//     counted in wukongd_responses_aborted_total by reason.
//   - The deadline is the query's timeout for the whole response,
//     writing included: once a response streams, the connection's write
//     deadline is capped at the query's deadline, so even a write blocked
//     on a slow reader fails then. The second of grace is not
//     given to writing: it is the bound on how late a stop may land (the
//     noticing, the reset), and spending it on writing would leave none.
//     An answer complete in the buffer is sent even if its client reads
//     it slowly (the write progress timeout bounds that).

// Memory is a query's memory account as the web layer uses it for its own
// buffers. A result's RowIterator or TripleIterator may implement it; the
// response buffer is then charged to the query's budget.
type Memory interface {
	// Grow charges n more bytes (n < 0 gives back). It fails, charging
	// nothing, when the query's or the server's budget would be passed:
	// the error wraps ErrQueryMemory or ErrServerMemory.
	Grow(n int64) error
}

// DefaultResponseBuffer is Options.ResponseBuffer's default.
const DefaultResponseBuffer = 4 << 20

// minResponseBuffer is the smallest response buffer: a light answer
// always fits.
const minResponseBuffer = 4 << 10

// pooledBuffer is the largest buffer kept in commitBufs for the next
// response: most answers are small, and a pooled 4 MiB buffer per idle
// goroutine would be memory held for nothing.
const pooledBuffer = 64 << 10

// Reasons of an aborted response (wukongd_responses_aborted_total).
const (
	abortTimeout   = "timeout"
	abortMemory    = "memory"
	abortCancelled = "cancelled"
	abortClient    = "client" // a write to the client failed (gone, stalled)
	abortError     = "error"
)

// abortReason classifies the error that stopped a streaming response.
func abortReason(err error) string {
	var he *httpError
	var ne net.Error
	switch {
	case errors.Is(err, ErrQueryMemory), errors.Is(err, ErrServerMemory), errors.Is(err, ErrValueTooLarge):
		return abortMemory
	case errors.Is(err, context.DeadlineExceeded):
		return abortTimeout
	case errors.As(err, &he) && he.status == statusClientClosed:
		return abortCancelled
	case errors.Is(err, context.Canceled):
		return abortClient // the client went away
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, net.ErrClosed):
		return abortClient
	}
	return abortError
}

// abortStream ends a response whose 200 has gone out but whose answer
// cannot be finished (err). It logs and counts the abort, then resets the
// connection: hijacked, its linger set to 0 (close sends RST, dropping
// what is still unsent) and closed, so that the client reads an error
// (ECONNRESET, or an unexpected EOF: the chunked body has no last chunk)
// and never a clean end of a short body — even an HTTP/1.0 client, whose
// body would end at the connection's close. Where the connection cannot
// be hijacked (HTTP/2, a test recorder) it panics with
// http.ErrAbortHandler, which net/http turns into a stream reset or a
// dropped connection.
func (s *Server) abortStream(c *gin.Context, err error) {
	r := requestOf(c)
	reason := abortReason(err)
	if reason == abortTimeout || (r.hasDead && time.Now().After(r.deadline) && reason == abortClient) {
		reason = abortTimeout // a write cut by the capped write deadline
	}
	r.aborted = reason
	s.metrics.aborted.WithLabelValues(reason).Inc()
	_ = c.Error(err)
	ev := s.log.Warn().Str("queryId", r.id).Str("reason", reason).Int("bytes", c.Writer.Size()).Err(err)
	if r.hasDead {
		ev = ev.Dur("pastDeadline", time.Since(r.deadline))
	}
	ev.Msg("response aborted after its 200: the answer outgrew the response buffer and could not be finished")
	// net/http's own writer: gin refuses to hijack once a body is written.
	var w http.ResponseWriter = c.Writer
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	conn, _, herr := http.NewResponseController(w).Hijack()
	if herr != nil {
		panic(http.ErrAbortHandler)
	}
	resetConn(conn)
	c.Abort()
}

// resetConn closes conn with a TCP reset where it can (SO_LINGER 0).
func resetConn(conn net.Conn) {
	setLinger(conn, 0)
	_ = conn.Close()
}

// setLinger sets SO_LINGER on the TCP connection under conn (0: close
// resets; -1: the default, close sends what is left and a FIN).
func setLinger(conn net.Conn, sec int) {
	for nc := conn; nc != nil; {
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetLinger(sec)
			return
		}
		u, ok := nc.(interface{ NetConn() net.Conn })
		if !ok {
			return
		}
		nc = u.NetConn()
	}
}

// connKey is the request context's key of its connection (ConnContext).
type connKey struct{}

// ConnContext is the http.Server.ConnContext to serve a Server with: it
// gives each request its connection, which a streaming answer sets to
// reset on close (SO_LINGER 0) until it ends normally. Without it a
// streaming answer whose write fails (its deadline passed while the
// client read slowly) is closed by net/http with a FIN, which an HTTP/1.0
// client, whose body ends at the close, cannot tell from the end of the
// answer; aborts that do not come from a failed write still reset.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// connOf returns the connection of r (nil without ConnContext).
func connOf(r *http.Request) net.Conn {
	c, _ := r.Context().Value(connKey{}).(net.Conn)
	return c
}
