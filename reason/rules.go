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
// (not necessarily new); isLiteral keeps literals out of subjects.
type firer struct {
	o         *Ontology
	isLiteral func(ID) bool
	emit      func(Triple)
}

func (f *firer) out(t Triple) {
	if f.isLiteral != nil && f.isLiteral(t.S) {
		return
	}
	f.emit(t)
}

// fire emits every conclusion of a rule one of whose premises is t, the
// other premises read from facts (which holds t).
func (f *firer) fire(t Triple, facts Facts) {
	o := f.o
	if o.profile == None {
		return
	}
	typ := o.voc.Type
	if t.P == typ {
		f.fireType(t, facts)
	} else if pr := o.props[t.P]; pr != nil {
		f.fireProp(t, pr, facts)
	}
	if o.sameAs {
		f.fireSameAs(t, facts)
	}
}

func (f *firer) fireType(t Triple, facts Facts) {
	o := f.o
	cr := o.classes[t.O]
	if cr == nil {
		return
	}
	x, typ := t.S, o.voc.Type
	for _, d := range cr.supers { // cax-sco, cax-eqc1/2, cls-int2, cls-uni
		f.out(Triple{x, typ, d})
	}
	for _, i := range cr.ints { // cls-int1
		in := &o.ints[i]
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
	for _, r := range cr.svfOf { // cls-svf1, from the filler's side
		for _, y := range facts.Subjects(r.p, x) {
			f.out(Triple{y, typ, r.r})
		}
	}
	if o.profile == OWLRL {
		for _, r := range cr.avf { // cls-avf, from the restriction's side
			for _, y := range facts.Objects(x, r.p) {
				f.out(Triple{y, typ, r.x})
			}
		}
		for _, r := range cr.hv { // cls-hv1
			f.out(Triple{x, r.p, r.x})
		}
	}
}

func (f *firer) fireProp(t Triple, pr *propRules, facts Facts) {
	o := f.o
	s, p, v, typ := t.S, t.P, t.O, o.voc.Type
	for _, q := range pr.supers { // prp-spo1, prp-eqp1/2
		f.out(Triple{s, q, v})
	}
	for _, c := range pr.dom { // prp-dom (+ cax-sco)
		f.out(Triple{s, typ, c})
	}
	for _, c := range pr.rng { // prp-rng (+ cax-sco)
		f.out(Triple{v, typ, c})
	}
	if o.profile != OWLRL {
		return
	}
	for _, q := range pr.inv { // prp-inv1, prp-inv2
		f.out(Triple{v, q, s})
	}
	for _, q := range pr.sym { // prp-symp
		f.out(Triple{v, q, s})
	}
	if pr.trans { // prp-trp, t as either premise
		for _, z := range facts.Objects(v, p) {
			f.out(Triple{s, p, z})
		}
		for _, w := range facts.Subjects(p, s) {
			f.out(Triple{w, p, v})
		}
	}
	// prp-fp, prp-ifp: both orders, since the other premise may be old
	// and eq-sym cannot turn a dropped literal-subject triple around.
	if pr.fp {
		for _, y := range facts.Objects(s, p) {
			if y != v {
				f.out(Triple{v, o.voc.SameAs, y})
				f.out(Triple{y, o.voc.SameAs, v})
			}
		}
	}
	if pr.ifp {
		for _, x := range facts.Subjects(p, v) {
			if x != s {
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
			f.out(Triple{v, typ, r.x})
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
		f.out(Triple{b, same, a}) // eq-sym
		// eq-rep-s / eq-rep-o with t as the sameAs premise (eq-trans is
		// eq-rep-o on a sameAs triple).
		facts.Incident(a, func(u Triple) {
			if u.S == a {
				f.out(Triple{b, u.P, u.O})
			}
			if u.O == a {
				f.out(Triple{u.S, u.P, b})
			}
		})
	}
	// eq-rep-s / eq-rep-o with t as the other premise.
	for _, s2 := range facts.Objects(t.S, same) {
		f.out(Triple{s2, t.P, t.O})
	}
	for _, o2 := range facts.Objects(t.O, same) {
		f.out(Triple{t.S, t.P, o2})
	}
}
