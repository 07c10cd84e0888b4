package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/results"
	"github.com/wukongd/wukongd/sparql"
)

func init() {
	register(&command{name: "query", summary: "run a SPARQL query on a snapshot and print the results", run: runQuery})
}

// engineFlags are the flags query and explain share.
type engineFlags struct {
	data      string
	mode      string
	threshold float64
	timeout   time.Duration
	workers   int
	infer     bool
}

func (f *engineFlags) register(fs interface {
	StringVar(*string, string, string, string)
	Float64Var(*float64, string, float64, string)
	DurationVar(*time.Duration, string, time.Duration, string)
	IntVar(*int, string, int, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.StringVar(&f.data, "data", "", "snapshot directory written by 'wukongd load' (required)")
	fs.StringVar(&f.mode, "mode", "auto", "execution mode of the steps: auto, in-place or fork-join")
	fs.Float64Var(&f.threshold, "fork-threshold", 0, "rows from which a step forks in auto mode (0: from the cost model)")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "query timeout")
	fs.IntVar(&f.workers, "workers", 0, "worker goroutines per node (0: GOMAXPROCS)")
	fs.BoolVar(&f.infer, "infer", true, "include inferred triples (a snapshot loaded with --reasoning); -infer=false: explicit triples only")
}

// open opens the snapshot and starts an engine on it (close the engine,
// then the dataset).
func (f *engineFlags) open() (*exec.Engine, *graphstore.Dataset, exec.Options, error) {
	var opts exec.Options
	if f.data == "" {
		return nil, nil, opts, errors.New("--data DIR is required")
	}
	m, ok := planner.ParseMode(f.mode)
	if !ok {
		return nil, nil, opts, fmt.Errorf("--mode %q: want auto, in-place or fork-join", f.mode)
	}
	opts.Mode, opts.ForkThreshold, opts.Explicit = m, f.threshold, !f.infer
	// As serve: mapped without reading the data (wukongd info verifies
	// the checksums).
	ds, err := graphstore.OpenDataset(f.data, graphstore.OpenOptions{SkipChecksums: true})
	if err != nil {
		return nil, nil, opts, fmt.Errorf("cannot open the snapshot: %w", err)
	}
	e, err := exec.NewDatasetEngine(ds, exec.Config{Workers: f.workers})
	if err != nil {
		ds.Close()
		return nil, nil, opts, err
	}
	return e, ds, opts, nil
}

// readQuery reads and parses the query of FILE, or of stdin for "-".
func readQuery(args []string) (*sparql.Query, error) {
	if len(args) != 1 {
		return nil, errors.New("want exactly one query FILE (or - for stdin)")
	}
	var text []byte
	var err error
	if args[0] == "-" {
		text, err = io.ReadAll(os.Stdin)
	} else {
		text, err = os.ReadFile(args[0])
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the query: %w", err)
	}
	q, err := sparql.ParseQuery(string(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", args[0], err)
	}
	return q, nil
}

func runQuery(args []string) error {
	fs := newFlagSet("query", "--data DIR [flags] FILE|-", `
Runs the SPARQL query in FILE (or read from stdin with -) on the snapshot in
DIR and prints the results in a SPARQL 1.1 results format. A constant the
data does not contain matches nothing (it is not an error).`)
	var ef engineFlags
	ef.register(fs)
	format := fs.String("format", "", "results format: json, xml, csv or tsv (SELECT, default tsv; ASK, default json); ntriples, turtle, jsonld or rdfxml (CONSTRUCT, DESCRIBE; default ntriples)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	q, err := readQuery(fs.Args())
	if err != nil {
		return err
	}
	f, err := resultFormat(q.Form, *format)
	if err != nil {
		return err
	}
	e, st, opts, err := ef.open()
	if err != nil {
		return err
	}
	defer st.Close()
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), ef.timeout)
	defer cancel()
	res, err := e.Run(ctx, q, opts)
	if err != nil {
		return err
	}
	return writeResult(os.Stdout, f, res)
}

// resultFormat chooses the output format of a query form (name "" for
// the form's default).
func resultFormat(form sparql.Form, name string) (results.Format, error) {
	offers, def, want := results.SolutionFormats, "tsv", "json, xml, csv or tsv"
	switch form {
	case sparql.FormAsk:
		offers, def, want = results.BooleanFormats, "json", "json or xml"
	case sparql.FormConstruct, sparql.FormDescribe:
		offers, def, want = results.GraphFormats, "ntriples", "ntriples, turtle, jsonld or rdfxml"
	}
	if name == "" {
		name = def
	}
	f := results.ParseFormat(name, offers)
	if f == results.FormatNone {
		return f, fmt.Errorf("--format %q: a %s query's results are written as %s", name, form, want)
	}
	return f, nil
}

// writeResult streams res in format f: solutions, the boolean of ASK, or
// the graph of CONSTRUCT and DESCRIBE.
func writeResult(w io.Writer, f results.Format, res *exec.Result) error {
	switch res.Form {
	case sparql.FormAsk:
		return results.WriteBoolean(f, w, res.Boolean)
	case sparql.FormConstruct, sparql.FormDescribe:
		gw, err := results.NewGraphWriter(f, w, results.GraphOptions{})
		if err != nil {
			return err
		}
		for i := 0; i < res.NumTriples(); i++ {
			if err := gw.WriteTriple(res.Triple(i)); err != nil {
				return err
			}
		}
		return gw.Close()
	}
	sw, err := results.NewSolutionWriter(f, w)
	if err != nil {
		return err
	}
	if err := sw.WriteHead(res.VarNames()); err != nil {
		return err
	}
	var row []rdf.Term
	for i := 0; i < res.Len(); i++ {
		row = res.Row(i, row)
		if err := sw.WriteRow(row); err != nil {
			return err
		}
	}
	return sw.Close()
}
