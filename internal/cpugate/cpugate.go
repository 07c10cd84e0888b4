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
// one too many.
package cpugate

import (
	"runtime"
	"sync"
	"time"
)

// Hold is how long after a query starts the processor it may need stays
// kept from bulk work (queries of a busy client come back to back).
const Hold = 100 * time.Millisecond

// Gate counts the bulk goroutines running. The zero value is not ready:
// use New.
type Gate struct {
	mu     sync.Mutex
	active int
	fg     int64 // the start of the latest query (UnixNano)
	now    func() int64
}

// New returns a gate.
func New() *Gate { return &Gate{now: func() int64 { return time.Now().UnixNano() }} }

// Default is the process's gate: the service marks queries on it, the
// loader's and the graph store's bulk goroutines pass through it.
var Default = New()

// Foreground records that a query starts now.
func (g *Gate) Foreground() {
	t := g.now()
	g.mu.Lock()
	if t > g.fg {
		g.fg = t
	}
	g.mu.Unlock()
}

// limit is how many bulk goroutines may run now. The caller holds mu.
func (g *Gate) limit() int {
	n := runtime.GOMAXPROCS(0)
	if g.fg != 0 && g.now()-g.fg < int64(Hold) {
		n--
	}
	return max(1, n)
}

// Enter waits until one more bulk goroutine may run and counts it.
func (g *Gate) Enter() {
	for {
		g.mu.Lock()
		if g.active < g.limit() {
			g.active++
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		time.Sleep(200 * time.Microsecond)
	}
}

// Leave counts a bulk goroutine out.
func (g *Gate) Leave() {
	g.mu.Lock()
	g.active--
	g.mu.Unlock()
}

// Yield is a bulk goroutine's yield point (it has entered): if more run
// than may, it leaves and waits to enter again; else it lets any other
// goroutine waiting for its processor run first (runtime.Gosched).
func (g *Gate) Yield() {
	g.mu.Lock()
	over := g.active > g.limit()
	if over {
		g.active--
	}
	g.mu.Unlock()
	if over {
		g.Enter()
		return
	}
	runtime.Gosched()
}
