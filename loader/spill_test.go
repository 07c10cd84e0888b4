package loader

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wukongd/wukongd/datasets"
)

// genLUBM writes LUBM-1 (wukongd's generator) as N-Triples into dir.
func genLUBM(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "lubm1.nt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := datasets.GenerateLUBM(f, datasets.LUBMConfig{Universities: 1, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A load under a budget small enough to spill many runs publishes the same
// snapshot, byte for byte, as a load that holds everything in memory (one
// parser, so both intern in the same order), and leaves no temporary file
// beside the output.
func TestLoadSpillsWithinBudget(t *testing.T) {
	dir := t.TempDir()
	data := genLUBM(t, dir)
	load := func(name string, memory int64) (string, Summary) {
		out := filepath.Join(dir, name)
		sum, err := Load(context.Background(), Config{Inputs: []string{data}, Out: out, Memory: memory,
			BuildOptions: BuildOptions{Shards: 3, Workers: 1}})
		if err != nil {
			t.Fatalf("memory %d: %v", memory, err)
		}
		return out, sum
	}
	refDir, ref := load("ref", 1<<30)
	gotDir, got := load("small", 256<<10)
	if ref.Spilled != 0 || got.Spilled == 0 {
		t.Fatalf("spilled %d bytes with 1 GiB, %d with 256 KiB: the test does not test spilling", ref.Spilled, got.Spilled)
	}
	if got.Distinct != ref.Distinct || got.Terms != ref.Terms || got.Triples != ref.Triples || got.Distinct < 100000 {
		t.Fatalf("small budget: %+v\nlarge budget: %+v", got, ref)
	}
	ents, err := os.ReadDir(refDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		want, err := os.ReadFile(filepath.Join(refDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(gotDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%s differs (%d bytes, want %d)", e.Name(), len(b), len(want))
		}
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 3 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("left beside the snapshots: %v", names)
	}

	// Bad input under a small budget: the error names the line, nothing
	// is published, the previous snapshot stays, no temporary file stays.
	bad := writeBadNT(t, dir, 2500)
	_, err = Load(context.Background(), Config{Inputs: []string{bad}, Out: gotDir, Memory: 4 << 10})
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2500 {
		t.Fatalf("got %v, want a syntax error at line 2500", err)
	}
	if b, err := os.ReadFile(filepath.Join(gotDir, "dict.bin")); err != nil || !bytes.Equal(b, mustRead(t, filepath.Join(refDir, "dict.bin"))) {
		t.Errorf("the snapshot changed after a failed load (%v)", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 4 {
		t.Errorf("%d entries beside the snapshots after a failed load, want 4", len(left))
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
