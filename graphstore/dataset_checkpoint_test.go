package graphstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

// ckptModel is the expected content of a dataset's graphs.
type ckptModel map[rdf.Term]map[rdf.Triple]bool

func (m ckptModel) apply(cs []GraphChange) {
	for _, c := range cs {
		g := m[c.Graph]
		if c.Drop {
			delete(m, c.Graph)
			g = nil
		}
		if c.Clear || (g == nil && len(c.Insert) > 0) || (g == nil && c.Graph.IsZero()) {
			g = map[rdf.Triple]bool{}
			m[c.Graph] = g
		}
		for _, tr := range c.Delete {
			if g != nil {
				delete(g, tr)
			}
		}
		for _, tr := range c.Insert {
			g[tr] = true
		}
	}
}

// checkModel checks every graph of ds against m (lists, statistics
// against a build of the same triples).
func checkModel(t *testing.T, ds *Dataset, m ckptModel) {
	t.Helper()
	setOf := func(g map[rdf.Triple]bool) []rdf.Triple {
		var r []rdf.Triple
		for tr := range g {
			r = append(r, tr)
		}
		return r
	}
	checkAgainstBuild(t, ds, ds.Default(), setOf(m[rdf.Term{}]))
	if want := len(m) - 1; ds.NumGraphs() != want {
		t.Fatalf("%d named graphs, want %d", ds.NumGraphs(), want)
	}
	for _, g := range ds.Graphs() {
		want, ok := m[g.Name]
		if !ok {
			t.Fatalf("graph %v is there and should not be", g.Name)
		}
		checkAgainstBuild(t, ds, g.Store, setOf(want))
	}
}

// sameDataset checks that two datasets hold the same IDs and statistics.
func sameDataset(t *testing.T, a, b *Dataset) {
	t.Helper()
	if a.Version() != b.Version() || a.Dict().Len() != b.Dict().Len() || a.NumGraphs() != b.NumGraphs() {
		t.Fatalf("version %d/%d, terms %d/%d, graphs %d/%d", a.Version(), b.Version(), a.Dict().Len(), b.Dict().Len(), a.NumGraphs(), b.NumGraphs())
	}
	ids := func(st *Store) []string {
		var r []string
		st.EachTriple(context.Background(), func(s, p, o ID) error {
			r = append(r, fmt.Sprint(s, p, o))
			return nil
		})
		slices.Sort(r)
		return r
	}
	stores := func(d *Dataset) []*Store {
		r := []*Store{d.Default()}
		for _, g := range d.Graphs() {
			r = append(r, g.Store)
		}
		return r
	}
	sa, sb := stores(a), stores(b)
	for i := range sa {
		if !slices.Equal(ids(sa[i]), ids(sb[i])) {
			t.Fatalf("graph %d: the triples' IDs differ", i)
		}
		if x, y := fmt.Sprint(*sa[i].Stats()), fmt.Sprint(*sb[i].Stats()); x != y {
			t.Fatalf("graph %d: statistics differ:\n%s\n%s", i, x, y)
		}
	}
}

// TestCheckpointRoundTrip writes checkpoints of versions made by random
// writes (new terms, a vertex becoming a predicate and one becoming a
// class, named graphs created, cleared, dropped and made again) and
// opens them over the snapshot: the same triples with the same IDs, the
// same statistics, and the same result of further writes on both.
func TestCheckpointRoundTrip(t *testing.T) {
	ctx := context.Background()
	ex := exIRI
	typ := rdf.NewIRI(rdf.RDFType)
	gC := rdf.NewIRI("http://ex.org/graphC")
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(shards), 3))
			def, a, b := testQuads(600)
			built := buildDataset(t, shards, map[rdf.Term][]rdf.Triple{{}: def, gA: a, gB: b})
			dir := filepath.Join(t.TempDir(), "snap")
			if err := WriteDataset(dir, built); err != nil {
				t.Fatal(err)
			}
			tag, err := SnapshotTag(dir)
			if err != nil {
				t.Fatal(err)
			}
			openBase := func() *Dataset {
				t.Helper()
				ds, err := OpenDataset(dir, OpenOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := ds.MarkSnapshot(tag); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ds.Close() })
				return ds
			}
			model := ckptModel{}
			model.apply([]GraphChange{{Insert: def}, {Graph: gA, Insert: a}, {Graph: gB, Insert: b}})
			ds := openBase()
			randTriple := func() rdf.Triple { return randDeltaTriple(r) }
			randChange := func(step int) []GraphChange {
				var ins, del []rdf.Triple
				for i := r.IntN(40); i > 0; i-- {
					ins = append(ins, randTriple())
				}
				for i := r.IntN(20); i > 0; i-- {
					del = append(del, randTriple())
				}
				for tr := range model[rdf.Term{}] {
					if r.IntN(60) == 0 {
						del = append(del, tr)
					}
				}
				switch step {
				case 3:
					ins = append(ins, tri(ex("v1"), ex("v2"), ex("v3"))) // v2 becomes a predicate
				case 5:
					ins = append(ins, tri(ex("v5"), typ, ex("v6"))) // v6 becomes a class
				}
				cs := []GraphChange{{Delete: del, Insert: ins}}
				switch step {
				case 2:
					cs = append(cs, GraphChange{Graph: gB, Clear: true}, GraphChange{Graph: gB, Insert: []rdf.Triple{randTriple()}})
				case 4:
					cs = append(cs, GraphChange{Graph: gA, Drop: true})
				case 6:
					cs = append(cs, GraphChange{Graph: gA, Insert: []rdf.Triple{randTriple(), randTriple()}})
					cs = append(cs, GraphChange{Graph: gC, Insert: []rdf.Triple{randTriple()}})
				default:
					if step%2 == 1 {
						cs = append(cs, GraphChange{Graph: gB, Insert: []rdf.Triple{randTriple()}, Delete: []rdf.Triple{b[r.IntN(len(b))]}})
					}
				}
				return cs
			}
			advance := func(d *Dataset, cs []GraphChange) *Dataset {
				t.Helper()
				nd, err := d.Apply(ctx, cs...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { nd.Close() })
				return nd
			}
			ckdir := filepath.Join(t.TempDir(), "ckpt")
			for step := 0; step < 9; step++ {
				cs := randChange(step)
				model.apply(cs)
				ds = advance(ds, cs)
				if step%3 != 2 {
					continue
				}
				c, err := ds.Checkpoint(tag, 0)
				if err != nil {
					t.Fatal(err)
				}
				// A write after the checkpoint was taken, before it is
				// written: Write reads the version taken, not this one.
				next := randChange(step + 100)
				after := advance(ds, next)
				at := filepath.Join(ckdir, fmt.Sprint(ds.Version()))
				if _, err := c.Write(at); err != nil {
					t.Fatal(err)
				}
				rd, err := OpenCheckpoint(at, openBase(), tag)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { rd.Close() })
				checkModel(t, rd, model)
				sameDataset(t, ds, rd)
				// The same writes on both.
				model.apply(next)
				rd = advance(rd, next)
				ds = after
				sameDataset(t, ds, rd)
				for k := 0; k < 3; k++ {
					cs := randChange(step + 200 + k)
					model.apply(cs)
					ds, rd = advance(ds, cs), advance(rd, cs)
				}
				sameDataset(t, ds, rd)
				checkModel(t, rd, model)
			}
			if _, err := ds.Checkpoint(tag+1, 0); !errors.Is(err, ErrNoCheckpoint) {
				t.Fatalf("a checkpoint over another snapshot's graphs: %v", err)
			}
		})
	}
}

// TestCheckpointDamageRefused damages each file of a checkpoint (a byte
// flipped, the file cut short, the file gone) and opens it: refused
// with ErrBadCheckpoint every time, the base left as it was (a good
// checkpoint still opens on it), as is a checkpoint over another
// snapshot.
func TestCheckpointDamageRefused(t *testing.T) {
	ctx := context.Background()
	def, a, _ := testQuads(400)
	built := buildDataset(t, 2, map[rdf.Term][]rdf.Triple{{}: def, gA: a})
	dir := filepath.Join(t.TempDir(), "snap")
	if err := WriteDataset(dir, built); err != nil {
		t.Fatal(err)
	}
	tag, _ := SnapshotTag(dir)
	base, err := OpenDataset(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	base.MarkSnapshot(tag)
	ds, err := base.Apply(ctx, GraphChange{Insert: []rdf.Triple{
		tri(rdf.NewIRI("http://ex.org/new1"), rdf.NewIRI("http://ex.org/newp"), rdf.NewLiteral("x", "")),
		tri(rdf.NewIRI("http://ex.org/new2"), rdf.NewIRI(rdf.RDFType), rdf.NewIRI("http://ex.org/NewC")),
	}, Delete: def[:20]})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	good := filepath.Join(t.TempDir(), "1")
	c, err := ds.Checkpoint(tag, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(good); err != nil {
		t.Fatal(err)
	}
	var files []string
	filepath.Walk(good, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(good, p)
			files = append(files, rel)
		}
		return nil
	})
	for _, k := range []string{"checkpoint.json", "dict.bin", "stats.json", "delta-", "net-"} {
		if !slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(filepath.Base(f), k) }) {
			t.Fatalf("the checkpoint has no %s file: %v", k, files)
		}
	}
	// The checkpoint opens over the snapshot opened again (base was
	// written to).
	base2, err := OpenDataset(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer base2.Close()
	base2.MarkSnapshot(tag)
	copyTo := func() string {
		d := filepath.Join(t.TempDir(), "1")
		if err := copyTree(good, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	refused := func(what, d string) {
		t.Helper()
		rd, err := OpenCheckpoint(d, base2, tag)
		if err == nil {
			rd.Close()
			t.Fatalf("%s: opened", what)
		}
		if !errors.Is(err, ErrBadCheckpoint) {
			t.Fatalf("%s: %v, not ErrBadCheckpoint", what, err)
		}
	}
	for _, f := range files {
		d := copyTo()
		p := filepath.Join(d, f)
		b, _ := os.ReadFile(p)
		for _, at := range []int{0, len(b) / 2, len(b) - 2} {
			bb := slices.Clone(b)
			bb[at] ^= 0x10
			os.WriteFile(p, bb, 0o644)
			refused(fmt.Sprintf("%s with byte %d flipped", f, at), d)
		}
		os.WriteFile(p, b[:len(b)/2], 0o644)
		refused(f+" cut short", d)
		os.Remove(p)
		refused(f+" missing", d)
	}
	if _, err := OpenCheckpoint(good, base2, tag^1); !errors.Is(err, ErrBadCheckpoint) {
		t.Fatalf("over another snapshot: %v", err)
	}
	rd, err := OpenCheckpoint(good, base2, tag)
	if err != nil {
		t.Fatalf("the good checkpoint after the damaged ones: %v", err)
	}
	defer rd.Close()
	sameDataset(t, ds, rd)
}
