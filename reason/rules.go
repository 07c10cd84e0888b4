package reason

// Facts is what the rules read of the facts so far: the materializer's
// own set while it runs, a store plus a change while Maintain runs.
type Facts interface {
	// Has reports whether t is a fact.
	Has(t Triple) bool
	// Objects returns the o of the facts (s p o), for a p the ontology
	// indexes out (Ontology.outIdx). The slice is read-only and valid until
	// the facts change.
	Objects(s, p ID) []ID
	// Subjects returns the s of the facts (s p o), for a p the ontology
	// indexes in (Ontology.inIdx); read-only like Objects.
	Subjects(p, o ID) []ID
	// Incident calls fn with every fact having x as subject or object
	// (eq-rep-s, eq-rep-o: only asked when the ontology has sameAs).
	Incident(x ID, fn func(t Triple))
}

// firer fires the rules for single facts. emit receives each conclusion
// (not necessarily new; closedBit set on those emitted with their super
// consequences); isLiteral keeps literals out of subjects.
type firer struct {
	o         *Ontology
	isLiteral func(ID) bool
	emit      func(packed)
	litCache  []ID // direct-mapped: id<<1 | literal (nil: no cache, small deltas)
	// first: the facts are exactly the delta (the first round of a
	// materialization from scratch). A join rule's premises are then all
	// in the delta, and firing it from every premise finds each
	// conclusion once per premise: it fires from one side only (the
	// edge of cls-svf1 and cls-avf, the smallest member of cls-int1, the
	// first edge of prp-trp, the smaller object of prp-fp / prp-ifp).
	first bool
	// tb, fresh: the firer adds type facts to tb itself as it concludes
	// them and hands the new ones to fresh (nil: everything goes to emit).
	tb    *typeBits
	fresh func(packed)
}

const litCacheSize = 1 << 10

// lit reports whether x is a literal. Only conclusions whose subject was
// an object ask (a subject never is one); objects repeat (courses,
// departments), so a small cache answers most.
func (f *firer) lit(x ID) bool {
	if f.isLiteral == nil {
		return false
	}
	if f.litCache == nil {
		return f.isLiteral(x)
	}
	slot := &f.litCache[uint64(x)*0x9e3779b97f4a7c15>>54]
	if *slot>>1 == x && *slot != 0 {
		return *slot&1 != 0
	}
	l := f.isLiteral(x)
	*slot = x << 1
	if l {
		*slot |= 1
	}
	return l
}

// out emits t, whose subject is a premise's subject (never a literal).
func (f *firer) out(t Triple) { f.emit(pack(t)) }

// outClosed emits t with closedBit (see closedBit for when that holds).
func (f *firer) outClosed(t Triple) {
	k := pack(t)
	k.hi |= closedBit
	f.emit(k)
}

// outObj emits t, whose subject was an object, unless it is a literal.
func (f *firer) outObj(t Triple) {
	if !f.lit(t.S) {
		f.emit(pack(t))
	}
}

// fire emits every conclusion of a rule one of whose premises is t, the
// other premises read from facts (which holds t). closed says t was
// emitted with its super consequences (closedBit): they are not emitted
// again.
func (f *firer) fire(t Triple, closed bool, facts Facts) {
	o := f.o
	if o.profile == None {
		return
	}
	if t.P == o.voc.Type {
		f.fireType(t, closed, facts)
	} else if pr := o.propOf(t.P); pr != nil {
		f.fireProp(t, closed, pr, facts)
	}
	if o.sameAs {
		f.fireSameAs(t, facts)
	}
}

func (f *firer) fireType(t Triple, closed bool, facts Facts) {
	o := f.o
	cr := o.classOf(t.O)
	if cr == nil {
		return
	}
	x, typ := t.S, o.voc.Type
	if !closed {
		f.closedTypes(x, cr.supers, tabSup, t.O) // cax-sco, cax-eqc1/2, cls-int2, cls-uni
	}
	for _, i := range cr.ints { // cls-int1
		in := &o.ints[i]
		if f.first && t.O != in.minMember {
			continue
		}
		all := true
		for _, m := range in.members {
			if m != t.O && !facts.Has(Triple{x, typ, m}) {
				all = false
				break
			}
		}
		if all {
			f.out(Triple{x, typ, in.c})
		}
	}
	// cls-svf1 and cls-avf from the type's side (on a first round, the
	// edge's side finds them all).
	for _, r := range cr.svfOf { // cls-svf1, from the filler's side
		if f.first {
			break
		}
		for _, y := range facts.Subjects(r.p, x) {
			f.out(Triple{y, typ, r.r})
		}
	}
	if o.profile == OWLRL {
		for _, r := range cr.avf { // cls-avf, from the restriction's side
			if f.first {
				break
			}
			for _, y := range facts.Objects(x, r.p) {
				f.outObj(Triple{y, typ, r.x})
			}
		}
		for _, r := range cr.hv { // cls-hv1
			f.out(Triple{x, r.p, r.x})
		}
	}
}

func (f *firer) fireProp(t Triple, closed bool, pr *propRules, facts Facts) {
	o := f.o
	s, p, v, typ := t.S, t.P, t.O, o.voc.Type
	owl := o.profile == OWLRL
	if !closed {
		for _, q := range pr.supers { // prp-spo1, prp-eqp1/2
			f.outClosed(Triple{s, q, v})
		}
		f.closedTypes(s, pr.dom, tabDom, p) // prp-dom (+ cax-sco)
		if (len(pr.rng) > 0 || owl && len(pr.inv)+len(pr.sym) > 0) && !f.lit(v) {
			f.closedTypes(v, pr.rng, tabRng, p) // prp-rng (+ cax-sco)
			if owl {
				for _, q := range pr.inv { // prp-inv1, prp-inv2
					f.out(Triple{v, q, s})
				}
				for _, q := range pr.sym { // prp-symp
					f.out(Triple{v, q, s})
				}
			}
		}
	}
	if !owl {
		return
	}
	if pr.trans { // prp-trp, t as either premise
		for _, z := range facts.Objects(v, p) {
			f.out(Triple{s, p, z})
		}
		for _, w := range facts.Subjects(p, s) {
			if f.first {
				break // found from (w p s)'s side
			}
			f.out(Triple{w, p, v})
		}
	}
	// prp-fp, prp-ifp: both orders, since the other premise may be old
	// and eq-sym cannot turn a dropped literal-subject triple around.
	if pr.fp {
		for _, y := range facts.Objects(s, p) {
			if y != v && (!f.first || y > v) {
				f.outObj(Triple{v, o.voc.SameAs, y})
				f.outObj(Triple{y, o.voc.SameAs, v})
			}
		}
	}
	if pr.ifp {
		for _, x := range facts.Subjects(p, v) {
			if x != s && (!f.first || x > s) {
				f.out(Triple{s, o.voc.SameAs, x})
				f.out(Triple{x, o.voc.SameAs, s})
			}
		}
	}
	for _, r := range pr.svf { // cls-svf1, cls-svf2 (filler owl:Thing)
		if r.x == 0 || facts.Has(Triple{v, typ, r.x}) {
			f.out(Triple{s, typ, r.r})
		}
	}
	for _, r := range pr.avf { // cls-avf, from the edge's side
		if facts.Has(Triple{s, typ, r.r}) {
			f.outObj(Triple{v, typ, r.x})
		}
	}
	for _, r := range pr.hv { // cls-hv2
		if v == r.x {
			f.out(Triple{s, typ, r.r})
		}
	}
}

func (f *firer) fireSameAs(t Triple, facts Facts) {
	same := f.o.voc.SameAs
	if t.P == same {
		a, b := t.S, t.O
		f.outObj(Triple{b, same, a}) // eq-sym
		// eq-rep-s / eq-rep-o with t as the sameAs premise (eq-trans is
		// eq-rep-o on a sameAs triple).
		facts.Incident(a, func(u Triple) {
			if u.S == a {
				f.outObj(Triple{b, u.P, u.O})
			}
			if u.O == a {
				f.out(Triple{u.S, u.P, b})
			}
		})
	}
	// eq-rep-s / eq-rep-o with t as the other premise.
	for _, s2 := range facts.Objects(t.S, same) {
		f.outObj(Triple{s2, t.P, t.O})
	}
	for _, o2 := range facts.Objects(t.O, same) {
		f.out(Triple{t.S, t.P, o2})
	}
}
