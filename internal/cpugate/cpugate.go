// Package cpugate shares the processors between bulk work and queries.
//
// A big write (a Graph Store POST of millions of triples: its parse, its
// sort, its per-shard write) runs on as many goroutines as there are
// processors — but while queries run, a query that finds every processor
// busy waits for the scheduler's time slice (10 ms), and for the network
// poll that only an idle processor does at once. So bulk goroutines pass
// through a gate: at most GOMAXPROCS of them run while no query has
// started for Hold, at most GOMAXPROCS−1 (at least 1) while queries run,
// and a bulk goroutine checks the gate at its yield points (Yield), every
// few tens of microseconds of work, giving its processor back when it is
// one too many. A bulk goroutine of Default also runs at a lower
// priority (a thread nice value bulkNice above the process's, on Linux)
// while queries run, until Leave, so that a query that wakes up while the processors
// are busy — with other processes' work, or with the one bulk goroutine
// the gate lets run beside queries — gets one at once.
package cpugate

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Hold is how long after a query starts the processor it may need stays
// kept from bulk work (queries of a busy client come back to back).
const Hold = 100 * time.Millisecond

// bulkNice is how much nicer than the process a bulk goroutine's thread
// runs (Default's): at +10 the kernel gives a thread of the process's
// priority ~10 times the processor share when both want it.
const bulkNice = 10

// Gate counts the bulk goroutines running. The zero value is not ready:
// use New.
type Gate struct {
	mu      sync.Mutex
	active  int
	fg      atomic.Int64 // the start of the latest query (UnixNano)
	follow  *Gate        // whose queries count (Follow); nil: its own
	now     func() int64
	waiters []chan struct{} // Enter's waiters, first come first woken
	nice    bool            // its goroutines run at bulk priority (Default)
}

// New returns a gate.
func New() *Gate { return &Gate{now: func() int64 { return time.Now().UnixNano() }} }

// Default is the process's gate: the service marks queries on it, the
// loader's and the graph store's bulk goroutines pass through it.
var Default = func() *Gate {
	g := New()
	g.nice = true
	return g
}()

// Writers is the gate of small writes (an update request's parse and
// apply): it follows Default's queries, so that while queries run the
// writers, however many, use one processor fewer than there are. It is a
// gate of its own because a write may start bulk work (a big insertion's
// per-shard write passes Default): one gate for both would let a writer
// wait for a slot it holds.
var Writers = Follow(Default)

// Follow returns a gate of its own count that keeps a processor for the
// queries marked on g.
func Follow(g *Gate) *Gate { return &Gate{now: g.now, follow: g} }

// Foreground records that a query starts now.
func (g *Gate) Foreground() {
	t := g.now()
	for old := g.fg.Load(); t > old && !g.fg.CompareAndSwap(old, t); old = g.fg.Load() {
	}
}

// limit is how many bulk goroutines may run now, and how long until the
// query's hold ends (0: none holds a processor). The caller holds mu.
func (g *Gate) limit() (int, time.Duration) {
	n := runtime.GOMAXPROCS(0)
	fg := &g.fg
	if g.follow != nil {
		fg = &g.follow.fg
	}
	if t := fg.Load(); t != 0 {
		if left := int64(Hold) - (g.now() - t); left > 0 && n > 1 {
			return n - 1, time.Duration(left)
		}
	}
	return n, 0
}

// Enter waits until one more bulk goroutine may run and counts it. A
// waiter sleeps until a Leave makes room (or the query's hold ends), so
// many waiters cost nothing while they wait.
func (g *Gate) Enter() { _ = g.EnterContext(context.Background()) }

// EnterContext is Enter that gives up when ctx ends first (its error;
// then the goroutine is not counted and must not Leave). The goroutine
// must Leave on its own (a gate of bulk priority locks it to its thread).
func (g *Gate) EnterContext(ctx context.Context) error {
	if err := g.enter(ctx); err != nil {
		return err
	}
	if g.nice && g.queries() {
		lower()
	}
	return nil
}

// queries reports whether a query holds a processor (within Hold of its
// start).
func (g *Gate) queries() bool {
	g.mu.Lock()
	_, hold := g.limit()
	g.mu.Unlock()
	return hold > 0
}

// enter is EnterContext without the priority.
func (g *Gate) enter(ctx context.Context) error {
	g.mu.Lock()
	for {
		n, hold := g.limit()
		if g.active < n {
			g.active++
			g.mu.Unlock()
			return nil
		}
		ch := make(chan struct{}, 1)
		g.waiters = append(g.waiters, ch)
		g.mu.Unlock()
		var timeout <-chan time.Time
		var t *time.Timer
		if hold > 0 {
			t = time.NewTimer(hold)
			timeout = t.C
		}
		var err error
		select {
		case <-ch:
		case <-timeout:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if t != nil {
			t.Stop()
		}
		g.mu.Lock()
		if i := slices.Index(g.waiters, ch); i >= 0 { // not woken by a Leave
			g.waiters = slices.Delete(g.waiters, i, i+1)
		} else if err != nil {
			g.wake() // pass the wake-up on
		}
		if err != nil {
			g.mu.Unlock()
			return err
		}
	}
}

// Leave counts a bulk goroutine out.
func (g *Gate) Leave() {
	if g.nice {
		raise()
	}
	g.mu.Lock()
	g.active--
	g.wake()
	g.mu.Unlock()
}

// wake wakes the first waiter if one more may run. The caller holds mu.
func (g *Gate) wake() {
	if len(g.waiters) == 0 {
		return
	}
	if n, _ := g.limit(); g.active < n {
		ch := g.waiters[0]
		g.waiters = slices.Delete(g.waiters, 0, 1)
		ch <- struct{}{}
	}
}

// Yield is a bulk goroutine's yield point (it has entered): if more run
// than may, it leaves and waits to enter again; else it lets any other
// goroutine waiting for its processor run first (runtime.Gosched).
func (g *Gate) Yield() {
	g.mu.Lock()
	n, hold := g.limit()
	over := g.active > n
	if over {
		g.active--
	}
	g.mu.Unlock()
	if g.nice && hold > 0 {
		lower() // a query started since Enter
	}
	if over {
		_ = g.enter(context.Background())
		return
	}
	runtime.Gosched()
}
