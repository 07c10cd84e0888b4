package bench

import (
	"slices"
	"sort"
)

// Interleaved runs: the systems are measured in rounds (A B C, A B C, …)
// rather than one after the other, so that a burst of other load on a
// shared machine lands on every system rather than on one; each system's
// figures are then the rounds' merged.

// MergeRounds merges the latency runs of several rounds of one system and
// path into one: per query, the timed runs of every round together (so
// its median and p99 are over all of them), the first error a round met,
// and the rounds' mean share of other processes' cores. The load average
// is the first round's. nil when runs is empty.
func MergeRounds(runs []*LatencyRun) *LatencyRun {
	if len(runs) == 0 {
		return nil
	}
	out := &LatencyRun{Path: runs[0].Path, Mode: runs[0].Mode, LoadAvg: runs[0].LoadAvg}
	byName := map[string]*QueryResult{}
	known := 0
	for _, r := range runs {
		if r.OtherCores >= 0 {
			out.OtherCores += r.OtherCores
			known++
		}
		for _, q := range r.Queries {
			m := byName[q.Name]
			if m == nil {
				m = &QueryResult{Name: q.Name, Label: q.Label, Rows: q.Rows}
				byName[q.Name] = m
				out.Queries = append(out.Queries, m)
			}
			m.Samples = append(m.Samples, q.Samples...)
			if m.Error == "" && q.Error != "" {
				m.Error = q.Error
			}
			if m.Error == "" && q.Rows != m.Rows {
				m.Error = "the rounds disagree on the row count"
			}
		}
	}
	if known > 0 {
		out.OtherCores /= float64(known)
	} else {
		out.OtherCores = -1
	}
	for _, q := range out.Queries {
		q.Summary = Summarize(q.Samples)
	}
	return out
}

// MedianPoints merges the throughput points of several rounds of one
// system: for each number of clients (in the order first seen), the
// round of median queries/s, with the rounds' median CPU per query.
func MedianPoints(pts []ThroughputPoint) []ThroughputPoint {
	var order []int
	by := map[int][]ThroughputPoint{}
	for _, p := range pts {
		if _, ok := by[p.Clients]; !ok {
			order = append(order, p.Clients)
		}
		by[p.Clients] = append(by[p.Clients], p)
	}
	var out []ThroughputPoint
	for _, n := range order {
		ps := slices.Clone(by[n])
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].QPS < ps[j].QPS })
		m := ps[(len(ps)-1)/2]
		m.ServerCPU = median(ps, func(p ThroughputPoint) float64 { return p.ServerCPU })
		m.ClientCPU = median(ps, func(p ThroughputPoint) float64 { return p.ClientCPU })
		m.Round = 0
		out = append(out, m)
	}
	return out
}

// median returns the lower median of f over ps, ignoring zeros (not
// measured).
func median(ps []ThroughputPoint, f func(ThroughputPoint) float64) float64 {
	var xs []float64
	for _, p := range ps {
		if v := f(p); v > 0 {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[(len(xs)-1)/2]
}
