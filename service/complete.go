package service

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/web"
)

// Completion for the console (web.Completer, DESIGN.md §"The console").
//
// Predicates and classes are the dictionary's low ID range, scanned
// whole and ranked by the store's statistics (or, for a constant
// subject, read from its (v, AllPredicates, out) list). IRIs by name or
// label are looked up in a term index: the IRIs sorted by their
// lower-cased text, and their local names and labels sorted likewise.
// The index holds only term references (4 bytes each): keys are decoded
// from the dictionary while searching. It is built in the background
// from the first request (answered without entities, saying so), and
// follows writes: the dictionary only grows and keeps its IDs (even
// through compaction), so the terms added since are indexed as a new,
// small level; past maxLevels levels, one rebuild in the background
// merges them while the old index keeps answering.

// labelPredicates are the predicates whose literal objects are labels.
var labelPredicates = []string{
	"http://www.w3.org/2000/01/rdf-schema#label",
	"http://www.w3.org/2004/02/skos/core#prefLabel",
	"http://www.w3.org/2004/02/skos/core#altLabel",
	"http://xmlns.com/foaf/0.1/name",
	"http://schema.org/name",
	"https://schema.org/name",
	"http://purl.org/dc/terms/title",
	"http://purl.org/dc/elements/1.1/title",
	"http://swat.cse.lehigh.edu/onto/univ-bench.owl#name", // LUBM
}

const (
	// maxLevels is the number of index levels from which a rebuild
	// merges them.
	maxLevels = 8
	// maxSyncLevel is the most new terms indexed while a request waits;
	// more are left to a background rebuild.
	maxSyncLevel = 200_000
	// maxLabelSubjects bounds the subjects one label literal indexes
	// (a literal such as "yes" may label millions).
	maxLabelSubjects = 16
)

// termRef is a dictionary ID in 32 bits: a predicate or class ID with
// the top bit set, else the offset of a vertex ID from FirstVertexID.
type termRef uint32

const lowRef = 1 << 31

func refOf(id graphstore.ID) (termRef, bool) {
	switch {
	case id >= 1 && id <= graphstore.MaxPredicate:
		return termRef(id) | lowRef, true
	case id >= graphstore.FirstVertexID && id-graphstore.FirstVertexID < lowRef:
		return termRef(id - graphstore.FirstVertexID), true
	}
	return 0, false
}

func (r termRef) id() graphstore.ID {
	if r&lowRef != 0 {
		return graphstore.ID(r &^ lowRef)
	}
	return graphstore.FirstVertexID + graphstore.ID(r)
}

// nameEntry indexes an IRI (item) under a text: its own local name (key
// = item) or a label literal (key).
type nameEntry struct{ key, item termRef }

// termLevel indexes the terms of one range of IDs.
type termLevel struct {
	iris  []termRef   // IRIs by lower-cased IRI
	names []nameEntry // by lower-cased local name or label
}

// termIndex is an immutable set of levels covering the IDs 1..low and
// FirstVertexID..vert.
type termIndex struct {
	levels []*termLevel
	low    graphstore.ID
	vert   graphstore.ID // FirstVertexID-1: no vertex
}

// completer keeps the service's term index.
type completer struct {
	mu         sync.Mutex
	idx        *termIndex
	rebuilding bool
}

// Complete implements web.Completer.
func (s *Service) Complete(ctx context.Context, req *web.CompleteRequest) (*web.CompleteAnswer, error) {
	g, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer g.release()
	d := g.ds.Dict()
	var items []scored
	indexing := false
	switch req.Kind {
	case web.CompletePredicate:
		items, err = s.completePredicates(ctx, g, req)
	case web.CompleteClass:
		items = completeLow(d, req, d.IsClass, func(id graphstore.ID) uint64 {
			c, _ := g.ds.Default().Stats().Class(id)
			return c.Instances
		})
	case web.CompleteEntity:
		items, indexing, err = s.completeEntities(ctx, g, req)
	default:
		return nil, fmt.Errorf("%w: unknown completion kind %q", web.ErrBadRequest, req.Kind)
	}
	if err != nil {
		return nil, err
	}
	if len(items) > req.Limit {
		items = items[:req.Limit]
	}
	out := make([]web.Completion, len(items))
	labels := labelIDs(d)
	for i, it := range items {
		out[i] = web.Completion{IRI: it.iri, Label: it.label, Count: it.count}
		if out[i].Label == "" {
			out[i].Label = labelOf(ctx, d, g.ds.Default(), labels, it.id)
		}
	}
	return &web.CompleteAnswer{Items: out, Indexing: indexing}, nil
}

// scored is a candidate completion.
type scored struct {
	id    graphstore.ID
	iri   string
	label string
	key   string
	count uint64
}

// byCount sorts candidates by count, largest first, then by IRI.
func byCount(a, b scored) int {
	if a.count != b.count {
		return cmp.Compare(b.count, a.count)
	}
	return strings.Compare(a.iri, b.iri)
}

// completeLow proposes the predicates or classes (is) of the low ID
// range that match req, ranked by count.
func completeLow(d *graphstore.Dict, req *web.CompleteRequest, is func(graphstore.ID) bool, count func(graphstore.ID) uint64) []scored {
	var out []scored
	n := graphstore.ID(d.NumPredicatesAndClasses())
	for id := graphstore.ID(1); id <= n; id++ {
		if !is(id) {
			continue
		}
		if it, ok := matchIRI(d, id, req); ok {
			it.count = count(id)
			out = append(out, it)
		}
	}
	slices.SortFunc(out, byCount)
	return out
}

// matchIRI returns id as a candidate if it is an IRI matching req's
// namespace and text.
func matchIRI(d *graphstore.Dict, id graphstore.ID, req *web.CompleteRequest) (scored, bool) {
	t, ok := d.Term(id)
	if !ok || t.Kind != rdf.KindIRI {
		return scored{}, false
	}
	if req.Namespace != "" {
		if !strings.HasPrefix(t.Value, req.Namespace) || !hasPrefixFold(t.Value[len(req.Namespace):], req.Text) {
			return scored{}, false
		}
	} else if !hasPrefixFold(iriLocalName(t.Value), req.Text) {
		return scored{}, false
	}
	return scored{id: id, iri: t.Value}, true
}

// completePredicates proposes predicates: of the subject when it is a
// constant, else of the instances of the subject's classes (by the
// class-predicate statistics), else all, ranked by triples.
func (s *Service) completePredicates(ctx context.Context, g *generation, req *web.CompleteRequest) ([]scored, error) {
	d, st := g.ds.Dict(), g.ds.Default()
	stats := st.Stats()
	triples := func(id graphstore.ID) uint64 {
		p, _ := stats.Predicate(id)
		return p.Triples
	}
	if req.Subject != "" {
		v, ok := d.Lookup(rdf.NewIRI(req.Subject))
		if !ok {
			return nil, nil
		}
		preds := map[graphstore.ID]bool{}
		for _, layer := range []*graphstore.Store{st, g.ds.Inferred()} {
			if layer == nil {
				continue
			}
			ps, err := layer.Shard(layer.Owner(v)).AppendEdges(ctx, nil, v, graphstore.AllPredicates, graphstore.Out)
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				preds[p] = true
			}
		}
		return completeLow(d, req, func(id graphstore.ID) bool { return preds[id] }, triples), nil
	}
	if len(req.Classes) > 0 {
		edges := map[graphstore.ID]uint64{}
		for _, c := range req.Classes {
			cid, ok := d.Lookup(rdf.NewIRI(c))
			if !ok {
				continue
			}
			cps := stats.ClassPredicates
			i := sort.Search(len(cps), func(i int) bool { return cps[i].Class >= cid })
			for ; i < len(cps) && cps[i].Class == cid; i++ {
				if cps[i].Dir == graphstore.Out {
					edges[cps[i].Pred] += cps[i].Edges
				}
			}
		}
		if len(edges) > 0 {
			return completeLow(d, req, func(id graphstore.ID) bool { _, ok := edges[id]; return ok },
				func(id graphstore.ID) uint64 { return edges[id] }), nil
		}
	}
	return completeLow(d, req, d.IsPredicate, triples), nil
}

// completeEntities proposes IRIs from the term index; indexing says
// that it is being built (the answer is then empty).
func (s *Service) completeEntities(ctx context.Context, g *generation, req *web.CompleteRequest) (_ []scored, indexing bool, err error) {
	idx, err := s.termIndex(ctx, g)
	if err != nil || idx == nil {
		return nil, idx == nil, err
	}
	d := g.ds.Dict()
	var out []scored
	for _, lv := range idx.levels {
		if req.Namespace != "" {
			out = lv.searchIRIs(d, req, out)
		} else {
			out = lv.searchNames(d, req, out)
		}
	}
	// Levels each gave their first matches in key order: merge them.
	slices.SortFunc(out, func(a, b scored) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.iri, b.iri)
	})
	seen := map[graphstore.ID]bool{}
	k := 0
	for _, it := range out {
		if !seen[it.id] {
			seen[it.id] = true
			out[k] = it
			k++
		}
	}
	return out[:k], false, nil
}

// searchIRIs appends the first req.Limit IRIs of the level that start
// with req.Namespace+req.Text (the text's case ignored).
func (lv *termLevel) searchIRIs(d *graphstore.Dict, req *web.CompleteRequest, out []scored) []scored {
	want := strings.ToLower(req.Namespace + req.Text)
	key := func(r termRef) string {
		t, _ := d.Term(r.id())
		return strings.ToLower(t.Value)
	}
	i := sort.Search(len(lv.iris), func(i int) bool { return key(lv.iris[i]) >= want })
	for n := 0; i < len(lv.iris) && n < req.Limit; i++ {
		t, ok := d.Term(lv.iris[i].id())
		if !ok {
			continue
		}
		k := strings.ToLower(t.Value)
		if !strings.HasPrefix(k, want) {
			break
		}
		if !strings.HasPrefix(t.Value, req.Namespace) {
			continue // the namespace differs in case only
		}
		out = append(out, scored{id: lv.iris[i].id(), iri: t.Value, key: k})
		n++
	}
	return out
}

// searchNames appends the first req.Limit IRIs of the level whose local
// name or a label starts with req.Text (case ignored).
func (lv *termLevel) searchNames(d *graphstore.Dict, req *web.CompleteRequest, out []scored) []scored {
	want := strings.ToLower(req.Text)
	i := sort.Search(len(lv.names), func(i int) bool { k, _ := nameKey(d, lv.names[i]); return k >= want })
	seen := map[termRef]bool{} // an IRI whose name is also its label
	for n := 0; i < len(lv.names) && n < req.Limit; i++ {
		e := lv.names[i]
		k, label := nameKey(d, e)
		if !strings.HasPrefix(k, want) {
			break
		}
		t, ok := d.Term(e.item.id())
		if !ok || seen[e.item] {
			continue
		}
		seen[e.item] = true
		out = append(out, scored{id: e.item.id(), iri: t.Value, label: label, key: k})
		n++
	}
	return out
}

// nameKey returns the text e is indexed under, lower-cased, and the label
// itself when it is one.
func nameKey(d *graphstore.Dict, e nameEntry) (key, label string) {
	t, _ := d.Term(e.key.id())
	if e.key == e.item {
		return strings.ToLower(iriLocalName(t.Value)), ""
	}
	return strings.ToLower(t.Value), t.Value
}

// termIndex returns an index covering g's dictionary, building what is
// missing (see the comment at the top): nil while the first build runs
// in the background.
func (s *Service) termIndex(ctx context.Context, g *generation) (*termIndex, error) {
	c := &s.complete
	c.mu.Lock()
	defer c.mu.Unlock()
	d := g.ds.Dict()
	low, vert := graphstore.ID(d.NumPredicatesAndClasses()), d.MaxID()
	if vert < graphstore.FirstVertexID {
		vert = graphstore.FirstVertexID - 1
	}
	idx := c.idx
	if idx == nil {
		s.rebuildTermIndex(g)
		return nil, nil
	}
	if low <= idx.low && vert <= idx.vert {
		return idx, nil
	}
	if uint64(low-min(idx.low, low))+uint64(vert-min(idx.vert, vert)) <= maxSyncLevel {
		lv, err := buildLevel(ctx, g, idx.low+1, low, idx.vert+1, vert)
		if err != nil {
			return nil, err
		}
		nidx := &termIndex{levels: append(slices.Clip(idx.levels), lv), low: max(idx.low, low), vert: max(idx.vert, vert)}
		c.idx = nidx
		if len(nidx.levels) > maxLevels {
			s.rebuildTermIndex(g)
		}
		return nidx, nil
	}
	s.rebuildTermIndex(g)
	return idx, nil
}

// rebuildTermIndex starts one background build of the whole index over
// g's dictionary (the caller holds complete.mu and a reference of g).
func (s *Service) rebuildTermIndex(g *generation) {
	c := &s.complete
	if c.rebuilding || !g.tryRef() {
		return
	}
	c.rebuilding = true
	go func() {
		defer g.release()
		d := g.ds.Dict()
		low, vert := graphstore.ID(d.NumPredicatesAndClasses()), max(d.MaxID(), graphstore.FirstVertexID-1)
		lv, err := buildLevel(context.Background(), g, 1, low, graphstore.FirstVertexID, vert)
		c.mu.Lock()
		defer c.mu.Unlock()
		c.rebuilding = false
		if err == nil && (c.idx == nil || c.idx.low <= low && c.idx.vert <= vert) {
			c.idx = &termIndex{levels: []*termLevel{lv}, low: low, vert: vert}
		}
	}()
}

// buildLevel indexes the terms with IDs in [lowFrom, lowTo] and
// [vertFrom, vertTo].
func buildLevel(ctx context.Context, g *generation, lowFrom, lowTo, vertFrom, vertTo graphstore.ID) (*termLevel, error) {
	d, st := g.ds.Dict(), g.ds.Default()
	labels := labelIDs(d)
	type keyed struct {
		key string
		e   nameEntry
	}
	var iris, names []keyed
	var subs []graphstore.ID
	visit := func(id graphstore.ID) error {
		ref, ok := refOf(id)
		if !ok {
			return nil
		}
		t, ok := d.Term(id)
		if !ok {
			return nil
		}
		switch t.Kind {
		case rdf.KindIRI:
			iris = append(iris, keyed{strings.ToLower(t.Value), nameEntry{ref, ref}})
			names = append(names, keyed{strings.ToLower(iriLocalName(t.Value)), nameEntry{ref, ref}})
		case rdf.KindLiteral:
			if len(labels) == 0 || id < graphstore.FirstVertexID {
				return nil
			}
			key := ""
			for _, p := range labels {
				var err error
				subs, err = st.Shard(st.Owner(id)).AppendEdges(ctx, subs[:0], id, p, graphstore.In)
				if err != nil {
					return err
				}
				for i, sub := range subs {
					sr, ok := refOf(sub)
					if i == maxLabelSubjects || !ok {
						break
					}
					if key == "" {
						key = strings.ToLower(t.Value)
					}
					names = append(names, keyed{key, nameEntry{ref, sr}})
				}
			}
		}
		return nil
	}
	n := 0
	for _, r := range [][2]graphstore.ID{{lowFrom, lowTo}, {vertFrom, vertTo}} {
		for id := r[0]; id <= r[1] && r[0] > 0; id++ {
			if n++; n%65536 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			if err := visit(id); err != nil {
				return nil, err
			}
		}
	}
	byKey := func(a, b keyed) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.e.item, b.e.item)
	}
	slices.SortFunc(iris, byKey)
	slices.SortFunc(names, byKey)
	lv := &termLevel{iris: make([]termRef, len(iris)), names: make([]nameEntry, len(names))}
	for i, k := range iris {
		lv.iris[i] = k.e.item
	}
	for i, k := range names {
		lv.names[i] = k.e
	}
	return lv, nil
}

// labelIDs returns the IDs of the label predicates in d.
func labelIDs(d *graphstore.Dict) []graphstore.ID {
	var ids []graphstore.ID
	for _, p := range labelPredicates {
		if id, ok := d.Lookup(rdf.NewIRI(p)); ok && d.IsPredicate(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// labelOf returns a label of id ("" if none).
func labelOf(ctx context.Context, d *graphstore.Dict, st *graphstore.Store, labels []graphstore.ID, id graphstore.ID) string {
	var buf []graphstore.ID
	for _, p := range labels {
		buf, _ = st.Shard(st.Owner(id)).AppendEdges(ctx, buf[:0], id, p, graphstore.Out)
		for _, o := range buf {
			if t, ok := d.Term(o); ok && t.Kind == rdf.KindLiteral {
				return t.Value
			}
		}
	}
	return ""
}

// iriLocalName is the part of an IRI after its last '#', '/' or ':'.
func iriLocalName(iri string) string {
	return iri[strings.LastIndexAny(iri, "#/:")+1:]
}

// hasPrefixFold reports whether s starts with prefix, ignoring case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
