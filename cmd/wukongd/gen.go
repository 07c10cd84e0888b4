package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/wukongd/wukongd/datasets"
)

func init() {
	register(&command{name: "gen", summary: "generate a data set (LUBM) as N-Triples", run: runGen})
}

const genDescription = `
Generates a LUBM data set: exactly the triples that UBA 1.7, the original
LUBM generator, writes for "-univ N -index I -seed S -onto
http://swat.cse.lehigh.edu/onto/univ-bench.owl" (University<I> …
University<I+N-1>), converted to N-Triples: each file's owl:Ontology header
is named file:///University<u>_<d>.owl, and repeated triples are dropped.
The same --univ, --index and --seed always give byte-identical output.

The output is N-Triples; a FILE ending in .gz is gzip-compressed. "-" writes
to standard output. A FILE is written under a temporary name and renamed when
complete, so it never holds a partial data set.

With --layout uba, --out is a directory (created if missing) that receives
UBA's own layout instead: one RDF/XML file per department,
University<u>_<d>.owl, byte for byte the files UBA writes.

Examples:
  wukongd gen lubm --univ 100 --out lubm100.nt.gz
  wukongd gen lubm --univ 5 --layout uba --out lubm5-owl/`

func runGen(args []string) error {
	fs := newFlagSet("gen", "lubm --univ N [--index I] [--seed S] [--workers W] [--layout nt|uba] --out FILE|-|DIR", genDescription)
	univ := fs.Int("univ", 1, "number of universities (the N of LUBM-N)")
	index := fs.Int("index", 0, "index of the first university (UBA's -index)")
	seed := fs.Int64("seed", 0, "UBA's random seed, 0 to 2147483647")
	workers := fs.Int("workers", 0, "universities generated in parallel (0: one per CPU)")
	out := fs.String("out", "", `output file (".gz" suffix: gzip), or "-" for standard output; with --layout uba a directory`)
	layout := fs.String("layout", "nt", `"nt": one N-Triples stream; "uba": UBA's RDF/XML files, one per department`)
	quiet := fs.Bool("quiet", false, "no progress bar or summary on standard error")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		return errors.New(`missing data set name: want "wukongd gen lubm …"`)
	}
	if args[0] != "lubm" {
		return fmt.Errorf("unknown data set %q (known: lubm)", args[0])
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if *out == "" {
		return errors.New(`missing --out FILE (or "-" for standard output)`)
	}
	cfg := datasets.LUBMConfig{Universities: *univ, Index: *index, Seed: *seed, Workers: *workers, Gzip: strings.HasSuffix(*out, ".gz")}
	showProgress := !*quiet && term.IsTerminal(int(os.Stderr.Fd()))
	if showProgress {
		bar := progressbar.NewOptions(*univ,
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription("universities"),
			progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond))
		cfg.Progress = func(done, _ int) { _ = bar.Set(done) }
	}

	start := time.Now()
	var n int64
	var err error
	switch *layout {
	case "nt":
	case "uba":
		if *out == "-" {
			return errors.New(`--layout uba writes files: --out must be a directory, not "-"`)
		}
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return fmt.Errorf("cannot create %s: %w", *out, err)
		}
		files, err := datasets.WriteUBAFiles(*out, cfg)
		if err != nil {
			return err
		}
		if !*quiet {
			fmt.Fprintf(os.Stderr, "LUBM-%d (index %d, seed %d): %d UBA files in %s in %.2fs\n",
				*univ, *index, *seed, files, *out, time.Since(start).Seconds())
		}
		return nil
	default:
		return fmt.Errorf(`unknown --layout %q (want "nt" or "uba")`, *layout)
	}
	if *out == "-" {
		n, err = datasets.GenerateLUBM(os.Stdout, cfg)
	} else {
		n, err = writeFileAtomic(*out, func(w io.Writer) (int64, error) { return datasets.GenerateLUBM(w, cfg) })
	}
	if err != nil {
		return err
	}
	if !*quiet {
		d := time.Since(start)
		fmt.Fprintf(os.Stderr, "LUBM-%d (index %d, seed %d): %d triples in %.2fs (%.0f triples/s)\n",
			*univ, *index, *seed, n, d.Seconds(), float64(n)/d.Seconds())
	}
	return nil
}

// writeFileAtomic calls write with a temporary file next to path and renames
// it to path when write and the close succeed; otherwise it removes it. A
// path that exists and is not a regular file (/dev/null, a named pipe) is
// written in place, never replaced.
func writeFileAtomic(path string, write func(io.Writer) (int64, error)) (int64, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return 0, fmt.Errorf("cannot write %s: is a directory", path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return 0, fmt.Errorf("cannot open %s: %w", path, err)
		}
		n, err := write(f)
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("cannot write %s: %w", path, cerr)
		}
		return n, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return 0, fmt.Errorf("cannot create %s: %w", path, err)
	}
	n, err := write(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("cannot write %s: %w", path, cerr)
	}
	if err == nil {
		if err = os.Chmod(f.Name(), 0o644); err == nil {
			err = os.Rename(f.Name(), path)
		}
		if err != nil {
			err = fmt.Errorf("cannot write %s: %w", path, err)
		}
	}
	if err != nil {
		os.Remove(f.Name())
		return 0, err
	}
	return n, nil
}
