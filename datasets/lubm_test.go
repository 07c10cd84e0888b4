package datasets_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/datasets"
	"github.com/wukongd/wukongd/internal/shareddata"
	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
)

const ub = datasets.UnivBench

var lubmDir = shareddata.Path("datasets", "lubm")

func generateText(t testing.TB, cfg datasets.LUBMConfig) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := datasets.GenerateLUBM(&buf, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if lines := int64(bytes.Count(buf.Bytes(), []byte("\n"))); lines != n {
		t.Fatalf("GenerateLUBM reported %d triples, wrote %d lines", n, lines)
	}
	return buf.Bytes()
}

func generateTriples(t testing.TB, cfg datasets.LUBMConfig) []rdf.Triple {
	t.Helper()
	var ts []rdf.Triple
	n, err := datasets.GenerateLUBMTriples(cfg, func(tr rdf.Triple) error {
		ts = append(ts, tr)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(ts)) {
		t.Fatalf("GenerateLUBMTriples reported %d triples, emitted %d", n, len(ts))
	}
	return ts
}

// readNT parses N-Triples text with the loader.
func readNT(t testing.TB, r io.Reader, name string) []rdf.Triple {
	t.Helper()
	var ts []rdf.Triple
	err := loader.Parse(r, loader.NTriples, loader.Options{Name: name}, func(q rdf.Quad) error {
		ts = append(ts, q.Triple())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// openReference opens ../shared/datasets/lubm/<name>, decompressed; it
// skips the test when the reference data is not there.
func openReference(t testing.TB, name string) io.Reader {
	t.Helper()
	f, err := os.Open(lubmDir + "/" + name)
	if err != nil {
		t.Skipf("reference data not available: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

// sameAsWriter compares what is written to it with a reference stream, as
// it comes, and remembers the first line that differs.
type sameAsWriter struct {
	ref      *bufio.Reader
	line     int64  // lines compared so far
	cur      []byte // the current line so far
	refLine  []byte
	mismatch string
}

func (w *sameAsWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && w.mismatch == "" {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.cur = append(w.cur, p...)
			break
		}
		w.cur = append(w.cur, p[:i+1]...)
		p = p[i+1:]
		w.line++
		ref, err := w.ref.ReadSlice('\n')
		if err != nil || !bytes.Equal(ref, w.cur) {
			w.mismatch = fmt.Sprintf("line %d: generated %q, reference %q (%v)", w.line, w.cur, ref, err)
		}
		w.cur = w.cur[:0]
	}
	return n, nil
}

// done reports a difference, including a reference that goes on.
func (w *sameAsWriter) done() string {
	if w.mismatch == "" && len(w.cur) > 0 {
		return fmt.Sprintf("generated text ends in an unterminated line %q", w.cur)
	}
	if w.mismatch == "" {
		if rest, _ := w.ref.ReadString('\n'); rest != "" {
			return fmt.Sprintf("generated text ends after %d lines; the reference goes on with %q", w.line, rest)
		}
	}
	return w.mismatch
}

// testSameAsReference generates LUBM-N (seed 0, index 0) and compares it
// byte for byte with the reference conversion of UBA's output, in
// ../shared/datasets/lubm. The generated N-Triples are the reference file
// itself, not only the same set: the same triples in the same order (UBA's
// files in order, each in document order, a repeated triple where it first
// occurs), so the sorted sets are equal too.
func testSameAsReference(t *testing.T, univ int, name string, wantTriples int64) {
	w := &sameAsWriter{ref: bufio.NewReaderSize(openReference(t, name), 1<<20)}
	n, err := datasets.GenerateLUBM(w, datasets.LUBMConfig{Universities: univ})
	if err != nil {
		t.Fatal(err)
	}
	if d := w.done(); d != "" {
		t.Fatalf("LUBM-%d differs from %s: %s", univ, name, d)
	}
	if n != wantTriples || w.line != n {
		t.Fatalf("LUBM-%d: %d triples reported, %d lines, want %d", univ, n, w.line, wantTriples)
	}
}

func TestLUBM1IsUBA(t *testing.T)  { testSameAsReference(t, 1, "lubm1.nt.gz", 100_573) }
func TestLUBM10IsUBA(t *testing.T) { testSameAsReference(t, 10, "lubm10.nt.gz", 1_272_953) }

// TestLUBM40IsUBA compares LUBM-40 (5.3 M triples, 700 MB of text, about
// 10 s); it runs only with WUKONGD_LUBM40=1 (`make test-lubm`), not in CI.
func TestLUBM40IsUBA(t *testing.T) {
	if os.Getenv("WUKONGD_LUBM40") == "" {
		t.Skip("set WUKONGD_LUBM40=1 (make test-lubm) to compare LUBM-40")
	}
	testSameAsReference(t, 40, "lubm40.nt.gz", 5_309_056)
}

func TestGenerateLUBMDeterministic(t *testing.T) {
	sum := func(cfg datasets.LUBMConfig) [32]byte { return sha256.Sum256(generateText(t, cfg)) }
	base := datasets.LUBMConfig{Universities: 2, Seed: 7, Workers: 1}
	a := sum(base)
	if b := sum(base); a != b {
		t.Fatal("same seed, different output")
	}
	par := base
	par.Workers = 2
	if b := sum(par); a != b {
		t.Fatal("same seed, 1 and 2 workers: different output")
	}
	other := base
	other.Seed = 8
	if b := sum(other); a == b {
		t.Fatal("seeds 7 and 8 gave the same output")
	}
}

// TestGenerateLUBMIndex checks that a university is the same whatever the
// start index and the scale (UBA seeds each university by its index): the
// last university of LUBM(3, seed 7) is LUBM(1, index 2, seed 7), except for
// the rdf:type triples of the universities the first two already typed.
func TestGenerateLUBMIndex(t *testing.T) {
	three := generateText(t, datasets.LUBMConfig{Universities: 3, Seed: 7})
	alone := generateText(t, datasets.LUBMConfig{Universities: 1, Index: 2, Seed: 7})
	start := bytes.Index(three, []byte("<file:///University2_0.owl>"))
	if start < 0 {
		t.Fatal("LUBM-3 has no University2")
	}
	univType := []byte("> <" + rdf.RDFType + "> <" + ub + "University> .")
	var typesDropped int
	in3 := bytes.SplitAfter(three[start:], []byte("\n"))
	j := 0
	for _, line := range bytes.SplitAfter(alone, []byte("\n")) {
		if j < len(in3) && bytes.Equal(line, in3[j]) {
			j++
			continue
		}
		if !bytes.Contains(line, univType) {
			t.Fatalf("line %q of University2 alone is not in LUBM-3's University2", line)
		}
		typesDropped++
	}
	if j != len(in3) || typesDropped < 100 {
		t.Fatalf("LUBM-3's University2 has %d lines, %d matched; %d University types dropped", len(in3), j, typesDropped)
	}
}

func TestGenerateLUBMTriplesSameAsText(t *testing.T) {
	cfg := datasets.LUBMConfig{Universities: 2, Seed: 3}
	text := generateText(t, cfg)
	var b []byte
	ts := generateTriples(t, cfg)
	for _, tr := range ts {
		b = rdf.AppendNTriples(b, tr.S)
		b = append(b, ' ')
		b = rdf.AppendNTriples(b, tr.P)
		b = append(b, ' ')
		b = rdf.AppendNTriples(b, tr.O)
		b = append(b, " .\n"...)
	}
	if !bytes.Equal(text, b) {
		t.Fatal("GenerateLUBMTriples and GenerateLUBM differ")
	}
	// And the text is valid N-Triples that parses back to the same triples.
	parsed := readNT(t, bytes.NewReader(text), "generated")
	if got, want := len(parsed), bytes.Count(text, []byte("\n")); got != want {
		t.Fatalf("parsed %d triples from %d lines", got, want)
	}
	seen := make(map[rdf.Triple]bool, len(parsed))
	for i := range parsed {
		if parsed[i] != ts[i] {
			t.Fatalf("triple %d parses back as %v, generated as %v", i, parsed[i], ts[i])
		}
		if seen[ts[i]] {
			t.Fatalf("triple %d repeats %v", i, ts[i])
		}
		seen[ts[i]] = true
	}
}

func TestGenerateLUBMGzip(t *testing.T) {
	cfg := datasets.LUBMConfig{Universities: 3, Seed: 1}
	plain := generateText(t, cfg)
	cfg.Gzip = true
	var buf bytes.Buffer
	if _, err := datasets.GenerateLUBM(&buf, cfg); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plain) {
		t.Fatal("gzip output does not decompress to the plain output")
	}
}

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after == 0 {
		return 0, errors.New("disk full")
	}
	w.after--
	return len(p), nil
}

func TestGenerateLUBMErrors(t *testing.T) {
	for _, cfg := range []datasets.LUBMConfig{
		{Universities: 0},
		{Universities: -1},
		{Universities: 1, Index: -1},
		{Universities: 2, Index: datasets.MaxUBAInt},
		{Universities: 1, Seed: -1},
		{Universities: 1, Seed: datasets.MaxUBAInt + 1},
	} {
		if _, err := datasets.GenerateLUBM(io.Discard, cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
		if _, err := datasets.GenerateLUBMTriples(cfg, func(rdf.Triple) error { return nil }); err == nil {
			t.Errorf("%+v: no error from GenerateLUBMTriples", cfg)
		}
	}
	_, err := datasets.GenerateLUBM(&failingWriter{after: 2}, datasets.LUBMConfig{Universities: 5, Index: 10, Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "University12") {
		t.Errorf("write error: got %v", err)
	}
	stop := errors.New("stop")
	count := 0
	n, err := datasets.GenerateLUBMTriples(datasets.LUBMConfig{Universities: 4, Workers: 2}, func(rdf.Triple) error {
		if count++; count == 1000 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 999 {
		t.Errorf("emit error: got n=%d err=%v", n, err)
	}
}

func TestGenerateLUBMProgress(t *testing.T) {
	var calls []int
	cfg := datasets.LUBMConfig{Universities: 3, Progress: func(done, total int) {
		if total != 3 {
			t.Errorf("total = %d", total)
		}
		calls = append(calls, done)
	}}
	if _, err := datasets.GenerateLUBM(io.Discard, cfg); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(calls) != "[1 2 3]" {
		t.Errorf("progress calls %v", calls)
	}
}

func loadQuery(t *testing.T, name string) bgpQuery {
	t.Helper()
	q, ok := datasets.LUBMQuery(name)
	if !ok {
		t.Fatalf("no query %s", name)
	}
	bq, err := parseBGPQuery(q.Text)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return bq
}

// answerRows returns the number of rows of a reference answer file.
func answerRows(t *testing.T, set, n string) int {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("%s/answers/lubm1/%s/%s.tsv", lubmDir, set, n))
	if err != nil {
		t.Skipf("reference answers not available: %v", err)
	}
	defer f.Close()
	rows := -1 // the header
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rows++
	}
	return rows
}

// TestDefaultDatasetAnswers evaluates every LUBM query that needs no
// reasoning with the naive evaluator on the embedded default data set
// (LUBM-1, seed 0): the row counts must be those of the reference answers
// on UBA's LUBM-1, since the data is UBA's.
func TestDefaultDatasetAnswers(t *testing.T) {
	store := newMiniStore(generateTriples(t, datasets.DefaultLUBMConfig()))
	for _, q := range datasets.LUBMQueries() {
		set, n := "wukong", strings.TrimPrefix(q.Name, "wukong-")
		if q.Set == datasets.SetLUBMStd {
			set, n = "std", strings.TrimPrefix(q.Name, "lubm-std-")
		}
		bq := loadQuery(t, q.Name)
		want := answerRows(t, set, n)
		got := store.count(bq)
		t.Logf("%-14s %-3s %6d rows (reference %6d)", q.Name, q.Label, got, want)
		if got != want {
			t.Errorf("%s: %d rows on the default data set, the reference answer on UBA's LUBM-1 has %d", q.Name, got, want)
		}
	}
}

func TestDefaultDataset(t *testing.T) {
	var n int64
	var univ0 bool
	got, err := datasets.DefaultDataset(func(tr rdf.Triple) error {
		n++
		univ0 = univ0 || tr.S.Value == "http://www.University0.edu"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != n || n != 100_573 || !univ0 {
		t.Errorf("default data set: %d triples reported, %d emitted (want UBA's 100,573), University0 present: %v", got, n, univ0)
	}
	cfg := datasets.DefaultLUBMConfig()
	if cfg.Universities != 1 || cfg.Seed != 0 || cfg.Index != 0 {
		t.Errorf("default config %+v", cfg)
	}
}
