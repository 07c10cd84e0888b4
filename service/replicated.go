package service

import (
	"context"
	"fmt"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/web"
)

// The write path of a cluster (package cluster): a node turns a request
// into the changes it makes without applying them, proposes them to the
// cluster's replicated log, and every node applies them in log order.

// UpdateChanges evaluates a SPARQL Update request into the changes it
// makes, in order, without applying them. reads says whether a WHERE read
// the store (at the version ctx gives the engine): the changes are then
// right only on that version. A WHERE after a change in the same request
// reads that version with the request's changes so far laid over it
// (overlay.go); ADD, COPY and MOVE (to a named graph) are refused
// (web.ErrUnsupported).
func (s *Service) UpdateChanges(ctx context.Context, req *web.UpdateRequest) (changes []graphstore.GraphChange, reads bool, err error) {
	u, err := s.cache.ParseUpdateBase(ctx, req.Update, req.Base)
	if err != nil {
		return nil, false, err
	}
	if err := s.checkUpdate(u, req); err != nil || len(u.Operations) == 0 {
		return nil, false, err
	}
	loads, err := s.fetchLoads(ctx, u.Operations, req.AllowedLoads)
	if err != nil {
		return nil, false, err
	}
	g, err := s.acquire()
	if err != nil {
		return nil, false, err
	}
	defer g.release()
	r := &updateRun{svc: s, ctx: ctx, base: g.ds, baseGen: g, cur: g.ds, using: usingOf(req),
		touched: map[rdf.Term]bool{}, exists: map[rdf.Term]bool{}, loads: loads, dry: true}
	if _, err := r.run(u.Operations); err != nil {
		return nil, false, err
	}
	return r.applied, r.reads, nil
}

// PostGraphChanges parses a Graph Store Protocol POST body into the
// change that merges it into graph gn (nil: an empty body).
// Its blank nodes get labels no other body or INSERT uses. A
// multipart/form-data body is refused (web.ErrUnsupportedMediaType).
func (s *Service) PostGraphChanges(ctx context.Context, gn web.GraphName, body web.GraphBody) ([]graphstore.GraphChange, error) {
	f, ok := loader.FormatForMediaType(body.MediaType)
	if !ok {
		return nil, fmt.Errorf("%w: %q in a cluster (send N-Triples, N-Quads, Turtle, TriG or RDF/XML)", web.ErrUnsupportedMediaType, body.MediaType)
	}
	var triples []rdf.Triple
	opts := loader.Options{Name: "request body", Base: body.Base, BlankPrefix: s.newBlankPrefix()}
	err := loader.Parse(body.Body, f, opts, func(q rdf.Quad) error {
		if !q.G.IsZero() {
			return errGraphInBody(q.G)
		}
		if len(triples)%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		triples = append(triples, q.Triple())
		return nil
	})
	if err != nil || len(triples) == 0 {
		return nil, err // a *loader.SyntaxError is a 400
	}
	if len(triples) == 0 {
		return nil, nil
	}
	return []graphstore.GraphChange{{Graph: graphTerm(gn), Insert: triples}}, nil
}
