package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strings"
)

// Colors of the systems in the plots, in the order of Report.Systems.
var plotColors = []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"}

type svgDoc struct {
	b    strings.Builder
	w, h float64
}

func newSVG(w, h float64) *svgDoc {
	d := &svgDoc{w: w, h: h}
	fmt.Fprintf(&d.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&d.b, `<rect width="%.0f" height="%.0f" fill="white"/>`+"\n", w, h)
	return d
}

func (d *svgDoc) text(x, y float64, anchor, s string, extra string) {
	fmt.Fprintf(&d.b, `<text x="%.1f" y="%.1f" text-anchor="%s"%s>%s</text>`+"\n", x, y, anchor, extra, html.EscapeString(s))
}

func (d *svgDoc) line(x1, y1, x2, y2 float64, stroke string, width float64) {
	fmt.Fprintf(&d.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"/>`+"\n", x1, y1, x2, y2, stroke, width)
}

func (d *svgDoc) rect(x, y, w, h float64, fill, title string) {
	fmt.Fprintf(&d.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`+"\n", x, y, max(w, 0.5), h, fill, html.EscapeString(title))
}

func (d *svgDoc) done(w io.Writer) error {
	d.b.WriteString("</svg>\n")
	_, err := io.WriteString(w, d.b.String())
	return err
}

// legend draws the systems' names with their colors at (x, y).
func (d *svgDoc) legend(x, y float64, names []string, colors []string) {
	for i, n := range names {
		d.rect(x, y+float64(i)*16-9, 10, 10, colors[i], n)
		d.text(x+14, y+float64(i)*16, "start", n, "")
	}
}

// logTicks returns the powers of ten from lo to hi (inclusive).
func logTicks(lo, hi float64) []float64 {
	var t []float64
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		t = append(t, math.Pow(10, e))
	}
	return t
}

func fmtTick(v float64) string {
	if v >= 1 {
		return fmt.Sprintf("%g", v)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
}

// WriteLatencySVG plots the median latency over HTTP of every query, one
// bar per system, on a logarithmic axis.
func (r *Report) WriteLatencySVG(w io.Writer) error {
	type series struct {
		name string
		run  *LatencyRun
	}
	var ss []series
	for _, s := range r.Systems {
		if run := s.Run(PathHTTP, ""); run != nil {
			ss = append(ss, series{s.Name, run})
		}
	}
	if len(ss) == 0 {
		return fmt.Errorf("no latency over HTTP to plot")
	}
	queries := ss[0].run.Queries
	lo, hi := math.Inf(1), 0.0
	for _, s := range ss {
		for _, q := range s.run.Queries {
			if q.Error == "" && q.Summary.Median > 0 {
				lo, hi = min(lo, q.Summary.Median), max(hi, q.Summary.Median)
			}
		}
	}
	if hi == 0 {
		lo, hi = 0.1, 1
	}
	ticks := logTicks(lo, hi)
	tlo, thi := ticks[0], ticks[len(ticks)-1]
	if tlo == thi {
		thi *= 10
		ticks = append(ticks, thi)
	}
	const left, right, top, barH, gap = 90.0, 130.0, 40.0, 7.0, 8.0
	groupH := float64(len(ss))*barH + gap
	width := 860.0
	height := top + float64(len(queries))*groupH + 40
	plotW := width - left - right
	x := func(v float64) float64 {
		return left + plotW*(math.Log10(v)-math.Log10(tlo))/(math.Log10(thi)-math.Log10(tlo))
	}
	d := newSVG(width, height)
	d.text(width/2, 20, "middle", fmt.Sprintf("Median latency per query over HTTP, JSON results (ms, log scale) — %s", r.Dataset.Name), ` font-size="14"`)
	bottom := top + float64(len(queries))*groupH
	for _, t := range ticks {
		d.line(x(t), top-4, x(t), bottom, "#ddd", 1)
		d.text(x(t), bottom+16, "middle", fmtTick(t), "")
	}
	var names, colors []string
	for i, s := range ss {
		names = append(names, s.name)
		colors = append(colors, plotColors[i%len(plotColors)])
	}
	for qi, q := range queries {
		y0 := top + float64(qi)*groupH
		d.text(left-8, y0+float64(len(ss))*barH/2+4, "end", queryTitle(q), "")
		for si, s := range ss {
			sq := s.run.Query(q.Name)
			if sq == nil || sq.Error != "" || sq.Summary.Median <= 0 {
				continue
			}
			v := sq.Summary.Median
			d.rect(left, y0+float64(si)*barH, x(v)-left, barH-1, colors[si],
				fmt.Sprintf("%s %s: median %s ms, p99 %s ms, %d rows", s.name, queryTitle(q), fmtMs(v), fmtMs(sq.Summary.P99), sq.Rows))
		}
	}
	d.line(left, top-4, left, bottom, "#333", 1)
	d.legend(width-right+16, top+10, names, colors)
	return d.done(w)
}

// WriteThroughputSVG plots queries/s of the mixed workload against the
// number of clients, one line per system.
func (r *Report) WriteThroughputSVG(w io.Writer) error {
	var ss []*System
	for _, s := range r.Systems {
		if len(s.Throughput) > 0 {
			ss = append(ss, s)
		}
	}
	if len(ss) == 0 {
		return fmt.Errorf("no throughput to plot")
	}
	var clients []int
	seen := map[int]bool{}
	lo, hi := math.Inf(1), 0.0
	for _, s := range ss {
		for _, p := range s.Throughput {
			if !seen[p.Clients] {
				seen[p.Clients] = true
				clients = append(clients, p.Clients)
			}
			if p.QPS > 0 {
				lo, hi = min(lo, p.QPS), max(hi, p.QPS)
			}
		}
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	sortInts(clients)
	ticks := logTicks(lo, hi)
	tlo, thi := ticks[0], ticks[len(ticks)-1]
	if tlo == thi {
		thi *= 10
		ticks = append(ticks, thi)
	}
	const left, right, top, bottomM = 70.0, 130.0, 40.0, 50.0
	width, height := 760.0, 420.0
	plotW, plotH := width-left-right, height-top-bottomM
	cmin, cmax := float64(clients[0]), float64(clients[len(clients)-1])
	x := func(c int) float64 {
		if cmax == cmin {
			return left + plotW/2
		}
		return left + plotW*(math.Log2(float64(c))-math.Log2(cmin))/(math.Log2(cmax)-math.Log2(cmin))
	}
	y := func(v float64) float64 {
		return top + plotH - plotH*(math.Log10(v)-math.Log10(tlo))/(math.Log10(thi)-math.Log10(tlo))
	}
	d := newSVG(width, height)
	d.text(width/2, 20, "middle", fmt.Sprintf("Mixed workload over HTTP: queries/s against clients (log scales) — %s", r.Dataset.Name), ` font-size="14"`)
	for _, t := range ticks {
		d.line(left, y(t), left+plotW, y(t), "#ddd", 1)
		d.text(left-6, y(t)+4, "end", fmtTick(t), "")
	}
	for _, c := range clients {
		d.line(x(c), top, x(c), top+plotH, "#eee", 1)
		d.text(x(c), top+plotH+16, "middle", fmt.Sprint(c), "")
	}
	d.text(left+plotW/2, height-12, "middle", "concurrent clients", "")
	var names, colors []string
	for i, s := range ss {
		color := plotColors[i%len(plotColors)]
		names = append(names, s.Name)
		colors = append(colors, color)
		var pts []string
		for _, p := range s.Throughput {
			if p.QPS > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.Clients), y(p.QPS)))
			}
		}
		fmt.Fprintf(&d.b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color, strings.Join(pts, " "))
		for _, p := range s.Throughput {
			if p.QPS > 0 {
				fmt.Fprintf(&d.b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s, %d clients: %.0f q/s, median %s ms, p99 %s ms</title></circle>`+"\n",
					x(p.Clients), y(p.QPS), color, html.EscapeString(s.Name), p.Clients, p.QPS, fmtMs(p.Latency.Median), fmtMs(p.Latency.P99))
			}
		}
	}
	d.line(left, top, left, top+plotH, "#333", 1)
	d.line(left, top+plotH, left+plotW, top+plotH, "#333", 1)
	d.legend(width-right+16, top+10, names, colors)
	return d.done(w)
}

func sortInts(a []int) { sort.Ints(a) }
