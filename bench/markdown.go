package bench

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Base is the system the others are compared with.
const Base = "wukongd"

// MarkdownOptions shape the Markdown report.
type MarkdownOptions struct {
	// Level is the heading level of the report's sections (2: "##").
	Level int
	// Plots is the path prefix of the SVG plots as the Markdown links them
	// ("" for the same directory); empty Plots with NoPlots leaves them out.
	Plots   string
	NoPlots bool
}

// WriteMarkdown writes the report as Markdown: setup, loading, latency over
// HTTP with the speed-up per query, latency in process per execution mode,
// throughput against clients, and links to the plots.
func (r *Report) WriteMarkdown(w io.Writer, o MarkdownOptions) error {
	if o.Level < 1 {
		o.Level = 2
	}
	h := func(title string) string { return strings.Repeat("#", o.Level) + " " + title }
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	data := fmt.Sprintf("%s (%s triples, %s)", r.Dataset.Name, fmtInt(r.Dataset.Triples), r.Dataset.Source)
	if r.Dataset.Reasoning != "" {
		data = fmt.Sprintf("%s with its %s closure (%s triples, explicit and inferred; %s)", r.Dataset.Name, r.Dataset.Reasoning, fmtInt(r.Dataset.Triples), r.Dataset.Source)
	}
	p("Machine %s. Run %s UTC, commit %s. Data: %s.\n\n",
		r.Machine, r.Date.UTC().Format("2006-01-02 15:04"), orDash(r.Commit), data)
	p("Command: `%s`\n\n", r.Command)
	p("Latency: %d warm-up runs, then up to %d timed runs per query (at least %d, stopping after %s); "+
		"median and p99 (nearest rank: with fewer than 100 runs p99 is the slowest run). ",
		r.Latency.Warmup, r.Latency.Repeat, r.Latency.MinRuns, r.Latency.Budget)
	p("Over HTTP every system gets the same Go client (bench.Endpoint): a form POST on a keep-alive HTTP/1.1 connection " +
		"read and written by the calling goroutine alone (no net/http Transport goroutines), " +
		"SPARQL JSON results, every row decoded into terms (package results); the time is from sending the request to the last row decoded.\n\n")
	for _, n := range r.Notes {
		p("- %s\n", n)
	}
	if len(r.Notes) > 0 {
		p("\n")
	}

	// Systems.
	p("%s\n\n", h("Systems"))
	p("| system | version | setup |\n|---|---|---|\n")
	for _, s := range r.Systems {
		p("| %s | %s | %s |\n", s.Name, orDash(s.Version), orDash(s.Setup))
	}
	p("\n")
	for _, s := range r.Systems {
		for _, e := range s.Errors {
			p("- %s: %s\n", s.Name, e)
		}
	}

	// Loading.
	p("%s\n\n", h("Loading"))
	p("| system | load | triples/s | stored bytes/triple | peak RSS | reopen | load average |\n|---|---|---|---|---|---|---|\n")
	for _, s := range r.Systems {
		l := s.Load
		if l == nil {
			continue
		}
		reopen := "—"
		if l.ReopenSeconds > 0 {
			reopen = fmt.Sprintf("%.2f s", l.ReopenSeconds)
			if l.ReopenRSSBytes > 0 {
				reopen += fmt.Sprintf(" (RSS %s)", fmtBytes(l.ReopenRSSBytes))
			}
		}
		bpt := "—"
		if l.BytesPerTriple > 0 {
			bpt = fmt.Sprintf("%.1f", l.BytesPerTriple)
		}
		cached := ""
		if l.Cached {
			cached = " (cached from an earlier run)"
		}
		p("| %s | %.1f s%s | %s | %s | %s | %s | %.1f |\n", s.Name, l.Seconds, cached,
			fmtInt(uint64(l.TriplesPerSec)), bpt, fmtBytes(l.PeakRSSBytes), reopen, l.LoadAvg.One)
	}
	p("\n")
	p("wukongd: `wukongd load` as a child process (wall time, its peak RSS), stored bytes = the snapshot directory; " +
		"reopen = opening the snapshot (checksums verified) and starting the engine in process, RSS = the `wukongd serve` process once it answers. " +
		"Virtuoso: the bulk loader until after the checkpoint, peak RSS = the server's VmHWM after the load, stored bytes = virtuoso.db; " +
		"reopen = starting virtuoso-t on a copy of the loaded database until it answers SPARQL. " +
		"Oxigraph: parsing the N-Triples into its in-memory store (nothing is stored, so nothing to reopen); peak RSS = the Node process over the whole run.\n\n")

	base := r.System(Base)
	peers := r.peers()

	if g := r.goals(); g != "" {
		p("%s\n\n%s\n", h("Goals (issue 9: LUBM-40, over HTTP, JSON results, against Virtuoso)"), g)
	}

	// Latency over HTTP.
	if httpBase := base.Run(PathHTTP, ""); httpBase != nil {
		p("%s\n\n", h("Latency over HTTP (JSON results)"))
		p("Median / p99 in milliseconds; speed-up = the peer's median over %s's. Load average: ", Base)
		var las []string
		for _, s := range r.Systems {
			if run := s.Run(PathHTTP, ""); run != nil {
				las = append(las, fmt.Sprintf("%s %.1f%s", s.Name, run.LoadAvg.One, otherCores(run.OtherCores)))
			}
		}
		p("%s (other processes: the cores that processes other than the client and the server kept busy on average).\n\n", strings.Join(las, ", "))
		if r.Rounds > 1 {
			p("Each system ran every query in %d interleaved rounds (A B C, A B C, …); the median and p99 are over the timed runs of all rounds.\n\n", r.Rounds)
		}
		p("| query | rows | %s |", Base)
		for _, s := range peers {
			p(" %s | speed-up |", s.Name)
		}
		p("\n|---|---|---|")
		for range peers {
			p("---|---|")
		}
		p("\n")
		ups := map[string]map[string]float64{}
		for _, s := range peers {
			ups[s.Name] = SpeedUps(httpBase, s.Run(PathHTTP, ""))
		}
		for _, q := range httpBase.Queries {
			p("| %s | %s | %s |", queryTitle(q), rowsCell(q), latCell(q))
			for _, s := range peers {
				pq := s.Run(PathHTTP, "").Query(q.Name)
				p(" %s | %s |", peerCell(q, pq), fmtRatio(ups[s.Name][q.Name]))
			}
			p("\n")
		}
		p("\n")
		for _, s := range peers {
			p("%s\n", speedUpLine(httpBase, s.Name, ups[s.Name]))
		}
		p("\n")
		var empty []string
		for _, q := range httpBase.Queries {
			if q.Error == "" && q.Rows == 0 {
				empty = append(empty, queryTitle(q))
			}
		}
		p("Rows: the count %s returned; a peer's count is shown in bold where it differs (then no speed-up is computed).", Base)
		switch {
		case len(empty) > 0 && r.Dataset.Reasoning == "":
			p(" No rows for %s: on the raw UBA data these need RDFS/OWL inference, which none of the systems does here "+
				"(`--reasoning owl-rl` materializes it and gives every system the closure), "+
				"or never match (L3: undergraduates have no degree); they time a query that finds nothing.", strings.Join(empty, ", "))
		case len(empty) > 0:
			p(" No rows for %s, with the %s closure: these never match (L3: undergraduates have no degree; Q2 on LUBM-1); "+
				"they time a query that finds nothing.", strings.Join(empty, ", "), r.Dataset.Reasoning)
		}
		p("\n\n")
	}

	// In process, by mode.
	var modeRuns []*LatencyRun
	for _, m := range []string{"planned", "in-place", "fork-join"} {
		if run := base.Run(PathInProcess, m); run != nil {
			modeRuns = append(modeRuns, run)
		}
	}
	var inPeers []*System
	for _, s := range peers {
		if s.Run(PathInProcess, "") != nil {
			inPeers = append(inPeers, s)
		}
	}
	if len(modeRuns) > 0 {
		p("%s\n\n", h("Latency in process, by execution mode"))
		p("Median / p99 in milliseconds, from query text to the result's ID rows (parse, plan, execute; no decoding). ")
		p("planned = the planner's choice per step; in-place and fork-join force the mode of every step that needs remote data. ")
		if len(inPeers) > 0 {
			p("Peers in process: the query run through their own API with the results serialized to SPARQL JSON and parsed back. ")
		}
		var las []string
		for _, run := range modeRuns {
			las = append(las, fmt.Sprintf("%s %.1f%s", run.Mode, run.LoadAvg.One, otherCores(run.OtherCores)))
		}
		p("Load average: %s.\n\n", strings.Join(las, ", "))
		p("| query | rows |")
		for _, run := range modeRuns {
			p(" %s |", run.Mode)
		}
		for _, s := range inPeers {
			p(" %s |", s.Name)
		}
		p("\n|---|---|%s%s\n", strings.Repeat("---|", len(modeRuns)), strings.Repeat("---|", len(inPeers)))
		for _, q := range modeRuns[0].Queries {
			p("| %s | %s |", queryTitle(q), rowsCell(q))
			for _, run := range modeRuns {
				p(" %s |", latCell(run.Query(q.Name)))
			}
			for _, s := range inPeers {
				p(" %s |", peerCell(q, s.Run(PathInProcess, "").Query(q.Name)))
			}
			p("\n")
		}
		p("\n")
	}

	// Throughput.
	var tput []*System
	for _, s := range r.Systems {
		if len(s.Throughput) > 0 {
			tput = append(tput, s)
		}
	}
	if len(tput) > 0 {
		p("%s\n\n", h("Throughput: mixed workload over HTTP"))
		var parts []string
		for _, t := range r.Mix {
			parts = append(parts, fmt.Sprintf("%s %d", t.Name, t.Weight))
		}
		p("Wukong's emulator mix (%s; the constant of each query drawn at random from the type index of its class), "+
			"N closed-loop clients on keep-alive connections, %s per point after %s of warm-up. "+
			"Queries/s, median / p99 latency in milliseconds, and the server process's CPU time per query (user + system, /proc) in microseconds.\n\n", strings.Join(parts, ", "), r.Throughput.Duration, r.Throughput.Warmup)
		if r.Rounds > 1 {
			p("The systems ran in %d interleaved rounds (every point on every system, then the next round), so that a burst of other load lands on all of them; each cell is the round of median queries/s, with the rounds' median CPU per query.\n\n", r.Rounds)
		}
		p("| clients |")
		for _, s := range tput {
			p(" %s q/s | %s median / p99 | %s server CPU µs/q | load avg, other cores |", s.Name, s.Name, s.Name)
		}
		if base != nil && len(base.Throughput) > 0 {
			for _, s := range tput {
				if s.Name != Base {
					p(" %s ÷ %s |", Base, s.Name)
				}
			}
		}
		p("\n|---|")
		for range tput {
			p("---|---|---|---|")
		}
		if base != nil && len(base.Throughput) > 0 {
			p("%s", strings.Repeat("---|", len(tput)-1))
		}
		p("\n")
		for _, n := range r.Throughput.Clients {
			p("| %d |", n)
			for _, s := range tput {
				pt := point(s, n)
				if pt == nil {
					p(" — | — | — | — |")
					continue
				}
				errs := ""
				if pt.Errors > 0 {
					errs = fmt.Sprintf(" (%d errors)", pt.Errors)
				}
				p(" %.0f%s | %s / %s | %s | %.1f, %s |", pt.QPS, errs, fmtMs(pt.Latency.Median), fmtMs(pt.Latency.P99), cpuCell(pt.ServerCPU), pt.LoadAvg.One, coresCell(pt.OtherCores))
			}
			if bp := point(base, n); bp != nil {
				for _, s := range tput {
					if s.Name == Base {
						continue
					}
					if sp := point(s, n); sp != nil && sp.QPS > 0 {
						p(" %s |", fmtRatio(bp.QPS/sp.QPS))
					} else {
						p(" — |")
					}
				}
			}
			p("\n")
		}
		p("\n")
		for _, s := range tput {
			if best := bestPoint(s.Throughput); best != nil {
				p("- %s: peak %.0f queries/s with %d clients", s.Name, best.QPS, best.Clients)
				if best.ServerCPU > 0 || best.ClientCPU > 0 {
					p("; there the server process used %s µs of CPU per query and the clients %s µs", cpuCell(best.ServerCPU), cpuCell(best.ClientCPU))
				}
				p(".\n")
			}
		}
		p("\n")
		p("The load generator (the same Go client, decoding every row) runs on the same machine and shares its cores with the server.\n\n")
	}
	if base != nil && len(base.ThroughputInProcess) > 0 {
		p("%s\n\n", h("Throughput: the same mix in process"))
		p("The same query sequence run by N goroutines calling %s's engine directly (a text of a known shape runs its template's plan bound to its constants, as the server does; others are parsed and planned; no HTTP, no decoding): "+
			"what the engine sustains without the protocol.\n\n", Base)
		p("| clients | q/s | median / p99 (ms) | load avg, other cores |\n|---|---|---|---|\n")
		for _, pt := range base.ThroughputInProcess {
			p("| %d | %.0f | %s / %s | %.1f, %s |\n", pt.Clients, pt.QPS, fmtMs(pt.Latency.Median), fmtMs(pt.Latency.P99), pt.LoadAvg.One, coresCell(pt.OtherCores))
		}
		p("\n")
	}

	if !o.NoPlots {
		p("%s\n\n", h("Plots"))
		p("![latency per query over HTTP](%slatency.svg)\n\n", o.Plots)
		if len(tput) > 0 {
			p("![throughput against clients](%sthroughput.svg)\n\n", o.Plots)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// GoalPeer is the system the goals are stated against.
const GoalPeer = "virtuoso"

// goals checks the run against the goals of issue 9 and returns them as
// a Markdown table ("" without the peer's figures).
func (r *Report) goals() string {
	base, peer := r.System(Base).Run(PathHTTP, ""), r.System(GoalPeer).Run(PathHTTP, "")
	if base == nil || peer == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("| goal | this run |\n|---|---|\n")
	ups := SpeedUps(base, peer)
	var ls []float64
	var slower, missing, fast, slow []string
	var minUp, maxUp float64
	var minQ, maxQ string
	for _, q := range base.Queries {
		if !strings.HasPrefix(q.Label, "L") {
			continue
		}
		x, ok := ups[q.Name]
		if !ok {
			missing = append(missing, q.Label)
			continue
		}
		ls = append(ls, x)
		if x <= 1 {
			slower = append(slower, fmt.Sprintf("%s (%s)", q.Label, fmtRatio(x)))
		}
		if minQ == "" || x < minUp {
			minUp, minQ = x, q.Label
		}
		if maxQ == "" || x > maxUp {
			maxUp, maxQ = x, q.Label
		}
		switch q.Label {
		case "L4", "L5", "L6":
			cell := fmt.Sprintf("%s %s ms", q.Label, fmtMs(q.Summary.Median))
			if q.Summary.Median < 0.25 {
				fast = append(fast, cell)
			} else {
				slow = append(slow, cell)
			}
		}
	}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "not met"
	}
	switch {
	case len(ls) == 0:
		b.WriteString("| every one of L1–L7 faster than Virtuoso | no comparable figures |\n")
	default:
		cell := fmt.Sprintf("%s: %s (%s) to %s (%s)", verdict(len(slower) == 0 && len(missing) == 0), fmtRatio(minUp), minQ, fmtRatio(maxUp), maxQ)
		if len(slower) > 0 {
			cell += "; slower or equal: " + strings.Join(slower, ", ")
		}
		if len(missing) > 0 {
			cell += "; not compared (error or different rows): " + strings.Join(missing, ", ")
		}
		fmt.Fprintf(&b, "| every one of L1–L7 faster than Virtuoso | %s |\n", cell)
		gm := GeoMean(ls)
		fmt.Fprintf(&b, "| geometric mean of the L1–L7 speed-ups at least 5× | %s: %s |\n", verdict(gm >= 5 && len(missing) == 0), fmtRatio(gm))
	}
	if len(fast)+len(slow) > 0 {
		cell := verdict(len(slow) == 0 && len(fast) == 3)
		if len(fast) > 0 {
			cell += "; under: " + strings.Join(fast, ", ")
		}
		if len(slow) > 0 {
			cell += "; over: " + strings.Join(slow, ", ")
		}
		fmt.Fprintf(&b, "| (aim) L4–L6 under 0.25 ms | %s |\n", cell)
	}
	bs, ps := r.System(Base), r.System(GoalPeer)
	if bb, pb := bestPoint(bs.Throughput), bestPoint(ps.Throughput); bb != nil && pb != nil && pb.QPS > 0 {
		lo, hi := math.Inf(1), 0.0
		for _, pt := range bs.Throughput {
			if q := point(ps, pt.Clients); q != nil && q.QPS > 0 {
				lo, hi = min(lo, pt.QPS/q.QPS), max(hi, pt.QPS/q.QPS)
			}
		}
		fmt.Fprintf(&b, "| (aim) mixed-workload throughput ten times Virtuoso's | %s: peak %.0f against %.0f queries/s (%s); %s–%s at equal client counts |\n",
			verdict(bb.QPS >= 10*pb.QPS), bb.QPS, pb.QPS, fmtRatio(bb.QPS/pb.QPS), fmtRatio(lo), fmtRatio(hi))
	}
	return b.String()
}

func (r *Report) peers() []*System {
	var out []*System
	for _, s := range r.Systems {
		if s.Name != Base {
			out = append(out, s)
		}
	}
	return out
}

func point(s *System, clients int) *ThroughputPoint {
	if s == nil {
		return nil
	}
	for i := range s.Throughput {
		if s.Throughput[i].Clients == clients {
			return &s.Throughput[i]
		}
	}
	return nil
}

func bestPoint(pts []ThroughputPoint) *ThroughputPoint {
	var best *ThroughputPoint
	for i := range pts {
		if best == nil || pts[i].QPS > best.QPS {
			best = &pts[i]
		}
	}
	return best
}

func queryTitle(q *QueryResult) string {
	if q.Label != "" {
		return q.Label
	}
	return q.Name
}

func rowsCell(q *QueryResult) string {
	if q == nil || q.Rows < 0 {
		return "—"
	}
	return fmtInt(uint64(q.Rows))
}

func latCell(q *QueryResult) string {
	if q == nil {
		return "—"
	}
	if q.Error != "" {
		return "error: " + shorten(q.Error, 80)
	}
	return fmt.Sprintf("%s / %s", fmtMs(q.Summary.Median), fmtMs(q.Summary.P99))
}

// peerCell is the peer's latency, flagged when its rows differ from base's.
func peerCell(base, q *QueryResult) string {
	c := latCell(q)
	if q != nil && q.Error == "" && base != nil && base.Error == "" && q.Rows != base.Rows {
		c += fmt.Sprintf(" (**%s rows**)", fmtInt(uint64(max(q.Rows, 0))))
	}
	return c
}

func speedUpLine(base *LatencyRun, peer string, ups map[string]float64) string {
	var wk, std []float64
	var slower []string
	for _, q := range base.Queries {
		x, ok := ups[q.Name]
		if !ok {
			continue
		}
		if strings.HasPrefix(q.Label, "L") {
			wk = append(wk, x)
		} else {
			std = append(std, x)
		}
		if x < 1 {
			slower = append(slower, queryTitle(q))
		}
	}
	sort.Strings(slower)
	s := fmt.Sprintf("- against %s: geometric mean of the speed-ups %s over L1–L7 (%d queries)", peer, fmtRatio(GeoMean(wk)), len(wk))
	if len(std) > 0 {
		s += fmt.Sprintf(", %s over the standard queries (%d)", fmtRatio(GeoMean(std)), len(std))
	}
	if len(slower) > 0 {
		s += "; " + Base + " is slower on " + strings.Join(slower, ", ")
	} else if len(wk)+len(std) > 0 {
		s += "; " + Base + " is faster on every query compared"
	}
	return s + "."
}

// otherCores is " (other processes x.x cores)", or "" when unknown.
// cpuCell prints a CPU time per query in microseconds ("—": not measured).
func cpuCell(us float64) string {
	if us <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f", us)
}

func otherCores(c float64) string {
	if c < 0 {
		return ""
	}
	return fmt.Sprintf(" (other processes %.1f cores)", c)
}

func coresCell(c float64) string {
	if c < 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", c)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func shorten(s string, n int) string {
	s = strings.ReplaceAll(s, "|", "/")
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
