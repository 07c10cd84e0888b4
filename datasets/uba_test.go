package datasets_test

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/datasets"
	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
)

var update = flag.Bool("update", false, "rewrite testdata/uba.tsv from a run of UBA (needs WUKONGD_UBA)")

// ubaCase is one run of UBA: -univ, -index, -seed.
type ubaCase struct{ univ, index, seed int64 }

// ubaCases are compared with UBA beyond the reference data (seed 0, index
// 0): other seeds, other start indices, universities from 1000 on (which no
// degree refers to), a run that crosses University999, and the largest
// index and seed UBA accepts.
var ubaCases = []ubaCase{
	{1, 0, 1},
	{1, 0, 2},
	{1, 0, 12345},
	{1, 7, 0},
	{2, 5, 9},
	{3, 0, 3},
	{2, 999, 4},
	{1, 1000, 0},
	{1, 2_147_483_647, 2_147_483_647},
}

func (c ubaCase) String() string {
	return fmt.Sprintf("-univ %d -index %d -seed %d", c.univ, c.index, c.seed)
}

// ubaResult is the N-Triples of a run, as testdata/uba.tsv records it.
type ubaResult struct {
	triples int64
	sha256  string
}

const ubaTSV = "testdata/uba.tsv"

func readUBAResults(t *testing.T) map[ubaCase]ubaResult {
	t.Helper()
	f, err := os.Open(ubaTSV)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res := map[ubaCase]ubaResult{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		var c ubaCase
		var r ubaResult
		if _, err := fmt.Sscanf(line, "%d\t%d\t%d\t%d\t%s", &c.univ, &c.index, &c.seed, &r.triples, &r.sha256); err != nil {
			t.Fatalf("%s: %q: %v", ubaTSV, line, err)
		}
		res[c] = r
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return res
}

func generatedResult(t *testing.T, c ubaCase) ubaResult {
	t.Helper()
	text := generateText(t, datasets.LUBMConfig{Universities: int(c.univ), Index: int(c.index), Seed: c.seed})
	sum := sha256.Sum256(text)
	return ubaResult{triples: int64(bytes.Count(text, []byte("\n"))), sha256: hex.EncodeToString(sum[:])}
}

// TestMatchesRecordedUBA compares the generator with UBA's output for each
// of ubaCases, as recorded in testdata/uba.tsv by TestAgainstUBA (the count
// and SHA-256 of the N-Triples, converted as ../shared/datasets/lubm/README.md
// describes).
func TestMatchesRecordedUBA(t *testing.T) {
	recorded := readUBAResults(t)
	for _, c := range ubaCases {
		want, ok := recorded[c]
		if !ok {
			t.Errorf("%v: not in %s (run TestAgainstUBA with -update)", c, ubaTSV)
			continue
		}
		if got := generatedResult(t, c); got != want {
			t.Errorf("%v: generated %d triples, sha256 %s; UBA %d, %s", c, got.triples, got.sha256, want.triples, want.sha256)
		}
	}
}

var ubaFileName = regexp.MustCompile(`University(\d+)_(\d+)\.owl(\.gz)?$`)

// ubaToNTriples converts UBA's files to N-Triples the way the reference
// data was: the files in order of university and department, each parsed
// as RDF/XML with the base file:///<file name>, a triple that occurred
// before dropped.
func ubaToNTriples(t *testing.T, files []string) []byte {
	t.Helper()
	type file struct {
		path       string
		univ, dept int
	}
	var fs []file
	for _, p := range files {
		m := ubaFileName.FindStringSubmatch(p)
		if m == nil {
			t.Fatalf("%s: not a UBA file name", p)
		}
		u, _ := strconv.Atoi(m[1])
		d, _ := strconv.Atoi(m[2])
		fs = append(fs, file{p, u, d})
	}
	slices.SortFunc(fs, func(a, b file) int { return cmp.Or(cmp.Compare(a.univ, b.univ), cmp.Compare(a.dept, b.dept)) })
	seen := map[rdf.Triple]bool{}
	var out []byte
	for _, f := range fs {
		base := fmt.Sprintf("file:///University%d_%d.owl", f.univ, f.dept)
		err := loader.ParseFile(f.path, loader.Options{Base: base}, func(q rdf.Quad) error {
			tr := q.Triple()
			if seen[tr] {
				return nil
			}
			seen[tr] = true
			out = rdf.AppendNTriples(out, tr.S)
			out = append(out, ' ')
			out = rdf.AppendNTriples(out, tr.P)
			out = append(out, ' ')
			out = rdf.AppendNTriples(out, tr.O)
			out = append(out, " .\n"...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestUBAConversion checks ubaToNTriples, which TestAgainstUBA converts
// UBA's output with: UBA's own LUBM-1 files (../shared/datasets/lubm/uba-1)
// must convert to the reference lubm1.nt.gz, byte for byte.
func TestUBAConversion(t *testing.T) {
	files, _ := filepath.Glob(lubmDir + "/uba-1/University*_*.owl.gz")
	if len(files) == 0 {
		t.Skip("reference data not available")
	}
	got := ubaToNTriples(t, files)
	w := &sameAsWriter{ref: bufio.NewReaderSize(openReference(t, "lubm1.nt.gz"), 1<<20)}
	w.Write(got)
	if d := w.done(); d != "" {
		t.Fatalf("UBA's LUBM-1 files convert to something else than lubm1.nt.gz: %s", d)
	}
}

// TestAgainstUBA runs UBA 1.7 itself on each of ubaCases and compares its
// files with WriteUBAFiles' byte for byte, and its output converted by
// ubaToNTriples with GenerateLUBM's. It needs Java
// and UBA's compiled classes (or jar): WUKONGD_UBA=<classpath>, e.g.
//
//	javac -d /tmp/uba/classes edu/lehigh/swat/bench/uba/*.java
//	WUKONGD_UBA=/tmp/uba/classes go test ./datasets -run TestAgainstUBA -v
//
// With -update it rewrites testdata/uba.tsv, which TestMatchesRecordedUBA
// checks without UBA. UBA 1.7 names its files user.dir + "\" + name: on
// Linux they land beside the working directory, which the test handles.
func TestAgainstUBA(t *testing.T) {
	cp := os.Getenv("WUKONGD_UBA")
	if cp == "" {
		t.Skip("set WUKONGD_UBA to the classpath of UBA 1.7 (edu.lehigh.swat.bench.uba.Generator) to run it")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skipf("no java: %v", err)
	}
	var lines []string
	for _, c := range ubaCases {
		parent := t.TempDir()
		dir := filepath.Join(parent, "w")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(java, "-cp", cp, "edu.lehigh.swat.bench.uba.Generator",
			"-univ", fmt.Sprint(c.univ), "-index", fmt.Sprint(c.index), "-seed", fmt.Sprint(c.seed),
			"-onto", datasets.UnivBenchOntology)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: UBA: %v\n%s", c, err, out)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "University*_*.owl"))
		backslashed, _ := filepath.Glob(filepath.Join(parent, `w\University*_*.owl`))
		files = append(files, backslashed...)
		if len(files) == 0 {
			t.Fatalf("%v: UBA wrote no files", c)
		}
		sameFiles(t, datasets.LUBMConfig{Universities: int(c.univ), Index: int(c.index), Seed: c.seed}, files)
		text := ubaToNTriples(t, files)
		sum := sha256.Sum256(text)
		uba := ubaResult{triples: int64(bytes.Count(text, []byte("\n"))), sha256: hex.EncodeToString(sum[:])}
		got := generatedResult(t, c)
		t.Logf("%v: %d files, %d triples, sha256 %s", c, len(files), uba.triples, uba.sha256)
		if got != uba {
			t.Errorf("%v: generated %d triples, sha256 %s; UBA %d, %s", c, got.triples, got.sha256, uba.triples, uba.sha256)
		}
		lines = append(lines, fmt.Sprintf("%d\t%d\t%d\t%d\t%s", c.univ, c.index, c.seed, uba.triples, uba.sha256))
	}
	if *update {
		head := "# UBA 1.7 output for other seeds and start indices (datasets/uba_test.go, TestAgainstUBA -update):\n" +
			"# univ\tindex\tseed\ttriples\tsha256 of the N-Triples (converted as ../shared/datasets/lubm/README.md says)\n"
		if err := os.WriteFile(ubaTSV, []byte(head+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	recorded := readUBAResults(t)
	for i, c := range ubaCases {
		if want := fmt.Sprintf("%d\t%d\t%d\t%d\t%s", c.univ, c.index, c.seed, recorded[c].triples, recorded[c].sha256); lines[i] != want {
			t.Errorf("%v: UBA gives %q, %s records %q", c, lines[i], ubaTSV, want)
		}
	}
}

// sameFiles compares the UBA files that WriteUBAFiles writes for cfg with
// want (UBA's own files, .owl or .owl.gz), byte for byte.
func sameFiles(t *testing.T, cfg datasets.LUBMConfig, want []string) {
	t.Helper()
	dir := t.TempDir()
	n, err := datasets.WriteUBAFiles(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Fatalf("%+v: %d files written, UBA has %d", cfg, n, len(want))
	}
	for _, w := range want {
		m := ubaFileName.FindStringSubmatch(w)
		if m == nil {
			t.Fatalf("%s: not a UBA file name", w)
		}
		name := "University" + m[1] + "_" + m[2] + ".owl"
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := loader.OpenFile(w)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, ref) {
			i := 0
			for i < min(len(got), len(ref)) && got[i] == ref[i] {
				i++
			}
			t.Fatalf("%s differs from UBA's at byte %d: %q, UBA %q", name, i, got[i:min(i+80, len(got))], ref[i:min(i+80, len(ref))])
		}
	}
}

// TestWriteUBAFiles compares UBA's own layout, as WriteUBAFiles writes it,
// with UBA's LUBM-1 files in ../shared/datasets/lubm/uba-1, byte for byte.
func TestWriteUBAFiles(t *testing.T) {
	files, _ := filepath.Glob(lubmDir + "/uba-1/University*_*.owl.gz")
	if len(files) == 0 {
		t.Skip("reference data not available")
	}
	sameFiles(t, datasets.LUBMConfig{Universities: 1}, files)
	if _, err := datasets.WriteUBAFiles(filepath.Join(t.TempDir(), "missing"), datasets.LUBMConfig{Universities: 1}); err == nil {
		t.Error("no error for a missing directory")
	}
}
