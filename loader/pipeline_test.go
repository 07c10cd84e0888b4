package loader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func buildFrom(t *testing.T, args []string, opts BuildOptions) Summary {
	t.Helper()
	inputs, err := ExpandInputs(args)
	if err != nil {
		t.Fatal(err)
	}
	store, sum, err := BuildStore(context.Background(), inputs, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if got := store.Stats(); got == nil {
		t.Fatal("store without statistics")
	}
	return sum
}

func TestBuildStoreUBA(t *testing.T) {
	needFile(t, lubmDir+"/uba-1")
	sum := buildFrom(t, []string{lubmDir + "/uba-1"}, BuildOptions{Shards: 4})
	if sum.Files != 15 || sum.Triples != 103104 || sum.Distinct != 100573 || sum.Duplicates != 103104-100573 {
		t.Fatalf("summary %+v", sum)
	}
}

func TestBuildStoreNTriples(t *testing.T) {
	needFile(t, lubmDir+"/lubm1.nt.gz")
	sum := buildFrom(t, []string{lubmDir + "/lubm1.nt.gz"}, BuildOptions{Shards: 2})
	if sum.Triples != 100573 || sum.Distinct != 100573 || sum.Duplicates != 0 {
		t.Fatalf("summary %+v", sum)
	}
}

func TestBuildStoreLUBM10(t *testing.T) {
	if testing.Short() {
		t.Skip("LUBM(10) in -short mode")
	}
	needFile(t, lubmDir+"/lubm10.nt.gz")
	sum := buildFrom(t, []string{lubmDir + "/lubm10.nt.gz"}, BuildOptions{Shards: 4})
	if sum.Distinct != 1272953 {
		t.Fatalf("summary %+v", sum)
	}
}

func TestBuildStoreLUBM40(t *testing.T) {
	if testing.Short() || os.Getenv("WUKONGD_BIG") == "" {
		t.Skip("LUBM(40) runs with WUKONGD_BIG=1")
	}
	needFile(t, lubmDir+"/lubm40.nt.gz")
	sum := buildFrom(t, []string{lubmDir + "/lubm40.nt.gz"}, BuildOptions{Shards: 4})
	if sum.Distinct != 5309056 {
		t.Fatalf("summary %+v", sum)
	}
}

func writeBadNT(t *testing.T, dir string, badLine int) string {
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		if i == badLine {
			b.WriteString("<http://a/s> <http://a/p> <http://a/o\n")
			continue
		}
		fmt.Fprintf(&b, "<http://a/s%d> <http://a/p> \"v%d\" .\n", i, i)
	}
	p := filepath.Join(dir, "bad.nt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuildStoreSyntaxError(t *testing.T) {
	p := writeBadNT(t, t.TempDir(), 1000)
	inputs, err := ExpandInputs([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = BuildStore(context.Background(), inputs, BuildOptions{})
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 1000 || !strings.Contains(err.Error(), "bad.nt:1000:") {
		t.Fatalf("got %v, want a syntax error at line 1000", err)
	}
	// Skipping: the rest loads and the error is reported.
	sum := buildFrom(t, []string{p}, BuildOptions{SkipInvalid: true})
	if sum.Skipped != 1 || sum.Distinct != 2999 || len(sum.FirstErrors) != 1 || !strings.Contains(sum.FirstErrors[0], ":1000:") {
		t.Fatalf("summary %+v", sum)
	}
}

func TestBuildStoreNamedGraphsCounted(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.trig")
	os.WriteFile(p, []byte("@prefix : <http://a/> . :s :p :o . :g { :s :p :o2 . :s :p :o3 }"), 0o644)
	q := filepath.Join(dir, "y.nq")
	os.WriteFile(q, []byte("<http://a/s> <http://a/p> <http://a/o> .\n<http://a/s> <http://a/p> <http://a/o4> <http://a/g> .\n"), 0o644)
	sum := buildFrom(t, []string{dir}, BuildOptions{})
	if sum.Files != 2 || sum.Triples != 5 || sum.NamedGraphQuads != 3 || sum.Distinct != 1 || sum.Duplicates != 1 {
		t.Fatalf("summary %+v", sum)
	}
}
