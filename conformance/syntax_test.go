package conformance

import "testing"

// TestW3CSyntaxSuites runs the syntax tests of the query, update and
// federation suites through the parser (the sparql package runs them
// too, without a report), under the ratchet.
func TestW3CSyntaxSuites(t *testing.T) {
	_, root := loadSuite(t)
	tests, err := LoadSyntaxTests(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) < 100 {
		t.Fatalf("only %d syntax tests found", len(tests))
	}
	known, err := ReadList(knownFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	var run []Outcome
	for _, tc := range tests {
		ids[tc.ID] = true
		if selected(t, tc.ID) {
			run = append(run, RunSyntax(tc))
		}
	}
	report(t, "W3C SPARQL 1.1 syntax", 1, run, known)
	ratchet(t, []int{1}, [][]Outcome{run}, func(id string) bool { return ids[id] })
	record("SPARQL 1.1 syntax (query, update, federation)", run)
}
