package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
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
	memory := fs.String("memory", "", "memory budget for the build's buffers, e.g. 4G or 512M; beyond it sorted runs are spilled beside --out (default: a quarter of the RAM)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the load to this file")
	tracefile := fs.String("trace", "", "write an execution trace of the load to this file (go tool trace)")
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
	var budget int64
	if *memory != "" {
		var err error
		if budget, err = parseByteSize(*memory); err != nil {
			return fmt.Errorf("bad --memory: %w", err)
		}
	}
	if os.Getenv("GOMEMLIMIT") == "" && *reasoning == "none" {
		// A soft limit the GC keeps the heap under: what the budget
		// bounds, plus the dictionary, the provisional-to-final map and
		// the table of the shard being built, which it does not. Without
		// it the heap may grow to twice what is live between cycles (the
		// LUBM-2560 load, 84 M terms, peaked at 6.8 GB with --memory 2G
		// and this limit).
		debug.SetMemoryLimit(3*cmp.Or(budget, loader.DefaultMemory()) + 1<<30)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	stopProfile, err := startCPUProfile(*cpuprofile)
	if err != nil {
		return err
	}
	defer stopProfile()
	stopTrace, err := startTrace(*tracefile)
	if err != nil {
		return err
	}
	defer stopTrace()

	cfg := loader.Config{Inputs: fs.Args(), Out: *out, Reasoning: profile, Ontology: *ontology, Memory: budget,
		BuildOptions: loader.BuildOptions{Shards: *shards, Workers: *workers, SkipInvalid: *skip}}
	log := zerolog.New(os.Stderr).With().Timestamp().Str("cmd", "load").Logger()
	start := time.Now()
	var bar *progressbar.ProgressBar
	meter := &loadMeter{start: start}
	if term.IsTerminal(int(os.Stderr.Fd())) {
		bar = progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription("loading"),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish())
		cfg.Progress = func(p loader.Progress) {
			bar.Describe(meter.line(p))
			_ = bar.Add(1)
		}
	} else {
		last := time.Now()
		phases := newPhaseClock(start)
		defer func() { phases.end(log) }()
		cfg.Progress = func(p loader.Progress) {
			phases.at(log, cmp.Or(p.Phase, "parse"))
			if time.Since(last) < 5*time.Second {
				return
			}
			last = time.Now()
			meter.line(p)
			log.Info().Str("phase", meter.phase).Uint64("triples", p.Triples).Float64("triples_per_s", meter.rate).
				Int64("bytes", p.Bytes).Int64("total_bytes", p.TotalBytes).Uint64("done", p.Done).Uint64("total", p.Total).
				Uint64("spilled_bytes", p.Spilled).Float64("eta_s", meter.eta.Seconds()).Msg("loading")
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
	fmt.Fprintf(w, "  triples/s          %.0f (parse+intern %.1fs, build and write %.1fs)\n",
		float64(sum.Triples)/max(sum.Seconds, 1e-9), sum.ParseSeconds, sum.BuildSeconds)
	fmt.Fprintf(w, "  spilled            %d bytes of sorted runs (budget %s)\n", sum.Spilled, formatByteSize(cmp.Or(budget, loader.DefaultMemory())))
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

// phaseClock logs, as each phase of a load ends, its wall time and the
// process's CPU time (user+system) during it: their ratio is how many
// cores the phase kept busy, the figure that a loaded machine leaves
// comparable when the wall time is not.
type phaseClock struct {
	phase     string
	wall      time.Time
	cpu       time.Duration
	totalWall time.Time
	totalCPU  time.Duration
}

func newPhaseClock(start time.Time) *phaseClock {
	c := processCPU()
	return &phaseClock{wall: start, cpu: c, totalWall: start, totalCPU: c}
}

func (c *phaseClock) at(log zerolog.Logger, phase string) {
	if phase == c.phase {
		return
	}
	if c.phase != "" {
		c.log(log)
	}
	c.phase, c.wall, c.cpu = phase, time.Now(), processCPU()
}

func (c *phaseClock) end(log zerolog.Logger) {
	if c.phase != "" {
		c.log(log)
	}
	c.phase = "total"
	c.wall, c.cpu = c.totalWall, c.totalCPU
	c.log(log)
}

func (c *phaseClock) log(log zerolog.Logger) {
	wall, cpu := time.Since(c.wall).Seconds(), (processCPU() - c.cpu).Seconds()
	log.Info().Str("phase", c.phase).Float64("wall_s", wall).Float64("cpu_s", cpu).
		Float64("cores_busy", cpu/max(wall, 1e-9)).Msg("phase done")
}

// processCPU is the user+system CPU time this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadMeter turns a load's progress into a line: the phase, what is done
// of it, the rate and an estimate of the phase's remaining time.
type loadMeter struct {
	start      time.Time
	phase      string
	phaseStart time.Time
	rate       float64
	eta        time.Duration
}

func (m *loadMeter) line(p loader.Progress) string {
	now := time.Now()
	phase := cmp.Or(p.Phase, "parse")
	if phase != m.phase {
		m.phase, m.phaseStart = phase, now
	}
	secs := max(now.Sub(m.phaseStart).Seconds(), 1e-9)
	done, total, unit := p.Done, p.Total, "items"
	switch phase {
	case "parse":
		done, total, unit = uint64(p.Bytes), uint64(max(p.TotalBytes, 0)), "bytes"
		m.rate = float64(p.Triples) / max(now.Sub(m.start).Seconds(), 1e-9)
	case "dictionary":
		unit = "terms"
	case "partition":
		unit = "triples"
	case "shards":
		unit = "shards"
	}
	if phase != "parse" {
		m.rate = float64(done) / secs
	}
	m.eta = 0
	if total > 0 && done > 0 && done <= total {
		m.eta = time.Duration(float64(total-done) * secs / float64(done) * float64(time.Second))
		if phase == "parse" {
			m.eta = time.Duration(float64(total-done) * now.Sub(m.start).Seconds() / float64(done) * float64(time.Second))
		}
	}
	s := fmt.Sprintf("%s: ", phase)
	if phase == "parse" {
		s += fmt.Sprintf("%s of %s, %d triples, %.0f triples/s", formatByteSize(int64(done)), formatByteSize(int64(total)), p.Triples, m.rate)
	} else {
		s += fmt.Sprintf("%d of %d %s, %.0f/s", done, total, unit, m.rate)
	}
	if p.Spilled > 0 {
		s += ", spilled " + formatByteSize(int64(p.Spilled))
	}
	if m.eta > 0 {
		s += fmt.Sprintf(", ETA %s", m.eta.Round(time.Second))
	}
	return s
}

// parseByteSize parses a size such as 512M, 8G, 8GiB or 1048576.
func parseByteSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a positive size (e.g. 512M, 8G)", s)
	}
	return int64(v * float64(mult)), nil
}

// formatByteSize prints n bytes in binary units.
func formatByteSize(n int64) string {
	const units = "KMGT"
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n), -1
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %ciB", v, units[u])
}
