package wal

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
)

func sampleChanges() []graphstore.GraphChange {
	a, b := rdf.NewIRI("http://ex/a"), rdf.NewIRI("http://ex/b")
	p := rdf.NewIRI("http://ex/p")
	g := rdf.NewIRI("http://ex/g")
	return []graphstore.GraphChange{
		{Insert: []rdf.Triple{{S: a, P: p, O: b}, {S: a, P: p, O: rdf.NewLiteral("01", rdf.XSDInteger)}}},
		{Graph: g, Clear: true},
		{Graph: rdf.NewBlank("w1n2_g"), Insert: []rdf.Triple{{S: rdf.NewBlank("w1n2_x"), P: p, O: rdf.NewLangLiteral("chat", "FR")}}},
		{Graph: g, Delete: []rdf.Triple{{S: a, P: p, O: b}}, Insert: []rdf.Triple{{S: b, P: p, O: rdf.NewLiteral("", "")}}},
		{Graph: g, Drop: true},
		{Drop: true},
	}
}

func TestChangesRoundTrip(t *testing.T) {
	in := sampleChanges()
	b, err := AppendChanges([]byte("prefix"), in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:6]) != "prefix" {
		t.Fatal("AppendChanges did not append")
	}
	out, err := DecodeChanges(b[6:])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
	// A repeated term is written once.
	one, _ := AppendChanges(nil, in[:1])
	rep := graphstore.GraphChange{Insert: append(append([]rdf.Triple{}, in[0].Insert...), in[0].Insert...)}
	two, _ := AppendChanges(nil, []graphstore.GraphChange{rep})
	if len(two) > len(one)+8 {
		t.Fatalf("repeated triples take %d bytes, once %d", len(two), len(one))
	}
	if empty, _ := AppendChanges(nil, nil); len(empty) != 2 {
		t.Fatalf("no change: %d bytes", len(empty))
	}
	// Every truncation and a wrong format are errors, not panics.
	for n := 0; n < len(b)-6; n++ {
		if _, err := DecodeChanges(b[6 : 6+n]); !errors.Is(err, ErrBadRecord) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	bad := append([]byte{}, b[6:]...)
	bad[0] = 9
	if _, err := DecodeChanges(bad); !errors.Is(err, ErrBadRecord) {
		t.Fatalf("format 9: %v", err)
	}
	if _, err := AppendChanges(nil, []graphstore.GraphChange{{Insert: []rdf.Triple{{}}}}); err == nil {
		t.Fatal("a zero term was encoded")
	}
}

func FuzzDecodeChanges(f *testing.F) {
	b, _ := AppendChanges(nil, sampleChanges())
	f.Add(b)
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := DecodeChanges(b)
		if err != nil {
			return
		}
		again, err := AppendChanges(nil, cs)
		if err != nil {
			t.Fatalf("decoded changes do not encode: %v", err)
		}
		cs2, err := DecodeChanges(again)
		if err != nil || !reflect.DeepEqual(cs, cs2) {
			t.Fatalf("re-encoding changed the changes: %v", err)
		}
	})
}

// TestChangeIDsSameBytes: a change with InsertIDs (ApplyBulk's) encodes to
// the same bytes as without — terms shared with the graph name and the
// deletes, repeated subjects, predicates and objects, literals and blank
// nodes — so a replay cannot tell which way the record was written.
func TestChangeIDsSameBytes(t *testing.T) {
	iri := func(s string) rdf.Term { return rdf.NewIRI("http://ex/" + s) }
	pool := []rdf.Term{iri("a"), iri("b"), iri("c"), iri("g"), rdf.NewBlank("w1_x"),
		rdf.NewLiteral("1", rdf.XSDInteger), rdf.NewLangLiteral("x", "en"), rdf.NewLiteral("x", "")}
	preds := []rdf.Term{iri("p"), iri("q"), iri("g")}
	ids := map[rdf.Term]graphstore.ID{}
	id := func(t rdf.Term) graphstore.ID {
		if _, ok := ids[t]; !ok {
			ids[t] = graphstore.ID(len(ids) + 1)
		}
		return ids[t]
	}
	var ins []rdf.Triple
	var insIDs []graphstore.IDTriple
	for i := range 500 {
		tr := rdf.Triple{S: pool[(i/3)%5], P: preds[(i/2)%3], O: pool[(i*7)%len(pool)]}
		ins = append(ins, tr)
		insIDs = append(insIDs, graphstore.IDTriple{S: id(tr.S), P: id(tr.P), O: id(tr.O)})
	}
	other := graphstore.GraphChange{Graph: iri("g"), Delete: []rdf.Triple{{S: iri("c"), P: iri("q"), O: iri("a")}}, Insert: ins[:9]}
	for name, plain := range map[string][]graphstore.GraphChange{
		"terms before":   {{Graph: iri("g"), Delete: []rdf.Triple{{S: iri("c"), P: iri("q"), O: iri("a")}}, Insert: ins}},
		"terms after":    {{Insert: ins}, other},
		"one change":     {{Insert: ins}},
		"with IDs twice": {{Insert: ins}, {Graph: iri("h"), Insert: ins[100:]}, other},
	} {
		withIDs := slices.Clone(plain)
		withIDs[0].InsertIDs = insIDs
		if len(plain) == 3 {
			withIDs[1].InsertIDs = insIDs[100:]
		}
		a, err := AppendChanges(nil, plain)
		if err != nil {
			t.Fatal(err)
		}
		b, err := AppendChanges(nil, withIDs)
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Fatalf("%s: with IDs %d bytes, without %d: not the same bytes", name, len(b), len(a))
		}
		out, err := DecodeChanges(b)
		if err != nil || !reflect.DeepEqual(out, plain) {
			t.Fatalf("%s: decoded %+v, %v", name, out, err)
		}
	}
}

// TestTripleIDsDenseSameBytes: the references of the IDs a bulk change
// made are kept by index, the others in a map; any split of the IDs
// between the two gives the bytes of the map alone.
func TestTripleIDsDenseSameBytes(t *testing.T) {
	var ids []graphstore.IDTriple
	terms := map[graphstore.ID]rdf.Term{}
	for i := range 700 {
		x := graphstore.IDTriple{S: graphstore.ID(10 + (i/3)%97), P: graphstore.ID(1 + i%4), O: graphstore.ID(10 + (i*31)%211)}
		ids = append(ids, x)
		for _, id := range []graphstore.ID{x.S, x.P, x.O} {
			terms[id] = rdf.NewIRI(fmt.Sprintf("http://ex/t%d", id))
		}
	}
	term := func(i, j int, id graphstore.ID) (rdf.Term, error) { return terms[id], nil }
	encode := func(first graphstore.ID, made int) []byte {
		e := &changeEncoder{terms: map[rdf.Term]uint64{}}
		if err := e.tripleIDs(ids, first, made, term); err != nil {
			t.Fatal(err)
		}
		return e.dst
	}
	want := encode(0, 0)
	for _, r := range [][2]int{{10, 300}, {1, 220}, {50, 20}, {5, 100}} {
		if got := encode(graphstore.ID(r[0]), r[1]); string(got) != string(want) {
			t.Fatalf("IDs %d..%d by index: %d bytes, not the %d of the map alone", r[0], r[0]+r[1], len(got), len(want))
		}
	}
}
