package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wukongd/wukongd/sparql"
)

// The console's own endpoints (under /api/): completion from the store,
// a syntax check without running, and the store's figures. They answer
// JSON; each takes a query slot while it works, like a query.

// Optional interfaces of a Backend for the console.
type (
	// Completer proposes store terms that may continue a query where
	// the editor's cursor is (GET /api/complete).
	Completer interface {
		Complete(ctx context.Context, req *CompleteRequest) (*CompleteAnswer, error)
	}
	// StoreInfoer describes the served store (GET /api/info): the
	// figures of `wukongd info`.
	StoreInfoer interface {
		StoreInfo(ctx context.Context, top int) (*StoreInfo, error)
	}
)

// CompleteKind is what a completion must be.
type CompleteKind string

const (
	// CompletePredicate: a predicate, after a subject.
	CompletePredicate CompleteKind = "predicate"
	// CompleteClass: a class, after "a" or rdf:type.
	CompleteClass CompleteKind = "class"
	// CompleteEntity: any IRI, by its local name or label.
	CompleteEntity CompleteKind = "entity"
)

// CompleteRequest asks for terms of one kind.
type CompleteRequest struct {
	Kind CompleteKind
	// Namespace, when set, is the start every proposed IRI has (the
	// namespace of a typed prefix, or the part of an <IRI typed so far).
	Namespace string
	// Text is what follows Namespace in the IRI when Namespace is set;
	// else a prefix of the term's local name or of one of its labels.
	// Both match without regard to case. Empty: any.
	Text string
	// Subject is the subject IRI, for predicates after a constant
	// subject: only its predicates are proposed.
	Subject string
	// Classes are classes the subject variable is known to have (?x a C
	// in the query), for predicates: those of their instances first.
	Classes []string
	// Limit caps the answer (the web layer sets 1–100).
	Limit int
}

// CompleteAnswer is the answer to a CompleteRequest.
type CompleteAnswer struct {
	Items []Completion `json:"items"`
	// Indexing says that the term index is still being built: entities
	// are missing from Items until it is done.
	Indexing bool `json:"indexing,omitempty"`
}

// Completion is one proposed term.
type Completion struct {
	IRI string `json:"iri"`
	// Label is a label of the term, when it has one (the matched one,
	// when the match was on a label).
	Label string `json:"label,omitempty"`
	// Count ranks the proposals: triples of a predicate (of the
	// subject's classes' instances, with Classes), instances of a class.
	Count uint64 `json:"count,omitempty"`
}

// StoreInfo are the figures of the served store.
type StoreInfo struct {
	Triples           uint64 `json:"triples"`
	InferredTriples   uint64 `json:"inferredTriples"`
	Reasoning         string `json:"reasoning,omitempty"`
	Terms             uint64 `json:"terms"`
	PredicatesClasses uint64 `json:"predicatesAndClasses"`
	Subjects          uint64 `json:"subjects"`
	Objects           uint64 `json:"objects"`
	Shards            int    `json:"shards"`
	// ShardTriples are the triples per shard (those whose subject the
	// shard owns) of the default graph.
	ShardTriples []uint64 `json:"shardTriples"`
	Graphs       int      `json:"graphs"`
	Version      uint64   `json:"version"`
	// Parts are the bytes of the store's parts (key/value buckets and
	// values, dictionary strings and index, the write delta).
	Parts         []StorePart     `json:"parts"`
	TopPredicates []PredicateInfo `json:"topPredicates"`
	TopClasses    []ClassInfo     `json:"topClasses"`
	// Predicates and Classes are how many there are in all.
	Predicates int `json:"predicates"`
	Classes    int `json:"classes"`
	// Writes says whether the server takes updates (set by the web layer).
	Writes bool `json:"writes"`
}

// StorePart is the size of one part of the store.
type StorePart struct {
	Name  string `json:"name"`
	Bytes uint64 `json:"bytes"`
}

// PredicateInfo is one predicate's statistics.
type PredicateInfo struct {
	IRI      string `json:"iri"`
	Triples  uint64 `json:"triples"`
	Subjects uint64 `json:"subjects"`
	Objects  uint64 `json:"objects"`
}

// ClassInfo is one class's instance count.
type ClassInfo struct {
	IRI       string `json:"iri"`
	Instances uint64 `json:"instances"`
}

// Limits of the console endpoints.
const (
	maxCompleteText  = 256
	maxCompleteIRI   = 4096
	maxCompleteLimit = 100
	consoleAPITime   = 5 * time.Second
)

func (s *Server) consoleAPIRoutes(r *gin.Engine) {
	r.GET("/api/complete", s.handleComplete)
	r.GET("/api/info", s.handleInfo)
	r.POST("/api/parse", s.handleParse)
	r.GET("/api/prefixes", s.handlePrefixes)
}

// handlePrefixes answers GET /api/prefixes with the store's namespace
// prefixes (prefix → IRI; {} when the backend has none).
func (s *Server) handlePrefixes(c *gin.Context) {
	out := map[string]string{}
	if p, ok := s.backend.(Prefixer); ok {
		for k, v := range p.Prefixes() {
			out[k] = v
		}
	}
	c.JSON(http.StatusOK, out)
}

// handleComplete answers GET /api/complete?kind=predicate|class|entity
// &q=TEXT&ns=NAMESPACE&subject=IRI&class=IRI…&limit=N with a
// CompleteAnswer.
func (s *Server) handleComplete(c *gin.Context) {
	cp, ok := s.backend.(Completer)
	if !ok {
		writeError(c, fmt.Errorf("%w: this backend does not complete terms", ErrUnsupported))
		return
	}
	q := c.Request.URL.Query()
	req := &CompleteRequest{Kind: CompleteKind(q.Get("kind")), Namespace: q.Get("ns"), Text: q.Get("q"),
		Subject: q.Get("subject"), Classes: q["class"], Limit: 20}
	switch req.Kind {
	case CompletePredicate, CompleteClass, CompleteEntity:
	default:
		writeError(c, newHTTPError(http.StatusBadRequest, "bad_request", "kind must be predicate, class or entity"))
		return
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeError(c, newHTTPError(http.StatusBadRequest, "bad_request", "limit must be a positive integer"))
			return
		}
		req.Limit = min(n, maxCompleteLimit)
	}
	if len(req.Text) > maxCompleteText || len(req.Namespace) > maxCompleteIRI || len(req.Subject) > maxCompleteIRI || len(req.Classes) > 16 {
		writeError(c, newHTTPError(http.StatusBadRequest, "bad_request", "the completion request is too long"))
		return
	}
	for _, cl := range req.Classes {
		if len(cl) > maxCompleteIRI {
			writeError(c, newHTTPError(http.StatusBadRequest, "bad_request", "the completion request is too long"))
			return
		}
	}
	release, err := s.acquire()
	if err != nil {
		writeError(c, err)
		return
	}
	defer release()
	ctx, cancel := context.WithTimeout(c.Request.Context(), consoleAPITime)
	defer cancel()
	ans, err := cp.Complete(ctx, req)
	if err != nil {
		writeError(c, err)
		return
	}
	if ans.Items == nil {
		ans.Items = []Completion{}
	}
	c.JSON(http.StatusOK, ans)
}

// handleInfo answers GET /api/info[?top=N] with the StoreInfo.
func (s *Server) handleInfo(c *gin.Context) {
	si, ok := s.backend.(StoreInfoer)
	if !ok {
		writeError(c, fmt.Errorf("%w: this backend does not describe its store", ErrUnsupported))
		return
	}
	top := 20
	if v := c.Query("top"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeError(c, newHTTPError(http.StatusBadRequest, "bad_request", "top must be a positive integer"))
			return
		}
		top = min(n, 1000)
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), consoleAPITime)
	defer cancel()
	info, err := si.StoreInfo(ctx, top)
	if err != nil {
		writeError(c, err)
		return
	}
	info.Writes = s.opts.UpdateToken != ""
	c.JSON(http.StatusOK, info)
}

// parseAnswer is the answer of /api/parse: ok, or the first syntax error
// with its 1-based line and column (in Unicode code points).
type parseAnswer struct {
	OK      bool   `json:"ok"`
	Form    string `json:"form,omitempty"`
	Message string `json:"message,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
}

// handleParse checks a query (form parameter query=) or an update
// (update=) without running it. A syntax error is a 200 answer with
// ok=false, so that the console can mark it while the user types.
func (s *Server) handleParse(c *gin.Context) {
	body, err := s.limitBody(c)
	if err != nil {
		writeError(c, err)
		return
	}
	c.Request.Body = body
	if err := c.Request.ParseForm(); err != nil {
		writeError(c, bodyError(err, "form"))
		return
	}
	text, isUpdate := c.Request.PostForm.Get("query"), false
	if u, ok := c.Request.PostForm["update"]; ok {
		text, isUpdate = strings.Join(u, ""), true
	}
	release, err := s.acquire()
	if err != nil {
		writeError(c, err)
		return
	}
	defer release()
	ctx, cancel := context.WithTimeout(c.Request.Context(), consoleAPITime)
	defer cancel()
	var ans parseAnswer
	if isUpdate {
		_, err = sparql.ParseUpdateContext(ctx, text)
		ans.Form = "update"
	} else {
		var q *sparql.Query
		q, err = sparql.ParseQueryContext(ctx, text)
		if err == nil {
			ans.Form = strings.ToLower(q.Form.String())
		}
	}
	var se *sparql.SyntaxError
	switch {
	case err == nil:
		ans.OK = true
	case errors.As(err, &se):
		ans = parseAnswer{Message: se.Msg, Line: se.Line, Col: se.Col}
	default:
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, ans)
}
