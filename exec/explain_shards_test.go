package exec

import (
	"context"
	"testing"

	"github.com/wukongd/wukongd/planner"
)

// TestAnalyzePerShard checks the per-shard measurements of EXPLAIN
// ANALYZE: the last step's rows over the shards are the result's rows,
// in-place steps run on the coordinator only, and a fork-join query's
// steps ran on several shards (the coordinator alone would mean they were
// not attributed to the shard that ran them).
func TestAnalyzePerShard(t *testing.T) {
	e := newTestEngine(t, lubm1(t), 4)
	for _, name := range []string{"q1", "q2", "q7"} {
		q := readQuery(t, "wukong", name)
		for _, m := range modes {
			res, err := e.Run(context.Background(), q, Options{Mode: m, Analyze: true})
			if err != nil {
				t.Fatal(err)
			}
			busy := 0 // shards with rows in some step
			for _, ea := range res.Analysis.Explores {
				if len(ea.Shards) != len(ea.Steps) {
					t.Fatalf("%s %s: %d steps, %d per-shard rows", name, m, len(ea.Steps), len(ea.Shards))
				}
				seen := make([]bool, 4)
				for k, st := range ea.Steps {
					if len(ea.Shards[k]) != 4 {
						t.Fatalf("%s %s step %d: %d shards", name, m, k, len(ea.Shards[k]))
					}
					var rows uint64
					for sh := range ea.Shards[k] {
						rows += ea.Shards[k][sh].RowsOut
						if ea.Shards[k][sh].RowsOut > 0 {
							seen[sh] = true
						}
					}
					if k == len(ea.Steps)-1 && len(res.Analysis.Explores) == 1 && int(rows) != res.Len() {
						t.Errorf("%s %s: the last step made %d rows over the shards, the result has %d (step total %d)", name, m, rows, res.Len(), st.RowsOut)
					}
				}
				for _, s := range seen {
					if s {
						busy++
					}
				}
			}
			if m == planner.ModeForkJoin && busy < 2 {
				t.Errorf("%s fork-join: rows on %d shard(s)", name, busy)
			}
			if m == planner.ModeInPlace && busy != len(res.Analysis.Explores) {
				t.Errorf("%s in-place: rows on %d shards for %d explorations", name, busy, len(res.Analysis.Explores))
			}
		}
	}
}
