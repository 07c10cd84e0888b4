package graphstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

// TestFingerprintsSameLookups: with the table's fingerprints built, the
// base dictionary finds every term it holds (IRIs with prefixes, literals
// with affixes, datatypes and languages, blank nodes) at the same ID and
// none it lacks; a slot's fingerprint is 0 exactly when the slot is empty
// — also after a compaction that left an aliased vertex out of the table.
func TestFingerprintsSameLookups(t *testing.T) {
	ctx := context.Background()
	ex := func(f string, a ...any) rdf.Term { return rdf.NewIRI("http://ex.org/" + fmt.Sprintf(f, a...)) }
	base := testTriples(3000, 5)
	for i := range 200 {
		base = append(base,
			tri(ex("s%d", i), ex("p%d", i%7), rdf.NewLiteral(fmt.Sprintf("value %d of http://ex.org/", i), "")),
			tri(ex("s%d", i), ex("q"), rdf.NewLangLiteral(fmt.Sprintf("mot %d", i), "fr")),
			tri(rdf.NewBlank(fmt.Sprintf("b%d", i)), ex("r"), rdf.NewLiteral(fmt.Sprint(i), rdf.XSDInteger)))
	}
	ds := buildDataset(t, 4, map[rdf.Term][]rdf.Triple{{}: base})
	defer ds.Close()
	// v becomes a predicate: a compaction leaves its vertex entry out of
	// the table.
	v := base[0].S
	nd, err := ds.Apply(ctx, GraphChange{Insert: []rdf.Triple{tri(ex("x"), v, ex("y"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer nd.Close()
	cd, err := nd.compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cd.Close()
	for _, d := range []*Dict{ds.dict, cd.dict} {
		var terms []rdf.Term
		for _, tr := range base {
			terms = append(terms, tr.S, tr.P, tr.O)
		}
		terms = append(terms, ex("x"), ex("y"), ex("absent"), rdf.NewLiteral("absent", ""), rdf.NewLangLiteral("mot 1", "de"),
			rdf.NewLiteral("1", rdf.XSDDecimal), rdf.NewBlank("absent"))
		type found struct {
			id ID
			ok bool
		}
		want := map[rdf.Term]found{}
		for _, x := range terms {
			id, ok := d.lookupBase(x)
			want[x] = found{id, ok}
		}
		if d.fingerprints() != nil {
			t.Fatal("fingerprints before they were built")
		}
		if err := d.buildFingerprints(); err != nil {
			t.Fatal(err)
		}
		fp := d.fingerprints()
		if uint64(len(fp)) != d.slots {
			t.Fatalf("%d fingerprints for %d slots", len(fp), d.slots)
		}
		for i := range d.slots {
			if (fp[i] == 0) != (d.slot(i) == 0) {
				t.Fatalf("slot %d: entry %d, fingerprint %d", i, d.slot(i), fp[i])
			}
		}
		hits := 0
		for x, w := range want {
			if id, ok := d.lookupBase(x); id != w.id || ok != w.ok {
				t.Fatalf("%v: %d %v with fingerprints, %d %v without", x, id, ok, w.id, w.ok)
			}
			if w.ok {
				hits++
			}
		}
		if hits < len(want)-7 {
			t.Fatalf("only %d of %d terms found", hits, len(want))
		}
	}
}

// TestFingerprintsBuiltByBigInsertions: a bulk insertion of a few new
// terms leaves the table without fingerprints; one that looks up max(4096,
// slots/8) terms in the table builds them, and its triples go in as
// through Apply.
func TestFingerprintsBuiltByBigInsertions(t *testing.T) {
	ctx := context.Background()
	ex := func(f string, a ...any) rdf.Term { return rdf.NewIRI("http://ex.org/" + fmt.Sprintf(f, a...)) }
	base := testTriples(400, 3)
	ds := buildDataset(t, 4, map[rdf.Term][]rdf.Triple{{}: base})
	defer ds.Close()
	small := []rdf.Triple{tri(ex("new1"), ex("p0"), ex("new2"))}
	nd, _, err := ds.ApplyBulk(ctx, rdf.Term{}, false, bulkOf(t, ds, small, 97))
	if err != nil {
		t.Fatal(err)
	}
	defer nd.Close()
	if nd.dict.fingerprints() != nil {
		t.Fatal("a one-triple insertion built the fingerprints")
	}
	var big []rdf.Triple
	for i := range 3000 {
		big = append(big, tri(ex("s%d", i), ex("p0"), ex("o%d", i)))
	}
	want, err := nd.Apply(ctx, GraphChange{Insert: big})
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	ref := snapshotBytes(t, want)
	want.Discard()
	got, _, err := nd.ApplyBulk(ctx, rdf.Term{}, false, bulkOf(t, nd, big, 97))
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got.dict.fingerprints() == nil {
		t.Fatal("9,000 lookups did not build the fingerprints")
	}
	sameSnapshots(t, "bulk with fingerprints vs Apply", snapshotBytes(t, got), ref)
}
