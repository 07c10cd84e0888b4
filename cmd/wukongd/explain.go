package main

import (
	"context"
	"fmt"
	"os"

	"github.com/wukongd/wukongd/exec"
)

func init() {
	register(&command{name: "explain", summary: "print the physical plan of a query (--analyze: run it and measure)", run: runExplain})
}

func runExplain(args []string) error {
	fs := newFlagSet("explain", "[--analyze] [--json] --data DIR [flags] FILE|-", `
Prints the physical plan of the SPARQL query in FILE for the snapshot in DIR:
the start of each exploration, every step with its direction, execution mode
(local, in-place, fork-join) and estimated rows. With --analyze the query
runs and each step also shows the actual rows, time and fabric reads,
messages and bytes.`)
	var ef engineFlags
	ef.register(fs)
	analyze := fs.Bool("analyze", false, "run the query and show what each step did")
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	q, err := readQuery(fs.Args())
	if err != nil {
		return err
	}
	e, st, opts, err := ef.open()
	if err != nil {
		return err
	}
	defer st.Close()
	defer e.Close()
	opts.Analyze = *analyze
	plan, err := e.Plan(q, opts)
	if err != nil {
		return err
	}
	var a *exec.Analysis
	if *analyze {
		ctx, cancel := context.WithTimeout(context.Background(), ef.timeout)
		defer cancel()
		res, err := e.Run(ctx, q, opts)
		if err != nil {
			return err
		}
		plan, a = res.Plan, res.Analysis
	}
	if *asJSON {
		b, err := exec.ExplainJSON(plan, a, e.Store())
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(os.Stdout, "%s\n", b)
		return err
	}
	_, err = fmt.Fprint(os.Stdout, exec.Explain(plan, a, e.Store()))
	return err
}
