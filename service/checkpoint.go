package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/web"
)

// Checkpoints of the delta alone (DESIGN.md §9, graphstore
// dataset_checkpoint.go): with a data directory, when the log a restart
// would replay grows past Options.CheckpointLogTriples, the served
// version's delta, dictionary overlay and statistics are written in the
// background to DIR/ckpt/<version>; a restart maps the snapshot, loads
// the newest checkpoint that is whole and over that snapshot, and replays
// only the log after it. A damaged checkpoint falls back to the one
// before it, then to the snapshot and the whole log — which is why a
// checkpoint never retires the log: the records since the snapshot stay
// until a compaction (a new snapshot) holds them, which
// Options.CompactLogTriples bounds. Checkpoints and compactions run one
// at a time (bgMu); a compaction makes every checkpoint obsolete.

// CheckpointDir is the directory of the checkpoints inside a data
// directory (a snapshot written over the data directory leaves it
// behind: the checkpoints were over the old snapshot).
const CheckpointDir = "ckpt"

// keptCheckpoints is how many checkpoints stay on disk: the newest, and
// the one a damaged newest falls back to.
const keptCheckpoints = 2

// DefaultCompactLogTriples is the log weight since the snapshot from
// which a write starts a compaction (Options.CompactLogTriples 0).
const DefaultCompactLogTriples = 16 * DefaultCheckpointLogTriples

// ckptState is the checkpoints' state, guarded by writeMu.
type ckptState struct {
	running bool
	version uint64 // of the newest checkpoint on disk (0: none)
	weight  int64  // Service.logWeight up to it
	lastRun time.Time
	last    error // of the last run
	// snapTag and snapVersion name the data directory's snapshot: the
	// one checkpoints are over (0 tag: not known, no checkpoints).
	snapTag     uint64
	snapVersion uint64
	recovery    CheckpointRecovery
}

// CheckpointRecovery says what a restart did with the checkpoints.
type CheckpointRecovery struct {
	Loaded  string   // the checkpoint loaded ("" none)
	Version uint64   // its version
	Refused []string // why newer ones were not (damaged, over another snapshot)
	Elapsed time.Duration
}

// CheckpointRecovery returns what Recover did with the checkpoints.
func (s *Service) CheckpointRecovery() CheckpointRecovery {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.ckpt.recovery
}

// markSnapshot records the data directory's snapshot, whose graphs ds
// holds as written (no delta): the caller holds writeMu or the service
// is not serving yet.
func (s *Service) markSnapshot(ds *graphstore.Dataset) error {
	tag, err := graphstore.SnapshotTag(s.dataDir)
	if err != nil {
		return err
	}
	if err := ds.MarkSnapshot(tag); err != nil {
		return err
	}
	s.ckpt.snapTag, s.ckpt.snapVersion = tag, ds.Version()
	s.ckpt.version, s.ckpt.weight = 0, 0
	return nil
}

func (s *Service) ckptRoot() string { return filepath.Join(s.dataDir, CheckpointDir) }

// checkpoints returns the versions of the checkpoint directories, newest
// first (not checked).
func (s *Service) checkpoints() []uint64 {
	ents, _ := os.ReadDir(s.ckptRoot())
	var vs []uint64
	for _, e := range ents {
		if v, ok := graphstore.CheckpointVersionOf(e.Name()); ok && e.IsDir() {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	slices.Reverse(vs)
	return vs
}

// canCheckpoint reports whether the served dataset can be checkpointed
// (the caller holds writeMu): a data directory, a known snapshot, no
// inferred layer (a reasoned dataset is bounded by compactions).
func (s *Service) canCheckpoint() bool {
	return s.log != nil && s.dataDir != "" && s.ckpt.snapTag != 0 && s.cur.Load().ds.Inferred() == nil
}

// replayWeight is the weight of the log a restart would replay (after the
// newest checkpoint or the snapshot); the caller holds writeMu.
func (s *Service) replayWeight() int64 {
	return s.logWeight - max(s.snapWeight, s.ckpt.weight)
}

// Checkpoint writes a checkpoint of the served version now (and waits
// for one running). It returns the version checkpointed; 0 with no error
// if there is nothing to checkpoint (no data directory, a reasoned
// dataset, nothing since the last checkpoint or snapshot).
func (s *Service) Checkpoint(ctx context.Context) (uint64, error) {
	if err := s.lockBackground(ctx); err != nil {
		return 0, err
	}
	defer s.bgMu.Unlock()
	return s.checkpoint(ctx)
}

// lockBackground takes bgMu (one compaction or checkpoint at a time), or
// gives up when ctx ends.
func (s *Service) lockBackground(ctx context.Context) error {
	for !s.bgMu.TryLock() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// checkpoint is Checkpoint with bgMu held.
func (s *Service) checkpoint(ctx context.Context) (uint64, error) {
	s.writeMu.Lock()
	err := s.writable()
	if err != nil || !s.canCheckpoint() {
		s.ckpt.running = false
		s.unlockWrites()
		return 0, err
	}
	s.ckpt.running = true
	c, g, weight, err := s.takeCheckpoint(false)
	s.unlockWrites()
	var v uint64
	if err == nil && c != nil {
		v = c.Version()
		err = s.writeCheckpoint(ctx, c)
		g.release()
	}
	s.writeMu.Lock()
	s.ckpt.running, s.ckpt.lastRun, s.ckpt.last = false, time.Now(), err
	if err == nil && v > 0 {
		s.ckpt.version, s.ckpt.weight = v, weight
	}
	s.unlockWrites()
	if err != nil {
		return 0, err
	}
	return v, nil
}

// takeCheckpoint takes the served version for a checkpoint (the caller
// holds writeMu and gets it back): new writes wait while the pending
// ones settle, so that the served version is the newest and the writer's
// counts are its own; then the counts are copied, which is all a write
// waits for. It returns a nil Checkpoint if there is nothing new to
// write. The generation returned holds a reference (release it).
func (s *Service) takeCheckpoint(closing bool) (*graphstore.Checkpoint, *generation, int64, error) {
	s.holdWrites(closing)
	defer s.releaseHold()
	if s.closed.Load() && !closing {
		return nil, nil, 0, fmt.Errorf("%w: the service closed", web.ErrNotReady)
	}
	g := s.cur.Load()
	if g.version() <= max(s.ckpt.version, s.ckpt.snapVersion) || !g.tryRef() {
		return nil, nil, 0, nil
	}
	c, err := g.ds.Checkpoint(s.ckpt.snapTag, s.ckpt.snapVersion)
	if err != nil {
		g.release()
		if errors.Is(err, graphstore.ErrNoCheckpoint) {
			return nil, nil, 0, nil
		}
		return nil, nil, 0, err
	}
	c.LogWeight = s.logWeight - s.snapWeight // a restart from it knows the log since the snapshot
	return c, g, s.logWeight, nil
}

// writeCheckpoint writes c to the checkpoint directory and prunes the
// older checkpoints (bgMu held: no compaction runs).
func (s *Service) writeCheckpoint(ctx context.Context, c *graphstore.Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Join(s.ckptRoot(), fmt.Sprint(c.Version()))
	os.RemoveAll(dir) // a damaged one of the same version (refused at the last start)
	start := time.Now()
	n, err := c.Write(dir)
	if err != nil {
		return err
	}
	if s.opts.OnCheckpoint != nil {
		s.opts.OnCheckpoint(c.Version(), n, time.Since(start))
	}
	s.pruneCheckpoints(c.Version(), c.SnapVersion())
	return nil
}

// pruneCheckpoints removes the checkpoints older than the keptCheckpoints
// newest up to newest, those newer than it (refused at the last start),
// and temporary directories (a write a crash interrupted).
func (s *Service) pruneCheckpoints(newest, snapVersion uint64) {
	root := s.ckptRoot()
	ents, _ := os.ReadDir(root)
	kept := 0
	for _, v := range s.checkpoints() {
		if v <= newest && kept < keptCheckpoints && v > snapVersion {
			kept++
			continue
		}
		os.RemoveAll(filepath.Join(root, fmt.Sprint(v)))
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
	if d, err := os.Open(root); err == nil {
		d.Sync()
		d.Close()
	}
}

// holdWrites stops new writes (they wait in waitCompactionSwitch) and
// waits until the pending ones are published or dropped (the caller
// holds writeMu and gets it back). Unless closing, it stops waiting once
// the service is closed.
func (s *Service) holdWrites(closing bool) {
	s.compact.hold, s.compact.done = true, make(chan struct{})
	for len(s.pending) > 0 {
		p := s.pending[len(s.pending)-1]
		s.unlockWrites()
		p.commit.Wait()
		for { // its goroutine publishes or drops it under writeMu
			s.writeMu.Lock()
			if p.settled || (!closing && s.closed.Load()) {
				break
			}
			s.unlockWrites()
			time.Sleep(100 * time.Microsecond)
		}
		if !closing && s.closed.Load() {
			return
		}
	}
}

// releaseHold lets writes go on after holdWrites (writeMu held).
func (s *Service) releaseHold() {
	s.compact.hold = false
	close(s.compact.done)
}

// loadCheckpoint replaces base, the snapshot's dataset, by the newest
// checkpoint over it that opens (Recover, under writeMu): nil if none
// does. Checkpoints that do not are noted in the recovery report.
func (s *Service) loadCheckpoint(base *graphstore.Dataset) *graphstore.Dataset {
	start := time.Now()
	rec := &s.ckpt.recovery
	defer func() { rec.Elapsed = time.Since(start) }()
	// Temporaries of checkpoint writes a crash cut short.
	if m, _ := filepath.Glob(filepath.Join(s.ckptRoot(), "*.tmp-*")); len(m) > 0 {
		for _, p := range m {
			os.RemoveAll(p)
		}
	}
	for _, v := range s.checkpoints() {
		if v <= s.ckpt.snapVersion {
			continue // obsolete: the snapshot holds it
		}
		dir := filepath.Join(s.ckptRoot(), fmt.Sprint(v))
		ds, err := graphstore.OpenCheckpoint(dir, base, s.ckpt.snapTag)
		if err == nil && ds.Version() != v {
			ds.Close()
			err = fmt.Errorf("checkpoint %s holds version %d", dir, ds.Version())
		}
		if err != nil {
			rec.Refused = append(rec.Refused, err.Error())
			if errors.Is(err, graphstore.ErrBadCheckpoint) {
				// Damaged or stale: not kept (the pruning after the next
				// checkpoint would keep it in place of a whole one).
				os.RemoveAll(dir)
			}
			continue
		}
		rec.Loaded, rec.Version = dir, v
		s.ckpt.version = v
		if m, err := graphstore.ReadCheckpointManifest(dir); err == nil {
			// The log up to v weighs this (the snapshot holds none of it).
			s.logWeight, s.snapWeight, s.ckpt.weight = m.LogWeight, 0, m.LogWeight
		}
		return ds
	}
	return nil
}

// shutdownCheckpointTriples is the replay weight from which Close writes
// a checkpoint (below it the replay costs less than the write).
const shutdownCheckpointTriples = 1000

// shutdownCheckpoint writes a checkpoint of the served version on Close
// if a restart would replay much of the log (the caller holds writeMu;
// the service is closed, the background jobs are done).
func (s *Service) shutdownCheckpoint() {
	if s.log == nil || s.recovery.Load() != nil || s.log.Err() != nil || !s.canCheckpoint() ||
		s.replayWeight() < shutdownCheckpointTriples || !s.bgMu.TryLock() {
		return
	}
	defer s.bgMu.Unlock()
	c, g, weight, err := s.takeCheckpoint(true)
	if err != nil || c == nil {
		return
	}
	err = s.writeCheckpoint(context.Background(), c)
	g.release()
	s.ckpt.lastRun, s.ckpt.last = time.Now(), err
	if err == nil {
		s.ckpt.version, s.ckpt.weight = c.Version(), weight
	}
}
