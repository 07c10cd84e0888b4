// Command wukongd is the single binary of wukongd: it serves the SPARQL
// endpoint and console, loads and generates data, parses, explains and runs
// queries, and benchmarks. Each subcommand lives in its own file and
// registers itself with register.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// command is one subcommand of wukongd.
type command struct {
	name    string
	summary string // one line, shown in `wukongd --help`
	// run executes the subcommand with the arguments after its name. It
	// returns flag.ErrHelp when help was asked for (exit status 0).
	run func(args []string) error
}

var commands = map[string]*command{}

// register adds c to the subcommands; called from init functions.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("BUG: duplicate subcommand " + c.name)
	}
	commands[c.name] = c
}

// newFlagSet returns a flag set for a subcommand whose usage prints the
// synopsis and the flags. Parse errors are returned, not fatal.
func newFlagSet(name, synopsis, description string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		w := os.Stderr
		fmt.Fprintf(w, "usage: wukongd %s %s\n\n%s\n", name, synopsis, strings.TrimSpace(description))
		var any bool
		fs.VisitAll(func(*flag.Flag) { any = true })
		if any {
			fmt.Fprintln(w, "\nflags:")
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
	}
	return fs
}

// parseFlags parses args with fs; on -h/--help the flag package prints the
// usage and parseFlags returns flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	return fs.Parse(args)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: wukongd <command> [flags] [args]")
	fmt.Fprintln(w, "\nwukongd is a distributed RDF store and SPARQL 1.1 query service.")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'wukongd <command> --help' for the flags of a command.")
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		usage(os.Stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(os.Stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "wukongd: unknown command %q (see 'wukongd --help')\n", args[0])
		return 2
	}
	err := c.run(args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
	fmt.Fprintf(os.Stderr, "wukongd %s: %s\n", c.name, msg)
	return 1
}
