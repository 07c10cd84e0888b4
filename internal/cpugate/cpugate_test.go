package cpugate

import (
	"context"
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

// TestFollowerKeepsAProcessorForItsLeadersQueries: a gate made by
// Follow counts its own goroutines but keeps a processor for the queries
// marked on its leader; a waiter sleeps until a Leave wakes it, and
// EnterContext gives up when its context ends.
func TestFollowerKeepsAProcessorForItsLeadersQueries(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var clock atomic.Int64
	clock.Store(1)
	lead := &Gate{now: clock.Load}
	f := Follow(lead)
	lead.Enter() // the leader's count is not the follower's
	defer lead.Leave()
	f.Enter()
	f.Enter()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := f.EnterContext(ctx); err == nil {
		t.Fatal("a third goroutine entered a follower of 2 processors")
	}
	f.Leave()
	lead.Foreground() // a query: the follower keeps one processor free
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if err := f.EnterContext(ctx2); err == nil {
		t.Fatal("a follower let 2 goroutines run while its leader's query runs on 2 processors")
	}
	entered := make(chan struct{})
	go func() {
		f.Enter()
		close(entered)
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case <-entered:
		t.Fatal("entered while the only processor left to writers was taken")
	default:
	}
	f.Leave() // wakes the waiter
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("a Leave did not wake the waiter")
	}
	f.Leave()
	if f.active != 0 || len(f.waiters) != 0 {
		t.Fatalf("%d counted and %d waiting at the end", f.active, len(f.waiters))
	}
}
