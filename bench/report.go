package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Report is everything one benchmark run measured.
type Report struct {
	// Machine is the name and shape of the machine as the docs quote it
	// ("dev-2c: 2 cores, 24 GiB, Go 1.26").
	Machine string    `json:"machine"`
	Host    Host      `json:"host"`
	Date    time.Time `json:"date"`
	Commit  string    `json:"commit,omitempty"`
	Command string    `json:"command"`
	Dataset Dataset   `json:"dataset"`
	// Latency and Throughput are the settings the run used; Rounds the
	// number of interleaved rounds over HTTP (0 or 1: one).
	Rounds     int              `json:"rounds,omitempty"`
	Latency    LatencyConfig    `json:"latency_config"`
	Throughput ThroughputConfig `json:"throughput_config"`
	Mix        []Template       `json:"mix"`
	Systems    []*System        `json:"systems"`
	// Notes are remarks the run makes about itself (skipped parts,
	// failures).
	Notes []string `json:"notes,omitempty"`
}

// Host describes the machine the run saw.
type Host struct {
	Cores     int    `json:"cores"`
	MemBytes  uint64 `json:"mem_bytes"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	CPU       string `json:"cpu,omitempty"`
}

// Dataset is the data every system loaded.
type Dataset struct {
	Name    string `json:"name"` // "LUBM-40"
	File    string `json:"file"`
	Triples uint64 `json:"triples"`
	// Source says where the file came from ("UBA reference data" or
	// "wukongd gen lubm").
	Source string `json:"source"`
	// Reasoning is the profile wukongd materialized ("owl-rl"; empty:
	// none); Triples then counts the closure, which the peers load.
	Reasoning string `json:"reasoning,omitempty"`
}

// System is one system's measurements.
type System struct {
	Name    string `json:"name"` // "wukongd", "virtuoso", "oxigraph"
	Version string `json:"version,omitempty"`
	// Setup says how it ran (shards, buffers, process).
	Setup      string            `json:"setup,omitempty"`
	Load       *Load             `json:"load,omitempty"`
	Latency    []*LatencyRun     `json:"latency,omitempty"`
	Throughput []ThroughputPoint `json:"throughput,omitempty"`
	// ThroughputInProcess is the mixed workload run in process (no HTTP),
	// where the system has such a path.
	ThroughputInProcess []ThroughputPoint `json:"throughput_in_process,omitempty"`
	// HTTPRounds and ThroughputRounds are the rounds of an interleaved run
	// as measured; Latency's HTTP run and Throughput are them merged
	// (MergeRounds, MedianPoints).
	HTTPRounds       []*LatencyRun     `json:"http_rounds,omitempty"`
	ThroughputRounds []ThroughputPoint `json:"throughput_rounds,omitempty"`
	Errors           []string          `json:"errors,omitempty"`
}

// Load is the cost of loading the dataset and of opening it again.
type Load struct {
	Seconds       float64 `json:"seconds"`
	Triples       uint64  `json:"triples"`
	TriplesPerSec float64 `json:"triples_per_s"`
	// StorageBytes is the size of what the load produced (snapshot
	// directory, database file; for an in-memory store, its RSS growth is
	// not counted here and StorageBytes is 0).
	StorageBytes   int64   `json:"storage_bytes"`
	BytesPerTriple float64 `json:"bytes_per_triple"`
	PeakRSSBytes   int64   `json:"peak_rss_bytes"`
	// ReopenSeconds is the time to open the stored result again and be
	// ready to query (0: not measured).
	ReopenSeconds float64 `json:"reopen_seconds,omitempty"`
	// ReopenRSSBytes is the resident memory after reopening.
	ReopenRSSBytes int64 `json:"reopen_rss_bytes,omitempty"`
	// Cached is true when the load was not run again in this run but its
	// earlier measurement was reused.
	Cached  bool    `json:"cached,omitempty"`
	LoadAvg LoadAvg `json:"loadavg"`
}

// Paths of a latency run.
const (
	PathHTTP      = "http"
	PathInProcess = "in-process"
)

// LatencyRun is one pass over the queries along one path and mode.
type LatencyRun struct {
	Path string `json:"path"`
	// Mode is the execution mode forced ("in-place", "fork-join") or
	// "planned"; empty for systems without modes.
	Mode    string  `json:"mode,omitempty"`
	LoadAvg LoadAvg `json:"loadavg"`
	// OtherCores is the average number of cores that other processes
	// than the measured ones kept busy during the run (-1: unknown).
	OtherCores float64        `json:"other_cores"`
	Queries    []*QueryResult `json:"queries"`
	// Round is the round of an interleaved run (1, 2, …; 0: merged or a
	// run of one round).
	Round int `json:"round,omitempty"`
}

// System returns the named system, or nil.
func (r *Report) System(name string) *System {
	for _, s := range r.Systems {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Run returns the system's latency run along path and mode, or nil.
func (s *System) Run(path, mode string) *LatencyRun {
	if s == nil {
		return nil
	}
	for _, r := range s.Latency {
		if r.Path == path && r.Mode == mode {
			return r
		}
	}
	return nil
}

// Query returns the run's result for the named query, or nil.
func (r *LatencyRun) Query(name string) *QueryResult {
	if r == nil {
		return nil
	}
	for _, q := range r.Queries {
		if q.Name == name {
			return q
		}
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadReport reads a report written by WriteJSON.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("cannot read report %s: %w", path, err)
	}
	return &r, nil
}

// SpeedUps returns, for each query of base's run that peer's run also
// answered without error and with the same row count, peer's median over
// base's (how many times faster base is), keyed by query name.
func SpeedUps(base, peer *LatencyRun) map[string]float64 {
	out := map[string]float64{}
	if base == nil || peer == nil {
		return out
	}
	for _, q := range base.Queries {
		p := peer.Query(q.Name)
		if p == nil || q.Error != "" || p.Error != "" || p.Rows != q.Rows || q.Summary.Median <= 0 {
			continue
		}
		out[q.Name] = p.Summary.Median / q.Summary.Median
	}
	return out
}

// fmtMs prints a latency in milliseconds with 3 significant digits.
func fmtMs(ms float64) string {
	switch {
	case ms <= 0:
		return "0"
	case ms < 0.01:
		return fmt.Sprintf("%.4f", ms)
	case ms < 1:
		return fmt.Sprintf("%.3f", ms)
	case ms < 10:
		return fmt.Sprintf("%.2f", ms)
	case ms < 100:
		return fmt.Sprintf("%.1f", ms)
	}
	return fmt.Sprintf("%.0f", ms)
}

func fmtBytes(b int64) string {
	switch {
	case b <= 0:
		return "—"
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", b>>10)
}

func fmtInt(n uint64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtRatio(x float64) string {
	switch {
	case x <= 0:
		return "—"
	case x >= 100:
		return fmt.Sprintf("%.0f×", x)
	case x >= 10:
		return fmt.Sprintf("%.1f×", x)
	}
	return fmt.Sprintf("%.2f×", x)
}
