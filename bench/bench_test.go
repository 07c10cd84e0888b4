package bench

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	var xs []float64
	for i := 100; i >= 1; i-- {
		xs = append(xs, float64(i))
	}
	s := Summarize(xs)
	want := Summary{N: 100, Median: 50.5, P99: 99, Mean: 50.5, Min: 1, Max: 100}
	if s != want {
		t.Fatalf("Summarize(1..100) = %+v, want %+v", s, want)
	}
	if s := Summarize([]float64{3, 1, 2}); s.Median != 2 || s.P99 != 3 {
		t.Fatalf("Summarize(3,1,2) = %+v: want median 2, p99 3", s)
	}
	if s := Summarize(nil); s != (Summary{}) {
		t.Fatalf("Summarize(nil) = %+v", s)
	}
}

func TestGeoMean(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{2, 8}, 4},
		{[]float64{10}, 10},
		{[]float64{1, 10, 100}, 10},
		{nil, 0},
		{[]float64{1, 0}, 0},
	} {
		if got := GeoMean(c.in); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("GeoMean(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestMeasureLatency(t *testing.T) {
	calls := 0
	res := MeasureLatency(context.Background(), LatencyConfig{Warmup: 2, Repeat: 7}, "q", func(context.Context) (int, error) {
		calls++
		return 42, nil
	})
	if calls != 9 || res.Rows != 42 || res.Summary.N != 7 || len(res.Samples) != 7 || res.Error != "" {
		t.Fatalf("calls %d, result %+v: want 9 calls, 42 rows, 7 samples", calls, res)
	}

	n := 0
	res = MeasureLatency(context.Background(), LatencyConfig{Warmup: 1, Repeat: 5}, "q", func(context.Context) (int, error) {
		n++
		return n, nil
	})
	if !strings.Contains(res.Error, "row count changed") {
		t.Fatalf("changing row count: error %q", res.Error)
	}

	res = MeasureLatency(context.Background(), LatencyConfig{Repeat: 3}, "q", func(context.Context) (int, error) {
		return 0, errors.New("boom")
	})
	if res.Error != "boom" || len(res.Samples) != 0 {
		t.Fatalf("failing query: %+v", res)
	}

	// The budget stops the runs once MinRuns ran.
	calls = 0
	res = MeasureLatency(context.Background(), LatencyConfig{Repeat: 1000, MinRuns: 3, Budget: time.Nanosecond}, "q", func(context.Context) (int, error) {
		calls++
		return 1, nil
	})
	if calls != 3 || res.Summary.N != 3 {
		t.Fatalf("budget: %d calls, %d samples; want 3", calls, res.Summary.N)
	}
}

func TestMix(t *testing.T) {
	consts := map[string][]string{}
	for _, c := range Classes(WukongMix) {
		consts[c] = []string{"<http://x/" + c[strings.IndexByte(c, '#')+1:] + "0>", "<http://x/" + c[strings.IndexByte(c, '#')+1:] + "1>"}
	}
	m, err := NewMix(WukongMix, consts)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, len(WukongMix))
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 86000
	for i := 0; i < n; i++ {
		ti, text := m.Next(rng)
		counts[ti]++
		if strings.Contains(text, "%C") || !strings.Contains(text, "<http://x/") {
			t.Fatalf("query %d not filled in: %s", i, text)
		}
	}
	total := 0
	for _, tm := range WukongMix {
		total += tm.Weight
	}
	for i, tm := range WukongMix {
		want := float64(n) * float64(tm.Weight) / float64(total)
		if math.Abs(float64(counts[i])-want) > 5*math.Sqrt(want)+1 {
			t.Errorf("template %s drawn %d times, want about %.0f", tm.Name, counts[i], want)
		}
	}
	// Same seed, same sequence.
	a, b := rand.New(rand.NewPCG(7, 0)), rand.New(rand.NewPCG(7, 0))
	for i := 0; i < 100; i++ {
		_, x := m.Next(a)
		_, y := m.Next(b)
		if x != y {
			t.Fatal("the same seed gave different queries")
		}
	}
	if _, err := NewMix(WukongMix, map[string][]string{}); err == nil {
		t.Fatal("NewMix without constants: no error")
	}
}

func TestMeasureThroughput(t *testing.T) {
	consts := map[string][]string{}
	for _, c := range Classes(WukongMix) {
		consts[c] = []string{"<http://x/a>"}
	}
	m, err := NewMix(WukongMix, consts)
	if err != nil {
		t.Fatal(err)
	}
	pts := MeasureThroughput(context.Background(), ThroughputConfig{Clients: []int{1, 3}, Duration: 20 * time.Millisecond, Seed: 1}, m,
		func(ctx context.Context, text string) (int, error) { return 1, nil })
	if len(pts) != 2 || pts[0].Clients != 1 || pts[1].Clients != 3 {
		t.Fatalf("points %+v", pts)
	}
	for _, p := range pts {
		if p.Queries == 0 || p.QPS <= 0 || p.Errors != 0 || p.Latency.N != p.Queries {
			t.Fatalf("point %+v", p)
		}
	}
}

// testReport is a small report with made-up figures for the writers' tests.
func testReport() *Report {
	q := func(name, label string, rows int, ms ...float64) *QueryResult {
		return &QueryResult{Name: name, Label: label, Rows: rows, Samples: ms, Summary: Summarize(ms)}
	}
	wk := &System{Name: Base, Load: &Load{Seconds: 10, Triples: 1000, TriplesPerSec: 100, StorageBytes: 65000, BytesPerTriple: 65, ReopenSeconds: 0.5},
		Latency: []*LatencyRun{
			{Path: PathHTTP, Queries: []*QueryResult{q("wukong-q1", "L1", 5, 1, 1, 1), q("wukong-q2", "L2", 7, 2, 2), q("lubm-std-q1", "Q1", 3, 1)}},
			{Path: PathInProcess, Mode: "planned", Queries: []*QueryResult{q("wukong-q1", "L1", 5, 0.5), q("wukong-q2", "L2", 7, 1), q("lubm-std-q1", "Q1", 3, 0.1)}},
		},
		Throughput: []ThroughputPoint{{Clients: 1, QPS: 1000}, {Clients: 4, QPS: 3000}},
	}
	peer := &System{Name: "virtuoso", Load: &Load{Seconds: 100, Triples: 1000},
		Latency: []*LatencyRun{
			{Path: PathHTTP, Queries: []*QueryResult{q("wukong-q1", "L1", 5, 10), q("wukong-q2", "L2", 8, 4), q("lubm-std-q1", "Q1", 3, 0.5)}},
		},
		Throughput: []ThroughputPoint{{Clients: 1, QPS: 100}, {Clients: 4, QPS: 300}},
	}
	return &Report{Machine: "m", Dataset: Dataset{Name: "LUBM-1", Triples: 1000}, Systems: []*System{wk, peer},
		Throughput: ThroughputConfig{Clients: []int{1, 4}}, Mix: WukongMix}
}

func TestSpeedUps(t *testing.T) {
	r := testReport()
	ups := SpeedUps(r.System(Base).Run(PathHTTP, ""), r.System("virtuoso").Run(PathHTTP, ""))
	// L2's rows differ: not compared.
	want := map[string]float64{"wukong-q1": 10, "lubm-std-q1": 0.5}
	if len(ups) != len(want) {
		t.Fatalf("SpeedUps = %v, want %v", ups, want)
	}
	for k, v := range want {
		if math.Abs(ups[k]-v) > 1e-9 {
			t.Fatalf("SpeedUps = %v, want %v", ups, want)
		}
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := testReport().WriteMarkdown(&b, MarkdownOptions{Level: 3}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"### Latency over HTTP (JSON results)",
		"| L1 | 5 | 1.00 / 1.00 | 10.0 / 10.0 | 10.0× |",
		"| L2 | 7 | 2.00 / 2.00 | 4.00 / 4.00 (**8 rows**) | — |",
		"geometric mean of the speed-ups 10.0× over L1–L7 (1 queries), 0.50× over the standard queries (1); wukongd is slower on Q1.",
		"| 4 | 3000 | 0 / 0 | — | 0.0, 0.0 | 300 | 0 / 0 | — | 0.0, 0.0 | 10.0× |",
		"### Latency in process, by execution mode",
		"| every one of L1–L7 faster than Virtuoso | not met: 10.0× (L1) to 10.0× (L1); not compared (error or different rows): L2 |",
		"| (aim) mixed-workload throughput ten times Virtuoso's | met: peak 3000 against 300 queries/s (10.0×); 10.0×–10.0× at equal client counts |",
		"![throughput against clients](throughput.svg)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestWriteSVG(t *testing.T) {
	r := testReport()
	for name, fn := range map[string]func(*bytes.Buffer) error{
		"latency":    func(b *bytes.Buffer) error { return r.WriteLatencySVG(b) },
		"throughput": func(b *bytes.Buffer) error { return r.WriteThroughputSVG(b) },
	} {
		var b bytes.Buffer
		if err := fn(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Well-formed XML with one bar or point per measured value.
		dec := xml.NewDecoder(&b)
		rects, circles := 0, 0
		for {
			tok, err := dec.Token()
			if err != nil {
				if err != io.EOF {
					t.Fatalf("%s: not well-formed: %v", name, err)
				}
				break
			}
			if se, ok := tok.(xml.StartElement); ok {
				switch se.Name.Local {
				case "rect":
					rects++
				case "circle":
					circles++
				}
			}
		}
		switch name {
		case "latency":
			// background + 6 bars + 2 legend boxes
			if rects != 9 {
				t.Errorf("latency plot: %d rects, want 9", rects)
			}
		case "throughput":
			if circles != 4 {
				t.Errorf("throughput plot: %d points, want 4", circles)
			}
		}
	}
}

func TestSampleCPU(t *testing.T) {
	a := SampleCPU(0)
	deadline := time.Now().Add(30 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	b := SampleCPU(0)
	if _, err := os.Stat("/proc/stat"); err != nil {
		if c := a.OtherCores(b); c != -1 {
			t.Fatalf("without /proc: OtherCores = %v, want -1", c)
		}
		return
	}
	if c := a.OtherCores(b); c < 0 || c > float64(runtime.NumCPU())+0.5 {
		t.Fatalf("OtherCores = %v, want within [0, %d]", c, runtime.NumCPU())
	}
	if c := b.OtherCores(a); c != -1 {
		t.Fatalf("reversed samples: OtherCores = %v, want -1", c)
	}
}
