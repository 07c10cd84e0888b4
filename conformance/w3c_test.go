package conformance

import (
	"context"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
)

// TestW3C runs the W3C SPARQL 1.1 query-evaluation tests with every shard
// count of -conformance.shards, under the ratchet of
// testdata/known-failures.txt.
func TestW3C(t *testing.T) {
	suite, root := loadSuite(t)
	if len(suite.Tests) < 300 {
		t.Fatalf("only %d query-evaluation tests found under %s", len(suite.Tests), root)
	}
	skip, err := ReadList(skipFile)
	if err != nil {
		t.Fatal(err)
	}
	checkSkipList(t, suite, skip)

	known, err := ReadList(knownFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	for id := range known {
		if _, ok := skip[id]; ok {
			t.Errorf("%s is both skipped and a known failure", id)
		}
	}
	ids := map[string]bool{}
	for _, tc := range suite.Tests {
		ids[tc.ID] = true
	}
	ctx := context.Background()
	runShards(t, "W3C SPARQL 1.1 query evaluation", "SPARQL 1.1 Query (evaluation, result formats, federation, entailment)",
		func(id string) bool { return ids[id] }, func(n int) (run []Outcome) {
			for _, tc := range suite.Tests {
				if !selected(t, tc.ID) {
					continue
				}
				if reason, ok := skip[tc.ID]; ok {
					run = append(run, Outcome{ID: tc.ID, Dir: tc.Dir, Status: Skip, Reason: reason})
					continue
				}
				run = append(run, suite.Run(ctx, tc, RunOptions{Shards: n, Timeout: *timeoutFlag, NumbersByValue: true}))
			}
			return run
		})
}

// checkSkipList checks that the skip list names real tests, and that every
// entailment and SERVICE test is in it (the engine does simple entailment
// only and never calls remote endpoints).
func checkSkipList(t *testing.T, suite *Suite, skip List) {
	ids := map[string]bool{}
	var missing []string
	for _, tc := range suite.Tests {
		ids[tc.ID] = true
		if _, ok := skip[tc.ID]; !ok && (len(tc.Regimes) > 0 || tc.ServiceData > 0 || tc.Dir == "entailment" || tc.Dir == "service") {
			missing = append(missing, tc.ID)
		}
	}
	if len(missing) > 0 {
		t.Errorf("entailment or SERVICE tests missing from %s: %s", skipFile, strings.Join(missing, ", "))
	}
	var unknown []string
	for id, reason := range skip {
		if !ids[id] {
			unknown = append(unknown, id)
		}
		if reason == "" {
			t.Errorf("%s: %s has no reason", skipFile, id)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		t.Errorf("%s names tests that do not exist: %s", skipFile, strings.Join(unknown, ", "))
	}
}

// TestW3CShapes runs the W3C query-evaluation tests through the plan
// cache by query shape (RunOptions.Shapes: each query's template, learned
// from its own text, planned with parameters and bound to its constants)
// on 4 shards: every test that is not a known failure must pass so too.
func TestW3CShapes(t *testing.T) {
	suite, _ := loadSuite(t)
	skip, err := ReadList(skipFile)
	if err != nil {
		t.Fatal(err)
	}
	known, err := ReadList(knownFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	var templated atomic.Int64
	ran, failed := 0, 0
	for _, tc := range suite.Tests {
		if _, ok := skip[tc.ID]; ok || !selected(t, tc.ID) {
			continue
		}
		ran++
		o := suite.Run(context.Background(), tc, RunOptions{Shards: 4, Timeout: *timeoutFlag, NumbersByValue: true,
			Shapes: true, Templated: &templated})
		if _, isKnown := known[tc.ID]; o.Status == Fail && !isKnown {
			failed++
			t.Errorf("%s fails through its template: %s", tc.ID, o.Reason)
		}
	}
	t.Logf("%d tests, %d answered through a template, %d new failures", ran, templated.Load(), failed)
	if ran > 300 && templated.Load() < 50 {
		t.Errorf("only %d of %d tests were answered through a template", templated.Load(), ran)
	}
}
