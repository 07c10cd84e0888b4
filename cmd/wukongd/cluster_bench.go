package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wukongd/wukongd/cluster"
	"github.com/wukongd/wukongd/datasets"
	wexec "github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/service"
	"github.com/wukongd/wukongd/sparql"
)

func init() {
	register(&command{name: "cluster-bench", summary: "compare 1 process, N loopback shards and N processes on the LUBM queries (Markdown)", run: runClusterBench})
	register(&command{name: "cluster-sim", summary: "simulate 8–64 shards with the loopback network model; --writes: mixed reads and writes through the replicated log (Markdown)", run: runClusterSim})
}

func benchQueries(names []string) ([]datasets.Query, error) {
	var qs []datasets.Query
	for _, n := range names {
		q, ok := datasets.LUBMQuery(n)
		if !ok {
			return nil, fmt.Errorf("unknown query %q", n)
		}
		qs = append(qs, q)
	}
	return qs, nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }

// explainResponse is the part of an EXPLAIN ANALYZE answer the benchmark
// reads.
type explainResponse struct {
	Plan struct {
		Elapsed float64 `json:"elapsedMs"`
		Rows    int64   `json:"rows"`
		Fabric  struct {
			Reads        int64 `json:"reads"`
			ReadBytes    int64 `json:"readBytes"`
			Messages     int64 `json:"messages"`
			MessageBytes int64 `json:"messageBytes"`
		} `json:"fabric"`
	} `json:"plan"`
}

// explainAnalyze runs q with explain=analyze on base and returns the
// answer and the wall time of the request.
func explainAnalyze(base, q string, timeout time.Duration) (explainResponse, time.Duration, error) {
	var r explainResponse
	form := url.Values{"query": {q}, "explain": {"analyze"}, "timeout": {fmt.Sprint(timeout.Seconds())}}
	t0 := time.Now()
	resp, err := (&http.Client{Timeout: timeout + 10*time.Second}).PostForm(base+"/sparql", form)
	if err != nil {
		return r, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	wall := time.Since(t0)
	if err != nil {
		return r, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return r, 0, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, 0, fmt.Errorf("explain answer: %w", err)
	}
	return r, wall, nil
}

// scrapeRoundTrips sums wukongd_fabric_peer_operations_total{kind="round_trip"}
// over the nodes' /metrics.
func scrapeRoundTrips(p *cluster.Procs, nodes int) (float64, error) {
	var sum float64
	for i := 0; i < nodes; i++ {
		resp, err := http.Get(p.URL(i) + "/metrics")
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(l, "wukongd_fabric_peer_operations_total{") && strings.Contains(l, `kind="round_trip"`) {
				f := strings.Fields(l)
				v, err := strconv.ParseFloat(f[len(f)-1], 64)
				if err == nil {
					sum += v
				}
			}
		}
		resp.Body.Close()
	}
	return sum, nil
}

func runClusterBench(args []string) error {
	fs := newFlagSet("cluster-bench", "--data1 DIR --dataN DIR [--nodes N] [--runs R] [--modes M,…] [--queries L1,…]", `
Runs each query with explain=analyze over HTTP against three set-ups of
processes on 127.0.0.1 and prints Markdown tables: one process over a
1-shard snapshot (--data1), one process over an N-shard snapshot (--dataN,
its shards on the loopback fabric) and N processes over the same N-shard
snapshot (the tcp fabric). Per query and mode: the median engine time
(elapsedMs of the plan) and HTTP wall time over --runs runs after --warmup
runs, and the fabric traffic per query (reads, bytes, messages; round
trips of the tcp fabric from the nodes' /metrics).`)
	data1 := fs.String("data1", "", "snapshot with 1 shard")
	dataN := fs.String("dataN", "", "snapshot with --nodes shards (or a multiple)")
	nodes := fs.Int("nodes", 3, "processes of the cluster")
	runs := fs.Int("runs", 10, "measured runs per query")
	warmup := fs.Int("warmup", 2, "unmeasured runs per query")
	modes := fs.String("modes", "auto,in-place,fork-join", "execution modes")
	queries := fs.String("queries", "L1,L2,L3,L4,L5,L6,L7", "queries (names or Wukong labels)")
	timeout := fs.Duration("timeout", 2*time.Minute, "per-query timeout")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *data1 == "" || *dataN == "" || *runs < 1 {
		fs.Usage()
		return errors.New("need --data1, --dataN and --runs ≥ 1")
	}
	qs, err := benchQueries(splitList(*queries))
	if err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	type setup struct {
		name       string
		data       string
		nodes      int
		standalone bool
	}
	setups := []setup{
		{"1 process, 1 shard", *data1, 1, true},
		{fmt.Sprintf("1 process, %d loopback shards", *nodes), *dataN, 1, true},
		{fmt.Sprintf("%d processes (tcp)", *nodes), *dataN, *nodes, false},
	}
	type cell struct {
		engine, wall time.Duration
		resp         explainResponse
		roundTrips   float64
	}
	results := map[string]map[string][]cell{} // mode → setup → per query
	for _, mode := range splitList(*modes) {
		results[mode] = map[string][]cell{}
		for _, su := range setups {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			p, err := cluster.StartProcs(ctx, cluster.ProcsConfig{Binary: bin, Data: su.data, Nodes: su.nodes, Standalone: su.standalone,
				Args: []string{"--mode", mode, "--log-level", "warn", "--max-timeout", timeout.String()}})
			cancel()
			if err != nil {
				return fmt.Errorf("%s, %s: %w", su.name, mode, err)
			}
			fmt.Fprintf(os.Stderr, "%s, mode %s: running\n", su.name, mode)
			for _, q := range qs {
				var c cell
				var engine, wall []time.Duration
				var rt0 float64
				for r := 0; r < *warmup+*runs; r++ {
					if r == *warmup && !su.standalone {
						if rt0, err = scrapeRoundTrips(p, su.nodes); err != nil {
							p.Stop()
							return err
						}
					}
					resp, w, err := explainAnalyze(p.URL(r%su.nodes), q.Text, *timeout)
					if err != nil {
						p.Stop()
						return fmt.Errorf("%s, %s, %s: %w", su.name, mode, q.Label, err)
					}
					if r >= *warmup {
						engine = append(engine, time.Duration(resp.Plan.Elapsed*1e6))
						wall = append(wall, w)
						c.resp = resp
					}
				}
				if !su.standalone {
					rt1, err := scrapeRoundTrips(p, su.nodes)
					if err != nil {
						p.Stop()
						return err
					}
					c.roundTrips = (rt1 - rt0) / float64(*runs)
				}
				c.engine, c.wall = median(engine), median(wall)
				results[mode][su.name] = append(results[mode][su.name], c)
			}
			if err := p.Stop(); err != nil {
				return err
			}
		}
	}
	fmt.Printf("Median engine time (elapsedMs of EXPLAIN ANALYZE) / HTTP wall time, ms, over %d runs:\n\n", *runs)
	fmt.Printf("| mode | query | rows |")
	for _, su := range setups {
		fmt.Printf(" %s |", su.name)
	}
	fmt.Printf("\n|---|---|---|")
	for range setups {
		fmt.Printf("---|")
	}
	fmt.Println()
	for _, mode := range splitList(*modes) {
		for i, q := range qs {
			fmt.Printf("| %s | %s | %d |", mode, q.Label, results[mode][setups[0].name][i].resp.Plan.Rows)
			for _, su := range setups {
				c := results[mode][su.name][i]
				fmt.Printf(" %s / %s |", ms(c.engine), ms(c.wall))
			}
			fmt.Println()
		}
	}
	fmt.Printf("\nFabric traffic per query (%s vs %s): reads, read bytes, round trips (tcp only), messages, message bytes:\n\n", setups[2].name, setups[1].name)
	fmt.Println("| mode | query | tcp reads | tcp read B | tcp round trips | tcp msgs | tcp msg B | loopback reads | loopback read B | loopback msgs | loopback msg B |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, mode := range splitList(*modes) {
		for i, q := range qs {
			t, l := results[mode][setups[2].name][i], results[mode][setups[1].name][i]
			tf, lf := t.resp.Plan.Fabric, l.resp.Plan.Fabric
			fmt.Printf("| %s | %s | %d | %d | %.0f | %d | %d | %d | %d | %d | %d |\n", mode, q.Label,
				tf.Reads, tf.ReadBytes, t.roundTrips, tf.Messages, tf.MessageBytes, lf.Reads, lf.ReadBytes, lf.Messages, lf.MessageBytes)
		}
	}
	return nil
}

func runClusterSim(args []string) error {
	if hasFlag(args, "writes") {
		return runClusterSimMix(args)
	}
	fs := newFlagSet("cluster-sim", "[--univ U] [--shards 8,16,32,64] [--modes …] [--queries L1,…]", `
Simulates clusters larger than this machine: for each shard count, builds
LUBM-U with that many shards (one loopback fabric node per shard), switches
on the loopback network model (--rtt per READ round trip, --msg per message,
--bandwidth bytes/s), runs each query in each mode and prints, per query,
the fabric traffic (reads, bytes, round trips, messages), the modelled
network time summed over all calls, the median wall time on this machine
(CPU only: the model does not sleep, since timer granularity would swamp
microsecond waits) and their sum as an estimate of the latency. The sum
over-counts forked sub-queries, whose network waits overlap. With
--writes F: a mixed read/write simulation with the replicated log
(cluster-sim --writes 0.1 -h).`)
	univ := fs.Int("univ", 10, "LUBM universities")
	shardList := fs.String("shards", "8,16,32,64", "shard counts")
	modes := fs.String("modes", "in-place,fork-join,auto", "execution modes")
	queries := fs.String("queries", "L1,L2,L3,L4,L5,L6,L7", "queries")
	rtt := fs.Duration("rtt", 3*time.Microsecond, "modelled READ round trip (RDMA on InfiniBand: 2–3 µs)")
	msg := fs.Duration("msg", 5*time.Microsecond, "modelled message latency")
	bw := fs.Float64("bandwidth", 5e9, "modelled bandwidth, bytes/s (40 Gb/s InfiniBand ≈ 5e9)")
	runs := fs.Int("runs", 3, "runs per query (median wall time)")
	workers := fs.Int("workers", 2, "engine workers per simulated node")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	qs, err := benchQueries(splitList(*queries))
	if err != nil {
		return err
	}
	parsed := make([]*sparql.Query, len(qs))
	for i, q := range qs {
		if parsed[i], err = sparql.ParseQuery(q.Text); err != nil {
			return fmt.Errorf("%s: %w", q.Label, err)
		}
	}
	tmp, err := os.MkdirTemp("", "wukongd-cluster-sim-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fmt.Printf("LUBM-%d, loopback model: READ round trip %v, message %v, %.1f GB/s; %d workers per node; median of %d runs.\n\n",
		*univ, *rtt, *msg, *bw/1e9, *workers, *runs)
	fmt.Println("| shards | mode | query | rows | reads | read KB | round trips | messages | msg KB | network ms (model, summed) | CPU wall ms | estimate ms |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range splitList(*shardList) {
		shards, err := strconv.Atoi(s)
		if err != nil || shards < 1 {
			return fmt.Errorf("bad shard count %q", s)
		}
		fmt.Fprintf(os.Stderr, "building LUBM-%d with %d shards\n", *univ, shards)
		st, err := service.BuildStore(shards, func(emit func(rdf.Triple) error) error {
			_, err := datasets.GenerateLUBMTriples(datasets.LUBMConfig{Universities: *univ}, emit)
			return err
		})
		if err != nil {
			return err
		}
		dir := filepath.Join(tmp, strconv.Itoa(shards))
		err = graphstore.WriteSnapshot(dir, st)
		st.Close()
		if err != nil {
			return err
		}
		fab := rdmakv.NewLoopback(shards, rdmakv.LoopbackOptions{Model: &rdmakv.NetModel{RoundTrip: *rtt, MessageLatency: *msg, Bandwidth: *bw}})
		st, err = graphstore.OpenSnapshot(dir, graphstore.OpenOptions{Fabric: fab, SkipChecksums: true})
		if err != nil {
			return err
		}
		eng, err := wexec.NewGraphEngine(st, wexec.Config{Workers: *workers})
		if err != nil {
			st.Close()
			return err
		}
		for _, m := range splitList(*modes) {
			mode, ok := planner.ParseMode(m)
			if !ok {
				return fmt.Errorf("bad mode %q", m)
			}
			for i, q := range parsed {
				var walls []time.Duration
				var per rdmakv.Counters
				var rows int
				for r := 0; r < *runs; r++ {
					c0 := st.Counters()
					t0 := time.Now()
					res, err := eng.Run(context.Background(), q, wexec.Options{Mode: mode})
					if err != nil {
						return fmt.Errorf("%d shards, %s, %s: %w", shards, m, qs[i].Label, err)
					}
					walls = append(walls, time.Since(t0))
					per, rows = st.Counters().Sub(c0), res.Len()
				}
				wall := median(walls)
				fmt.Printf("| %d | %s | %s | %d | %d | %.1f | %d | %d | %.1f | %.2f | %s | %s |\n", shards, m, qs[i].Label, rows,
					per.Reads, float64(per.ReadBytes)/1024, per.RoundTrips, per.Sends, float64(per.SendBytes)/1024,
					float64(per.ModelNanos)/1e6, ms(wall), ms(wall+time.Duration(per.ModelNanos)))
			}
		}
		eng.Close()
		st.Close()
		fab.Close()
		os.RemoveAll(dir)
	}
	return nil
}
