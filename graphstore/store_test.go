package graphstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

func tri(s, p, o rdf.Term) rdf.Triple { return rdf.Triple{S: s, P: p, O: o} }

// testTriples returns a random graph with types, literals of every kind,
// repeats, and a term first seen as a plain vertex and later as a class.
func testTriples(n int, seed uint64) []rdf.Triple {
	r := rand.New(rand.NewPCG(seed, 2))
	ex := func(f string, a ...any) rdf.Term { return rdf.NewIRI("http://ex.org/" + fmt.Sprintf(f, a...)) }
	typ := rdf.NewIRI(rdf.RDFType)
	ts := []rdf.Triple{
		// "Late" is an object first, a class later.
		tri(ex("v0"), ex("p0"), ex("Late")),
		tri(ex("v1"), ex("p1"), rdf.NewLiteral("01", rdf.XSDInteger)),
		tri(ex("v1"), ex("p1"), rdf.NewLiteral("1", rdf.XSDInteger)),
		tri(ex("v2"), ex("p2"), rdf.NewLangLiteral("chat", "FR")),
		tri(ex("v2"), ex("p2"), rdf.NewLiteral("chat", "")),
		tri(rdf.NewBlank("b1"), ex("p2"), rdf.NewBlank("b2")),
		tri(ex("v4"), ex("p3"), rdf.NewLiteral("say \"hi\"\n\\ done\r", "")),
		tri(ex("v4"), ex("p3"), rdf.NewLiteral("ünïcødé ✓", "http://ex.org/dt#x")),
		tri(ex("v4"), ex("p3"), rdf.NewIRI("http://ex.org/a b<c>")),
		tri(ex("v4"), ex("p3"), rdf.NewIRI("urn:isbn:0451450523")),
		tri(ex("v4"), ex("p3"), rdf.NewIRI("http://ex.org/ns#")),
		tri(ex("v4"), ex("p3"), rdf.NewLiteral("", "")),
		// Escapes in a shared IRI prefix, a datatype and a literal with a
		// shared head and suffix.
		tri(ex("v4"), ex("p3"), rdf.NewIRI("http://ex.org/a{b}/Student12")),
		tri(ex("v4"), ex("p3"), rdf.NewLiteral("7", "http://ex.org/d t")),
		tri(ex("v4"), ex("p3"), rdf.NewLiteral("Student7@Dep\"t\n3.Univ7.edu", "")),
	}
	for len(ts) < n {
		s := ex("v%d", r.IntN(n/4+1))
		switch r.IntN(6) {
		case 0:
			ts = append(ts, rdf.Triple{S: s, P: typ, O: ex("C%d", r.IntN(5))})
		case 1:
			ts = append(ts, rdf.Triple{S: s, P: ex("name"), O: rdf.NewLiteral(fmt.Sprintf("n%d", r.IntN(n)), "")})
		default:
			ts = append(ts, rdf.Triple{S: s, P: ex("p%d", r.IntN(6)), O: ex("v%d", r.IntN(n/4+1))})
		}
		if r.IntN(10) == 0 {
			ts = append(ts, ts[r.IntN(len(ts))]) // a repeat
		}
	}
	ts = append(ts, tri(ex("v3"), typ, ex("Late")))
	return ts
}

func buildStore(t testing.TB, ts []rdf.Triple, shards, batch int) (*Store, *Builder) {
	t.Helper()
	b, err := NewBuilder(shards)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(ts); i += batch {
		if err := b.AddTriples(ts[i:min(i+batch, len(ts))]); err != nil {
			t.Fatal(err)
		}
	}
	st, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, b
}

// reference is the naive model: every list a store must return.
type reference struct {
	lists    map[Key][]ID
	index    []map[Key][]ID // per shard: index-vertex keys
	distinct int
}

func buildReference(t testing.TB, st *Store, ts []rdf.Triple) *reference {
	d := st.Dict()
	id := func(x rdf.Term) ID {
		v, ok := d.Lookup(x)
		if !ok {
			t.Fatalf("term %s not in the dictionary", x)
		}
		return v
	}
	set := map[[3]ID]bool{}
	for _, tr := range ts {
		set[[3]ID{id(tr.S), id(tr.P), id(tr.O)}] = true
	}
	ref := &reference{lists: map[Key][]ID{}, index: make([]map[Key][]ID, st.NumShards()), distinct: len(set)}
	for i := range ref.index {
		ref.index[i] = map[Key][]ID{}
	}
	addU := func(m map[Key][]ID, k Key, v ID) {
		if !slices.Contains(m[k], v) {
			m[k] = append(m[k], v)
		}
	}
	for tr := range set {
		s, p, o := tr[0], tr[1], tr[2]
		so := st.Owner(s)
		addU(ref.lists, MakeKey(s, p, Out), o)
		addU(ref.lists, MakeKey(s, AllPredicates, Out), p)
		addU(ref.index[so], MakeKey(IndexVertex, p, Out), s)
		addU(ref.index[so], MakeKey(IndexVertex, AllPredicates, Out), p)
		if p == TypeID {
			addU(ref.index[so], MakeKey(IndexVertex, o, In), s)
			continue
		}
		oo := st.Owner(o)
		addU(ref.lists, MakeKey(o, p, In), s)
		addU(ref.lists, MakeKey(o, AllPredicates, In), p)
		addU(ref.index[oo], MakeKey(IndexVertex, p, In), o)
		addU(ref.index[oo], MakeKey(IndexVertex, AllPredicates, In), p)
	}
	for _, m := range append([]map[Key][]ID{ref.lists}, ref.index...) {
		for _, l := range m {
			slices.Sort(l)
		}
	}
	return ref
}

func TestStoreMatchesReference(t *testing.T) {
	ts := testTriples(3000, 1)
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			st, b := buildStore(t, ts, shards, 97)
			ref := buildReference(t, st, ts)
			c := b.Counters()
			if c.Read != uint64(len(ts)) || c.Distinct != uint64(ref.distinct) || c.Duplicates != uint64(len(ts)-ref.distinct) ||
				c.Terms != uint64(st.Dict().Len()) {
				t.Fatalf("counters %+v, want read %d distinct %d", c, len(ts), ref.distinct)
			}
			if st.Stats().Triples != uint64(ref.distinct) {
				t.Fatalf("stats triples %d, want %d", st.Stats().Triples, ref.distinct)
			}
			checkStore(t, st, ref)
		})
	}
}

func checkStore(t *testing.T, st *Store, ref *reference) {
	t.Helper()
	ctx := context.Background()
	for _, from := range st.LocalShards() {
		v := st.Shard(from)
		for k, want := range ref.lists {
			got, err := v.AppendEdges(ctx, nil, k.Vertex(), k.Pred(), k.Dir())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("shard %d: %v = %v, want %v", from, k, got, want)
			}
		}
		// Index vertices list exactly the local members.
		for k, want := range ref.index[from] {
			if got := v.AppendIndex(nil, k.Pred(), k.Dir()); !slices.Equal(got, want) {
				t.Fatalf("shard %d: index %v = %v, want %v", from, k, got, want)
			}
		}
		for _, d := range []Dir{In, Out} {
			got := v.AppendPredicates(nil, d)
			want := ref.index[from][MakeKey(IndexVertex, AllPredicates, d)]
			if !slices.Equal(got, want) {
				t.Fatalf("shard %d: predicates %s = %v, want %v", from, d, got, want)
			}
		}
		// rdf:type objects are not in-edges.
		for k := range ref.lists {
			if k.Pred() == TypeID && k.Dir() == Out {
				got, _ := v.AppendEdges(ctx, nil, k.Vertex(), TypeID, In)
				if len(got) != 0 {
					t.Fatalf("(v, rdf:type, in) is stored: %v", got)
				}
			}
		}
		// Absent keys are empty, not errors.
		got, err := v.AppendEdges(ctx, []ID{42}, FirstVertexID+1_000_000, 2, Out)
		if err != nil || !slices.Equal(got, []ID{42}) {
			t.Fatalf("absent key: %v, %v", got, err)
		}
	}
}

func TestRemoteLookupThroughFabric(t *testing.T) {
	ts := testTriples(2000, 3)
	st, _ := buildStore(t, ts, 4, 500)
	ref := buildReference(t, st, ts)
	ctx := context.Background()
	v0 := st.Shard(0)
	var keys []Key
	var want []ID
	var wantEnds []int
	for k, l := range ref.lists {
		owner := st.Owner(k.Vertex())
		before := st.Counters()
		got, err := v0.AppendEdges(ctx, nil, k.Vertex(), k.Pred(), k.Dir())
		if err != nil {
			t.Fatal(err)
		}
		d := st.Counters().Sub(before)
		local := st.Shard(owner).table.AppendValues(nil, uint64(k))
		if !slices.Equal(got, asIDs(local)) || !slices.Equal(got, l) {
			t.Fatalf("%v: via shard 0 %v, at owner %d %v", k, got, owner, local)
		}
		switch {
		case owner == 0 && d.Reads != 0:
			t.Fatalf("local lookup of %v used the fabric: %+v", k, d)
		case owner != 0 && len(l) == 1 && d.Reads < 1:
			t.Fatalf("remote lookup of %v (inline) made %d reads", k, d.Reads)
		case owner != 0 && len(l) > 1 && d.Reads < 2:
			t.Fatalf("remote lookup of %v made %d reads, want bucket + value", k, d.Reads)
		}
		keys = append(keys, k)
		want = append(want, l...)
		wantEnds = append(wantEnds, len(want))
	}
	before := st.Counters()
	got, ends, err := v0.AppendEdgesBatch(ctx, keys, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) || !slices.Equal(ends, wantEnds) {
		t.Fatal("batched lookups differ from single ones")
	}
	// One round per chain level plus one for values, each one round trip
	// per peer (3 peers): far fewer than one per key.
	if d := st.Counters().Sub(before); d.RoundTrips > 5*uint64(st.NumShards()-1) || d.Reads < uint64(len(keys)/2) {
		t.Fatalf("batch of %d keys took %d round trips, %d reads", len(keys), d.RoundTrips, d.Reads)
	}
	// A failed node is an error, not a panic or an empty list.
	lb := st.Fabric().(*rdmakv.Loopback)
	for k := range ref.lists {
		if st.Owner(k.Vertex()) == 2 {
			lb.SetDown(2, true)
			if _, err := v0.AppendEdges(ctx, nil, k.Vertex(), k.Pred(), k.Dir()); err == nil {
				t.Fatal("lookup on a down node succeeded")
			}
			lb.SetDown(2, false)
			break
		}
	}
}

func TestDictionary(t *testing.T) {
	ts := testTriples(500, 5)
	st, _ := buildStore(t, ts, 2, 1000)
	d := st.Dict()
	seen := map[rdf.Term]bool{}
	for _, tr := range ts {
		for _, x := range []rdf.Term{tr.S, tr.P, tr.O} {
			seen[x] = true
			id, ok := d.Lookup(x)
			if !ok {
				t.Fatalf("%s not found", x)
			}
			back, ok := d.Term(id)
			if !ok || back != x {
				t.Fatalf("Term(Lookup(%s)) = %s", x, back)
			}
			nt, ok := d.AppendNTriples([]byte("x"), id)
			if !ok || string(nt[1:]) != x.String() {
				t.Fatalf("AppendNTriples(%s) = %q", x, nt)
			}
		}
	}
	if d.Len() != len(seen) {
		t.Fatalf("Len = %d, want %d", d.Len(), len(seen))
	}
	one, _ := d.Lookup(rdf.NewLiteral("1", rdf.XSDInteger))
	zeroOne, _ := d.Lookup(rdf.NewLiteral("01", rdf.XSDInteger))
	if one == zeroOne {
		t.Fatal(`"01"^^xsd:integer and "1"^^xsd:integer share an ID`)
	}
	if a, _ := d.Lookup(rdf.NewLangLiteral("chat", "fr")); a == 0 {
		t.Fatal("language-tagged literal lost")
	} else if b, _ := d.Lookup(rdf.NewLiteral("chat", "")); a == b {
		t.Fatal("language tag ignored")
	}
	for _, x := range []rdf.Term{rdf.NewIRI("http://ex.org/none"), rdf.NewLiteral("1", "http://ex.org/dt"), rdf.NewLangLiteral("chat", "de"), {}} {
		if _, ok := d.Lookup(x); ok {
			t.Fatalf("unknown term %s found", x)
		}
	}
	if id, _ := d.Lookup(rdf.NewIRI(rdf.RDFType)); id != TypeID || d.TypeID() != TypeID {
		t.Fatalf("rdf:type has ID %d", id)
	}
	late, _ := d.Lookup(rdf.NewIRI("http://ex.org/Late"))
	if !d.IsPredicateOrClass(late) || !d.IsClass(late) || late >= FirstVertexID {
		t.Fatalf("class first seen as a vertex got ID %d", late)
	}
	p0, _ := d.Lookup(rdf.NewIRI("http://ex.org/p0"))
	v0, _ := d.Lookup(rdf.NewIRI("http://ex.org/v0"))
	if !d.IsPredicate(p0) || d.IsClass(p0) || d.IsPredicateOrClass(v0) || v0 < FirstVertexID {
		t.Fatalf("roles: p0=%d v0=%d", p0, v0)
	}
	for _, bad := range []ID{0, FirstVertexID - 1, d.MaxID() + 1} {
		if _, ok := d.Term(bad); ok {
			t.Fatalf("Term(%d) found", bad)
		}
	}
}

func TestStats(t *testing.T) {
	ex := func(s string) rdf.Term { return rdf.NewIRI("http://ex.org/" + s) }
	typ := rdf.NewIRI(rdf.RDFType)
	ts := []rdf.Triple{
		tri(ex("a"), typ, ex("Student")), tri(ex("b"), typ, ex("Student")), tri(ex("c"), typ, ex("Prof")),
		tri(ex("a"), ex("takes"), ex("x")), tri(ex("a"), ex("takes"), ex("y")), tri(ex("b"), ex("takes"), ex("x")),
		tri(ex("c"), ex("teaches"), ex("x")), tri(ex("c"), ex("teaches"), ex("x")),
		tri(ex("x"), ex("name"), rdf.NewLiteral("X", "")),
	}
	st, b := buildStore(t, ts, 3, 2)
	d, s := st.Dict(), st.Stats()
	id := func(x rdf.Term) ID { v, _ := d.Lookup(x); return v }
	if b.Counters().Duplicates != 1 || s.Triples != 8 {
		t.Fatalf("duplicates %d triples %d", b.Counters().Duplicates, s.Triples)
	}
	if p, _ := s.Predicate(id(ex("takes"))); p.Triples != 3 || p.Subjects != 2 || p.Objects != 2 {
		t.Fatalf("takes: %+v", p)
	}
	if p, _ := s.Predicate(TypeID); p.Triples != 3 || p.Subjects != 3 || p.Objects != 2 {
		t.Fatalf("rdf:type: %+v", p)
	}
	if c, _ := s.Class(id(ex("Student"))); c.Instances != 2 {
		t.Fatalf("Student: %+v", c)
	}
	if x, _ := s.ClassPredicate(id(ex("Student")), id(ex("takes")), Out); x.Vertices != 2 || x.Edges != 3 {
		t.Fatalf("Student takes: %+v", x)
	}
	if x, ok := s.ClassPredicate(id(ex("Prof")), id(ex("takes")), Out); ok {
		t.Fatalf("Prof takes: %+v", x)
	}
	if s.Subjects != 4 || s.Objects != 3 || s.Untyped != 1 {
		t.Fatalf("subjects %d objects %d untyped %d", s.Subjects, s.Objects, s.Untyped)
	}
}

func TestAddRawTriplesMatchesAddTriples(t *testing.T) {
	ts := testTriples(2000, 8)
	ts = append(ts, tri(rdf.NewIRI("http://ex.org/v1"), rdf.NewIRI("http://ex.org/p9"), rdf.NewLangLiteral("Chat", "EN-gb")),
		tri(rdf.NewIRI("http://ex.org/v1"), rdf.NewIRI("http://ex.org/p9"), rdf.NewLiteral("x", rdf.XSDString)))
	want, _ := buildStore(t, ts, 3, 128)
	b, err := NewBuilder(3)
	if err != nil {
		t.Fatal(err)
	}
	raw := func(x rdf.Term) RawTerm {
		r := RawTerm{Kind: x.Kind, Value: []byte(x.Value), Datatype: []byte(x.Datatype), Lang: []byte(x.Lang)}
		if x.Lang == "en-gb" {
			r.Lang = []byte("EN-gb") // upper case is normalised
		}
		return r
	}
	for i := 0; i < len(ts); i += 100 {
		var batch []RawTriple
		for _, tr := range ts[i:min(i+100, len(ts))] {
			batch = append(batch, RawTriple{S: raw(tr.S), P: raw(tr.P), O: raw(tr.O)})
		}
		if err := b.AddRawTriples(batch); err != nil {
			t.Fatal(err)
		}
		// The builder must not keep the caller's bytes.
		for _, r := range batch {
			for _, x := range []RawTerm{r.S, r.P, r.O} {
				for _, buf := range [][]byte{x.Value, x.Datatype, x.Lang} {
					for k := range buf {
						buf[k] = '#'
					}
				}
			}
		}
	}
	got, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got.Dict().Len() != want.Dict().Len() || got.Stats().Triples != want.Stats().Triples {
		t.Fatalf("raw: %d terms %d triples; strings: %d terms %d triples",
			got.Dict().Len(), got.Stats().Triples, want.Dict().Len(), want.Stats().Triples)
	}
	checkStore(t, got, buildReference(t, got, ts))
	for _, tr := range ts {
		for _, x := range []rdf.Term{tr.S, tr.P, tr.O} {
			id, ok := got.Dict().Lookup(x)
			back, _ := got.Dict().Term(id)
			if !ok || back != x {
				t.Fatalf("%s: raw-built dictionary gives %d %s", x, id, back)
			}
		}
	}
}

func TestConcurrentFeeding(t *testing.T) {
	ts := testTriples(4000, 12)
	want, _ := buildStore(t, ts, 4, 4000)
	b, err := NewBuilder(4)
	if err != nil {
		t.Fatal(err)
	}
	// A progress reporter polls the counters throughout.
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			default:
				b.Counters()
			}
		}
	}()
	defer func() { close(stop); <-polled }()
	done := make(chan error)
	for w := 0; w < 4; w++ {
		go func(w int) {
			var err error
			for i := w * 50; i < len(ts) && err == nil; i += 200 {
				err = b.AddTriples(ts[i:min(i+50, len(ts))])
			}
			done <- err
		}(w)
	}
	for w := 0; w < 4; w++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got.Stats().Triples != want.Stats().Triples || got.Dict().Len() != want.Dict().Len() {
		t.Fatalf("concurrent: %d triples %d terms, sequential: %d, %d",
			got.Stats().Triples, got.Dict().Len(), want.Stats().Triples, want.Dict().Len())
	}
	checkStore(t, got, buildReference(t, got, ts))
}
