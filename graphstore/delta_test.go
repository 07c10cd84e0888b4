package graphstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

// checkBatchLists compares AppendEdgesBatch from every shard (local and
// remote keys in one batch) with the reference.
func checkBatchLists(t *testing.T, st *Store, ref *reference) {
	t.Helper()
	var keys []Key
	var want []ID
	var ends []int
	for k, l := range ref.lists {
		keys = append(keys, k)
		want = append(want, l...)
		ends = append(ends, len(want))
	}
	// Absent keys in the batch too.
	keys = append(keys, MakeKey(FirstVertexID+12345, 3, Out))
	ends = append(ends, len(want))
	for _, from := range st.LocalShards() {
		got, gotEnds, err := st.Shard(from).AppendEdgesBatch(context.Background(), keys, []ID{7}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != 7 || !slices.Equal(got[1:], want) {
			t.Fatalf("shard %d: batched lists differ from the reference", from)
		}
		for i := range gotEnds {
			gotEnds[i]--
		}
		if !slices.Equal(gotEnds, ends) {
			t.Fatalf("shard %d: batch ends differ", from)
		}
	}
}

// checkAgainstBuild checks a graph of a written dataset against the
// reference model and its statistics against a store built from scratch
// from the same triples (over the same dictionary IDs).
func checkAgainstBuild(t *testing.T, ds *Dataset, st *Store, want []rdf.Triple) {
	t.Helper()
	if got, w := contents(t, ds.Dict(), st), ntSet(want); !slices.Equal(got, w) {
		t.Fatalf("graph has %d triples, want %d", len(got), len(w))
	}
	ref := buildReference(t, st, want)
	checkStore(t, st, ref)
	checkBatchLists(t, st, ref)
	c, err := ds.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var cst *Store
	if st == ds.Default() {
		cst = c.Default()
	} else {
		for i, g := range ds.Graphs() {
			if g.Store == st {
				cst = c.Graphs()[i].Store
			}
		}
	}
	if cst.hasDelta() {
		t.Fatal("a compacted store has a delta")
	}
	checkStore(t, cst, ref)
	a, b := *st.Stats(), *cst.Stats()
	a.Terms, b.Terms = 0, 0
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("statistics after writes differ from a build's:\n got %+v\nwant %+v", a, b)
	}
}

// TestDeltaWritesMatchReference applies random insert/delete sequences
// through the delta (new terms, new predicates and classes, a vertex that
// becomes a predicate and one that becomes a class, named graphs) and
// checks every list, the statistics, older versions, Discard and
// determinism.
func TestDeltaWritesMatchReference(t *testing.T) {
	ctx := context.Background()
	ex := exIRI
	typ := rdf.NewIRI(rdf.RDFType)
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(shards), 9))
			base := testTriples(800, 11)
			ds := buildDataset(t, shards, map[rdf.Term][]rdf.Triple{{}: base})
			cur := map[rdf.Triple]bool{}
			for _, tr := range base {
				cur[tr] = true
			}
			curA := map[rdf.Triple]bool{}
			randTriple := func() rdf.Triple { return randDeltaTriple(r) }
			setOf := func(m map[rdf.Triple]bool) []rdf.Triple {
				var r []rdf.Triple
				for tr, ok := range m {
					if ok {
						r = append(r, tr)
					}
				}
				return r
			}
			type old struct {
				ds   *Dataset
				want []rdf.Triple
			}
			var olds []old
			for step := 0; step < 30; step++ {
				var c []GraphChange
				var ins, del []rdf.Triple
				for i := r.IntN(40); i > 0; i-- {
					ins = append(ins, randTriple())
				}
				for i := r.IntN(30); i > 0; i-- {
					if r.IntN(2) == 0 {
						del = append(del, randTriple())
					} else {
						all := setOf(cur)
						if len(all) > 0 {
							del = append(del, all[r.IntN(len(all))])
						}
					}
				}
				switch step {
				case 7: // a vertex becomes a predicate
					ins = append(ins, tri(ex("v1"), ex("v2"), ex("v3")))
				case 11: // a vertex becomes a class
					ins = append(ins, tri(ex("v5"), typ, ex("v6")))
				}
				c = append(c, GraphChange{Delete: del, Insert: ins})
				for _, tr := range del {
					delete(cur, tr)
				}
				for _, tr := range ins {
					cur[tr] = true
				}
				if step%3 == 0 {
					ia := []rdf.Triple{randTriple(), randTriple()}
					c = append(c, GraphChange{Graph: gA, Insert: ia})
					for _, tr := range ia {
						curA[tr] = true
					}
				}
				if step == 20 {
					c = append(c, GraphChange{Graph: gA, Clear: true})
					clear(curA)
				}
				// A dropped attempt first: the same change after it
				// gives the same IDs and result.
				if step%5 == 0 {
					x, err := ds.Apply(ctx, c...)
					if err != nil {
						t.Fatal(err)
					}
					if err := x.Discard(); err != nil {
						t.Fatal(err)
					}
				}
				nd, err := ds.Apply(ctx, c...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { nd.Close() })
				olds = append(olds, old{ds, nil})
				ds = nd
				if !ds.Default().hasDelta() || ds.dict.ov == nil {
					t.Fatal("the change did not go through the delta")
				}
				if step%6 == 5 || step == 7 || step == 11 {
					checkAgainstBuild(t, ds, ds.Default(), setOf(cur))
					if g, ok := ds.Graph(gA); ok {
						checkAgainstBuild(t, ds, g, setOf(curA))
					}
				}
			}
			if id, _ := ds.Dict().Lookup(ex("v2")); !ds.Dict().IsPredicate(id) {
				t.Fatal("the vertex used as a predicate is not a predicate")
			}
			if id, _ := ds.Dict().Lookup(ex("v6")); !ds.Dict().IsClass(id) {
				t.Fatal("the vertex used as a class is not a class")
			}
			checkAgainstBuild(t, ds, ds.Default(), setOf(cur))
			// The first version still reads as it was built.
			checkGraph(t, olds[0].ds, olds[0].ds.Default(), base)

			// Determinism: the same changes on the same start give the
			// same IDs (replay from a snapshot).
			if ds.Version() != 30 {
				t.Fatalf("version %d after 30 changes", ds.Version())
			}
		})
	}
}

// TestDeltaReplayIsDeterministic applies the same changes to two copies
// of a dataset and compares the IDs of every term.
func TestDeltaReplayIsDeterministic(t *testing.T) {
	ctx := context.Background()
	ex := exIRI
	base := testTriples(300, 4)
	changes := [][]GraphChange{
		{{Insert: []rdf.Triple{tri(ex("new1"), ex("np"), ex("new2")), tri(ex("v1"), ex("v2"), rdf.NewLiteral("x", ""))}}},
		{{Graph: gA, Insert: []rdf.Triple{tri(ex("new3"), rdf.NewIRI(rdf.RDFType), ex("v4"))}}, {Delete: base[:20]}},
		{{Insert: []rdf.Triple{tri(ex("new4"), ex("np2"), ex("new1"))}}},
	}
	var runs [2]*Dataset
	for i := range runs {
		ds := buildDataset(t, 3, map[rdf.Term][]rdf.Triple{{}: base})
		for _, c := range changes {
			nd, err := ds.Apply(ctx, c...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { nd.Close() })
			ds = nd
		}
		runs[i] = ds
	}
	a, b := runs[0].Dict(), runs[1].Dict()
	if a.Len() != b.Len() {
		t.Fatalf("%d and %d terms", a.Len(), b.Len())
	}
	if a.NumPredicatesAndClasses() != b.NumPredicatesAndClasses() {
		t.Fatal("different low ranges")
	}
	for id := ID(1); id <= ID(a.NumPredicatesAndClasses()); id++ {
		ta, oka := a.Term(id)
		tb, okb := b.Term(id)
		if oka != okb || ta != tb {
			t.Fatalf("ID %d: %v and %v", id, ta, tb)
		}
	}
	for id := FirstVertexID; id <= a.MaxID(); id++ {
		ta, _ := a.Term(id)
		tb, _ := b.Term(id)
		if ta != tb {
			t.Fatalf("ID %d: %v and %v", id, ta, tb)
		}
	}
	if x, y := contents(t, a, runs[0].Default()), contents(t, b, runs[1].Default()); !slices.Equal(x, y) {
		t.Fatal("the replays differ")
	}
}

// randDeltaTriple draws a triple for the random insert/delete tests over
// 300 vertices: a type of one of 8 classes, a literal name, an edge of a
// predicate the base lacks (a new predicate), or an edge of one of 7.
func randDeltaTriple(r *rand.Rand) rdf.Triple {
	ex, typ := exIRI, rdf.NewIRI(rdf.RDFType)
	s := ex("v%d", r.IntN(300))
	switch r.IntN(8) {
	case 0:
		return tri(s, typ, ex("C%d", r.IntN(8)))
	case 1:
		return tri(s, ex("name"), rdf.NewLiteral(fmt.Sprintf("n%d", r.IntN(50)), ""))
	case 2:
		return tri(s, ex("newp%d", r.IntN(4)), ex("w%d", r.IntN(40)))
	default:
		return tri(s, ex("p%d", r.IntN(7)), ex("v%d", r.IntN(300)))
	}
}

// exIRI names a test term http://ex.org/<f formatted with a>.
func exIRI(f string, a ...any) rdf.Term { return rdf.NewIRI("http://ex.org/" + fmt.Sprintf(f, a...)) }
