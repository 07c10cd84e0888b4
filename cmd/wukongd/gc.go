package main

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/rs/zerolog"

	"github.com/wukongd/wukongd/exec"
)

// defaultGCPercent is serve's garbage-collection target. A light query
// leaves 20–30 KB of garbage (the request, the decoded terms, the
// response) over a small live heap (the store, the dictionary and the
// indexes are flat, mostly mapped, regions), so Go's default of 100 runs a
// cycle every few hundred queries: on 2 cores a cycle's mark worker takes
// a core from the queries in flight. 400 cuts the cycles and the GC's CPU
// per query about 5× (service BenchmarkHTTPTail, docs/PERFORMANCE.md). At
// 400 the heap may grow to 5× what is live before a cycle, so the soft
// memory limit (limitHeap) is what keeps it within the server's budget.
const defaultGCPercent = 400

// heapSlack is what the soft memory limit allows beyond the store's heap
// and the queries' budget: goroutine stacks, connection buffers, the
// byte-bounded parse, plan and regex caches, the runtime's own metadata.
const heapSlack = 192 << 20

// tuneGC sets the GC target to percent (0: leave Go's, or $GOGC) unless
// $GOGC is set. Until limitHeap knows the store, the soft memory limit is
// a quarter of RAM (4× the default budget of all queries).
func tuneGC(percent int, log zerolog.Logger) {
	if os.Getenv("GOGC") == "" && percent > 0 {
		debug.SetGCPercent(percent)
		log.Debug().Int("gcPercent", percent).Msg("garbage collection target")
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(4 * exec.DefaultMemory())
	}
}

// limitHeap keeps the soft memory limit at what the server may
// legitimately hold: the heap live once the store is open (measured after
// a collection), plus the write delta as it grows and shrinks (delta, nil
// in a cluster node), plus the memory all queries together may account
// (budget, --max-memory; ≤ 0 keeps the quarter of RAM), plus heapSlack.
// Under attack the queries' accounted memory is capped at the budget, so
// the heap stays near it instead of growing 5× at GOGC 400 (a 2 GB budget
// reached 5.6 GB RSS with a fixed 6 GiB limit). The limit is refreshed
// every second until ctx ends; $GOMEMLIMIT, when set, wins.
func limitHeap(ctx context.Context, budget int64, delta func() uint64, log zerolog.Logger) {
	if os.Getenv("GOMEMLIMIT") != "" || budget <= 0 {
		log.Debug().Int64("memoryLimit", debug.SetMemoryLimit(-1)).Msg("soft memory limit")
		return
	}
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	var live int64
	if sample[0].Value.Kind() == metrics.KindUint64 {
		live = int64(sample[0].Value.Uint64())
	}
	var delta0 int64
	if delta != nil {
		delta0 = int64(delta())
	}
	base := max(live-delta0, 0) + budget + heapSlack
	set := func() int64 {
		limit := base
		if delta != nil {
			limit += int64(delta())
		}
		debug.SetMemoryLimit(limit)
		return limit
	}
	log.Debug().Int64("liveHeap", live).Int64("memoryLimit", set()).Msg("soft memory limit")
	if delta == nil {
		return
	}
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				set()
			}
		}
	}()
}
