package wal

import (
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
