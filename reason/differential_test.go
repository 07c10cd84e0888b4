package reason

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wukongd/wukongd/exec/refeval"
	"github.com/wukongd/wukongd/rdf"
)

// termDict gives terms IDs for tests (1, 2, … in order of first use).
type termDict struct {
	ids   map[rdf.Term]ID
	terms []rdf.Term
}

func newTermDict() *termDict { return &termDict{ids: map[rdf.Term]ID{}} }

func (d *termDict) id(t rdf.Term) ID {
	if id, ok := d.ids[t]; ok {
		return id
	}
	d.terms = append(d.terms, t)
	id := ID(len(d.terms))
	d.ids[t] = id
	return id
}

func (d *termDict) triple(t rdf.Triple) Triple { return Triple{d.id(t.S), d.id(t.P), d.id(t.O)} }

func (d *termDict) term(id ID) rdf.Term { return d.terms[id-1] }

func (d *termDict) vocab() Vocab {
	return NewVocab(func(iri string) (ID, bool) { return d.id(rdf.NewIRI(iri)), true })
}

func (d *termDict) isLiteral(id ID) bool { return d.term(id).Kind == rdf.KindLiteral }

// randomGraph returns a random small ontology and data set using every
// construct the rules read.
func randomGraph(r *rand.Rand) []rdf.Triple {
	iri := rdf.NewIRI
	class := func() rdf.Term { return iri(fmt.Sprintf("http://ex/C%d", r.IntN(8))) }
	prop := func() rdf.Term { return iri(fmt.Sprintf("http://ex/p%d", r.IntN(6))) }
	ind := func() rdf.Term { return iri(fmt.Sprintf("http://ex/i%d", r.IntN(14))) }
	typ := iri(rdf.RDFType)
	var ts []rdf.Triple
	add := func(s, p, o rdf.Term) { ts = append(ts, rdf.Triple{S: s, P: p, O: o}) }
	bn := 0
	blank := func() rdf.Term { bn++; return rdf.NewBlank(fmt.Sprintf("b%d", bn)) }
	list := func(ms []rdf.Term) rdf.Term {
		head := iri(rdf.RDFNil)
		for i := len(ms) - 1; i >= 0; i-- {
			n := blank()
			add(n, iri(rdf.RDFFirst), ms[i])
			add(n, iri(rdf.RDFRest), head)
			head = n
		}
		return head
	}
	var restr []rdf.Term
	for i := r.IntN(4); i > 0; i-- {
		b := blank()
		add(b, typ, iri(OWLNS+"Restriction"))
		add(b, iri(OnProperty), prop())
		switch r.IntN(4) {
		case 0:
			add(b, iri(SomeValuesFrom), class())
		case 1:
			add(b, iri(SomeValuesFrom), iri(Thing))
		case 2:
			add(b, iri(AllValuesFrom), class())
		default:
			add(b, iri(HasValue), ind())
		}
		restr = append(restr, b)
	}
	anyClass := func() rdf.Term {
		if len(restr) > 0 && r.IntN(3) == 0 {
			return restr[r.IntN(len(restr))]
		}
		return class()
	}
	owlType := []string{TransitiveProperty, SymmetricProperty, FunctionalProperty, InverseFunctionalProperty}
	for i := 3 + r.IntN(10); i > 0; i-- {
		switch r.IntN(11) {
		case 0, 1:
			add(anyClass(), iri(SubClassOf), anyClass())
		case 2:
			add(prop(), iri(SubPropertyOf), prop())
		case 3:
			add(prop(), iri(Domain), anyClass())
		case 4:
			add(prop(), iri(Range), anyClass())
		case 5:
			add(prop(), iri(InverseOf), prop())
		case 6:
			add(prop(), typ, iri(owlType[r.IntN(len(owlType))]))
		case 7:
			add(anyClass(), iri(EquivalentClass), anyClass())
		case 8:
			add(prop(), iri(EquivalentProperty), prop())
		case 9:
			add(class(), iri(IntersectionOf), list([]rdf.Term{anyClass(), anyClass()}))
		default:
			add(class(), iri(UnionOf), list([]rdf.Term{anyClass(), anyClass()}))
		}
	}
	for i := 5 + r.IntN(25); i > 0; i-- {
		switch r.IntN(10) {
		case 0, 1, 2:
			add(ind(), typ, class())
		case 3:
			add(ind(), prop(), rdf.NewLiteral(fmt.Sprint(r.IntN(3)), ""))
		case 4:
			if r.IntN(3) == 0 {
				add(ind(), iri(SameAs), ind())
				continue
			}
			fallthrough
		default:
			add(ind(), prop(), ind())
		}
	}
	return ts
}

// materializeTerms materializes ts under profile; distinct: with
// Options.Distinct (the IDs deduplicated first).
func materializeTerms(t *testing.T, ts []rdf.Triple, profile Profile, workers int, distinct ...bool) []rdf.Triple {
	t.Helper()
	dedup := len(distinct) > 0 && distinct[0]
	d := newTermDict()
	voc := d.vocab()
	var ids []Triple
	sameAs := false
	for _, x := range ts {
		id := d.triple(x)
		ids = append(ids, id)
		sameAs = sameAs || id.P == voc.SameAs
	}
	o := Compile(profile, voc, ids, sameAs)
	if dedup {
		slices.SortFunc(ids, cmpTriple)
		ids = slices.Compact(ids)
	}
	c, inferred, st, err := Materialize(context.Background(), o, ids, Options{Workers: workers, IsLiteral: d.isLiteral, Distinct: dedup})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ids {
		if x.S != 0 && !c.Has(x) {
			t.Fatalf("explicit %v not in the closure", x)
		}
	}
	if c.Len() != int(st.Explicit)+len(inferred) {
		t.Fatalf("closure has %d facts, want %d explicit + %d inferred", c.Len(), st.Explicit, len(inferred))
	}
	var out []rdf.Triple
	c.Each(func(x Triple) { out = append(out, rdf.Triple{S: d.term(x.S), P: d.term(x.P), O: d.term(x.O)}) })
	return out
}

func sortTriples(ts []rdf.Triple) []rdf.Triple {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b rdf.Triple) int {
		for _, p := range [][2]rdf.Term{{a.S, b.S}, {a.P, b.P}, {a.O, b.O}} {
			if c := compareTerm(p[0], p[1]); c != 0 {
				return c
			}
		}
		return 0
	})
	return slices.Compact(ts)
}

func compareTerm(a, b rdf.Term) int {
	sa, sb := fmt.Sprint(a), fmt.Sprint(b)
	switch {
	case sa < sb:
		return -1
	case sa > sb:
		return 1
	}
	return 0
}

// TestDifferential compares the materializer with refeval.Entail's naive
// fixpoint on random ontologies and data, for both profiles and with one
// and several workers.
func TestDifferential(t *testing.T) {
	rules := 0
	for seed := range uint64(80) {
		r := rand.New(rand.NewPCG(seed, 16))
		ts := randomGraph(r)
		for _, profile := range []Profile{RDFS, OWLRL} {
			want := sortTriples(refeval.Entail(ts, profile == OWLRL))
			for _, workers := range []int{1, 3} {
				for _, distinct := range []bool{false, true} {
					got := sortTriples(materializeTerms(t, ts, profile, workers, distinct))
					if !slices.Equal(got, want) {
						t.Fatalf("seed %d, %v, %d workers, distinct %v: closure differs\ndata: %v\nonly ours: %v\nonly reference: %v",
							seed, profile, workers, distinct, ts, minus(got, want), minus(want, got))
					}
				}
			}
			rules += len(want) - len(ts)
		}
	}
	if rules == 0 {
		t.Fatal("no random graph derived anything")
	}
}

func minus(a, b []rdf.Triple) []rdf.Triple {
	m := map[rdf.Triple]bool{}
	for _, x := range b {
		m[x] = true
	}
	var r []rdf.Triple
	for _, x := range a {
		if !m[x] {
			r = append(r, x)
		}
	}
	return r
}

// TestMaintainDifferential deletes and inserts random triples of random
// graphs through a Maintainer (every rule, owl:sameAs included) and
// compares the closure with a fresh materialization after each change.
func TestMaintainDifferential(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 17))
		ts := randomGraph(r)
		d := newTermDict()
		voc := d.vocab()
		var ids, abox []Triple
		for _, x := range ts {
			id := d.triple(x)
			ids = append(ids, id)
			if !voc.IsTBox(id) {
				abox = append(abox, id)
			}
		}
		extra := randomGraph(r) // ABox triples to insert
		var more []Triple
		for _, x := range extra {
			if id := d.triple(x); !voc.IsTBox(id) {
				more = append(more, id)
			}
		}
		o := Compile(OWLRL, voc, ids, true)
		opts := Options{Workers: 2, IsLiteral: d.isLiteral}
		m, err := NewMaintainer(ctx, o, ids, opts)
		if err != nil {
			t.Fatal(err)
		}
		current := map[Triple]bool{}
		for _, x := range ids {
			current[x] = true
		}
		for step := range 4 {
			var del, ins []Triple
			for range r.IntN(4) {
				if len(abox) > 0 {
					del = append(del, abox[r.IntN(len(abox))])
				}
			}
			for range r.IntN(4) {
				if len(more) > 0 {
					ins = append(ins, more[r.IntN(len(more))])
				}
			}
			if _, err := m.Maintain(ctx, del, ins); err != nil {
				t.Fatal(err)
			}
			for _, x := range del {
				delete(current, x)
			}
			for _, x := range ins {
				current[x] = true
			}
			var final []Triple
			for x := range current {
				final = append(final, x)
			}
			fresh, _, _, err := Materialize(ctx, Compile(OWLRL, voc, final, true), final, opts)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []Triple
			fresh.Each(func(x Triple) { want = append(want, x) })
			m.Closure().Each(func(x Triple) { got = append(got, x) })
			slices.SortFunc(want, cmpTriple)
			slices.SortFunc(got, cmpTriple)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d: maintained closure differs from a fresh one (deleted %v, inserted %v)\nonly maintained: %v\nonly fresh: %v",
					seed, step, del, ins, minusIDs(got, want), minusIDs(want, got))
			}
		}
	}
}

func minusIDs(a, b []Triple) []Triple {
	m := map[Triple]bool{}
	for _, x := range b {
		m[x] = true
	}
	var r []Triple
	for _, x := range a {
		if !m[x] {
			r = append(r, x)
		}
	}
	return r
}
