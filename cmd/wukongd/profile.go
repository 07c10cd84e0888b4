package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// startCPUProfile writes a CPU profile to path (none when path is empty)
// until the returned stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	return startRecording(path, "CPU profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// startTrace writes a runtime execution trace to path (none when path is
// empty) until the returned stop is called: per goroutine, when it ran,
// waited for a processor, blocked or assisted the GC (go tool trace).
func startTrace(path string) (stop func(), err error) {
	return startRecording(path, "execution trace", trace.Start, trace.Stop)
}

// startRecording creates path and starts a runtime recording into it
// (what names it in errors); the returned stop ends the recording and
// closes the file. An empty path records nothing.
func startRecording(path, what string, start func(io.Writer) error, end func()) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	fh, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot write the %s: %w", what, err)
	}
	if err := start(fh); err != nil {
		fh.Close()
		return nil, fmt.Errorf("cannot write the %s: %w", what, err)
	}
	return func() { end(); fh.Close() }, nil
}
