package main

import (
	"fmt"
	"os"
	"runtime/pprof"
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
