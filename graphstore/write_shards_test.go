package graphstore

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

// deltaBytes returns the used bytes of every shard's delta region of st.
func deltaBytes(st *Store) [][]byte {
	var out [][]byte
	if w := st.sh.w; w != nil {
		for _, d := range w.deltas {
			if d == nil {
				out = append(out, nil)
				continue
			}
			out = append(out, bytes.Clone(d.Region().Bytes()[:d.UsedBytes()]))
		}
	}
	return out
}

// TestParallelWriteMatchesSequential: a write spread over one goroutine
// per shard leaves the same delta bytes, statistics and snapshot as the
// same write on one goroutine — inserts with new terms, a vertex that
// becomes a predicate, a class that is also a predicate (the shared
// (0, c, In) list), then deletes — and a parallel write that is discarded
// leaves nothing: the next write gives the same statistics and snapshot
// as on a dataset that never saw it.
func TestParallelWriteMatchesSequential(t *testing.T) {
	ctx := context.Background()
	ex := func(f string, a ...any) rdf.Term { return rdf.NewIRI("http://ex.org/" + fmt.Sprintf(f, a...)) }
	typ := rdf.NewIRI(rdf.RDFType)
	base := testTriples(2000, 3)
	ins := testTriples(9000, 11)
	ins = append(ins, base[:500]...)
	for i := range 300 {
		ins = append(ins, tri(ex("new%d", i), ex("p%d", i%3), ex("new%d", (i*7)%300)), tri(ex("new%d", i), typ, ex("C%d", i%4)))
	}
	ins = append(ins,
		tri(ex("a1"), ex("v1"), ex("v2")),   // v1, a vertex of base, becomes a predicate
		tri(ex("x1"), ex("C1"), ex("new5")), // C1, a class, is also a predicate
		tri(ex("x2"), ex("C1"), ex("v9")))
	del := append(base[200:900:900], ins[3000:6000]...)
	run := func(parallelMin int) (stores []*Store, ds []*Dataset) {
		old := parallelWriteMin
		parallelWriteMin = parallelMin
		defer func() { parallelWriteMin = old }()
		d0 := buildDataset(t, 4, map[rdf.Term][]rdf.Triple{{}: base})
		t.Cleanup(func() { d0.Close() })
		d1, err := d0.Apply(ctx, GraphChange{Insert: ins})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d1.Close() })
		d2, err := d1.Apply(ctx, GraphChange{Delete: del})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d2.Close() })
		return []*Store{d1.Default(), d2.Default()}, []*Dataset{d1, d2}
	}
	seqSt, seqDs := run(1 << 30)
	parSt, parDs := run(1)
	for i := range seqSt {
		a, b := deltaBytes(seqSt[i]), deltaBytes(parSt[i])
		if len(a) != 4 || len(b) != 4 {
			t.Fatalf("version %d: %d and %d delta tables", i+1, len(a), len(b))
		}
		for o := range a {
			if !bytes.Equal(a[o], b[o]) {
				t.Fatalf("version %d: shard %d's delta differs (%d and %d bytes)", i+1, o, len(a[o]), len(b[o]))
			}
		}
		if !reflect.DeepEqual(seqSt[i].Stats(), parSt[i].Stats()) {
			t.Fatalf("version %d: statistics differ:\n%+v\n%+v", i+1, seqSt[i].Stats(), parSt[i].Stats())
		}
		sameSnapshots(t, fmt.Sprintf("version %d", i+1), snapshotBytes(t, seqDs[i]), snapshotBytes(t, parDs[i]))
	}

	// A discarded parallel write leaves nothing.
	old := parallelWriteMin
	parallelWriteMin = 1
	defer func() { parallelWriteMin = old }()
	next := GraphChange{Insert: []rdf.Triple{tri(ex("after"), ex("pafter"), ex("v3"))}}
	ref := buildDataset(t, 4, map[rdf.Term][]rdf.Triple{{}: base})
	defer ref.Close()
	want, err := ref.Apply(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	ds := buildDataset(t, 4, map[rdf.Term][]rdf.Triple{{}: base})
	defer ds.Close()
	dropped, err := ds.Apply(ctx, GraphChange{Insert: ins})
	if err != nil {
		t.Fatal(err)
	}
	if err := dropped.Discard(); err != nil {
		t.Fatal(err)
	}
	got, err := ds.Apply(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	// (The dropped words past a list's committed length stay in the
	// region, unread: compare what readers see.)
	if !reflect.DeepEqual(want.Default().Stats(), got.Default().Stats()) {
		t.Fatal("after a discarded write: statistics differ")
	}
	sameSnapshots(t, "after a discarded write", snapshotBytes(t, got), snapshotBytes(t, want))
}
