package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/datasets"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/service"
	"github.com/wukongd/wukongd/web"
)

// defaultSnapshot writes the embedded default data set as a snapshot of
// shards shards.
func defaultSnapshot(t testing.TB, shards int) string {
	t.Helper()
	st, err := service.BuildStore(shards, func(emit func(rdf.Triple) error) error {
		_, err := datasets.DefaultDataset(emit)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dir := filepath.Join(t.TempDir(), "snap")
	if err := graphstore.WriteSnapshot(dir, st); err != nil {
		t.Fatal(err)
	}
	return dir
}

// simCluster opens n nodes over a simulated network.
func simCluster(t testing.TB, sim *rdmakv.SimNet, dir string, n int, mode planner.Mode) []*Node {
	t.Helper()
	return simClusterWith(t, sim, dir, n, Config{Mode: mode, Workers: 2})
}

// simClusterWith opens n nodes over a simulated network, each with base's
// engine settings and limits (and its heartbeats, when set).
func simClusterWith(t testing.TB, sim *rdmakv.SimNet, dir string, n int, base Config) []*Node {
	t.Helper()
	peers := make([]string, n)
	for i := range peers {
		peers[i] = fmt.Sprintf("node%d:7000", i)
	}
	nodes := make([]*Node, n)
	for i := range nodes {
		ln, err := sim.Listen(peers[i])
		if err != nil {
			t.Fatal(err)
		}
		cfg := base
		cfg.Data, cfg.Node, cfg.Peers, cfg.SkipChecksums = dir, i, peers, true
		if cfg.RaftDir == "" {
			cfg.RaftDir = t.TempDir() // clusters over one snapshot may be open at once
		} else {
			cfg.RaftDir = filepath.Join(cfg.RaftDir, fmt.Sprint(i))
		}
		cfg.RaftTick = 50 * time.Millisecond
		cfg.Fabric = rdmakv.TCPOptions{Listener: ln, Dial: sim.Dialer(peers[i]),
			DialTimeout: 200 * time.Millisecond, ConnectWait: 200 * time.Millisecond,
			HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second,
			BackoffMin: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond}
		if base.Fabric.HeartbeatTimeout > 0 { // a test of heavy queries on a loaded machine
			cfg.Fabric.HeartbeatInterval, cfg.Fabric.HeartbeatTimeout = base.Fabric.HeartbeatInterval, base.Fabric.HeartbeatTimeout
		}
		nodes[i], err = Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, nd := range nodes {
			nd.Close()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, nd := range nodes {
		if err := nd.WaitConnected(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, nd := range nodes {
		if err := nd.WaitServing(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return nodes
}

// rows runs a SELECT on a backend and returns its rows as sorted lines.
func rows(ctx context.Context, b web.Backend, text string) ([]string, error) {
	res, err := b.Query(ctx, &web.QueryRequest{ID: "test", Query: text})
	if err != nil {
		return nil, err
	}
	if res.Rows == nil {
		return nil, fmt.Errorf("not a SELECT result (form %v)", res.Form)
	}
	defer res.Rows.Close()
	var out []string
	for res.Rows.Next() {
		var f []string
		for _, x := range res.Rows.Row() {
			f = append(f, x.String())
		}
		out = append(out, strings.Join(f, "\t"))
	}
	if err := res.Rows.Err(); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// TestClusterMatchesOneProcess: 3 nodes over a simulated network give
// the same answers as one process over the same snapshot, in every mode
// and from every node.
func TestClusterMatchesOneProcess(t *testing.T) {
	base := runtime.NumGoroutine()
	dir := defaultSnapshot(t, 6)
	ref, err := service.Open(dir, service.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	ctx := context.Background()
	qs := datasets.LUBMQueries()
	want := make([][]string, len(qs))
	nonEmpty := 0
	for i, q := range qs {
		if want[i], err = rows(ctx, ref, q.Text); err != nil {
			t.Fatalf("%s in one process: %v", q.Name, err)
		}
		if len(want[i]) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < len(qs)/2 {
		t.Fatalf("only %d of %d queries have answers on the default data set", nonEmpty, len(qs))
	}
	for _, mode := range []planner.Mode{planner.ModeAuto, planner.ModeInPlace, planner.ModeForkJoin} {
		sim := rdmakv.NewSimNet(1)
		nodes := simCluster(t, sim, dir, 3, mode)
		for i, q := range qs {
			nd := nodes[i%3]
			got, err := rows(ctx, nd.Backend(), q.Text)
			if err != nil {
				t.Errorf("%v, %s on node %d: %v", mode, q.Name, i%3, err)
				continue
			}
			if strings.Join(got, "\n") != strings.Join(want[i], "\n") {
				t.Errorf("%v, %s on node %d: %d rows, want %d", mode, q.Name, i%3, len(got), len(want[i]))
			}
		}
		var traffic rdmakv.Counters
		for _, nd := range nodes {
			traffic = traffic.Add(nd.Fabric().Counters())
		}
		if traffic.Reads == 0 && traffic.Sends == 0 {
			t.Errorf("%v: no fabric traffic between the nodes", mode)
		}
		for _, nd := range nodes {
			nd.Close()
		}
	}
	ref.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base+2 { // +2: the Go runtime's own (timers, GC workers)
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestClusterPartitionedNode: with node 2 cut off, a query that needs it
// fails within its deadline (with ErrNodeDown once the fabric noticed);
// one that needs only nodes 0 and 1 runs; after Heal all run again.
func TestClusterPartitionedNode(t *testing.T) {
	dir := defaultSnapshot(t, 3)
	for _, mode := range []planner.Mode{planner.ModeInPlace, planner.ModeForkJoin} {
		sim := rdmakv.NewSimNet(2)
		nodes := simCluster(t, sim, dir, 3, mode)
		q, _ := datasets.LUBMQuery("L1")
		ctx := context.Background()
		want, err := rows(ctx, nodes[0].Backend(), q.Text)
		if err != nil {
			t.Fatal(err)
		}
		// A constant owned by node 0 (shard 0 of 3).
		st := nodes[0].shards.Graph()
		var local string
		for d := 0; d < 15 && local == ""; d++ {
			iri := fmt.Sprintf("http://www.Department%d.University0.edu", d)
			if id, ok := st.Dict().Lookup(rdf.NewIRI(iri)); ok && st.Owner(id) == 0 {
				local = fmt.Sprintf("SELECT ?p ?o WHERE { <%s> ?p ?o }", iri)
			}
		}
		if local == "" {
			t.Fatal("no department owned by node 0")
		}
		localWant, err := rows(ctx, nodes[1].Backend(), local)
		if err != nil || len(localWant) == 0 {
			t.Fatalf("local query: %v, %d rows", err, len(localWant))
		}

		sim.Partition([]string{"node2:7000"})
		sawDown := false
		for i := 0; i < 5; i++ {
			qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			t0 := time.Now()
			_, err := rows(qctx, nodes[0].Backend(), q.Text)
			cancel()
			if err == nil {
				t.Fatalf("%v: L1 succeeded with node 2 partitioned", mode)
			}
			if elapsed := time.Since(t0); elapsed > 3*time.Second {
				t.Fatalf("%v: L1 failed after %v, past its 2s deadline: %v", mode, elapsed, err)
			}
			if !errors.Is(err, rdmakv.ErrNodeDown) && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%v: L1 with node 2 partitioned: %v", mode, err)
			}
			sawDown = sawDown || errors.Is(err, rdmakv.ErrNodeDown)
		}
		if !sawDown {
			t.Errorf("%v: no query reported the partitioned node as down", mode)
		}
		if err := nodes[0].Backend().(web.Readier).Ready(ctx); !errors.Is(err, web.ErrNotReady) {
			t.Errorf("%v: node 0 ready with node 2 cut off: %v", mode, err)
		}
		got, err := rows(ctx, nodes[1].Backend(), local)
		if err != nil || strings.Join(got, "\n") != strings.Join(localWant, "\n") {
			t.Errorf("%v: a query on node 0's data from node 1 during the partition: %v, %d rows", mode, err, len(got))
		}

		sim.Heal()
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		for _, nd := range nodes {
			if err := nd.WaitConnected(hctx); err != nil {
				t.Fatal(err)
			}
		}
		cancel()
		deadline := time.Now().Add(10 * time.Second)
		for {
			got, err := rows(ctx, nodes[0].Backend(), q.Text)
			if err == nil {
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("%v: after heal, %d rows, want %d", mode, len(got), len(want))
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v: after heal: %v", mode, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestClusterRefusesWrites: a cluster has no named graphs (Graph Store
// GET and DELETE of one: 404; PUT and POST: refused), and 3 nodes over 2
// shards are refused.
func TestClusterRefusesWrites(t *testing.T) {
	dir := defaultSnapshot(t, 2)
	sim := rdmakv.NewSimNet(3)
	nodes := simCluster(t, sim, dir, 2, planner.ModeAuto)
	b := nodes[0].Backend()
	ctx := context.Background()
	g := web.GraphName{IRI: "http://ex.org/g"}
	if _, err := b.GetGraph(ctx, g); !errors.Is(err, web.ErrNotFound) {
		t.Errorf("GSP GET of a named graph: %v", err)
	}
	if err := b.DeleteGraph(ctx, g); !errors.Is(err, web.ErrNotFound) {
		t.Errorf("GSP DELETE of a named graph: %v", err)
	}
	body := web.GraphBody{MediaType: "application/n-triples", Body: strings.NewReader("<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .\n")}
	if _, err := b.PostGraph(ctx, g, body); !errors.Is(err, web.ErrUnsupported) {
		t.Errorf("GSP POST to a named graph: %v", err)
	}
	_, err := Open(Config{Data: dir, Node: 0, Peers: []string{"a:1", "b:1", "c:1"}})
	if err == nil || !strings.Contains(err.Error(), "fewer than the 3 nodes") {
		t.Errorf("3 nodes over 2 shards: %v", err)
	}
	// EXPLAIN ANALYZE carries the coordinator's traffic per peer.
	q, _ := datasets.LUBMQuery("L2")
	res, err := b.Query(ctx, &web.QueryRequest{Query: q.Text, Explain: web.ExplainAnalyze})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Plan.Notes, "\n"), "fabric peer 1 (node1:7000)") {
		t.Errorf("no per-peer note in %q", res.Plan.Notes)
	}
}

// TestClusterLostNodeFailsWaitingQuery: a query waiting for a sub-query
// on a node that dies fails at once with ErrNodeDown, not at its deadline.
func TestClusterLostNodeFailsWaitingQuery(t *testing.T) {
	dir := defaultSnapshot(t, 3)
	sim := rdmakv.NewSimNet(7)
	nodes := simCluster(t, sim, dir, 3, planner.ModeForkJoin)
	// Node 2 takes messages into its fabric ring but its engine never sees
	// them (a hung node): a sub-query sent there gets no reply.
	nodes[2].shards.Close()
	q, _ := datasets.LUBMQuery("L1")
	type result struct {
		err     error
		elapsed time.Duration
	}
	done := make(chan result, 1)
	t0 := time.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := rows(ctx, nodes[0].Backend(), q.Text)
		done <- result{err, time.Since(t0)}
	}()
	select {
	case r := <-done:
		t.Fatalf("the query ended before node 2 was lost: %v", r.err)
	case <-time.After(300 * time.Millisecond):
	}
	nodes[2].Fabric().Close()
	sim.Crash("node2:7000")
	select {
	case r := <-done:
		if !errors.Is(r.err, rdmakv.ErrNodeDown) || !strings.Contains(r.err.Error(), "was lost while the query waited") {
			t.Fatalf("query waiting on a lost node: %v", r.err)
		}
		if !errors.Is(r.err, web.ErrNotReady) {
			t.Errorf("not mapped to 503: %v", r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the query still waits 10 s after node 2 was lost (its deadline is 30 s)")
	}
}
