package web

import (
	"bufio"

	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

var (
	errEOF           = io.EOF
	errUnexpectedEOF = io.ErrUnexpectedEOF
)

// chunkAfter is how much of a body h1writer holds before it sends the
// header with chunked encoding: an answer that ends within it goes out
// with a Content-Length in one write(2), header and all. (The handler's
// commitBuffer holds up to --response-buffer before it writes at all, so
// a longer answer arrives here in one Write and is sent as one chunk.)
const chunkAfter = 32 << 10

// chunkRoom is the room kept before a held chunk for its size line (up
// to 16 hex digits and CRLF).
const chunkRoom = 18

// h1writer is the http.ResponseWriter of the connection loop. It is
// reused by the connection's requests (reset).
type h1writer struct {
	cc          *h1conn
	header      http.Header
	status      int
	wroteHeader bool // the status is set
	committed   bool // the header is sent (chunked)
	hijacked    bool
	closeAfter  bool // the header says Connection: close
	err         error
	// buf holds the body not yet sent, from buf[chunkRoom:] (the room
	// before it takes a chunk's size line once committed).
	buf      []byte
	trailers []string // the Trailer header's names, at commit
	keys     []string // scratch: sorted header keys
	head     []byte   // scratch: the header being written
}

func (w *h1writer) reset() {
	clear(w.header)
	w.status, w.wroteHeader, w.committed, w.hijacked, w.closeAfter, w.err = 0, false, false, false, false, nil
	if cap(w.buf) > 4*chunkAfter {
		w.buf = nil
	}
	if w.buf == nil {
		w.buf = make([]byte, chunkRoom, chunkRoom+4<<10)
	}
	w.buf = w.buf[:chunkRoom]
	w.trailers = w.trailers[:0]
}

func (w *h1writer) Header() http.Header { return w.header }

func (w *h1writer) WriteHeader(code int) {
	if w.wroteHeader || w.hijacked {
		return
	}
	if code < 200 {
		return // informational answers are not sent (none is used here)
	}
	w.status, w.wroteHeader = code, true
}

func (w *h1writer) bodyAllowed() bool {
	return w.status != http.StatusNoContent && w.status != http.StatusNotModified
}

func (w *h1writer) Write(p []byte) (int, error) {
	if w.hijacked {
		return 0, http.ErrHijacked
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.bodyAllowed() {
		return 0, http.ErrBodyNotAllowed
	}
	if w.err != nil {
		return 0, w.err
	}
	if len(w.buf)-chunkRoom+len(p) <= chunkAfter {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	// Past what is held: send it (with the header, chunked, the first
	// time), then hold p or, when it is long (a buffered answer committed
	// at once), send it as a chunk of its own rather than copy it.
	var err error
	if !w.committed {
		err = w.commit()
	} else {
		err = w.sendChunk()
	}
	if err != nil {
		return 0, err
	}
	if len(p) <= chunkAfter {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	var size [chunkRoom]byte
	if err := w.send(append(strconv.AppendUint(size[:0], uint64(len(p)), 16), '\r', '\n')); err != nil {
		return 0, err
	}
	if err := w.send(p); err != nil {
		return 0, err
	}
	if err := w.send(crlf); err != nil {
		return 0, err
	}
	return len(p), nil
}

var crlf = []byte("\r\n")

// WriteString lets io.WriteString skip a copy.
func (w *h1writer) WriteString(s string) (int, error) {
	if !w.hijacked && w.wroteHeader && w.err == nil && w.bodyAllowed() && len(w.buf)-chunkRoom+len(s) <= chunkAfter {
		w.buf = append(w.buf, s...)
		return len(s), nil
	}
	return w.Write([]byte(s))
}

// Flush sends what is held (committing the header, chunked).
func (w *h1writer) Flush() { _ = w.FlushError() }

// FlushError is Flush with its error (http.ResponseController).
func (w *h1writer) FlushError() error {
	if w.hijacked {
		return http.ErrHijacked
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return w.err
	}
	if !w.committed {
		if !w.bodyAllowed() {
			return nil
		}
		return w.commit()
	}
	return w.sendChunk()
}

// SetWriteDeadline is what http.ResponseController calls (progressWriter).
func (w *h1writer) SetWriteDeadline(t time.Time) error { return w.cc.c.SetWriteDeadline(t) }

// SetReadDeadline is http.ResponseController's too.
func (w *h1writer) SetReadDeadline(t time.Time) error { return w.cc.c.SetReadDeadline(t) }

// Hijack gives the connection to the handler (abortStream resets it);
// what is held is dropped.
func (w *h1writer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.hijacked {
		return nil, nil, http.ErrHijacked
	}
	w.hijacked = true
	w.cc.stopBG()
	return w.cc.c, bufio.NewReadWriter(w.cc.br, bufio.NewWriter(w.cc.c)), nil
}

// finish ends the answer once the handler has returned: the header with a
// Content-Length and the body in one write, or the last chunks and the
// trailers in one.
func (w *h1writer) finish() {
	if w.hijacked || w.err != nil {
		return
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.committed {
		body := w.buf[chunkRoom:]
		if !w.bodyAllowed() {
			body = nil
		}
		b := w.writeHead(body, false)
		b = append(b, body...)
		w.head = b[:0]
		_ = w.send(b)
		return
	}
	start := w.frame()
	b := append(w.buf, "0\r\n"...)
	for _, k := range w.trailers {
		for _, v := range w.header[k] {
			b = appendField(b, k, v)
		}
	}
	b = append(b, "\r\n"...)
	w.buf = b[:chunkRoom]
	_ = w.send(b[start:])
}

// commit sends the header (chunked) and what is held as the first chunk,
// in one write.
func (w *h1writer) commit() error {
	w.committed = true
	for _, v := range w.header["Trailer"] {
		for _, k := range strings.Split(v, ",") {
			if k = http.CanonicalHeaderKey(strings.TrimSpace(k)); k != "" {
				w.trailers = append(w.trailers, k)
			}
		}
	}
	b := w.writeHead(w.buf[chunkRoom:], true)
	start := w.frame()
	b = append(b, w.buf[start:]...)
	w.head = b[:0]
	w.buf = w.buf[:chunkRoom]
	return w.send(b)
}

// frame makes what is held a chunk in place (its size line in the room
// before it, CRLF after) and returns where it starts; with nothing held,
// chunkRoom (nothing to send).
func (w *h1writer) frame() int {
	n := len(w.buf) - chunkRoom
	if n == 0 {
		return chunkRoom
	}
	var size [chunkRoom]byte
	line := append(strconv.AppendUint(size[:0], uint64(n), 16), '\r', '\n')
	start := chunkRoom - len(line)
	copy(w.buf[start:], line)
	w.buf = append(w.buf, '\r', '\n')
	return start
}

// sendChunk sends what is held as one chunk.
func (w *h1writer) sendChunk() error {
	if len(w.buf) == chunkRoom {
		return nil
	}
	start := w.frame()
	err := w.send(w.buf[start:])
	w.buf = w.buf[:chunkRoom]
	return err
}

// send writes b to the connection. A failure is kept (every later write
// fails with it), cancels the request's context at once (the connection
// is dead: the query stops, as net/http does on a failed write) and
// closes the connection after the handler.
func (w *h1writer) send(b []byte) error {
	if w.err != nil {
		return w.err
	}
	if _, err := w.cc.c.Write(b); err != nil {
		w.err, w.closeAfter = err, true
		w.cc.cancel()
		return err
	}
	return nil
}

// writeHead returns the status line and header of the answer (body: its
// first bytes, for a Content-Type sniff as net/http does; the whole body
// unless chunked), in w.head's storage.
func (w *h1writer) writeHead(body []byte, chunked bool) []byte {
	b := append(w.head[:0], "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(w.status), 10)
	b = append(b, ' ')
	if t := http.StatusText(w.status); t != "" {
		b = append(b, t...)
	} else {
		b = append(b, "status code "...)
		b = strconv.AppendInt(b, int64(w.status), 10)
	}
	b = append(b, "\r\n"...)
	w.keys = w.keys[:0]
	for k := range w.header {
		w.keys = append(w.keys, k)
	}
	slices.Sort(w.keys)
	for _, k := range w.keys {
		switch k {
		case "Content-Length", "Transfer-Encoding", "Connection":
			continue // the loop's own framing
		case "Trailer":
			if !chunked {
				continue
			}
		}
		if !isToken(k) || (chunked && slices.Contains(w.trailers, k)) {
			continue
		}
		for _, v := range w.header[k] {
			b = appendField(b, k, v)
		}
	}
	if _, ok := w.header["Date"]; !ok {
		b = append(b, "Date: "...)
		b = appendDate(b)
		b = append(b, "\r\n"...)
	}
	allowed := w.bodyAllowed()
	if _, ok := w.header["Content-Type"]; !ok && allowed && len(body) > 0 {
		b = appendField(b, "Content-Type", http.DetectContentType(body))
	}
	switch {
	case chunked:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	case allowed:
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	if w.closeAfter {
		b = append(b, "Connection: close\r\n"...)
	}
	return append(b, "\r\n"...)
}

// appendField appends "k: v" CRLF, with any CR or LF of v made a space
// (a value must not end the field, as in net/http).
func appendField(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ':', ' ')
	start := len(b)
	b = append(b, v...)
	for i := start; i < len(b); i++ {
		if b[i] == '\r' || b[i] == '\n' {
			b[i] = ' '
		}
	}
	return append(b, '\r', '\n')
}

// The Date header, formatted once a second.
type dateLine struct {
	sec int64
	b   []byte
}

var dateNow atomic.Pointer[dateLine]

func appendDate(b []byte) []byte {
	now := time.Now()
	d := dateNow.Load()
	if d == nil || d.sec != now.Unix() {
		d = &dateLine{sec: now.Unix(), b: now.UTC().AppendFormat(nil, http.TimeFormat)}
		dateNow.Store(d)
	}
	return append(b, d.b...)
}
