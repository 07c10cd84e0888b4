package reason

import (
	"math/bits"
	"slices"
	"sync/atomic"
)

// typeBits holds the closure's type facts (x rdf:type c) for the
// vertices x of a dense ID range and the classes the ontology names,
// as one bit per (vertex, class): a row of words per vertex. Type facts
// are most of what the rules conclude (domains, ranges, superclasses),
// and testing one against a row of a few MB of bits that the subject's
// other facts just loaded costs a cache hit, where a probe of the fact
// set (hundreds of MB) costs a miss. A bit is set with an atomic OR, so
// any worker adds a type fact the moment it concludes it, without
// routing it to a partition's owner, and a closed table of classes (all
// superclasses of a class, the domains of a property with theirs) goes
// in with one OR per word instead of a probe per class.
//
// A type fact whose subject lies outside the range (a term newer than
// the closure) or whose class has no slot stays in the hash sets: where
// a fact lives depends only on the fact, so every reader finds it.
type typeBits struct {
	typ    ID
	n      uint64 // IDs covered: 0..n-1
	words  int    // words per vertex
	slotOf []int32
	class  []ID // slot → class
	// pages of rows, pageSize vertices each, allocated when a fact first
	// goes in one (IDs are dense but start high: vertices follow the
	// predicates and classes), so the bits cost what the vertices that
	// have types need.
	pages []atomic.Pointer[typePage]

	// The closed class tables as masks, by predicate and by class ID
	// (nil: not in the slice tables, use the lists).
	dom, rng, sup []*classMask
}

type typePage struct{ w []atomic.Uint64 }

const (
	pageBits = 16
	pageSize = 1 << pageBits
	maxPages = 1 << 20 // IDs up to 2^36 (the pointers cost 8 MB at most)
)

// classMask is a list of classes as a row mask plus the classes without
// a slot.
type classMask struct {
	mask []uint64
	rest []ID
}

const (
	maxTypeWords = 4 // at most 256 classes get a slot
)

// newTypeBits returns the type bits for the triples of ts (their IDs
// bound the range) under o, or nil when o has no classes or the IDs are
// too large.
func newTypeBits(o *Ontology, ts ...[]Triple) *typeBits {
	if o.profile == None || o.voc.Type == 0 {
		return nil
	}
	classes := o.Classes()
	for c := range o.classes {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	classes = slices.Compact(classes)
	classes = slices.DeleteFunc(classes, func(c ID) bool { return c == 0 || c >= tabLimit })
	if len(classes) == 0 {
		return nil
	}
	if len(classes) > 64*maxTypeWords {
		classes = classes[:64*maxTypeWords]
	}
	hi := ID(0)
	for _, l := range ts {
		for _, t := range l {
			hi = max(hi, t.S, t.O)
		}
	}
	if hi == 0 || hi>>pageBits >= maxPages {
		return nil
	}
	tb := &typeBits{typ: o.voc.Type, n: uint64(hi) + 1, words: (len(classes) + 63) / 64, class: classes}
	tb.slotOf = make([]int32, classes[len(classes)-1]+1)
	for i, c := range classes {
		tb.slotOf[c] = int32(i) + 1
	}
	tb.pages = make([]atomic.Pointer[typePage], tb.n>>pageBits+1)
	masks := func(tab []*propRules, list func(*propRules) []ID) []*classMask {
		r := make([]*classMask, len(tab))
		for p, pr := range tab {
			if pr != nil {
				r[p] = tb.maskOf(list(pr))
			}
		}
		return r
	}
	tb.dom = masks(o.propTab, func(pr *propRules) []ID { return pr.dom })
	tb.rng = masks(o.propTab, func(pr *propRules) []ID { return pr.rng })
	tb.sup = make([]*classMask, len(o.classTab))
	for c, cr := range o.classTab {
		if cr != nil {
			tb.sup[c] = tb.maskOf(cr.supers)
		}
	}
	return tb
}

func (tb *typeBits) maskOf(cs []ID) *classMask {
	m := &classMask{mask: make([]uint64, tb.words)}
	for _, c := range cs {
		if s := tb.slot(c); s >= 0 {
			m.mask[s/64] |= 1 << (s % 64)
		} else {
			m.rest = append(m.rest, c)
		}
	}
	return m
}

// slot returns class c's slot, or -1.
func (tb *typeBits) slot(c ID) int {
	if c < ID(len(tb.slotOf)) {
		return int(tb.slotOf[c]) - 1
	}
	return -1
}

// covers reports whether vertex x has a row.
func (tb *typeBits) covers(x ID) bool { return uint64(x) < tb.n }

// noRow is what a row of a page not allocated reads as.
var noRow [maxTypeWords]atomic.Uint64

// locate returns the word and bit of the type fact k (closedBit clear),
// or ok false when k is not a type fact the bits hold. With write, the
// word is one to change (its page is allocated); without, the word of a
// page not allocated is a shared zero, only to read.
func (tb *typeBits) locate(k packed, write bool) (w *atomic.Uint64, bit uint64, ok bool) {
	if ID(k.hi&(1<<predBits-1)) != tb.typ {
		return nil, 0, false
	}
	x := ID(k.hi >> predBits)
	s := tb.slot(ID(k.lo))
	if s < 0 || !tb.covers(x) {
		return nil, 0, false
	}
	return &tb.row(x, write)[s/64], 1 << (s % 64), true
}

// holds reports whether t is a type fact the bits hold.
func (tb *typeBits) holds(t Triple) bool { return tb.holdsKey(pack(t)) }

// holdsKey is holds for a packed fact (closedBit clear).
func (tb *typeBits) holdsKey(k packed) bool {
	_, _, ok := tb.locate(k, false)
	return ok
}

// row returns vertex x's words (x covered); with write, allocating its
// page (concurrent writers agree on one), else noRow for a page not
// allocated.
func (tb *typeBits) row(x ID, write bool) []atomic.Uint64 {
	pg := &tb.pages[x>>pageBits]
	p := pg.Load()
	if p == nil {
		if !write {
			return noRow[:tb.words]
		}
		np := &typePage{w: make([]atomic.Uint64, pageSize*tb.words)}
		if pg.CompareAndSwap(nil, np) {
			p = np
		} else {
			p = pg.Load()
		}
	}
	i := int(x&(pageSize-1)) * tb.words
	return p.w[i : i+tb.words]
}

// count returns the number of type facts the bits hold.
func (tb *typeBits) count() int {
	n := 0
	for i := range tb.pages {
		if p := tb.pages[i].Load(); p != nil {
			for j := range p.w {
				n += bits.OnesCount64(p.w[j].Load())
			}
		}
	}
	return n
}

// each calls fn with every type fact the bits hold.
func (tb *typeBits) each(fn func(Triple)) {
	for i := range tb.pages {
		p := tb.pages[i].Load()
		if p == nil {
			continue
		}
		for j := range p.w {
			w := p.w[j].Load()
			x := ID(i)<<pageBits + ID(j/tb.words)
			off := (j % tb.words) * 64
			for w != 0 {
				b := bits.TrailingZeros64(w)
				w &= w - 1
				fn(Triple{x, tb.typ, tb.class[off+b]})
			}
		}
	}
}

// hasKey reports whether the fact k (closedBit clear) is in c.
func (c *Closure) hasKey(k packed) bool {
	if c.isPlain(k) {
		return c.plainFacts().hasKey(k, hashPacked(k))
	}
	if c.tb != nil {
		if w, bit, ok := c.tb.locate(k, false); ok {
			return w.Load()&bit != 0
		}
	}
	h := hashPacked(k)
	return c.parts[partOf(h)].hasKey(k, h)
}

// removeKey deletes the fact k (closedBit clear) from the sets (not the
// indexes) and reports whether it was there.
func (c *Closure) removeKey(k packed) bool {
	if c.tb != nil {
		if w, bit, ok := c.tb.locate(k, true); ok {
			return w.And(^bit)&bit != 0
		}
	}
	h := hashPacked(k)
	return c.parts[partOf(h)].remove(k.triple(), h)
}

// typesOf adds the type facts (x type c) for the classes of m at once
// (closedBit set: m is a closed table) and emits those that were new as
// fresh; the classes without a slot go the ordinary way.
func (f *firer) typesOf(x ID, m *classMask) {
	row := f.tb.row(x, true)
	for w, want := range m.mask {
		if want == 0 {
			continue
		}
		nw := want &^ row[w].Or(want)
		for nw != 0 {
			b := bits.TrailingZeros64(nw)
			nw &= nw - 1
			f.fresh(packed{uint64(x)<<predBits | uint64(f.tb.typ) | closedBit, uint64(f.tb.class[w*64+b])})
		}
	}
	for _, c := range m.rest {
		f.outClosed(Triple{x, f.tb.typ, c})
	}
}

// Which closed class table closedTypes emits.
const (
	tabDom = iota // a property's domains
	tabRng        // a property's ranges
	tabSup        // a class's superclasses
)

// closedTypes emits (x type c) for every c of list (table tab of ID id),
// closed: through the bits with the table's mask when the firer adds as
// it goes and x has a row, else one by one.
func (f *firer) closedTypes(x ID, list []ID, tab int, id ID) {
	if tb := f.tb; tb != nil && tb.covers(x) {
		masks := tb.sup
		switch tab {
		case tabDom:
			masks = tb.dom
		case tabRng:
			masks = tb.rng
		}
		if id < ID(len(masks)) && masks[id] != nil {
			f.typesOf(x, masks[id])
			return
		}
	}
	for _, c := range list {
		f.outClosed(Triple{x, f.o.voc.Type, c})
	}
}
