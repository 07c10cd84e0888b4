package main

import (
	"os"
	"runtime/debug"

	"github.com/rs/zerolog"

	"github.com/wukongd/wukongd/exec"
)

// defaultGCPercent is serve's garbage-collection target. A light query
// leaves 20–30 KB of garbage (the request, the decoded terms, the
// response) over a small live heap (the store, the dictionary and the
// indexes are flat, mostly mapped, regions), so Go's default of 100 runs a
// cycle every few hundred queries: on 2 cores a cycle's mark worker takes
// a core from the queries in flight. 400 cuts the cycles and the GC's CPU
// per query about 5× (service BenchmarkHTTPTail, docs/PERFORMANCE.md); the
// soft memory limit (gcMemoryLimit) keeps a large transient heap from
// growing 5× before it is collected.
const defaultGCPercent = 400

// tuneGC sets the GC target to percent (0: leave Go's, or $GOGC) unless
// $GOGC is set, and a soft memory limit of a quarter of RAM (4× the
// default memory budget of all queries) unless $GOMEMLIMIT is set.
func tuneGC(percent int, log zerolog.Logger) {
	if os.Getenv("GOGC") == "" && percent > 0 {
		debug.SetGCPercent(percent)
		log.Debug().Int("gcPercent", percent).Msg("garbage collection target")
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(4 * exec.DefaultMemory())
	}
	// SetMemoryLimit with a negative value only reads the limit.
	log.Debug().Int64("memoryLimit", debug.SetMemoryLimit(-1)).Msg("soft memory limit")
}
