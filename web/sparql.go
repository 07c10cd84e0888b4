package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wukongd/wukongd/results"
)

// protocolRequest is a SPARQL Protocol request after decoding its
// transport (GET, POST form, POST direct).
type protocolRequest struct {
	query, update    string
	isUpdate         bool
	params           url.Values // every parameter (URL and form)
	defaultGraphs    []string
	namedGraphs      []string
	usingGraphs      []string
	usingNamedGraphs []string
}

// readProtocol decodes the three request forms of the SPARQL 1.1
// Protocol. allowQuery/allowUpdate say what the endpoint takes.
func (s *Server) readProtocol(c *gin.Context, allowQuery, allowUpdate bool) (*protocolRequest, error) {
	r := c.Request
	p := &protocolRequest{}
	switch r.Method {
	case http.MethodGet:
		p.params = r.URL.Query()
		if p.params.Has("update") {
			return nil, newHTTPError(http.StatusBadRequest, "bad_request", "SPARQL Update must be sent with POST")
		}
	case http.MethodPost:
		ct := r.Header.Get("Content-Type")
		mt, err := postMediaType(ct)
		if err != nil {
			return nil, err
		}
		if r.Body, err = s.limitBody(c); err != nil {
			return nil, err
		}
		switch mt {
		case "application/x-www-form-urlencoded":
			form, err := readForm(r)
			if err != nil {
				return nil, bodyError(err, "form")
			}
			p.params = form // URL and body parameters
		case "application/sparql-query", "application/sparql-update":
			p.params = r.URL.Query()
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return nil, bodyError(err, "body")
			}
			if p.params.Has("query") || p.params.Has("update") {
				return nil, newHTTPError(http.StatusBadRequest, "bad_request", "a direct POST carries the operation in the body, not in a query or update parameter")
			}
			if mt == "application/sparql-query" {
				p.params.Set("query", string(body))
			} else {
				p.params.Set("update", string(body))
			}
		default:
			return nil, newHTTPError(http.StatusUnsupportedMediaType, "unsupported_media_type", "cannot take a POST body of type "+clip(mt))
		}
	default:
		return nil, newHTTPError(http.StatusMethodNotAllowed, "method_not_allowed", clip(r.Method)+" is not allowed here")
	}
	qs, us := p.params["query"], p.params["update"]
	switch {
	case len(qs) > 1 || len(us) > 1:
		return nil, newHTTPError(http.StatusBadRequest, "bad_request", "more than one query or update parameter")
	case len(qs) == 1 && len(us) == 1:
		return nil, newHTTPError(http.StatusBadRequest, "bad_request", "a request carries a query or an update, not both")
	case len(us) == 1:
		if !allowUpdate {
			return nil, newHTTPError(http.StatusBadRequest, "bad_request", "this endpoint takes queries; send updates to /update")
		}
		p.isUpdate, p.update = true, us[0]
	case len(qs) == 1:
		if !allowQuery {
			return nil, newHTTPError(http.StatusBadRequest, "bad_request", "this endpoint takes updates; send queries to /sparql")
		}
		p.query = qs[0]
	default:
		return nil, newHTTPError(http.StatusBadRequest, "bad_request", "missing the query parameter (or update, for SPARQL Update)")
	}
	if strings.TrimSpace(p.query+p.update) == "" {
		return nil, newHTTPError(http.StatusBadRequest, "bad_request", "the query is empty")
	}
	p.defaultGraphs = p.params["default-graph-uri"]
	p.namedGraphs = p.params["named-graph-uri"]
	p.usingGraphs = p.params["using-graph-uri"]
	p.usingNamedGraphs = p.params["using-named-graph-uri"]
	return p, nil
}

// postMediaType returns the media type of a POST's Content-Type. The
// Protocol's bodies are UTF-8 (§2.1.2, §2.2.2): another declared charset
// is refused rather than misread. The three types without parameters, as
// clients send them, are taken as they are (mime.ParseMediaType
// allocates a map for every request).
func postMediaType(ct string) (string, error) {
	switch ct {
	case "application/x-www-form-urlencoded", "application/sparql-query", "application/sparql-update":
		return ct, nil
	}
	mt, mtParams, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil {
		return "", newHTTPError(http.StatusUnsupportedMediaType, "unsupported_media_type",
			"POST needs Content-Type application/x-www-form-urlencoded, application/sparql-query or application/sparql-update")
	}
	if cs, ok := mtParams["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "us-ascii") {
		return "", newHTTPError(http.StatusUnsupportedMediaType, "unsupported_media_type",
			"the body must be UTF-8, not "+clip(cs))
	}
	return mt, nil
}

// bodyError passes a body over MaxBodyBytes through as it is (413) and
// makes any other error reading the request's what a bad request.
func bodyError(err error, what string) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || errors.Is(err, os.ErrDeadlineExceeded) {
		return err // 413; 408 (the read timeout)
	}
	return fmt.Errorf("%w: cannot read the %s: %v", ErrBadRequest, what, err)
}

func (s *Server) handleSPARQL(c *gin.Context) {
	defer trace.StartRegion(c.Request.Context(), "sparql").End()
	// A browser opened the endpoint: show the console. (The Accept test
	// first: it spares every GET query a parse of its URL.)
	if c.Request.Method == http.MethodGet && strings.Contains(c.GetHeader("Accept"), "text/html") &&
		!c.Request.URL.Query().Has("query") && !c.Request.URL.Query().Has("update") {
		c.Redirect(http.StatusSeeOther, "/")
		return
	}
	p, err := s.readProtocol(c, true, true)
	if err != nil {
		writeError(c, err)
		return
	}
	if p.isUpdate {
		s.runUpdate(c, p)
		return
	}
	s.runQuery(c, p)
}

func (s *Server) handleUpdate(c *gin.Context) {
	p, err := s.readProtocol(c, false, true)
	if err != nil {
		writeError(c, err)
		return
	}
	s.runUpdate(c, p)
}

// timeoutOf reads the timeout parameter (seconds, fractions allowed).
func (s *Server) timeoutOf(params url.Values) (time.Duration, error) {
	v := params.Get("timeout")
	if v == "" {
		return s.opts.DefaultTimeout, nil
	}
	sec, err := strconv.ParseFloat(v, 64)
	if err != nil || sec <= 0 || sec != sec {
		return 0, newHTTPError(http.StatusBadRequest, "bad_request", "timeout must be a positive number of seconds, not "+strconv.Quote(clip(v)))
	}
	d := time.Duration(sec * float64(time.Second))
	if sec > s.opts.MaxTimeout.Seconds() {
		d = s.opts.MaxTimeout
	}
	return d, nil
}

func explainOf(params url.Values) (ExplainMode, error) {
	switch v := strings.ToLower(params.Get("explain")); v {
	case "", "false", "0", "no":
		return ExplainNone, nil
	case "true", "1", "yes", "plan":
		return ExplainPlan, nil
	case "analyze", "analyse":
		return ExplainAnalyze, nil
	default:
		return 0, newHTTPError(http.StatusBadRequest, "bad_request", "explain must be true or analyze, not "+strconv.Quote(clip(v)))
	}
}

// inferOf reads the infer parameter (the name RDF4J and GraphDB use):
// true (or absent) includes inferred triples, false asks for the explicit
// triples only.
func inferOf(params url.Values) (bool, error) {
	switch v := strings.ToLower(params.Get("infer")); v {
	case "", "true", "1", "yes":
		return true, nil
	case "false", "0", "no":
		return false, nil
	default:
		return false, newHTTPError(http.StatusBadRequest, "bad_request", "infer must be true or false, not "+strconv.Quote(v))
	}
}

// modeOf reads the mode parameter: auto (or absent), in-place or
// fork-join.
func modeOf(params url.Values) (ExecMode, error) {
	switch v := strings.ToLower(params.Get("mode")); v {
	case "", "auto":
		return ModeAuto, nil
	case "in-place", "inplace":
		return ModeInPlace, nil
	case "fork-join", "forkjoin":
		return ModeForkJoin, nil
	default:
		return "", newHTTPError(http.StatusBadRequest, "bad_request", "mode must be auto, in-place or fork-join, not "+strconv.Quote(clip(v)))
	}
}

// acceptOf returns the Accept header, overridden by a format= or output=
// parameter when that names a format we have.
func acceptOf(c *gin.Context, params url.Values, offers ...[]results.Format) string {
	for _, name := range []string{"format", "output"} {
		v := params.Get(name)
		if v == "" {
			continue
		}
		for _, o := range offers {
			if f := results.ParseFormat(v, o); f != results.FormatNone {
				return f.MediaType()
			}
		}
	}
	return c.GetHeader("Accept")
}

// queryCtx is the context of a query, update or Graph Store operation:
// the request's context with the timeout, cancellable by /api/cancel
// under the request's id (byUser then tells contextError why it stopped).
// It lives in the request's state: one timer context per request, no
// other allocation.
type queryCtx struct {
	context.Context
	cancel context.CancelFunc
	byUser atomic.Bool
	s      *Server
	key    runKey
}

// cancelByUser stops the query for /api/cancel.
func (q *queryCtx) cancelByUser() {
	q.byUser.Store(true)
	q.cancel()
}

// finish unregisters the query and releases its context.
func (q *queryCtx) finish() {
	q.s.unregister(q.key)
	q.cancel()
}

// deadlineContext derives the query context: cancelled by the client
// going away, by /api/cancel or by the timeout, counted from the
// request's arrival (its headers read): the time the body took to arrive
// and be parsed, and a wait for a slot, are part of it — before, an 8 MB
// INSERT DATA got its 504 1.0–1.8 s past its deadline by the client's
// clock while the server's clock, started after the body, said ≤ 0.6 s.
// It fails when the request's id is in use by another of the client's.
// The caller calls finish when the operation is over.
func (s *Server) deadlineContext(c *gin.Context, timeout time.Duration) (*queryCtx, error) {
	r := requestOf(c)
	q := &r.qctx
	base := r.arrived
	if base.IsZero() {
		base = time.Now() // a handler called on its own
	}
	r.deadline, r.hasDead = base.Add(timeout), true
	q.Context, q.cancel = context.WithDeadline(c.Request.Context(), r.deadline)
	q.s, q.key = s, runKey{client: clientOf(c.Request), id: r.id}
	if err := s.register(q.key, q); err != nil {
		q.cancel()
		return nil, err
	}
	return q, nil
}

// contextError turns a context error into what the client should see.
func contextError(ctx context.Context, err error) error {
	if q, ok := ctx.(*queryCtx); ok && q.byUser.Load() && errors.Is(err, context.Canceled) {
		return newHTTPError(statusClientClosed, "cancelled", "the query was cancelled by request")
	}
	return err
}

// outcomeOf classifies an error for the metrics.
func outcomeOf(err error) string {
	switch {
	case err == nil:
		return outcomeOK
	case errors.Is(err, context.DeadlineExceeded):
		return outcomeTimeout
	case errors.Is(err, context.Canceled):
		return outcomeCancelled
	}
	var he *httpError
	if errors.As(err, &he) && he.status == statusClientClosed {
		return outcomeCancelled
	}
	return outcomeError
}

// gracePeriod is how long the web layer waits, after a query's context is
// done, for the backend to return before it answers on its own.
const gracePeriod = 200 * time.Millisecond

// callQuery runs Backend.Query, but answers by the deadline even if the
// backend does not: a late Result is closed when it arrives. The query's
// slot (release) stays taken until the backend has returned: when
// callQuery answers first, the late return releases it, so the
// concurrency cap bounds the work running, not only the requests
// answering. A query the backend takes inline (InlineQuerier) runs on the
// caller's goroutine, under the same slot and ctx; a result it returns
// after ctx ended is closed, as a late one from a worker is.
func (s *Server) callQuery(ctx context.Context, req *QueryRequest, slot *slotRef) (*Result, error) {
	if s.inline != nil {
		if res, ok, err := s.inline.QueryInline(ctx, req); ok {
			if err == nil && ctx.Err() != nil {
				closeResult(res)
				return nil, ctx.Err()
			}
			return res, err
		}
	}
	type outcome struct {
		res *Result
		err error
	}
	ch := make(chan outcome, 1)
	s.workers.run(func() {
		res, err := s.backend.Query(ctx, req)
		ch <- outcome{res, err}
	})
	select {
	case o := <-ch:
		return o.res, o.err
	case <-ctx.Done():
	}
	t := time.NewTimer(gracePeriod)
	defer t.Stop()
	select {
	case o := <-ch:
		if o.err == nil {
			closeResult(o.res)
			return nil, ctx.Err()
		}
		return nil, o.err
	case <-t.C:
		s.metrics.stopping.Inc()
		slot.hold()
		go func() {
			o := <-ch
			closeResult(o.res)
			slot.drop()
			s.metrics.stopping.Dec()
		}()
		return nil, ctx.Err()
	}
}

func closeResult(r *Result) {
	if r == nil {
		return
	}
	if r.Rows != nil {
		_ = r.Rows.Close()
	}
	if r.Triples != nil {
		_ = r.Triples.Close()
	}
}

func (s *Server) runQuery(c *gin.Context, p *protocolRequest) {
	defer trace.StartRegion(c.Request.Context(), "query").End()
	start := time.Now()
	form := Form(0)
	var err error
	defer func() {
		if err != nil || c.Writer.Status() < 400 {
			s.metrics.observeQuery(form, outcomeOf(err), time.Since(start).Seconds())
		}
	}()
	fail := func(e error) {
		err = e
		writeError(c, e)
	}
	explain, e := explainOf(p.params)
	if e != nil {
		fail(e)
		return
	}
	timeout, e := s.timeoutOf(p.params)
	if e != nil {
		fail(e)
		return
	}
	mode, e := modeOf(p.params)
	if e != nil {
		fail(e)
		return
	}
	infer, e := inferOf(p.params)
	if e != nil {
		fail(e)
		return
	}
	for _, ref := range remoteRefs(p.query, "SERVICE") {
		if !allowed(ref, s.opts.AllowedServices) {
			fail(fmt.Errorf("%w: SERVICE %s is not allowed on this server (see --allow-service)", ErrForbidden, clip(ref)))
			return
		}
	}
	accept := acceptOf(c, p.params, results.SolutionFormats, results.GraphFormats)
	if explain == ExplainNone && results.Negotiate(accept, results.SolutionFormats) == results.FormatNone &&
		results.Negotiate(accept, results.GraphFormats) == results.FormatNone {
		fail(notAcceptable(accept, "query results"))
		return
	}
	if e := s.takeSlot(s.slots, "queries"); e != nil {
		fail(e)
		return
	}
	// The slot is released when the handler is done with the result and
	// the backend has returned (callQuery holds it past the answer when
	// the backend is late).
	rs := requestOf(c)
	slot := &rs.slot
	slot.init(s.slots)
	defer slot.drop()
	ctx, e := s.deadlineContext(c, timeout)
	if e != nil {
		fail(e)
		return
	}
	defer ctx.finish()

	req := &QueryRequest{
		ID:              queryIDOf(c),
		Query:           p.query,
		Base:            endpointBase(c.Request),
		DefaultGraphs:   p.defaultGraphs,
		NamedGraphs:     p.namedGraphs,
		Explain:         explain,
		Mode:            mode,
		ExplicitOnly:    !infer,
		AllowedServices: s.opts.AllowedServices,
	}
	if s.opts.MaxRows > 0 {
		req.MaxRows = s.opts.MaxRows
	}
	res, e := s.callQuery(ctx, req, slot)
	if e != nil {
		fail(contextError(ctx, e))
		return
	}
	defer closeResult(res)
	form = res.Form
	rs.form, rs.hasForm = form, true

	if explain != ExplainNone {
		if res.Plan == nil {
			fail(fmt.Errorf("BUG: backend returned no plan for an explain request"))
			return
		}
		c.Writer.Header()["Cache-Control"] = noStore
		c.JSON(http.StatusOK, gin.H{"queryId": req.ID, "plan": res.Plan})
		return
	}

	var n int64
	n, err = s.writeResult(ctx, c, res, accept)
	setRows(c, n)
	s.metrics.rows.Add(float64(n))
	if err != nil {
		err = contextError(ctx, err)
		if !c.Writer.Written() {
			writeError(c, err)
			return
		}
		s.abortStream(c, err)
	}
}

func notAcceptable(accept, what string) error {
	return newHTTPError(http.StatusNotAcceptable, "not_acceptable",
		fmt.Sprintf("no format of %s matches Accept: %s (offered: JSON, XML, CSV, TSV results; Turtle, N-Triples, JSON-LD, RDF/XML graphs)", what, clip(accept)))
}

// commitBuffer holds the first bytes of a response (up to limit,
// Options.ResponseBuffer) so that an error in them still gets a proper
// status; past limit it commits the 200 and streams (stream.go). The
// buffer's capacity is charged to mem, the query's budget, as it grows.
// A row cap hit after the commit is reported as a trailer.
type commitBuffer struct {
	w           gin.ResponseWriter
	contentType results.Format
	buf         []byte
	pooled      *[]byte // where buf came from (commitBufs)
	limit       int
	committed   bool
	mem         Memory // nil: not charged
	charged     int64
	// Once the answer streams, pw's write deadline is capped at deadline
	// (when set) and the connection set to reset on close until the
	// handler ends normally (req.streaming).
	pw       *progressWriter
	deadline time.Time
	req      *request
	conn     net.Conn
}

// newCommitBuffer returns the response buffer of c's answer in format f,
// charged to mem (nil: not charged).
func (s *Server) newCommitBuffer(c *gin.Context, f results.Format, mem Memory) *commitBuffer {
	b := &commitBuffer{w: c.Writer, limit: s.opts.ResponseBuffer, contentType: f, mem: mem, conn: connOf(c.Request)}
	if v, ok := c.Get(ctxRequest); ok {
		r := v.(*request)
		b.req = r
		if pw, ok := c.Writer.(*progressWriter); ok && pw == &r.pw {
			b.pw = pw
		}
		if r.hasDead {
			b.deadline = r.deadline
		}
	}
	return b
}

// memoryOf returns the memory account a result's iterator offers (nil
// if none).
func memoryOf(it any) Memory {
	m, _ := it.(Memory)
	return m
}

// Header values shared by every response that sets them (net/http only
// reads a header's values: one slice each instead of one per response).
var (
	noStore     = []string{"no-store"}
	varyAccept  = []string{"Accept"}
	contentType = func() map[results.Format][]string {
		m := map[results.Format][]string{}
		for _, fs := range [][]results.Format{results.SolutionFormats, results.BooleanFormats, results.GraphFormats} {
			for _, f := range fs {
				m[f] = []string{f.ContentType()}
			}
		}
		return m
	}()
)

// commitBufs holds the small buffers of commitBuffers (up to
// pooledBuffer): a light query's response would otherwise allocate one
// (about 1.5 KB) each.
var commitBufs = sync.Pool{New: func() any { return new([]byte) }}

func (b *commitBuffer) Write(p []byte) (int, error) {
	if b.committed {
		return b.w.Write(p)
	}
	if need := len(b.buf) + len(p); need <= b.limit {
		if b.buf == nil {
			b.pooled = commitBufs.Get().(*[]byte)
			b.buf = (*b.pooled)[:0]
			if err := b.charge(cap(b.buf)); err != nil {
				return 0, err
			}
		}
		if need > cap(b.buf) {
			n := min(max(2*cap(b.buf), need, 1024), b.limit)
			if err := b.charge(n); err != nil {
				return 0, err
			}
			nb := make([]byte, len(b.buf), n)
			copy(nb, b.buf)
			// The grown buffer goes back to the pool in place of the
			// small one (putBack): the next answer starts at this size
			// instead of growing (copying) from an empty one again.
			b.buf = nb
		}
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	// The answer outgrew the buffer: it streams, and can no longer be
	// replaced by an error status.
	b.w.Header().Set("Trailer", truncatedHeader)
	if b.pw != nil && !b.deadline.IsZero() {
		b.pw.cutAt(b.deadline)
	}
	if b.conn != nil && b.req != nil {
		// Any close before the answer ends is a reset (stream.go),
		// including net/http's own close after a failed write.
		setLinger(b.conn, 0)
		b.req.streaming = b.conn
	}
	if err := b.commit(); err != nil {
		return 0, err
	}
	return b.w.Write(p)
}

// charge sets the buffer's charge to n bytes.
func (b *commitBuffer) charge(n int) error {
	if b.mem == nil || int64(n) == b.charged {
		return nil
	}
	if err := b.mem.Grow(int64(n) - b.charged); err != nil {
		return err
	}
	b.charged = int64(n)
	return nil
}

// putBack returns a pooled buffer to the pool (a small one: a buffer grown
// past pooledBuffer is left to the collector).
func (b *commitBuffer) putBack() {
	if b.pooled != nil && cap(b.buf) <= pooledBuffer {
		*b.pooled = b.buf[:0]
		commitBufs.Put(b.pooled)
	}
	b.pooled = nil
}

// free gives back the buffer and its charge; the buffer is not used after.
func (b *commitBuffer) free() {
	b.putBack()
	b.buf = nil
	_ = b.charge(0)
}

func (b *commitBuffer) commit() error {
	h := b.w.Header()
	if ct, ok := contentType[b.contentType]; ok {
		h["Content-Type"] = ct
	} else {
		h.Set("Content-Type", b.contentType.ContentType())
	}
	h["Cache-Control"] = noStore
	h["Vary"] = varyAccept
	b.w.WriteHeader(http.StatusOK)
	b.committed = true
	_, err := b.w.Write(b.buf)
	b.free()
	return err
}

// truncatedHeader is set to "true" when the row cap cut the result.
const truncatedHeader = "Wukong-Truncated"

// writeResult negotiates the format for the result's form and streams it.
func (s *Server) writeResult(ctx context.Context, c *gin.Context, res *Result, accept string) (int64, error) {
	var offers []results.Format
	switch res.Form {
	case FormSelect:
		offers = results.SolutionFormats
	case FormAsk:
		offers = results.BooleanFormats
	case FormConstruct, FormDescribe:
		offers = results.GraphFormats
	default:
		return 0, fmt.Errorf("BUG: backend returned a result of unknown form %d", res.Form)
	}
	f := results.Negotiate(accept, offers)
	if f == results.FormatNone {
		return 0, notAcceptable(accept, res.Form.String()+" results")
	}
	var mem Memory
	switch res.Form {
	case FormSelect:
		mem = memoryOf(res.Rows)
	case FormConstruct, FormDescribe:
		mem = memoryOf(res.Triples)
	}
	out := s.newCommitBuffer(c, f, mem)
	defer out.free()
	var n int64
	var truncated bool
	var err error
	switch res.Form {
	case FormAsk:
		err = results.WriteBoolean(f, out, res.Boolean)
	case FormSelect:
		if res.Rows == nil {
			return 0, errors.New("BUG: SELECT result without rows")
		}
		n, truncated, err = s.streamRows(ctx, out, f, res)
	default:
		if res.Triples == nil {
			return 0, errors.New("BUG: graph result without triples")
		}
		n, truncated, err = s.streamTriples(ctx, out, f, res.Triples)
	}
	if err != nil {
		return n, err
	}
	if truncated {
		c.Writer.Header().Set(truncatedHeader, "true")
		s.log.Warn().Str("queryId", queryIDOf(c)).Int("maxRows", s.opts.MaxRows).Msg("result cut at the row cap")
	}
	if !out.committed {
		return n, out.commit()
	}
	return n, nil
}

func (s *Server) prefixes() map[string]string {
	if p, ok := s.backend.(Prefixer); ok {
		return p.Prefixes()
	}
	return nil
}

func (s *Server) streamRows(ctx context.Context, out io.Writer, f results.Format, res *Result) (n int64, truncated bool, err error) {
	sw, err := results.NewSolutionWriter(f, out)
	if err != nil {
		return 0, false, err
	}
	if err := sw.WriteHead(res.Vars); err != nil {
		return 0, false, err
	}
	it := res.Rows
	if n, truncated, err = s.streamItems(ctx, it.Next, it.Err, func() error { return sw.WriteRow(it.Row()) }); err != nil {
		return n, false, err
	}
	return n, truncated, sw.Close()
}

func (s *Server) streamTriples(ctx context.Context, out io.Writer, f results.Format, it TripleIterator) (n int64, truncated bool, err error) {
	gw, err := results.NewGraphWriter(f, out, results.GraphOptions{Prefixes: s.prefixes()})
	if err != nil {
		return 0, false, err
	}
	if n, truncated, err = s.streamItems(ctx, it.Next, it.Err, func() error { return gw.WriteTriple(it.Triple()) }); err != nil {
		return n, false, err
	}
	return n, truncated, gw.Close()
}

// streamItems calls write for each item of an iterator (next, itErr) until
// it ends or MaxRows items are written (truncated); ctx is checked every
// 256 items and at the end. The caller closes its writer when err is nil.
func (s *Server) streamItems(ctx context.Context, next func() bool, itErr func() error, write func() error) (n int64, truncated bool, err error) {
	for next() {
		if s.opts.MaxRows > 0 && n >= int64(s.opts.MaxRows) {
			truncated = true
			break
		}
		if err := write(); err != nil {
			return n, false, err
		}
		n++
		if n&255 == 0 && ctx.Err() != nil {
			return n, false, ctx.Err()
		}
	}
	if err := itErr(); err != nil {
		return n, false, err
	}
	if err := ctx.Err(); err != nil {
		return n, false, err
	}
	return n, truncated, nil
}

func (s *Server) runUpdate(c *gin.Context, p *protocolRequest) {
	defer trace.StartRegion(c.Request.Context(), "update").End()
	if err := s.authorizeWrite(c); err != nil {
		writeError(c, err)
		return
	}
	for _, ref := range scanRefs(p.update, "LOAD", true) {
		if !allowed(ref, s.opts.AllowedLoads) {
			writeError(c, fmt.Errorf("%w: LOAD <%s> is not allowed on this server (see --allow-load)", ErrForbidden, clip(ref)))
			return
		}
	}
	timeout, err := s.timeoutOf(p.params)
	if err != nil {
		writeError(c, err)
		return
	}
	release, err := s.acquireUpdate()
	if err != nil {
		writeError(c, err)
		return
	}
	defer release()
	ctx, err := s.deadlineContext(c, timeout)
	if err != nil {
		writeError(c, err)
		return
	}
	defer ctx.finish()
	err = s.backend.Update(ctx, &UpdateRequest{
		ID:               queryIDOf(c),
		Update:           p.update,
		Base:             endpointBase(c.Request),
		UsingGraphs:      p.usingGraphs,
		UsingNamedGraphs: p.usingNamedGraphs,
		AllowedLoads:     s.opts.AllowedLoads,
	})
	if err != nil {
		writeError(c, contextError(ctx, err))
		return
	}
	c.Status(http.StatusNoContent)
}

// endpointBase is the service-defined base IRI of a request (SPARQL 1.1
// Protocol: it "MAY be the service endpoint"): the endpoint's URL as the
// client addressed it, without the query string.
func endpointBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if r.Host == "" {
		return ""
	}
	return scheme + "://" + r.Host + r.URL.EscapedPath()
}
