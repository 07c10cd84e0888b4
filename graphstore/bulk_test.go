package graphstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

// rawOf is t as a RawTriple (the bytes of its strings).
func rawOf(t rdf.Triple) RawTriple {
	raw := func(x rdf.Term) RawTerm {
		return RawTerm{Kind: x.Kind, Value: []byte(x.Value), Datatype: []byte(x.Datatype), Lang: []byte(x.Lang)}
	}
	return RawTriple{S: raw(t.S), P: raw(t.P), O: raw(t.O)}
}

// bulkOf fills a BulkInsert on ds with ts in parts of n triples, added in
// an order other than their seq (half raw, half as terms).
func bulkOf(t *testing.T, ds *Dataset, ts []rdf.Triple, n int) *BulkInsert {
	t.Helper()
	b := ds.NewBulkInsert()
	var seqs []int
	for i := 0; i*n < len(ts); i++ {
		seqs = append(seqs, i)
	}
	slices.Reverse(seqs)
	for _, seq := range seqs {
		part := ts[seq*n : min(len(ts), (seq+1)*n)]
		var err error
		if seq%2 == 0 {
			raw := make([]RawTriple, len(part))
			for i, tr := range part {
				raw[i] = rawOf(tr)
			}
			err = b.AddRaw(seq, raw)
		} else {
			err = b.Add(seq, part)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if b.Len() != len(ts) {
		t.Fatalf("Len %d, want %d", b.Len(), len(ts))
	}
	return b
}

// snapshotBytes writes ds as a snapshot and returns every file's bytes.
func snapshotBytes(t *testing.T, ds *Dataset) map[string][]byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "snap")
	if err := WriteDataset(dir, ds); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p[len(dir):]] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameSnapshots(t *testing.T, what string, a, b map[string][]byte) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d and %d files", what, len(a), len(b))
	}
	for name, x := range a {
		if !bytes.Equal(x, b[name]) {
			t.Fatalf("%s: %s differs", what, name)
		}
	}
}

// TestBulkMatchesApply: a bulk insertion (parts added out of order, raw
// and as terms) gives the same dataset, byte for byte, as Apply of the
// same triples in order — new terms, new predicates and classes, a plain
// vertex that becomes a predicate and one that becomes a class, blank
// nodes, literals of every kind, triples already there and repeated ones
// — into the default graph, a named graph and with Clear; and the change
// it returns, applied through Apply, gives that dataset again (what a log
// replay does).
func TestBulkMatchesApply(t *testing.T) {
	ctx := context.Background()
	ex := func(f string, a ...any) rdf.Term { return rdf.NewIRI("http://ex.org/" + fmt.Sprintf(f, a...)) }
	typ := rdf.NewIRI(rdf.RDFType)
	base := testTriples(400, 4)
	// New terms named first as a predicate or class, then as a vertex (in
	// a later part), and new vertices that become a predicate or class.
	ins := []rdf.Triple{
		tri(ex("a3"), ex("np1"), ex("x1")),
		tri(ex("a4"), typ, ex("nc1")),
		tri(ex("nv1"), ex("p0"), ex("x2")),
		tri(ex("x3"), ex("p1"), ex("nv2")),
	}
	ins = append(ins, testTriples(600, 7)...)
	ins = append(ins,
		tri(ex("np1"), ex("p0"), ex("x1")),
		tri(ex("x4"), ex("p1"), ex("nc1")),
		tri(ex("a5"), ex("nv1"), ex("x2")),
		tri(ex("a6"), typ, ex("nv2")),
	)
	ins = append(ins, base[:80]...)  // already there
	ins = append(ins, ins[10:40]...) // repeated
	ins = append(ins,
		tri(ex("a1"), ex("v1"), ex("v2")), // v1, a vertex of base, becomes a predicate
		tri(ex("a2"), typ, ex("v3")),      // v3 becomes a class
		tri(ex("v1"), ex("p0"), ex("v3")),
		tri(rdf.NewBlank("bn"), ex("p1"), rdf.NewLangLiteral("x", "EN")),
	)
	for _, shards := range []int{1, 4} {
		for _, tc := range []struct {
			graph rdf.Term
			clear bool
		}{{rdf.Term{}, false}, {gA, false}, {rdf.Term{}, true}, {ex("new-graph"), true}} {
			t.Run(fmt.Sprintf("shards=%d/graph=%v/clear=%v", shards, tc.graph, tc.clear), func(t *testing.T) {
				fresh := func() *Dataset {
					ds := buildDataset(t, shards, map[rdf.Term][]rdf.Triple{{}: base, gA: base[100:200]})
					t.Cleanup(func() { ds.Close() })
					return ds
				}
				seq, err := fresh().Apply(ctx, GraphChange{Graph: tc.graph, Clear: tc.clear, Insert: ins})
				if err != nil {
					t.Fatal(err)
				}
				defer seq.Close()
				ds := fresh()
				bulk, change, err := ds.ApplyBulk(ctx, tc.graph, tc.clear, bulkOf(t, ds, ins, 97))
				if err != nil {
					t.Fatal(err)
				}
				defer bulk.Close()
				if bulk.Version() != seq.Version() {
					t.Fatalf("version %d, want %d", bulk.Version(), seq.Version())
				}
				for _, g := range []rdf.Term{{}, tc.graph} {
					st, _ := bulk.Graph(g)
					if g.IsZero() {
						st = bulk.Default()
					}
					st2, _ := seq.Graph(g)
					if g.IsZero() {
						st2 = seq.Default()
					}
					if x, y := contents(t, bulk.Dict(), st), contents(t, seq.Dict(), st2); !slices.Equal(x, y) {
						t.Fatalf("graph %v differs: %d and %d triples\n%v", g, len(x), len(y), diffLines(x, y))
					}
				}
				want := snapshotBytes(t, seq)
				sameSnapshots(t, "bulk vs Apply", snapshotBytes(t, bulk), want)
				// The change holds the new triples once each, in input order.
				if change.Graph != tc.graph || change.Clear != tc.clear || change.Delete != nil {
					t.Fatalf("change %v %v %d deletes", change.Graph, change.Clear, len(change.Delete))
				}
				// It holds them as IDs only; replayed as is (below), Apply
				// decodes them.
				if change.Insert != nil || change.InsertLen() != len(change.InsertIDs) {
					t.Fatalf("the change holds %d triples as terms and %d as IDs", len(change.Insert), len(change.InsertIDs))
				}
				terms := change.WithTerms()
				for i, x := range change.InsertIDs {
					s, _ := bulk.Dict().Term(x.S)
					p, _ := bulk.Dict().Term(x.P)
					o, _ := bulk.Dict().Term(x.O)
					if tr := (rdf.Triple{S: s, P: p, O: o}); terms.Insert[i] != tr {
						t.Fatalf("inserted triple %d: %v decodes as %v", i, tr, terms.Insert[i])
					}
				}
				seen := map[rdf.Triple]bool{}
				for _, tr := range terms.Insert {
					if seen[tr] {
						t.Fatalf("%v twice in the change", tr)
					}
					seen[tr] = true
				}
				if tc.clear && len(terms.Insert) != len(slices.Compact(slices.Clone(terms.Insert))) {
					t.Fatal("BUG")
				}
				replay, err := fresh().Apply(ctx, change)
				if err != nil {
					t.Fatal(err)
				}
				defer replay.Close()
				sameSnapshots(t, "replay of the change vs bulk", snapshotBytes(t, replay), want)
			})
		}
	}
}

// TestBulkFailureLeavesNothing: a bulk insertion that fails (a cancelled
// context, a literal predicate) leaves the dataset as it was, and the
// next write gets the version and IDs it would have got.
func TestBulkFailureLeavesNothing(t *testing.T) {
	ex := func(f string, a ...any) rdf.Term { return rdf.NewIRI("http://ex.org/" + fmt.Sprintf(f, a...)) }
	base := testTriples(300, 4)
	ins := testTriples(300, 8)
	next := []rdf.Triple{tri(ex("after"), ex("pafter"), ex("o"))}
	ref := buildDataset(t, 4, map[rdf.Term][]rdf.Triple{{}: base})
	defer ref.Close()
	want, err := ref.Apply(context.Background(), GraphChange{Insert: next})
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()

	ds := buildDataset(t, 4, map[rdf.Term][]rdf.Triple{{}: base})
	defer ds.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := ds.ApplyBulk(ctx, rdf.Term{}, false, bulkOf(t, ds, ins, 50)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if _, _, err := ds.ApplyBulk(context.Background(), gA, true, bulkOf(t, ds, ins, 50)); err != nil {
		t.Fatal(err) // a version built and dropped
	} else {
		// (dropped below by Discard: an unpublished version)
	}
	got, err := func() (*Dataset, error) {
		ds2 := buildDataset(t, 4, map[rdf.Term][]rdf.Triple{{}: base})
		defer ds2.Close()
		nd, _, err := ds2.ApplyBulk(context.Background(), gA, true, bulkOf(t, ds2, ins, 50))
		if err != nil {
			return nil, err
		}
		if err := nd.Discard(); err != nil {
			return nil, err
		}
		return ds2.Apply(context.Background(), GraphChange{Insert: next})
	}()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	sameSnapshots(t, "after a discarded bulk insertion", snapshotBytes(t, got), snapshotBytes(t, want))

	b := ds.NewBulkInsert()
	if err := b.Add(0, []rdf.Triple{tri(ex("s"), rdf.NewLiteral("p", ""), ex("o"))}); err == nil {
		t.Fatal("a literal predicate was taken")
	}
}

func diffLines(a, b []string) []string {
	var d []string
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			d = append(d, "+"+x)
		}
	}
	for _, x := range b {
		if _, ok := slices.BinarySearch(a, x); !ok {
			d = append(d, "-"+x)
		}
	}
	return d
}
