package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/reason"
	"github.com/wukongd/wukongd/service"
)

func init() {
	register(&command{name: "load", summary: "load RDF files into a snapshot directory", run: runLoad})
}

func runLoad(args []string) error {
	fs := newFlagSet("load", "[--shards N] [--skip-invalid] --out DIR INPUT...", `
Parses RDF files (N-Triples .nt, N-Quads .nq, Turtle .ttl, TriG .trig,
RDF/XML .rdf/.owl/.xml, each optionally .gz) in parallel, builds the shards
and statistics, and publishes a snapshot into DIR atomically (statements in
named graphs go into their graphs: a dataset snapshot): on any error
nothing is published and a snapshot already in DIR stays usable. An INPUT is
a file, a directory (searched recursively) or a glob pattern.`)
	shards := fs.Int("shards", 4, "number of shards")
	out := fs.String("out", "", "snapshot directory (required)")
	skip := fs.Bool("skip-invalid", false, "skip bad statements (reported) instead of failing")
	workers := fs.Int("workers", 0, "parser goroutines (default: GOMAXPROCS)")
	reasoning := fs.String("reasoning", "none", "materialize the default graph's closure: none, rdfs or owl-rl (TBox from the data and --ontology)")
	ontology := fs.String("ontology", "", "an ontology file loaded into the default graph with the data (its TBox drives --reasoning)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		fs.Usage()
		return fmt.Errorf("need --out DIR and at least one input")
	}
	profile, err := reason.ParseProfile(*reasoning)
	if err != nil {
		return err
	}
	if segs, _ := filepath.Glob(filepath.Join(*out, service.LogDir, "*.wal")); len(segs) > 0 {
		// The log's records would be replayed onto the new snapshot.
		return fmt.Errorf("--out %s is a data directory with a write-ahead log (%s): loading over it would mix the new data with the log's writes; load into another directory, or remove %s to discard those writes",
			*out, filepath.Join(*out, service.LogDir), filepath.Join(*out, service.LogDir))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	cfg := loader.Config{Inputs: fs.Args(), Out: *out, Reasoning: profile, Ontology: *ontology,
		BuildOptions: loader.BuildOptions{Shards: *shards, Workers: *workers, SkipInvalid: *skip}}
	log := zerolog.New(os.Stderr).With().Timestamp().Str("cmd", "load").Logger()
	start := time.Now()
	var bar *progressbar.ProgressBar
	if term.IsTerminal(int(os.Stderr.Fd())) {
		bar = progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription("loading"),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish())
		cfg.Progress = func(p loader.Progress) {
			if p.TotalBytes > 0 && bar.GetMax64() != p.TotalBytes {
				bar.ChangeMax64(p.TotalBytes)
			}
			secs := time.Since(start).Seconds()
			bar.Describe(fmt.Sprintf("%d triples, %.0f triples/s", p.Triples, float64(p.Triples)/max(secs, 1e-9)))
			_ = bar.Set64(p.Bytes)
		}
	} else {
		last := time.Now()
		cfg.Progress = func(p loader.Progress) {
			if time.Since(last) < 5*time.Second {
				return
			}
			last = time.Now()
			secs := time.Since(start).Seconds()
			log.Info().Uint64("triples", p.Triples).Float64("triples_per_s", float64(p.Triples)/max(secs, 1e-9)).
				Int64("bytes", p.Bytes).Int64("total_bytes", p.TotalBytes).Msg("loading")
		}
	}
	sum, err := loader.Load(ctx, cfg)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	w := os.Stdout
	fmt.Fprintf(w, "loaded %d files into %s in %.1fs\n", sum.Files, *out, sum.Seconds)
	fmt.Fprintf(w, "  triples read       %d\n", sum.Triples)
	fmt.Fprintf(w, "  duplicates dropped %d\n", sum.Duplicates)
	fmt.Fprintf(w, "  distinct triples   %d\n", sum.Distinct)
	fmt.Fprintf(w, "  distinct terms     %d\n", sum.Terms)
	if sum.Reasoning != "" {
		fmt.Fprintf(w, "  reasoning          %s: %d explicit + %d inferred triples, %d rounds, %.1fs (rules %.1fs: %.0f derived/s)\n",
			sum.Reasoning, sum.Explicit, sum.Inferred, sum.ReasonRounds, sum.ReasonSeconds, sum.MaterializeSeconds,
			float64(sum.Inferred)/max(sum.MaterializeSeconds, 1e-9))
	}
	fmt.Fprintf(w, "  shards             %d\n", sum.Shards)
	fmt.Fprintf(w, "  bytes per triple   %.1f (snapshot %d bytes)\n", sum.BytesPerTriple(), sum.SnapshotBytes)
	fmt.Fprintf(w, "  triples/s          %.0f (parse+intern %.1fs, build %.1fs, write %.1fs)\n",
		float64(sum.Triples)/max(sum.Seconds, 1e-9), sum.ParseSeconds, sum.BuildSeconds, sum.Seconds-sum.ParseSeconds-sum.BuildSeconds)
	if len(sum.Graphs) > 1 {
		fmt.Fprintf(w, "  named graphs       %d (%d statements)\n", len(sum.Graphs)-1, sum.NamedGraphQuads)
		const maxListed = 20
		for i, g := range sum.Graphs {
			if i == maxListed+1 {
				fmt.Fprintf(w, "    … %d more graphs\n", len(sum.Graphs)-i)
				break
			}
			name := "default graph"
			if !g.Name.IsZero() {
				name = g.Name.String()
			}
			fmt.Fprintf(w, "    %-40s %d read, %d distinct\n", name, g.Triples, g.Distinct)
		}
	}
	if sum.Skipped > 0 {
		fmt.Fprintf(w, "  skipped            %d invalid statements; first errors:\n", sum.Skipped)
		for _, e := range sum.FirstErrors {
			fmt.Fprintf(w, "    %s\n", e)
		}
	}
	log.Info().Int("files", sum.Files).Uint64("triples", sum.Triples).Uint64("duplicates", sum.Duplicates).
		Uint64("distinct", sum.Distinct).Uint64("terms", sum.Terms).Int("shards", sum.Shards).
		Int("named_graphs", max(len(sum.Graphs)-1, 0)).Uint64("named_graph_quads", sum.NamedGraphQuads).Uint64("skipped", sum.Skipped).
		Float64("seconds", sum.Seconds).Msg("load done")
	return nil
}
