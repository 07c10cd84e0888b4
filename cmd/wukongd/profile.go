package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// startCPUProfile writes a CPU profile to path (none when path is empty)
// until the returned stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	fh, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot write the CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(fh); err != nil {
		fh.Close()
		return nil, fmt.Errorf("cannot write the CPU profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); fh.Close() }, nil
}

// startTrace writes a runtime execution trace to path (none when path is
// empty) until the returned stop is called: per goroutine, when it ran,
// waited for a processor, blocked or assisted the GC (go tool trace).
func startTrace(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	fh, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot write the execution trace: %w", err)
	}
	if err := trace.Start(fh); err != nil {
		fh.Close()
		return nil, fmt.Errorf("cannot write the execution trace: %w", err)
	}
	return func() { trace.Stop(); fh.Close() }, nil
}
