package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/web"
)

// graphTerm is the dataset's name of a Graph Store Protocol target: the
// zero Term for the default graph.
func graphTerm(gn web.GraphName) rdf.Term {
	if gn.Default {
		return rdf.Term{}
	}
	return rdf.NewIRI(gn.IRI)
}

// storeOf returns the store of graph gn in ds, or web.ErrNotFound.
func storeOf(ds *graphstore.Dataset, gn web.GraphName) (*graphstore.Store, error) {
	if gn.Default {
		return ds.Default(), nil
	}
	st, ok := ds.Graph(graphTerm(gn))
	if !ok {
		return nil, fmt.Errorf("%w: there is no graph %s", web.ErrNotFound, gn)
	}
	return st, nil
}

// GetGraph implements web.Backend: it streams every triple of the default
// graph or of a named graph (web.ErrNotFound if there is none of that
// name).
func (s *Service) GetGraph(ctx context.Context, gn web.GraphName) (web.TripleIterator, error) {
	g, err := s.acquire()
	if err != nil {
		return nil, err
	}
	st, err := storeOf(g.ds, gn)
	if err != nil {
		g.release()
		return nil, err
	}
	// web's response buffer for the graph is charged as a query's answer
	// is (genCursor.Grow): to a held account in the engine's budgets.
	eng, err := g.engine()
	if err != nil {
		g.release()
		return nil, err
	}
	return &graphIter{genCursor: genCursor{ctx: ctx, g: g, res: eng.Hold()}, dict: g.ds.Dict(), ids: newIDTriples(st)}, nil
}

// PutGraph implements web.Backend: the body replaces the graph (a named
// graph is created if missing; created says so).
func (s *Service) PutGraph(ctx context.Context, gn web.GraphName, body web.GraphBody) (bool, error) {
	return s.bulkGraph(ctx, gn, body, true)
}

// PostGraph implements web.Backend: the body is merged into the graph
// (RDF merge: its blank nodes are new ones; a named graph is created if
// missing).
func (s *Service) PostGraph(ctx context.Context, gn web.GraphName, body web.GraphBody) (bool, error) {
	return s.bulkGraph(ctx, gn, body, false)
}

// bulkGraph writes a Graph Store Protocol body into graph gn (replacing
// it: put) as one change, through graphstore's bulk path: the body is
// parsed as it streams in (N-Triples and N-Quads in parallel chunks), its
// terms looked up by the parsing goroutines, and only then is the writer's
// lock taken (graphstore.Dataset.ApplyBulk). The log records the triples
// the change added.
func (s *Service) bulkGraph(ctx context.Context, gn web.GraphName, body web.GraphBody, put bool) (bool, error) {
	g, err := s.acquire() // its dictionary resolves the terms while parsing
	if err != nil {
		return false, err
	}
	defer g.release()
	// The parsed body is held until the write is applied: it is charged
	// to the memory budgets as a query's memory is (a held account, bounded
	// by --max-query-memory, and with the queries by --max-memory), one
	// byte per byte of body read — its terms' text and 24 bytes of IDs per
	// triple (about 60–100 bytes of N-Triples) stay below that. Before, 8
	// concurrent 8 MB POSTs under the attack were charged nothing.
	eng, err := g.engine()
	if err != nil {
		return false, err
	}
	hold := eng.Hold()
	defer hold.Release()
	cr := &chargedReader{r: body.Body, mem: hold}
	body.Body = cr
	bulk := g.ds.NewBulkInsert()
	if err := s.parseBulk(ctx, body, bulk); err != nil {
		if cr.err != nil { // a parser may report the failed read as a syntax error
			return false, engineError(cr.err, nil)
		}
		return false, err
	}
	n := bulk.Len()
	var created bool
	err = s.change(ctx, func(t *generation) (*graphstore.Dataset, []graphstore.GraphChange, error) {
		_, err := storeOf(t.ds, gn)
		created = err != nil && (put || n > 0)
		if !put && n == 0 {
			return nil, nil, nil // nothing to merge
		}
		nds, c, err := t.ds.ApplyBulk(ctx, graphTerm(gn), put, bulk)
		if err != nil {
			return nil, nil, err
		}
		if t.ds.Inferred() != nil {
			c = c.WithTerms() // the reasoner and a replay read the terms
		}
		changes := []graphstore.GraphChange{c}
		if nds, err = s.reasoner.maintain(ctx, t.ds, nds, changes); err != nil { // reason.go
			return nil, nil, err
		}
		return nds, changes, nil
	})
	return created && err == nil, err
}

// DeleteGraph implements web.Backend: a named graph is removed
// (web.ErrNotFound if there is none of that name); deleting the default
// graph empties it.
func (s *Service) DeleteGraph(ctx context.Context, gn web.GraphName) error {
	return s.change(ctx, func(g *generation) (*graphstore.Dataset, []graphstore.GraphChange, error) {
		if _, err := storeOf(g.ds, gn); err != nil {
			return nil, nil, err
		}
		return s.applyChanges(ctx, g.ds, graphstore.GraphChange{Graph: graphTerm(gn), Drop: true})
	})
}

// applyChanges applies changes to ds (keeping a materialization right:
// applyReasoned) and returns the new dataset with the changes (what the
// write-ahead log records).
func (s *Service) applyChanges(ctx context.Context, ds *graphstore.Dataset, changes ...graphstore.GraphChange) (*graphstore.Dataset, []graphstore.GraphChange, error) {
	nds, err := s.applyReasoned(ctx, ds, changes)
	if err != nil {
		return nil, nil, err
	}
	return nds, changes, nil
}

// parseBulk parses a Graph Store Protocol body with package loader into
// bulk; its blank nodes get labels no other body or INSERT uses.
func (s *Service) parseBulk(ctx context.Context, body web.GraphBody, bulk *graphstore.BulkInsert) error {
	if body.MediaType == "multipart/form-data" {
		return s.parseParts(ctx, body, bulk)
	}
	f, ok := loader.FormatForMediaType(body.MediaType)
	if !ok {
		return fmt.Errorf("%w: %q (send N-Triples, N-Quads, Turtle, TriG or RDF/XML)", web.ErrUnsupportedMediaType, body.MediaType)
	}
	_, err := s.parseDoc(ctx, f, body.Base, body.Body, bulk, 0)
	return err
}

// errGraphInBody is the error for a statement of a named graph in a
// Graph Store Protocol body.
func errGraphInBody(g rdf.Term) error {
	return fmt.Errorf("%w: the body has a statement in graph %s; a Graph Store Protocol body is one graph (its target is ?default or ?graph=)", web.ErrBadRequest, g)
}

// parseDoc parses one RDF document of a body into bulk, its batches
// numbered from seq; it returns the next free number. N-Triples and
// N-Quads are parsed in parallel chunks, other formats as they stream.
func (s *Service) parseDoc(ctx context.Context, f loader.Format, base string, r io.Reader, bulk *graphstore.BulkInsert, seq int) (int, error) {
	opts := loader.Options{Name: "request body", Base: base, BlankPrefix: s.newBlankPrefix()}
	if f == loader.NTriples || f == loader.NQuads {
		var next atomic.Int64 // past the highest number used
		next.Store(int64(seq))
		// A worker per processor: while queries run, one fewer parse at
		// once (internal/cpugate), so queries keep a processor.
		err := loader.ParseChunks(ctx, r, f == loader.NQuads, opts, runtime.GOMAXPROCS(0), func(b loader.RawBatch) error {
			if !b.Graph.IsZero() && len(b.Triples) > 0 {
				return errGraphInBody(b.Graph)
			}
			for n := next.Load(); int64(seq+b.Seq) >= n && !next.CompareAndSwap(n, int64(seq+b.Seq+1)); n = next.Load() {
			}
			err := bulk.AddRaw(seq+b.Seq, b.Triples)
			if b.Last {
				bulk.EndPart(seq + b.Seq)
			}
			return err
		})
		return int(next.Load()), err
	}
	batch := make([]rdf.Triple, 0, 4096)
	err := loader.Parse(r, f, opts, func(q rdf.Quad) error {
		if !q.G.IsZero() {
			return errGraphInBody(q.G)
		}
		batch = append(batch, q.Triple())
		if len(batch) == cap(batch) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := bulk.Add(seq, batch); err != nil {
				return err
			}
			seq++
			batch = batch[:0]
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = bulk.Add(seq, batch)
		seq++
	}
	return seq, err
}

// parseParts parses a multipart/form-data body into bulk: every part is
// an RDF document (its Content-Type, or its file name's extension when the
// type is missing or generic), with blank nodes of its own.
func (s *Service) parseParts(ctx context.Context, body web.GraphBody, bulk *graphstore.BulkInsert) error {
	mr := multipart.NewReader(body.Body, body.Boundary)
	seq := 0
	for n := 1; ; n++ {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return err
			}
			return fmt.Errorf("%w: multipart body: %v", web.ErrBadRequest, err)
		}
		ct := part.Header.Get("Content-Type")
		f, ok := loader.FormatForMediaType(ct)
		if !ok || ct == "" || strings.HasPrefix(ct, "text/plain") {
			if pf, pok := loader.FormatForPath(part.FileName()); pok {
				f, ok = pf, true
			}
		}
		if !ok {
			return fmt.Errorf("%w: part %d (%s): %q (send N-Triples, Turtle or RDF/XML parts)", web.ErrUnsupportedMediaType, n, part.FileName(), ct)
		}
		if seq, err = s.parseDoc(ctx, f, body.Base, part, bulk, seq); err != nil {
			return fmt.Errorf("part %d (%s): %w", n, part.FileName(), err)
		}
	}
}

// graphTriples returns the triples of st decoded with d (the dataset's
// dictionary).
func graphTriples(ctx context.Context, d *graphstore.Dict, st *graphstore.Store) ([]rdf.Triple, error) {
	out := make([]rdf.Triple, 0, st.Stats().Triples)
	err := st.EachTriple(ctx, func(s, p, o graphstore.ID) error {
		out = append(out, rdf.Triple{S: term(d, s), P: term(d, p), O: term(d, o)})
		return nil
	})
	return out, err
}

func term(d *graphstore.Dict, id graphstore.ID) rdf.Term {
	t, _ := d.Term(id)
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

// graphIter streams a graph as terms, decoded with the dataset's
// dictionary. It holds a reference to the generation until Close.
type graphIter struct {
	genCursor // i: the number of calls of Next
	dict      *graphstore.Dict
	ids       *idTriples
	cur       rdf.Triple
	ps, pp    graphstore.ID
}

func (it *graphIter) Next() bool {
	if !it.step() {
		return false
	}
	s, p, o, ok, err := it.ids.next(it.ctx)
	if err != nil || !ok {
		it.stop(err)
		return false
	}
	if s != it.ps || it.cur.S.IsZero() {
		it.cur.S, it.ps = term(it.dict, s), s
	}
	if p != it.pp || it.cur.P.IsZero() {
		it.cur.P, it.pp = term(it.dict, p), p
	}
	it.cur.O = term(it.dict, o)
	return true
}

func (it *graphIter) Triple() rdf.Triple { return it.cur }

// chargedReader charges every byte read to mem (a held account of the
// engine's budgets); a read past a budget fails with its *MemoryError,
// kept in err (and every later read fails with it).
type chargedReader struct {
	r   io.Reader
	mem *exec.Result
	err error
}

func (c *chargedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	if n > 0 {
		if gerr := c.mem.Grow(int64(n)); gerr != nil {
			c.err = gerr
			return 0, gerr
		}
	}
	return n, err
}
