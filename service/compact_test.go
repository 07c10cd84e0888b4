package service

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wukongd/wukongd/web"
)

// TestCompactionWhileWriting compacts a durable service while writers go
// on: every acknowledged write is in the compacted dataset, the versions
// continue, the delta is gone, the log is retired up to the compacted
// version, and a restart gives the same state.
func TestCompactionWhileWriting(t *testing.T) {
	dir := emptySnapshot(t, "", 3)
	s := openDurable(t, dir)
	const prefix = "PREFIX ex: <http://example.org/>\n"
	for i := 0; i < 50; i++ {
		update(t, s, prefix+fmt.Sprintf(`INSERT DATA { ex:s%d ex:p %d . ex:s%d a ex:C%d }`, i, i, i, i%3))
	}
	update(t, s, prefix+`DELETE DATA { ex:s0 ex:p 0 } ; INSERT DATA { GRAPH ex:g { ex:a ex:b ex:c } }`)
	var wg sync.WaitGroup
	var acked atomic.Int64
	stop := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				u := prefix + fmt.Sprintf(`INSERT DATA { ex:w%d_%d ex:q %d }`, w, i, i)
				if err := s.Update(context.Background(), &web.UpdateRequest{Update: u}); err != nil {
					t.Error(err)
					return
				}
				acked.Add(1)
			}
		}()
	}
	var compacted []uint64
	for r := 0; r < 3; r++ {
		v, err := s.Compact(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		compacted = append(compacted, v)
		// The log keeps no segment with a record the snapshot holds,
		// though the writers went on during the compaction.
		segs, _ := filepath.Glob(filepath.Join(dir, LogDir, "*.wal"))
		for _, seg := range segs {
			first, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(seg), ".wal"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if first <= v {
				t.Fatalf("after compacting version %d the log keeps segment %s", v, filepath.Base(seg))
			}
		}
	}
	close(stop)
	wg.Wait()
	if compacted[2] <= 51 {
		t.Fatalf("compacted versions %v", compacted)
	}
	want, version := state(t, s), s.Version()
	if version != 51+uint64(acked.Load()) {
		t.Fatalf("version %d after %d writes", version, 51+acked.Load())
	}
	if rec := s.LogRecovery(); rec.Records != 0 && rec.First > compacted[2]+1 {
		t.Fatalf("log %+v after compacting version %d", rec, compacted[2])
	}
	if _, err := s.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	g, _ := s.acquire()
	if n := g.ds.DeltaBytes(); n != 0 {
		t.Fatalf("%d delta bytes after a quiet compaction", n)
	}
	g.release()
	if got := state(t, s); got != want {
		t.Fatalf("compaction changed the data:\n%s\nwant\n%s", got, want)
	}
	s.Close()
	s = openDurable(t, dir)
	defer s.Close()
	if got := state(t, s); got != want || s.Version() != version {
		t.Fatalf("after a restart (version %d, want %d):\n%s\nwant\n%s", s.Version(), version, got, want)
	}
	if rec := s.LogRecovery(); rec.Records != 0 {
		t.Fatalf("the log holds %d records after the last compaction", rec.Records)
	}
}
