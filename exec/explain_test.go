package exec

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/sparql"
)

func readQuery(t testing.TB, set, name string) *sparql.Query {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(lubmDir, "queries", set, name+".rq"))
	if err != nil {
		t.Skipf("LUBM queries not available: %v", err)
	}
	q, err := sparql.ParseQuery(string(text))
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestModesUseTheFabric checks that the forced modes really do what they
// say on a 4-shard store: fork-join ships sub-queries as messages and reads
// nothing remotely; in place reads remote adjacency and sends nothing.
func TestModesUseTheFabric(t *testing.T) {
	e := newTestEngine(t, lubm1(t), 4)
	for _, name := range []string{"q1", "q2", "q7", "q8"} {
		q := readQuery(t, "wukong", name)
		for _, m := range modes {
			res, err := e.Run(context.Background(), q, Options{Mode: m, Analyze: true})
			if err != nil {
				t.Fatal(err)
			}
			var tot StepStats
			for _, ea := range res.Analysis.Explores {
				for i := range ea.Steps {
					tot.add(&ea.Steps[i])
				}
			}
			if testing.Verbose() {
				t.Logf("%s %s:\n%s", name, m, Explain(res.Plan, res.Analysis, e.Store()))
			}
			switch m {
			case planner.ModeForkJoin:
				if tot.Forks == 0 || tot.Messages < 2*tot.Forks {
					t.Errorf("%s fork-join: %d forks, %d messages", name, tot.Forks, tot.Messages)
				}
				if tot.Reads != 0 {
					t.Errorf("%s fork-join: %d remote reads, want 0", name, tot.Reads)
				}
			case planner.ModeInPlace:
				if tot.Messages != 0 {
					t.Errorf("%s in-place: %d messages, want 0", name, tot.Messages)
				}
				if tot.Reads == 0 || tot.RoundTrips == 0 {
					t.Errorf("%s in-place: no remote reads", name)
				}
			}
			// The last step's output rows are the result rows (before
			// projection there is no deduplication).
			ex := res.Analysis.Explores[0]
			if got := ex.Steps[len(ex.Steps)-1].RowsOut; int(got) != res.Len() {
				t.Errorf("%s %s: last step made %d rows, result has %d", name, m, got, res.Len())
			}
			js, err := ExplainJSON(res.Plan, res.Analysis, e.Store())
			if err != nil {
				t.Fatal(err)
			}
			var doc ExplainDoc
			if err := json.Unmarshal(js, &doc); err != nil {
				t.Fatalf("EXPLAIN JSON does not parse: %v", err)
			}
			if doc.Rows == nil || *doc.Rows != res.Len() || !strings.Contains(string(js), `"mode"`) {
				t.Errorf("%s: EXPLAIN JSON incomplete:\n%s", name, js)
			}
		}
	}
}

func readQueryText(t testing.TB, text string) *sparql.Query {
	t.Helper()
	q, err := sparql.ParseQuery(text)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestFusedTypeCheck: on L7 the planner fuses ?X rdf:type
// ub:UndergraduateStudent into the expansion binding ?X (Step.TypeCheck);
// EXPLAIN states it on that step, ANALYZE counts the step's rows after the
// check, and the answers match forced fork-join, which keeps the check a
// step of its own. Run twice: the first run may fall back to a separate
// check (no bitmaps yet), the second uses the cached bitmaps.
func TestFusedTypeCheck(t *testing.T) {
	e := newTestEngine(t, lubm1(t), 4)
	q := readQuery(t, "wukong", "q7")
	ref, err := e.Run(context.Background(), q, Options{Mode: planner.ModeForkJoin, Analyze: true})
	if err != nil {
		t.Fatal(err)
	}
	// Rows after each check of the fork-join plan, by pattern.
	checkOut := map[int]uint64{}
	for k, s := range ref.Plan.Explores()[0].Steps {
		if s.TypeCheck != 0 {
			t.Fatalf("fork-join: step %d fused, want no fused step", k+1)
		}
		if s.Kind == planner.StepCheck {
			checkOut[s.Pattern] = res0Steps(ref)[k].RowsOut
		}
	}
	for run := 0; run < 2; run++ {
		for _, m := range []planner.Mode{planner.ModeAuto, planner.ModeInPlace} {
			res, err := e.Run(context.Background(), q, Options{Mode: m, Analyze: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Len() != ref.Len() {
				t.Fatalf("%s: %d rows, fork-join %d", m, res.Len(), ref.Len())
			}
			steps := res.Plan.Explores()[0].Steps
			fused := 0
			for k, s := range steps {
				if s.TypeCheck == 0 {
					continue
				}
				fused++
				// With a check fused too (Step.Intersect), the rows are
				// after that check, the later one of the two.
				last := s.CheckPattern
				if s.Intersect {
					last = s.IntersectPattern
				}
				want, ok := checkOut[last]
				if got := res0Steps(res)[k].RowsOut; !ok || got != want {
					t.Errorf("%s: fused step %d made %d rows, fork-join's check of pattern %d %d (%v)", m, k+1, got, last, want, ok)
				}
			}
			if fused == 0 {
				t.Fatalf("%s: no fused type check in L7's plan", m)
			}
			if txt := Explain(res.Plan, res.Analysis, e.Store()); !strings.Contains(txt, "+ fused check ?X") {
				t.Errorf("%s: EXPLAIN does not state the fused check:\n%s", m, txt)
			}
		}
	}
}

func res0Steps(r *Result) []StepStats { return r.Analysis.Explores[0].Steps }
