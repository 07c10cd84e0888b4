package graphstore

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

// spillQuads is the input of the out-of-core tests: three graphs sharing
// terms, with repeated triples, in the order they are added.
func spillQuads(n int) []rdf.Quad {
	def, a, b := testQuads(n)
	var qs []rdf.Quad
	for i := 0; i < max(len(def), len(a), len(b)); i++ {
		for _, g := range []struct {
			name rdf.Term
			ts   []rdf.Triple
		}{{rdf.Term{}, def}, {gA, a}, {gB, b}} {
			if i < len(g.ts) {
				t := g.ts[i]
				qs = append(qs, rdf.Quad{S: t.S, P: t.P, O: t.O, G: g.name})
			}
		}
	}
	// Repeats, in batches other than their first copy's.
	return append(qs, qs[:n/10]...)
}

func addQuadBatches(t *testing.T, db *DatasetBuilder, qs []rdf.Quad) {
	t.Helper()
	for i := 0; i < len(qs); i += 61 {
		if err := db.AddQuads(qs[i:min(i+61, len(qs))]); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshotFiles reads every file of a snapshot directory by relative path.
func snapshotFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestWriteSnapshotOutOfCore builds the same quads in memory (Build, then
// WriteDataset) and with WriteSnapshot — in memory, and out of core with
// budgets small enough to force many spilled chunks and sorted runs — and
// requires byte-identical snapshots and equal counts.
func TestWriteSnapshotOutOfCore(t *testing.T) {
	qs := spillQuads(6000)
	base := t.TempDir()
	for _, shards := range []int{1, 3} {
		ref, err := NewDatasetBuilder(shards)
		if err != nil {
			t.Fatal(err)
		}
		addQuadBatches(t, ref, qs)
		ds, err := ref.Build()
		if err != nil {
			t.Fatal(err)
		}
		refDir := filepath.Join(base, "ref")
		if err := WriteDataset(refDir, ds); err != nil {
			t.Fatal(err)
		}
		ds.Close()
		want := snapshotFiles(t, refDir)
		wantCounts := ref.Counters()
		for _, memory := range []int64{0, 1 << 30, 64 << 10, 2 << 10} {
			db, err := NewDatasetBuilder(shards)
			if err != nil {
				t.Fatal(err)
			}
			spillDir := filepath.Join(base, "spill")
			if err := os.MkdirAll(spillDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if memory > 0 {
				if err := db.SpillTo(SpillOptions{Dir: spillDir, Memory: memory}); err != nil {
					t.Fatal(err)
				}
			}
			addQuadBatches(t, db, qs)
			out := filepath.Join(base, "out")
			if err := db.WriteSnapshot(out); err != nil {
				t.Fatalf("shards %d, memory %d: %v", shards, memory, err)
			}
			got := snapshotFiles(t, out)
			if !slices.Equal(slices.Sorted(mapsKeys(got)), slices.Sorted(mapsKeys(want))) {
				t.Fatalf("shards %d, memory %d: files %v, want %v", shards, memory, slices.Sorted(mapsKeys(got)), slices.Sorted(mapsKeys(want)))
			}
			for name, b := range want {
				if !bytes.Equal(got[name], b) {
					t.Errorf("shards %d, memory %d: %s differs from the in-memory build's (%d bytes, want %d)", shards, memory, name, len(got[name]), len(b))
				}
			}
			c := db.Counters()
			if c.Read != wantCounts.Read || c.Distinct != wantCounts.Distinct || c.Duplicates != wantCounts.Duplicates || c.Terms != wantCounts.Terms || len(c.Graphs) != 3 {
				t.Errorf("shards %d, memory %d: counters %+v, want %+v", shards, memory, c.BuildCounters, wantCounts.BuildCounters)
			}
			p := db.BuildProgress()
			if memory > 0 && memory < 1<<20 && p.Spilled == 0 {
				t.Errorf("shards %d, memory %d: nothing was spilled", shards, memory)
			}
			if memory > 0 && memory <= 64<<10 && p.TermsSpilled == 0 {
				t.Errorf("shards %d, memory %d: no interning generation was sealed", shards, memory)
			}
			if memory == 1<<30 && p.Spilled != 0 {
				t.Errorf("shards %d: %d bytes spilled within a budget that holds everything", shards, p.Spilled)
			}
			if ents, _ := os.ReadDir(spillDir); len(ents) != 0 {
				t.Errorf("shards %d, memory %d: %d temporary files left", shards, memory, len(ents))
			}
			if ds, err := OpenDataset(out, OpenOptions{}); err != nil {
				t.Errorf("shards %d, memory %d: %v", shards, memory, err)
			} else {
				ds.Close()
			}
			if err := os.RemoveAll(out); err != nil {
				t.Fatal(err)
			}
		}
		os.RemoveAll(refDir)
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestBuildAfterSpill: Build reads spilled chunks back.
func TestBuildAfterSpill(t *testing.T) {
	qs := spillQuads(6000)
	ref, _ := NewDatasetBuilder(2)
	addQuadBatches(t, ref, qs)
	want, err := ref.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	db, _ := NewDatasetBuilder(2)
	if err := db.SpillTo(SpillOptions{Dir: t.TempDir(), Memory: 4 << 10}); err != nil {
		t.Fatal(err)
	}
	addQuadBatches(t, db, qs)
	got, err := db.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got.Triples() != want.Triples() || got.Terms() != want.Terms() {
		t.Fatalf("after spilling: %d triples, %d terms; want %d, %d", got.Triples(), got.Terms(), want.Triples(), want.Terms())
	}
	// The sealed interning generations are merged as if there were none.
	wantDir, gotDir := filepath.Join(t.TempDir(), "want"), filepath.Join(t.TempDir(), "got")
	if err := WriteDataset(wantDir, want); err != nil {
		t.Fatal(err)
	}
	if err := WriteDataset(gotDir, got); err != nil {
		t.Fatal(err)
	}
	wf, gf := snapshotFiles(t, wantDir), snapshotFiles(t, gotDir)
	if len(wf) != len(gf) {
		t.Fatalf("%d files, want %d", len(gf), len(wf))
	}
	for name, b := range wf {
		if !bytes.Equal(gf[name], b) {
			t.Errorf("%s differs from the unspilled build's", name)
		}
	}
	if p := db.BuildProgress(); p.Spilled == 0 || p.TermsSpilled == 0 {
		t.Fatalf("nothing was spilled: %+v", p)
	}
}

func TestShardWorkers(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		procs              int
		memory, held, most int64
		want               int
	}{
		{2, 2 * gib, 0, 43_000_000, 1},             // LUBM-2560 without the dictionary's room
		{2, 2 * gib, 1_640_000_000, 43_000_000, 2}, // with it
		{2, 2 * gib, 0, 10_000_000, 2},             // LUBM-640: the budget alone
		{8, 1 << 20, 0, 1 << 30, 1},                // never fewer than one
		{1, 64 * gib, 0, 1000, 1},                  // never more than procs
	} {
		if got := shardWorkers(c.procs, c.memory, c.held, c.most); got != c.want {
			t.Errorf("shardWorkers(%d, %d, %d, %d) = %d, want %d", c.procs, c.memory, c.held, c.most, got, c.want)
		}
	}
}
