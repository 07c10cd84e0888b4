package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Options configure a Server. Zero values get the defaults noted.
type Options struct {
	// Backend answers queries; required.
	Backend Backend
	// Logger receives one line per request (zerolog); the zero Logger
	// discards.
	Logger zerolog.Logger
	// DefaultTimeout applies when a request has no timeout parameter
	// (default 30s); MaxTimeout caps the parameter (default 5m).
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	// MaxRows caps the rows (or triples) of one result; the rest is cut
	// off and the response says so in the Wukong-Truncated header or
	// trailer (default 1,000,000; negative: no cap).
	MaxRows int
	// MaxBodyBytes caps request bodies (default 64 MiB); more is 413.
	MaxBodyBytes int64
	// MaxConcurrent caps the queries and Graph Store reads running at once
	// (default 4×GOMAXPROCS); past it, 429 with Retry-After. A query holds
	// its slot until the backend has returned (its work has stopped), not
	// only until the response is sent.
	MaxConcurrent int
	// MaxConcurrentUpdates caps the updates and Graph Store writes admitted
	// at once, running or waiting for the write lock (default 16); past
	// it, 429. Updates never take query slots, so queued writers cannot
	// starve readers.
	MaxConcurrentUpdates int
	// ResponseBuffer is how many bytes of an answer are held before its
	// 200 is committed (default DefaultResponseBuffer, 4 MiB; at least 4
	// KiB), charged to the query's memory budget: an answer that fits is
	// sent whole or replaced by an error status; one that outgrows it
	// streams, and a stream that must stop is reset (stream.go).
	ResponseBuffer int
	// WriteTimeout is the progress timeout of responses: a write to the
	// client that makes no progress for this long (a client that stopped
	// reading) cuts the connection, which stops the query and frees its
	// slot (default 30s).
	WriteTimeout time.Duration
	// UpdateToken enables SPARQL Update and Graph Store writes; they then
	// need "Authorization: Bearer <UpdateToken>". Empty: writes are off.
	UpdateToken string
	// CORSOrigins are the origins allowed to call the API from a browser
	// ("*": any). Empty: no CORS headers.
	CORSOrigins []string
	// AllowedServices are the SERVICE endpoints queries may call and
	// AllowedLoads the IRIs LOAD may fetch ("*": any). Empty: refused.
	AllowedServices []string
	AllowedLoads    []string
	// Examples are the queries the console offers (GET /api/examples).
	Examples []Example
	// Registry receives the metrics; nil: a new registry with the Go and
	// process collectors. /metrics serves it.
	Registry *prometheus.Registry
}

// Example is a named example query for the console.
type Example struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Query       string `json:"query"`
}

// Server is the HTTP service. It is an http.Handler.
type Server struct {
	opts    Options
	backend Backend
	log     zerolog.Logger
	engine  *gin.Engine
	metrics *metrics
	slots   chan struct{}
	updates chan struct{}
	workers *workerPool
	inline  InlineQuerier // the backend, when it runs some queries inline

	mu      sync.Mutex
	running map[runKey]*queryCtx
}

// runKey names a running request for /api/cancel: its id, scoped to the
// client (the remote host) that sent it.
type runKey struct{ client, id string }

// New returns a Server for opts.
func New(opts Options) (*Server, error) {
	if opts.Backend == nil {
		return nil, errors.New("web: Options.Backend is required")
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = 30 * time.Second
	}
	if opts.MaxTimeout <= 0 {
		opts.MaxTimeout = 5 * time.Minute
	}
	if opts.DefaultTimeout > opts.MaxTimeout {
		opts.DefaultTimeout = opts.MaxTimeout
	}
	if opts.MaxRows == 0 {
		opts.MaxRows = 1_000_000
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 64 << 20
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 4 * runtime.GOMAXPROCS(0)
	}
	if opts.MaxConcurrentUpdates <= 0 {
		opts.MaxConcurrentUpdates = 16
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 30 * time.Second
	}
	if opts.ResponseBuffer <= 0 {
		opts.ResponseBuffer = DefaultResponseBuffer
	}
	opts.ResponseBuffer = max(opts.ResponseBuffer, minResponseBuffer)
	reg := opts.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	}
	s := &Server{
		opts:    opts,
		backend: opts.Backend,
		log:     opts.Logger,
		slots:   make(chan struct{}, opts.MaxConcurrent),
		updates: make(chan struct{}, opts.MaxConcurrentUpdates),
		workers: newWorkerPool(10 * time.Second),
		running: map[runKey]*queryCtx{},
	}
	s.inline, _ = opts.Backend.(InlineQuerier)
	m, err := newMetrics(reg, opts.Backend, s)
	if err != nil {
		return nil, err
	}
	s.metrics = m
	s.engine = s.routes(reg)
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

// ActiveQueries returns the number of queries running now.
func (s *Server) ActiveQueries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.running)
}

func init() { gin.SetMode(gin.ReleaseMode) }

func (s *Server) routes(reg *prometheus.Registry) *gin.Engine {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.Use(s.writeProgress, s.recoverPanics, s.assignQueryID, s.logRequests, s.cors)

	for _, p := range []string{"/sparql", "/query"} {
		r.GET(p, s.handleSPARQL)
		r.POST(p, s.handleSPARQL)
		r.OPTIONS(p, s.handleOptions("GET, POST, OPTIONS"))
	}
	r.POST("/update", s.handleUpdate)
	r.OPTIONS("/update", s.handleOptions("POST, OPTIONS"))
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPost, http.MethodDelete} {
		r.Handle(m, "/store", s.handleStore)
		r.Handle(m, "/store/*graph", s.handleStore) // direct graph identification
	}
	r.OPTIONS("/store", s.handleOptions("GET, HEAD, PUT, POST, DELETE, OPTIONS"))
	r.OPTIONS("/store/*graph", s.handleOptions("GET, HEAD, PUT, POST, DELETE, OPTIONS"))

	r.GET("/api/examples", s.handleExamples)
	r.POST("/api/cancel", s.handleCancel)
	r.OPTIONS("/api/cancel", s.handleOptions("POST, OPTIONS"))
	r.POST("/admin/compact", s.handleCompact)
	r.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok\n") })
	r.GET("/readyz", s.handleReady)
	r.GET("/metrics", gin.WrapH(s.metrics.handler(reg)))
	s.consoleRoutes(r)
	s.consoleAPIRoutes(r)

	r.NoRoute(func(c *gin.Context) {
		writeError(c, newHTTPError(http.StatusNotFound, "not_found", "no such endpoint: "+clip(c.Request.URL.Path)))
	})
	r.NoMethod(func(c *gin.Context) {
		writeError(c, newHTTPError(http.StatusMethodNotAllowed, "method_not_allowed", clip(c.Request.Method)+" is not allowed on "+clip(c.Request.URL.Path)))
	})
	return r
}

// ctxRequest is the gin key of a request's *request.
const ctxRequest = "wukongd.request"

// request is the web layer's state of one HTTP request, allocated once by
// the first middleware (writeProgress) and reached through the gin
// context: the response writer, the id, what the request log reports, and
// the query's context and slot, so that a light query does not pay an
// allocation for each of them (BenchmarkServerPath in service/).
type request struct {
	pw progressWriter
	id string
	// For the request log: the form and rows of a query's result, and the
	// time its (or an update's) deadline passes.
	form                      Form
	rows                      int64
	deadline                  time.Time
	hasForm, hasRows, hasDead bool
	// arrived is when the request's headers had been read (writeProgress):
	// a query's, update's or Graph Store operation's timeout counts from
	// it, so the time its body takes to arrive is part of it.
	arrived time.Time
	// aborted is the reason a response was reset after its 200
	// (abortStream), "" if it was not.
	aborted string
	// streaming is the connection of an answer that outgrew its buffer,
	// set to reset on close until the handler ends normally.
	streaming net.Conn
	qctx      queryCtx
	slot      slotRef
}

// requestOf returns c's request state (a fresh one when the middleware did
// not run, as in a handler called on its own).
func requestOf(c *gin.Context) *request {
	if v, ok := c.Get(ctxRequest); ok {
		return v.(*request)
	}
	r := &request{}
	c.Set(ctxRequest, r)
	return r
}

// queryIDOf returns the id of c's request ("" before assignQueryID).
func queryIDOf(c *gin.Context) string {
	if v, ok := c.Get(ctxRequest); ok {
		return v.(*request).id
	}
	return ""
}

// setRows records the rows (or triples) a response carried, for the log.
func setRows(c *gin.Context, n int64) {
	r := requestOf(c)
	r.rows, r.hasRows = n, true
}

// recoverPanics turns a panic into a 500 and a log line. The
// http.ErrAbortHandler panic (used to cut a stream that failed after its
// status was sent) passes through to net/http, which drops the connection.
func (s *Server) recoverPanics(c *gin.Context) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error().Str("queryId", queryIDOf(c)).Interface("panic", p).Bytes("stack", debug.Stack()).Msg("panic in handler")
			if !c.Writer.Written() {
				writeError(c, fmt.Errorf("internal error: %v", p))
			} else {
				panic(http.ErrAbortHandler)
			}
		}
	}()
	c.Next()
}

// assignQueryID gives every request an id: the client's X-Query-Id when it
// is well-formed (so the console can cancel what it started), else a fresh
// random one. The id is echoed in X-Query-Id. A client's ids are its own:
// /api/cancel finds them only for the same client (or the update token).
func (s *Server) assignQueryID(c *gin.Context) {
	id := c.GetHeader("X-Query-Id")
	if !validID(id) {
		id = newID()
	}
	requestOf(c).id = id
	c.Writer.Header()["X-Query-Id"] = []string{id}
	c.Next()
}

func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// logRequests writes one zerolog line per request.
func (s *Server) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	status := c.Writer.Status()
	ev := s.log.Info()
	if status >= 500 && status != TimeoutStatus {
		ev = s.log.Error()
	} else if status >= 400 {
		ev = s.log.Warn()
	}
	if ev == nil {
		return // the level is off: nothing to format
	}
	r := requestOf(c)
	ev = ev.Str("queryId", r.id).
		Str("method", clip(c.Request.Method)).
		Str("path", clip(c.Request.URL.Path)).
		Int("status", status).
		Dur("duration", time.Since(start)).
		Int("bytes", c.Writer.Size())
	if r.hasForm {
		ev = ev.Str("form", r.form.String())
	}
	if r.hasRows {
		ev = ev.Int64("rows", r.rows)
	}
	if r.hasDead {
		ev = ev.Dur("pastDeadline", max(0, time.Since(r.deadline)))
	}
	if r.aborted != "" {
		ev = ev.Str("aborted", r.aborted)
	}
	if len(c.Errors) > 0 {
		ev = ev.Str("error", clip(c.Errors.Last().Error()))
	}
	ev.Msg("request")
}

// cors answers preflights and adds CORS headers for allowed origins.
func (s *Server) cors(c *gin.Context) {
	origin := c.GetHeader("Origin")
	if origin == "" || len(s.opts.CORSOrigins) == 0 {
		c.Next()
		return
	}
	allowed := ""
	for _, o := range s.opts.CORSOrigins {
		if o == "*" {
			allowed = "*"
			break
		}
		if strings.EqualFold(o, origin) {
			allowed = origin
			break
		}
	}
	c.Header("Vary", "Origin")
	if allowed == "" {
		c.Next()
		return
	}
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Origin", allowed)
	h.Set("Access-Control-Expose-Headers", "X-Query-Id, Wukong-Truncated, Retry-After")
	if c.Request.Method == http.MethodOptions && c.GetHeader("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Accept, Authorization, Content-Type, X-Query-Id")
		h.Set("Access-Control-Max-Age", "600")
		c.AbortWithStatus(http.StatusNoContent)
		return
	}
	c.Next()
}

func (s *Server) handleOptions(allow string) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Header("Allow", allow)
		c.Status(http.StatusNoContent)
	}
}

// acquire takes a query slot or fails with 429. release may be called
// more than once; only the first call frees the slot.
func (s *Server) acquire() (release func(), err error) {
	return s.take(s.slots, "queries")
}

// acquireUpdate takes an update slot (updates and Graph Store writes have
// their own, so that writers waiting for the write lock hold no query
// slot) or fails with 429.
func (s *Server) acquireUpdate() (release func(), err error) {
	return s.take(s.updates, "updates")
}

func (s *Server) take(slots chan struct{}, what string) (release func(), err error) {
	if err := s.takeSlot(slots, what); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { <-slots }) }, nil
}

// takeSlot takes one of slots or fails with 429; the caller gives it back
// (<-slots).
func (s *Server) takeSlot(slots chan struct{}, what string) error {
	select {
	case slots <- struct{}{}:
		return nil
	default:
		s.metrics.rejected.Inc()
		return newHTTPError(http.StatusTooManyRequests, "too_many_requests",
			fmt.Sprintf("the server is running its maximum of %d concurrent %s; retry shortly", cap(slots), what))
	}
}

// clientOf names the client of a request for scoping query ids: the
// remote host (without the port, so that the console's cancel, sent on
// another connection, finds its query).
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// errIDInUse refuses a request whose client-chosen id names a request of
// the same client that is still running.
var errIDInUse = newHTTPError(http.StatusConflict, "query_id_in_use",
	"a request with this X-Query-Id is still running; query ids may not be reused while in use")

// register makes a running query cancellable through /api/cancel, under
// its id scoped to its client; an id in use is refused. unregister undoes
// it.
func (s *Server) register(k runKey, q *queryCtx) error {
	s.mu.Lock()
	if _, dup := s.running[k]; dup {
		s.mu.Unlock()
		return errIDInUse
	}
	s.running[k] = q
	s.mu.Unlock()
	s.metrics.active.Inc()
	return nil
}

func (s *Server) unregister(k runKey) {
	s.mu.Lock()
	delete(s.running, k)
	s.mu.Unlock()
	s.metrics.active.Dec()
}

// handleCancel stops a running request: one of the calling client's own
// (the same remote host), or — with the update token — any client's
// request of that id.
func (s *Server) handleCancel(c *gin.Context) {
	id := c.Query("id")
	if !validID(id) {
		writeError(c, newHTTPError(http.StatusBadRequest, "bad_request", "id must be a query id (1–64 letters, digits, - and _)"))
		return
	}
	admin := c.GetHeader("Authorization") != "" && s.authorizeWrite(c) == nil
	var found []*queryCtx
	s.mu.Lock()
	if admin {
		for k, q := range s.running {
			if k.id == id {
				found = append(found, q)
			}
		}
	} else if q, ok := s.running[runKey{client: clientOf(c.Request), id: id}]; ok {
		found = append(found, q)
	}
	s.mu.Unlock()
	if len(found) == 0 {
		writeError(c, newHTTPError(http.StatusNotFound, "not_found", "no running query of yours with id "+id))
		return
	}
	for _, q := range found {
		q.cancelByUser()
	}
	c.JSON(http.StatusOK, gin.H{"cancelled": id})
}

func (s *Server) handleExamples(c *gin.Context) {
	ex := s.opts.Examples
	if ex == nil {
		ex = []Example{}
	}
	c.JSON(http.StatusOK, ex)
}

func (s *Server) handleReady(c *gin.Context) {
	if r, ok := s.backend.(Readier); ok {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
		defer cancel()
		if err := r.Ready(ctx); err != nil {
			if !errors.Is(err, ErrNotReady) {
				err = fmt.Errorf("%w: %v", ErrNotReady, err)
			}
			writeError(c, err)
			return
		}
	}
	c.String(http.StatusOK, "ready\n")
}

// handleCompact runs a compaction of the backend's write delta (the
// update token is required); it answers with the version compacted.
func (s *Server) handleCompact(c *gin.Context) {
	if err := s.authorizeWrite(c); err != nil {
		writeError(c, err)
		return
	}
	cp, ok := s.backend.(Compactor)
	if !ok {
		writeError(c, fmt.Errorf("%w: this backend does not compact", ErrUnsupported))
		return
	}
	v, err := cp.Compact(c.Request.Context())
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"compacted_version": v})
}

// authorizeWrite checks that writes are on and the bearer token matches.
func (s *Server) authorizeWrite(c *gin.Context) error {
	if s.opts.UpdateToken == "" {
		return newHTTPError(http.StatusForbidden, "updates_disabled",
			"updates are disabled on this server (start it with --update-token to enable them)")
	}
	auth := c.GetHeader("Authorization")
	scheme, token, ok := strings.Cut(auth, " ")
	if auth == "" || !ok || !strings.EqualFold(scheme, "Bearer") {
		return newHTTPError(http.StatusUnauthorized, "unauthorized", "updates need an Authorization: Bearer token")
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(s.opts.UpdateToken)) != 1 {
		return newHTTPError(http.StatusForbidden, "forbidden", "the bearer token is not valid for updates")
	}
	return nil
}
