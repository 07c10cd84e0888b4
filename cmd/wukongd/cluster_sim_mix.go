package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"

	"github.com/wukongd/wukongd/cluster"
	"github.com/wukongd/wukongd/datasets"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/service"
	"github.com/wukongd/wukongd/web"
)

// hasFlag reports whether args set flag name (-name, --name, -name=…).
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimLeft(a, "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// mixConfig is what runClusterSimMix was asked for.
type mixConfig struct {
	univ, replicas, clients, workers int
	writes                           float64
	duration, warmup                 time.Duration
	queries                          []datasets.Query
	model                            rdmakv.NetModel
	fsync                            time.Duration
	cores                            float64
	raftDir                          string
}

func runClusterSimMix(args []string) error {
	fs := newFlagSet("cluster-sim", "--writes F [--shards 8,16,32,64] [--replicas R] [--clients C] [--duration D] [--fsync D] [--cores C]", `
Mixed read/write simulation of clusters larger than this machine, with the
replicated log's cost. For each node count N: LUBM-U with N shards, N
cluster nodes in this process (cluster.OpenSim: each with its shards,
engine and replicated log — go.etcd.io/raft through our raftlog, entries
applied with graphstore.Dataset.ApplyHosted — over one loopback fabric:
one-sided READs and messages are copies, charged to a network model and
never slept), R replicas of each shard, one Raft group of all N nodes.
--clients closed-loop clients send operations round-robin to the nodes
for --duration: a write (single-triple INSERT DATA, a new subject) with
probability --writes, else the next of --queries (at the version the node
applied). A CPU profile of the process, with every goroutine labelled by
the node it belongs to, gives each node's CPU per operation by part
(query, update evaluation, Raft log, apply, background probes); the
model turns those into figures for nodes of --cores cores each over the
network model (--rtt, --msg, --bandwidth) with a modelled fsync of
--fsync per log append (the Raft logs are written to --raft-dir, a
tmpfs by default, so the real sync costs nothing here). After each run
every node must be at the same version with every acknowledged write
and answer the first query alike. DESIGN.md §"cluster-sim" states the
model and what it leaves out.`)
	univ := fs.Int("univ", 1, "LUBM universities")
	shardList := fs.String("shards", "8,16,32,64", "node counts (one shard per node)")
	writes := fs.Float64("writes", 0.1, "fraction of operations that are writes (0 < F ≤ 1)")
	replicas := fs.Int("replicas", 2, "replicas of each shard")
	clients := fs.Int("clients", 16, "closed-loop clients")
	duration := fs.Duration("duration", 20*time.Second, "measured time per node count")
	warmup := fs.Duration("warmup", 3*time.Second, "unmeasured time per node count")
	queries := fs.String("queries", "L4,L5,L6", "read queries (LUBM names or Wukong labels)")
	rtt := fs.Duration("rtt", 3*time.Microsecond, "modelled READ round trip (RDMA on InfiniBand: 2–3 µs)")
	msg := fs.Duration("msg", 5*time.Microsecond, "modelled one-way message latency")
	bw := fs.Float64("bandwidth", 5e9, "modelled bandwidth per node, bytes/s (40 Gb/s ≈ 5e9)")
	fsync := fs.Duration("fsync", time.Millisecond, "modelled fsync of a log append (NVMe with power-loss protection: ~0.05 ms; SATA SSD: 1–5 ms)")
	cores := fs.Float64("cores", 2, "cores of each simulated node")
	workers := fs.Int("workers", 1, "engine workers per simulated node")
	raftDir := fs.String("raft-dir", "/dev/shm", "where the simulated nodes' Raft logs go (a directory is made in it)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *writes <= 0 || *writes > 1 || *clients < 1 || *duration <= 0 || *cores <= 0 {
		fs.Usage()
		return errors.New("need 0 < --writes ≤ 1, --clients ≥ 1, --duration > 0, --cores > 0")
	}
	qs, err := benchQueries(splitList(*queries))
	if err != nil {
		return err
	}
	cfg := mixConfig{univ: *univ, replicas: *replicas, clients: *clients, workers: *workers, writes: *writes,
		duration: *duration, warmup: *warmup, queries: qs, fsync: *fsync, cores: *cores,
		model: rdmakv.NetModel{RoundTrip: *rtt, MessageLatency: *msg, Bandwidth: *bw}}
	tmp, err := os.MkdirTemp("", "wukongd-cluster-sim-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if cfg.raftDir, err = os.MkdirTemp(*raftDir, "wukongd-cluster-sim-raft-"); err != nil {
		return err
	}
	defer os.RemoveAll(cfg.raftDir)
	var results []mixResult
	for _, s := range splitList(*shardList) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("bad node count %q", s)
		}
		r, err := simMix(cfg, n, tmp)
		if err != nil {
			return fmt.Errorf("%d nodes: %w", n, err)
		}
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "%d nodes: %d reads, %d writes in %v; checked: %s\n", n, r.reads, r.writes, r.wall.Round(time.Millisecond), r.check)
	}
	printMix(os.Stdout, cfg, results)
	return nil
}

// Parts of a node's CPU, by what its samples' stacks hold (classify).
const (
	partRead  = iota // queries: coordinating, forked sub-queries, routing their messages
	partEval         // an update's parse and evaluation into changes, on the node it came to
	partLog          // the replicated log: etcd raft, raftlog (encode, wal, Ready loop), sending and receiving its messages
	partApply        // applying committed entries (ApplyHosted, dictionary, plan cache)
	partBg           // background: the peer probes
	partOther        // labelled, none of the above
	numParts
)

var partNames = [numParts]string{"read", "eval", "log", "apply", "background", "other"}

// classify names the part a sample's stack belongs to; the first rule
// that matches wins (apply runs under raftlog's apply loop, an update's
// WHERE under the update).
func classify(s *profile.Sample) int {
	has := func(subs ...string) bool {
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				if l.Function == nil {
					continue
				}
				for _, sub := range subs {
					if strings.Contains(l.Function.Name, sub) {
						return true
					}
				}
			}
		}
		return false
	}
	switch {
	case has("cluster.(*Node).applyEntry", "cluster.(*Node).installSnapshot"):
		return partApply
	case has("cluster.(*backend).Update"):
		if has("cluster.(*proposer)", "cluster/raftlog.") {
			return partLog
		}
		return partEval
	case has("cluster/raftlog.", "go.etcd.io/raft/", "cluster.(*Node).sendLoop", "cluster.(*Node).sendRaft",
		"cluster.(*ShardStore).SendRaft", "cluster.(*proposer)", "wukongd/wal."):
		return partLog
	case has("cluster.(*ShardStore).probe"):
		return partBg
	case has("cluster.(*backend).Query", "wukongd/exec.", "cluster.(*ShardStore).route", "wukongd/service."):
		return partRead
	}
	return partOther
}

// mixResult is what one node count measured.
type mixResult struct {
	nodes, leader       int
	reads, writes       int
	wall                time.Duration
	readWall, writeWall []time.Duration
	readNet             time.Duration // model network time charged to the reads' coordinators, summed
	readRoundTrips      uint64
	cpu                 [][numParts]time.Duration // per node
	unattributed        time.Duration             // samples without a node label (GC workers, runtime)
	traffic             []cluster.SimTraffic
	termChanged         bool
	load                string
	check               string
}

func simMix(cfg mixConfig, n int, tmp string) (mixResult, error) {
	res := mixResult{nodes: n, cpu: make([][numParts]time.Duration, n)}
	fmt.Fprintf(os.Stderr, "building LUBM-%d with %d shards\n", cfg.univ, n)
	st, err := service.BuildStore(n, func(emit func(rdf.Triple) error) error {
		_, err := datasets.GenerateLUBMTriples(datasets.LUBMConfig{Universities: cfg.univ}, emit)
		return err
	})
	if err != nil {
		return res, err
	}
	dir := filepath.Join(tmp, strconv.Itoa(n))
	err = graphstore.WriteSnapshot(dir, st)
	st.Close()
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	raftDir := filepath.Join(cfg.raftDir, strconv.Itoa(n))
	defer os.RemoveAll(raftDir)
	octx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	c, err := cluster.OpenSim(octx, cluster.SimConfig{Data: dir, Nodes: n, Replicas: cfg.replicas, RaftDir: raftDir,
		Model: cfg.model, Base: cluster.Config{Workers: cfg.workers, WriteTimeout: time.Minute}})
	cancel()
	if err != nil {
		return res, err
	}
	defer c.Close()
	fmt.Fprintf(os.Stderr, "%d nodes open, leader %d; warming up\n", n, c.Leader())
	var mu sync.Mutex
	var firstErr error
	acked := 0
	var seq atomic.Uint64 // subjects of the writes: each new
	run := func(d time.Duration, measure bool) {
		stop := time.Now().Add(d)
		var wg sync.WaitGroup
		for k := 0; k < cfg.clients; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rnd := rand.New(rand.NewSource(int64(k)*7919 + int64(n)))
				for op := 0; time.Now().Before(stop); op++ {
					node := (k + op*cfg.clients) % n
					write := rnd.Float64() < cfg.writes
					var err error
					var took time.Duration
					var meter rdmakv.Meter
					pprof.Do(context.Background(), cluster.NodeLabels(node), func(ctx context.Context) {
						ctx, cancel := context.WithTimeout(ctx, time.Minute)
						defer cancel()
						t0 := time.Now()
						if write {
							err = c.Nodes[node].Backend().Update(ctx, &web.UpdateRequest{Update: fmt.Sprintf(
								"INSERT DATA { <http://wukongd.sim/s%d> <http://wukongd.sim/p> <http://wukongd.sim/o%d> }", seq.Add(1), op%8)})
						} else {
							q := cfg.queries[(k+op)%len(cfg.queries)]
							err = drainQuery(rdmakv.ContextWithMeter(ctx, &meter), c.Nodes[node].Backend(), q.Text)
						}
						took = time.Since(t0)
					})
					mu.Lock()
					switch {
					case err != nil:
						if firstErr == nil {
							firstErr = fmt.Errorf("node %d (write %v): %w", node, write, err)
						}
					case write:
						acked++
						if measure {
							res.writes++
							res.writeWall = append(res.writeWall, took)
						}
					case measure:
						mc := meter.Snapshot()
						res.reads++
						res.readWall = append(res.readWall, took)
						res.readNet += time.Duration(mc.ModelNanos)
						res.readRoundTrips += mc.RoundTrips
					}
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	run(cfg.warmup, false)
	if firstErr != nil {
		return res, firstErr
	}
	term0 := c.Nodes[0].RaftStatus().Term
	tr0 := make([]cluster.SimTraffic, n)
	for i := range tr0 {
		tr0[i] = c.Traffic(i)
	}
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		return res, err
	}
	t0 := time.Now()
	run(cfg.duration, true)
	res.wall = time.Since(t0)
	pprof.StopCPUProfile()
	res.load = loadAverage()
	if firstErr != nil {
		return res, firstErr
	}
	res.leader = c.Leader()
	res.termChanged = c.Nodes[0].RaftStatus().Term != term0
	for i := 0; i < n; i++ {
		t := c.Traffic(i)
		res.traffic = append(res.traffic, cluster.SimTraffic{
			RaftMessages: t.RaftMessages - tr0[i].RaftMessages, RaftBytes: t.RaftBytes - tr0[i].RaftBytes,
			QueryMessages: t.QueryMessages - tr0[i].QueryMessages, QueryMsgBytes: t.QueryMsgBytes - tr0[i].QueryMsgBytes,
			Reads: t.Reads - tr0[i].Reads, ReadBytes: t.ReadBytes - tr0[i].ReadBytes, RoundTrips: t.RoundTrips - tr0[i].RoundTrips})
	}
	if err := attributeCPU(&res, prof.Bytes()); err != nil {
		return res, err
	}
	res.check, err = checkSim(c, acked, cfg.queries[0].Text)
	return res, err
}

// drainQuery runs a SELECT on b and reads every row.
func drainQuery(ctx context.Context, b web.Backend, text string) error {
	r, err := b.Query(ctx, &web.QueryRequest{ID: "sim", Query: text})
	if err != nil {
		return err
	}
	if r.Rows == nil {
		return errors.New("not a SELECT")
	}
	defer r.Rows.Close()
	for r.Rows.Next() {
	}
	return r.Rows.Err()
}

// attributeCPU adds the profile's CPU to the nodes and parts.
func attributeCPU(res *mixResult, raw []byte) error {
	p, err := profile.Parse(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("cannot read the CPU profile: %w", err)
	}
	vi := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			vi = i
		}
	}
	if vi < 0 {
		return errors.New("the CPU profile has no cpu samples")
	}
	for _, s := range p.Sample {
		d := time.Duration(s.Value[vi])
		l := s.Label["node"]
		if len(l) == 0 {
			res.unattributed += d
			continue
		}
		i, err := strconv.Atoi(l[0])
		if err != nil || i < 0 || i >= len(res.cpu) {
			res.unattributed += d
			continue
		}
		res.cpu[i][classify(s)] += d
	}
	return nil
}

// checkSim waits until every node applied the same version and checks
// that each holds the acknowledged writes and answers query alike.
func checkSim(c *cluster.SimCluster, acked int, query string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var v uint64
	for _, nd := range c.Nodes {
		v = max(v, nd.Version())
	}
	for i, nd := range c.Nodes {
		for nd.Version() < v {
			if ctx.Err() != nil {
				return "", fmt.Errorf("node %d at version %d, node with the newest at %d", i, nd.Version(), v)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	var want []string
	for i, nd := range c.Nodes {
		cnt, err := selectRows(ctx, nd.Backend(), `SELECT (COUNT(*) AS ?n) WHERE { ?s <http://wukongd.sim/p> ?o }`)
		if err != nil {
			return "", fmt.Errorf("node %d: %w", i, err)
		}
		if len(cnt) != 1 || !strings.HasPrefix(cnt[0], fmt.Sprintf("%q", strconv.Itoa(acked))) {
			return "", fmt.Errorf("node %d counts %v written triples, %d were acknowledged", i, cnt, acked)
		}
		got, err := selectRows(ctx, nd.Backend(), query)
		if err != nil {
			return "", fmt.Errorf("node %d: %w", i, err)
		}
		if i == 0 {
			want = got
		} else if !slices.Equal(got, want) {
			return "", fmt.Errorf("node %d answers %d rows, node 0 %d", i, len(got), len(want))
		}
	}
	return fmt.Sprintf("all %d nodes at version %d, each with the %d acknowledged writes; the first query answers %d rows alike on every node",
		len(c.Nodes), v, acked, len(want)), nil
}

// selectRows runs a SELECT and returns its rows as sorted lines.
func selectRows(ctx context.Context, b web.Backend, text string) ([]string, error) {
	r, err := b.Query(ctx, &web.QueryRequest{ID: "sim-check", Query: text})
	if err != nil {
		return nil, err
	}
	if r.Rows == nil {
		return nil, errors.New("not a SELECT")
	}
	defer r.Rows.Close()
	var out []string
	for r.Rows.Next() {
		var f []string
		for _, x := range r.Rows.Row() {
			f = append(f, x.String())
		}
		out = append(out, strings.Join(f, "\t"))
	}
	slices.Sort(out)
	return out, r.Rows.Err()
}

// loadAverage returns /proc/loadavg's three figures ("?" if unknown).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
