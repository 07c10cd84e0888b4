// Package wal is the write-ahead log of a data directory: every change of
// the served dataset is one checksummed record, made durable (written and
// fdatasync'ed, several records per sync: group commit) before the change
// is published or acknowledged. After a crash the snapshot plus the log's
// records after the snapshot's version give back every acknowledged
// change, and no change in part.
//
// In: records (an LSN and an opaque payload; EncodeChanges makes the
// payload of one request's []graphstore.GraphChange). Out: Commit handles
// that complete when their record is durable or has failed; at startup,
// Replay hands back the records in LSN order.
//
// # Files
//
// A log is a directory of segment files and a LOCK file:
//
//	LOCK                     flock'ed by the one process that owns the log (holds its pid)
//	00000000000000000001.wal segment whose first record has LSN 1
//	00000000000000004711.wal the next segment: LSNs 4711, 4712, …
//
// A segment starts with a 32-byte header: the magic "wukongwl", the
// format version (uint32, 1), 4 reserved zero bytes, the LSN of its first
// record (uint64) and the CRC-32C of those 24 bytes (uint32), then 4 zero
// bytes. Records follow back to back:
//
//	offset 0  uint32  n: payload length in bytes (≤ MaxRecord)
//	offset 4  uint32  CRC-32C (Castagnoli) of bytes 0..3, 8..15 and the payload
//	offset 8  uint64  LSN: the previous record's + 1 (a segment's first: its header's)
//	offset 16 [n]byte payload
//
// All integers are little-endian. LSNs are dense: the record that makes
// version v of the dataset has LSN v.
//
// # Recovery
//
// Open scans every segment and stops at the first record that is not
// whole: too short for its header or its length (a torn write), a
// checksum that does not match (a flipped bit, a half-written sector), or
// an LSN out of sequence (stale bytes). The segment is truncated there
// (and the truncation fsync'ed); later segments can no longer be applied
// (a record is missing before them) and are renamed aside with the suffix
// ".corrupt", never deleted. A segment whose header is torn or corrupt is
// cut the same way. Recovery is reported (Recovery) so that the server can
// log what it cut.
//
// # Group commit and failures
//
// Append queues a record; one writer goroutine writes every queued record
// with one write(2) and makes them durable with one fdatasync(2), then
// completes their Commits in LSN order. A record's Commit succeeding
// implies every earlier record is durable.
//
// A failed write(2) (ENOSPC, EIO) fails the records it carried and every
// record queued after them; the segment is truncated back to its last
// durable byte and fsync'ed, so nothing of the failed records stays in
// the file, and the log goes on at the next LSN after the last durable
// one (a full disk heals when space is freed). A failed fdatasync(2) is
// different: Linux may have dropped the dirty pages it could not write
// and will report success on a retry, so what is on disk is unknown
// (PostgreSQL's "fsyncgate", 2018; it PANICs and recovers from its WAL).
// The log then fails every pending and every later Append with
// ErrFailed until the process restarts and recovers from what is really
// on disk. A failure to truncate after a failed write is treated the
// same way.
//
// # Retiring
//
// Retire(upTo) deletes the segments whose records all have LSN ≤ upTo
// (they are in a snapshot now). A current segment holding records ≤ upTo
// is closed and the next record starts a new one, so that it can go at
// the next Retire past its end (at once if it is entirely covered).
package wal
