//go:build linux

package cpugate

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

func threadNice(t *testing.T) int {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - p
}

// TestBulkPriorityWhileQueriesRun: a goroutine that enters a gate of bulk
// priority while a query holds a processor runs at bulkNice above the
// process until it leaves, and its thread is back at the process's nice
// after; with no query it keeps the process's nice.
func TestBulkPriorityWhileQueriesRun(t *testing.T) {
	niceOnce.Do(niceProbe)
	if !niceOK {
		t.Skip("this process cannot set a thread's nice and set it back")
	}
	var now time.Duration = time.Second
	g := &Gate{now: func() int64 { return int64(now) }, nice: true}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // to read the same thread's nice after Leave
		defer runtime.UnlockOSThread()
		g.Enter()
		if n := threadNice(t); n != niceBase {
			t.Errorf("no query: nice %d, want the process's %d", n, niceBase)
		}
		g.Foreground()
		g.Yield()
		if n := threadNice(t); n != niceBase+bulkNice {
			t.Errorf("a query since Enter: nice %d after Yield, want %d", n, niceBase+bulkNice)
		}
		g.Leave()
		if n := threadNice(t); n != niceBase {
			t.Errorf("after Leave: nice %d, want %d", n, niceBase)
		}
		g.Enter()
		if n := threadNice(t); n != niceBase+bulkNice {
			t.Errorf("entered while a query holds: nice %d, want %d", n, niceBase+bulkNice)
		}
		g.Leave()
		if n := threadNice(t); n != niceBase {
			t.Errorf("after Leave: nice %d, want %d", n, niceBase)
		}
	}()
	<-done
}
