package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/wukongd/wukongd/loader"
)

func init() {
	register(&command{name: "export", summary: "write a snapshot's default graph (with reasoning: the closure) as N-Triples", run: runExport})
}

func runExport(args []string) error {
	fs := newFlagSet("export", "--out FILE DIR", `Writes the default graph of the snapshot in DIR to FILE as N-Triples
(gzip if FILE ends in .gz), atomically. On a snapshot loaded with
--reasoning that is the closure, explicit and inferred triples: the data
a store without a reasoner loads to answer the same queries (bench
--reasoning feeds Virtuoso and Oxigraph this way). Named graphs are not
written.`)
	out := fs.String("out", "", "N-Triples file to write (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *out == "" {
		fs.Usage()
		return fmt.Errorf("export: want --out FILE and one snapshot directory")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	n, err := loader.ExportFile(ctx, fs.Arg(0), *out)
	if err != nil {
		return err
	}
	fmt.Printf("exported %d triples into %s\n", n, *out)
	return nil
}
