package graphstore

import (
	"context"
	"slices"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

// TestFailedRenumberingLeavesNothing: a write that moves a term the
// overlay holds (a vertex an earlier write added) to a low ID — it is
// used as a predicate or a class — and then fails must leave the
// dictionary as it was: the term keeps its ID for every version, and the
// next write finds its triples. (The rollback used to delete the term's
// entry from the overlay's map with the low ID's, so the term became
// unknown: the next write gave it a new ID and its triples were lost to
// every query naming it.)
func TestFailedRenumberingLeavesNothing(t *testing.T) {
	ctx := context.Background()
	ex := func(s string) rdf.Term { return rdf.NewIRI("http://ex.org/" + s) }
	typ := rdf.NewIRI(rdf.RDFType)
	for _, tc := range []struct {
		name string
		use  rdf.Triple // makes ex:v a predicate or a class
	}{
		{"predicate", tri(ex("x"), ex("v"), ex("y"))},
		{"class", tri(ex("x"), typ, ex("v"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := testTriples(200, 5)
			ds := buildDataset(t, 2, map[rdf.Term][]rdf.Triple{{}: base})
			// ex:v is new: an overlay vertex, with triples of its own.
			mine := []rdf.Triple{tri(ex("a"), ex("p"), ex("v")), tri(ex("v"), ex("p"), ex("b"))}
			d1, err := ds.Apply(ctx, GraphChange{Insert: mine})
			if err != nil {
				t.Fatal(err)
			}
			defer d1.Close()
			id, ok := d1.Dict().Lookup(ex("v"))
			if !ok || d1.Dict().IsPredicateOrClass(id) {
				t.Fatalf("ex:v: ID %d, %v", id, ok)
			}
			// A write that moves ex:v to a low ID, then fails (a bad graph
			// name in its second change).
			_, err = d1.Apply(ctx, GraphChange{Insert: []rdf.Triple{tc.use}},
				GraphChange{Graph: rdf.NewLiteral("not a graph name", ""), Insert: []rdf.Triple{tri(ex("q"), ex("p"), ex("r"))}})
			if err == nil {
				t.Fatal("the write with a bad graph name went through")
			}
			if got, ok := d1.Dict().Lookup(ex("v")); !ok || got != id {
				t.Fatalf("after the failed write ex:v has ID %d (%v), before %d", got, ok, id)
			}
			// The next write, and its view of ex:v's triples.
			d2, err := d1.Apply(ctx, GraphChange{Insert: []rdf.Triple{tri(ex("c"), ex("p"), ex("v"))}})
			if err != nil {
				t.Fatal(err)
			}
			defer d2.Close()
			want := append(slices.Clone(base), mine...)
			want = append(want, tri(ex("c"), ex("p"), ex("v")))
			checkAgainstBuild(t, d2, d2.Default(), want)
			if got, _ := d2.Dict().Lookup(ex("v")); got != id {
				t.Fatalf("the next write gave ex:v ID %d, it had %d", got, id)
			}
		})
	}
}

// TestFailedWriteLeavesNoDelta: a write that deleted and inserted
// triples and then failed leaves nothing in the delta for the next write
// (which gets the same stamp) to read as its own.
func TestFailedWriteLeavesNoDelta(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{10, parallelWriteMin + 10} { // one writer, and one per shard
		base := testTriples(max(200, 2*n), 5)
		ds := buildDataset(t, 4, map[rdf.Term][]rdf.Triple{{}: base})
		var ins []rdf.Triple
		for i := range n {
			ins = append(ins, tri(rdf.NewIRI("http://ex.org/new"), rdf.NewIRI("http://ex.org/p"), rdf.NewLiteral(string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)), "")))
		}
		_, err := ds.Apply(ctx, GraphChange{Delete: base[:n], Insert: ins},
			GraphChange{Graph: rdf.NewLiteral("not a graph name", "")})
		if err == nil {
			t.Fatal("the write with a bad graph name went through")
		}
		extra := tri(rdf.NewIRI("http://ex.org/c"), rdf.NewIRI("http://ex.org/p"), rdf.NewIRI("http://ex.org/d"))
		d2, err := ds.Apply(ctx, GraphChange{Insert: []rdf.Triple{extra}})
		if err != nil {
			t.Fatal(err)
		}
		checkAgainstBuild(t, d2, d2.Default(), append(slices.Clone(base), extra))
		d2.Close()
	}
}
