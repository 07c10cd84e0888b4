package wal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Segment and record layout: doc.go draws every byte.
const (
	magic         = "wukongwl"
	formatVersion = 1
	headerSize    = 32 // segment header
	frameSize     = 16 // record header: length, CRC, LSN
	segSuffix     = ".wal"
	corruptSuffix = ".corrupt"
	lockName      = "LOCK"
)

// MaxRecord is the largest payload of a record (1 GiB).
const MaxRecord = 1 << 30

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segmentName is the file name of the segment whose first LSN is first.
func segmentName(first uint64) string { return fmt.Sprintf("%020d%s", first, segSuffix) }

// parseSegmentName returns the first LSN of a segment's file name; ok is
// false for other files.
func parseSegmentName(name string) (uint64, bool) {
	s, ok := strings.CutSuffix(name, segSuffix)
	if !ok || len(s) != 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil && n > 0
}

// appendSegmentHeader appends the header of a segment starting at first.
func appendSegmentHeader(dst []byte, first uint64) []byte {
	var h [headerSize]byte
	copy(h[:8], magic)
	binary.LittleEndian.PutUint32(h[8:], formatVersion)
	binary.LittleEndian.PutUint64(h[16:], first)
	binary.LittleEndian.PutUint32(h[24:], crc32.Checksum(h[:24], castagnoli))
	return append(dst, h[:]...)
}

// checkSegmentHeader validates a segment header and returns its first LSN.
func checkSegmentHeader(h []byte) (uint64, error) {
	if len(h) < headerSize {
		return 0, fmt.Errorf("the segment header is torn (%d of %d bytes)", len(h), headerSize)
	}
	if string(h[:8]) != magic {
		return 0, errors.New("the segment header has no wukongwl magic")
	}
	if crc32.Checksum(h[:24], castagnoli) != binary.LittleEndian.Uint32(h[24:]) {
		return 0, errors.New("the segment header's checksum does not match")
	}
	if v := binary.LittleEndian.Uint32(h[8:]); v != formatVersion {
		return 0, fmt.Errorf("the segment has format version %d, this build reads %d", v, formatVersion)
	}
	return binary.LittleEndian.Uint64(h[16:]), nil
}

// recordCRC is the checksum of a record: its length and LSN fields and
// its payload.
func recordCRC(frame []byte, payload []byte) uint32 {
	c := crc32.Update(0, castagnoli, frame[0:4])
	c = crc32.Update(c, castagnoli, frame[8:16])
	return crc32.Update(c, castagnoli, payload)
}

// putFrame fills the record header for payload at lsn.
func putFrame(frame *[frameSize]byte, lsn uint64, payload []byte) {
	binary.LittleEndian.PutUint32(frame[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(frame[8:], lsn)
	binary.LittleEndian.PutUint32(frame[4:], recordCRC(frame[:], payload))
}

// segment is one segment file of the log.
type segment struct {
	first uint64 // LSN of its first record (from its header)
	last  uint64 // LSN of its last record; first-1 while empty
	size  int64  // bytes of whole records and the header
	name  string
}

func (s *segment) empty() bool { return s.last < s.first }

// scanResult is what scanning a segment found.
type scanResult struct {
	seg      segment
	fileSize int64
	cut      string // why the segment ends before fileSize ("" if it does not)
}

// scanSegment reads the segment at path and validates every record. The
// records end at the first one that is not whole (res.cut says why, and
// res.seg.size is where it starts); a header that is not whole ends the
// segment at 0. wantFirst is the first LSN the segment must start at (its
// name's). fn, if not nil, is called with every whole record (payload
// valid during the call only).
func scanSegment(f *os.File, wantFirst uint64, fn func(lsn uint64, payload []byte) error) (scanResult, error) {
	var res scanResult
	fi, err := f.Stat()
	if err != nil {
		return res, err
	}
	res.fileSize = fi.Size()
	r := bufio.NewReaderSize(f, 1<<20)
	var h [headerSize]byte
	n, err := io.ReadFull(r, h[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return res, err
	}
	first, herr := checkSegmentHeader(h[:n])
	if herr == nil && first != wantFirst {
		herr = fmt.Errorf("the segment header says it starts at LSN %d, its name %d", first, wantFirst)
	}
	if herr != nil {
		res.cut = herr.Error()
		res.seg = segment{first: wantFirst, last: wantFirst - 1}
		return res, nil
	}
	res.seg = segment{first: first, last: first - 1, size: headerSize}
	var frame [frameSize]byte
	var payload []byte
	for {
		off := res.seg.size
		n, err := io.ReadFull(r, frame[:])
		if err != nil {
			if errors.Is(err, io.EOF) {
				return res, nil // the end, on a record boundary
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				res.cut = fmt.Sprintf("torn record header at offset %d (%d of %d bytes)", off, n, frameSize)
				return res, nil
			}
			return res, err
		}
		length := binary.LittleEndian.Uint32(frame[0:])
		lsn := binary.LittleEndian.Uint64(frame[8:])
		want := res.seg.last + 1
		if length > MaxRecord || int64(length) > res.fileSize-off-frameSize {
			res.cut = fmt.Sprintf("torn record at offset %d (LSN %d: a %d-byte payload, %d bytes left in the file)",
				off, want, length, max(0, res.fileSize-off-frameSize))
			return res, nil
		}
		if cap(payload) < int(length) {
			payload = make([]byte, length)
		}
		payload = payload[:length]
		if _, err := io.ReadFull(r, payload); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				res.cut = fmt.Sprintf("torn record at offset %d (LSN %d: the file ends inside its payload)", off, want)
				return res, nil
			}
			return res, err
		}
		if recordCRC(frame[:], payload) != binary.LittleEndian.Uint32(frame[4:]) {
			res.cut = fmt.Sprintf("checksum mismatch in the record at offset %d (LSN %d expected)", off, want)
			return res, nil
		}
		if lsn != want {
			res.cut = fmt.Sprintf("record at offset %d has LSN %d, %d expected", off, lsn, want)
			return res, nil
		}
		if fn != nil {
			if err := fn(lsn, payload); err != nil {
				return res, err
			}
		}
		res.seg.last = lsn
		res.seg.size = off + frameSize + int64(length)
	}
}

// file is what the log needs of a segment file; tests wrap it to inject
// faults (Options.wrapFile).
type file interface {
	Write(p []byte) (int, error)
	// Sync makes the written data durable (fdatasync).
	Sync() error
	Truncate(size int64) error
	Close() error
}

// osFile is a segment file on disk.
type osFile struct{ f *os.File }

func (o osFile) Write(p []byte) (int, error) { return o.f.Write(p) }
func (o osFile) Truncate(size int64) error {
	if err := o.f.Truncate(size); err != nil {
		return err
	}
	_, err := o.f.Seek(size, io.SeekStart)
	return err
}
func (o osFile) Close() error { return o.f.Close() }
func (o osFile) Sync() error {
	rc, err := o.f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = unix.Fdatasync(int(fd))
			if !errors.Is(serr, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: o.f.Name(), Err: serr}
	}
	return nil
}
