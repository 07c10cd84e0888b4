package loader

import (
	"fmt"
	"github.com/wukongd/wukongd/internal/shareddata"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

var w3cDir = shareddata.Path("w3c", "rdf11")

// suiteBase is where the W3C publishes the suites; the expected results
// use IRIs under it.
const suiteBase = "https://w3c.github.io/rdf-tests/rdf/rdf11/"

const (
	mfNS   = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#"
	rdftNS = "http://www.w3.org/ns/rdftest#"
)

type w3cTest struct {
	name, kind     string
	action, result string // IRIs
}

// readManifest parses a suite's manifest.ttl with our Turtle parser and
// returns its tests in mf:entries order.
func readManifest(t *testing.T, dir, base string) []w3cTest {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "manifest.ttl"))
	if err != nil {
		t.Skipf("W3C suite not available: %v", err)
	}
	defer f.Close()
	var quads []rdf.Quad
	err = Parse(f, Turtle, Options{Name: "manifest.ttl", Base: base + "manifest.ttl"}, func(q rdf.Quad) error {
		quads = append(quads, q)
		return nil
	})
	if err != nil {
		t.Fatalf("cannot parse the manifest: %v", err)
	}
	props := map[rdf.Term]map[string]rdf.Term{}
	for _, q := range quads {
		if props[q.S] == nil {
			props[q.S] = map[string]rdf.Term{}
		}
		props[q.S][q.P.Value] = q.O
	}
	var entries rdf.Term
	for s, m := range props {
		if m[rdf.RDFType].Value == mfNS+"Manifest" {
			entries = m[mfNS+"entries"]
			_ = s
		}
	}
	var tests []w3cTest
	for cell := entries; cell.Value != rdf.RDFNil; cell = props[cell][rdf.RDFRest] {
		if cell.IsZero() {
			t.Fatal("manifest: broken mf:entries list")
		}
		e := props[cell][rdf.RDFFirst]
		m := props[e]
		tests = append(tests, w3cTest{
			name:   m[mfNS+"name"].Value,
			kind:   strings.TrimPrefix(m[rdf.RDFType].Value, rdftNS),
			action: m[mfNS+"action"].Value,
			result: m[mfNS+"result"].Value,
		})
	}
	if len(tests) == 0 {
		t.Fatal("manifest has no tests")
	}
	return tests
}

func parseTestFile(path, base string, f Format) ([]rdf.Quad, error) {
	r, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []rdf.Quad
	err = Parse(r, f, Options{Name: filepath.Base(path), Base: base}, func(q rdf.Quad) error {
		out = append(out, q)
		return nil
	})
	return out, err
}

func runSuite(t *testing.T, suite, base string, actionFormat, resultFormat Format) {
	dir := filepath.Join(w3cDir, suite)
	tests := readManifest(t, dir, base)
	passed, failed := 0, 0
	for _, tc := range tests {
		ok := t.Run(tc.name, func(t *testing.T) {
			local := filepath.Join(dir, strings.TrimPrefix(tc.action, base))
			got, err := parseTestFile(local, tc.action, actionFormat)
			switch {
			case strings.HasSuffix(tc.kind, "NegativeSyntax") || strings.HasSuffix(tc.kind, "NegativeEval"):
				if err == nil {
					t.Fatalf("%s: parsed a bad document without error (%d statements)", tc.kind, len(got))
				}
				if _, ok := err.(*SyntaxError); !ok {
					t.Fatalf("error is not a *SyntaxError: %v", err)
				}
			case strings.HasSuffix(tc.kind, "PositiveSyntax"):
				if err != nil {
					t.Fatal(err)
				}
			case strings.HasSuffix(tc.kind, "Eval"):
				if err != nil {
					t.Fatal(err)
				}
				want, err := parseTestFile(filepath.Join(dir, strings.TrimPrefix(tc.result, base)), tc.result, resultFormat)
				if err != nil {
					t.Fatalf("cannot read the expected result: %v", err)
				}
				if msg := isomorphic(got, want); msg != "" {
					t.Fatalf("result differs from %s: %s\ngot:\n%s\nwant:\n%s", tc.result, msg, dumpQuads(got), dumpQuads(want))
				}
			default:
				t.Fatalf("unknown test type %s", tc.kind)
			}
		})
		if ok {
			passed++
		} else {
			failed++
		}
	}
	fmt.Printf("W3C %s: %d passed, %d failed\n", suite, passed, failed)
}

func dumpQuads(qs []rdf.Quad) string {
	var lines []string
	for _, q := range qs {
		l := q.S.String() + " " + q.P.String() + " " + q.O.String()
		if !q.G.IsZero() {
			l += " " + q.G.String()
		}
		lines = append(lines, l+" .")
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestW3CNTriples(t *testing.T) {
	runSuite(t, "rdf-n-triples", suiteBase+"rdf-n-triples/", NTriples, NTriples)
}

func TestW3CNQuads(t *testing.T) {
	runSuite(t, "rdf-n-quads", suiteBase+"rdf-n-quads/", NQuads, NQuads)
}

func TestW3CTurtle(t *testing.T) {
	runSuite(t, "rdf-turtle", suiteBase+"rdf-turtle/", Turtle, NTriples)
}

func TestW3CTriG(t *testing.T) {
	runSuite(t, "rdf-trig", suiteBase+"rdf-trig/", TriG, NQuads)
}

func TestW3CRDFXML(t *testing.T) {
	runSuite(t, "rdf-xml", suiteBase+"rdf-xml/", RDFXML, NTriples)
}
