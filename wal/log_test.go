package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// payloadOf is the payload of record lsn in these tests: distinct per LSN
// and of varying length.
func payloadOf(lsn uint64) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("record-%d;", lsn)), int(lsn%7)+1)
}

func openLog(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// appendN appends records first..first+n-1 and waits for them.
func appendN(t *testing.T, l *Log, first uint64, n int) {
	t.Helper()
	var cs []*Commit
	for i := 0; i < n; i++ {
		cs = append(cs, l.Append(first+uint64(i), payloadOf(first+uint64(i))))
	}
	for _, c := range cs {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}

// replayed returns the LSNs Replay gives after after, checking payloads.
func replayed(t *testing.T, l *Log, after uint64) []uint64 {
	t.Helper()
	var got []uint64
	err := l.Replay(after, func(lsn uint64, p []byte) error {
		if !bytes.Equal(p, payloadOf(lsn)) {
			return fmt.Errorf("record %d: payload %q", lsn, p)
		}
		got = append(got, lsn)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func lsns(first, last uint64) []uint64 {
	var r []uint64
	for i := first; i <= last; i++ {
		r = append(r, i)
	}
	return r
}

// checkLog reopens dir and checks that it holds exactly records first..last
// and that the next record appends.
func checkLog(t *testing.T, dir string, first, last uint64) Recovery {
	t.Helper()
	l := openLog(t, dir, Options{})
	defer l.Close()
	rec := l.Recovery()
	if got := replayed(t, l, 0); !slices.Equal(got, lsns(first, last)) {
		t.Fatalf("replayed %v, want %d..%d (recovery %+v)", got, first, last, rec)
	}
	if l.NextLSN() != last+1 {
		t.Fatalf("next LSN %d, want %d", l.NextLSN(), last+1)
	}
	if err := l.Append(last+1, payloadOf(last+1)).Wait(); err != nil {
		t.Fatal(err)
	}
	return rec
}

func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+segSuffix))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	if rec := l.Recovery(); rec.Records != 0 || rec.Cut != "" || l.NextLSN() != 1 {
		t.Fatalf("empty log: %+v next %d", rec, l.NextLSN())
	}
	if got := replayed(t, l, 0); len(got) != 0 {
		t.Fatalf("empty log replayed %v", got)
	}
	appendN(t, l, 1, 50)
	if l.LastLSN() != 50 {
		t.Fatalf("last %d", l.LastLSN())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rec := checkLog(t, dir, 1, 50)
	if rec.Records != 50 || rec.First != 1 || rec.Last != 50 || rec.Cut != "" {
		t.Fatalf("recovery %+v", rec)
	}
	l = openLog(t, dir, Options{})
	defer l.Close()
	if got := replayed(t, l, 20); !slices.Equal(got, lsns(21, 51)) {
		t.Fatalf("replay after 20: %v", got)
	}
}

func TestEmptyPayloadAndSequence(t *testing.T) {
	l := openLog(t, t.TempDir(), Options{})
	defer l.Close()
	if err := l.Append(1, nil).Wait(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(3, []byte("x")).Wait(); !errors.Is(err, ErrSequence) {
		t.Fatalf("a gap: %v", err)
	}
	if err := l.Append(2, []byte("x")).Wait(); err != nil {
		t.Fatal(err)
	}
}

// lastRecordOffset returns the offset of the last record of a segment
// holding records of payloadOf.
func recordOffsets(first, last uint64) []int64 {
	off := int64(headerSize)
	var r []int64
	for i := first; i <= last; i++ {
		r = append(r, off)
		off += frameSize + int64(len(payloadOf(i)))
	}
	return append(r, off)
}

func TestTornTail(t *testing.T) {
	src := t.TempDir()
	l := openLog(t, src, Options{})
	appendN(t, l, 1, 10)
	l.Close()
	seg := segmentFiles(t, src)[0]
	whole, _ := os.ReadFile(seg)
	offs := recordOffsets(1, 10)
	if int64(len(whole)) != offs[10] {
		t.Fatalf("segment of %d bytes, want %d", len(whole), offs[10])
	}
	// Every length from the header to the last byte of record 10.
	for n := offs[9]; n < offs[10]; n++ {
		dir := t.TempDir()
		p := filepath.Join(dir, filepath.Base(seg))
		os.WriteFile(p, whole[:n], 0o644)
		rec := checkLog(t, dir, 1, 9)
		if n > offs[9] && (rec.Cut == "" || rec.CutBytes != n-offs[9]) {
			t.Fatalf("torn at %d: recovery %+v", n, rec)
		}
	}
	// Cut inside an earlier record: everything from it on goes.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, filepath.Base(seg)), whole[:offs[4]+3], 0o644)
	checkLog(t, dir, 1, 4)
}

func TestFlippedByte(t *testing.T) {
	src := t.TempDir()
	l := openLog(t, src, Options{})
	appendN(t, l, 1, 10)
	l.Close()
	seg := segmentFiles(t, src)[0]
	whole, _ := os.ReadFile(seg)
	offs := recordOffsets(1, 10)
	flip := func(at int64, keep uint64) {
		t.Helper()
		dir := t.TempDir()
		b := slices.Clone(whole)
		b[at] ^= 0x10
		os.WriteFile(filepath.Join(dir, filepath.Base(seg)), b, 0o644)
		rec := checkLog(t, dir, 1, keep)
		if rec.Cut == "" {
			t.Fatalf("flip at %d: nothing cut", at)
		}
	}
	for at := offs[9]; at < offs[10]; at++ { // anywhere in the last record
		flip(at, 9)
	}
	for at := offs[5]; at < offs[6]; at++ { // anywhere in a middle record
		flip(at, 5)
	}
	// In the segment header: nothing of the segment can be trusted.
	for at := int64(0); at < 28; at++ { // the 24 bytes and their CRC
		dir := t.TempDir()
		b := slices.Clone(whole)
		b[at] ^= 0x01
		os.WriteFile(filepath.Join(dir, filepath.Base(seg)), b, 0o644)
		l := openLog(t, dir, Options{})
		if rec := l.Recovery(); rec.Records != 0 || rec.Cut == "" || len(rec.CutSegments) != 1 {
			t.Fatalf("header flip at %d: %+v", at, rec)
		}
		if l.NextLSN() != 1 {
			t.Fatalf("header flip at %d: next %d", at, l.NextLSN())
		}
		l.Close()
		if _, err := os.Stat(filepath.Join(dir, filepath.Base(seg)+corruptSuffix)); err != nil {
			t.Fatalf("the corrupt segment was not kept aside: %v", err)
		}
	}
}

func TestManySegmentsAndRetire(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{SegmentSize: 300})
	for i := uint64(1); i <= 200; i += 5 {
		appendN(t, l, i, 5)
	}
	segs := segmentFiles(t, dir)
	if len(segs) < 10 {
		t.Fatalf("%d segments", len(segs))
	}
	l.Close()

	l = openLog(t, dir, Options{SegmentSize: 300})
	if rec := l.Recovery(); rec.Segments != len(segs) || rec.Records != 200 || rec.Cut != "" {
		t.Fatalf("recovery %+v", rec)
	}
	for _, after := range []uint64{0, 1, 37, 100, 199, 200} {
		if got := replayed(t, l, after); !slices.Equal(got, lsns(after+1, 200)) {
			t.Fatalf("replay after %d: %v", after, got)
		}
	}
	if err := l.Retire(97); err != nil {
		t.Fatal(err)
	}
	after := segmentFiles(t, dir)
	if len(after) >= len(segs) {
		t.Fatalf("retire removed nothing: %d → %d segments", len(segs), len(after))
	}
	first, _ := parseSegmentName(filepath.Base(after[0]))
	if first > 98 {
		t.Fatalf("retire(97) removed record 98: the first segment starts at %d", first)
	}
	if got := replayed(t, l, 97); !slices.Equal(got, lsns(98, 200)) {
		t.Fatalf("replay after retire: %v", got)
	}
	appendN(t, l, 201, 3)
	// Retiring everything: the current segment is closed and goes too.
	if err := l.Retire(203); err != nil {
		t.Fatal(err)
	}
	if n := len(segmentFiles(t, dir)); n != 0 {
		t.Fatalf("%d segments after retiring all", n)
	}
	appendN(t, l, 204, 2)
	l.Close()
	rec := checkLog(t, dir, 204, 205)
	if rec.First != 204 {
		t.Fatalf("recovery %+v", rec)
	}
	// A middle segment lost: the log ends before it, later ones are kept aside.
	dir2 := t.TempDir()
	l = openLog(t, dir2, Options{SegmentSize: 300})
	for i := uint64(1); i <= 100; i += 5 {
		appendN(t, l, i, 5)
	}
	l.Close()
	segs = segmentFiles(t, dir2)
	os.Remove(segs[3])
	prevLast, _ := parseSegmentName(filepath.Base(segs[3]))
	rec = checkLog(t, dir2, 1, prevLast-1)
	if len(rec.CutSegments) != len(segs)-4 {
		t.Fatalf("recovery %+v", rec)
	}
}

func TestRetirePastTheLog(t *testing.T) {
	// A snapshot ahead of the log (written after its records were retired):
	// the log starts again after it.
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	appendN(t, l, 1, 3)
	if err := l.Retire(10); err != nil {
		t.Fatal(err)
	}
	if l.NextLSN() != 11 {
		t.Fatalf("next %d", l.NextLSN())
	}
	appendN(t, l, 11, 2)
	l.Close()
	checkLog(t, dir, 11, 12)
}

func TestSealThenRetire(t *testing.T) {
	// A compaction seals the log at the version it compacts; the records
	// written while it runs go to a new segment, so retiring up to that
	// version deletes the whole segment before it.
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	appendN(t, l, 1, 3)
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	if err := l.Seal(); err != nil { // twice: nothing more
		t.Fatal(err)
	}
	appendN(t, l, 4, 2)
	if err := l.Retire(3); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*.wal"))
	if len(segs) != 1 || filepath.Base(segs[0]) != segmentName(4) {
		t.Fatalf("segments after Retire(3): %v", segs)
	}
	appendN(t, l, 6, 1)
	l.Close()
	checkLog(t, dir, 4, 6)

	// Without the seal the segment holding 1..5 stays.
	dir = t.TempDir()
	l = openLog(t, dir, Options{})
	appendN(t, l, 1, 5)
	if err := l.Retire(3); err != nil {
		t.Fatal(err)
	}
	l.Close()
	checkLog(t, dir, 1, 5)
}

func TestTruncatedSegmentHeader(t *testing.T) {
	for n := 0; n < headerSize; n++ {
		dir := t.TempDir()
		l := openLog(t, dir, Options{SegmentSize: 200})
		appendN(t, l, 1, 5)
		l.Close()
		// A crash while creating the next segment.
		hdr := appendSegmentHeader(nil, 6)
		os.WriteFile(filepath.Join(dir, segmentName(6)), hdr[:n], 0o644)
		rec := checkLog(t, dir, 1, 5)
		if rec.Cut == "" || len(rec.CutSegments) != 0 {
			t.Fatalf("header torn at %d: %+v", n, rec)
		}
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("a second Open: %v", err)
	}
	if want := fmt.Sprintf("process %d", os.Getpid()); !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Fatalf("the error does not name the owner (%s): %v", want, err)
	}
	l.Close()
	l = openLog(t, dir, Options{})
	l.Close()
}

func TestGroupCommit(t *testing.T) {
	var syncs atomic.Int64
	opts := Options{wrapFile: func(f file) file { return &faultFile{file: f, syncs: &syncs} }}
	dir := t.TempDir()
	l := openLog(t, dir, opts)
	const writers, each = 16, 50
	var mu sync.Mutex // appends in LSN order, waits concurrent
	next := uint64(1)
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				mu.Lock()
				c := l.Append(next, payloadOf(next))
				next++
				mu.Unlock()
				if err := c.Wait(); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	l.Close()
	t.Logf("%d records, %d syncs", writers*each, syncs.Load())
	if syncs.Load() >= writers*each {
		t.Errorf("%d syncs for %d records: no group commit", syncs.Load(), writers*each)
	}
	checkLog(t, dir, 1, writers*each)
}

// faultFile injects write and sync errors.
type faultFile struct {
	file
	syncs     *atomic.Int64
	writeErr  *atomic.Pointer[error] // next writes fail (after writing half)
	syncErr   *atomic.Pointer[error]
	truncErr  *atomic.Pointer[error]
	truncated *atomic.Int64
}

func (f *faultFile) Write(p []byte) (int, error) {
	if f.writeErr != nil {
		if e := f.writeErr.Load(); e != nil {
			n, _ := f.file.Write(p[:len(p)/2])
			return n, *e
		}
	}
	return f.file.Write(p)
}

func (f *faultFile) Sync() error {
	if f.syncs != nil {
		f.syncs.Add(1)
	}
	if f.syncErr != nil {
		if e := f.syncErr.Load(); e != nil {
			return *e
		}
	}
	return f.file.Sync()
}

func (f *faultFile) Truncate(n int64) error {
	if f.truncErr != nil {
		if e := f.truncErr.Load(); e != nil {
			return *e
		}
	}
	if f.truncated != nil {
		f.truncated.Add(1)
	}
	return f.file.Truncate(n)
}

func TestWriteFailureLeavesNothing(t *testing.T) {
	var writeErr, syncErr, truncErr atomic.Pointer[error]
	var truncated atomic.Int64
	opts := Options{wrapFile: func(f file) file {
		return &faultFile{file: f, writeErr: &writeErr, syncErr: &syncErr, truncErr: &truncErr, truncated: &truncated}
	}}
	dir := t.TempDir()
	l := openLog(t, dir, opts)
	appendN(t, l, 1, 5)
	size := func() int64 {
		fi, err := os.Stat(segmentFiles(t, dir)[0])
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()

	// A full disk: the write fails, the half-written record is cut off.
	enospc := error(&os.PathError{Op: "write", Path: "seg", Err: syscall.ENOSPC})
	writeErr.Store(&enospc)
	c6 := l.Append(6, payloadOf(6))
	if err := c6.Wait(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v", err)
	}
	if got := size(); got != before {
		t.Fatalf("the failed write left the segment at %d bytes, %d before", got, before)
	}
	if truncated.Load() == 0 {
		t.Fatal("no truncation after the failed write")
	}
	if l.NextLSN() != 6 || l.Err() != nil {
		t.Fatalf("after a failed write: next %d, err %v", l.NextLSN(), l.Err())
	}
	// Space is back: the log goes on at the same LSN.
	writeErr.Store(nil)
	appendN(t, l, 6, 2)

	// A failed fdatasync: the log stops for good.
	eio := error(&os.PathError{Op: "fdatasync", Path: "seg", Err: syscall.EIO})
	syncErr.Store(&eio)
	if err := l.Append(8, payloadOf(8)).Wait(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("failed sync: %v", err)
	}
	syncErr.Store(nil)
	if err := l.Append(8, payloadOf(8)).Wait(); !errors.Is(err, ErrFailed) {
		t.Fatalf("after a failed sync the log must refuse writes: %v", err)
	}
	if !errors.Is(l.Err(), ErrFailed) {
		t.Fatalf("Err: %v", l.Err())
	}
	l.Close()
	// Record 8 may or may not be on disk (that is what a failed sync
	// means); recovery gives a whole prefix either way.
	l = openLog(t, dir, Options{})
	got := replayed(t, l, 0)
	if !slices.Equal(got, lsns(1, 7)) && !slices.Equal(got, lsns(1, 8)) {
		t.Fatalf("after the failed sync: %v", got)
	}
	l.Close()

	// A failed write whose clean-up fails too: the log stops.
	dir = t.TempDir()
	l = openLog(t, dir, opts)
	appendN(t, l, 1, 2)
	writeErr.Store(&enospc)
	truncErr.Store(&eio)
	if err := l.Append(3, payloadOf(3)).Wait(); err == nil {
		t.Fatal("no error")
	}
	writeErr.Store(nil)
	truncErr.Store(nil)
	if err := l.Append(3, payloadOf(3)).Wait(); !errors.Is(err, ErrFailed) {
		t.Fatalf("after a failed clean-up: %v", err)
	}
	l.Close()
	checkLog(t, dir, 1, 2) // the half record is a torn tail to recovery
}

func TestFailureFailsQueuedRecords(t *testing.T) {
	var writeErr atomic.Pointer[error]
	gate, entered := make(chan struct{}), make(chan struct{})
	var armed atomic.Bool
	var once sync.Once
	opts := Options{wrapFile: func(f file) file {
		return &gatedFile{faultFile: faultFile{file: f, writeErr: &writeErr}, gate: gate, entered: entered, armed: &armed, once: &once}
	}}
	dir := t.TempDir()
	l := openLog(t, dir, opts)
	appendN(t, l, 1, 2)
	enospc := error(syscall.ENOSPC)
	writeErr.Store(&enospc)
	armed.Store(true)
	c3 := l.Append(3, payloadOf(3)) // the writer blocks in its write
	<-entered
	c4 := l.Append(4, payloadOf(4)) // queued behind it
	close(gate)
	if err := c3.Wait(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("c3: %v", err)
	}
	if err := c4.Wait(); !errors.Is(err, ErrSequence) {
		t.Fatalf("c4 (queued after a failed record): %v", err)
	}
	writeErr.Store(nil)
	if err := l.Append(5, payloadOf(5)).Wait(); !errors.Is(err, ErrSequence) {
		t.Fatalf("c5 built on the failed records: %v", err)
	}
	appendN(t, l, 3, 2)
	l.Close()
	checkLog(t, dir, 1, 4)
}

// gatedFile blocks the first write until gate is closed.
type gatedFile struct {
	faultFile
	gate    chan struct{}
	entered chan struct{}
	armed   *atomic.Bool
	once    *sync.Once
}

func (g *gatedFile) Write(p []byte) (int, error) {
	if g.armed.Load() {
		g.once.Do(func() { close(g.entered); <-g.gate })
	}
	return g.faultFile.Write(p)
}

func TestCloseWritesQueued(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	var cs []*Commit
	for i := uint64(1); i <= 100; i++ {
		cs = append(cs, l.Append(i, payloadOf(i)))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Append(101, nil).Wait(); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	checkLog(t, dir, 1, 100)
}

// TestAppendNow: records written on the caller's goroutine are one write
// and one sync; an Append queued while an AppendNow writes goes in after
// it (the writer goroutine waits), and fails after it when it fails; an
// AppendNow while the writer goroutine writes is queued behind.
func TestAppendNow(t *testing.T) {
	var syncs atomic.Int64
	var writeErr atomic.Pointer[error]
	gate, entered := make(chan struct{}), make(chan struct{})
	var armed atomic.Bool
	var once sync.Once
	opts := Options{wrapFile: func(f file) file {
		return &gatedFile{faultFile: faultFile{file: f, syncs: &syncs, writeErr: &writeErr}, gate: gate, entered: entered, armed: &armed, once: &once}
	}}
	dir := t.TempDir()
	l := openLog(t, dir, opts)
	payloads := func(first uint64, n int) [][]byte {
		var ps [][]byte
		for i := range n {
			ps = append(ps, payloadOf(first+uint64(i)))
		}
		return ps
	}
	if err := l.AppendNow(1, payloads(1, 1)); err != nil { // the segment's creation syncs too
		t.Fatal(err)
	}
	s0 := syncs.Load()
	if err := l.AppendNow(2, payloads(2, 2)); err != nil {
		t.Fatal(err)
	}
	if got := syncs.Load() - s0; got != 1 {
		t.Errorf("AppendNow of 2 records: %d syncs, want 1", got)
	}
	if err := l.AppendNow(5, payloads(5, 1)); !errors.Is(err, ErrSequence) {
		t.Fatalf("AppendNow past the next LSN: %v", err)
	}

	// An AppendNow blocked in its write; an Append queued meanwhile.
	armed.Store(true)
	done := make(chan error, 1)
	go func() { done <- l.AppendNow(4, payloads(4, 2)) }()
	<-entered
	c6 := l.Append(6, payloadOf(6))
	select {
	case <-c6.Done():
		t.Fatal("a record queued behind an AppendNow was written before it")
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := c6.Wait(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	checkLog(t, dir, 1, 6)

	// A failed AppendNow fails the Append queued behind it.
	gate2, entered2 := make(chan struct{}), make(chan struct{})
	var once2 sync.Once
	opts.wrapFile = func(f file) file {
		return &gatedFile{faultFile: faultFile{file: f, writeErr: &writeErr}, gate: gate2, entered: entered2, armed: &armed, once: &once2}
	}
	l = openLog(t, dir, opts)
	enospc := error(syscall.ENOSPC)
	writeErr.Store(&enospc)
	go func() { done <- l.AppendNow(8, payloads(8, 2)) }() // checkLog appended 7
	select {
	case <-entered2:
	case err := <-done:
		t.Fatalf("AppendNow did not write: %v", err)
	}
	c10 := l.Append(10, payloadOf(10))
	close(gate2)
	if err := <-done; !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("AppendNow with a failing write: %v", err)
	}
	if err := c10.Wait(); !errors.Is(err, ErrSequence) {
		t.Fatalf("an Append queued behind a failed AppendNow: %v", err)
	}
	writeErr.Store(nil)
	armed.Store(false)
	// Not inline: queued behind nothing now, so written here again.
	if err := l.AppendNow(8, payloads(8, 3)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	checkLog(t, dir, 1, 10)
}
