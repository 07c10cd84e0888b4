package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/web"
)

// openSimNode opens node i of a SimNet cluster of n over dir with its raft
// directory under raftDir (the config simClusterWith gives).
func openSimNode(t *testing.T, sim *rdmakv.SimNet, dir, raftDir string, i, n int, base Config) *Node {
	t.Helper()
	peers := make([]string, n)
	for k := range peers {
		peers[k] = fmt.Sprintf("node%d:7000", k)
	}
	var ln net.Listener
	deadline := time.Now().Add(5 * time.Second)
	for {
		l, err := sim.Listen(peers[i])
		if err == nil {
			ln = l
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cfg := base
	cfg.Data, cfg.Node, cfg.Peers, cfg.SkipChecksums = dir, i, peers, true
	cfg.RaftDir = filepath.Join(raftDir, fmt.Sprint(i))
	cfg.RaftTick = 50 * time.Millisecond
	cfg.Fabric = rdmakv.TCPOptions{Listener: ln, Dial: sim.Dialer(peers[i]),
		DialTimeout: 200 * time.Millisecond, ConnectWait: 200 * time.Millisecond,
		// The tests of these nodes crash one with sim.Crash, which resets
		// its connections (seen at once), and cut no link: a heartbeat
		// timeout only has to outlast a starved scheduler. At 1 s a full
		// ./cluster run at load ~27 saw a live peer "lost" (no frame for
		// 1s) and a fork-join query of TestClusterSnapshotInstall fail.
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: 10 * time.Second,
		BackoffMin: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond}
	nd, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return nd
}

// everything returns every written triple a node answers, in place and
// forked (they must agree), and the count of all its triples.
func everything(t *testing.T, ctx context.Context, nd *Node) []string {
	t.Helper()
	var first []string
	for _, mode := range []web.ExecMode{web.ModeInPlace, web.ModeForkJoin} {
		got, err := selectIn(ctx, nd, mode, `SELECT ?s ?p ?o WHERE { VALUES ?p { <http://ex.org/p> <http://ex.org/q> } ?s ?p ?o }`)
		if err != nil {
			t.Fatalf("node %d (%v): %v", nd.cfg.Node, mode, err)
		}
		if first == nil {
			first = got
		} else if !slices.Equal(first, got) {
			var d []string
			for _, x := range got {
				if _, ok := slices.BinarySearch(first, x); !ok {
					d = append(d, "+"+x)
				}
			}
			for _, x := range first {
				if _, ok := slices.BinarySearch(got, x); !ok {
					d = append(d, "-"+x)
				}
			}
			t.Fatalf("node %d: in place %d rows, forked %d: %v", nd.cfg.Node, len(first), len(got), d)
		}
	}
	all, err := selectIn(ctx, nd, web.ModeAuto, `SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }`)
	if err != nil {
		t.Fatalf("node %d: %v", nd.cfg.Node, err)
	}
	// The written terms have the same IDs on every node.
	ids := ""
	for i := 0; i < 70; i++ {
		id, _ := nd.shards.LookupTerm(rdf.NewIRI(fmt.Sprintf("http://ex.org/n%d", i)))
		ids += fmt.Sprint(id, " ")
	}
	return append(first, "count "+strings.Join(all, ""), "ids "+ids)
}

// TestClusterSnapshotInstall: a node is stopped; the others write on,
// take snapshots of the log and truncate it past the stopped node's
// index; the node restarts, its first snapshot transfer is damaged and
// refused, the next is installed, and it ends with exactly the others'
// contents and version; a query reading a version it jumped over gets the
// "compacted past" error; restarted once more it opens from its own
// snapshot and still agrees.
func TestClusterSnapshotInstall(t *testing.T) {
	dir := defaultSnapshot(t, 6)
	raftDir := t.TempDir()
	sim := rdmakv.NewSimNet(17)
	cfg := Config{Workers: 2, WriteTimeout: 5 * time.Second, SnapshotEntries: 12, SnapshotKeep: 3}
	nodes := make([]*Node, 3)
	for i := range nodes {
		nodes[i] = openSimNode(t, sim, dir, raftDir, i, 3, cfg)
	}
	defer func() {
		for _, nd := range nodes {
			if nd != nil {
				nd.Close()
			}
		}
	}()
	waitWritable(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var baseCount int
	if r, err := selectIn(ctx, nodes[0], web.ModeAuto, `SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }`); err != nil || len(r) != 1 {
		t.Fatal(r, err)
	} else if _, err := fmt.Sscanf(r[0], `"%d"`, &baseCount); err != nil {
		t.Fatal(r, err)
	}
	// Writes 0-7 insert a0..a39 (before the stop); after it every fifth
	// write deletes five of them (the stopped node holds some of their
	// lists) and one triple of an earlier write, the others insert.
	model := map[string]bool{} // the written triples there must be
	write := func(nd *Node, i int) {
		t.Helper()
		var text string
		var ins, del []string
		switch {
		case i < 8:
			text = "INSERT DATA {"
			for k := 0; k < 5; k++ {
				text += fmt.Sprintf(" <http://ex.org/a%d> <http://ex.org/p> <http://ex.org/o%d> .", 5*i+k, i)
				ins = append(ins, fmt.Sprintf("<http://ex.org/a%d> <http://ex.org/p> <http://ex.org/o%d>", 5*i+k, i))
			}
			text += "}"
		case i%5 == 4:
			text = "DELETE DATA {"
			for k := 0; k < 5; k++ {
				a := (5*(i/5) + k) % 40
				text += fmt.Sprintf(" <http://ex.org/a%d> <http://ex.org/p> <http://ex.org/o%d> .", a, a/5)
				del = append(del, fmt.Sprintf("<http://ex.org/a%d> <http://ex.org/p> <http://ex.org/o%d>", a, a/5))
			}
			text += fmt.Sprintf(" <http://ex.org/n%d> <http://ex.org/q> \"%d\" }", i-2, i-2)
			del = append(del, fmt.Sprintf("<http://ex.org/n%d> <http://ex.org/q> \"%d\"", i-2, i-2))
		default:
			text = fmt.Sprintf("INSERT DATA { <http://ex.org/s%d> <http://ex.org/p> <http://ex.org/o%d> . <http://ex.org/n%d> <http://ex.org/q> \"%d\" }", i%17, i, i, i)
			ins = append(ins, fmt.Sprintf("<http://ex.org/s%d> <http://ex.org/p> <http://ex.org/o%d>", i%17, i),
				fmt.Sprintf("<http://ex.org/n%d> <http://ex.org/q> \"%d\"", i, i))
		}
		defer func() {
			for _, x := range del {
				delete(model, x)
			}
			for _, x := range ins {
				model[x] = true
			}
		}()
		deadline := time.Now().Add(15 * time.Second)
		for {
			err := update(ctx, nd, text)
			if err == nil {
				return
			}
			if !errors.Is(err, web.ErrNotReady) || time.Now().After(deadline) {
				t.Fatalf("write %d through node %d: %v", i, nd.cfg.Node, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for i := 0; i < 8; i++ {
		write(nodes[i%3], i)
	}
	waitVersion(t, nodes, nodes[0].Version())
	stopped := 2
	if int(nodes[0].RaftStatus().Leader)-1 == stopped {
		stopped = 1
	}
	live := []*Node{}
	for i, nd := range nodes {
		if i != stopped {
			live = append(live, nd)
		}
	}
	oldVersion := nodes[stopped].Version()
	nodes[stopped].Close()
	sim.Crash(fmt.Sprintf("node%d:7000", stopped))
	nodes[stopped] = nil
	for i := 8; i < 60; i++ {
		write(live[i%2], i)
	}
	for _, nd := range live {
		if c := nd.Snapshots(); c.Taken == 0 {
			t.Fatalf("node %d took no snapshot after 60 entries: %+v", nd.cfg.Node, c)
		}
	}
	// The first transfer is damaged: one flipped bit in its first chunk.
	var damaged atomic.Int32
	snapshotFetchHook = func(chunk []byte) {
		if damaged.CompareAndSwap(0, 1) {
			chunk[len(chunk)/2] ^= 0x10
		}
	}
	defer func() { snapshotFetchHook = nil }()
	nodes[stopped] = openSimNode(t, sim, dir, raftDir, stopped, 3, cfg)
	want := max(live[0].Version(), live[1].Version())
	waitVersion(t, nodes, want)
	c := nodes[stopped].Snapshots()
	if c.Rejected == 0 || c.Installed == 0 || damaged.Load() == 0 {
		t.Fatalf("node %d: snapshots %+v (damaged %d): want a refused transfer and an installed one", stopped, c, damaged.Load())
	}
	for i := 60; i < 66; i++ { // and it follows the log again
		write(nodes[i%3], i)
	}
	want = 0
	for _, nd := range nodes {
		want = max(want, nd.Version())
	}
	waitVersion(t, nodes, want)
	ref := everything(t, ctx, live[0])
	var wantRows []string
	for x := range model {
		wantRows = append(wantRows, x)
	}
	slices.Sort(wantRows)
	if got := ref[:len(ref)-2]; !slices.Equal(got, wantRows) {
		var extra, missing []string
		for _, x := range got {
			if !model[x] {
				extra = append(extra, x)
			}
		}
		for _, x := range wantRows {
			if _, ok := slices.BinarySearch(got, x); !ok {
				missing = append(missing, x)
			}
		}
		t.Fatalf("the cluster answers %d written triples, want %d: not written %v, missing %v", len(got), len(wantRows), extra, missing)
	}
	if ref[len(ref)-2] != fmt.Sprintf("count %q^^<http://www.w3.org/2001/XMLSchema#integer>", fmt.Sprint(baseCount+len(model))) {
		t.Fatalf("%s, want %d base triples + %d written", ref[len(ref)-2], baseCount, len(model))
	}
	for _, nd := range nodes {
		if got := everything(t, ctx, nd); !slices.Equal(got, ref) {
			t.Fatalf("node %d answers %d triples, node %d %d", nd.cfg.Node, len(got), live[0].cfg.Node, len(ref))
		}
	}
	// A version the restarted node jumped over is refused, clearly.
	if gap := oldVersion + 1; gap < nodes[stopped].vs.floor.Load() {
		err := nodes[stopped].vs.waitLocal(ctx, gap)
		if !errors.Is(err, web.ErrNotReady) || !strings.Contains(err.Error(), "compacted past") {
			t.Fatalf("reading version %d on node %d (floor %d): %v", gap, stopped, nodes[stopped].vs.floor.Load(), err)
		}
		err = live[0].vs.waitNode(ctx, rdmakv.NodeID(stopped), gap)
		if !errors.Is(err, web.ErrNotReady) || !strings.Contains(err.Error(), "compacted past") {
			t.Fatalf("reading version %d of node %d from node %d: %v", gap, stopped, live[0].cfg.Node, err)
		}
	} else {
		t.Fatalf("node %d's floor %d is not past its old version %d", stopped, nodes[stopped].vs.floor.Load(), oldVersion)
	}
	// Restarted again, it opens from its own snapshot and agrees.
	nodes[stopped].Close()
	sim.Crash(fmt.Sprintf("node%d:7000", stopped))
	nodes[stopped] = openSimNode(t, sim, dir, raftDir, stopped, 3, cfg)
	waitWritable(t, nodes)
	waitVersion(t, nodes, want)
	if got := everything(t, ctx, nodes[stopped]); !slices.Equal(got, ref) {
		t.Fatalf("restarted node %d answers %d triples, want %d", stopped, len(got), len(ref))
	}
	if v := nodes[stopped].Version(); v != want {
		t.Fatalf("restarted node %d at version %d, want %d", stopped, v, want)
	}
}
