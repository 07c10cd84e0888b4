package loader

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
)

// termOfRaw is the rdf.Term a RawTerm of ParseChunks stands for.
func termOfRaw(t graphstore.RawTerm) rdf.Term {
	x := rdf.Term{Kind: t.Kind, Value: string(t.Value)}
	if t.Kind == rdf.KindLiteral {
		if len(t.Lang) > 0 {
			x.Lang = lowerASCII(t.Lang)
		} else if string(t.Datatype) != rdf.XSDString {
			x.Datatype = string(t.Datatype)
		}
	}
	return x
}

// parseChunked parses doc with ParseChunks in chunks of size bytes and
// returns its statements in input order.
func parseChunked(doc []byte, quads bool, size, workers int, opts Options) ([]rdf.Quad, error) {
	old := chunkBytes
	chunkBytes = size
	defer func() { chunkBytes = old }()
	var mu sync.Mutex
	bySeq := map[int][]rdf.Quad{}
	ended := map[int]bool{} // the chunks whose Last batch came
	err := ParseChunks(context.Background(), bytes.NewReader(doc), quads, opts, workers, func(b RawBatch) error {
		mu.Lock()
		defer mu.Unlock()
		if ended[b.Seq] {
			return fmt.Errorf("a batch of chunk %d after its last", b.Seq)
		}
		ended[b.Seq] = b.Last
		for _, t := range b.Triples {
			bySeq[b.Seq] = append(bySeq[b.Seq], rdf.Quad{S: termOfRaw(t.S), P: termOfRaw(t.P), O: termOfRaw(t.O), G: b.Graph})
		}
		return nil
	})
	if err == nil {
		for seq, last := range ended {
			if !last {
				return nil, fmt.Errorf("chunk %d had no last batch", seq)
			}
		}
	}
	var out []rdf.Quad
	for seq := 0; len(bySeq) > 0; seq++ {
		out = append(out, bySeq[seq]...)
		delete(bySeq, seq)
	}
	return out, err
}

func parseWhole(doc []byte, quads bool, opts Options) ([]rdf.Quad, error) {
	f := NTriples
	if quads {
		f = NQuads
	}
	var out []rdf.Quad
	err := Parse(bytes.NewReader(doc), f, opts, func(q rdf.Quad) error {
		out = append(out, q)
		return nil
	})
	return out, err
}

// sameParse checks that ParseChunks, in chunks of several sizes and with
// 1 and 3 workers, gives doc's statements in the same order as Parse, or
// the same error at the same position.
func sameParse(t *testing.T, name string, doc []byte, quads bool) {
	t.Helper()
	opts := Options{Name: name, BlankPrefix: "p"}
	want, wantErr := parseWhole(doc, quads, opts)
	for _, size := range []int{1, 64, 4 << 20} {
		for _, workers := range []int{1, 3} {
			got, err := parseChunked(doc, quads, size, workers, opts)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("%s (chunks of %d, %d workers): error %v, want %v", name, size, workers, err, wantErr)
			}
			if err != nil {
				var a, b *SyntaxError
				if !errors.As(err, &a) || !errors.As(wantErr, &b) || *a != *b {
					t.Fatalf("%s (chunks of %d, %d workers): error %v, want %v", name, size, workers, err, wantErr)
				}
				continue
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s (chunks of %d, %d workers): %d statements differ from Parse's %d", name, size, workers, len(got), len(want))
			}
		}
	}
}

// TestParseChunksW3C: every document of the W3C N-Triples and N-Quads
// suites parses in parallel chunks to the statements Parse gives, in the
// same order, or fails with the same error at the same line and column.
func TestParseChunksW3C(t *testing.T) {
	for _, suite := range []struct {
		dir   string
		quads bool
	}{{"rdf-n-triples", false}, {"rdf-n-quads", true}} {
		files, _ := filepath.Glob(filepath.Join(w3cDir, suite.dir, "*.n[tq]"))
		if len(files) == 0 {
			t.Skipf("W3C suite %s not available", suite.dir)
		}
		for _, f := range files {
			doc, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sameParse(t, filepath.Base(f), doc, suite.quads)
		}
		fmt.Printf("ParseChunks: %d documents of %s as Parse\n", len(files), suite.dir)
	}
}

// TestParseChunksLUBM1 and errors: LUBM-1 in chunks as Parse; a document
// with errors in several chunks reports the first in input order.
func TestParseChunksLUBM1(t *testing.T) {
	path := lubmDir + "/lubm1.nt.gz"
	needFile(t, path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Name: "lubm1", BlankPrefix: "p"}
	want, err := parseWhole(doc, false, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{256 << 10} {
		got, err := parseChunked(doc, false, size, 4, opts)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("chunks of %d: %d statements (%v), want %d", size, len(got), err, len(want))
		}
	}
	lines := strings.SplitAfter(string(doc[:200000]), "\n")
	lines[700] = "<http://a> <http://b> oops .\n"
	lines[40] = "<http://a> \"lit\" <http://c> .\n"
	lines[1100] = "<http://a> <http://b> .\n"
	sameParse(t, "bad", []byte(strings.Join(lines, "")), false)
}
