package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

var (
	// ErrLocked: another process owns the log (its LOCK is held).
	ErrLocked = errors.New("the write-ahead log is in use by another process")
	// ErrFailed: an fdatasync (or the clean-up after a failed write) failed;
	// what is on disk is unknown, and the log takes no more records until
	// the process restarts and recovers.
	ErrFailed = errors.New("the write-ahead log failed and takes no more writes until the server restarts")
	// ErrClosed: the log is closed.
	ErrClosed = errors.New("the write-ahead log is closed")
	// ErrSequence: a record's LSN does not follow the last one (it was
	// built on a record that failed).
	ErrSequence = errors.New("record out of sequence")
	// ErrTooLarge: a payload above MaxRecord.
	ErrTooLarge = errors.New("record too large")
)

// DefaultSegmentSize is the size after which the log starts a new segment.
const DefaultSegmentSize = 64 << 20

// Options configure a Log.
type Options struct {
	// SegmentSize: a batch that finds the current segment at this size or
	// more starts a new one (default DefaultSegmentSize).
	SegmentSize int64

	// wrapFile, set by tests, wraps every segment file opened for writing.
	wrapFile func(file) file
}

// Recovery is what Open found in the log.
type Recovery struct {
	Segments int    // segments kept
	Records  uint64 // whole records kept
	First    uint64 // LSN of the first record (0 if none)
	Last     uint64 // LSN of the last whole record (0 if none)
	// Cut says what was cut off and why ("" if nothing): a torn tail after
	// a crash is normal, a checksum mismatch before the tail is not.
	Cut         string
	CutBytes    int64    // bytes truncated off the segment that was cut
	CutSegments []string // later segments renamed aside (suffix .corrupt)
}

// Commit is a record on its way to disk.
type Commit struct {
	lsn     uint64
	frame   [frameSize]byte
	payload []byte
	done    chan struct{}
	err     error
}

// LSN returns the record's LSN.
func (c *Commit) LSN() uint64 { return c.lsn }

// Done is closed when the record is durable or has failed.
func (c *Commit) Done() <-chan struct{} { return c.done }

// Wait waits until the record is durable (nil) or has failed: nothing of
// it will then be replayed.
func (c *Commit) Wait() error {
	<-c.done
	return c.err
}

func (c *Commit) finish(err error) {
	c.err = err
	c.payload = nil
	close(c.done)
}

// Log is an open write-ahead log. Append is safe for concurrent use.
type Log struct {
	dir   string
	root  *os.Root // the directory: segment paths resolve against it even if it moves
	lock  *os.File
	opts  Options
	recov Recovery

	mu      sync.Mutex
	cond    *sync.Cond // signalled when the queue grows or the log closes
	queue   []*Commit
	next    uint64 // LSN the next Append must have
	durable uint64 // LSN of the last durable record (0: none)
	failed  error  // ErrFailed wrapping the cause
	closing bool
	// writing: an AppendNow is writing its records on its own goroutine;
	// the writer goroutine leaves the queue (records after them) alone
	// until it is done.
	writing bool
	stopped chan struct{}

	// fmu guards the files: segs and the current segment's file (the
	// writer goroutine, Retire, Close).
	fmu  sync.Mutex
	segs []*segment // in LSN order; the last one is the current segment if cur != nil
	cur  file
	buf  []byte
}

// Open opens (creating it if need be) the log in dir, takes its lock, and
// recovers it: see the package doc. The next Append must have LSN
// Recovery().Last+1 (1 for an empty log), unless Retire moves it on.
func Open(dir string, opts Options) (*Log, error) {
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = DefaultSegmentSize
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot open the write-ahead log: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("cannot open the write-ahead log: %w", err)
	}
	l := &Log{dir: dir, root: root, lock: lock, opts: opts, stopped: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	if err := l.recover(); err != nil {
		root.Close()
		lock.Close()
		return nil, fmt.Errorf("cannot recover the write-ahead log %s: %w", dir, err)
	}
	go l.run()
	return l, nil
}

// lockDir takes the LOCK of dir and writes our pid into it.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot lock the write-ahead log: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			owner := "another process"
			if pid := strings.TrimSpace(string(b[:n])); pid != "" {
				owner = "process " + pid
			}
			return nil, fmt.Errorf("%w: %s is locked by %s (is another wukongd serving this data directory?)", ErrLocked, path, owner)
		}
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// recover scans the segments (see the package doc).
func (l *Log) recover() error {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range ents {
		if _, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names) // zero-padded: name order is LSN order
	r := &l.recov
	changed := false
	for i, name := range names {
		first, _ := parseSegmentName(name)
		if r.Cut != "" {
			if err := l.root.Rename(name, name+corruptSuffix); err != nil {
				return err
			}
			r.CutSegments = append(r.CutSegments, name+corruptSuffix)
			changed = true
			continue
		}
		if len(l.segs) > 0 {
			if prev := l.segs[len(l.segs)-1]; first != prev.last+1 {
				r.Cut = fmt.Sprintf("segment %s starts at LSN %d, but the log before it ends at %d", name, first, prev.last)
				if err := l.root.Rename(name, name+corruptSuffix); err != nil {
					return err
				}
				r.CutSegments = append(r.CutSegments, name+corruptSuffix)
				changed = true
				continue
			}
		}
		f, err := l.root.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		res, err := scanSegment(f, first, nil)
		if err != nil {
			f.Close()
			return fmt.Errorf("cannot read %s: %w", name, err)
		}
		seg := res.seg
		seg.name = name
		if res.cut != "" {
			r.Cut = fmt.Sprintf("%s: %s", name, res.cut)
			r.CutBytes = res.fileSize - seg.size
			changed = true
			if seg.size < headerSize {
				// Nothing of it can be read: the header is not whole.
				f.Close()
				if i == len(names)-1 && res.fileSize <= headerSize {
					// A segment whose creation was torn: nothing was in it.
					if err := l.root.Remove(name); err != nil {
						return err
					}
				} else {
					if err := l.root.Rename(name, name+corruptSuffix); err != nil {
						return err
					}
					r.CutSegments = append(r.CutSegments, name+corruptSuffix)
				}
				r.CutBytes = 0
				continue
			}
			if err := f.Truncate(seg.size); err != nil {
				f.Close()
				return fmt.Errorf("cannot cut %s at offset %d: %w", name, seg.size, err)
			}
			if err := f.Sync(); err != nil {
				f.Close()
				return fmt.Errorf("cannot cut %s at offset %d: %w", name, seg.size, err)
			}
		}
		f.Close()
		l.segs = append(l.segs, &seg)
	}
	if changed {
		if err := l.syncDir(); err != nil {
			return err
		}
	}
	for _, s := range l.segs {
		if !s.empty() {
			if r.First == 0 {
				r.First = s.first
			}
			r.Records += s.last - s.first + 1
		}
	}
	r.Segments = len(l.segs)
	l.next = 1
	if n := len(l.segs); n > 0 {
		last := l.segs[n-1]
		r.Last, l.next = last.last, last.last+1
		if r.Records == 0 {
			r.Last = 0
		}
		l.durable = last.last
		f, err := l.root.OpenFile(last.name, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if _, err := f.Seek(last.size, 0); err != nil {
			f.Close()
			return err
		}
		l.cur = l.wrap(osFile{f})
	}
	return nil
}

func (l *Log) wrap(f file) file {
	if l.opts.wrapFile != nil {
		return l.opts.wrapFile(f)
	}
	return f
}

// syncDir fsyncs the log's directory (file creations, removals, renames).
func (l *Log) syncDir() error {
	d, err := l.root.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Dir returns the log's directory.
func (l *Log) Dir() string { return l.dir }

// Recovery returns what Open found.
func (l *Log) Recovery() Recovery { return l.recov }

// LastLSN returns the LSN of the last durable record (0 if none).
func (l *Log) LastLSN() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.durable
}

// NextLSN returns the LSN the next Append must have.
func (l *Log) NextLSN() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// Err returns the error that stopped the log (wrapping ErrFailed), or nil.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// Replay calls fn with every record of LSN > after, in LSN order, as far
// as Open recovered the log. payload is valid during the call only. Call
// it before the first Append.
func (l *Log) Replay(after uint64, fn func(lsn uint64, payload []byte) error) error {
	l.fmu.Lock()
	segs := slices.Clone(l.segs)
	l.fmu.Unlock()
	for _, s := range segs {
		if s.empty() || s.last <= after {
			continue
		}
		f, err := l.root.Open(s.name)
		if err != nil {
			return fmt.Errorf("cannot replay the write-ahead log: %w", err)
		}
		res, err := scanSegment(f, s.first, func(lsn uint64, p []byte) error {
			if lsn > after && lsn <= s.last {
				return fn(lsn, p)
			}
			return nil
		})
		f.Close()
		if err != nil {
			return err
		}
		if res.seg.last < s.last {
			return fmt.Errorf("cannot replay the write-ahead log: %s changed since it was opened (%s)", s.name, res.cut)
		}
	}
	return nil
}

// Append queues the record of lsn (the LSN after the last one appended)
// and returns its Commit. payload must not change until the Commit is
// done. Records are written in the order they are appended.
func (l *Log) Append(lsn uint64, payload []byte) *Commit {
	c := &Commit{lsn: lsn, payload: payload, done: make(chan struct{})}
	if len(payload) > MaxRecord {
		c.finish(fmt.Errorf("cannot log record %d: %w (%d bytes, at most %d)", lsn, ErrTooLarge, len(payload), MaxRecord))
		return c
	}
	putFrame(&c.frame, lsn, payload)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.failed != nil:
		c.finish(l.failed)
	case l.closing:
		c.finish(ErrClosed)
	case lsn != l.next:
		c.finish(fmt.Errorf("cannot log record %d: %w (the next is %d: a record before it failed)", lsn, ErrSequence, l.next))
	default:
		l.queue = append(l.queue, c)
		l.next++
		l.cond.Signal()
	}
	return c
}

// run is the writer goroutine: it writes and syncs the queued records in
// batches (group commit).
func (l *Log) run() {
	defer close(l.stopped)
	var batch []*Commit
	for {
		l.mu.Lock()
		for (len(l.queue) == 0 && !l.closing) || l.writing {
			l.cond.Wait()
		}
		if len(l.queue) == 0 {
			l.mu.Unlock()
			return
		}
		batch, l.queue = l.queue, batch[:0]
		l.mu.Unlock()

		err, fatal := l.writeBatch(batch)
		l.settle(batch, err, fatal, false)
		clear(batch)
	}
}

// settle records how writing batch ended and finishes its records (and,
// if it failed, the records queued after it); inline: the batch was an
// AppendNow's, which no longer writes.
func (l *Log) settle(batch []*Commit, err error, fatal, inline bool) {
	l.mu.Lock()
	var failed []*Commit
	if err == nil {
		l.durable = batch[len(batch)-1].lsn
	} else {
		// Records queued meanwhile follow the failed ones: they fail too.
		failed = append(slices.Clone(batch), l.queue...)
		l.queue = l.queue[:0]
		l.next = l.durable + 1
		if fatal {
			l.failed = fmt.Errorf("%w: %v", ErrFailed, err)
		}
	}
	if inline {
		l.writing = false
		l.cond.Broadcast() // the writer goroutine: records queued meanwhile, or Close
	}
	l.mu.Unlock()
	if err == nil {
		for _, c := range batch {
			c.finish(nil)
		}
	} else {
		for i, c := range failed {
			if i < len(batch) {
				c.finish(fmt.Errorf("cannot log record %d: %w", c.lsn, err))
			} else {
				c.finish(fmt.Errorf("cannot log record %d: %w (a record before it failed: %v)", c.lsn, ErrSequence, err))
			}
		}
	}
}

// AppendNow appends records lsn, lsn+1, … (one per payload) and returns
// once they are durable (nil) or have failed (nothing of them will be
// replayed). When no record is queued or being written, it writes and
// syncs them itself, on the caller's goroutine — one write and one sync,
// without the hand-off to the writer goroutine and back; otherwise they
// are queued behind the others, as by Append, and it waits. A caller that
// appends from one goroutine in turn (the Raft log's append loop) saves
// two goroutine wake-ups per sync.
func (l *Log) AppendNow(lsn uint64, payloads [][]byte) error {
	if len(payloads) == 0 {
		return nil
	}
	cs := make([]*Commit, len(payloads))
	for i, p := range payloads {
		c := &Commit{lsn: lsn + uint64(i), payload: p, done: make(chan struct{})}
		if len(p) > MaxRecord {
			return fmt.Errorf("cannot log record %d: %w (%d bytes, at most %d)", c.lsn, ErrTooLarge, len(p), MaxRecord)
		}
		putFrame(&c.frame, c.lsn, p)
		cs[i] = c
	}
	last := cs[len(cs)-1]
	l.mu.Lock()
	switch {
	case l.failed != nil:
		err := l.failed
		l.mu.Unlock()
		return err
	case l.closing:
		l.mu.Unlock()
		return ErrClosed
	case lsn != l.next:
		next := l.next
		l.mu.Unlock()
		return fmt.Errorf("cannot log record %d: %w (the next is %d: a record before it failed)", lsn, ErrSequence, next)
	}
	l.next += uint64(len(cs))
	if len(l.queue) > 0 || l.writing {
		l.queue = append(l.queue, cs...)
		l.cond.Signal()
		l.mu.Unlock()
		return last.Wait()
	}
	l.writing = true
	l.mu.Unlock()
	err, fatal := l.writeBatch(cs)
	l.settle(cs, err, fatal, true)
	return last.Wait()
}

// writeBatch writes and syncs batch. fatal says that the log must stop
// (what is on disk is unknown).
func (l *Log) writeBatch(batch []*Commit) (err error, fatal bool) {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	if l.cur == nil || l.needsRotate(batch[0].lsn) {
		if err := l.rotate(batch[0].lsn); err != nil {
			return err, false
		}
	}
	seg := l.segs[len(l.segs)-1]
	written := int64(0)
	write := func(p []byte) error {
		n, err := l.cur.Write(p)
		written += int64(n)
		return err
	}
	l.buf = l.buf[:0]
	for _, c := range batch {
		if len(c.payload) >= 64<<10 {
			// A big payload goes out as it is, not through the buffer.
			if err = write(append(l.buf, c.frame[:]...)); err == nil {
				err = write(c.payload)
			}
			l.buf = l.buf[:0]
		} else {
			l.buf = append(l.buf, c.frame[:]...)
			l.buf = append(l.buf, c.payload...)
		}
		if err != nil {
			break
		}
	}
	if err == nil && len(l.buf) > 0 {
		err = write(l.buf)
	}
	if len(l.buf) > 1<<20 {
		l.buf = nil // do not keep a big batch's buffer
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		err = fmt.Errorf("cannot write %s: %w", filepath.Join(l.dir, seg.name), err)
		// Nothing of the batch may stay: cut it off, durably.
		if terr := l.cur.Truncate(seg.size); terr != nil {
			return fmt.Errorf("%w; cannot cut the segment back: %v", err, terr), true
		}
		if serr := l.cur.Sync(); serr != nil {
			return fmt.Errorf("%w; cannot sync the cut segment: %v", err, serr), true
		}
		return err, false
	}
	if err := l.cur.Sync(); err != nil {
		return fmt.Errorf("cannot sync %s: %w", filepath.Join(l.dir, seg.name), err), true
	}
	seg.size += written
	seg.last = batch[len(batch)-1].lsn
	return nil, false
}

// needsRotate reports whether a batch starting at lsn goes into a new
// segment: the current one is full, or empty but for another LSN.
func (l *Log) needsRotate(lsn uint64) bool {
	s := l.segs[len(l.segs)-1]
	return s.size >= l.opts.SegmentSize || (s.empty() && s.first != lsn)
}

// rotate closes the current segment (durable already) and starts a new
// one at first: created, header written and synced, directory synced. On
// error nothing of the new segment is left.
func (l *Log) rotate(first uint64) error {
	if l.cur != nil {
		if !l.segs[len(l.segs)-1].empty() {
			l.cur.Close()
			l.cur = nil
		} else if l.segs[len(l.segs)-1].first == first {
			return nil // an empty current segment starting where we are: keep it
		} else {
			// An empty segment at another LSN (Retire moved the log on).
			l.cur.Close()
			l.cur = nil
			l.root.Remove(l.segs[len(l.segs)-1].name)
			l.segs = l.segs[:len(l.segs)-1]
		}
	}
	name := segmentName(first)
	path := filepath.Join(l.dir, name)
	f, err := l.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("cannot create segment %s: %w", path, err)
	}
	w := l.wrap(osFile{f})
	fail := func(err error) error {
		w.Close()
		l.root.Remove(name)
		l.syncDir()
		return fmt.Errorf("cannot create segment %s: %w", path, err)
	}
	if _, err := w.Write(appendSegmentHeader(nil, first)); err != nil {
		return fail(err)
	}
	if err := w.Sync(); err != nil {
		return fail(err)
	}
	if err := l.syncDir(); err != nil {
		return fail(err)
	}
	l.cur = w
	l.segs = append(l.segs, &segment{first: first, last: first - 1, size: headerSize, name: name})
	return nil
}

// Retire deletes the segments whose records all have LSN ≤ upTo: a
// snapshot holds them now. A current segment holding some of them is
// closed (the next record starts a new segment), so a later Retire can
// delete it. If upTo is at or past the last durable record
// and nothing is queued, the log then starts again at upTo+1 (the next
// Append must have that LSN). Records after upTo are kept.
func (l *Log) Retire(upTo uint64) error {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	l.mu.Lock()
	if l.failed != nil {
		l.mu.Unlock()
		return l.failed
	}
	if upTo > l.durable && len(l.queue) == 0 && l.next == l.durable+1 {
		// The snapshot is past the whole log (it may even be ahead of it).
		l.durable, l.next = upTo, upTo+1
	}
	l.mu.Unlock()
	removed := false
	keep := l.segs[:0]
	for i, s := range l.segs {
		current := i == len(l.segs)-1 && l.cur != nil
		covered := s.last <= upTo
		if current && !s.empty() && s.first <= upTo {
			// It holds retired records: the next batch starts a new segment,
			// so that this one can go at the next Retire past its end (or
			// now, if it is covered).
			l.cur.Close() // durable already
			l.cur = nil
			current = false
		}
		if covered && !current {
			if err := l.root.Remove(s.name); err != nil && !errors.Is(err, os.ErrNotExist) {
				l.segs = append(keep, l.segs[i:]...)
				return fmt.Errorf("cannot retire %s: %w", filepath.Join(l.dir, s.name), err)
			}
			removed = true
			continue
		}
		keep = append(keep, s)
	}
	l.segs = keep
	if removed {
		return l.syncDir()
	}
	return nil
}

// Seal ends the current segment: the next record starts a new one. A
// compaction seals the log at the version it compacts (no record after it
// queued or written), so that retiring up to that version afterwards
// deletes every segment it covers — without the seal the records written
// while it ran share a segment with the retired ones, and the whole
// segment stays until the next compaction. The segment sealed is durable
// already (only whole, synced batches are in it).
func (l *Log) Seal() error {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	l.mu.Lock()
	err := l.failed
	l.mu.Unlock()
	if err != nil {
		return err
	}
	if l.cur != nil && !l.segs[len(l.segs)-1].empty() {
		l.cur.Close() // durable already
		l.cur = nil
	}
	return nil
}

// Close writes what is queued, closes the files and releases the lock.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		<-l.stopped
		return nil
	}
	l.closing = true
	l.cond.Broadcast()
	l.mu.Unlock()
	<-l.stopped
	l.fmu.Lock()
	defer l.fmu.Unlock()
	var errs []error
	if l.cur != nil {
		errs = append(errs, l.cur.Close())
		l.cur = nil
	}
	errs = append(errs, l.root.Close(), l.lock.Close())
	return errors.Join(errs...)
}
