package wal

import (
	"os"
	"sync"
	"testing"
)

// BenchmarkAppendSync is one writer: every record waits for its own
// fdatasync (the latency floor of a durable write).
func BenchmarkAppendSync(b *testing.B) {
	l := openLog(b, b.TempDir(), Options{})
	defer l.Close()
	payload := make([]byte, 120) // about a one-triple INSERT DATA record
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := l.Append(uint64(i+1), payload).Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendGroup16 is 16 writers appending in LSN order and waiting
// concurrently: records share syncs (group commit).
func BenchmarkAppendGroup16(b *testing.B) {
	l := openLog(b, b.TempDir(), Options{})
	defer l.Close()
	payload := make([]byte, 120)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	var mu sync.Mutex
	next := uint64(1)
	var wg sync.WaitGroup
	per := (b.N + 15) / 16
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				mu.Lock()
				c := l.Append(next, payload)
				next++
				mu.Unlock()
				if err := c.Wait(); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkAppendOneWriter: one goroutine appending a record at a time
// and waiting for it (the Raft log's append loop), by Append+Wait (the
// writer goroutine writes and syncs) and by AppendNow (the caller does).
// WAL_BENCH_DIR picks the directory (a tmpfs isolates the hand-offs from
// the disk).
func BenchmarkAppendOneWriter(b *testing.B) {
	for _, now := range []bool{false, true} {
		name := "Append+Wait"
		if now {
			name = "AppendNow"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			if d := os.Getenv("WAL_BENCH_DIR"); d != "" {
				var err error
				if dir, err = os.MkdirTemp(d, "walbench"); err != nil {
					b.Fatal(err)
				}
				defer os.RemoveAll(dir)
			}
			l := openLog(b, dir, Options{})
			defer l.Close()
			p := make([]byte, 750)
			lsn := l.NextLSN()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var err error
				if now {
					err = l.AppendNow(lsn, [][]byte{p})
				} else {
					err = l.Append(lsn, p).Wait()
				}
				if err != nil {
					b.Fatal(err)
				}
				lsn++
			}
		})
	}
}
