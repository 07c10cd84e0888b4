package service

import (
	"context"
	"fmt"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/web"
)

// GetGraph implements web.Backend: it streams every triple of the default
// graph.
func (s *Service) GetGraph(ctx context.Context, gn web.GraphName) (web.TripleIterator, error) {
	if !gn.Default {
		return nil, errNamedGraphs
	}
	g, err := s.acquire()
	if err != nil {
		return nil, err
	}
	return &graphIter{ctx: ctx, g: g, ids: newIDTriples(g.store)}, nil
}

// PutGraph implements web.Backend: the body replaces the default graph.
func (s *Service) PutGraph(ctx context.Context, gn web.GraphName, body web.GraphBody) (bool, error) {
	if !gn.Default {
		return false, errNamedGraphs
	}
	return false, s.write(ctx, func(_ *graphstore.Store, emit func(rdf.Triple) error) error {
		return parseBody(body, emit)
	})
}

// PostGraph implements web.Backend: the body is merged into the default
// graph (RDF merge: its blank nodes are new ones).
func (s *Service) PostGraph(ctx context.Context, gn web.GraphName, body web.GraphBody) (bool, error) {
	if !gn.Default {
		return false, errNamedGraphs
	}
	return false, s.write(ctx, func(old *graphstore.Store, emit func(rdf.Triple) error) error {
		if err := eachTriple(ctx, old, emit); err != nil {
			return err
		}
		return parseBody(body, emit)
	})
}

// DeleteGraph implements web.Backend: deleting the default graph empties
// it.
func (s *Service) DeleteGraph(ctx context.Context, gn web.GraphName) error {
	if !gn.Default {
		return errNamedGraphs
	}
	return s.write(ctx, nil)
}

// write builds a new store from the triples that fill emits (given the
// current store; nil fill: an empty store) and publishes it. Writes are
// serialized; on any error nothing changes.
func (s *Service) write(ctx context.Context, fill func(old *graphstore.Store, emit func(rdf.Triple) error) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed.Load() {
		return fmt.Errorf("%w: the service is closed", web.ErrNotReady)
	}
	g := s.cur.Load() // writes are serialized: g stays current until we swap
	var each func(emit func(rdf.Triple) error) error
	if fill != nil {
		each = func(emit func(rdf.Triple) error) error {
			n := 0
			return fill(g.store, func(t rdf.Triple) error {
				if n++; n%4096 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				return emit(t)
			})
		}
	}
	st, err := BuildStore(g.store.NumShards(), each)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		st.Close()
		return err
	}
	return s.publish(st)
}

// parseBody parses a Graph Store Protocol body with package loader.
func parseBody(body web.GraphBody, emit func(rdf.Triple) error) error {
	f, ok := loader.FormatForMediaType(body.MediaType)
	if !ok {
		return fmt.Errorf("%w: %q (send N-Triples, N-Quads, Turtle, TriG or RDF/XML)", web.ErrUnsupportedMediaType, body.MediaType)
	}
	return loader.Parse(body.Body, f, loader.Options{Name: "request body", Base: body.Base}, func(q rdf.Quad) error {
		if !q.G.IsZero() {
			return fmt.Errorf("%w: the body has a statement in graph %s", errNamedGraphs, q.G)
		}
		return emit(q.Triple())
	})
}

// eachTriple calls emit for every triple of st.
func eachTriple(ctx context.Context, st *graphstore.Store, emit func(rdf.Triple) error) error {
	it := newIDTriples(st)
	var t rdf.Triple
	var ps, pp graphstore.ID
	for {
		s, p, o, ok, err := it.next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if s != ps || t.S.IsZero() {
			t.S, ps = term(st, s), s
		}
		if p != pp || t.P.IsZero() {
			t.P, pp = term(st, p), p
		}
		t.O = term(st, o)
		if err := emit(t); err != nil {
			return err
		}
	}
}

func term(st *graphstore.Store, id graphstore.ID) rdf.Term {
	t, _ := st.Dict().Term(id)
	return t
}

// idTriples enumerates the triples of a store as IDs: shard by shard,
// predicate by predicate, each triple once, from its subject's owner
// (the out-edges (s, p, Out) → objects, found through the shard's
// predicate index (0, p, Out) of local subjects).
type idTriples struct {
	st       *graphstore.Store
	shards   []int
	shard    int // index into shards
	preds    []graphstore.ID
	pi       int
	subjects []graphstore.ID
	si       int
	objs     []graphstore.ID
	oi       int
}

func newIDTriples(st *graphstore.Store) *idTriples {
	return &idTriples{st: st, shards: st.LocalShards(), shard: -1}
}

// next returns the next triple; ok is false at the end.
func (it *idTriples) next(ctx context.Context) (s, p, o graphstore.ID, ok bool, err error) {
	for {
		if it.oi < len(it.objs) {
			o = it.objs[it.oi]
			it.oi++
			return it.subjects[it.si-1], it.preds[it.pi-1], o, true, nil
		}
		if it.si < len(it.subjects) {
			v := it.st.Shard(it.shards[it.shard])
			it.objs, err = v.AppendEdges(ctx, it.objs[:0], it.subjects[it.si], it.preds[it.pi-1], graphstore.Out)
			if err != nil {
				return 0, 0, 0, false, err
			}
			it.oi = 0
			it.si++
			continue
		}
		if it.pi < len(it.preds) {
			v := it.st.Shard(it.shards[it.shard])
			it.subjects = v.AppendIndex(it.subjects[:0], it.preds[it.pi], graphstore.Out)
			it.si = 0
			it.pi++
			continue
		}
		if it.shard+1 >= len(it.shards) {
			return 0, 0, 0, false, nil
		}
		it.shard++
		if err := ctx.Err(); err != nil {
			return 0, 0, 0, false, err
		}
		it.preds = it.st.Shard(it.shards[it.shard]).AppendPredicates(it.preds[:0], graphstore.Out)
		it.pi = 0
	}
}

// graphIter streams the default graph as terms. It holds a reference to
// the generation until Close.
type graphIter struct {
	ctx    context.Context
	g      *generation
	ids    *idTriples
	cur    rdf.Triple
	ps, pp graphstore.ID
	n      int
	err    error
	done   bool
}

func (it *graphIter) Next() bool {
	if it.done {
		return false
	}
	if it.n++; it.n%ctxCheckEvery == 0 {
		if err := it.ctx.Err(); err != nil {
			it.err, it.done = err, true
			return false
		}
	}
	s, p, o, ok, err := it.ids.next(it.ctx)
	if err != nil || !ok {
		it.err, it.done = err, true
		return false
	}
	st := it.g.store
	if s != it.ps || it.cur.S.IsZero() {
		it.cur.S, it.ps = term(st, s), s
	}
	if p != it.pp || it.cur.P.IsZero() {
		it.cur.P, it.pp = term(st, p), p
	}
	it.cur.O = term(st, o)
	return true
}

func (it *graphIter) Triple() rdf.Triple { return it.cur }
func (it *graphIter) Err() error         { return it.err }

func (it *graphIter) Close() error {
	if it.g != nil {
		it.done = true
		it.g.release()
		it.g = nil
	}
	return nil
}
