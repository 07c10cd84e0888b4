package refeval

import (
	"github.com/wukongd/wukongd/rdf"
)

// Entailment vocabulary.
const (
	rdfsNS = "http://www.w3.org/2000/01/rdf-schema#"
	owlNS  = "http://www.w3.org/2002/07/owl#"
)

// Entail returns the closure of triples under the RDFS (owl = false) or
// OWL 2 RL (owl = true) rules package reason implements, by the naive
// fixpoint: every rule is tried on every combination of facts, again and
// again, until a pass adds nothing. Rules read the schema (subClassOf,
// domain, restrictions, lists, property characteristics, …) from the
// given triples only, as package reason does. A conclusion whose subject
// is a literal is dropped. It is slow by design (quadratic per pass): it
// is the reference for small random graphs.
func Entail(triples []rdf.Triple, owl bool) []rdf.Triple {
	iri := rdf.NewIRI
	typ := iri(rdf.RDFType)
	subC, subP := iri(rdfsNS+"subClassOf"), iri(rdfsNS+"subPropertyOf")
	dom, rng := iri(rdfsNS+"domain"), iri(rdfsNS+"range")
	eqC, eqP := iri(owlNS+"equivalentClass"), iri(owlNS+"equivalentProperty")
	inv := iri(owlNS + "inverseOf")
	trans, sym := iri(owlNS+"TransitiveProperty"), iri(owlNS+"SymmetricProperty")
	fun, ifun := iri(owlNS+"FunctionalProperty"), iri(owlNS+"InverseFunctionalProperty")
	inter, union := iri(owlNS+"intersectionOf"), iri(owlNS+"unionOf")
	onP, svf, avf, hv := iri(owlNS+"onProperty"), iri(owlNS+"someValuesFrom"), iri(owlNS+"allValuesFrom"), iri(owlNS+"hasValue")
	thing, same := iri(owlNS+"Thing"), iri(owlNS+"sameAs")
	first, rest, nilList := iri(rdf.RDFFirst), iri(rdf.RDFRest), iri(rdf.RDFNil)

	// The schema: the given triples of each schema predicate.
	tbox := func(p rdf.Term) []rdf.Triple {
		var r []rdf.Triple
		for _, t := range triples {
			if t.P == p {
				r = append(r, t)
			}
		}
		return r
	}
	typed := func(c rdf.Term) []rdf.Term {
		var r []rdf.Term
		for _, t := range triples {
			if t.P == typ && t.O == c {
				r = append(r, t.S)
			}
		}
		return r
	}
	list := func(head rdf.Term) []rdf.Term {
		var r []rdf.Term
		seen := map[rdf.Term]bool{}
		for x := head; x != nilList && !seen[x]; {
			seen[x] = true
			var m, next rdf.Term
			for _, t := range triples {
				if t.S == x && t.P == first {
					m = t.O
				}
				if t.S == x && t.P == rest {
					next = t.O
				}
			}
			if m.IsZero() {
				return nil
			}
			r = append(r, m)
			if next.IsZero() {
				break
			}
			x = next
		}
		return r
	}
	restrictions := func(p rdf.Term) map[rdf.Term][2]rdf.Term { // r → (property, filler/value)
		m := map[rdf.Term][2]rdf.Term{}
		for _, t := range tbox(p) {
			for _, u := range tbox(onP) {
				if u.S == t.S {
					m[t.S] = [2]rdf.Term{u.O, t.O}
				}
			}
		}
		return m
	}

	facts := map[rdf.Triple]bool{}
	var all []rdf.Triple
	add := func(t rdf.Triple) bool {
		if t.S.Kind == rdf.KindLiteral || facts[t] {
			return false
		}
		facts[t] = true
		all = append(all, t)
		return true
	}
	for _, t := range triples {
		facts[t] = true
		all = append(all, t)
	}
	var svfs, avfs, hvs map[rdf.Term][2]rdf.Term
	if owl {
		svfs, avfs, hvs = restrictions(svf), restrictions(avf), restrictions(hv)
	}
	for changed := true; changed; {
		changed = false
		snapshot := append([]rdf.Triple(nil), all...)
		derive := func(t rdf.Triple) {
			if add(t) {
				changed = true
			}
		}
		for _, f := range snapshot {
			// prp-dom, prp-rng, prp-spo1, cax-sco
			for _, s := range tbox(dom) {
				if f.P == s.S {
					derive(rdf.Triple{S: f.S, P: typ, O: s.O})
				}
			}
			for _, s := range tbox(rng) {
				if f.P == s.S {
					derive(rdf.Triple{S: f.O, P: typ, O: s.O})
				}
			}
			for _, s := range tbox(subP) {
				if f.P == s.S {
					derive(rdf.Triple{S: f.S, P: s.O, O: f.O})
				}
			}
			for _, s := range tbox(subC) {
				if f.P == typ && f.O == s.S {
					derive(rdf.Triple{S: f.S, P: typ, O: s.O})
				}
			}
			if !owl {
				continue
			}
			for _, s := range tbox(eqP) { // prp-eqp1, prp-eqp2
				if f.P == s.S {
					derive(rdf.Triple{S: f.S, P: s.O, O: f.O})
				}
				if f.P == s.O {
					derive(rdf.Triple{S: f.S, P: s.S, O: f.O})
				}
			}
			for _, s := range tbox(eqC) { // cax-eqc1, cax-eqc2
				if f.P == typ && f.O == s.S {
					derive(rdf.Triple{S: f.S, P: typ, O: s.O})
				}
				if f.P == typ && f.O == s.O {
					derive(rdf.Triple{S: f.S, P: typ, O: s.S})
				}
			}
			for _, s := range tbox(inv) { // prp-inv1, prp-inv2
				if f.P == s.S {
					derive(rdf.Triple{S: f.O, P: s.O, O: f.S})
				}
				if f.P == s.O {
					derive(rdf.Triple{S: f.O, P: s.S, O: f.S})
				}
			}
			for _, p := range typed(sym) { // prp-symp
				if f.P == p {
					derive(rdf.Triple{S: f.O, P: p, O: f.S})
				}
			}
			for _, p := range typed(trans) { // prp-trp
				if f.P != p {
					continue
				}
				for _, g := range snapshot {
					if g.P == p && g.S == f.O {
						derive(rdf.Triple{S: f.S, P: p, O: g.O})
					}
				}
			}
			for _, p := range typed(fun) { // prp-fp
				for _, g := range snapshot {
					if f.P == p && g.P == p && f.S == g.S && f.O != g.O {
						derive(rdf.Triple{S: f.O, P: same, O: g.O})
					}
				}
			}
			for _, p := range typed(ifun) { // prp-ifp
				for _, g := range snapshot {
					if f.P == p && g.P == p && f.O == g.O && f.S != g.S {
						derive(rdf.Triple{S: f.S, P: same, O: g.S})
					}
				}
			}
			for _, s := range tbox(inter) {
				ms := list(s.O)
				if len(ms) == 0 {
					continue
				}
				if f.P == typ && f.O == s.S { // cls-int2
					for _, m := range ms {
						derive(rdf.Triple{S: f.S, P: typ, O: m})
					}
				}
				if f.P == typ && f.O == ms[0] { // cls-int1
					ok := true
					for _, m := range ms {
						if !facts[rdf.Triple{S: f.S, P: typ, O: m}] {
							ok = false
						}
					}
					if ok {
						derive(rdf.Triple{S: f.S, P: typ, O: s.S})
					}
				}
			}
			for _, s := range tbox(union) { // cls-uni
				for _, m := range list(s.O) {
					if f.P == typ && f.O == m {
						derive(rdf.Triple{S: f.S, P: typ, O: s.S})
					}
				}
			}
			for r, pd := range svfs { // cls-svf1, cls-svf2
				if f.P != pd[0] {
					continue
				}
				if pd[1] == thing || facts[rdf.Triple{S: f.O, P: typ, O: pd[1]}] {
					derive(rdf.Triple{S: f.S, P: typ, O: r})
				}
			}
			for r, pd := range avfs { // cls-avf
				if f.P == pd[0] && facts[rdf.Triple{S: f.S, P: typ, O: r}] {
					derive(rdf.Triple{S: f.O, P: typ, O: pd[1]})
				}
			}
			for r, pv := range hvs { // cls-hv1, cls-hv2
				if f.P == typ && f.O == r {
					derive(rdf.Triple{S: f.S, P: pv[0], O: pv[1]})
				}
				if f.P == pv[0] && f.O == pv[1] {
					derive(rdf.Triple{S: f.S, P: typ, O: r})
				}
			}
			if f.P == same { // eq-sym, eq-trans, eq-rep-s, eq-rep-o
				derive(rdf.Triple{S: f.O, P: same, O: f.S})
				for _, g := range snapshot {
					if g.P == same && g.S == f.O {
						derive(rdf.Triple{S: f.S, P: same, O: g.O})
					}
					if g.S == f.S {
						derive(rdf.Triple{S: f.O, P: g.P, O: g.O})
					}
					if g.O == f.S {
						derive(rdf.Triple{S: g.S, P: g.P, O: f.O})
					}
				}
			}
		}
	}
	return all
}
