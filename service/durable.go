package service

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/wal"
	"github.com/wukongd/wukongd/web"
)

// LogDir is the write-ahead log's directory inside a data directory (a
// snapshot written over the directory keeps it: graphstore.KeptDir).
const LogDir = graphstore.KeptDir

// pendingWrite is a write whose generation is built and whose log record
// is on its way to disk. Guarded by writeMu.
type pendingWrite struct {
	g       *generation
	changes []graphstore.GraphChange // what made it (a compaction replays them)
	commit  *wal.Commit
	settled bool  // published or dropped
	err     error // why it was dropped
}

func (p *pendingWrite) settle(err error) {
	p.settled, p.err = true, err
}

// change builds the dataset that edit derives from the newest generation
// (nil: nothing changes) and publishes it. Without a log that is all;
// with one, the change's record (edit's changes, in order) is appended
// and the new generation waits, unpublished, until the record is durable:
// the writes after it build on it meanwhile (group commit), and they are
// published in LSN order. A record that fails drops its generation and
// every one built after it, and their requests fail: nothing of them is
// visible, now or after a restart. On any error nothing changes. edit
// must not close the generation's dataset, and closes any intermediate
// dataset it makes.
func (s *Service) change(ctx context.Context, edit func(g *generation) (*graphstore.Dataset, []graphstore.GraphChange, error)) error {
	if err := s.lockWrites(ctx); err != nil {
		return err
	}
	s.waitCompactionSwitch()
	if err := s.writable(); err != nil {
		s.unlockWrites()
		return err
	}
	base := s.tip
	ds, changes, err, handedOff := s.editWithin(ctx, base, edit)
	if handedOff {
		return err // the edit's goroutine undoes it and unlocks (write_stop.go)
	}
	if err == nil && ds != nil {
		err = ctx.Err()
	}
	if err != nil || ds == nil {
		if ds != nil {
			ds.Discard()
		}
		s.unlockWrites()
		return err
	}
	if v, want := ds.Version(), base.version()+1; v != want {
		ds.Discard()
		s.unlockWrites()
		return fmt.Errorf("BUG: a write on version %d made version %d", want-1, v)
	}
	s.noteChange(ds.Version(), changes)
	if s.log == nil {
		defer s.unlockWrites()
		return s.publish(ds)
	}
	payload, err := wal.AppendChanges(nil, changes)
	if err != nil {
		ds.Discard()
		s.unlockWrites()
		return fmt.Errorf("%w: %v", web.ErrBadRequest, err)
	}
	g, err := s.newGeneration(ds)
	if err != nil {
		ds.Discard()
		s.unlockWrites()
		return err
	}
	p := &pendingWrite{g: g, changes: changes, commit: s.log.Append(g.version(), payload)}
	s.logWeight += changeWeight(changes)
	s.pending = append(s.pending, p)
	s.tip = g
	s.unlockWrites()

	// Not cancellable: once appended, the log decides the outcome.
	cerr := p.commit.Wait()
	s.writeMu.Lock()
	defer s.unlockWrites()
	if !p.settled {
		if cerr == nil {
			s.publishUpTo(p)
		} else {
			s.dropFailed()
		}
	}
	return p.err
}

// lockWrites takes writeMu for a write request, or gives up when ctx ends
// first: a write queued behind a long one (an 8 MB INSERT DATA holds the
// lock for seconds) fails at its deadline instead of when the lock comes
// free. A waiter that gave up leaves a goroutine that takes the lock
// when it comes and releases it at once.
func (s *Service) lockWrites(ctx context.Context) error {
	if s.writeMu.TryLock() {
		return nil
	}
	got := make(chan struct{})
	go func() {
		s.writeMu.Lock()
		close(got)
	}()
	select {
	case <-got:
		return nil
	case <-ctx.Done():
		go func() {
			<-got
			s.writeMu.Unlock()
		}()
		return ctx.Err()
	}
}

// writable reports why the service takes no writes now (nil: it does).
// The caller holds writeMu.
func (s *Service) writable() error {
	if s.closed.Load() {
		return fmt.Errorf("%w: the service is closed", web.ErrNotReady)
	}
	if p := s.recovery.Load(); p != nil {
		return p.err()
	}
	if s.log != nil {
		if err := s.log.Err(); err != nil {
			return fmt.Errorf("%w: writes are off: %v", web.ErrNotReady, err)
		}
	}
	return nil
}

// publishUpTo publishes the pending writes up to p (their records are
// durable: p's is, and records complete in order). Only the newest of
// them is served: the earlier ones were superseded before any reader
// could see them (each request is still its own version and its own
// record; readers see the dataset between requests, just not every such
// state), so they never start an engine.
func (s *Service) publishUpTo(p *pendingWrite) {
	var last *pendingWrite
	for len(s.pending) > 0 && s.pending[0].g.version() <= p.g.version() {
		q := s.pending[0]
		s.pending = s.pending[1:]
		q.settle(nil)
		if last != nil {
			s.superseded = append(s.superseded, last.g)
		}
		last = q
	}
	if last != nil {
		s.swap(last.g)
	}
}

// dropFailed drops the pending writes from the first whose record failed
// on: their records are not durable and never will be (the log fails
// every record after a failed one).
func (s *Service) dropFailed() {
	i := slices.IndexFunc(s.pending, func(q *pendingWrite) bool {
		select {
		case <-q.commit.Done():
			return q.commit.Wait() != nil
		default:
			return false
		}
	})
	if i < 0 {
		return
	}
	for j := len(s.pending) - 1; j >= i; j-- { // the newest first: each is built on the one before
		q := s.pending[j]
		err := q.commit.Wait()
		q.settle(fmt.Errorf("%w: the change could not be made durable and was not applied: %v", web.ErrNotReady, err))
		q.g.discard()
		s.logWeight -= changeWeight(q.changes)
	}
	s.pending = s.pending[:i]
	s.tip = s.cur.Load()
	if i > 0 {
		s.tip = s.pending[i-1].g
	}
	s.forgetAfter(s.tip.version())
}

// replayBatchTriples is how many triples of log records recovery applies
// in one step.
const replayBatchTriples = 1 << 18

// recoveryProgress is how far the replay of the log is.
type recoveryProgress struct {
	total, done atomic.Uint64
}

func (p *recoveryProgress) err() error {
	return fmt.Errorf("%w: recovering: %d of %d log records replayed", web.ErrNotReady, p.done.Load(), p.total.Load())
}

// OpenDurable serves the snapshot in the data directory dir with durable
// writes: it takes the lock of the write-ahead log dir/wal (another
// process holding it is an error wrapping wal.ErrLocked), maps the
// snapshot, and returns a service that is not ready until Recover has
// replayed the log.
func OpenDurable(dir string, opts Options) (*Service, error) {
	if err := graphstore.RestoreKept(dir); err != nil {
		return nil, fmt.Errorf("cannot open data directory %s: %w", dir, err)
	}
	log, err := wal.Open(filepath.Join(dir, LogDir), wal.Options{})
	if err != nil {
		return nil, fmt.Errorf("cannot open data directory %s: %w", dir, err)
	}
	s, err := Open(dir, opts)
	if err != nil {
		log.Close()
		return nil, err
	}
	s.log, s.dataDir = log, dir
	if err := s.markSnapshot(s.cur.Load().ds); err != nil {
		s.Close()
		return nil, fmt.Errorf("cannot open data directory %s: %w", dir, err)
	}
	p := &recoveryProgress{}
	if rec, v := log.Recovery(), s.cur.Load().version(); rec.Last > v {
		p.total.Store(rec.Last - v)
	}
	s.recovery.Store(p)
	return s, nil
}

// LogRecovery returns what opening the write-ahead log found (what it
// cut off, if anything); the zero Recovery without a log.
func (s *Service) LogRecovery() wal.Recovery {
	if s.log == nil {
		return wal.Recovery{}
	}
	return s.log.Recovery()
}

// Recover replays the write-ahead log of a service from OpenDurable onto
// its snapshot, one Apply per record (record v makes version v), and
// makes the service ready. A record that does not decode or apply is an
// error: the service stays not ready (close it).
func (s *Service) Recover(ctx context.Context) error {
	p := s.recovery.Load()
	if p == nil {
		return nil
	}
	s.writeMu.Lock()
	defer s.unlockWrites()
	g := s.cur.Load()
	from := g.version()
	rec := s.log.Recovery()
	if rec.Records > 0 && rec.First > from+1 {
		return fmt.Errorf("cannot recover %s: the snapshot is at version %d but the log starts at record %d (records %d..%d are missing)",
			s.log.Dir(), from, rec.First, from+1, rec.First-1)
	}
	ds := g.ds
	// The newest whole checkpoint over the snapshot, if any: only the
	// log after it is replayed.
	if g.ds.Inferred() == nil && s.ckpt.snapTag != 0 {
		if c := s.loadCheckpoint(g.ds); c != nil {
			ds, from = c, c.Version()
			if rec.Last > from {
				p.total.Store(rec.Last - from)
			} else {
				p.total.Store(0)
			}
		}
	}
	// Records are applied in batches (graphstore.Dataset.ApplyRecords:
	// the versions in between are never built, no reader sees them), up
	// to replayBatchTriples triples; with reasoning one at a time (the
	// reasoner maintains its layer per change).
	var batch [][]graphstore.GraphChange
	var batchTriples int
	var lastLSN uint64
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var nds *graphstore.Dataset
		var err error
		if len(batch) == 1 || ds.Inferred() != nil {
			for _, cs := range batch {
				if nds, err = s.applyReasoned(ctx, ds, cs); err != nil { // Apply, and the reasoner's maintenance
					return fmt.Errorf("cannot replay log record %d: %w", lastLSN-uint64(len(batch))+1, err)
				}
				if ds != g.ds {
					ds.Close()
				}
				ds = nds
			}
		} else {
			if nds, err = ds.ApplyRecords(ctx, batch); err != nil {
				return fmt.Errorf("cannot replay log records %d..%d: %w", lastLSN-uint64(len(batch))+1, lastLSN, err)
			}
			if ds != g.ds {
				ds.Close() // an intermediate version no reader saw, superseded
			}
			ds = nds
		}
		if ds.Version() != lastLSN {
			return fmt.Errorf("BUG: log record %d replayed as version %d", lastLSN, ds.Version())
		}
		p.done.Add(uint64(len(batch)))
		batch, batchTriples = batch[:0], 0
		return nil
	}
	err := s.log.Replay(from, func(lsn uint64, payload []byte) error {
		cs, err := wal.DecodeChanges(payload)
		if err != nil {
			return fmt.Errorf("log record %d: %w", lsn, err)
		}
		batch, lastLSN = append(batch, cs), lsn
		w := changeWeight(cs)
		batchTriples += int(w)
		s.logWeight += w
		if batchTriples >= replayBatchTriples || ds.Inferred() != nil {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		if ds != g.ds {
			ds.Close()
		}
		return fmt.Errorf("cannot recover %s: %w", s.log.Dir(), err)
	}
	if ds != g.ds {
		if err := s.publish(ds); err != nil {
			return fmt.Errorf("cannot recover %s: %w", s.log.Dir(), err)
		}
	}
	if rec.Last < from {
		// The snapshot is ahead of the log: start the log after it.
		if err := s.log.Retire(from); err != nil {
			return fmt.Errorf("cannot recover %s: %w", s.log.Dir(), err)
		}
	}
	if next, v := s.log.NextLSN(), s.cur.Load().version(); next != v+1 {
		return fmt.Errorf("BUG: after recovery the log's next record is %d, the dataset's version %d", next, v)
	}
	s.recovery.Store(nil)
	s.maybeCompact() // a long log: checkpoint it now
	return nil
}

// changeWeight is what a record of changes costs a replay, roughly: its
// triples, and one for a change without any (a CLEAR, a DROP).
func changeWeight(changes []graphstore.GraphChange) int64 {
	var w int64
	for _, c := range changes {
		w += max(1, int64(c.InsertLen()+len(c.Delete)))
	}
	return w
}

// RetireLog drops the log records up to version, which a snapshot now
// holds (after compaction).
func (s *Service) RetireLog(version uint64) error {
	if s.log == nil {
		return nil
	}
	return s.log.Retire(version)
}

// Version returns the version of the served dataset: the number of
// changes since the snapshot (the LSN of the last one published).
func (s *Service) Version() uint64 {
	g, err := s.acquire()
	if err != nil {
		return 0
	}
	defer g.release()
	return g.version()
}
