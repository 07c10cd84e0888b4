package wal

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs of size bytes at a new directory, or skips the
// test where mounting is not allowed (not root). The fault-injecting file
// layer (TestWriteFailureLeavesNothing) covers the same paths everywhere.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): the full-disk test needs root", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

func TestFullDiskTmpfs(t *testing.T) {
	mnt := mountTmpfs(t, "1m")
	dir := filepath.Join(mnt, "wal")
	l := openLog(t, dir, Options{SegmentSize: 64 << 10})
	appendN(t, l, 1, 20)
	ballast := filepath.Join(mnt, "ballast")
	fill(t, ballast)
	sizes := func() map[string]int64 {
		m := map[string]int64{}
		for _, s := range segmentFiles(t, dir) {
			fi, _ := os.Stat(s)
			m[s] = fi.Size()
		}
		return m
	}
	// Records big enough to need new pages of the full file system.
	big := make([]byte, 256<<10)
	var err error
	var before map[string]int64
	next := uint64(21)
	for i := 0; i < 8 && err == nil; i++ {
		before = sizes()
		if err = l.Append(next, big).Wait(); err == nil {
			next++ // the last partly free pages took one
		}
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a write on a full disk: %v", err)
	}
	t.Logf("full disk: %v", err)
	if l.Err() != nil {
		t.Fatalf("a full disk must not stop the log: %v", l.Err())
	}
	if after := sizes(); !maps.Equal(before, after) {
		t.Fatalf("the failed write left something: segments %v before, %v after", before, after)
	}
	// Space back: the same LSN goes through.
	os.Remove(ballast)
	if err := l.Append(next, payloadOf(next)).Wait(); err != nil {
		t.Fatalf("after freeing space: %v", err)
	}
	l.Close()
	l = openLog(t, dir, Options{})
	defer l.Close()
	rec := l.Recovery()
	if rec.Last != next || rec.Cut != "" {
		t.Fatalf("recovery after the full disk: %+v, want last %d and nothing cut", rec, next)
	}
}
