package reason

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"slices"
)

// Out-of-core materialization (MaterializeStream): the closure of a graph
// too big for Materialize's in-memory sets, in a few sequential passes over
// its explicit triples, holding in memory only one bit per (vertex, class)
// and the edges of transitive properties.
//
// It relies on a stratification that holds when the ontology has no
// owl:sameAs in the data, no functional or inverse-functional property
// and no hasValue restriction used as a class to derive an edge (cls-hv1):
// then no rule derives an edge (a non-type triple) from a type, and
//
//  1. the edges of the closure are the explicit edges closed under prp-spo1,
//     prp-eqp*, prp-inv*, prp-symp (which derive from one edge alone: a
//     table per predicate of the (predicate, direction) pairs one edge
//     implies) and prp-trp (a join, over the transitive properties' edges,
//     kept in memory);
//  2. the types of the closure are the explicit types closed under
//     cax-sco, cax-eqc*, cls-int1/2, cls-uni and prp-dom / prp-rng /
//     cls-hv2 / cls-svf2 of every edge of the closure (one pass), then
//     cls-svf1 and cls-avf (joins of an edge with a type of its object or
//     subject) by passes over the edges of the predicates they name,
//     spilled to a file in the first pass, until a pass sets no bit.
//
// The result is the same closure as Materialize's (TestStreamDifferential).
// Edges are emitted as they are derived: an edge derived several times is
// emitted several times (the caller's builder drops repeats), an explicit
// one never (StreamInput.HasEdge).

// StreamInput is what MaterializeStream reads.
type StreamInput struct {
	// Each calls fn with every explicit triple of the graph (each once, in
	// any order).
	Each func(ctx context.Context, fn func(Triple) error) error
	// HasEdge reports whether the triple t (not rdf:type) is explicit.
	HasEdge func(t Triple) bool
	// MaxID bounds the IDs of the graph's terms.
	MaxID ID
	// IsLiteral reports whether an ID is a literal (nil: none is).
	IsLiteral func(ID) bool
	// Dir is a directory for the temporary file of join edges.
	Dir string
	// Memory bounds the bytes of transitive edges held (0: no bound).
	Memory int64
}

// StreamStats describe a MaterializeStream.
type StreamStats struct {
	Explicit      uint64 // explicit triples read
	InferredTypes uint64 // inferred type triples emitted (distinct)
	EdgesEmitted  uint64 // inferred edges emitted (with repeats)
	JoinEdges     uint64 // edges in the join file
	TransEdges    uint64 // edges of transitive properties held
	Passes        int    // passes over the join file
}

// ErrNotStreamable is returned (wrapped) by MaterializeStream for an
// ontology whose rules it does not cover.
var ErrNotStreamable = errors.New("the ontology is not covered by out-of-core materialization")

// Streamable reports, as an error wrapping ErrNotStreamable, why
// MaterializeStream cannot materialize under o, or nil.
func (o *Ontology) Streamable() error {
	bad := func(why string) error { return fmt.Errorf("%w: %s", ErrNotStreamable, why) }
	if o.sameAs {
		return bad("owl:sameAs (used by the data or derived by prp-fp/prp-ifp)")
	}
	for p, pr := range o.props {
		if pr.fp || pr.ifp {
			return bad("a functional or inverse-functional property")
		}
		if o.voc.Type != 0 && (p == o.voc.Type || slices.Contains(pr.supers, o.voc.Type)) {
			return bad("a subproperty of rdf:type")
		}
		if slices.Contains(pr.inv, o.voc.Type) {
			return bad("an inverse of rdf:type")
		}
	}
	for _, cr := range o.classes {
		if len(cr.hv) > 0 {
			return bad("a hasValue restriction as a class (cls-hv1 derives edges from types)")
		}
	}
	if n := len(o.streamClasses()); n > 64*maxStreamWords {
		return bad(fmt.Sprintf("%d classes (at most %d)", n, 64*maxStreamWords))
	}
	return nil
}

const maxStreamWords = 8 // classes with a bit: at most 512

// streamClasses lists every class the rules read or derive, sorted.
func (o *Ontology) streamClasses() []ID {
	cs := o.Classes()
	for c, cr := range o.classes {
		cs = append(cs, c)
		cs = append(cs, cr.supers...)
	}
	for _, in := range o.ints {
		cs = append(cs, in.c)
		cs = append(cs, in.members...)
	}
	slices.Sort(cs)
	cs = slices.Compact(cs)
	return slices.DeleteFunc(cs, func(c ID) bool { return c == 0 })
}

// locEdge is an edge one edge implies alone: (s q o), or (o q s) if flip.
type locEdge struct {
	q    ID
	flip bool
	sp   *streamProp
}

// streamProp is what one edge of a predicate concludes.
type streamProp struct {
	p   ID
	loc []locEdge // the other edges it implies alone (spo, eqp, inv, symp, closed)
	// locLit is loc for an edge whose object is a literal: a triple with
	// a literal subject is not a fact, so nothing follows from it (the
	// pairs reached only through a flipped edge are left out).
	locLit   []locEdge
	hasFlip  bool
	dom, rng []uint64 // type masks of the subject and object (with superclasses)
	needsObj bool     // rng non-empty: the object's literal check is needed
	hv       []streamHV
	svfAny   []uint64 // cls-svf2: types of the subject from any edge
	svf      []streamSVF
	avf      []streamSVF
	trans    bool
	join     bool // svf or avf: the edge goes to the join file
}

type streamHV struct {
	v    ID
	mask []uint64
}

// streamSVF: cls-svf1 (x p y) ∧ (y type slot) → x gets mask; cls-avf
// (x type slot) ∧ (x p y) → y gets mask.
type streamSVF struct {
	slot int
	mask []uint64
}

type streamer struct {
	o      *Ontology
	in     StreamInput
	words  int
	slotOf map[ID]int
	class  []ID
	sup    map[ID][]uint64 // class → itself and its superclasses
	ints   []streamInt
	intAny []uint64 // classes that are a member of some intersection
	props  map[ID]*streamProp
	ptab   []*streamProp // props by ID below tabLimit
	clos   rows          // the closure's type bits
	expl   rows          // the explicit type bits
	emit   func(Triple) error
	st     StreamStats
	lit    []ID // direct-mapped literal cache: id<<1 | literal
	scrat  []uint64
}

type streamInt struct {
	members []uint64
	mask    []uint64 // the intersection class with its superclasses
}

// rows are the type bits of vertices, in pages allocated on first write.
type rows struct {
	words int
	pages [][]uint64
}

const streamPageBits = 16

func (r *rows) row(x ID, write bool) []uint64 {
	pg := int(x >> streamPageBits)
	if pg >= len(r.pages) {
		if !write {
			return nil
		}
		r.pages = append(r.pages, make([][]uint64, pg+1-len(r.pages))...)
	}
	p := r.pages[pg]
	if p == nil {
		if !write {
			return nil
		}
		p = make([]uint64, r.words<<streamPageBits)
		r.pages[pg] = p
	}
	i := int(x&(1<<streamPageBits-1)) * r.words
	return p[i : i+r.words]
}

func (r *rows) has(x ID, slot int) bool {
	row := r.row(x, false)
	return row != nil && row[slot/64]&(1<<(slot%64)) != 0
}

// MaterializeStream computes the closure of the explicit triples in under o
// (see the comment at the top of stream.go) and calls emit with every
// inferred triple: each inferred type once, each inferred edge at least
// once, no explicit triple. emit is called from one goroutine.
func MaterializeStream(ctx context.Context, o *Ontology, in StreamInput, emit func(Triple) error) (StreamStats, error) {
	if err := o.Streamable(); err != nil {
		return StreamStats{}, err
	}
	s := newStreamer(o, in, emit)
	join, err := os.CreateTemp(in.Dir, "reason-join-*")
	if err != nil {
		return s.st, fmt.Errorf("cannot materialize: %w", err)
	}
	defer os.Remove(join.Name())
	defer join.Close()
	jw := bufio.NewWriterSize(join, 1<<20)
	var buf [24]byte
	writeJoin := func(t Triple) error {
		binary.LittleEndian.PutUint64(buf[0:], uint64(t.S))
		binary.LittleEndian.PutUint64(buf[8:], uint64(t.P))
		binary.LittleEndian.PutUint64(buf[16:], uint64(t.O))
		s.st.JoinEdges++
		_, err := jw.Write(buf[:])
		return err
	}
	tr := newTransEdges()
	// edge handles an edge of the closure: its types, the join file, and
	// the transitive set; it reports whether the edge is transitive's.
	edge := func(t Triple, sp *streamProp) error {
		s.edgeTypes(t, sp)
		if sp.join {
			if err := writeJoin(t); err != nil {
				return err
			}
		}
		return nil
	}
	// derive handles the edges edge t of sp implies alone.
	derive := func(t Triple, sp *streamProp, fresh func(Triple, *streamProp)) error {
		loc := sp.loc
		if sp.hasFlip && s.isLit(t.O) {
			loc = sp.locLit
		}
		for _, l := range loc {
			d := Triple{t.S, l.q, t.O}
			if l.flip {
				d = Triple{t.O, l.q, t.S}
				if s.isLit(d.S) {
					continue
				}
			}
			if err := edge(d, l.sp); err != nil {
				return err
			}
			if l.sp.trans {
				fresh(d, l.sp)
				continue
			}
			if !in.HasEdge(d) {
				s.st.EdgesEmitted++
				if err := emit(d); err != nil {
					return err
				}
			}
		}
		return nil
	}
	var pending []Triple // transitive edges new to tr, to close
	addTrans := func(t Triple, sp *streamProp) {
		if tr.add(t) {
			pending = append(pending, t)
		}
	}
	typ := o.voc.Type
	n := 0
	err = in.Each(ctx, func(t Triple) error {
		s.st.Explicit++
		if n++; n&(1<<16-1) == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if t.P == typ && typ != 0 {
			if slot, ok := s.slotOf[t.O]; ok {
				s.expl.row(t.S, true)[slot/64] |= 1 << (slot % 64)
				s.setMask(t.S, s.sup[t.O])
			}
			return nil
		}
		sp := s.prop(t.P)
		if sp == nil {
			return nil
		}
		if err := edge(t, sp); err != nil {
			return err
		}
		if sp.trans {
			addTrans(t, sp)
		}
		return derive(t, sp, addTrans)
	})
	if err != nil {
		return s.st, fmt.Errorf("cannot materialize: %w", err)
	}
	// prp-trp: close the transitive edges (each new one implies its own
	// edges, which may be transitive again).
	budget := in.Memory
	for len(pending) > 0 {
		if budget > 0 && int64(tr.n)*transEdgeBytes > budget {
			return s.st, fmt.Errorf("cannot materialize: %d edges of transitive properties exceed the memory budget of %d bytes", tr.n, budget)
		}
		t := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		var news []Triple
		for _, z := range tr.out[[2]ID{t.P, t.O}] {
			news = append(news, Triple{t.S, t.P, z})
		}
		for _, w := range tr.in[[2]ID{t.P, t.S}] {
			news = append(news, Triple{w, t.P, t.O})
		}
		for _, d := range news {
			if !tr.add(d) {
				continue
			}
			pending = append(pending, d)
			sp := s.prop(d.P)
			if err := edge(d, sp); err != nil {
				return s.st, fmt.Errorf("cannot materialize: %w", err)
			}
			if err := derive(d, sp, addTrans); err != nil {
				return s.st, fmt.Errorf("cannot materialize: %w", err)
			}
		}
	}
	s.st.TransEdges = uint64(tr.n)
	for t := range tr.set {
		if !in.HasEdge(t) {
			s.st.EdgesEmitted++
			if err := emit(t); err != nil {
				return s.st, fmt.Errorf("cannot materialize: %w", err)
			}
		}
	}
	tr = nil
	if err := jw.Flush(); err != nil {
		return s.st, fmt.Errorf("cannot materialize: %w", err)
	}
	// cls-svf1, cls-avf: passes over the join edges until nothing changes.
	for {
		if err := ctx.Err(); err != nil {
			return s.st, err
		}
		s.st.Passes++
		changed, err := s.joinPass(join)
		if err != nil {
			return s.st, fmt.Errorf("cannot materialize: %w", err)
		}
		if !changed {
			break
		}
	}
	if err := s.emitTypes(); err != nil {
		return s.st, fmt.Errorf("cannot materialize: %w", err)
	}
	return s.st, nil
}

const transEdgeBytes = 96 // a set entry and two adjacency entries, with map overhead

type transEdges struct {
	set     map[Triple]struct{}
	out, in map[[2]ID][]ID
	n       int
}

func newTransEdges() *transEdges {
	return &transEdges{set: map[Triple]struct{}{}, out: map[[2]ID][]ID{}, in: map[[2]ID][]ID{}}
}

func (tr *transEdges) add(t Triple) bool {
	if _, ok := tr.set[t]; ok {
		return false
	}
	tr.set[t] = struct{}{}
	tr.out[[2]ID{t.P, t.S}] = append(tr.out[[2]ID{t.P, t.S}], t.O)
	tr.in[[2]ID{t.P, t.O}] = append(tr.in[[2]ID{t.P, t.O}], t.S)
	tr.n++
	return true
}

func newStreamer(o *Ontology, in StreamInput, emit func(Triple) error) *streamer {
	classes := o.streamClasses()
	words := max(1, (len(classes)+63)/64)
	s := &streamer{o: o, in: in, words: words, slotOf: map[ID]int{}, class: classes, sup: map[ID][]uint64{},
		props: map[ID]*streamProp{}, clos: rows{words: words}, expl: rows{words: words}, emit: emit,
		lit: make([]ID, 1<<12), scrat: make([]uint64, words)}
	for i, c := range classes {
		s.slotOf[c] = i
	}
	mask := func(cs ...ID) []uint64 {
		m := make([]uint64, words)
		for _, c := range cs {
			if i, ok := s.slotOf[c]; ok {
				m[i/64] |= 1 << (i % 64)
			}
		}
		return m
	}
	for _, c := range classes {
		cs := []ID{c}
		if cr := o.classOf(c); cr != nil {
			cs = append(cs, cr.supers...)
		}
		s.sup[c] = mask(cs...)
	}
	s.intAny = make([]uint64, words)
	for _, in := range o.ints {
		si := streamInt{members: mask(in.members...), mask: s.sup[in.c]}
		s.ints = append(s.ints, si)
		for w := range s.intAny {
			s.intAny[w] |= si.members[w]
		}
	}
	owl := o.profile == OWLRL
	var mk func(p ID) *streamProp
	mk = func(p ID) *streamProp {
		if sp := s.props[p]; sp != nil {
			return sp
		}
		pr := o.propOf(p)
		sp := &streamProp{p: p}
		s.props[p] = sp
		if pr == nil {
			sp.dom, sp.rng = make([]uint64, words), make([]uint64, words)
			return sp
		}
		sp.dom, sp.rng, sp.needsObj = mask(pr.dom...), mask(pr.rng...), len(pr.rng) > 0
		if owl {
			sp.trans = pr.trans
			sp.svfAny = make([]uint64, words)
			for _, r := range pr.svf {
				if r.x == 0 {
					for w, b := range s.sup[r.r] {
						sp.svfAny[w] |= b
					}
				} else {
					sp.svf = append(sp.svf, streamSVF{slot: s.slotOf[r.x], mask: s.sup[r.r]})
				}
			}
			for _, r := range pr.avf {
				sp.avf = append(sp.avf, streamSVF{slot: s.slotOf[r.r], mask: s.sup[r.x]})
				sp.needsObj = true
			}
			for _, r := range pr.hv {
				sp.hv = append(sp.hv, streamHV{v: r.x, mask: s.sup[r.r]})
			}
			sp.join = len(sp.svf)+len(sp.avf) > 0
		}
		// The (predicate, direction) pairs one edge implies: the firer's
		// tables applied until nothing is new.
		type state struct {
			q    ID
			flip bool
		}
		reach := func(flips bool) []locEdge {
			var loc []locEdge
			seen := map[state]bool{{p, false}: true}
			stack := []state{{p, false}}
			for len(stack) > 0 {
				x := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				xr := o.propOf(x.q)
				if xr == nil {
					continue
				}
				next := func(q ID, flip bool) {
					if y := (state{q, flip}); !seen[y] {
						seen[y] = true
						stack = append(stack, y)
						loc = append(loc, locEdge{q: q, flip: flip})
					}
				}
				for _, q := range xr.supers {
					next(q, x.flip)
				}
				if owl && flips {
					for _, q := range xr.inv {
						next(q, !x.flip)
					}
					for _, q := range xr.sym {
						next(q, !x.flip)
					}
				}
			}
			return loc
		}
		sp.loc, sp.locLit = reach(true), reach(false)
		sp.hasFlip = len(sp.loc) != len(sp.locLit)
		for _, loc := range [][]locEdge{sp.loc, sp.locLit} {
			for i := range loc {
				loc[i].sp = mk(loc[i].q)
			}
		}
		return sp
	}
	for p := range o.props {
		mk(p)
	}
	n := ID(0)
	for p := range s.props {
		if p < tabLimit {
			n = max(n, p+1)
		}
	}
	s.ptab = make([]*streamProp, n)
	for p, sp := range s.props {
		if p < n {
			s.ptab[p] = sp
		}
	}
	return s
}

func (s *streamer) prop(p ID) *streamProp {
	if p < ID(len(s.ptab)) {
		return s.ptab[p]
	}
	return s.props[p]
}

func (s *streamer) isLit(x ID) bool {
	if s.in.IsLiteral == nil {
		return false
	}
	slot := &s.lit[uint64(x)*0x9e3779b97f4a7c15>>52]
	if *slot>>1 == x && *slot != 0 {
		return *slot&1 != 0
	}
	l := s.in.IsLiteral(x)
	*slot = x << 1
	if l {
		*slot |= 1
	}
	return l
}

// edgeTypes sets the types an edge of the closure gives alone: prp-dom,
// prp-rng, cls-hv2, cls-svf2.
func (s *streamer) edgeTypes(t Triple, sp *streamProp) {
	s.setMask(t.S, sp.dom)
	if sp.svfAny != nil {
		s.setMask(t.S, sp.svfAny)
	}
	for _, h := range sp.hv {
		if t.O == h.v {
			s.setMask(t.S, h.mask)
		}
	}
	if sp.needsObj && !s.isLit(t.O) {
		s.setMask(t.O, sp.rng)
	}
}

// setMask adds the classes of m to x's types, and whatever cls-int1
// concludes from them; it reports whether a bit was new.
func (s *streamer) setMask(x ID, m []uint64) bool {
	var row []uint64
	changed, members := false, false
	for w, b := range m {
		if b == 0 {
			continue
		}
		if row == nil {
			row = s.clos.row(x, true)
		}
		if nb := b &^ row[w]; nb != 0 {
			row[w] |= nb
			changed = true
			members = members || nb&s.intAny[w] != 0
		}
	}
	for members { // cls-int1, until no intersection is new
		members = false
		for _, in := range s.ints {
			all, has := true, true
			for w := range row {
				all = all && row[w]&in.members[w] == in.members[w]
				has = has && row[w]&in.mask[w] == in.mask[w]
			}
			if all && !has {
				for w := range row {
					nb := in.mask[w] &^ row[w]
					row[w] |= nb
					members = members || nb&s.intAny[w] != 0
				}
			}
		}
	}
	return changed
}

// joinPass reads the join file once, firing cls-svf1 and cls-avf; it
// reports whether a type was new.
func (s *streamer) joinPass(f *os.File) (bool, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var buf [24]byte
	changed := false
	for {
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			if err == io.EOF {
				return changed, nil
			}
			return false, err
		}
		t := Triple{ID(binary.LittleEndian.Uint64(buf[0:])), ID(binary.LittleEndian.Uint64(buf[8:])), ID(binary.LittleEndian.Uint64(buf[16:]))}
		sp := s.prop(t.P)
		for _, r := range sp.svf {
			if s.clos.has(t.O, r.slot) && s.setMask(t.S, r.mask) {
				changed = true
			}
		}
		for _, r := range sp.avf {
			if s.clos.has(t.S, r.slot) && !s.isLit(t.O) && s.setMask(t.O, r.mask) {
				changed = true
			}
		}
	}
}

// emitTypes emits every type of the closure that is not explicit.
func (s *streamer) emitTypes() error {
	typ := s.o.voc.Type
	for pg, p := range s.clos.pages {
		if p == nil {
			continue
		}
		var e []uint64
		if pg < len(s.expl.pages) {
			e = s.expl.pages[pg]
		}
		for j, w := range p {
			if e != nil {
				w &^= e[j]
			}
			x := ID(pg)<<streamPageBits + ID(j/s.words)
			off := (j % s.words) * 64
			for w != 0 {
				b := bits.TrailingZeros64(w)
				w &= w - 1
				s.st.InferredTypes++
				if err := s.emit(Triple{x, typ, s.class[off+b]}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
