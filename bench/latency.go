package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Summary describes a set of latency samples, in milliseconds.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median_ms"`
	P99    float64 `json:"p99_ms"`
	Mean   float64 `json:"mean_ms"`
	Min    float64 `json:"min_ms"`
	Max    float64 `json:"max_ms"`
}

// Summarize computes the summary of samples (milliseconds). Percentiles use
// the nearest-rank method, so with fewer than 100 samples p99 is the
// maximum.
func Summarize(samples []float64) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	return Summary{N: len(s), Median: Percentile(s, 50), P99: Percentile(s, 99),
		Mean: sum / float64(len(s)), Min: s[0], Max: s[len(s)-1]}
}

// Percentile returns the p-th percentile (nearest rank) of sorted samples.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	if p == 50 && len(sorted)%2 == 0 {
		n := len(sorted)
		return (sorted[n/2-1] + sorted[n/2]) / 2
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// GeoMean returns the geometric mean of xs (which must be positive), or 0
// when xs is empty or holds a value that is not positive.
func GeoMean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		if !(x > 0) {
			return 0
		}
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}

// RunFunc runs one query once and returns the number of result rows.
type RunFunc func(ctx context.Context) (rows int, err error)

// LatencyConfig says how often a query runs.
type LatencyConfig struct {
	// Warmup runs are not timed.
	Warmup int
	// Repeat is the most timed runs; the runs stop earlier when Budget is
	// spent and at least MinRuns were timed.
	Repeat  int
	MinRuns int
	Budget  time.Duration
	// Timeout bounds one run.
	Timeout time.Duration
}

// QueryResult is the measurement of one query on one system and path.
type QueryResult struct {
	Name  string `json:"name"`
	Label string `json:"label,omitempty"`
	Rows  int    `json:"rows"`
	// Samples are the timed runs in milliseconds, in the order they ran.
	Samples []float64 `json:"samples_ms"`
	Summary Summary   `json:"summary"`
	Error   string    `json:"error,omitempty"`
}

// MeasureLatency runs run Warmup times, then times it until Repeat runs or
// the Budget (with at least MinRuns). A run that fails ends the
// measurement with the error recorded; a run whose row count differs from
// the first records an error too (the system is not deterministic).
func MeasureLatency(ctx context.Context, cfg LatencyConfig, name string, run RunFunc) QueryResult {
	res := QueryResult{Name: name, Rows: -1}
	once := func() (int, time.Duration, error) {
		c, cancel := ctx, context.CancelFunc(func() {})
		if cfg.Timeout > 0 {
			c, cancel = context.WithTimeout(ctx, cfg.Timeout)
		}
		defer cancel()
		t0 := time.Now()
		n, err := run(c)
		return n, time.Since(t0), err
	}
	check := func(n int) error {
		if res.Rows < 0 {
			res.Rows = n
		} else if n != res.Rows {
			return fmt.Errorf("row count changed between runs: %d then %d", res.Rows, n)
		}
		return nil
	}
	for i := 0; i < cfg.Warmup; i++ {
		n, d, err := once()
		if err == nil {
			err = check(n)
		}
		if err != nil {
			res.Error = err.Error()
			return res
		}
		// A query slower than the whole budget is warm after one run.
		if cfg.Budget > 0 && d > cfg.Budget {
			break
		}
	}
	start := time.Now()
	for i := 0; i < max(cfg.Repeat, 1); i++ {
		n, d, err := once()
		if err == nil {
			err = check(n)
		}
		if err != nil {
			res.Error = err.Error()
			break
		}
		res.Samples = append(res.Samples, float64(d.Nanoseconds())/1e6)
		if cfg.Budget > 0 && time.Since(start) > cfg.Budget && len(res.Samples) >= max(cfg.MinRuns, 1) {
			break
		}
	}
	res.Summary = Summarize(res.Samples)
	return res
}

// LoadAvg is the machine's load average over 1, 5 and 15 minutes, from
// /proc/loadavg (zero where unknown).
type LoadAvg struct {
	One     float64 `json:"load1"`
	Five    float64 `json:"load5"`
	Fifteen float64 `json:"load15"`
}

// ReadLoadAvg reads /proc/loadavg.
func ReadLoadAvg() LoadAvg {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return LoadAvg{}
	}
	f := strings.Fields(string(b))
	var l LoadAvg
	if len(f) >= 3 {
		l.One, _ = strconv.ParseFloat(f[0], 64)
		l.Five, _ = strconv.ParseFloat(f[1], 64)
		l.Fifteen, _ = strconv.ParseFloat(f[2], 64)
	}
	return l
}

func (l LoadAvg) String() string {
	return fmt.Sprintf("%.2f %.2f %.2f", l.One, l.Five, l.Fifteen)
}
