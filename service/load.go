package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"

	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
	"github.com/wukongd/wukongd/web"
)

// Defaults of LOAD's limits (Options.LoadMaxBytes, LoadTimeout).
const (
	DefaultLoadMaxBytes = 256 << 20
	DefaultLoadTimeout  = 60 * time.Second
	// loadMaxRedirects is the longest redirect chain LOAD follows.
	loadMaxRedirects = 10
)

// loadAccept is the Accept header of LOAD's request: the formats package
// loader parses.
const loadAccept = "text/turtle, application/n-triples;q=0.9, application/rdf+xml;q=0.8, application/trig;q=0.5, application/n-quads;q=0.5, */*;q=0.1"

// loaded is the outcome of fetching one LOAD's source before the request's
// operations run: the triples, or the error (for LOAD SILENT: the
// operation does nothing).
type loaded struct {
	triples []rdf.Triple
	err     error
}

// fetchLoads fetches the sources of the request's LOAD operations, in
// order, before any operation runs (so that no network wait happens under
// the write lock). A source that is refused or fails fails the request
// unless its LOAD is SILENT.
func (s *Service) fetchLoads(ctx context.Context, ops []sparql.UpdateOp, allow []string) (map[*sparql.Load]loaded, error) {
	var out map[*sparql.Load]loaded
	for _, op := range ops {
		l, ok := op.(*sparql.Load)
		if !ok {
			continue
		}
		if out == nil {
			out = map[*sparql.Load]loaded{}
		}
		ts, err := s.fetchLoad(ctx, l.Source, allow)
		if err != nil && !l.Silent {
			return nil, fmt.Errorf("LOAD <%s> (line %d): %w", l.Source, l.Line, err)
		}
		out[l] = loaded{ts, err}
	}
	return out, nil
}

// fetchLoad fetches the document at src over HTTP(S) and parses it with
// package loader: the source and every redirect must be allowed by allow
// (web.Allowed), the body must fit Options.LoadMaxBytes and arrive within
// Options.LoadTimeout, and the format comes from the Content-Type, or
// from the IRI's extension when the type names no RDF format. A document
// with statements in named graphs (TriG, N-Quads) is refused: LOAD fills
// one graph.
func (s *Service) fetchLoad(ctx context.Context, src string, allow []string) ([]rdf.Triple, error) {
	if !web.Allowed(src, allow) {
		return nil, fmt.Errorf("%w: the source is not allowed on this server (see --allow-load)", web.ErrForbidden)
	}
	u, err := url.Parse(src)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: LOAD fetches http and https IRIs only", web.ErrBadRequest)
	}
	timeout := s.opts.LoadTimeout
	if timeout <= 0 {
		timeout = DefaultLoadTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := http.Client{Transport: s.opts.LoadTransport, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= loadMaxRedirects {
			return fmt.Errorf("%w: more than %d redirects", web.ErrUpstream, loadMaxRedirects)
		}
		if !web.Allowed(req.URL.String(), allow) {
			return fmt.Errorf("%w: redirected to <%s>, which is not allowed on this server (see --allow-load)", web.ErrForbidden, req.URL)
		}
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", web.ErrBadRequest, err)
	}
	req.Header.Set("Accept", loadAccept)
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && (errors.Is(ue.Err, web.ErrForbidden) || errors.Is(ue.Err, web.ErrUpstream)) {
			return nil, ue.Err
		}
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("%w: no answer within %v", web.ErrUpstream, timeout)
		}
		return nil, fmt.Errorf("%w: %v", web.ErrUpstream, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%w: the source answered %s", web.ErrUpstream, resp.Status)
	}
	final := resp.Request.URL.String()
	f, ok := loadFormat(resp.Header.Get("Content-Type"), resp.Request.URL.Path)
	if !ok {
		return nil, fmt.Errorf("%w: the source's Content-Type %q names no RDF format this server parses, nor does its extension", web.ErrUpstream, resp.Header.Get("Content-Type"))
	}
	max := s.opts.LoadMaxBytes
	if max <= 0 {
		max = DefaultLoadMaxBytes
	}
	body := &cappedReader{r: resp.Body, left: max}
	var triples []rdf.Triple
	opts := loader.Options{Name: final, Base: final, BlankPrefix: s.newBlankPrefix()}
	err = loader.Parse(body, f, opts, func(q rdf.Quad) error {
		if !q.G.IsZero() {
			return fmt.Errorf("the document has a statement in graph %s; LOAD fills one graph", q.G)
		}
		if len(triples)%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		triples = append(triples, q.Triple())
		return nil
	})
	switch {
	case body.over:
		return nil, fmt.Errorf("%w: the document is larger than the cap of %d bytes (--load-max-bytes)", web.ErrUpstream, max)
	case err != nil && ctx.Err() == context.DeadlineExceeded:
		return nil, fmt.Errorf("%w: the document did not arrive within %v", web.ErrUpstream, timeout)
	case err != nil:
		// %v, not %w: a syntax error in the fetched document is not a
		// syntax error of the request.
		return nil, fmt.Errorf("%w: %v", web.ErrUpstream, err)
	}
	return triples, nil
}

// loadFormat picks the parser for a fetched document: the Content-Type's,
// else (no type, or a generic one such as text/plain or
// application/octet-stream) the path's extension.
func loadFormat(contentType, path string) (loader.Format, bool) {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "", "text/plain", "application/octet-stream", "binary/octet-stream":
		if f, ok := loader.FormatForPath(path); ok {
			return f, true
		}
	}
	if mt == "application/octet-stream" || mt == "binary/octet-stream" {
		return 0, false
	}
	return loader.FormatForMediaType(mt)
}

// cappedReader reads at most left bytes; past that it fails (over).
type cappedReader struct {
	r    io.Reader
	left int64
	over bool
}

var errLoadTooLarge = errors.New("the document is larger than the cap")

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One more byte tells a document of exactly the cap from a larger one.
		var one [1]byte
		n, _ := c.r.Read(one[:])
		if n > 0 {
			c.over = true
			return 0, errLoadTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
