package cpugate

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGateKeepsAProcessorForQueries: with no query, GOMAXPROCS bulk
// goroutines run at once; within Hold of a query's start one fewer (at
// least one), the extra one leaving at its next yield point; after Hold
// all of them again.
func TestGateKeepsAProcessorForQueries(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	var clock atomic.Int64
	clock.Store(1)
	g := &Gate{now: clock.Load}
	var running, peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	worker := func() {
		defer wg.Done()
		g.Enter()
		defer g.Leave()
		for {
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(100 * time.Microsecond)
			running.Add(-1)
			select {
			case <-stop:
				return
			default:
			}
			g.Yield()
		}
	}
	measure := func() int64 {
		time.Sleep(100 * time.Millisecond) // the workers pass their yield points
		peak.Store(0)
		time.Sleep(200 * time.Millisecond)
		return peak.Load()
	}
	for range 5 {
		wg.Add(1)
		go worker()
	}
	if p := measure(); p != 3 {
		t.Fatalf("no query: %d bulk goroutines ran at once, want 3", p)
	}
	g.Foreground()
	if p := measure(); p != 2 {
		t.Fatalf("a query running: %d bulk goroutines ran at once, want 2", p)
	}
	clock.Add(int64(Hold))
	if p := measure(); p != 3 {
		t.Fatalf("Hold after the query: %d bulk goroutines ran at once, want 3", p)
	}
	runtime.GOMAXPROCS(1)
	g.Foreground()
	if p := measure(); p != 1 {
		t.Fatalf("one processor and a query: %d bulk goroutines ran at once, want 1", p)
	}
	close(stop)
	wg.Wait()
}
