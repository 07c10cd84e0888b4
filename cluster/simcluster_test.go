package cluster

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wukongd/wukongd/web"
)

// TestSimClusterMixedWorkload: the cluster-sim harness (8 nodes in one
// process over the loopback fabric, 2 replicas of each shard, the real
// replicated log) under writers through every node and readers on every
// node. Every acknowledged write is applied on every node (one version
// each, none twice), a writer reads its write at once on the node that
// acknowledged it, no reader sees the written count go down on a node,
// and at the end every node gives the same answers, in place and forked;
// every node snapshots its log on the way (served through the loopback).
func TestSimClusterMixedWorkload(t *testing.T) {
	const nodes, writers, perWriter = 8, 4, 6
	dir := defaultSnapshot(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := OpenSim(ctx, SimConfig{Data: dir, Nodes: nodes, Replicas: 2, RaftDir: t.TempDir(),
		Base: Config{Workers: 1, WriteTimeout: 30 * time.Second, SnapshotEntries: 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	base := c.Nodes[0].Version()
	const count = `SELECT (COUNT(*) AS ?n) WHERE { ?s <http://ex.org/sim#p> ?o }`
	var (
		mu    sync.Mutex
		acked []string
		errs  []error
		wg    sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < perWriter; k++ {
				nd := c.Nodes[(w*perWriter+k)%nodes]
				s, o := fmt.Sprintf("<http://ex.org/sim#s%d-%d>", w, k), fmt.Sprintf("<http://ex.org/sim#o%d>", k%3)
				if err := updateRetry(ctx, nd, fmt.Sprintf("INSERT DATA { %s <http://ex.org/sim#p> %s }", s, o)); err != nil {
					fail(fmt.Errorf("writer %d, write %d through node %d: %w", w, k, nd.cfg.Node, err))
					return
				}
				mu.Lock()
				acked = append(acked, s+" "+o)
				mu.Unlock()
				got, err := selectIn(ctx, nd, web.ModeAuto, fmt.Sprintf("SELECT ?o WHERE { %s <http://ex.org/sim#p> ?o }", s))
				if err != nil || len(got) != 1 || got[0] != o {
					fail(fmt.Errorf("node %d right after writer %d's write %d: %v, %v", nd.cfg.Node, w, k, got, err))
				}
			}
		}()
	}
	stop := make(chan struct{})
	var rg sync.WaitGroup
	for r := 0; r < 2; r++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			last := make([]string, nodes)
			for i := r; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				nd := c.Nodes[i%nodes]
				mode := []web.ExecMode{web.ModeInPlace, web.ModeForkJoin}[i%2]
				got, err := selectIn(ctx, nd, mode, count)
				if err != nil || len(got) != 1 {
					fail(fmt.Errorf("reader %d on node %d: %v, %v", r, nd.cfg.Node, got, err))
					return
				}
				if countOf(got[0]) < 0 {
					fail(fmt.Errorf("reader %d on node %d: %q is not a count", r, nd.cfg.Node, got[0]))
					return
				}
				if prev := last[nd.cfg.Node]; prev != "" && countOf(got[0]) < countOf(prev) {
					fail(fmt.Errorf("reader %d on node %d: the count went from %s to %s", r, nd.cfg.Node, prev, got[0]))
				}
				last[nd.cfg.Node] = got[0]
			}
		}()
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	want := base + writers*perWriter
	waitVersion(t, c.Nodes, want)
	slices.Sort(acked)
	var first []string
	for _, nd := range c.Nodes {
		if v := nd.Version(); v != want {
			t.Errorf("node %d at version %d, want %d (each write once)", nd.cfg.Node, v, want)
		}
		for _, mode := range []web.ExecMode{web.ModeInPlace, web.ModeForkJoin} {
			got, err := selectIn(ctx, nd, mode, `SELECT ?s ?o WHERE { ?s <http://ex.org/sim#p> ?o }`)
			if err != nil {
				t.Fatalf("node %d %s: %v", nd.cfg.Node, mode, err)
			}
			if !slices.Equal(got, acked) {
				t.Errorf("node %d %s: %d written triples, want the %d acknowledged", nd.cfg.Node, mode, len(got), len(acked))
			}
			all, err := selectIn(ctx, nd, mode, `SELECT ?s ?p ?o WHERE { ?s ?p ?o }`)
			if err != nil {
				t.Fatalf("node %d %s: %v", nd.cfg.Node, mode, err)
			}
			if first == nil {
				first = all
			} else if !slices.Equal(all, first) {
				t.Errorf("node %d %s: %d triples, node 0 answered %d", nd.cfg.Node, mode, len(all), len(first))
			}
		}
	}
	if len(first) < len(acked) {
		t.Errorf("every node answers %d triples, fewer than the %d written", len(first), len(acked))
	}
	for _, nd := range c.Nodes {
		if nd.Snapshots().Taken == 0 {
			t.Errorf("node %d took no snapshot of its log (every 4 entries)", nd.cfg.Node)
		}
	}
	tr := c.Traffic(c.Leader())
	if tr.RaftMessages == 0 || tr.RaftBytes == 0 {
		t.Errorf("the leader's Raft traffic was not counted: %+v", tr)
	}
}

// countOf reads the number of a COUNT row ("12"^^<…#integer>; -1: not
// one).
func countOf(row string) int {
	f := strings.Split(row, `"`)
	if len(f) < 3 {
		return -1
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return n
}
