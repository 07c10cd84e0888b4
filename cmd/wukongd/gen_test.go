package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/wukongd/wukongd/datasets"
)

func TestGenLUBM(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "lubm1.nt")
	zipped := filepath.Join(dir, "lubm1.nt.gz")
	for _, out := range []string{plain, zipped} {
		if got := run([]string{"gen", "lubm", "--univ", "1", "--index", "3", "--seed", "5", "--quiet", "--out", out}); got != 0 {
			t.Fatalf("gen --out %s: exit status %d", out, got)
		}
	}
	var want bytes.Buffer
	if _, err := datasets.GenerateLUBM(&want, datasets.LUBMConfig{Universities: 1, Index: 3, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Error("gen lubm output differs from datasets.GenerateLUBM")
	}
	f, err := os.Open(zipped)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(unzipped, want.Bytes()) {
		t.Error("gen lubm .gz output does not decompress to the plain output")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestGenUBALayout checks --layout uba: UBA's files in a new directory,
// as datasets.WriteUBAFiles writes them.
func TestGenUBALayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "owl")
	if got := run([]string{"gen", "lubm", "--layout", "uba", "--index", "4", "--quiet", "--out", dir}); got != 0 {
		t.Fatalf("gen --layout uba: exit status %d", got)
	}
	want := t.TempDir()
	n, err := datasets.WriteUBAFiles(want, datasets.LUBMConfig{Universities: 1, Index: 4})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != n || n < 15 {
		t.Fatalf("%d files in %s (%v), want %d", len(entries), dir, err, n)
	}
	for _, e := range entries {
		got, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		w, err := os.ReadFile(filepath.Join(want, e.Name()))
		if err != nil || !bytes.Equal(got, w) || !bytes.HasPrefix(got, []byte("<?xml")) {
			t.Fatalf("%s differs from datasets.WriteUBAFiles' (%v)", e.Name(), err)
		}
	}
}

// TestGenSpecialFile checks that a device is written in place, not replaced
// by a renamed temporary file.
func TestGenSpecialFile(t *testing.T) {
	before, err := os.Stat(os.DevNull)
	if err != nil || before.Mode().IsRegular() {
		t.Skipf("no device at %s", os.DevNull)
	}
	if got := run([]string{"gen", "lubm", "--quiet", "--out", os.DevNull}); got != 0 {
		t.Fatalf("gen --out %s: exit status %d", os.DevNull, got)
	}
	after, err := os.Stat(os.DevNull)
	if err != nil || !os.SameFile(before, after) || after.Mode() != before.Mode() {
		t.Fatalf("%s was replaced: %v, %v", os.DevNull, after, err)
	}
}

func TestGenErrors(t *testing.T) {
	for _, args := range [][]string{
		{"gen"},
		{"gen", "dbpedia", "--out", "-"},
		{"gen", "lubm", "--univ", "1"},
		{"gen", "lubm", "--univ", "0", "--out", "-"},
		{"gen", "lubm", "--seed", "-1", "--out", "-"},
		{"gen", "lubm", "--seed", "2147483648", "--out", "-"},
		{"gen", "lubm", "--index", "-1", "--out", "-"},
		{"gen", "lubm", "--univ", "2", "--index", "2147483647", "--out", "-"},
		{"gen", "lubm", "--out", filepath.Join(t.TempDir(), "no", "such", "dir.nt")},
		{"gen", "lubm", "--out", "-", "extra"},
		{"gen", "lubm", "--out", t.TempDir()},
		{"gen", "lubm", "--layout", "xml", "--out", t.TempDir()},
		{"gen", "lubm", "--layout", "uba", "--out", "-"},
	} {
		if got := run(args); got != 1 {
			t.Errorf("run(%q) = %d, want 1", args, got)
		}
	}
	if got := run([]string{"gen", "lubm", "--help"}); got != 0 {
		t.Errorf("gen lubm --help: exit status %d", got)
	}
}
