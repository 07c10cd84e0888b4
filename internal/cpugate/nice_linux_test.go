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
		want := func(what string, n int) {
			if got := threadNice(t); got != n {
				t.Errorf("%s: nice %d, want %d", what, got, n)
			}
		}
		g.Enter()
		want("no query", niceBase)
		g.Foreground()
		g.Yield()
		want("a query since Enter, after Yield", niceBase+bulkNice)
		g.Leave()
		want("after Leave", niceBase)
		g.Enter()
		want("entered while a query holds", niceBase+bulkNice)
		g.Leave()
		want("after the second Leave", niceBase)
	}()
	<-done
}
