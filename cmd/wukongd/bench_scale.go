package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wukongd/wukongd/bench"
	wexec "github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/internal/shareddata"
)

func init() {
	register(&command{name: "bench-scale", summary: "how load and L1–L7 costs grow with LUBM's scale", run: runBenchScale})
}

// scaleResult is one scale's measurements.
type scaleResult struct {
	Univ      int     `json:"univ"`
	Data      string  `json:"data"`
	Triples   uint64  `json:"triples"`
	Terms     uint64  `json:"terms"`
	Shards    int     `json:"shards"`
	Memory    string  `json:"memory"`
	Date      string  `json:"date"`
	LoadAvg   string  `json:"load_avg"`
	LoadWall  float64 `json:"load_wall_s"`
	LoadCPU   float64 `json:"load_cpu_s"`
	PeakRSS   int64   `json:"peak_rss_bytes"`
	SnapBytes int64   `json:"snapshot_bytes"`
	ReopenS   float64 `json:"reopen_s"`
	// Queries: L1–L7 counted (rows only, as Wukong's silent mode) and
	// decoded (every term written as N-Triples text), then the checks
	// of work bounded by the answer (LIMIT, ASK, ORDER BY … LIMIT).
	Queries []scaleQuery `json:"queries"`
}

type scaleQuery struct {
	Label    string  `json:"label"`
	Rows     int     `json:"rows"`
	Counted  float64 `json:"counted_median_ms"`
	Decoded  float64 `json:"decoded_median_ms,omitempty"`
	Runs     int     `json:"runs"`
	HeapGrow int64   `json:"alloc_per_run_bytes,omitempty"`
	Error    string  `json:"error,omitempty"`
}

func (r *scaleResult) bytesPerTriple() float64 {
	return float64(r.SnapBytes) / math.Max(float64(r.Triples), 1)
}

// scaleChecks are the queries whose work must be bounded by the answer.
var scaleChecks = []struct{ label, text string }{
	{"LIMIT 100", "SELECT * WHERE { ?s ?p ?o } LIMIT 100"},
	{"ASK", "ASK { ?s ?p ?o }"},
	{"ORDER BY LIMIT 10", "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\nSELECT ?x WHERE { ?x a ub:UndergraduateStudent } ORDER BY ?x LIMIT 10"},
}

func runBenchScale(args []string) error {
	fs := newFlagSet("bench-scale", "[--scales 10,40,160,640,2560] [--work DIR] [--memory 2G] [--shards 8] [--doc FILE]", `
For each LUBM scale: generates the data (wukongd gen lubm, UBA-exact,
uncompressed) into --work unless it is there, loads it with 'wukongd load'
as a child process (wall and CPU time, peak RSS of the process, bytes per
triple of the snapshot), reopens the snapshot, and measures Wukong's L1–L7
in process, counted (rows only) and decoded (every term as N-Triples),
and the checks of work bounded by the answer (LIMIT 100, ASK, ORDER BY
LIMIT 10). Results accumulate in WORK/scale.json (a scale run again
replaces its row); WORK/scale.md and WORK/scale.svg are rewritten from all
rows, and with --doc the "Scale" section of that Markdown file.`)
	scales := fs.String("scales", "10,40,160,640,2560", "LUBM scales (universities), comma-separated")
	work := fs.String("work", "/work/big/scale", "directory for the data, snapshots and results")
	memory := fs.String("memory", "2G", "load --memory")
	shards := fs.Int("shards", 8, "load --shards")
	reuse := fs.Bool("reuse", false, "reuse the snapshot WORK/snapN if there is one (with the load figures of the run that loaded it, if any)")
	keep := fs.Bool("keep", false, "keep the data and snapshots (default: remove each scale's once measured)")
	budget := fs.Duration("budget", 3*time.Second, "time per query after which the timed runs stop")
	minRuns := fs.Int("min-runs", 3, "least timed runs per query and form (counted, decoded)")
	warmup := fs.Int("warmup", 1, "untimed runs before the timed ones")
	timeLog := fs.String("time-log", "", "with --reuse, the load figures from this `/usr/bin/time -v wukongd load …` output (wall, CPU, maximum RSS, --memory and --shards of its command line)")
	only := fs.String("only", "", "measure only these queries (L1,…,L7, limit, ask, orderby; comma-separated): the scale's other figures are kept, so each can run in a process of its own")
	doc := fs.String("doc", "", "also rewrite the scale section of this Markdown file (docs/PERFORMANCE.md)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var list []int
	for _, s := range strings.Split(*scales, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("bad --scales %q", *scales)
		}
		list = append(list, n)
	}
	if err := os.MkdirAll(*work, 0o755); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	resPath := filepath.Join(*work, "scale.json")
	var all []scaleResult
	if b, err := os.ReadFile(resPath); err == nil {
		if err := json.Unmarshal(b, &all); err != nil {
			return fmt.Errorf("cannot read %s: %w", resPath, err)
		}
	}
	lat := bench.LatencyConfig{Warmup: *warmup, Repeat: 50, MinRuns: *minRuns, Budget: *budget, Timeout: 30 * time.Minute}
	for _, n := range list {
		r, err := benchScaleOne(ctx, n, *work, *memory, *shards, *reuse, *keep, lat, all, *only)
		if err != nil {
			return fmt.Errorf("LUBM-%d: %w", n, err)
		}
		if *timeLog != "" {
			if err := readTimeLog(*timeLog, r); err != nil {
				return err
			}
		}
		all = slices.DeleteFunc(all, func(x scaleResult) bool { return x.Univ == n })
		all = append(all, *r)
		slices.SortFunc(all, func(a, b scaleResult) int { return a.Univ - b.Univ })
		b, _ := json.MarshalIndent(all, "", "  ")
		if err := os.WriteFile(resPath, b, 0o644); err != nil {
			return err
		}
		if err := writeScaleOutputs(*work, all, *doc); err != nil {
			return err
		}
	}
	return nil
}

func benchScaleOne(ctx context.Context, n int, work, memory string, shards int, reuse, keep bool, lat bench.LatencyConfig, prev []scaleResult, only string) (*scaleResult, error) {
	want := func(label string) bool {
		if only == "" {
			return true
		}
		short := strings.ToLower(strings.Fields(label)[0])
		if short == "order" {
			short = "orderby"
		}
		for _, o := range strings.Split(only, ",") {
			if strings.EqualFold(strings.TrimSpace(o), label) || strings.EqualFold(strings.TrimSpace(o), short) {
				return true
			}
		}
		return false
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "%s LUBM-%d: %s\n", time.Now().Format("15:04:05"), n, fmt.Sprintf(format, a...))
	}
	data := filepath.Join(work, fmt.Sprintf("lubm%d.nt", n))
	snap := filepath.Join(work, fmt.Sprintf("snap%d", n))
	r := &scaleResult{Univ: n, Data: data, Shards: shards, Memory: memory, Date: time.Now().UTC().Format(time.RFC3339)}
	var old *scaleResult
	for i := range prev {
		if prev[i].Univ == n {
			old = &prev[i]
		}
	}
	_, merr := graphstore.ReadManifest(snap)
	if reuse && merr == nil {
		// The load's figures are those of the run that loaded it (none if
		// it was loaded by hand: the table then shows zeros).
		logf("reusing %s", snap)
		if old != nil {
			*r = *old
		}
		r.Queries = slices.DeleteFunc(slices.Clone(r.Queries), func(q scaleQuery) bool { return want(q.Label) })
	} else {
		if _, err := os.Stat(data); err != nil {
			logf("generating %s", data)
			if out, err := selfCommand(ctx, "gen", "lubm", "--univ", strconv.Itoa(n), "--out", data, "--quiet").CombinedOutput(); err != nil {
				return nil, fmt.Errorf("gen: %v: %s", err, out)
			}
		}
		logf("loading (--memory %s --shards %d)", memory, shards)
		la := bench.ReadLoadAvg()
		cmd := selfCommand(ctx, "load", "--memory", memory, "--shards", strconv.Itoa(shards), "--out", snap, data)
		var out bytes.Buffer
		cmd.Stdout = &out
		logFile, _ := os.Create(snap + ".load.log")
		if logFile != nil {
			cmd.Stderr = logFile
			defer logFile.Close()
		}
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("load: %v: %s", err, out.String())
		}
		r.LoadWall = time.Since(t0).Seconds()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.PeakRSS = ru.Maxrss * 1024
			r.LoadCPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		}
		r.LoadAvg = la.String() + " → " + bench.ReadLoadAvg().String()
		if !keep {
			os.Remove(data)
		}
	}
	m, err := graphstore.ReadManifest(snap)
	if err != nil {
		return nil, err
	}
	r.Triples, r.Terms = m.Triples, m.Terms
	r.SnapBytes = 0
	for _, f := range m.Files {
		r.SnapBytes += f.Size
	}
	logf("loaded: %d triples in %.1fs wall, %.1fs CPU, peak RSS %s, %.1f B/triple", r.Triples, r.LoadWall, r.LoadCPU, formatByteSize(r.PeakRSS), r.bytesPerTriple())

	runtime.GC()
	t0 := time.Now()
	st, err := graphstore.OpenSnapshot(snap, graphstore.OpenOptions{SkipChecksums: true})
	if err != nil {
		return nil, err
	}
	// No per-query memory budget: L1 at LUBM-2560 needs more than the
	// default's 753 MiB (the machine is the bound here).
	eng, err := wexec.NewGraphEngine(st, wexec.Config{MaxQueryMemory: -1, MaxMemory: -1})
	if err != nil {
		st.Close()
		return nil, err
	}
	r.ReopenS = time.Since(t0).Seconds()
	defer func() {
		if eng != nil {
			eng.Close()
			st.Close()
		}
	}()
	logf("reopened in %.3fs", r.ReopenS)

	var buf []byte
	measure := func(label, text string, decode bool) scaleQuery {
		q := scaleQuery{Label: label}
		counted := bench.MeasureLatency(ctx, lat, label, func(ctx context.Context) (int, error) {
			res, err := eng.Query(ctx, text, wexec.Options{})
			if err != nil {
				return 0, err
			}
			return res.Len(), nil
		})
		q.Rows, q.Counted, q.Runs, q.Error = counted.Rows, counted.Summary.Median, counted.Summary.N, counted.Error
		if decode && q.Error == "" {
			decoded := bench.MeasureLatency(ctx, lat, label, func(ctx context.Context) (int, error) {
				res, err := eng.Query(ctx, text, wexec.Options{})
				if err != nil {
					return 0, err
				}
				buf = buf[:0]
				for i := 0; i < res.Len(); i++ {
					for c := range res.Rows.Cols {
						buf = res.AppendNTriples(buf, res.Rows.At(c, i))
						buf = append(buf, '\t')
					}
					buf = append(buf, '\n')
				}
				return res.Len(), nil
			})
			q.Decoded, q.Error = decoded.Summary.Median, decoded.Error
		}
		logf("%s: %d rows, counted %.3f ms, decoded %.3f ms (%d runs) %s", label, q.Rows, q.Counted, q.Decoded, q.Runs, q.Error)
		return q
	}
	for i := 1; i <= 7; i++ {
		if !want(fmt.Sprintf("L%d", i)) {
			continue
		}
		text, err := os.ReadFile(shareddata.Path("datasets", "lubm", "queries", "wukong", fmt.Sprintf("q%d.rq", i)))
		if err != nil {
			return nil, err
		}
		r.Queries = append(r.Queries, measure(fmt.Sprintf("L%d", i), string(text), true))
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	for _, c := range scaleChecks {
		if !want(c.label) {
			continue
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		q := measure(c.label, c.text, false)
		runtime.ReadMemStats(&after)
		// Allocated per run (warm-up included), an upper bound of the
		// extra memory one run holds.
		q.HeapGrow = int64(after.TotalAlloc-before.TotalAlloc) / int64(max(q.Runs+1, 1))
		r.Queries = append(r.Queries, q)
	}
	order := func(l string) int {
		for i, c := range scaleChecks {
			if c.label == l {
				return 10 + i
			}
		}
		return int(l[1] - '0')
	}
	slices.SortFunc(r.Queries, func(a, b scaleQuery) int { return order(a.Label) - order(b.Label) })
	if !keep && !reuse {
		eng.Close()
		st.Close()
		eng, st = nil, nil
		os.RemoveAll(snap)
	}
	return r, nil
}

// writeScaleOutputs writes scale.md and scale.svg into work and, with
// doc, the scale section of that file.
func writeScaleOutputs(work string, all []scaleResult, doc string) error {
	var md bytes.Buffer
	writeScaleTable(&md, all)
	if err := os.WriteFile(filepath.Join(work, "scale.md"), md.Bytes(), 0o644); err != nil {
		return err
	}
	var svg bytes.Buffer
	writeScaleSVG(&svg, all)
	if err := os.WriteFile(filepath.Join(work, "scale.svg"), svg.Bytes(), 0o644); err != nil {
		return err
	}
	if doc == "" {
		return nil
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(doc), "scale.svg"), svg.Bytes(), 0o644); err != nil {
		return err
	}
	return replaceDocSection(doc, "<!-- bench-scale -->", "<!-- /bench-scale -->", md.String())
}

// replaceDocSection replaces what lies between the markers begin and end
// in file doc (appending the markers and text if they are absent).
func replaceDocSection(doc, begin, end, text string) error {
	b, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	body := begin + "\n" + text + end
	if i < 0 || j < i {
		s = strings.TrimRight(s, "\n") + "\n\n" + body + "\n"
	} else {
		s = s[:i] + body + s[j+len(end):]
	}
	return os.WriteFile(doc, []byte(s), 0o644)
}

func writeScaleTable(w io.Writer, all []scaleResult) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	fmt.Fprintf(bw, "Generated by `wukongd bench-scale` (`make bench-scale`); plot: [scale.svg](scale.svg). Load: `wukongd load` as a child process (peak RSS is its maximum resident set); L1–L7 in process, one engine over the reopened snapshot, median of warm runs, counted (rows only) / decoded (every term as N-Triples text).\n\n")
	fmt.Fprintf(bw, "| scale | triples | terms | load wall | load CPU | triples/s (wall) | triples per CPU-s | peak RSS | B/triple | reopen | date, load avg |\n")
	fmt.Fprintf(bw, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range all {
		fmt.Fprintf(bw, "| LUBM-%d (%d shards, --memory %s) | %s | %s | %.1f s | %.1f s | %.0f k | %.0f k | %s | %.1f | %.3f s | %s, %s |\n",
			r.Univ, r.Shards, r.Memory, groupDigits(r.Triples), groupDigits(r.Terms), r.LoadWall, r.LoadCPU,
			float64(r.Triples)/math.Max(r.LoadWall, 1e-9)/1e3, float64(r.Triples)/math.Max(r.LoadCPU, 1e-9)/1e3,
			formatByteSize(r.PeakRSS), r.bytesPerTriple(), r.ReopenS, r.Date[:10], r.LoadAvg)
	}
	fmt.Fprintf(bw, "\nRows, and median latency counted / decoded (ms):\n\n| query |")
	for _, r := range all {
		fmt.Fprintf(bw, " LUBM-%d |", r.Univ)
	}
	fmt.Fprintf(bw, "\n|---|")
	for range all {
		fmt.Fprintf(bw, "---|")
	}
	fmt.Fprintf(bw, "\n")
	labels := []string{}
	for _, r := range all {
		for _, q := range r.Queries {
			if !slices.Contains(labels, q.Label) {
				labels = append(labels, q.Label)
			}
		}
	}
	for _, l := range labels {
		fmt.Fprintf(bw, "| %s |", l)
		for _, r := range all {
			cell := "—"
			for _, q := range r.Queries {
				if q.Label != l {
					continue
				}
				switch {
				case q.Error != "":
					cell = "error: " + q.Error
				case q.Decoded > 0:
					cell = fmt.Sprintf("%s rows, %s / %s", groupDigits(uint64(q.Rows)), fmtMs(q.Counted), fmtMs(q.Decoded))
				default:
					cell = fmt.Sprintf("%s rows, %s", groupDigits(uint64(q.Rows)), fmtMs(q.Counted))
					if q.HeapGrow > 0 {
						cell += ", " + formatByteSize(q.HeapGrow) + " allocated a run"
					}
				}
			}
			fmt.Fprintf(bw, " %s |", cell)
		}
		fmt.Fprintf(bw, "\n")
	}
}

func fmtMs(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f", ms)
	case ms >= 1:
		return fmt.Sprintf("%.2f", ms)
	}
	return fmt.Sprintf("%.3f", ms)
}

func groupDigits(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// writeScaleSVG plots, against the triples (log-log), the load's wall and
// CPU seconds and peak RSS (left) and L1–L7's counted latency (right).
func writeScaleSVG(w io.Writer, all []scaleResult) {
	const W, H, pw, ph = 980.0, 420.0, 400.0, 300.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%.0f" height="%.0f" fill="white"/>`+"\n", W, H)
	colors := []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"}
	type series struct {
		name string
		x, y []float64
	}
	panel := func(x0 float64, title, unit string, ss []series) {
		y0 := 50.0
		var xs, ys []float64
		for _, s := range ss {
			for i := range s.x {
				if s.x[i] > 0 && s.y[i] > 0 {
					xs, ys = append(xs, s.x[i]), append(ys, s.y[i])
				}
			}
		}
		if len(xs) == 0 {
			return
		}
		lx0, lx1 := math.Floor(math.Log10(slices.Min(xs))), math.Ceil(math.Log10(slices.Max(xs)))
		ly0, ly1 := math.Floor(math.Log10(slices.Min(ys))), math.Ceil(math.Log10(slices.Max(ys)))
		if lx1 == lx0 {
			lx1++
		}
		if ly1 == ly0 {
			ly1++
		}
		px := func(v float64) float64 { return x0 + (math.Log10(v)-lx0)/(lx1-lx0)*pw }
		py := func(v float64) float64 { return y0 + ph - (math.Log10(v)-ly0)/(ly1-ly0)*ph }
		fmt.Fprintf(&b, `<text x="%.1f" y="25" font-weight="bold">%s</text>`+"\n", x0, html.EscapeString(title))
		for e := lx0; e <= lx1; e++ {
			x := px(math.Pow(10, e))
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x, y0, x, y0+ph)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%g</text>`+"\n", x, y0+ph+16, math.Pow(10, e))
		}
		for e := ly0; e <= ly1; e++ {
			y := py(math.Pow(10, e))
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x0, y, x0+pw, y)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%g</text>`+"\n", x0-4, y+4, math.Pow(10, e))
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">triples</text>`+"\n", x0+pw/2, y0+ph+34)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="start">%s</text>`+"\n", x0, y0-6, html.EscapeString(unit))
		for k, s := range ss {
			c := colors[k%len(colors)]
			var pts []string
			for i := range s.x {
				if s.x[i] > 0 && s.y[i] > 0 {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(s.x[i]), py(s.y[i])))
					fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s: %.4g</title></circle>`+"\n", px(s.x[i]), py(s.y[i]), c, html.EscapeString(s.name), s.y[i])
				}
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", strings.Join(pts, " "), c)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="10" height="10" fill="%s"/><text x="%.1f" y="%.1f">%s</text>`+"\n",
				x0+pw+8, y0+float64(k)*16, c, x0+pw+22, y0+float64(k)*16+9, html.EscapeString(s.name))
		}
	}
	var tri []float64
	for _, r := range all {
		tri = append(tri, float64(r.Triples))
	}
	get := func(f func(r scaleResult) float64) []float64 {
		var y []float64
		for _, r := range all {
			y = append(y, f(r))
		}
		return y
	}
	panel(50, "Load (wukongd load, child process)", "seconds · GB", []series{
		{"wall s", tri, get(func(r scaleResult) float64 { return r.LoadWall })},
		{"CPU s", tri, get(func(r scaleResult) float64 { return r.LoadCPU })},
		{"peak RSS GB", tri, get(func(r scaleResult) float64 { return float64(r.PeakRSS) / 1e9 })},
		{"snapshot GB", tri, get(func(r scaleResult) float64 { return float64(r.SnapBytes) / 1e9 })},
	})
	var qs []series
	for i := 1; i <= 7; i++ {
		l := fmt.Sprintf("L%d", i)
		qs = append(qs, series{l, tri, get(func(r scaleResult) float64 {
			for _, q := range r.Queries {
				if q.Label == l && q.Error == "" {
					return q.Counted
				}
			}
			return 0
		})})
	}
	panel(540, "L1–L7 in process, counted (median)", "ms", qs)
	b.WriteString("</svg>\n")
	io.WriteString(w, b.String())
}

// readTimeLog fills r's load figures from the output of
// `/usr/bin/time -v wukongd load …` (GNU time's verbose format).
func readTimeLog(path string, r *scaleResult) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok {
			continue
		}
		switch k {
		case "Command being timed":
			f := strings.Fields(strings.Trim(v, `"`))
			for i := 0; i+1 < len(f); i++ {
				switch f[i] {
				case "--memory":
					r.Memory = f[i+1]
				case "--shards":
					r.Shards, _ = strconv.Atoi(f[i+1])
				}
			}
			r.Data = f[len(f)-1]
		case "User time (seconds)", "System time (seconds)":
			x, _ := strconv.ParseFloat(v, 64)
			r.LoadCPU += x
			found++
		case "Maximum resident set size (kbytes)":
			x, _ := strconv.ParseInt(v, 10, 64)
			r.PeakRSS = x * 1024
			found++
		case "Elapsed (wall clock) time (h:mm:ss or m:ss)":
			secs := 0.0
			for _, p := range strings.Split(v, ":") {
				x, _ := strconv.ParseFloat(p, 64)
				secs = secs*60 + x
			}
			r.LoadWall = secs
			found++
		}
	}
	if found < 4 {
		return fmt.Errorf("%s: not the output of /usr/bin/time -v", path)
	}
	if st, err := os.Stat(path); err == nil {
		r.Date = st.ModTime().UTC().Format(time.RFC3339)
	}
	r.LoadAvg = "see the log"
	return nil
}
