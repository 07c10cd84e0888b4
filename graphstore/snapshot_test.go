package graphstore

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

func TestSnapshotRoundTrip(t *testing.T) {
	ts := testTriples(3000, 9)
	st, _ := buildStore(t, ts, 4, 300)
	ref := buildReference(t, st, ts)
	dir := filepath.Join(t.TempDir(), "snap")
	if err := WriteSnapshot(dir, st); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Triples != uint64(ref.distinct) || m.Terms != uint64(st.Dict().Len()) || m.Shards != 4 {
		t.Fatalf("manifest %+v", m)
	}
	st2, err := OpenSnapshot(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	checkStore(t, st2, ref)
	d1, d2 := st.Dict(), st2.Dict()
	for _, tr := range ts {
		a, _ := d1.Lookup(tr.O)
		b, ok := d2.Lookup(tr.O)
		if !ok || a != b {
			t.Fatalf("%s: ID %d before, %d after reopening", tr.O, a, b)
		}
		back, _ := d2.Term(b)
		if back != tr.O {
			t.Fatalf("Term(%d) = %s, want %s", b, back, tr.O)
		}
	}
	s1, _ := json.Marshal(st.Stats())
	s2, _ := json.Marshal(st2.Stats())
	if string(s1) != string(s2) {
		t.Fatal("statistics differ after reopening")
	}

	// A node of a multi-process cluster opens only its shards and reads
	// the rest through the fabric: four "processes" sharing one fabric.
	f := rdmakv.NewLoopback(4, rdmakv.LoopbackOptions{})
	var parts []*Store
	for i := 0; i < 4; i++ {
		p, err := OpenSnapshot(dir, OpenOptions{Shards: []int{i}, Fabric: f, SkipChecksums: i%2 == 0})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if got := p.LocalShards(); !slices.Equal(got, []int{i}) || p.Shard((i+1)%4) != nil {
			t.Fatalf("store of node %d has shards %v", i, got)
		}
		parts = append(parts, p)
	}
	checkStore(t, parts[2], ref)
	if f.Counters().Reads == 0 {
		t.Fatal("the partial store did not read through the fabric")
	}

	// Rewriting replaces the snapshot; a failed write leaves it intact.
	st3, _ := buildStore(t, ts[:100], 2, 50)
	testHookBeforeRename = func() error { return errors.New("injected failure") }
	err = WriteSnapshot(dir, st3)
	testHookBeforeRename = nil
	if err == nil {
		t.Fatal("injected failure not reported")
	}
	if m2, _ := ReadManifest(dir); m2 == nil || m2.Shards != 4 {
		t.Fatal("a failed write damaged the previous snapshot")
	}
	if err := WriteSnapshot(dir, st3); err != nil {
		t.Fatal(err)
	}
	if m2, _ := ReadManifest(dir); m2 == nil || m2.Shards != 2 {
		t.Fatal("the snapshot was not replaced")
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Fatalf("temporary directories left: %v", entries)
	}
}

func TestSnapshotRefusesToReplaceOtherDirectories(t *testing.T) {
	st, _ := buildStore(t, testTriples(100, 4), 1, 100)
	dir := t.TempDir()
	keep := filepath.Join(dir, "precious.txt")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteSnapshot(dir, st); err == nil {
		t.Fatal("a directory that is not a snapshot was replaced")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatal("the directory's content was lost")
	}
	if err := WriteSnapshot(keep, st); err == nil {
		t.Fatal("a file was replaced by a snapshot")
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if err := WriteSnapshot(empty, st); err != nil {
		t.Fatalf("an empty directory: %v", err)
	}
}

func TestEmptyStore(t *testing.T) {
	st, b := buildStore(t, nil, 3, 10)
	if c := b.Counters(); c.Read != 0 || c.Distinct != 0 || st.Stats().Triples != 0 {
		t.Fatalf("counters %+v", c)
	}
	dir := filepath.Join(t.TempDir(), "s")
	if err := WriteSnapshot(dir, st); err != nil {
		t.Fatal(err)
	}
	st2, err := OpenSnapshot(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if got := st2.Shard(1).AppendPredicates(nil, Out); len(got) != 0 {
		t.Fatalf("predicates of an empty store: %v", got)
	}
	if id, ok := st2.Dict().Lookup(rdf.NewIRI(rdf.RDFType)); !ok || id != TypeID {
		t.Fatal("rdf:type missing from an empty store's dictionary")
	}
}

func TestDamagedSnapshotRefused(t *testing.T) {
	st, _ := buildStore(t, testTriples(1000, 4), 2, 1000)
	base := filepath.Join(t.TempDir(), "base")
	if err := WriteSnapshot(base, st); err != nil {
		t.Fatal(err)
	}
	damage := map[string]func(dir string) error{
		"truncated shard": func(dir string) error {
			p := filepath.Join(dir, shardFileName(1))
			fi, _ := os.Stat(p)
			return os.Truncate(p, fi.Size()-10)
		},
		"flipped byte in dictionary": func(dir string) error { return flip(filepath.Join(dir, dictName), 100) },
		"flipped byte in shard":      func(dir string) error { return flip(filepath.Join(dir, shardFileName(0)), 3000) },
		"newer format": func(dir string) error {
			p := filepath.Join(dir, manifestName)
			b, _ := os.ReadFile(p)
			b = []byte(strings.Replace(string(b), `"format_version": 1`, `"format_version": 2`, 1))
			return os.WriteFile(p, b, 0o644)
		},
		"missing shard":    func(dir string) error { return os.Remove(filepath.Join(dir, shardFileName(1))) },
		"missing manifest": func(dir string) error { return os.Remove(filepath.Join(dir, manifestName)) },
		"garbage manifest": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, manifestName), []byte("{\"format_"), 0o644)
		},
	}
	for name, fn := range damage {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "snap")
			if err := copyDir(base, dir); err != nil {
				t.Fatal(err)
			}
			if err := fn(dir); err != nil {
				t.Fatal(err)
			}
			st, err := OpenSnapshot(dir, OpenOptions{})
			if err == nil {
				st.Close()
				t.Fatal("damaged snapshot opened")
			}
			if !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("error does not wrap ErrBadSnapshot: %v", err)
			}
			if name == "newer format" && !strings.Contains(err.Error(), "newer") {
				t.Fatalf("unclear error: %v", err)
			}
		})
	}
	// Without checksums, a corrupted dictionary must still not panic.
	dir := filepath.Join(t.TempDir(), "nock")
	if err := copyDir(base, dir); err != nil {
		t.Fatal(err)
	}
	for off := int64(64); off < 4000; off += 37 {
		flip(filepath.Join(dir, dictName), off)
	}
	for off := int64(200); off < 6000; off += 41 {
		flip(filepath.Join(dir, shardFileName(0)), off)
	}
	if st, err := OpenSnapshot(dir, OpenOptions{SkipChecksums: true}); err == nil {
		ctx := context.Background()
		for id := ID(0); id < 200; id++ {
			st.Dict().Term(id)
			st.Dict().Term(FirstVertexID + id)
			st.Dict().AppendNTriples(nil, FirstVertexID+id)
			for _, from := range []int{0, 1} {
				st.Shard(from).AppendEdges(ctx, nil, FirstVertexID+id, id%8, Dir(id%2))
				st.Shard(from).AppendEdges(ctx, nil, id%8, AllPredicates, Dir(id%2))
			}
		}
		st.Close()
	}
}

func flip(path string, off int64) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b[off%int64(len(b))] ^= 0x40
	return os.WriteFile(path, b, 0o644)
}

func copyDir(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func TestSnapshotKeepsTheLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snap")
	write := func(o string) {
		t.Helper()
		b, err := NewBuilder(2)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.AddTriples([]rdf.Triple{{S: rdf.NewIRI("http://x/s"), P: rdf.NewIRI("http://x/p"), O: rdf.NewIRI(o)}}); err != nil {
			t.Fatal(err)
		}
		st, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := WriteSnapshot(dir, st); err != nil {
			t.Fatal(err)
		}
	}
	write("http://x/o1")
	seg := filepath.Join(dir, KeptDir, "00000000000000000001.wal")
	if err := os.MkdirAll(filepath.Dir(seg), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(seg, []byte("log"), 0o644)
	// An open handle on the log directory goes on working across the write.
	root, err := os.OpenRoot(filepath.Join(dir, KeptDir))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	write("http://x/o2")
	if b, err := os.ReadFile(seg); err != nil || string(b) != "log" {
		t.Fatalf("the log after a snapshot write: %q %v", b, err)
	}
	if err := root.WriteFile("00000000000000000002.wal", []byte("more"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, KeptDir, "00000000000000000002.wal")); err != nil {
		t.Fatalf("a file created through the old handle is not in the new snapshot: %v", err)
	}
	st, err := OpenSnapshot(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Dict().Lookup(rdf.NewIRI("http://x/o2")); !ok {
		t.Fatal("the new snapshot is not served")
	}
	st.Close()

	// A crash between the exchange and the move: RestoreKept moves it back.
	os.Rename(filepath.Join(dir, KeptDir), filepath.Join(t.TempDir(), "x"))
	stray := dir + ".tmp-1-abc"
	os.MkdirAll(filepath.Join(stray, KeptDir), 0o755)
	os.WriteFile(filepath.Join(stray, KeptDir, "00000000000000000001.wal"), []byte("stray"), 0o644)
	if err := RestoreKept(dir); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(seg); err != nil || string(b) != "stray" {
		t.Fatalf("after RestoreKept: %q %v", b, err)
	}
	if err := RestoreKept(dir); err != nil { // nothing to do
		t.Fatal(err)
	}
	os.Rename(filepath.Join(dir, KeptDir), filepath.Join(t.TempDir(), "y"))
	for _, d := range []string{dir + ".tmp-1-abc", dir + ".old-2-def"} {
		os.MkdirAll(filepath.Join(d, KeptDir), 0o755)
	}
	if err := RestoreKept(dir); err == nil {
		t.Fatal("two stray logs: no error")
	}
}
