package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/service"
)

// TestCrashDuringCompaction: kill -9 while a background compaction writes
// its new snapshot (its temporary directory data.tmp-* exists) with
// checkpoints of the delta present, under the small-write storm. After
// every restart every acknowledged write is there and nothing is there in
// part (checkCrashState). The test fails unless at least one kill came
// while a compaction's snapshot was being written (its temporary
// directory still there after the kill) with a checkpoint present; a
// round that sees no such compaction within 20 s kills anyway.
// WUKONGD_CRASH_COMPACT_KILLS sets the kills (default 3).
func TestCrashDuringCompaction(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and kills servers")
	}
	kills := envInt(t, "WUKONGD_CRASH_COMPACT_KILLS", 3)
	// Checkpoints every 200 triples, a compaction every 1,000: each
	// compaction starts with checkpoints there.
	t.Setenv("WUKONGD_CRASH_CHECKPOINT", "200")
	t.Setenv("WUKONGD_CRASH_COMPACT", "1000")
	cr := newCrashRounds(t, 8)
	rng := rand.New(rand.NewPCG(4, uint64(time.Now().UnixNano())))
	seen := map[string]bool{} // temporary snapshot directories already counted
	newTmp := func() []string {
		m, _ := filepath.Glob(cr.dir + ".tmp-*")
		var fresh []string
		for _, p := range m {
			if !seen[p] {
				fresh = append(fresh, p)
			}
		}
		return fresh
	}
	checkpoints := func() int {
		ents, _ := os.ReadDir(filepath.Join(cr.dir, service.CheckpointDir))
		n := 0
		for _, e := range ents {
			if !strings.Contains(e.Name(), ".tmp-") {
				n++
			}
		}
		return n
	}
	landed, missed := 0, 0
	cr.during = func(round int, _ string) func() {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			tmp := newTmp()
			if len(tmp) == 0 {
				continue
			}
			n := checkpoints()
			if n == 0 {
				for _, p := range tmp {
					seen[p] = true // a compaction with no checkpoint there: wait for the next
				}
				continue
			}
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
			return func() { // after the kill
				for _, p := range tmp {
					seen[p] = true
				}
				if _, err := os.Stat(tmp[0]); err == nil {
					landed++
					t.Logf("round %d: killed while a compaction wrote %s, %d checkpoints present", round, filepath.Base(tmp[0]), n)
				} else {
					missed++ // the compaction published before the kill
				}
			}
		}
		// Compactions can follow each other with no checkpoint written
		// between them (seen at load 20-27): this kill counts for
		// nothing, the next round tries again.
		t.Logf("round %d: no compaction with a checkpoint present began within 20 s: killed anyway", round)
		return nil
	}
	cr.run(t, kills)
	t.Logf("%d kills: %d while a compaction wrote its snapshot with checkpoints present, %d just after one published; %d acknowledged inserts, %d acknowledged deletes",
		kills, landed, missed, cr.ledger.ackedCount, len(cr.ledger.delAcked))
	if landed == 0 {
		t.Fatal("no kill came while a compaction was writing: the test tested nothing")
	}
}
