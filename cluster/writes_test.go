package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/web"
)

// waitWritable waits until every node knows a leader and has replayed
// its log.
func waitWritable(t *testing.T, nodes []*Node) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, nd := range nodes {
		for nd.RaftStatus().Leader == 0 || nd.writable() != nil {
			if time.Now().After(deadline) {
				t.Fatalf("node %d: no leader: %+v", nd.cfg.Node, nd.RaftStatus())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// update runs a SPARQL Update on a node.
func update(ctx context.Context, nd *Node, text string) error {
	return nd.Backend().Update(ctx, &web.UpdateRequest{Update: text})
}

// updateRetry runs an update, again while no leader is known (an
// election: the change was not made).
func updateRetry(ctx context.Context, nd *Node, text string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := update(ctx, nd, text)
		if err == nil || !strings.Contains(err.Error(), "no leader") || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitVersion waits until every node has applied version v.
func waitVersion(t *testing.T, nodes []*Node, v uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, nd := range nodes {
		for nd.Version() < v {
			if time.Now().After(deadline) {
				t.Fatalf("node %d at version %d, want %d", nd.cfg.Node, nd.Version(), v)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// selectIn runs a SELECT in a mode.
func selectIn(ctx context.Context, nd *Node, mode web.ExecMode, text string) ([]string, error) {
	res, err := nd.Backend().Query(ctx, &web.QueryRequest{ID: "t", Query: text, Mode: mode})
	if err != nil {
		return nil, err
	}
	defer res.Rows.Close()
	var out []string
	for res.Rows.Next() {
		var f []string
		for _, x := range res.Rows.Row() {
			f = append(f, x.String())
		}
		out = append(out, strings.Join(f, " "))
	}
	slices.Sort(out)
	return out, res.Rows.Err()
}

// writableSimCluster starts 3 nodes over the 6-shard default snapshot on
// a SimNet seeded with seed, with 2 workers and writeTimeout, and waits
// until they take writes.
func writableSimCluster(t *testing.T, seed int64, writeTimeout time.Duration) []*Node {
	t.Helper()
	nodes := simClusterWith(t, rdmakv.NewSimNet(seed), defaultSnapshot(t, 6), 3, Config{Workers: 2, WriteTimeout: writeTimeout})
	waitWritable(t, nodes)
	return nodes
}

// TestClusterWrites: writes through any node of 3 are applied on every
// node (each on the shards it holds, the dictionary everywhere), a node
// reads its own writes at once, DELETE/INSERT WHERE works, and queries in
// place and forked give the written state on every node.
func TestClusterWrites(t *testing.T) {
	nodes := writableSimCluster(t, 11, 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := nodes[0].Version()
	want := map[string]bool{}
	for i := 0; i < 24; i++ {
		nd := nodes[i%3]
		s, o := fmt.Sprintf("<http://ex.org/s%d>", i), fmt.Sprintf("<http://ex.org/o%d>", i%5)
		if err := updateRetry(ctx, nd, fmt.Sprintf("INSERT DATA { %s <http://ex.org/p> %s . %s a <http://ex.org/C> }", s, o, s)); err != nil {
			t.Fatalf("write %d through node %d: %v", i, i%3, err)
		}
		want[s+" "+o] = true
		// Read-your-writes on the node that answered.
		got, err := selectIn(ctx, nd, web.ModeAuto, fmt.Sprintf("SELECT ?o WHERE { %s <http://ex.org/p> ?o }", s))
		if err != nil || len(got) != 1 || got[0] != o {
			t.Fatalf("node %d right after write %d: %v, %v", i%3, i, got, err)
		}
	}
	// A WHERE on the store: move every o3 object to o9.
	if err := updateRetry(ctx, nodes[1], `DELETE { ?s <http://ex.org/p> <http://ex.org/o3> } INSERT { ?s <http://ex.org/p> <http://ex.org/o9> } WHERE { ?s <http://ex.org/p> <http://ex.org/o3> }`); err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if strings.HasSuffix(k, "<http://ex.org/o3>") {
			delete(want, k)
			want[strings.TrimSuffix(k, "<http://ex.org/o3>")+"<http://ex.org/o9>"] = true
		}
	}
	if err := updateRetry(ctx, nodes[2], `DELETE DATA { <http://ex.org/s0> <http://ex.org/p> <http://ex.org/o0> }`); err != nil {
		t.Fatal(err)
	}
	delete(want, "<http://ex.org/s0> <http://ex.org/o0>")
	final := nodes[2].Version()
	if final != base+26 {
		t.Fatalf("26 writes made version %d from %d", final, base)
	}
	waitVersion(t, nodes, final)
	var wantRows []string
	for k := range want {
		wantRows = append(wantRows, k)
	}
	slices.Sort(wantRows)
	for _, nd := range nodes {
		for _, mode := range []web.ExecMode{web.ModeInPlace, web.ModeForkJoin} {
			got, err := selectIn(ctx, nd, mode, `SELECT ?s ?o WHERE { ?s a <http://ex.org/C> . ?s <http://ex.org/p> ?o }`)
			if err != nil {
				t.Fatalf("node %d %s: %v", nd.cfg.Node, mode, err)
			}
			if !slices.Equal(got, wantRows) {
				t.Fatalf("node %d %s: %d rows %v, want %d %v", nd.cfg.Node, mode, len(got), got, len(wantRows), wantRows)
			}
		}
	}
	// Named graphs, and a property path in a WHERE after a change in one
	// request, are refused before they are proposed.
	for _, u := range []string{"ADD DEFAULT TO <http://ex.org/g>", "INSERT DATA { GRAPH <http://ex.org/g> { <http://ex.org/a> <http://ex.org/p> <http://ex.org/b> } }",
		"INSERT DATA { <http://ex.org/a> <http://ex.org/p> <http://ex.org/b> } ; DELETE { ?s <http://ex.org/q> ?o } WHERE { ?s <http://ex.org/q>+ ?o }"} {
		if err := update(ctx, nodes[0], u); !errors.Is(err, web.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", u, err)
		}
	}
	// A vertex used as a predicate is refused at apply, on every node alike.
	if err := update(ctx, nodes[0], "INSERT DATA { <http://ex.org/a> <http://ex.org/s5> <http://ex.org/b> }"); !errors.Is(err, web.ErrUnsupported) {
		t.Errorf("vertex as predicate: %v", err)
	}
	if v := nodes[0].Version(); v != final {
		t.Errorf("refused writes moved the version to %d from %d", v, final)
	}
}

// TestClusterPartitionWrites (SimNet): the side of a partition without a
// majority refuses writes with a clear 503 (ErrNotReady), the majority
// goes on, and after the partition heals the minority converges; every
// acknowledged write is on every node, and no write is applied twice
// (each makes exactly one version). Once with the leader cut off, once a
// follower.
func TestClusterPartitionWrites(t *testing.T) {
	dir := defaultSnapshot(t, 3)
	for _, cutLeader := range []bool{true, false} {
		t.Run(fmt.Sprintf("leader=%v", cutLeader), func(t *testing.T) {
			sim := rdmakv.NewSimNet(7)
			nodes := simClusterWith(t, sim, dir, 3, Config{Workers: 2, WriteTimeout: 2 * time.Second})
			waitWritable(t, nodes)
			ctx := context.Background()
			base, baseReqs := nodes[0].Version(), nodes[0].requests.Load()
			acked := map[int]bool{}
			seq := 0
			write := func(nd *Node) error {
				i := seq
				seq++
				err := update(ctx, nd, fmt.Sprintf("INSERT DATA { <http://ex.org/w%d> <http://ex.org/p> %d }", i, i))
				if err == nil {
					acked[i] = true
				}
				return err
			}
			retry := func(nd *Node) {
				deadline := time.Now().Add(15 * time.Second)
				for {
					err := write(nd)
					if err == nil {
						return
					}
					if !errors.Is(err, web.ErrNotReady) || time.Now().After(deadline) {
						t.Fatalf("write through node %d: %v", nd.cfg.Node, err)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			for k := 0; k < 6; k++ {
				retry(nodes[k%3])
			}
			lead := int(nodes[0].RaftStatus().Leader) - 1
			cut := lead
			if !cutLeader {
				cut = (lead + 1) % 3
			}
			sim.Partition([]string{fmt.Sprintf("node%d:7000", cut)})
			// The minority refuses, clearly and within the write timeout.
			for k := 0; k < 3; k++ {
				t0 := time.Now()
				err := write(nodes[cut])
				if err == nil {
					t.Fatalf("a write on the cut-off node %d was acknowledged", cut)
				}
				if !errors.Is(err, web.ErrNotReady) {
					t.Fatalf("minority write: %v, want ErrNotReady (503)", err)
				}
				if d := time.Since(t0); d > 4*time.Second {
					t.Fatalf("minority write took %v", d)
				}
			}
			// The majority goes on (after electing a leader if it lost it).
			for k := 0; k < 6; k++ {
				retry(nodes[(cut+1+k%2)%3])
			}
			sim.Heal()
			hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			for _, nd := range nodes {
				if err := nd.WaitConnected(hctx); err != nil {
					t.Fatal(err)
				}
			}
			cancel()
			final := nodes[(cut+1)%3].Version()
			waitVersion(t, nodes, final)
			// Every acknowledged write is on every node; the writes that
			// were not acknowledged were not applied; one version each.
			for _, nd := range nodes {
				got, err := selectIn(ctx, nd, web.ModeAuto, `SELECT ?n WHERE { ?s <http://ex.org/p> ?n }`)
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for i := range acked {
					want = append(want, fmt.Sprintf(`"%d"^^<http://www.w3.org/2001/XMLSchema#integer>`, i))
				}
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("node %d has %v, acknowledged %v", nd.cfg.Node, got, want)
				}
				if v := nd.Version(); v != base+uint64(len(acked)) {
					t.Fatalf("node %d at version %d: %d writes from %d", nd.cfg.Node, v, len(acked), base)
				}
				if r := nd.requests.Load(); r != baseReqs+uint64(len(acked)) {
					t.Fatalf("node %d applied %d requests: %d writes from %d", nd.cfg.Node, r, len(acked), baseReqs)
				}
			}
		})
	}
}
