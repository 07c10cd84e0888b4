package reason

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Options tune a materialization.
type Options struct {
	// Workers is the number of goroutines (default GOMAXPROCS).
	Workers int
	// IsLiteral reports whether an ID is a literal (which cannot be a
	// subject); nil: no ID is.
	IsLiteral func(ID) bool
	// Maintainable indexes every fact by subject and object, which
	// Maintain needs to rederive (about 50 bytes more per fact).
	Maintainable bool
	// Distinct says explicit holds no triple twice (a store's triples, as
	// LoadOntology reads them). Materialize then keeps the explicit
	// triples whose predicate no rule derives (most of a graph's: on
	// LUBM, takesCourse, name, teacherOf, ...) out of the hash sets:
	// no conclusion can equal one, so they need no probe, only a list
	// (Closure.plain). Ignored with Maintainable or owl:sameAs.
	Distinct bool
}

// Stats describe a materialization.
type Stats struct {
	Explicit uint64 // distinct explicit triples
	Inferred uint64 // triples derived that are not explicit
	Rounds   int    // semi-naive rounds until nothing was new
}

// Closure is the set of facts of a materialization (explicit and
// inferred) with the join indexes its ontology needs. It implements Facts.
// Its methods are not safe for concurrent use; its Facts reads are while
// nothing changes it.
type Closure struct {
	o       *Ontology
	opts    Options
	parts   []*tripleSet
	idx     []*joinIndex // with Maintainable or sameAs; else bulk
	bulk    *bulkIndex
	workers int
	tb      *typeBits // nil: type facts live in parts like the rest

	// plain holds the explicit facts whose predicate no rule derives
	// (Options.Distinct): they are in neither parts nor tb, and no
	// conclusion is one of them. nPlain counts them; plainSet, built the
	// first time Has or remove needs it, then replaces the list.
	plain     []packed // every explicit fact, the others among them (filter with isPlain)
	nPlain    int
	plainOnce sync.Once
	plainSet  *tripleSet
}

// isPlain reports whether the fact k (closedBit clear) lives in c.plain.
func (c *Closure) isPlain(k packed) bool {
	return c.plain != nil && !c.o.derives(ID(k.hi&(1<<predBits-1)))
}

// plainFacts returns the set of the plain facts, building it once.
func (c *Closure) plainFacts() *tripleSet {
	c.plainOnce.Do(func() {
		set := newTripleSet(c.nPlain)
		for _, k := range c.plain {
			if c.isPlain(k) {
				set.addKey(k, hashPacked(k))
			}
		}
		c.plainSet = set
	})
	return c.plainSet
}

type idxKey struct{ p, x ID }

// joinIndex is one partition (by vertex) of the join indexes.
type joinIndex struct {
	out map[idxKey][]ID // (p, s) → o, for o.outIdx[p]
	in  map[idxKey][]ID // (p, o) → s, for o.inIdx[p]
	inc map[ID][]Triple // x → facts with x as subject or object (sameAs only)
}

const partBits = 6 // 64 partitions of the fact set

// NewClosure returns an empty closure for ontology o.
func NewClosure(o *Ontology, opts Options) *Closure { return newClosure(o, opts) }

// newClosure returns an empty closure for ontology o whose type facts
// about the vertices of ts's ID range are kept as bits (typeBits).
func newClosure(o *Ontology, opts Options, ts ...[]Triple) *Closure {
	w := opts.Workers
	if w < 1 {
		w = runtime.GOMAXPROCS(0)
	}
	c := &Closure{o: o, opts: opts, workers: w, parts: make([]*tripleSet, 1<<partBits), idx: make([]*joinIndex, w)}
	for i := range c.parts {
		c.parts[i] = newTripleSet(1024)
	}
	if o.sameAs || opts.Maintainable {
		for i := range c.idx {
			c.idx[i] = &joinIndex{out: map[idxKey][]ID{}, in: map[idxKey][]ID{}, inc: map[ID][]Triple{}}
		}
	} else {
		c.idx = nil
		c.bulk = newBulkIndex(o)
	}
	c.tb = newTypeBits(o, ts...)
	return c
}

// Materialize computes the closure of explicit under o. It returns the
// closure (explicit and inferred facts) and the inferred triples (those
// not explicit), in no particular order.
func Materialize(ctx context.Context, o *Ontology, explicit []Triple, opts Options) (*Closure, []Triple, Stats, error) {
	if err := o.fits(); err != nil {
		return nil, nil, Stats{}, err
	}
	c := newClosure(o, opts, explicit)
	ks := c.packAll(explicit)
	if opts.Distinct && !opts.Maintainable && !o.sameAs {
		c.plain = ks
	}
	hashed := 0 // the explicit facts the sets hold
	for _, k := range ks {
		if (c.tb == nil || !c.tb.holdsKey(k)) && !c.isPlain(k) {
			hashed++
		}
	}
	for i := range c.parts { // those and about half again inferred, without regrowing
		c.parts[i] = newTripleSet(3 * hashed / (2 * len(c.parts)))
	}
	st := Stats{Explicit: uint64(c.insertPacked(ks).len() + c.nPlain)}
	// The first round fires the explicit triples in their given order (a
	// store gives a subject's triples together, which router.recent
	// exploits), not in the sets' hash order; a duplicate fires twice,
	// to no effect.
	inferred, rounds, err := c.runFrom(ctx, keys{ks}, true)
	if err != nil {
		return nil, nil, Stats{}, err
	}
	st.Inferred, st.Rounds = uint64(inferred.len()), rounds
	return c, inferred.triples(), st, nil
}

// Len returns the number of facts.
func (c *Closure) Len() int {
	n := c.nPlain
	if c.plainSet != nil {
		n = c.plainSet.n
	}
	for _, p := range c.parts {
		n += p.n
	}
	if c.tb != nil {
		n += c.tb.count()
	}
	return n
}

// Each calls fn with every fact.
func (c *Closure) Each(fn func(Triple)) {
	if c.plainSet != nil {
		c.plainSet.each(fn)
	} else {
		for _, k := range c.plain {
			if c.isPlain(k) {
				fn(k.triple())
			}
		}
	}
	for _, p := range c.parts {
		p.each(fn)
	}
	if c.tb != nil {
		c.tb.each(fn)
	}
}

func partOf(h uint64) int { return int(h >> (64 - partBits)) }

func (c *Closure) idxOf(x ID) *joinIndex {
	return c.idx[int((uint64(x)*0x9e3779b97f4a7c15)>>32)%len(c.idx)]
}

// Has reports whether t is a fact.
func (c *Closure) Has(t Triple) bool { return c.hasKey(pack(t)) }

// Objects implements Facts.
func (c *Closure) Objects(s, p ID) []ID {
	if bx := c.bulk; bx != nil {
		if i := slotOf(bx.outSlot, bx.outMap, p); i >= 0 {
			return bx.slots[i].row(s)
		}
		return nil
	}
	return c.idxOf(s).out[idxKey{p, s}]
}

// Subjects implements Facts.
func (c *Closure) Subjects(p, o ID) []ID {
	if bx := c.bulk; bx != nil {
		if i := slotOf(bx.inSlot, bx.inMap, p); i >= 0 {
			return bx.slots[i].row(o)
		}
		return nil
	}
	return c.idxOf(o).in[idxKey{p, o}]
}

// Incident implements Facts.
func (c *Closure) Incident(x ID, fn func(Triple)) {
	if c.idx == nil {
		panic("BUG: Incident on a closure without the full index (neither Maintainable nor sameAs)")
	}
	for _, t := range c.idxOf(x).inc[x] {
		fn(t)
	}
}

// forWorkers runs fn(w, i) for i in 0..n-1 on the workers (w is the
// worker's number).
func (c *Closure) forWorkers(n int, fn func(w, i int)) {
	if n == 1 || c.workers == 1 { // small changes: no goroutines
		for i := range n {
			fn(0, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(c.workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(w, i)
			}
		}()
	}
	wg.Wait()
}

// closedBit marks a conclusion in a delta whose "super" consequences
// were emitted with it by the same rule firing: a type (x type d) emitted
// with every superclass of d (cax-sco from a closed table: supers, domains,
// ranges), an edge (s q o) emitted as a superproperty q of p with every
// consequence of q's superproperties, domains, ranges, inverses and
// symmetry (they are among p's). Firing such a fact again would emit only
// those conclusions once more, so the firer skips them (fire's closed
// argument): about half the conclusions on LUBM. It lives in the unused
// top bit of the predicate field (predicates are < 2^23) and is cleared
// before a key goes into a set.
const closedBit = 1 << (predBits - 1)

func (k packed) open() packed { return packed{k.hi &^ closedBit, k.lo} }

func (k packed) closed() bool { return k.hi&closedBit != 0 }

// keysOf packs ts, dropping those with S == 0.
func keysOf(ts []Triple) []packed {
	ks := make([]packed, 0, len(ts))
	for _, t := range ts {
		if t.S == 0 {
			continue
		}
		checkFits(t)
		ks = append(ks, pack(t))
	}
	return ks
}

// keys is a list of blocks of keys: rounds hand their new facts on as
// the blocks they were routed in, without copying.
type keys [][]packed

func (ks keys) len() int {
	n := 0
	for _, b := range ks {
		n += len(b)
	}
	return n
}

// chunks splits ks into pieces of at most fireChunk keys.
func (ks keys) chunks() [][]packed {
	var r [][]packed
	for _, b := range ks {
		for lo := 0; lo < len(b); lo += fireChunk {
			r = append(r, b[lo:min(len(b), lo+fireChunk)])
		}
	}
	return r
}

// triples unpacks ks (closedBit cleared), in parallel over blocks.
func (ks keys) triples() []Triple {
	r := make([]Triple, ks.len())
	var wg sync.WaitGroup
	off := 0
	for _, b := range ks.chunks() {
		dst := r[off : off+len(b)]
		off += len(b)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, k := range b {
				dst[i] = k.open().triple()
			}
		}()
	}
	wg.Wait()
	return r
}

// router collects one worker's conclusions by partition, in blocks that
// grow geometrically to routeBlock keys and are then chained, so that a
// big round copies nothing and a small one allocates little. With
// recent (big rounds), a conclusion equal to one of the last few
// thousand routed to the same slot is dropped before it costs a probe of
// the (much bigger, cache-cold) fact set: the explicit triples come by
// subject, so one subject's domain types repeat back to back.
type router struct {
	cur    [][]packed   // [partition] the block being filled
	blocks [][][]packed // [partition] full blocks
	recent []packed     // direct-mapped by hash; nil: off
	// tb: type facts it holds are added on the spot, and the new ones
	// kept in fresh (nil: routed like the rest).
	tb    *typeBits
	fresh chain
}

// chain is a list of keys in blocks that grow to routeBlock keys and are
// then chained (appending never copies).
type chain struct {
	cur    []packed
	blocks [][]packed
}

func (ch *chain) add(k packed) {
	if len(ch.cur) == cap(ch.cur) {
		if cap(ch.cur) > 0 {
			ch.blocks = append(ch.blocks, ch.cur)
		}
		ch.cur = make([]packed, 0, min(routeBlock, max(16, 2*cap(ch.cur))))
	}
	ch.cur = append(ch.cur, k)
}

func (ch *chain) keys() keys {
	if len(ch.cur) == 0 {
		return ch.blocks
	}
	return append(ch.blocks, ch.cur)
}

const (
	routeBlock  = 1 << 13
	recentSize  = 1 << 18
	recentDelta = 1 << 14 // rounds with at least this many facts use recent
)

func newRouter(parts int, recent bool, tb *typeBits) *router {
	r := &router{cur: make([][]packed, parts), blocks: make([][][]packed, parts), tb: tb}
	if recent {
		r.recent = make([]packed, recentSize)
	}
	return r
}

func (r *router) add(k packed) {
	if r.tb != nil {
		if w, bit, ok := r.tb.locate(k.open(), true); ok {
			if w.Or(bit)&bit == 0 {
				r.fresh.add(k)
			}
			return
		}
	}
	h := hashPacked(k.open())
	if r.recent != nil {
		slot := &r.recent[h>>20&(recentSize-1)]
		if *slot == k.open() {
			return
		}
		*slot = k.open()
	}
	p := partOf(h)
	b := r.cur[p]
	if len(b) == cap(b) {
		if cap(b) > 0 {
			r.blocks[p] = append(r.blocks[p], b)
		}
		b = make([]packed, 0, min(routeBlock, max(16, 2*cap(b))))
	}
	r.cur[p] = append(b, k)
}

// filter keeps in the blocks of partition p only the keys keep accepts
// (in place: each partition's blocks are one goroutine's) and returns
// the non-empty blocks left.
func (r *router) filter(p int, keep func(packed) bool, out keys) keys {
	for _, b := range append(r.blocks[p], r.cur[p]) {
		n := 0
		for _, k := range b {
			if keep(k) {
				b[n] = k
				n++
			}
		}
		if n > 0 {
			out = append(out, b[:n])
		}
	}
	return out
}

// insert adds ts to the facts and returns those that were new (indexed).
func (c *Closure) insert(ts []Triple) []Triple { return c.insertKeys(ts).triples() }

// insertKeys is insert, returning the new facts as keys.
func (c *Closure) insertKeys(ts []Triple) keys { return c.insertPacked(c.packAll(ts)) }

// packAll packs ts (dropping those with S == 0), in parallel.
func (c *Closure) packAll(ts []Triple) []packed {
	chunks := (len(ts) + fireChunk - 1) / fireChunk
	ks := make([]packed, len(ts))
	zero := make([]bool, chunks)
	c.forWorkers(chunks, func(_, i int) {
		lo := i * fireChunk
		for j, t := range ts[lo:min(len(ts), lo+fireChunk)] {
			if t.S == 0 {
				zero[i] = true
				continue
			}
			checkFits(t)
			ks[lo+j] = pack(t)
		}
	})
	if slices.Contains(zero, true) {
		ks = slices.DeleteFunc(ks, func(k packed) bool { return k.hi == 0 })
	}
	return ks
}

// insertPacked adds the facts ks and returns those that were new
// (indexed); plain facts (c.plain) are not added but counted in
// c.nPlain, and indexed. Routing runs on the workers in chunks, like
// firing.
func (c *Closure) insertPacked(ks []packed) keys {
	chunks := (len(ks) + fireChunk - 1) / fireChunk
	routed := make([]*router, min(c.workers, max(chunks, 1)))
	plain := make([][]packed, len(routed)) // the plain facts to index
	nPlain := make([]int, len(routed))
	for w := range routed {
		routed[w] = newRouter(len(c.parts), false, c.tb)
	}
	c.forWorkers(chunks, func(w, i int) {
		r := routed[w]
		for _, k := range ks[i*fireChunk : min(len(ks), (i+1)*fireChunk)] {
			if c.isPlain(k) {
				nPlain[w]++
				if c.o.outIndexed(ID(k.hi&(1<<predBits-1))) || c.o.inIndexed(ID(k.hi&(1<<predBits-1))) {
					plain[w] = append(plain[w], k)
				}
				continue
			}
			r.add(k)
		}
	})
	for _, n := range nPlain {
		c.nPlain += n
	}
	fresh := c.addRouted(routed)
	c.index(append(slices.Clone(fresh), plain...))
	return fresh
}

// addRouted inserts every worker's conclusions into their partitions (in
// parallel over partitions) and returns the new ones (with their
// closedBit as routed), in the routers' blocks.
func (c *Closure) addRouted(routed []*router) keys {
	news := make([]keys, len(c.parts))
	c.forWorkers(len(c.parts), func(_, p int) {
		set := c.parts[p]
		var fresh keys
		for _, r := range routed {
			fresh = r.filter(p, func(k packed) bool { return set.addKey(k.open(), hashPacked(k.open())) }, fresh)
		}
		news[p] = fresh
	})
	for _, r := range routed { // type facts added as they were routed
		news = append(news, r.fresh.keys())
	}
	return slices.Concat(news...)
}

// index adds fresh facts to the join indexes (in parallel over index
// partitions).
func (c *Closure) index(fresh keys) {
	o := c.o
	full := o.sameAs || c.opts.Maintainable
	if !o.anyIdx && !full {
		return
	}
	if c.bulk != nil {
		c.indexBulk(fresh)
		return
	}
	c.forWorkers(len(c.idx), func(_, i int) {
		ix := c.idx[i]
		for _, b := range fresh {
			for _, k := range b {
				c.indexOne(ix, k.open().triple(), full)
			}
		}
	})
}

func (c *Closure) indexOne(ix *joinIndex, t Triple, full bool) {
	o := c.o
	if o.outIndexed(t.P) && c.idxOf(t.S) == ix {
		k := idxKey{t.P, t.S}
		ix.out[k] = append(ix.out[k], t.O)
	}
	if o.inIndexed(t.P) && c.idxOf(t.O) == ix {
		k := idxKey{t.P, t.O}
		ix.in[k] = append(ix.in[k], t.S)
	}
	if full {
		if c.idxOf(t.S) == ix {
			ix.inc[t.S] = append(ix.inc[t.S], t)
		}
		if t.O != t.S && c.idxOf(t.O) == ix {
			ix.inc[t.O] = append(ix.inc[t.O], t)
		}
	}
}

// unindex removes gone facts from the join indexes.
func (c *Closure) unindex(gone []Triple) {
	o := c.o
	del := func(l []ID, x ID) []ID {
		if i := slices.Index(l, x); i >= 0 {
			l[i] = l[len(l)-1]
			return l[:len(l)-1]
		}
		return l
	}
	if c.bulk != nil {
		c.unindexBulk(gone)
		return
	}
	for _, t := range gone {
		if o.outIndexed(t.P) {
			ix, k := c.idxOf(t.S), idxKey{t.P, t.S}
			ix.out[k] = del(ix.out[k], t.O)
		}
		if o.inIndexed(t.P) {
			ix, k := c.idxOf(t.O), idxKey{t.P, t.O}
			ix.in[k] = del(ix.in[k], t.S)
		}
		if o.sameAs || c.opts.Maintainable {
			for _, x := range []ID{t.S, t.O} {
				ix := c.idxOf(x)
				l := ix.inc[x]
				if i := slices.Index(l, t); i >= 0 {
					l[i] = l[len(l)-1]
					ix.inc[x] = l[:len(l)-1]
				}
			}
		}
	}
}

// remove deletes ts from the facts (and the indexes).
func (c *Closure) remove(ts []Triple) {
	var gone []Triple
	for _, t := range ts {
		if k := pack(t); c.isPlain(k) {
			if c.plainFacts().remove(t, hashPacked(k)) {
				gone = append(gone, t)
			}
		} else if c.removeKey(k) {
			gone = append(gone, t)
		}
	}
	c.unindex(gone)
}

const fireChunk = 4096

// fireRouted fires the rules for every fact of delta against facts, on
// the workers, and returns the conclusions routed by partition (one
// router per worker). A delta key's closedBit lets the firer skip the
// conclusions its producer already emitted. With add, type facts the
// closure's bits hold are added to it on the spot (addRouted returns the
// new ones with the rest); without, every conclusion is routed and the
// closure does not change.
func (c *Closure) fireRouted(delta keys, facts Facts, first, add bool) []*router {
	chunks := delta.chunks()
	n := min(c.workers, max(len(chunks), 1))
	routed := make([]*router, n)
	firers := make([]firer, n)
	big := delta.len() >= recentDelta
	for w := range routed {
		var tb *typeBits
		if add {
			tb = c.tb
		}
		r := newRouter(len(c.parts), big, tb)
		routed[w] = r
		firers[w] = firer{o: c.o, isLiteral: c.opts.IsLiteral, emit: r.add, first: first, tb: tb, fresh: r.fresh.add}
		if big {
			firers[w].litCache = make([]ID, litCacheSize)
		}
	}
	c.forWorkers(len(chunks), func(w, i int) {
		f := &firers[w]
		for _, k := range chunks[i] {
			f.fire(k.open().triple(), k.closed(), facts)
		}
	})
	return routed
}

// eachRouted calls fn with every conclusion routed, flag cleared
// (routers of fireRouted without add: nothing went to the bits).
func eachRouted(routed []*router, fn func(packed)) {
	for _, r := range routed {
		for p := range r.cur {
			for _, b := range append(r.blocks[p], r.cur[p]) {
				for _, k := range b {
					fn(k.open())
				}
			}
		}
	}
}

// run fires semi-naive rounds from delta (facts already in c, without
// closedBit) until nothing is new; it returns every new fact (closedBit
// possibly set: keys.triples clears it) and the number of rounds.
func (c *Closure) run(ctx context.Context, delta keys) (keys, int, error) {
	return c.runFrom(ctx, delta, false)
}

// runFrom is run; first says the facts are exactly delta (firer.first
// for the first round).
func (c *Closure) runFrom(ctx context.Context, delta keys, first bool) (keys, int, error) {
	var derived keys
	rounds := 0
	for delta.len() > 0 {
		if err := ctx.Err(); err != nil {
			return nil, rounds, err
		}
		rounds++
		fresh := c.addRouted(c.fireRouted(delta, c, first, true))
		first = false
		c.index(fresh)
		delta = fresh
		derived = append(derived, fresh...)
	}
	return derived, rounds, nil
}
