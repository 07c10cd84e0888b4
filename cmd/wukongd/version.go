package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

func init() {
	register(&command{name: "version", summary: "print the version of wukongd and of Go", run: runVersion})
}

func runVersion(args []string) error {
	fs := newFlagSet("version", "", "Prints the module version of wukongd and the Go version it was built with.")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	fmt.Printf("wukongd %s %s %s/%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
