package reason

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

// streamClosure materializes ids under o with MaterializeStream and returns
// the closure (explicit and emitted, sorted, distinct); it fails the test
// if an explicit triple or a repeated type is emitted.
func streamClosure(t *testing.T, o *Ontology, ids []Triple, isLiteral func(ID) bool) ([]Triple, StreamStats) {
	t.Helper()
	explicit := map[Triple]bool{}
	maxID := ID(0)
	for _, x := range ids {
		explicit[x] = true
		maxID = max(maxID, x.S, x.P, x.O)
	}
	in := StreamInput{
		Each: func(ctx context.Context, fn func(Triple) error) error {
			for _, x := range ids {
				if err := fn(x); err != nil {
					return err
				}
			}
			return nil
		},
		HasEdge:   func(x Triple) bool { return explicit[x] },
		MaxID:     maxID,
		IsLiteral: isLiteral,
		Dir:       t.TempDir(),
	}
	types := map[Triple]bool{}
	out := slices.Clone(ids)
	st, err := MaterializeStream(context.Background(), o, in, func(x Triple) error {
		if explicit[x] {
			t.Fatalf("explicit triple %v emitted", x)
		}
		if x.P == o.voc.Type {
			if types[x] {
				t.Fatalf("type %v emitted twice", x)
			}
			types[x] = true
		}
		out = append(out, x)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, cmpTriple)
	return slices.Compact(out), st
}

// streamable drops from a random graph what MaterializeStream does not
// cover: owl:sameAs, functional and inverse-functional properties,
// hasValue restrictions.
func streamable(ts []rdf.Triple) []rdf.Triple {
	return slices.DeleteFunc(slices.Clone(ts), func(x rdf.Triple) bool {
		switch {
		case x.P.Value == SameAs || x.P.Value == HasValue:
			return true
		case x.O.Value == FunctionalProperty || x.O.Value == InverseFunctionalProperty:
			return true
		}
		return false
	})
}

// TestStreamDifferential: the out-of-core materialization gives the same
// closure as Materialize (itself checked against refeval's naive
// fixpoint) on random ontologies and data without sameAs, functional
// properties and hasValue, for both profiles.
func TestStreamDifferential(t *testing.T) {
	derived := 0
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 18))
		ts := streamable(randomGraph(r))
		for _, profile := range []Profile{RDFS, OWLRL} {
			d := newTermDict()
			voc := d.vocab()
			var ids []Triple
			for _, x := range ts {
				ids = append(ids, d.triple(x))
			}
			o := Compile(profile, voc, ids, false)
			if err := o.Streamable(); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			c, _, _, err := Materialize(context.Background(), o, ids, Options{Workers: 1, IsLiteral: d.isLiteral})
			if err != nil {
				t.Fatal(err)
			}
			var want []Triple
			c.Each(func(x Triple) { want = append(want, x) })
			slices.SortFunc(want, cmpTriple)
			got, _ := streamClosure(t, o, ids, d.isLiteral)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, %v: closure differs\ndata: %v\nonly stream: %v\nonly Materialize: %v",
					seed, profile, ts, minusIDs(got, want), minusIDs(want, got))
			}
			derived += len(want) - len(ids)
		}
	}
	if derived == 0 {
		t.Fatal("no random graph derived anything")
	}
}

// TestStreamNotStreamable: what the out-of-core materialization does not
// cover is refused, not computed wrong.
func TestStreamNotStreamable(t *testing.T) {
	iri := rdf.NewIRI
	for _, ts := range [][]rdf.Triple{
		{{S: iri("http://ex/a"), P: iri(SameAs), O: iri("http://ex/b")}},
		{{S: iri("http://ex/p"), P: iri(rdf.RDFType), O: iri(FunctionalProperty)}},
		{{S: iri("http://ex/r"), P: iri(OnProperty), O: iri("http://ex/p")}, {S: iri("http://ex/r"), P: iri(HasValue), O: iri("http://ex/v")}},
	} {
		d := newTermDict()
		voc := d.vocab()
		var ids []Triple
		sameAs := false
		for _, x := range ts {
			id := d.triple(x)
			ids = append(ids, id)
			sameAs = sameAs || id.P == voc.SameAs
		}
		o := Compile(OWLRL, voc, ids, sameAs)
		if err := o.Streamable(); err == nil {
			t.Fatalf("%v: streamable, want refused", ts)
		}
	}
}
