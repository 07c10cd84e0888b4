package service

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/web"
)

// Compaction (DESIGN.md §9): the served version's base and delta are
// merged into new tables (graphstore.Dataset.Compact) in the background
// while queries and writes go on against the old tables; with a data
// directory the result is written as its snapshot (keeping the log), and
// the log records it holds are retired. Then, for a moment, writes wait:
// the versions committed meanwhile are replayed onto the compacted
// dataset (from the changes the service kept of them) and it becomes the
// served one.

// compactState is what a running compaction needs; guarded by writeMu.
type compactState struct {
	running bool
	from    uint64         // the version being compacted
	weight  int64          // the log weight up to it (Service.logWeight)
	since   []sinceChange  // the changes made after it, in version order
	hold    bool           // writers wait (the switch)
	done    chan struct{}  // closed when hold ends
	last    compactOutcome // of the last compaction
	lastRun time.Time
}

type sinceChange struct {
	version uint64
	changes []graphstore.GraphChange
}

type compactOutcome struct {
	version uint64
	err     error
}

// DefaultCompactDeltaBytes is the delta size from which a write starts a
// background compaction (Options.CompactDeltaBytes 0).
const DefaultCompactDeltaBytes = 256 << 20

// Compact implements web.Compactor: it compacts the served version and
// switches to the result, and returns the version compacted. It waits for
// a compaction already running instead of starting a second.
func (s *Service) Compact(ctx context.Context) (uint64, error) {
	s.writeMu.Lock()
	if s.compact.running {
		s.unlockWrites()
		for {
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
			s.writeMu.Lock()
			running, out := s.compact.running, s.compact.last
			s.unlockWrites()
			if !running {
				return out.version, out.err
			}
		}
	}
	if err := s.writable(); err != nil {
		s.unlockWrites()
		return 0, err
	}
	// Claimed: a second caller waits for this one. A checkpoint running
	// finishes first (bgMu).
	s.compact.running, s.compact.since = true, nil
	s.unlockWrites()
	if err := s.lockBackground(ctx); err != nil {
		s.writeMu.Lock()
		s.compact.running = false
		s.compact.last, s.compact.lastRun = compactOutcome{0, err}, time.Now()
		s.unlockWrites()
		return 0, err
	}
	defer s.bgMu.Unlock()
	s.writeMu.Lock()
	// With a log: let the pending writes settle (new ones wait: a few
	// milliseconds of group commit) and seal the log's segment, so that
	// the version compacted ends a segment and retiring up to it removes
	// the whole log it covers, even while writes go on meanwhile.
	var sealErr error
	if s.log != nil && s.dataDir != "" {
		s.holdWrites(false)
		sealErr = s.log.Seal()
		s.releaseHold()
	}
	g := s.cur.Load()
	err := s.writable()
	if err == nil && sealErr != nil {
		err = fmt.Errorf("cannot seal the log: %w", sealErr)
	}
	if err == nil && !g.tryRef() {
		err = fmt.Errorf("%w: the service is closing", web.ErrNotReady)
	}
	if err != nil {
		s.compact.running = false
		s.compact.last, s.compact.lastRun = compactOutcome{0, err}, time.Now()
		s.unlockWrites()
		return 0, err
	}
	s.compact.from, s.compact.since = g.version(), nil
	s.compact.weight = s.logWeight
	// Pending (unpublished) writes after the served version are replayed
	// too, once they are published; their changes were not recorded yet.
	for _, p := range s.pending {
		s.compact.since = append(s.compact.since, sinceChange{version: p.g.version(), changes: p.changes})
		s.compact.weight -= changeWeight(p.changes)
	}
	s.unlockWrites()
	v, err := s.runCompaction(ctx, g)
	g.release()
	s.writeMu.Lock()
	s.compact.running, s.compact.since = false, nil
	s.compact.last, s.compact.lastRun = compactOutcome{v, err}, time.Now()
	s.unlockWrites()
	return v, err
}

// runCompaction compacts g's dataset and switches to it.
func (s *Service) runCompaction(ctx context.Context, g *generation) (uint64, error) {
	v := g.version()
	c, err := g.ds.Compact(ctx)
	if err != nil {
		return 0, fmt.Errorf("cannot compact version %d: %w", v, err)
	}
	if s.dataDir != "" {
		if err := graphstore.WriteDataset(s.dataDir, c); err != nil {
			c.Close()
			return 0, fmt.Errorf("cannot write the compacted snapshot of version %d: %w", v, err)
		}
		if err := s.RetireLog(v); err != nil {
			c.Close()
			return 0, fmt.Errorf("cannot retire the log up to version %d: %w", v, err)
		}
		s.writeMu.Lock()
		s.snapWeight = s.compact.weight // what a restart replays now starts after v
		// The checkpoints were over the old snapshot (the new one was
		// written without them): the new one's graphs are c's.
		err := s.markSnapshot(c)
		s.unlockWrites()
		os.RemoveAll(s.ckptRoot())
		if err != nil {
			c.Close()
			return 0, fmt.Errorf("compacted version %d: %w", v, err)
		}
	}
	if s.opts.OnCompacted != nil {
		s.opts.OnCompacted(v)
	}
	// The switch: stop new writes, let the pending ones settle, replay
	// what was committed since v onto c, serve it.
	s.writeMu.Lock()
	s.holdWrites(false)
	defer func() {
		s.releaseHold()
		s.unlockWrites()
	}()
	if s.closed.Load() {
		c.Close()
		return v, fmt.Errorf("%w: the service closed during compaction", web.ErrNotReady)
	}
	cur := s.cur.Load().version()
	ds := c
	for _, sc := range s.compact.since {
		if sc.version <= v || sc.version > cur {
			continue
		}
		nds, err := s.applyReasoned(context.Background(), ds, sc.changes) // Apply, and the reasoner's maintenance
		if err != nil {
			ds.Close()
			return v, fmt.Errorf("cannot carry version %d over to the compacted dataset: %w", sc.version, err)
		}
		if nds.Version() != sc.version {
			nds.Discard()
			ds.Close()
			return v, fmt.Errorf("BUG: version %d carried over as %d", sc.version, nds.Version())
		}
		ds.Close() // superseded: nds holds what it shares
		ds = nds
	}
	if ds.Version() != cur {
		ds.Close()
		return v, fmt.Errorf("BUG: compaction of version %d reached version %d, the served one is %d", v, ds.Version(), cur)
	}
	if err := s.publish(ds); err != nil {
		return v, err
	}
	return v, nil
}

// waitCompactionSwitch waits while a compaction switches datasets (the
// caller holds writeMu and gets it back).
func (s *Service) waitCompactionSwitch() {
	for s.compact.hold {
		done := s.compact.done
		s.unlockWrites()
		<-done
		s.writeMu.Lock()
	}
}

// noteChange records a write's changes while a compaction runs (the
// caller holds writeMu).
func (s *Service) noteChange(version uint64, changes []graphstore.GraphChange) {
	if s.compact.running {
		s.compact.since = append(s.compact.since, sinceChange{version: version, changes: changes})
	}
}

// forgetAfter drops the recorded changes of versions after v (writes that
// were dropped; their versions are built again). The caller holds writeMu.
func (s *Service) forgetAfter(v uint64) {
	i := len(s.compact.since)
	for i > 0 && s.compact.since[i-1].version > v {
		i--
	}
	s.compact.since = s.compact.since[:i]
}

// DefaultCheckpointLogTriples is the log weight (about the triples of the
// records after the snapshot) from which a write starts a background
// compaction (Options.CheckpointLogTriples 0): a restart replays at most
// about this much, plus what is written while the compaction runs. A
// replay costs about 10 µs a triple (LUBM-40, quiet), so this keeps a
// restart near 1.5 s.
const DefaultCheckpointLogTriples = 150_000

// maybeCompact starts a background compaction when the served delta has
// grown past Options.CompactDeltaBytes, or the log a restart would replay
// past Options.CheckpointLogTriples (the caller holds writeMu).
func (s *Service) maybeCompact() {
	if s.compact.running || time.Since(s.compact.lastRun) < time.Second {
		return
	}
	if s.closed.Load() {
		return
	}
	start := func(job func(context.Context)) {
		s.background.Add(1)
		go func() {
			defer s.background.Done()
			job(s.bgCtx)
		}()
	}
	switch {
	case s.deltaTooBig() || s.logSinceSnapshotTooLong():
		start(func(ctx context.Context) { s.Compact(ctx) })
	case s.logTooLong():
		if s.ckpt.running || time.Since(s.ckpt.lastRun) < time.Second {
			return
		}
		if !s.canCheckpoint() {
			start(func(ctx context.Context) { s.Compact(ctx) }) // reasoning: the reasoner's state is rebuilt from a snapshot
			return
		}
		s.ckpt.running = true // claimed (checkpoint sets it again)
		start(func(ctx context.Context) {
			if s.bgMu.TryLock() {
				defer s.bgMu.Unlock()
				s.checkpoint(ctx)
				return
			}
			s.writeMu.Lock()
			s.ckpt.running = false
			s.unlockWrites()
		})
	}
}

func (s *Service) deltaTooBig() bool {
	limit := s.opts.CompactDeltaBytes
	if limit < 0 {
		return false
	}
	if limit == 0 {
		limit = DefaultCompactDeltaBytes
	}
	return s.cur.Load().ds.DeltaBytes() >= uint64(limit)
}

// logTooLong reports whether a restart would replay more of the log than
// Options.CheckpointLogTriples (the caller holds writeMu).
func (s *Service) logTooLong() bool {
	limit := s.opts.CheckpointLogTriples
	if s.log == nil || s.dataDir == "" || limit < 0 {
		return false
	}
	if limit == 0 {
		limit = DefaultCheckpointLogTriples
	}
	return s.replayWeight() >= limit
}

// logSinceSnapshotTooLong reports whether the log since the snapshot has
// outgrown Options.CompactLogTriples (the caller holds writeMu).
func (s *Service) logSinceSnapshotTooLong() bool {
	limit := s.opts.CompactLogTriples
	if s.log == nil || s.dataDir == "" || limit < 0 {
		return false
	}
	if limit == 0 {
		limit = DefaultCompactLogTriples
	}
	return s.logWeight-s.snapWeight >= limit
}
