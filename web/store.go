package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wukongd/wukongd/results"
)

// graphOf reads the target of a Graph Store Protocol request: ?default or
// ?graph=IRI (absolute), exactly one of them.
func graphOf(q url.Values) (GraphName, error) {
	_, def := q["default"]
	gs := q["graph"]
	switch {
	case def && len(gs) > 0:
		return GraphName{}, newHTTPError(http.StatusBadRequest, "bad_request", "give either ?default or ?graph=IRI, not both")
	case def:
		return GraphName{Default: true}, nil
	case len(gs) == 1:
		u, err := url.Parse(gs[0])
		if err != nil || !u.IsAbs() {
			return GraphName{}, newHTTPError(http.StatusBadRequest, "bad_request", "the graph parameter must be an absolute IRI, not "+fmt.Sprintf("%q", clip(gs[0])))
		}
		return GraphName{IRI: gs[0]}, nil
	case len(gs) > 1:
		return GraphName{}, newHTTPError(http.StatusBadRequest, "bad_request", "more than one graph parameter")
	}
	return GraphName{}, newHTTPError(http.StatusBadRequest, "bad_request", "the Graph Store Protocol needs ?default or ?graph=IRI")
}

// storeTarget reads the graph a Graph Store Protocol request names:
// indirectly (?default or ?graph=IRI on /store), directly (any other path
// under /store names the graph whose IRI is that request URL, §4.1), or —
// a POST to /store with neither parameter (§5.4) — a new graph whose IRI
// the server mints under /store/graphs/ (created is then true).
func storeTarget(c *gin.Context, params url.Values) (g GraphName, created bool, err error) {
	_, def := params["default"]
	_, named := params["graph"]
	if c.Request.URL.Path != "/store" {
		if def || named {
			return GraphName{}, false, newHTTPError(http.StatusBadRequest, "bad_request", "a graph named by its own URL takes no ?default or ?graph= parameter")
		}
		return GraphName{IRI: requestOrigin(c) + c.Request.URL.EscapedPath()}, false, nil
	}
	if c.Request.Method == http.MethodPost && !def && !named {
		var id [16]byte
		if _, err := rand.Read(id[:]); err != nil {
			return GraphName{}, false, fmt.Errorf("cannot name a new graph: %w", err)
		}
		return GraphName{IRI: requestOrigin(c) + "/store/graphs/" + hex.EncodeToString(id[:])}, true, nil
	}
	g, err = graphOf(params)
	return g, false, err
}

func (s *Server) handleStore(c *gin.Context) {
	start := time.Now()
	params := c.Request.URL.Query()
	g, minted, err := storeTarget(c, params)
	if err != nil {
		writeError(c, err)
		return
	}
	method := c.Request.Method
	write := method == http.MethodPut || method == http.MethodPost || method == http.MethodDelete
	if write {
		if err := s.authorizeWrite(c); err != nil {
			writeError(c, err)
			return
		}
	}
	var accept string
	var f results.Format
	if !write {
		accept = acceptOf(c, params, results.GraphFormats)
		if f = results.Negotiate(accept, results.GraphFormats); f == results.FormatNone {
			writeError(c, notAcceptable(accept, "graphs"))
			return
		}
	}
	timeout := s.opts.MaxTimeout
	if !write {
		if timeout, err = s.timeoutOf(params); err != nil {
			writeError(c, err)
			return
		}
	}
	// Reads take a query slot; writes an update slot (they stream their
	// body to the backend, which reads it within the server's read
	// timeout).
	acquire := s.acquire
	if write {
		acquire = s.acquireUpdate
	}
	release, err := acquire()
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
	defer func() {
		s.log.Debug().Str("queryId", queryIDOf(c)).Str("graph", g.String()).Dur("duration", time.Since(start)).Msg("graph store")
	}()

	switch method {
	case http.MethodGet, http.MethodHead:
		s.storeGet(ctx, c, g, f)
	case http.MethodDelete:
		if err := s.backend.DeleteGraph(ctx, g); err != nil {
			writeError(c, contextError(ctx, err))
			return
		}
		c.Status(http.StatusNoContent)
	case http.MethodPut, http.MethodPost:
		ct := c.GetHeader("Content-Type")
		mt, mtParams, err := mime.ParseMediaType(ct)
		if ct == "" || err != nil {
			writeError(c, fmt.Errorf("%w: a %s to the graph store needs the Content-Type of its RDF body", ErrUnsupportedMediaType, method))
			return
		}
		var boundary string
		if strings.HasPrefix(mt, "multipart/") {
			// Graph Store Protocol §5.5: a POST of multipart/form-data
			// merges every part (an RDF document each) into the graph.
			if mt != "multipart/form-data" || method != http.MethodPost || mtParams["boundary"] == "" {
				writeError(c, fmt.Errorf("%w: only a POST may send several RDF documents, as multipart/form-data with a boundary", ErrUnsupportedMediaType))
				return
			}
			boundary = mtParams["boundary"]
		}
		base := g.IRI
		if g.Default {
			base = requestURL(c)
		}
		rd, err := s.limitBody(c)
		if err != nil {
			writeError(c, err)
			return
		}
		body := GraphBody{MediaType: strings.ToLower(mt), Boundary: boundary, Base: base, Body: rd}
		var created bool
		if method == http.MethodPut {
			created, err = s.backend.PutGraph(ctx, g, body)
		} else {
			created, err = s.backend.PostGraph(ctx, g, body)
		}
		if err != nil {
			writeError(c, contextError(ctx, err))
			return
		}
		if minted {
			// The new graph's IRI is where it can be read (directly).
			c.Header("Location", g.IRI)
		}
		if created || minted {
			c.Status(http.StatusCreated)
			return
		}
		c.Status(http.StatusNoContent)
	}
}

func requestURL(c *gin.Context) string {
	return requestOrigin(c) + c.Request.URL.RequestURI()
}

// requestOrigin is the scheme and authority the request was sent to.
func requestOrigin(c *gin.Context) string {
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.Request.Host
}

func (s *Server) storeGet(ctx context.Context, c *gin.Context, g GraphName, f results.Format) {
	it, err := s.backend.GetGraph(ctx, g)
	if err != nil {
		writeError(c, contextError(ctx, err))
		return
	}
	defer it.Close()
	if c.Request.Method == http.MethodHead {
		c.Header("Content-Type", f.ContentType())
		c.Header("Vary", "Accept")
		c.Status(http.StatusOK)
		return
	}
	out := s.newCommitBuffer(c, f, memoryOf(it))
	defer out.free()
	n, truncated, err := s.streamTriples(ctx, out, f, it)
	setRows(c, n)
	if err == nil && truncated {
		c.Writer.Header().Set(truncatedHeader, "true")
	}
	if err == nil && !out.committed {
		err = out.commit()
	}
	if err != nil {
		err = contextError(ctx, err)
		if !c.Writer.Written() {
			writeError(c, err)
			return
		}
		s.abortStream(c, err)
	}
}
