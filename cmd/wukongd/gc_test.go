package main

import (
	"context"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// The soft memory limit is the live heap plus the budget plus the slack,
// and follows the write delta as it grows.
func TestLimitHeapFollowsDelta(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const budget = 1 << 30
	var delta atomic.Uint64
	delta.Store(10 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	limitHeap(ctx, budget, delta.Load, zerolog.Nop())
	l0 := debug.SetMemoryLimit(-1)
	if l0 < budget+heapSlack || l0 > budget+heapSlack+(1<<30) {
		t.Fatalf("limit %d, want budget %d + slack %d + the live heap", l0, budget, heapSlack)
	}
	delta.Add(100 << 20)
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) != l0+100<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d after the delta grew 100 MiB, want %d", debug.SetMemoryLimit(-1), l0+100<<20)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// No budget (--max-memory < 0): the limit is left as it was.
	debug.SetMemoryLimit(7 << 30)
	limitHeap(ctx, -1, delta.Load, zerolog.Nop())
	if l := debug.SetMemoryLimit(-1); l != 7<<30 {
		t.Fatalf("limit %d with no budget, want it untouched", l)
	}
}
