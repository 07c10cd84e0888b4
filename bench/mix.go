package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Template is a light query with one constant left open: every "%C" in
// Text is replaced by an instance of Class, drawn at random.
type Template struct {
	Name   string `json:"name"`
	Class  string `json:"class"`
	Weight int    `json:"weight"`
	Text   string `json:"text"`
}

const ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"

const mixPrefixes = "PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\nPREFIX ub: <" + ub + ">\n"

// WukongMix is the mixed workload of Wukong's emulator (its LUBM "mix"
// configuration): the light queries A1–A3 and the templates of L4–L6, each
// with a constant drawn from the type index of a class, in the proportions
// 25:25:3:6:25:2.
var WukongMix = []Template{
	{Name: "A1", Class: ub + "GraduateCourse", Weight: 25,
		Text: mixPrefixes + "SELECT ?X WHERE {\n\t?X ub:takesCourse %C .\n\t?X rdf:type ub:GraduateStudent .\n}\n"},
	{Name: "A2", Class: ub + "AssistantProfessor", Weight: 25,
		Text: mixPrefixes + "SELECT ?X WHERE {\n\t?X ub:publicationAuthor %C .\n\t?X rdf:type ub:Publication .\n}\n"},
	{Name: "A3", Class: ub + "Department", Weight: 3,
		Text: mixPrefixes + "SELECT ?X WHERE {\n\t?X ub:memberOf %C .\n\t?X rdf:type ub:GraduateStudent .\n}\n"},
	{Name: "L4", Class: ub + "Department", Weight: 6,
		Text: mixPrefixes + "SELECT ?X ?Y1 ?Y2 ?Y3 WHERE {\n\t?X ub:worksFor %C .\n\t?X rdf:type ub:FullProfessor .\n\t?X ub:name ?Y1 .\n\t?X ub:emailAddress ?Y2 .\n\t?X ub:telephone ?Y3 .\n}\n"},
	{Name: "L5", Class: ub + "Department", Weight: 25,
		Text: mixPrefixes + "SELECT ?X WHERE {\n\t?X ub:subOrganizationOf %C .\n\t?X rdf:type ub:ResearchGroup .\n}\n"},
	{Name: "L6", Class: ub + "University", Weight: 2,
		Text: mixPrefixes + "SELECT ?X ?Y WHERE {\n\t?X ub:subOrganizationOf %C .\n\t?X rdf:type ub:Department .\n\t?Y ub:worksFor ?X .\n\t?Y rdf:type ub:FullProfessor .\n}\n"},
}

// Mix draws queries from weighted templates. It is safe for concurrent use
// only through separate *rand.Rand values per goroutine.
type Mix struct {
	Templates []Template
	// Constants holds, per class IRI, the instances to draw from, in
	// N-Triples syntax (<iri>).
	Constants map[string][]string
	cum       []int
}

// NewMix checks that every template has constants and returns the mix.
func NewMix(templates []Template, constants map[string][]string) (*Mix, error) {
	m := &Mix{Templates: templates, Constants: constants}
	total := 0
	for _, t := range templates {
		if t.Weight <= 0 {
			return nil, fmt.Errorf("template %s: weight %d", t.Name, t.Weight)
		}
		if len(constants[t.Class]) == 0 {
			return nil, fmt.Errorf("template %s: no instances of %s", t.Name, t.Class)
		}
		total += t.Weight
		m.cum = append(m.cum, total)
	}
	if total == 0 {
		return nil, fmt.Errorf("empty mix")
	}
	return m, nil
}

// Next draws a template by weight and a constant for it and returns the
// template's index and the query text.
func (m *Mix) Next(rng *rand.Rand) (int, string) {
	x := rng.IntN(m.cum[len(m.cum)-1])
	i := sort.SearchInts(m.cum, x+1)
	t := m.Templates[i]
	cs := m.Constants[t.Class]
	return i, strings.ReplaceAll(t.Text, "%C", cs[rng.IntN(len(cs))])
}

// Classes returns the classes the templates draw from, sorted.
func Classes(templates []Template) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range templates {
		if !seen[t.Class] {
			seen[t.Class] = true
			out = append(out, t.Class)
		}
	}
	sort.Strings(out)
	return out
}

// InstancesQuery is the query that lists the instances of class (the type
// index), sorted so every system draws from the same list.
func InstancesQuery(class string) string {
	return fmt.Sprintf("SELECT ?x WHERE { ?x <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <%s> } ORDER BY ?x", class)
}

// ThroughputConfig says how the mixed workload runs.
type ThroughputConfig struct {
	// Clients lists the numbers of concurrent clients to measure.
	Clients []int
	// Warmup runs the workload untimed before each point; Duration is the
	// measured time per point.
	Warmup, Duration time.Duration
	// Seed makes the query sequence of client i the same for every system.
	Seed uint64
	// Timeout bounds one query.
	Timeout time.Duration
	// Pids are the processes under measurement (0: this one), whose CPU
	// time is not counted in ThroughputPoint.OtherCores.
	Pids []int `json:"-"`
	// ServerPid is the server's process (0: none apart from this one);
	// its CPU time per query is ThroughputPoint.ServerCPU, this process's
	// (the clients') ClientCPU.
	ServerPid int `json:"-"`
}

// ThroughputPoint is the workload measured with a number of clients.
type ThroughputPoint struct {
	Clients int     `json:"clients"`
	Queries int     `json:"queries"`
	Errors  int     `json:"errors"`
	Seconds float64 `json:"seconds"`
	QPS     float64 `json:"qps"`
	Latency Summary `json:"latency"`
	// PerTemplate is the latency of each template (by name).
	PerTemplate map[string]Summary `json:"per_template"`
	FirstError  string             `json:"first_error,omitempty"`
	LoadAvg     LoadAvg            `json:"loadavg"`
	// OtherCores is the average number of cores that other processes
	// kept busy during the point (-1: unknown).
	OtherCores float64 `json:"other_cores"`
	// ServerCPU and ClientCPU are the CPU time (user and system, from
	// /proc) per completed query of the server's process and of the
	// clients' (this process), in microseconds (0: not measured).
	ServerCPU float64 `json:"server_cpu_us_per_query,omitempty"`
	ClientCPU float64 `json:"client_cpu_us_per_query,omitempty"`
	// Round is the round of an interleaved run the point was measured in
	// (1, 2, …; 0: a run of one round).
	Round int `json:"round,omitempty"`
}

// QueryFunc runs one query text and returns its row count.
type QueryFunc func(ctx context.Context, text string) (int, error)

// MeasureThroughput runs the mix with each number of clients in turn: every
// client sends its next query as soon as the previous answer is read (a
// closed loop, as Wukong's emulator does), and the point reports the
// completed queries per second and their latency.
func MeasureThroughput(ctx context.Context, cfg ThroughputConfig, mix *Mix, do QueryFunc) []ThroughputPoint {
	var out []ThroughputPoint
	for _, n := range cfg.Clients {
		if ctx.Err() != nil {
			break
		}
		if cfg.Warmup > 0 {
			runClients(ctx, cfg, mix, do, n, cfg.Warmup, cfg.Seed^0x9e3779b97f4a7c15)
		}
		p := runClients(ctx, cfg, mix, do, n, cfg.Duration, cfg.Seed)
		out = append(out, p)
	}
	return out
}

func runClients(ctx context.Context, cfg ThroughputConfig, mix *Mix, do QueryFunc, n int, d time.Duration, seed uint64) ThroughputPoint {
	type clientLog struct {
		lat   []float64
		tmpl  []int
		errs  int
		first string
	}
	logs := make([]clientLog, n)
	var stop atomic.Bool
	var wg sync.WaitGroup
	cpu0 := SampleCPU(cfg.Pids...)
	server0, client0 := SampleCPU(cfg.ServerPid), SampleCPU(0)
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			l := &logs[i]
			for !stop.Load() && ctx.Err() == nil {
				ti, text := mix.Next(rng)
				c, cancel := ctx, context.CancelFunc(func() {})
				if cfg.Timeout > 0 {
					c, cancel = context.WithTimeout(ctx, cfg.Timeout)
				}
				t0 := time.Now()
				_, err := do(c, text)
				el := time.Since(t0)
				cancel()
				if err != nil {
					l.errs++
					if l.first == "" {
						l.first = err.Error()
					}
					continue
				}
				l.lat = append(l.lat, float64(el.Nanoseconds())/1e6)
				l.tmpl = append(l.tmpl, ti)
			}
		}(i)
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	stop.Store(true)
	wg.Wait()
	secs := time.Since(start).Seconds()
	serverCPU, clientCPU := server0.CPUSeconds(SampleCPU(cfg.ServerPid)), client0.CPUSeconds(SampleCPU(0))
	p := ThroughputPoint{Clients: n, Seconds: secs, PerTemplate: map[string]Summary{}, LoadAvg: ReadLoadAvg(),
		OtherCores: cpu0.OtherCores(SampleCPU(cfg.Pids...))}
	var all []float64
	per := make([][]float64, len(mix.Templates))
	for _, l := range logs {
		all = append(all, l.lat...)
		for j, ti := range l.tmpl {
			per[ti] = append(per[ti], l.lat[j])
		}
		p.Errors += l.errs
		if p.FirstError == "" {
			p.FirstError = l.first
		}
	}
	p.Queries = len(all)
	p.QPS = float64(p.Queries) / secs
	if p.Queries > 0 {
		if cfg.ServerPid != 0 && serverCPU >= 0 {
			p.ServerCPU = serverCPU * 1e6 / float64(p.Queries)
		}
		if clientCPU >= 0 {
			p.ClientCPU = clientCPU * 1e6 / float64(p.Queries)
		}
	}
	p.Latency = Summarize(all)
	for i, t := range mix.Templates {
		p.PerTemplate[t.Name] = Summarize(per[i])
	}
	return p
}
