package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
)

// TestEARL writes a report and reads it back with our Turtle parser: one
// assertion per test with the outcome, and the reason of every failure
// and skip; Combine fails a test that failed in any run.
func TestEARL(t *testing.T) {
	runs := [][]Outcome{
		{{ID: "a/manifest#t1", Status: Pass}, {ID: "a/manifest#t2", Status: Pass}, {ID: "a/manifest#t3", Status: Skip, Reason: "why \"quoted\""}},
		{{ID: "a/manifest#t1", Status: Pass}, {ID: "a/manifest#t2", Status: Fail, Reason: "broke"}, {ID: "a/manifest#t3", Status: Skip, Reason: "why \"quoted\""}},
	}
	s := Combine("suite a", runs...)
	if p, f, sk := s.Counts(); p != 1 || f != 1 || sk != 1 {
		t.Fatalf("counts %d %d %d, want 1 1 1", p, f, sk)
	}
	own := Combine("own", []Outcome{{ID: ownPrefix + "x/y", Status: Pass}})
	var b strings.Builder
	if err := WriteEARL(&b, []SuiteResult{s, own}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	outcome := map[string]string{}
	results := map[string]string{} // result node → test
	var quads []rdf.Quad
	err := loader.Parse(strings.NewReader(b.String()), loader.Turtle, loader.Options{Name: "earl"}, func(q rdf.Quad) error {
		quads = append(quads, q)
		return nil
	})
	if err != nil {
		t.Fatalf("the report does not parse: %v\n%s", err, b.String())
	}
	const earl = "http://www.w3.org/ns/earl#"
	tests := map[rdf.Term]string{}
	for _, q := range quads {
		if q.P.Value == earl+"test" {
			tests[q.S] = q.O.Value
		}
	}
	for _, q := range quads {
		if q.P.Value == earl+"result" {
			results[q.O.String()] = tests[q.S]
		}
	}
	descr := map[string]string{}
	for _, q := range quads {
		switch q.P.Value {
		case earl + "outcome":
			outcome[results[q.S.String()]] = strings.TrimPrefix(q.O.Value, earl)
		case "http://purl.org/dc/terms/description":
			descr[results[q.S.String()]] = q.O.Value
		}
	}
	want := map[string]string{SuiteBase + "a/manifest#t1": "passed", SuiteBase + "a/manifest#t2": "failed",
		SuiteBase + "a/manifest#t3": "untested", SubjectIRI + "/conformance#x/y": "passed"}
	for id, o := range want {
		if outcome[id] != o {
			t.Errorf("%s: outcome %q, want %q", id, outcome[id], o)
		}
	}
	if descr[SuiteBase+"a/manifest#t3"] != `why "quoted"` || !strings.Contains(descr[SuiteBase+"a/manifest#t2"], "broke") {
		t.Errorf("reasons: %q", descr)
	}
	var sum strings.Builder
	if err := WriteSummary(&sum, []SuiteResult{s}, time.Now(), "make conformance"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "| suite a | 1 | 1 | 1 |") || !strings.Contains(sum.String(), "`a/manifest#t2`: run 2: broke") {
		t.Errorf("summary:\n%s", sum.String())
	}
}
