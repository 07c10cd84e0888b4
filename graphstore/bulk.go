package graphstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wukongd/wukongd/internal/cpugate"
	"github.com/wukongd/wukongd/rdf"
)

// Bulk insertion (DESIGN.md §9, "Bulk writes"): a Graph Store POST or PUT
// of millions of triples, committed as one change.
//
// A BulkInsert is filled before the writer's lock is taken, by as many
// goroutines as parse the body: each batch's terms are looked up in the
// dictionary of the version the request started on (a read-only Dict, safe
// for concurrent use) and kept as IDs; a term the dictionary does not
// know, or knows without the role its position needs (a predicate, a
// class), is kept as a pending term. ApplyBulk then, under the lock and in
// the order of the input, gives the pending terms their IDs exactly as
// Apply would (so the same input gives the same IDs and the same bytes as
// through Apply), sorts the triples in parallel, finds in parallel which
// are not in the graph yet, and writes only those through the delta — a
// triple already there costs a lookup, not a write. It returns the change
// it made as a GraphChange of the triples it added (in input order), which
// is what a log records and what replaying through Apply repeats.

// pendingID marks an ID slot of a bulkPart that names one of its pending
// terms (the low bits index bulkPart.terms). Real IDs are below 2^40.
const pendingID = ID(1) << 63

// BulkInsert holds the triples of one bulk insertion as IDs. Add and
// AddRaw are safe for concurrent use; the batches of one seq must come from
// one goroutine, in order.
type BulkInsert struct {
	dict *Dict
	lin  *lineage

	mu    sync.Mutex
	parts []*bulkPart // by seq

	// probes counts the lookups in the base's table made without its
	// fingerprints: once they pass a table's slots/8 (a lookup, hit or
	// miss, passes ~1.5 or ~6 entries read at random; the build reads
	// each entry once, in order), the goroutine that counts the last
	// builds them (dict_fp.go) and the lookups after use them. A small
	// body never pays for the build.
	probes atomic.Int64
}

// probed counts a lookup in the base's table made without fingerprints.
func (b *BulkInsert) probed() {
	d := b.dict
	if d.fp == nil {
		return
	}
	if n := b.probes.Add(1); n == max(4096, int64(d.slots/8)) {
		_ = d.buildFingerprints() // on failure lookups go on without
	}
}

// bulkPart is the triples of one seq: 3 IDs each (pendingID|i for
// terms[i]).
type bulkPart struct {
	bulk  *BulkInsert
	ids   []ID
	terms []rdf.Term
	roles []byte // the role terms[i] needs, | notInBase if the base dictionary lacks it
	// seen holds the pending reference of each raw term (with the role
	// its position needs) the part kept as pending, by rawKey: a chunk of
	// LUBM names each of its terms about six times, and a term the
	// dictionary lacks costs a full probe of the base's hash table and a
	// copy. Dropped at the part's end (EndPart).
	seen map[string]ID
	key  []byte
}

// notInBase marks a pending term that the base dictionary does not hold
// (not only a role it lacks): under the lock only the overlay is searched
// for it.
const notInBase byte = 0x80

// NewBulkInsert returns an empty bulk insertion whose terms are looked up
// in d's dictionary. d must stay open until ApplyBulk returns.
func (d *Dataset) NewBulkInsert() *BulkInsert {
	return &BulkInsert{dict: d.dict, lin: d.lin}
}

func (b *BulkInsert) part(seq int) *bulkPart {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.parts) <= seq {
		b.parts = append(b.parts, nil)
	}
	p := b.parts[seq]
	if p == nil {
		p = &bulkPart{bulk: b}
		b.parts[seq] = p
	}
	return p
}

// Len returns the triples added so far.
func (b *BulkInsert) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, p := range b.parts {
		if p != nil {
			n += len(p.ids) / 3
		}
	}
	return n
}

// AddRaw adds a batch of triples given as bytes (not retained) to part
// seq: parts are inserted in seq order, and a part's batches in the order
// they were added. Language tags are lower-cased.
func (b *BulkInsert) AddRaw(seq int, batch []RawTriple) error {
	p := b.part(seq)
	p.grow(len(batch))
	var prev RawTerm
	var prevID ID
	for i := range batch {
		t := &batch[i]
		if t.P.Kind != rdf.KindIRI {
			return fmt.Errorf("the predicate %q is not an IRI", t.P.Value)
		}
		// Statements come grouped by subject: reuse the previous one's.
		if i > 0 && t.S.Kind == prev.Kind && t.S.Kind != rdf.KindLiteral && string(t.S.Value) == string(prev.Value) {
			p.ids = append(p.ids, prevID)
		} else {
			id, err := p.resolveRaw(b.dict, &t.S, 0)
			if err != nil {
				return err
			}
			p.ids = append(p.ids, id)
			prev, prevID = t.S, id
		}
		id, err := p.resolveRaw(b.dict, &t.P, rolePredicate)
		if err != nil {
			return err
		}
		p.ids = append(p.ids, id)
		var orole byte
		if string(t.P.Value) == rdf.RDFType {
			orole = roleClass
		}
		if id, err = p.resolveRaw(b.dict, &t.O, orole); err != nil {
			return err
		}
		p.ids = append(p.ids, id)
	}
	return nil
}

// EndPart drops what part seq keeps only while it is being added to
// (its terms' cache): no more batches of seq follow.
func (b *BulkInsert) EndPart(seq int) {
	p := b.part(seq)
	p.seen, p.key = nil, nil
}

// resolveRaw is resolve for a term given as bytes, through the part's
// cache of the terms it kept as pending before: a term the dictionary
// lacks, seen again in the part, gets the same pending reference without
// a probe of the base's hash table (which, for a term it lacks, reads
// ~6 random entries) nor another copy. Terms the dictionary knows are
// not cached (their probe finds them at once, and a body of known terms
// would pay the map for nothing). Under the lock, bulkIDs gives a pending
// term its ID at its first reference, which is the term's first
// occurrence in the part, so IDs are handed out in the same order as
// without the cache.
func (p *bulkPart) resolveRaw(d *Dict, t *RawTerm, role byte) (ID, error) {
	var k []byte
	if p.seen != nil {
		k = p.rawKey(t, role)
		if id, ok := p.seen[string(k)]; ok {
			return id, nil
		}
	}
	id, err := p.resolve(d, rawViewTerm(t), role)
	if err != nil || id&pendingID == 0 {
		return id, err
	}
	if p.seen == nil {
		p.seen = make(map[string]ID, 1024)
		k = p.rawKey(t, role)
	}
	p.seen[string(k)] = id
	return id, nil
}

// rawKey returns t's key in the part's cache (valid until the next call).
func (p *bulkPart) rawKey(t *RawTerm, role byte) []byte {
	k := append(p.key[:0], byte(t.Kind), role)
	if t.Kind == rdf.KindLiteral {
		k = binary.AppendUvarint(k, uint64(len(t.Value)))
		k = binary.AppendUvarint(k, uint64(len(t.Datatype)))
		k = append(k, t.Value...)
		k = append(k, t.Datatype...)
		k = append(k, t.Lang...)
	} else {
		k = append(k, t.Value...)
	}
	p.key = k
	return k
}

// Add is AddRaw for terms given as strings.
func (b *BulkInsert) Add(seq int, batch []rdf.Triple) error {
	p := b.part(seq)
	p.grow(len(batch))
	for i := range batch {
		t := &batch[i]
		if t.P.Kind != rdf.KindIRI {
			return fmt.Errorf("the predicate %v is not an IRI", t.P)
		}
		var orole byte
		if t.P.Value == rdf.RDFType {
			orole = roleClass
		}
		for j, x := range [3]rdf.Term{t.S, t.P, t.O} {
			role := [3]byte{0, rolePredicate, orole}[j]
			id, err := p.resolve(b.dict, x, role)
			if err != nil {
				return err
			}
			p.ids = append(p.ids, id)
		}
	}
	return nil
}

// grow makes room for n more triples: a part's first batch reserves for a
// few more (a chunk's batches: 4,096 triples or more at once, when the
// batch is a full one of ParseChunks' 256), later ones double.
func (p *bulkPart) grow(n int) {
	if cap(p.ids)-len(p.ids) < 3*n {
		want := max(3*n*8, cap(p.ids))
		if cap(p.ids) == 0 && n >= 256 {
			want = max(want, 3*4096*8)
		}
		p.ids = slices.Grow(p.ids, want)
	}
}

// rawViewTerm views a RawTerm as an rdf.Term without copying (the view
// lives during the call that made it; resolve copies what it keeps).
func rawViewTerm(t *RawTerm) rdf.Term {
	v := rawView(t)
	return rdf.Term{Kind: v.kind, Value: v.value, Datatype: v.datatype, Lang: v.lang}
}

// resolve returns t's ID if the dictionary knows it with role, else a
// pending reference to a copy of t.
func (p *bulkPart) resolve(d *Dict, t rdf.Term, role byte) (ID, error) {
	switch t.Kind {
	case rdf.KindIRI, rdf.KindBlank, rdf.KindLiteral:
	default:
		return 0, fmt.Errorf("%v is not an RDF term", t)
	}
	id, inBase := d.lookupBase(t)
	if p.bulk != nil && d.fingerprints() == nil {
		p.bulk.probed()
	}
	ok := inBase
	if d.ov != nil {
		id, ok = d.ov.lookup(d, t, id, inBase)
	}
	if ok && (role == 0 || d.IsPredicateOrClass(id) && d.role(id)&role == role) {
		return id, nil
	}
	k := termKey(t)
	k.Value, k.Datatype, k.Lang = strings.Clone(k.Value), strings.Clone(k.Datatype), strings.Clone(k.Lang)
	p.terms = append(p.terms, k)
	if !inBase {
		role |= notInBase
	}
	p.roles = append(p.roles, role)
	return pendingID | ID(len(p.terms)-1), nil
}

// bulkRec is an inserted triple and its ordinal in the input.
type bulkRec struct {
	s, p, o ID
	seq     uint64
}

func cmpBulkRec(a, b bulkRec) int {
	if c := cmp.Compare(a.s, b.s); c != 0 {
		return c
	}
	if c := cmp.Compare(a.p, b.p); c != 0 {
		return c
	}
	if c := cmp.Compare(a.o, b.o); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// ApplyBulk is Apply of one change of graph (zero: the default graph):
// emptied first if clear (a missing named graph is created), then b's
// triples added (a missing named graph is created by a non-empty b). It
// returns the new version and the change it made: Clear as given and, as
// Insert, the triples of b that were not in the graph, in input order
// (each once) — what replaying through Apply repeats. b is consumed.
func (d *Dataset) ApplyBulk(ctx context.Context, graph rdf.Term, clear bool, b *BulkInsert) (*Dataset, GraphChange, error) {
	if !graph.IsZero() {
		if err := checkGraphName(graph); err != nil {
			return nil, GraphChange{}, fmt.Errorf("cannot change the dataset: %w", err)
		}
	}
	var change GraphChange
	body := func(r *applyRun) error {
		c, err := r.bulk(ctx, graph, clear, b)
		change = c
		return err
	}
	nd, err := d.applyWith(ctx, false, false, nil, body)
	if err == errNotNewest {
		c, cerr := d.compact(ctx)
		if cerr != nil {
			return nil, GraphChange{}, fmt.Errorf("cannot change an older version of the dataset: %w", cerr)
		}
		defer c.Close()
		nd, err = c.applyWith(ctx, false, false, nil, body)
	}
	if err != nil {
		return nil, GraphChange{}, err
	}
	nd.version = d.version + 1
	return nd, change, nil
}

func (r *applyRun) bulk(ctx context.Context, graph rdf.Term, clear bool, b *BulkInsert) (GraphChange, error) {
	change := GraphChange{Graph: graph, Clear: clear}
	g := r.graph(graph)
	if clear {
		if err := r.empty(g); err != nil {
			return change, err
		}
		g.exists = true
	}
	recs, err := r.bulkIDs(ctx, b)
	if err != nil {
		return change, err
	}
	if len(recs) > 0 && g.st == nil {
		if err := r.empty(g); err != nil {
			return change, err
		}
	}
	if len(recs) > 0 {
		g.exists = true
	}
	if g.exists && !g.name.IsZero() {
		if _, err := r.id(ctx, g.name, 0); err != nil {
			return change, fmt.Errorf("cannot change the dataset: graph name %v: %w", g.name, err)
		}
	}
	if len(recs) == 0 {
		return change, nil
	}
	recs, err = newTriples(ctx, g.st, recs)
	if err != nil {
		return change, err
	}
	add := make([]idTriple, len(recs))
	for i, x := range recs {
		add[i] = idTriple{x.s, x.p, x.o}
	}
	if err := r.write(ctx, g, add, true); err != nil {
		return change, fmt.Errorf("cannot change the dataset: %w", err)
	}
	add = nil
	// The log's record: the triples added, in input order, as IDs; the
	// vertices this run made (most terms of a body of new data) decode
	// through the overlay by index, the others once each, now.
	sortBulkRecs(recs, true)
	dict := r.dict.tip()
	ov := dict.ov
	ov.mu.RLock()
	it := &insertTerms{first: FirstVertexID + ID(ov.nv0) + ID(r.undo.dict.v), made: ov.v[r.undo.dict.v:dict.ovV], other: map[ID]rdf.Term{}}
	ov.mu.RUnlock()
	change.InsertIDs = make([]IDTriple, len(recs))
	for i, x := range recs {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return change, err
			}
		}
		change.InsertIDs[i] = IDTriple{x.s, x.p, x.o}
		for _, id := range [3]ID{x.s, x.p, x.o} {
			if id-it.first < ID(len(it.made)) && id >= it.first {
				continue
			}
			if _, ok := it.other[id]; !ok {
				t, ok := dict.Term(id)
				if !ok {
					return change, fmt.Errorf("BUG: bulk insert: ID %d has no term", id)
				}
				it.other[id] = t
			}
		}
	}
	change.terms = it
	return change, nil
}

// bulkIDs gives b's pending terms their IDs in input order and returns
// its triples sorted by (s, p, o) and distinct (each with the ordinal of
// its first occurrence).
func (r *applyRun) bulkIDs(ctx context.Context, b *BulkInsert) ([]bulkRec, error) {
	sameLineage := b.lin == r.d.lin
	// IDs looked up before the lock that have changed since: a vertex
	// that became a predicate or class (an alias), or, in a compacted
	// lineage, any term (looked up again by its term).
	moved := map[ID]ID{}
	if sameLineage {
		if ov := r.dict.ov; ov != nil {
			ov.mu.RLock()
			from := 0
			if b.dict.ov == ov {
				from = b.dict.ovAlias
			}
			for _, a := range ov.aliases[from:] {
				moved[a.from] = a.to
			}
			ov.mu.RUnlock()
		}
	}
	translate := func(id ID) (ID, error) {
		if sameLineage {
			if to, ok := moved[id]; ok {
				return to, nil
			}
			return id, nil
		}
		if to, ok := moved[id]; ok {
			return to, nil
		}
		t, ok := b.dict.Term(id)
		if !ok {
			return 0, fmt.Errorf("BUG: bulk insert: ID %d has no term", id)
		}
		role := byte(0)
		if b.dict.IsPredicateOrClass(id) {
			role = b.dict.role(id)
		}
		to, err := r.id(ctx, t, role)
		if err != nil {
			return 0, err
		}
		moved[id] = to
		return to, nil
	}
	n, pending := 0, 0
	for _, p := range b.parts {
		if p != nil {
			n += len(p.ids) / 3
			pending += len(p.terms)
		}
	}
	if pending >= 4096 {
		r.dict.ov.reserve(pending)
	}
	recs := make([]bulkRec, 0, n)
	var seq uint64
	for pi, p := range b.parts {
		if p == nil {
			continue
		}
		// A pending term's ID, once given (its later references in the
		// part; an alias this run makes later is applied below).
		given := make([]ID, len(p.terms))
		for i := 0; i+2 < len(p.ids); i += 3 {
			if seq%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			var x [3]ID
			for j := range 3 {
				id := p.ids[i+j]
				var err error
				if id&pendingID != 0 {
					k := id &^ pendingID
					if given[k] != 0 {
						id = given[k]
					} else if role := p.roles[k]; role&notInBase != 0 && sameLineage {
						id, err = r.idNew(ctx, p.terms[k], role&^notInBase)
					} else {
						id, err = r.id(ctx, p.terms[k], role&^notInBase)
					}
					given[k] = id
				} else if len(moved) > 0 || !sameLineage {
					id, err = translate(id)
				}
				if err != nil {
					return nil, fmt.Errorf("cannot change the dataset: triple %d: %w", seq+1, err)
				}
				x[j] = id
			}
			recs = append(recs, bulkRec{x[0], x[1], x[2], seq})
			seq++
		}
		b.parts[pi] = nil // its memory goes as the records grow
	}
	// A vertex this run made a predicate or class: the triples before
	// hold its old ID.
	r.realias(r.undo.dict.aliases, func(sub func(ID) ID) {
		for i, x := range recs {
			recs[i].s, recs[i].p, recs[i].o = sub(x.s), sub(x.p), sub(x.o)
		}
	})
	return sortBulk(ctx, recs), ctx.Err()
}

// bulkWorkers is how many goroutines sort and check a bulk insertion.
func bulkWorkers(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/65536))
}

// sortBulk sorts recs by (s, p, o, seq) and keeps the first of each
// triple, in parallel over ranges of subjects.
func sortBulk(ctx context.Context, recs []bulkRec) []bulkRec {
	w := bulkWorkers(len(recs))
	if w == 1 {
		sortBulkRecs(recs, false)
		return compactBulk(recs)
	}
	// Split by subject at quantiles of a sample, so the concatenation of
	// the sorted ranges is sorted.
	sample := make([]ID, 0, len(recs)/1024+1)
	for i := 0; i < len(recs); i += 1024 {
		sample = append(sample, recs[i].s)
	}
	slices.Sort(sample)
	bounds := make([]ID, w-1)
	for i := range bounds {
		bounds[i] = sample[(i+1)*len(sample)/w]
	}
	bucket := func(s ID) int {
		i, _ := slices.BinarySearch(bounds, s+1) // the first bound > s
		return i
	}
	counts := make([]int, w+1)
	for i := range recs {
		counts[bucket(recs[i].s)+1]++
	}
	for i := 1; i <= w; i++ {
		counts[i] += counts[i-1]
	}
	out := make([]bulkRec, len(recs))
	next := slices.Clone(counts[:w])
	for _, x := range recs {
		k := bucket(x.s)
		out[next[k]] = x
		next[k]++
	}
	var wg sync.WaitGroup
	parts := make([][]bulkRec, w)
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cpugate.Default.Enter()
			defer cpugate.Default.Leave()
			part := out[counts[k]:counts[k+1]]
			if ctx.Err() == nil {
				sortBulkRecs(part, false)
			}
			parts[k] = compactBulk(part)
		}()
	}
	wg.Wait()
	recs = recs[:0]
	for _, p := range parts {
		recs = append(recs, p...)
	}
	return recs
}

// compactBulk keeps the first record of each triple (recs sorted).
func compactBulk(recs []bulkRec) []bulkRec {
	w := 0
	for i, x := range recs {
		if i > 0 && x.s == recs[w-1].s && x.p == recs[w-1].p && x.o == recs[w-1].o {
			continue
		}
		recs[w] = x
		w++
	}
	return recs[:w]
}

// newTriples returns the records of recs (sorted, distinct) whose
// triples are not in st, checking ranges of subjects in parallel. The
// store is only read (its writer is the caller, not writing meanwhile).
func newTriples(ctx context.Context, st *Store, recs []bulkRec) ([]bulkRec, error) {
	w := bulkWorkers(len(recs))
	cuts := make([]int, w+1)
	cuts[w] = len(recs)
	for k := 1; k < w; k++ {
		c := k * len(recs) / w
		for c < len(recs) && c > 0 && recs[c].s == recs[c-1].s {
			c++ // a subject's (s, p) groups stay in one range
		}
		cuts[k] = max(c, cuts[k-1])
	}
	keep := make([]int, w)
	var wg sync.WaitGroup
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cpugate.Default.Enter()
			defer cpugate.Default.Leave()
			part := recs[cuts[k]:cuts[k+1]]
			var list []ID
			kept := 0
			for i, n := 0, 0; i < len(part); n++ {
				if n%1024 == 1023 {
					if ctx.Err() != nil {
						return
					}
					cpugate.Default.Yield()
				}
				s, p := part[i].s, part[i].p
				j := i
				for j < len(part) && part[j].s == s && part[j].p == p {
					j++
				}
				list = st.tipList(list[:0], st.Owner(s), MakeKey(s, p, Out))
				for _, x := range part[i:j] {
					if _, ok := slices.BinarySearch(list, x.o); !ok {
						part[kept] = x
						kept++
					}
				}
				i = j
			}
			keep[k] = kept
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := recs[:0]
	for k := range w {
		out = append(out, recs[cuts[k]:cuts[k]+keep[k]]...)
	}
	return out, nil
}
