//go:build linux

package cpugate

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
)

// On Linux a thread has its own nice value (setpriority with a thread's
// ID), so a bulk goroutine that has entered a gate of bulk priority runs
// locked to its thread at the process's nice plus bulkNice: when a query
// (or the client of one on the same machine) wakes up and every processor
// is busy, the kernel's scheduler runs it first instead of sharing the
// processor with the bulk thread for a time slice. Only while queries
// run (within Hold of the latest one's start): a bulk write alone keeps
// the process's priority against the machine's other processes. The thread goes back
// to the process's nice, and to the runtime's pool, when it leaves.

var (
	niceOnce sync.Once
	niceBase int  // the process's nice value
	niceOK   bool // the thread's nice can be set and set back

	// lowered counts the threads at bulk priority: with none, raise
	// (every Leave of Default: each loader chunk, each shard writer's
	// round) returns without its two system calls.
	lowered atomic.Int64
)

// niceProbe finds the process's nice and whether a thread's can be raised
// and lowered back (an unprivileged process can raise it only: then bulk
// threads keep the process's priority). The probe's thread ends with it.
func niceProbe() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		tid := syscall.Gettid()
		p, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
		if err != nil {
			return
		}
		niceBase = 20 - p // the system call's value is 20 - nice
		if niceBase+bulkNice > 19 {
			return
		}
		if syscall.Setpriority(syscall.PRIO_PROCESS, tid, niceBase+bulkNice) != nil {
			return
		}
		niceOK = syscall.Setpriority(syscall.PRIO_PROCESS, tid, niceBase) == nil
	}()
	<-done
}

// lower puts the calling goroutine at bulk priority, unless it is there
// already; it must call raise when it leaves.
func lower() {
	niceOnce.Do(niceProbe)
	if !niceOK {
		return
	}
	// Locked first: the thread whose ID is read must be the one set (a
	// goroutine moved between Gettid and the lock would leave another
	// goroutine's thread lowered, and itself locked at the process's nice).
	// Lock calls nest: when the thread is lowered already, the outer lock
	// is lower's earlier one, and this one is undone.
	runtime.LockOSThread()
	tid := syscall.Gettid()
	if p, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid); err != nil || 20-p != niceBase {
		runtime.UnlockOSThread()
		return // lowered already (or unknown)
	}
	if syscall.Setpriority(syscall.PRIO_PROCESS, tid, niceBase+bulkNice) != nil {
		runtime.UnlockOSThread()
		return
	}
	lowered.Add(1)
}

// raise undoes lower. A lowered thread is locked to its goroutine, so
// the ID read is the lowered thread's; an unlocked goroutine's thread is
// never lowered, whichever it is.
func raise() {
	if !niceOK || lowered.Load() == 0 {
		return
	}
	tid := syscall.Gettid()
	if p, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid); err != nil || 20-p == niceBase {
		return // lower did not lock (its setpriority failed)
	}
	lowered.Add(-1) // the thread leaves bulk priority, or ends with its goroutine
	if syscall.Setpriority(syscall.PRIO_PROCESS, tid, niceBase) != nil {
		return // stays locked: the runtime ends the thread with its goroutine
	}
	runtime.UnlockOSThread()
}
