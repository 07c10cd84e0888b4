package graphstore

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// TestParallelBudget: shards are admitted by their own size. The
// LUBM-2560 shape (16 shards of 42-52 M edges at 40 B, --memory 2G plus
// a 1.6 GB dictionary's room) builds two at once although the largest
// shard's size left room for only one of its own (before, every shard was
// built alone); the weights running never pass the budget unless one
// runs alone, nor the workers; a call heavier than the budget still runs.
func TestParallelBudget(t *testing.T) {
	const gib = 1 << 30
	edges := []int64{42e6, 43e6, 44e6, 42e6, 43e6, 44e6, 42e6, 43e6, 52e6, 42e6, 43e6, 44e6, 42e6, 43e6, 44e6, 42e6}
	weight := func(i int) int64 { return shardBuildBytes * edges[i] }
	for _, c := range []struct {
		name        string
		workers     int
		budget      int64
		wantOverlap bool
	}{
		{"lubm2560", 2, 2*gib + 1_640_000_000, true},
		{"tight", 2, 3 * gib, false},
		{"tiny", 8, 1 << 20, false},
		{"one worker", 1, 64 * gib, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			running, used, most := 0, int64(0), 0
			ran := make([]bool, len(edges))
			var alone atomic.Bool
			started := make([]chan struct{}, len(edges))
			for i := range started {
				started[i] = make(chan struct{})
			}
			parallelBudget(len(edges), c.workers, c.budget, weight, func(i int) {
				mu.Lock()
				running++
				used += weight(i)
				most = max(most, running)
				if running > c.workers || (running > 1 && used > c.budget) {
					t.Errorf("shard %d: %d running, %d bytes (workers %d, budget %d)", i, running, used, c.workers, c.budget)
				}
				ran[i] = true
				mu.Unlock()
				close(started[i])
				if c.wantOverlap && i%2 == 0 && !alone.Load() {
					// The pair's other shard must start while this one
					// runs (a deadlock otherwise: waited for once).
					select {
					case <-started[i+1]:
					case <-time.After(30 * time.Second):
						alone.Store(true)
						t.Errorf("shard %d ran alone: shard %d did not start beside it", i, i+1)
					}
				}
				mu.Lock()
				running--
				used -= weight(i)
				mu.Unlock()
			})
			for i, ok := range ran {
				if !ok {
					t.Errorf("shard %d did not run", i)
				}
			}
			if c.wantOverlap && most != 2 {
				t.Errorf("at most %d shards at once, want 2", most)
			}
			if !c.wantOverlap && most != 1 {
				t.Errorf("at most %d shards at once, want 1", most)
			}
		})
	}
}
