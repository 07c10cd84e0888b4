package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/wukongd/wukongd/bench"
	"github.com/wukongd/wukongd/datasets"
	wexec "github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/reason"
	"github.com/wukongd/wukongd/sparql"
	"github.com/wukongd/wukongd/web"
)

func init() {
	register(&command{name: "bench", summary: "run the end-to-end LUBM benchmark (optionally against Virtuoso and Oxigraph)", run: runBench})
}

// benchFlags are the settings of one `wukongd bench` run.
type benchFlags struct {
	scale       int
	data        string
	work        string
	out         string
	shards      int
	peers       []string
	querySets   string
	modes       []string
	lat         bench.LatencyConfig
	tput        bench.ThroughputConfig
	machineName string
	repo        string
	node        string
	skipHTTP    bool
	skipTput    bool
	doc         string
	only        []string
	cpuprofile  string
	reuse       bool
	serveInProc bool
	serveArgs   string
	reasoning   string // none, rdfs, owl-rl: wukongd materializes, the peers load its closure
	ontology    string
	rounds      int // interleaved rounds over HTTP
	ports       int // first of four ports (wukongd, Oxigraph, Virtuoso SQL, Virtuoso HTTP); 0: free ports, Virtuoso's defaults
}

func runBench(args []string) error {
	if len(args) > 0 && args[0] == "report" {
		return runBenchReport(args[1:])
	}
	fs := newFlagSet("bench", "[--scale N] [--peers virtuoso,oxigraph] [flags]  |  bench report --in REPORT.json [--doc FILE]", `
Runs the end-to-end benchmark on LUBM: loads the data into a snapshot
(load time, triples/s, bytes per triple, peak RSS) and reopens it; measures
the latency of Wukong's L1–L7 and the 14 standard LUBM queries, warm
(median, p99), in process under each execution mode and over HTTP
('wukongd serve', JSON results); and the throughput of Wukong's mixed
workload against the number of concurrent HTTP clients. With --peers it
does the same on Virtuoso (bench/peers/virtuoso.sh) and Oxigraph
(bench/peers/oxigraph.mjs) in the same run. Writes report.json, report.md,
latency.svg and throughput.svg into --out.

'wukongd bench report' rewrites the Markdown and plots from a report.json
and, with --doc, the end-to-end section of docs/PERFORMANCE.md.`)
	var f benchFlags
	fs.IntVar(&f.scale, "scale", 40, "LUBM scale (universities)")
	fs.StringVar(&f.data, "data", "", "N-Triples file to load (default: ../shared/datasets/lubm/lubmN.nt.gz, else generated into --work)")
	fs.StringVar(&f.work, "work", "var/bench", "work directory (snapshots, generated data, Virtuoso cache)")
	fs.StringVar(&f.out, "out", "", "report directory (default WORK/runs/DATE; WORK/latest points at it)")
	fs.IntVar(&f.shards, "shards", 4, "shards of the wukongd snapshot")
	peers := fs.String("peers", "", "peer systems to run too: virtuoso, oxigraph (comma-separated)")
	fs.StringVar(&f.querySets, "queries", "L,std", "query sets: L (Wukong's L1–L7), wukong (q1–q12), std (the 14 standard queries)")
	modes := fs.String("modes", "planned,in-place,fork-join", "in-process execution modes to measure")
	fs.IntVar(&f.lat.Warmup, "warmup", 3, "untimed runs per query")
	fs.IntVar(&f.lat.Repeat, "repeat", 200, "most timed runs per query")
	fs.IntVar(&f.lat.MinRuns, "min-runs", 5, "least timed runs per query")
	fs.DurationVar(&f.lat.Budget, "budget", 5*time.Second, "time per query after which the timed runs stop (once --min-runs ran)")
	fs.DurationVar(&f.lat.Timeout, "timeout", 2*time.Minute, "timeout of one query")
	clients := fs.String("clients", "1,2,4,8,16,32", "numbers of concurrent clients for the throughput runs")
	fs.DurationVar(&f.tput.Duration, "duration", 10*time.Second, "measured time per throughput point")
	fs.DurationVar(&f.tput.Warmup, "tput-warmup", 2*time.Second, "untimed time before each throughput point")
	seed := fs.Uint64("seed", 1, "seed of the mixed workload")
	fs.StringVar(&f.machineName, "machine", os.Getenv("WUKONGD_MACHINE"), "name of this machine in the report (e.g. dev-2c)")
	fs.StringVar(&f.node, "node", "node", "Node.js binary for Oxigraph")
	fs.BoolVar(&f.skipHTTP, "no-http", false, "skip everything over HTTP (latency and throughput)")
	fs.BoolVar(&f.skipTput, "no-throughput", false, "skip the throughput runs")
	fs.StringVar(&f.doc, "doc", "", "also rewrite the end-to-end section of this Markdown file (docs/PERFORMANCE.md)")
	fs.BoolVar(&f.reuse, "reuse-snapshot", false, "reuse the snapshot (and its load figures, marked cached) of an earlier run if there is one")
	fs.StringVar(&f.serveArgs, "serve-args", "", "more flags for the 'wukongd serve' child, space-separated (e.g. --http-loop=false to measure net/http)")
	fs.BoolVar(&f.serveInProc, "serve-in-process", false, "serve HTTP from the benchmark's own process instead of a 'wukongd serve' child (for --cpuprofile of server and client together)")
	only := fs.String("only", "", "run only these queries (labels or names, comma-separated: L1,Q14,wukong-q9)")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of this process (the in-process runs and the HTTP client) to this file")
	fs.StringVar(&f.reasoning, "reasoning", "none", "load wukongd with this reasoning (none, rdfs, owl-rl) and give the peers its exported closure, so that every system answers over the same triples")
	fs.IntVar(&f.rounds, "rounds", 3, "rounds over HTTP: every system's latency runs, then each throughput point on every system, interleaved (A B C, A B C, …); the figures merge the rounds")
	fs.IntVar(&f.ports, "ports", 0, "first of four loopback ports to use: wukongd serve, Oxigraph, Virtuoso's SQL and HTTP ports (0: any free ports for wukongd and Oxigraph, Virtuoso on 21111/28890)")
	fs.StringVar(&f.ontology, "ontology", "", "ontology for --reasoning (default: univ-bench.owl beside the LUBM data in ../shared/datasets/lubm)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if _, err := reason.ParseProfile(f.reasoning); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	f.peers = splitList(*peers)
	f.only = splitList(*only)
	f.modes = splitList(*modes)
	for _, p := range f.peers {
		if p != "virtuoso" && p != "oxigraph" {
			return fmt.Errorf("unknown peer %q (virtuoso, oxigraph)", p)
		}
	}
	for _, c := range splitList(*clients) {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return fmt.Errorf("bad --clients entry %q", c)
		}
		f.tput.Clients = append(f.tput.Clients, n)
	}
	f.tput.Seed = *seed
	f.tput.Timeout = f.lat.Timeout
	var err error
	if f.repo, err = repoRoot(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r := &benchRun{f: f, cmdline: "wukongd bench " + strings.Join(args, " ")}
	return r.run(ctx)
}

func runBenchReport(args []string) error {
	fs := newFlagSet("bench report", "--in REPORT.json [--out DIR] [--doc FILE]", `
Rewrites report.md, latency.svg and throughput.svg from a report.json, and
with --doc the end-to-end section of that Markdown file (between the
markers '<!-- bench-e2e:begin -->' and '<!-- bench-e2e:end -->'), copying
the plots next to it into bench/.`)
	in := fs.String("in", "var/bench/latest/report.json", "report to read")
	out := fs.String("out", "", "directory for report.md and the plots (default: the report's directory)")
	doc := fs.String("doc", "", "Markdown file whose end-to-end section to rewrite")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	rep, err := bench.ReadReport(*in)
	if err != nil {
		return err
	}
	if *out == "" {
		*out = filepath.Dir(*in)
	}
	if err := writeReport(rep, *out); err != nil {
		return err
	}
	if *doc != "" {
		return updateDoc(rep, *doc)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// repoRoot finds the repository (the directory with go.mod) from the
// working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "bench", "peers")); err == nil {
				return d, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("run 'wukongd bench' inside the wukongd repository (no go.mod with bench/peers above %s)", dir)
		}
	}
}

type benchRun struct {
	f       benchFlags
	cmdline string
	rep     *bench.Report
	queries []datasets.Query
	snap    string
	mix     *bench.Mix
}

func (r *benchRun) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench %s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (r *benchRun) run(ctx context.Context) error {
	f := &r.f
	if !filepath.IsAbs(f.work) {
		f.work = filepath.Join(r.f.repo, f.work)
	}
	date := time.Now()
	if f.out == "" {
		f.out = filepath.Join(f.work, "runs", date.UTC().Format("20060102-150405"))
	}
	if abs, err := filepath.Abs(f.out); err == nil {
		f.out = abs
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	if err := r.selectQueries(); err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(f.cpuprofile)
	if err != nil {
		return err
	}
	defer stopProfile()
	data, source, err := r.dataset(ctx)
	if err != nil {
		return err
	}
	r.rep = &bench.Report{
		Machine: machineString(f.machineName), Host: hostInfo(), Date: date, Commit: gitCommit(r.f.repo),
		Command: r.cmdline, Latency: f.lat, Throughput: f.tput, Mix: bench.WukongMix,
		Dataset: bench.Dataset{Name: fmt.Sprintf("LUBM-%d", f.scale), File: relTo(r.f.repo, data), Source: source},
	}
	if f.skipTput {
		r.rep.Throughput.Clients = nil
	}
	if f.reasoning != "none" {
		if f.ontology == "" {
			f.ontology = filepath.Join(r.f.repo, "..", "shared", "datasets", "lubm", "univ-bench.owl")
		}
		r.rep.Dataset.Reasoning = f.reasoning
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("Reasoning %s: wukongd loads the data with `--reasoning %s --ontology %s` (the closure materialized at load); "+
			"the peers, which have no reasoner, load that closure exported as N-Triples (`wukongd export`), so every system answers over the same triples "+
			"and the standard queries Q4–Q13 find their rows.", f.reasoning, f.reasoning, filepath.Base(f.ontology)))
	}
	r.logf("machine %s; load average %s; report into %s", r.rep.Machine, bench.ReadLoadAvg(), f.out)

	wk := &bench.System{Name: bench.Base, Version: gitCommit(r.f.repo),
		Setup: fmt.Sprintf("%d shards in one process (loopback fabric), GOMAXPROCS %d; HTTP: 'wukongd serve' as its own process", f.shards, runtime.GOMAXPROCS(0))}
	r.rep.Systems = append(r.rep.Systems, wk)
	r.rep.Rounds = max(1, f.rounds)
	// Every system is set up and left serving, then measured over HTTP in
	// interleaved rounds; each is stopped at the end.
	var up []*served
	defer func() {
		for i := len(up) - 1; i >= 0; i-- {
			up[i].stop()
		}
	}()
	sv, err := r.wukongd(ctx, wk, data)
	if err != nil {
		wk.Errors = append(wk.Errors, err.Error())
		r.logf("wukongd: %v", err)
	}
	if sv != nil {
		up = append(up, sv)
	}
	r.save()
	if f.reasoning != "none" && len(f.peers) > 0 && ctx.Err() == nil {
		// The peers have no reasoner: they load wukongd's closure.
		closure, err := r.exportClosure(ctx)
		if err != nil {
			return err
		}
		data = closure
	}
	for _, p := range f.peers {
		if ctx.Err() != nil {
			break
		}
		var sv *served
		var err error
		s := &bench.System{Name: p}
		r.rep.Systems = append(r.rep.Systems, s)
		switch p {
		case "virtuoso":
			sv, err = r.virtuoso(ctx, s, data)
		case "oxigraph":
			sv, err = r.oxigraph(ctx, s, data)
		}
		if err != nil {
			s.Errors = append(s.Errors, err.Error())
			r.logf("%s: %v", p, err)
		}
		if sv != nil {
			up = append(up, sv)
		}
		r.save()
	}
	if !f.skipHTTP && ctx.Err() == nil {
		r.interleaved(ctx, up)
	}
	if ctx.Err() != nil {
		r.rep.Notes = append(r.rep.Notes, "the run was interrupted: figures are incomplete")
	}
	if err := r.save(); err != nil {
		return err
	}
	latest := filepath.Join(f.work, "latest")
	_ = os.Remove(latest)
	_ = os.Symlink(f.out, latest)
	if f.doc != "" {
		if err := updateDoc(r.rep, f.doc); err != nil {
			return err
		}
	}
	md, _ := os.ReadFile(filepath.Join(f.out, "report.md"))
	os.Stdout.Write(md)
	r.logf("report: %s", filepath.Join(f.out, "report.md"))
	return ctx.Err()
}

// save writes the report as it stands (so an interrupted run keeps what it
// measured).
func (r *benchRun) save() error {
	return writeReport(r.rep, r.f.out)
}

func writeReport(rep *bench.Report, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, fn func(io.Writer) error) error {
		path := filepath.Join(dir, name)
		tmp := path + ".tmp"
		fh, err := os.Create(tmp)
		if err != nil {
			return err
		}
		if err := fn(fh); err != nil {
			fh.Close()
			os.Remove(tmp)
			return fmt.Errorf("cannot write %s: %w", path, err)
		}
		if err := fh.Close(); err != nil {
			return err
		}
		return os.Rename(tmp, path)
	}
	if err := write("report.json", rep.WriteJSON); err != nil {
		return err
	}
	if err := write("report.md", func(w io.Writer) error {
		fmt.Fprintf(w, "# wukongd end-to-end benchmark, %s\n\n", rep.Dataset.Name)
		return rep.WriteMarkdown(w, bench.MarkdownOptions{Level: 2})
	}); err != nil {
		return err
	}
	// Plots are written when there is something to plot.
	_ = write("latency.svg", rep.WriteLatencySVG)
	_ = write("throughput.svg", rep.WriteThroughputSVG)
	return nil
}

const (
	docBegin = "<!-- bench-e2e:begin (written by 'wukongd bench report --doc'; edit bench/markdown.go instead) -->"
	docEnd   = "<!-- bench-e2e:end -->"
)

// updateDoc replaces the end-to-end section of the Markdown file doc (the
// text between the markers; appended at the end when absent) and copies
// the plots into bench/ next to it.
func updateDoc(rep *bench.Report, doc string) error {
	old, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	plots := filepath.Join(filepath.Dir(doc), "bench")
	if err := os.MkdirAll(plots, 0o755); err != nil {
		return err
	}
	for name, fn := range map[string]func(io.Writer) error{"latency.svg": rep.WriteLatencySVG, "throughput.svg": rep.WriteThroughputSVG} {
		fh, err := os.Create(filepath.Join(plots, name))
		if err != nil {
			return err
		}
		werr := fn(fh)
		fh.Close()
		if werr != nil {
			os.Remove(filepath.Join(plots, name))
		}
	}
	var b strings.Builder
	b.WriteString(docBegin + "\n")
	b.WriteString("## End to end (`make bench`, `make bench-peers`)\n\n")
	b.WriteString("Everything in this section is written by `wukongd bench report --doc` from one run's report.json; " +
		"reproduce it with\n\n" +
		"    make bench-peers MACHINE=dev-2c SCALE=40   # wukongd, Virtuoso and Oxigraph; report in var/bench/latest/\n" +
		"    make bench-doc                             # rewrites this section and docs/bench/*.svg from that report\n\n" +
		"(`make bench` alone measures wukongd only.) The harness is bench/ and cmd/wukongd/bench.go; " +
		"Virtuoso is set up by bench/peers/virtuoso.sh (apt-get, a private instance in a temporary directory, " +
		"its loaded database cached under var/bench/virtuoso/), Oxigraph by bench/peers/oxigraph.mjs (npm, in Node).\n\n")
	if err := rep.WriteMarkdown(&b, bench.MarkdownOptions{Level: 3, Plots: "bench/"}); err != nil {
		return err
	}
	b.WriteString(docEnd)
	text := string(old)
	i := strings.Index(text, "<!-- bench-e2e:begin")
	j := strings.Index(text, docEnd)
	switch {
	case i >= 0 && j > i:
		text = text[:i] + b.String() + text[j+len(docEnd):]
	default:
		text = strings.TrimRight(text, "\n") + "\n\n" + b.String() + "\n"
	}
	return os.WriteFile(doc, []byte(text), 0o644)
}

func (r *benchRun) selectQueries() error {
	sets := map[string]bool{}
	for _, s := range splitList(r.f.querySets) {
		switch s {
		case "L", "wukong", "std":
			sets[s] = true
		default:
			return fmt.Errorf("unknown query set %q (L, wukong, std)", s)
		}
	}
	only := map[string]bool{}
	for _, o := range r.f.only {
		only[strings.ToLower(o)] = true
	}
	for _, q := range datasets.LUBMQueries() {
		if len(only) > 0 && !only[strings.ToLower(q.Name)] && !only[strings.ToLower(q.Label)] {
			continue
		}
		switch {
		case q.Set == datasets.SetWukong && (sets["wukong"] || sets["L"] && q.Label != ""):
		case q.Set == datasets.SetLUBMStd && sets["std"]:
		default:
			continue
		}
		r.queries = append(r.queries, q)
	}
	if len(r.queries) == 0 {
		return errors.New("no queries selected")
	}
	return nil
}

// dataset returns the N-Triples file to load: --data, the UBA reference
// file in ../shared/datasets/lubm, or one generated with 'wukongd gen lubm'.
func (r *benchRun) dataset(ctx context.Context) (path, source string, err error) {
	if r.f.data != "" {
		return r.f.data, "given with --data", nil
	}
	// ../shared beside the repository, or beside the directory of a git
	// worktree (/work/wt/BRANCH next to /work/main).
	for _, up := range []string{"..", filepath.Join("..", "..")} {
		ref := filepath.Join(r.f.repo, up, "shared", "datasets", "lubm", fmt.Sprintf("lubm%d.nt.gz", r.f.scale))
		if _, err := os.Stat(ref); err == nil {
			return filepath.Clean(ref), "the UBA 1.7 reference data (../shared/datasets/lubm)", nil
		}
	}
	gen := filepath.Join(r.f.work, "data", fmt.Sprintf("lubm%d.nt.gz", r.f.scale))
	if _, err := os.Stat(gen); err == nil {
		return gen, "generated by 'wukongd gen lubm' (seed 0)", nil
	}
	if err := os.MkdirAll(filepath.Dir(gen), 0o755); err != nil {
		return "", "", err
	}
	r.logf("generating LUBM-%d into %s", r.f.scale, gen)
	if out, err := selfCommand(ctx, "gen", "lubm", "--univ", strconv.Itoa(r.f.scale), "--out", gen).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("wukongd gen lubm: %v: %s", err, out)
	}
	return gen, "generated by 'wukongd gen lubm' (seed 0)", nil
}

// selfCommand runs this binary with args.
func selfCommand(ctx context.Context, args ...string) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	return exec.CommandContext(ctx, self, args...)
}

// served is a system left serving over HTTP for the interleaved rounds.
type served struct {
	s     *bench.System
	url   string
	pid   int           // the server's process (0: this one)
	ready time.Duration // how long it may take to answer
	stop  func()
	ep    *bench.Endpoint
}

// wukongd measures wukongd: load, reopen, in process per mode; then it
// starts 'wukongd serve' and returns it serving (nil with --no-http).
func (r *benchRun) wukongd(ctx context.Context, s *bench.System, data string) (*served, error) {
	f := &r.f
	r.snap = filepath.Join(f.work, fmt.Sprintf("snap-lubm%d-%dshards", f.scale, f.shards))
	if f.reasoning != "none" {
		r.snap += "-" + f.reasoning
	}
	var load *bench.Load
	loadFile := r.snap + ".load.json"
	if f.reuse {
		if b, err := os.ReadFile(loadFile); err == nil && json.Unmarshal(b, &load) == nil {
			load.Cached = true
			r.logf("wukongd: reusing the snapshot %s (loaded earlier in %.1fs)", r.snap, load.Seconds)
		}
	}
	if load == nil {
		var err error
		if load, err = r.loadWukongd(ctx, data); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(load)
		_ = os.WriteFile(loadFile, b, 0o644)
	}
	s.Load = load
	r.rep.Dataset.Triples = load.Triples
	r.save()

	// Reopen, then in process.
	la := bench.ReadLoadAvg()
	t0 := time.Now()
	st, err := graphstore.OpenSnapshot(r.snap, graphstore.OpenOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot reopen the snapshot: %w", err)
	}
	eng, err := wexec.NewGraphEngine(st, wexec.Config{})
	if err != nil {
		st.Close()
		return nil, err
	}
	load.ReopenSeconds = time.Since(t0).Seconds()
	r.logf("wukongd: reopened the snapshot in %.2fs (load average %s)", load.ReopenSeconds, la)
	err = r.inProcess(ctx, s, eng)
	if err == nil {
		err = r.buildMix(ctx, eng)
	}
	if err == nil && !f.skipTput {
		r.throughputInProcess(ctx, s, eng)
	}
	eng.Close()
	st.Close()
	if err != nil {
		return nil, err
	}
	runtime.GC()
	if f.skipHTTP {
		return nil, nil
	}

	// Over HTTP: 'wukongd serve' as its own process.
	addr, err := r.addr(0)
	if err != nil {
		return nil, err
	}
	if f.serveInProc {
		return r.serveInProcess(s, addr)
	}
	serveLog, _ := os.Create(filepath.Join(f.out, "wukongd-serve.log"))
	args := append([]string{"serve", "--data", r.snap, "--addr", addr, "--log-level", "warn", "--max-rows", "-1",
		"--timeout", f.lat.Timeout.String(), "--max-concurrent", "256"}, strings.Fields(f.serveArgs)...)
	cmd := selfCommand(ctx, args...)
	cmd.Stdout, cmd.Stderr = serveLog, serveLog
	if err := cmd.Start(); err != nil {
		serveLog.Close()
		return nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		serveLog.Close()
	}
	return &served{s: s, url: "http://" + addr + "/sparql", pid: cmd.Process.Pid, ready: 2 * time.Minute, stop: stop}, nil
}

// serveInProcess serves the snapshot over HTTP from this process, as
// 'wukongd serve' does, and measures it (for profiling).
func (r *benchRun) serveInProcess(s *bench.System, addr string) (*served, error) {
	backend, err := newServeBackend(r.snap, false)
	if err != nil {
		return nil, err
	}
	closeBackend := func() {
		if c, ok := backend.(io.Closer); ok {
			c.Close()
		}
	}
	srv, err := web.New(web.Options{Backend: backend, Logger: zerolog.Nop(), DefaultTimeout: r.f.lat.Timeout,
		MaxTimeout: r.f.lat.Timeout, MaxRows: -1, MaxConcurrent: 256})
	if err != nil {
		closeBackend()
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		closeBackend()
		return nil, err
	}
	hs := web.NewHTTPServer(srv, web.HTTPOptions{})
	go func() { _ = hs.Serve(ln) }()
	s.Setup += " (this run: served from the benchmark's process)"
	return &served{s: s, url: "http://" + addr + "/sparql", ready: time.Minute, stop: func() { hs.Close(); closeBackend() }}, nil
}

// loadWukongd runs 'wukongd load' as a child process and measures it.
func (r *benchRun) loadWukongd(ctx context.Context, data string) (*bench.Load, error) {
	la := bench.ReadLoadAvg()
	r.logf("wukongd: loading %s into %s (load average %s)", data, r.snap, la)
	args := []string{"load", "--shards", strconv.Itoa(r.f.shards), "--out", r.snap}
	if r.f.reasoning != "none" {
		args = append(args, "--reasoning", r.f.reasoning, "--ontology", r.f.ontology)
	}
	cmd := selfCommand(ctx, append(args, data)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0).Seconds()
	if err != nil {
		return nil, fmt.Errorf("wukongd load: %v: %s", err, lastLines(stderr.String(), 5))
	}
	// The summary is the zerolog line "load done" on stderr.
	var sum struct {
		Distinct uint64  `json:"distinct"`
		Triples  uint64  `json:"triples"`
		Seconds  float64 `json:"seconds"`
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, `"load done"`) {
			_ = json.Unmarshal([]byte(line), &sum)
		}
	}
	if sum.Distinct == 0 {
		return nil, fmt.Errorf("wukongd load printed no summary: %s", lastLines(stderr.String(), 5))
	}
	size, err := dirSize(r.snap)
	if err != nil {
		return nil, err
	}
	l := &bench.Load{Seconds: wall, Triples: sum.Distinct, TriplesPerSec: float64(sum.Triples) / wall,
		StorageBytes: size, BytesPerTriple: float64(size) / float64(sum.Distinct), LoadAvg: la}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		l.PeakRSSBytes = ru.Maxrss * 1024
	}
	r.logf("wukongd: loaded %d triples in %.1fs (%.0f triples/s), %.1f bytes/triple, peak RSS %d MB",
		l.Triples, l.Seconds, l.TriplesPerSec, l.BytesPerTriple, l.PeakRSSBytes>>20)
	return l, nil
}

// exportClosure writes the default graph of wukongd's snapshot (the
// closure) as N-Triples for the peers, reusing the file of an earlier
// run with --reuse-snapshot.
func (r *benchRun) exportClosure(ctx context.Context) (string, error) {
	file := r.snap + ".closure.nt.gz"
	if _, err := os.Stat(file); err == nil && r.f.reuse {
		r.logf("wukongd: reusing the exported closure %s", file)
		return file, nil
	}
	t0 := time.Now()
	n, err := loader.ExportFile(ctx, r.snap, file)
	if err != nil {
		return "", err
	}
	r.logf("wukongd: exported the closure, %d triples, into %s in %.1fs", n, file, time.Since(t0).Seconds())
	return file, nil
}

// inProcess measures every query in process under each mode: parse (through
// a cache, as the service does), plan and execute to ID rows.
func (r *benchRun) inProcess(ctx context.Context, s *bench.System, eng *wexec.Engine) error {
	cache := sparql.NewCache(256)
	for _, m := range r.f.modes {
		mode, ok := planner.ParseMode(m)
		if m == "planned" {
			mode, ok = planner.ModeAuto, true
		}
		if !ok {
			return fmt.Errorf("unknown mode %q (planned, in-place, fork-join)", m)
		}
		run := &bench.LatencyRun{Path: bench.PathInProcess, Mode: m, LoadAvg: bench.ReadLoadAvg()}
		s.Latency = append(s.Latency, run)
		cpu0 := bench.SampleCPU(0)
		for _, q := range r.queries {
			text := q.Text
			res := bench.MeasureLatency(ctx, r.f.lat, q.Name, func(ctx context.Context) (int, error) {
				pq, err := cache.ParseQuery(text)
				if err != nil {
					return 0, err
				}
				out, err := eng.Run(ctx, pq, wexec.Options{Mode: mode})
				if err != nil {
					return 0, err
				}
				return out.Len(), nil
			})
			res.Label = q.Label
			run.Queries = append(run.Queries, &res)
			r.logQuery("wukongd in-process "+m, &res)
		}
		run.OtherCores = cpu0.OtherCores(bench.SampleCPU(0))
	}
	return ctx.Err()
}

func (r *benchRun) logQuery(what string, q *bench.QueryResult) {
	if q.Error != "" {
		r.logf("%s %s: error: %s", what, queryName(q), q.Error)
		return
	}
	r.logf("%s %s: %d rows, median %.3f ms, p99 %.3f ms (%d runs)", what, queryName(q), q.Rows, q.Summary.Median, q.Summary.P99, q.Summary.N)
}

func queryName(q *bench.QueryResult) string {
	if q.Label != "" {
		return q.Label
	}
	return q.Name
}

// buildMix draws the mixed workload's constants from wukongd's type index
// (every system then runs the same query sequence).
func (r *benchRun) buildMix(ctx context.Context, eng *wexec.Engine) error {
	consts := map[string][]string{}
	for _, class := range bench.Classes(bench.WukongMix) {
		q, err := sparql.ParseQuery(bench.InstancesQuery(class))
		if err != nil {
			return err
		}
		res, err := eng.Run(ctx, q, wexec.Options{})
		if err != nil {
			return fmt.Errorf("cannot list the instances of %s: %w", class, err)
		}
		vals := make([]string, 0, res.Len())
		for i := 0; i < res.Len(); i++ {
			vals = append(vals, res.Term(res.Rows.At(0, i)).String())
		}
		sort.Strings(vals)
		consts[class] = vals
	}
	mix, err := bench.NewMix(bench.WukongMix, consts)
	if err != nil {
		return err
	}
	r.mix = mix
	return nil
}

// throughputInProcess runs the mixed workload against the engine directly.
func (r *benchRun) throughputInProcess(ctx context.Context, s *bench.System, eng *wexec.Engine) {
	// As the server does: a text of a known shape runs its template's
	// plan bound to its constants (docs/DESIGN.md §14), others are parsed.
	shapes := sparql.NewShapes(0, 0)
	do := func(ctx context.Context, text string) (int, error) {
		if tq, params, ok := shapes.Lookup(text, ""); ok {
			res, err := eng.RunParams(ctx, tq, params, wexec.Options{})
			if !errors.Is(err, wexec.ErrNotBindable) {
				if err != nil {
					return 0, err
				}
				return res.Len(), nil
			}
		}
		q, err := sparql.ParseQuery(text)
		if err != nil {
			return 0, err
		}
		shapes.Learn(ctx, text, "", q)
		res, err := eng.Run(ctx, q, wexec.Options{})
		if err != nil {
			return 0, err
		}
		return res.Len(), nil
	}
	for _, n := range r.f.tput.Clients {
		cfg := r.f.tput
		cfg.Clients = []int{n}
		cfg.Pids = []int{0}
		pts := bench.MeasureThroughput(ctx, cfg, r.mix, do)
		if len(pts) == 0 {
			return
		}
		p := pts[0]
		s.ThroughputInProcess = append(s.ThroughputInProcess, p)
		r.logf("wukongd in-process throughput, %d clients: %.0f q/s, median %.3f ms, p99 %.3f ms, %d errors (load average %s, other processes %.1f cores)",
			n, p.QPS, p.Latency.Median, p.Latency.P99, p.Errors, p.LoadAvg, p.OtherCores)
	}
}

// interleaved measures the systems serving over HTTP in rounds: in each
// round every system's latency run (A B C), then, per number of clients,
// every system's throughput point (A B C); each system's figures are the
// rounds merged (bench.MergeRounds, bench.MedianPoints), the rounds kept
// beside them in the report.
func (r *benchRun) interleaved(ctx context.Context, up []*served) {
	conns := 1
	for _, n := range r.f.tput.Clients {
		conns = max(conns, n)
	}
	var live []*served
	for _, sv := range up {
		if err := r.prepare(ctx, sv, conns); err != nil {
			sv.s.Errors = append(sv.s.Errors, err.Error())
			r.logf("%s: %v", sv.s.Name, err)
			continue
		}
		defer sv.ep.Close()
		live = append(live, sv)
	}
	rounds := max(1, r.f.rounds)
	for round := 1; round <= rounds && ctx.Err() == nil; round++ {
		for _, sv := range live {
			run := r.latencyOverHTTP(ctx, sv)
			run.Round = round
			sv.s.HTTPRounds = append(sv.s.HTTPRounds, run)
			r.save()
		}
	}
	for _, sv := range live {
		if m := bench.MergeRounds(sv.s.HTTPRounds); m != nil {
			sv.s.Latency = append(sv.s.Latency, m)
		}
		if rounds == 1 {
			sv.s.HTTPRounds = nil
		}
	}
	r.save()
	if r.f.skipTput || len(r.f.tput.Clients) == 0 || ctx.Err() != nil {
		return
	}
	if r.mix == nil {
		for _, sv := range live {
			sv.s.Errors = append(sv.s.Errors, "no mixed workload (wukongd's type index was not read)")
		}
		return
	}
	for round := 1; round <= rounds && ctx.Err() == nil; round++ {
		for _, n := range r.f.tput.Clients {
			for _, sv := range live {
				if ctx.Err() != nil {
					break
				}
				cfg := r.f.tput
				cfg.Clients = []int{n}
				cfg.Pids = []int{0}
				if sv.pid != 0 {
					cfg.Pids = append(cfg.Pids, sv.pid)
					cfg.ServerPid = sv.pid
				}
				pts := bench.MeasureThroughput(ctx, cfg, r.mix, sv.ep.Select)
				if len(pts) == 0 {
					continue
				}
				p := pts[0]
				p.Round = round
				sv.s.ThroughputRounds = append(sv.s.ThroughputRounds, p)
				r.logf("%s throughput, round %d, %d clients: %.0f q/s, median %.3f ms, p99 %.3f ms, server CPU %.1f µs/query, client CPU %.1f µs/query, %d errors (load average %s, other processes %.1f cores)",
					sv.s.Name, round, n, p.QPS, p.Latency.Median, p.Latency.P99, p.ServerCPU, p.ClientCPU, p.Errors, p.LoadAvg, p.OtherCores)
				if p.Errors > 0 {
					r.logf("%s: first error: %s", sv.s.Name, p.FirstError)
				}
			}
			r.save()
		}
	}
	for _, sv := range live {
		sv.s.Throughput = bench.MedianPoints(sv.s.ThroughputRounds)
		if rounds == 1 {
			sv.s.ThroughputRounds = nil
		}
	}
}

// prepare opens the endpoint of a serving system, waits until it answers
// and checks that it speaks JSON results.
func (r *benchRun) prepare(ctx context.Context, sv *served, conns int) error {
	s := sv.s
	sv.ep = bench.NewEndpoint(sv.url, conns)
	t0 := time.Now()
	if err := sv.ep.WaitReady(ctx, sv.ready); err != nil {
		sv.ep.Close()
		return err
	}
	if s.Load != nil && s.Name == bench.Base {
		s.Setup += fmt.Sprintf("; serve ready %.2fs after start", time.Since(t0).Seconds())
	}
	if err := sv.ep.CheckJSON(ctx, r.queries[0].Text); err != nil {
		sv.ep.Close()
		return err
	}
	if sv.pid != 0 && s.Load != nil && s.Load.ReopenSeconds > 0 {
		s.Load.ReopenRSSBytes = vmRSS(sv.pid)
	}
	return nil
}

// latencyOverHTTP runs every query over HTTP against a serving system.
func (r *benchRun) latencyOverHTTP(ctx context.Context, sv *served) *bench.LatencyRun {
	pids := []int{0}
	if sv.pid != 0 {
		pids = append(pids, sv.pid)
	}
	run := &bench.LatencyRun{Path: bench.PathHTTP, LoadAvg: bench.ReadLoadAvg()}
	cpu0 := bench.SampleCPU(pids...)
	for _, q := range r.queries {
		text := q.Text
		res := bench.MeasureLatency(ctx, r.f.lat, q.Name, func(ctx context.Context) (int, error) {
			return sv.ep.Select(ctx, text)
		})
		res.Label = q.Label
		run.Queries = append(run.Queries, &res)
		r.logQuery(sv.s.Name+" http", &res)
	}
	run.OtherCores = cpu0.OtherCores(bench.SampleCPU(pids...))
	r.logf("%s http: other processes kept %.1f cores busy on average", sv.s.Name, run.OtherCores)
	return run
}

// virtuoso runs the peer Virtuoso through bench/peers/virtuoso.sh.
// It returns Virtuoso serving.
func (r *benchRun) virtuoso(ctx context.Context, s *bench.System, data string) (sv *served, err error) {
	script := filepath.Join(r.f.repo, "bench", "peers", "virtuoso.sh")
	rundir, err := os.MkdirTemp("", "wukongd-bench-virtuoso-")
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(), "VIRTUOSO_CACHE="+filepath.Join(r.f.work, "virtuoso"))
	if r.f.ports > 0 {
		env = append(env, fmt.Sprintf("VIRTUOSO_SQL_PORT=%d", r.f.ports+2), fmt.Sprintf("VIRTUOSO_HTTP_PORT=%d", r.f.ports+3))
	}
	stop := func() {
		c := exec.Command("bash", script, "stop", rundir)
		c.Env, c.Stderr = env, os.Stderr
		if err := c.Run(); err != nil {
			r.logf("virtuoso: stop: %v", err)
		}
	}
	defer func() {
		if sv == nil {
			stop()
		}
	}()
	la := bench.ReadLoadAvg()
	r.logf("virtuoso: starting (loads %s on the first run, a few minutes; load average %s)", data, la)
	c := exec.CommandContext(ctx, "bash", script, "start", data, rundir)
	c.Env, c.Stderr = env, os.Stderr
	out, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("virtuoso.sh start: %w", err)
	}
	kv := parseKV(string(out))
	s.Version = kv["version"]
	s.Setup = fmt.Sprintf("Debian virtuoso-opensource, private instance on 127.0.0.1, bulk loader (ld_dir + rdf_loader_run), NumberOfBuffers %s, ThreadsPerQuery %d", envOr("VIRTUOSO_BUFFERS", "340000"), runtime.NumCPU())
	secs, _ := strconv.ParseFloat(kv["load_seconds"], 64)
	triples, _ := strconv.ParseUint(kv["triples"], 10, 64)
	rss, _ := strconv.ParseInt(kv["load_peak_rss_kb"], 10, 64)
	db, _ := strconv.ParseInt(kv["db_bytes"], 10, 64)
	start, _ := strconv.ParseFloat(kv["start_seconds"], 64)
	l := &bench.Load{Seconds: secs, Triples: triples, PeakRSSBytes: rss * 1024, StorageBytes: db,
		ReopenSeconds: start, Cached: kv["cached"] == "true", LoadAvg: la}
	if secs > 0 {
		l.TriplesPerSec = float64(triples) / secs
	}
	if triples > 0 {
		l.BytesPerTriple = float64(db) / float64(triples)
	}
	if la2, ok := parseLoadAvg(kv["load_loadavg"]); ok {
		l.LoadAvg = la2
	}
	s.Load = l
	if triples != r.rep.Dataset.Triples && r.rep.Dataset.Triples != 0 {
		s.Errors = append(s.Errors, fmt.Sprintf("Virtuoso holds %d triples, wukongd %d", triples, r.rep.Dataset.Triples))
	}
	pid, _ := strconv.Atoi(kv["pid"])
	return &served{s: s, url: kv["endpoint"], pid: pid, ready: 5 * time.Minute, stop: stop}, nil
}

// oxigraph runs the peer Oxigraph through bench/peers/oxigraph.mjs: in
// process in Node, then it returns it serving HTTP from the same process.
func (r *benchRun) oxigraph(ctx context.Context, s *bench.System, data string) (sv *served, err error) {
	dir := filepath.Join(r.f.repo, "bench", "peers")
	if _, err := exec.LookPath(r.f.node); err != nil && r.f.node == "node" {
		r.logf("oxigraph: installing Node.js and npm with apt-get")
		c := exec.CommandContext(ctx, "sh", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm")
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		if err := c.Run(); err != nil {
			return nil, fmt.Errorf("cannot install Node.js: %w", err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "oxigraph")); err != nil {
		r.logf("oxigraph: installing the npm package into %s", dir)
		c := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
		c.Dir, c.Stdout, c.Stderr = dir, os.Stderr, os.Stderr
		if err := c.Run(); err != nil {
			return nil, fmt.Errorf("npm ci in %s: %w", dir, err)
		}
	}
	type jq struct {
		Name string `json:"name"`
		Text string `json:"text"`
	}
	var qs []jq
	for _, q := range r.queries {
		qs = append(qs, jq{q.Name, q.Text})
	}
	qfile := filepath.Join(r.f.out, "oxigraph-queries.json")
	rfile := filepath.Join(r.f.out, "oxigraph-inprocess.json")
	b, _ := json.Marshal(qs)
	if err := os.WriteFile(qfile, b, 0o644); err != nil {
		return nil, err
	}
	addr, err := r.addr(1)
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	la := bench.ReadLoadAvg()
	r.logf("oxigraph: loading %s in Node and running the queries in process (load average %s)", data, la)
	l := r.f.lat
	c := exec.CommandContext(ctx, r.f.node, "--max-old-space-size=8192", filepath.Join(dir, "oxigraph.mjs"),
		"--data", data, "--queries", qfile, "--out", rfile, "--serve", port,
		"--warmup", strconv.Itoa(l.Warmup), "--repeat", strconv.Itoa(l.Repeat), "--budget", fmt.Sprint(l.Budget.Seconds()))
	c.Stderr = os.Stderr
	stdout, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	stop := func() {
		_ = c.Process.Kill()
		_ = c.Wait()
	}
	defer func() {
		if sv == nil {
			stop()
		}
	}()
	sc := bufio.NewScanner(stdout)
	ready := false
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "ready" {
			ready = true
			break
		}
	}
	if !ready {
		return nil, errors.New("oxigraph.mjs ended before serving (see its errors above)")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	var res struct {
		Version      string  `json:"version"`
		Node         string  `json:"node"`
		LoadSeconds  float64 `json:"load_seconds"`
		Triples      uint64  `json:"triples"`
		RSSAfterLoad int64   `json:"rss_after_load_bytes"`
		PeakRSS      int64   `json:"peak_rss_bytes"`
		Queries      []struct {
			Name    string    `json:"name"`
			Rows    int       `json:"rows"`
			Samples []float64 `json:"samples_ms"`
			Error   string    `json:"error"`
		} `json:"queries"`
	}
	b, err = os.ReadFile(rfile)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", rfile, err)
	}
	s.Version = res.Version + " (Node " + res.Node + ")"
	s.Setup = "npm oxigraph, in-memory Store in Node (WebAssembly, one thread); HTTP: node:http in the same process, keep-alive"
	s.Load = &bench.Load{Seconds: res.LoadSeconds, Triples: res.Triples, PeakRSSBytes: res.PeakRSS, LoadAvg: la}
	if res.LoadSeconds > 0 {
		s.Load.TriplesPerSec = float64(res.Triples) / res.LoadSeconds
	}
	run := &bench.LatencyRun{Path: bench.PathInProcess, LoadAvg: la, OtherCores: -1}
	labels := map[string]string{}
	for _, q := range r.queries {
		labels[q.Name] = q.Label
	}
	for _, q := range res.Queries {
		qr := &bench.QueryResult{Name: q.Name, Label: labels[q.Name], Rows: q.Rows, Samples: q.Samples, Error: q.Error, Summary: bench.Summarize(q.Samples)}
		run.Queries = append(run.Queries, qr)
		r.logQuery("oxigraph in-process", qr)
	}
	s.Latency = append(s.Latency, run)
	r.save()
	if r.f.skipHTTP {
		return nil, nil
	}
	return &served{s: s, url: "http://" + addr + "/sparql", pid: c.Process.Pid, ready: time.Minute, stop: stop}, nil
}

func parseKV(s string) map[string]string {
	kv := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			kv[k] = v
		}
	}
	return kv
}

func parseLoadAvg(s string) (bench.LoadAvg, bool) {
	f := strings.Fields(s)
	if len(f) < 3 {
		return bench.LoadAvg{}, false
	}
	var l bench.LoadAvg
	var err1, err2, err3 error
	l.One, err1 = strconv.ParseFloat(f[0], 64)
	l.Five, err2 = strconv.ParseFloat(f[1], 64)
	l.Fifteen, err3 = strconv.ParseFloat(f[2], 64)
	return l, err1 == nil && err2 == nil && err3 == nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// freeAddr returns a loopback address with a port free right now.
// addr is the loopback address of the i-th port of --ports, or a free
// port without --ports.
func (r *benchRun) addr(i int) (string, error) {
	if r.f.ports > 0 {
		return fmt.Sprintf("127.0.0.1:%d", r.f.ports+i), nil
	}
	return freeAddr()
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// vmRSS returns the resident memory of process pid (0 when unknown).
func vmRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

func relTo(base, path string) string {
	if rel, err := filepath.Rel(base, path); err == nil && !strings.HasPrefix(rel, "../..") {
		return rel
	}
	return path
}

func gitCommit(repo string) string {
	out, err := exec.Command("git", "-C", repo, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func hostInfo() bench.Host {
	h := bench.Host{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				h.MemBytes = kb * 1024
			}
		}
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return h
}

// machineString describes the machine as the docs quote it: "dev-2c: 2
// cores, 24 GiB, Go 1.26".
func machineString(name string) string {
	h := hostInfo()
	gov := strings.TrimPrefix(h.GoVersion, "go")
	if parts := strings.Split(gov, "."); len(parts) >= 2 {
		gov = parts[0] + "." + parts[1]
	}
	s := fmt.Sprintf("%d cores, %.0f GiB, Go %s", h.Cores, float64(h.MemBytes)/(1<<30), gov)
	if name != "" {
		s = name + ": " + s
	}
	return s
}
