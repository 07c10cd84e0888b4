package cluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/datasets"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdmakv"
)

func TestPlacement(t *testing.T) {
	for _, c := range []struct{ shards, nodes, r int }{{6, 3, 1}, {6, 3, 2}, {6, 3, 3}, {7, 3, 2}, {8, 5, 3}} {
		pl, err := NewPlacement(c.shards, c.nodes, c.r)
		if err != nil {
			t.Fatal(err)
		}
		hosts := make([]int, c.shards)
		for n := 0; n < c.nodes; n++ {
			for _, s := range pl.Hosted(rdmakv.NodeID(n)) {
				hosts[s]++
			}
		}
		for s, h := range hosts {
			if h != c.r {
				t.Errorf("%+v: shard %d on %d nodes", c, s, h)
			}
			if !pl.Hosts(pl.Primary(s), s) {
				t.Errorf("%+v: shard %d's primary does not host it", c, s)
			}
			for k := 0; k < c.r; k++ {
				if !pl.Hosts(pl.Replica(s, k), s) {
					t.Errorf("%+v: replica %d of shard %d does not host it", c, k, s)
				}
			}
		}
	}
	for _, c := range []struct{ shards, nodes, r int }{{2, 3, 1}, {6, 3, 0}, {6, 3, 4}} {
		if _, err := NewPlacement(c.shards, c.nodes, c.r); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// TestClusterReplicas: 3 nodes, 6 shards, 2 replicas each over a
// simulated network. With writes applied, every node answers like before;
// with node 2 cut off, every query started on nodes 0 and 1 after it was
// detected gives the same answers in every mode, and a write goes on;
// after healing, node 2 serves the write too.
func TestClusterReplicas(t *testing.T) {
	dir := defaultSnapshot(t, 6)
	qs := datasets.LUBMQueries()
	const storm = `SELECT ?s ?o WHERE { ?s <http://ex.org/rep> ?o }`
	for _, mode := range []planner.Mode{planner.ModeInPlace, planner.ModeForkJoin, planner.ModeAuto} {
		sim := rdmakv.NewSimNet(3)
		nodes := simClusterWith(t, sim, dir, 3, Config{Mode: mode, Workers: 2, Replicas: 2})
		for _, nd := range nodes {
			if got := len(nd.LocalShards()); got != 4 {
				t.Fatalf("node %d hosts %d shards, want 4 of 6", nd.cfg.Node, got)
			}
		}
		waitWritable(t, nodes)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		for i := 0; i < 6; i++ {
			if err := updateRetry(ctx, nodes[i%3], fmt.Sprintf("INSERT DATA { <http://ex.org/r%d> <http://ex.org/rep> %d }", i, i)); err != nil {
				t.Fatal(err)
			}
		}
		v := nodes[0].Version()
		waitVersion(t, nodes, v)
		want := make([]string, len(qs)+1)
		for i, q := range qs {
			got, err := rows(ctx, nodes[0].Backend(), q.Text)
			if err != nil {
				t.Fatalf("%v, %s: %v", mode, q.Name, err)
			}
			want[i] = strings.Join(got, "\n")
		}
		got, err := rows(ctx, nodes[0].Backend(), storm)
		if err != nil || len(got) != 6 {
			t.Fatalf("%v: the written triples: %v, %d rows", mode, err, len(got))
		}
		want[len(qs)] = strings.Join(got, "\n")
		texts := append(qs[:len(qs):len(qs)], datasets.Query{Name: "written", Text: storm})
		check := func(what string, on []*Node) {
			t.Helper()
			for i, q := range texts {
				nd := on[i%len(on)]
				qctx, qcancel := context.WithTimeout(ctx, 20*time.Second)
				got, err := rows(qctx, nd.Backend(), q.Text)
				qcancel()
				if err != nil {
					t.Errorf("%v, %s, %s on node %d: %v", mode, what, q.Name, nd.cfg.Node, err)
					continue
				}
				if g := strings.Join(got, "\n"); g != want[i] {
					t.Errorf("%v, %s, %s on node %d: %d rows, differs", mode, what, q.Name, nd.cfg.Node, len(got))
				}
			}
		}
		check("all up", nodes)

		sim.Partition([]string{"node2:7000"})
		cut := time.Now()
		for _, nd := range nodes[:2] {
			for nd.shards.Serving(2) {
				if time.Since(cut) > 5*time.Second {
					t.Fatalf("%v: node %d still routes to node 2 %v after the partition", mode, nd.cfg.Node, time.Since(cut))
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		t.Logf("%v: node 2 routed around %v after the partition", mode, time.Since(cut).Round(time.Millisecond))
		check("node 2 cut off", nodes[:2])
		for _, nd := range nodes[:2] {
			if err := nd.shardsUp(); err != nil {
				t.Errorf("%v: node %d: %v", mode, nd.cfg.Node, err)
			}
		}
		// A write goes on with a majority (after an election if node 2
		// led).
		// (INSERT DATA is idempotent: tried again after an unknown outcome.)
		wdeadline := time.Now().Add(30 * time.Second)
		for {
			wctx, wcancel := context.WithTimeout(ctx, 3*time.Second)
			err := update(wctx, nodes[0], `INSERT DATA { <http://ex.org/r6> <http://ex.org/rep> 6 }`)
			wcancel()
			if err == nil {
				break
			}
			if time.Now().After(wdeadline) {
				t.Fatalf("%v: a write with node 2 cut off: %v", mode, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		waitVersion(t, nodes[:2], nodes[0].Version())
		if got, err := rows(ctx, nodes[1].Backend(), storm); err != nil || len(got) != 7 {
			t.Errorf("%v: node 1 after the write: %v, %d rows", mode, err, len(got))
		}

		sim.Heal()
		waitVersion(t, nodes, nodes[0].Version())
		deadline := time.Now().Add(20 * time.Second)
		for {
			got, err := rows(ctx, nodes[2].Backend(), storm)
			if err == nil && len(got) == 7 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v: node 2 after heal: %v, %d rows", mode, err, len(got))
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		for _, nd := range nodes {
			nd.Close()
		}
	}
}

// TestClusterPlansSeeNewTerms: a query planned while its predicate was
// unknown (no answers) answers once a write adds the predicate: a node
// keeps its engine across writes, so the cached plans must go when the
// dictionary grows.
func TestClusterPlansSeeNewTerms(t *testing.T) {
	dir := defaultSnapshot(t, 6)
	sim := rdmakv.NewSimNet(4)
	nodes := simClusterWith(t, sim, dir, 3, Config{Mode: planner.ModeAuto, Workers: 2, Replicas: 2})
	waitWritable(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const q = `SELECT (COUNT(*) AS ?n) WHERE { ?s <http://ex.org/new> ?o }`
	count := func(nd *Node) string {
		got, err := rows(ctx, nd.Backend(), q)
		if err != nil || len(got) != 1 {
			t.Fatalf("node %d: %v %v", nd.cfg.Node, got, err)
		}
		return strings.SplitN(got[0], "^^", 2)[0]
	}
	for _, nd := range nodes {
		for i := 0; i < 2; i++ { // planned, then from the cache
			if c := count(nd); c != `"0"` {
				t.Fatalf("node %d before the write: %s", nd.cfg.Node, c)
			}
		}
	}
	for i := 0; i < 3; i++ {
		if err := updateRetry(ctx, nodes[i], fmt.Sprintf("INSERT DATA { <http://ex.org/n%d> <http://ex.org/new> %d }", i, i)); err != nil {
			t.Fatal(err)
		}
		waitVersion(t, nodes, nodes[i].Version())
		for _, nd := range nodes {
			if c, want := count(nd), fmt.Sprintf(`"%d"`, i+1); c != want {
				t.Errorf("node %d after %d writes: %s, want %s", nd.cfg.Node, i+1, c, want)
			}
		}
	}
}
