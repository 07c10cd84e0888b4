package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wukongd/wukongd/graphstore"
)

// waitCheckpoint waits until no checkpoint runs and one has run.
func waitCheckpoint(t *testing.T, s *Service) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		s.writeMu.Lock()
		done := !s.ckpt.running && !s.ckpt.lastRun.IsZero()
		s.writeMu.Unlock()
		if done {
			return
		}
	}
	t.Fatal("no checkpoint ran within a minute")
}

// flipByte flips a byte in the middle of the file at p.
func flipByte(t *testing.T, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckpointBoundsTheReplay(t *testing.T) {
	// The log alone (the delta never grows past its threshold) starts a
	// checkpoint of the delta once a restart would replay
	// CheckpointLogTriples; a restart then loads it and replays only what
	// came later, and finds every write. The log is kept whole (the
	// fallback), and a damaged newest checkpoint falls back to the one
	// before it, then to the snapshot and the whole log.
	dir := emptySnapshot(t, "", 2)
	const limit, writes = 25, 80 // each write weighs 1 (one triple)
	var written []uint64
	var mu atomic.Int64
	opts := Options{CompactDeltaBytes: -1, CheckpointLogTriples: limit, CompactLogTriples: -1,
		OnCheckpoint: func(v uint64, n int64, took time.Duration) { mu.Add(1); written = append(written, v) }}
	s, err := OpenDurable(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range writes {
		update(t, s, fmt.Sprintf(`INSERT DATA { <http://x/s%d> <http://x/p> %d . <http://x/s%d> a <http://x/C%d> }`, i, i, i, i%3))
		if i%10 == 0 {
			update(t, s, fmt.Sprintf(`DELETE DATA { <http://x/s%d> <http://x/p> %d }`, i/2, i/2))
		}
		if i == 40 {
			waitCheckpoint(t, s)
			time.Sleep(1100 * time.Millisecond) // checkpoints start at most once a second
		}
	}
	waitCheckpoint(t, s)
	if mu.Load() < 2 {
		t.Fatalf("%d checkpoints after %d writes (limit %d)", mu.Load(), writes, limit)
	}
	want, version := state(t, s), s.Version()
	s.Close()

	reopen := func() *Service {
		t.Helper()
		s, err := OpenDurable(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Recover(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := state(t, s); got != want || s.Version() != version {
			t.Fatalf("after a restart: version %d (want %d), state equal %v; checkpoints %+v", s.Version(), version, got == want, s.CheckpointRecovery())
		}
		return s
	}
	s = reopen()
	ck, rec := s.CheckpointRecovery(), s.LogRecovery()
	if ck.Loaded == "" || version-ck.Version >= 2*limit || len(ck.Refused) > 0 {
		t.Fatalf("checkpoint recovery %+v at version %d (limit %d)", ck, version, limit)
	}
	if rec.First != 1 || rec.Last != version {
		t.Fatalf("the log is not kept whole: %+v", rec)
	}
	s.Close()
	vs := s.checkpoints()
	if len(vs) != keptCheckpoints {
		t.Fatalf("checkpoints on disk: %v, want %d", vs, keptCheckpoints)
	}
	// The newest damaged: the one before it.
	flipByte(t, filepath.Join(dir, CheckpointDir, fmt.Sprint(vs[0]), "g-00000", "delta-00000.img"))
	s = reopen()
	if ck := s.CheckpointRecovery(); ck.Version != vs[1] || len(ck.Refused) != 1 {
		t.Fatalf("with the newest damaged: %+v, want version %d", ck, vs[1])
	}
	s.Close()
	// The damaged one is gone (or a whole one of the same version was
	// written since: the restart's replay started one).
	for _, v := range s.checkpoints() {
		if _, err := graphstore.ReadCheckpointManifest(filepath.Join(dir, CheckpointDir, fmt.Sprint(v))); err != nil {
			t.Fatalf("a damaged checkpoint was kept: %v", err)
		}
	}
	// Every checkpoint damaged: the snapshot and the whole log.
	vs = s.checkpoints()
	for _, v := range vs {
		flipByte(t, filepath.Join(dir, CheckpointDir, fmt.Sprint(v), "checkpoint.json"))
	}
	s = reopen()
	if ck := s.CheckpointRecovery(); ck.Loaded != "" || len(ck.Refused) != len(vs) {
		t.Fatalf("with all %d damaged: %+v", len(vs), ck)
	}
	// A write and a checkpoint now replace the damaged ones.
	update(t, s, `INSERT DATA { <http://x/late> <http://x/p> 1 }`)
	// (The restart's replay may have started one that took it already.)
	if v, err := s.Checkpoint(context.Background()); err != nil || (v != version+1 && s.checkpoints()[0] != version+1) {
		t.Fatalf("checkpoint: %d, %v; on disk %v", v, err, s.checkpoints())
	}
	want, version = state(t, s), s.Version()
	s.Close()
	s = reopen()
	if ck := s.CheckpointRecovery(); ck.Version != version || len(ck.Refused) != 0 {
		t.Fatalf("after the new checkpoint: %+v", ck)
	}
	s.Close()
}

func TestCompactionObsoletesCheckpoints(t *testing.T) {
	// A compaction writes a new snapshot: the checkpoints over the old
	// one are gone, the log is retired, a restart serves the compacted
	// snapshot; checkpoints over the new one follow.
	dir := emptySnapshot(t, "", 2)
	opts := Options{CompactDeltaBytes: -1, CheckpointLogTriples: -1, CompactLogTriples: -1}
	s, err := OpenDurable(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 20 {
		update(t, s, fmt.Sprintf(`INSERT DATA { <http://x/s%d> <http://x/p> %d . GRAPH <http://x/g%d> { <http://x/s%d> <http://x/q> <http://x/o> } }`, i, i, i%2, i))
	}
	if v, err := s.Checkpoint(ctx); err != nil || v != 20 {
		t.Fatalf("checkpoint: %d, %v", v, err)
	}
	if v, err := s.Compact(ctx); err != nil || v != 20 {
		t.Fatalf("compact: %d, %v", v, err)
	}
	if vs := s.checkpoints(); len(vs) != 0 {
		t.Fatalf("checkpoints after the compaction: %v", vs)
	}
	for i := 20; i < 30; i++ {
		update(t, s, fmt.Sprintf(`INSERT DATA { <http://x/s%d> <http://x/p> %d } ; DELETE DATA { <http://x/s%d> <http://x/p> %d }`, i, i, i-20, i-20))
	}
	update(t, s, `CLEAR GRAPH <http://x/g0>`)
	if v, err := s.Checkpoint(ctx); err != nil || v != 31 {
		t.Fatalf("checkpoint over the compacted snapshot: %d, %v", v, err)
	}
	update(t, s, `INSERT DATA { <http://x/after> <http://x/p> 1 }`)
	want := state(t, s)
	s.Close()
	s, err = OpenDurable(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if got := state(t, s); got != want || s.Version() != 32 {
		t.Fatalf("after compaction, checkpoint and restart: version %d, state equal %v", s.Version(), got == want)
	}
	if ck, rec := s.CheckpointRecovery(), s.LogRecovery(); ck.Version != 31 || rec.First != 21 {
		t.Fatalf("checkpoint %+v, log %+v", ck, rec)
	}
}
