package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/datasets"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/web"
)

// allTriples returns every triple a node answers to ?s ?p ?o in place and
// forked (they must agree), and the rows of ?s a ?o.
func allTriples(t *testing.T, ctx context.Context, nd *Node) (all, typed []string) {
	t.Helper()
	for _, mode := range []web.ExecMode{web.ModeInPlace, web.ModeForkJoin} {
		got, err := selectIn(ctx, nd, mode, `SELECT ?s ?p ?o WHERE { ?s ?p ?o }`)
		if err != nil {
			t.Fatalf("node %d (%v): %v", nd.cfg.Node, mode, err)
		}
		ty, err := selectIn(ctx, nd, mode, `SELECT ?s ?o WHERE { ?s a ?o }`)
		if err != nil {
			t.Fatalf("node %d (%v): %v", nd.cfg.Node, mode, err)
		}
		if all == nil {
			all, typed = got, ty
			continue
		}
		if !slices.Equal(all, got) || !slices.Equal(typed, ty) {
			t.Fatalf("node %d: in place %d triples (%d typed), forked %d (%d)", nd.cfg.Node, len(all), len(typed), len(got), len(ty))
		}
	}
	return all, typed
}

// modelRows returns the model's triples as allTriples gives them, and its
// type triples as ?s ?o rows.
func modelRows(model map[string]bool) (all, typed []string) {
	all, typed = []string{}, []string{}
	typ := " <" + rdf.RDFType + "> "
	for x := range model {
		all = append(all, x)
		if s, o, ok := strings.Cut(x, typ); ok {
			typed = append(typed, s+" "+o)
		}
	}
	slices.Sort(all)
	slices.Sort(typed)
	return all, typed
}

// TestClusterClearAndPut (SimNet): CLEAR DEFAULT of the whole LUBM-1 data
// set through one node, then a Graph Store PUT of a part of it again
// (with new triples) through another, a Graph Store DELETE and INSERT DATA
// after it, while a follower is stopped (R = 2) and the log is truncated past it
// by snapshots: every node answers exactly the model, ?s ?p ?o and ?s a ?o
// in place and forked (the type index and the index vertices emptied and
// filled again), the node that comes back installs a snapshot holding the
// clear and agrees, Graph Store GET gives the model, and each request
// made one version and was applied once.
func TestClusterClearAndPut(t *testing.T) {
	dir := defaultSnapshot(t, 6)
	raftDir := t.TempDir()
	sim := rdmakv.NewSimNet(23)
	cfg := Config{Workers: 2, Replicas: 2, WriteTimeout: 20 * time.Second, SnapshotEntries: 6, SnapshotKeep: 2}
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
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	var base []rdf.Triple
	if _, err := datasets.DefaultDataset(func(tr rdf.Triple) error {
		if !tr.S.IsBlank() && !tr.O.IsBlank() {
			base = append(base, tr)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	key := func(tr rdf.Triple) string { return tr.S.String() + " " + tr.P.String() + " " + tr.O.String() }
	retry := func(what string, fn func() error) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		t0 := time.Now()
		for {
			err := fn()
			if err == nil {
				t.Logf("%s: %v", what, time.Since(t0))
				return
			}
			if !errors.Is(err, web.ErrNotReady) || time.Now().After(deadline) {
				t.Fatalf("%s: %v", what, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	v0, r0 := nodes[0].Version(), nodes[0].requests.Load()
	writes := 0
	model := map[string]bool{}
	insert := func(nd *Node, i int) {
		t.Helper()
		s := fmt.Sprintf("<http://ex.org/w%d>", i)
		text := fmt.Sprintf("INSERT DATA { %s a <http://ex.org/W> . %s <http://ex.org/p> <http://ex.org/o%d> }", s, s, i%3)
		retry(fmt.Sprintf("write %d through node %d", i, nd.cfg.Node), func() error { return update(ctx, nd, text) })
		writes++
		model[s+" <"+rdf.RDFType+"> <http://ex.org/W>"] = true
		model[fmt.Sprintf("%s <http://ex.org/p> <http://ex.org/o%d>", s, i%3)] = true
	}
	for i := 0; i < 4; i++ {
		insert(nodes[i%3], i)
	}
	waitVersion(t, nodes, nodes[0].Version())
	stopped := 2
	if int(nodes[0].RaftStatus().Leader)-1 == stopped {
		stopped = 1
	}
	var live []*Node
	for i, nd := range nodes {
		if i != stopped {
			live = append(live, nd)
		}
	}
	nodes[stopped].Close()
	sim.Crash(fmt.Sprintf("node%d:7000", stopped))
	nodes[stopped] = nil

	// CLEAR DEFAULT: nothing is left, of the data set or of the writes.
	retry("CLEAR DEFAULT", func() error { return update(ctx, live[0], "CLEAR DEFAULT") })
	writes++
	clear(model)
	waitVersion(t, live, live[0].Version())
	for _, nd := range live {
		if all, typed := allTriples(t, ctx, nd); len(all)+len(typed) != 0 {
			t.Fatalf("node %d after CLEAR DEFAULT: %d triples, %d typed", nd.cfg.Node, len(all), len(typed))
		}
	}
	// A Graph Store PUT of a fifth of the data set again (its types, and
	// vertices and predicates the clear took out of the index), with
	// triples of new terms.
	var body strings.Builder
	for _, tr := range base[:len(base)/5] {
		body.WriteString(key(tr) + " .\n")
		model[key(tr)] = true
	}
	for i := 0; i < 5; i++ {
		x := fmt.Sprintf("<http://ex.org/put%d> <http://ex.org/q> <http://ex.org/put%d>", i, i+1)
		body.WriteString(x + " .\n")
		model[x] = true
	}
	retry("Graph Store PUT", func() error {
		_, err := live[1].Backend().PutGraph(ctx, web.GraphName{Default: true},
			web.GraphBody{MediaType: "application/n-triples", Body: strings.NewReader(body.String())})
		return err
	})
	writes++
	for i := 4; i < 14; i++ { // past SnapshotEntries: the log is truncated past the stopped node
		insert(live[i%2], i)
	}
	waitVersion(t, live, max(live[0].Version(), live[1].Version()))
	wantAll, wantTyped := modelRows(model)
	for _, nd := range live {
		all, typed := allTriples(t, ctx, nd)
		if !slices.Equal(all, wantAll) || !slices.Equal(typed, wantTyped) {
			t.Fatalf("node %d after CLEAR and PUT: %d triples (%d typed), want %d (%d)", nd.cfg.Node, len(all), len(typed), len(wantAll), len(wantTyped))
		}
		if c := nd.Snapshots(); c.Taken == 0 {
			t.Fatalf("node %d took no snapshot: %+v", nd.cfg.Node, c)
		}
	}

	// The stopped node comes back, installs a snapshot that holds the
	// clear, and follows the log: a Graph Store DELETE, writes after it.
	nodes[stopped] = openSimNode(t, sim, dir, raftDir, stopped, 3, cfg)
	waitWritable(t, nodes)
	waitVersion(t, nodes, max(live[0].Version(), live[1].Version()))
	if c := nodes[stopped].Snapshots(); c.Installed == 0 {
		t.Fatalf("node %d installed no snapshot: %+v", stopped, c)
	}
	all, typed := allTriples(t, ctx, nodes[stopped])
	if !slices.Equal(all, wantAll) || !slices.Equal(typed, wantTyped) {
		t.Fatalf("node %d after installing a snapshot: %d triples (%d typed), want %d (%d)", stopped, len(all), len(typed), len(wantAll), len(wantTyped))
	}
	retry("Graph Store DELETE", func() error { return nodes[stopped].Backend().DeleteGraph(ctx, web.GraphName{Default: true}) })
	writes++
	clear(model)
	for i := 14; i < 20; i++ {
		insert(nodes[i%3], i)
	}
	retry("CLEAR; INSERT DATA", func() error {
		return update(ctx, nodes[0], `CLEAR DEFAULT ; INSERT DATA { <http://ex.org/w3> <http://ex.org/p> <http://ex.org/o0> . <http://ex.org/w3> a <http://ex.org/W> }`)
	})
	writes++
	clear(model)
	model["<http://ex.org/w3> <http://ex.org/p> <http://ex.org/o0>"] = true
	model["<http://ex.org/w3> <"+rdf.RDFType+"> <http://ex.org/W>"] = true
	insert(nodes[1], 20)
	final := uint64(0)
	for _, nd := range nodes {
		final = max(final, nd.Version())
	}
	waitVersion(t, nodes, final)
	wantAll, wantTyped = modelRows(model)
	for _, nd := range nodes {
		all, typed := allTriples(t, ctx, nd)
		if !slices.Equal(all, wantAll) || !slices.Equal(typed, wantTyped) {
			t.Fatalf("node %d at the end: %v (typed %v), want %v (%v)", nd.cfg.Node, all, typed, wantAll, wantTyped)
		}
		if v, r := nd.Version(), nd.requests.Load(); v != v0+uint64(writes) || r != r0+uint64(writes) {
			t.Fatalf("node %d at version %d with %d requests applied: %d writes from %d/%d", nd.cfg.Node, v, r, writes, v0, r0)
		}
		it, err := nd.Backend().GetGraph(ctx, web.GraphName{Default: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for it.Next() {
			got = append(got, key(it.Triple()))
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		it.Close()
		slices.Sort(got)
		if !slices.Equal(got, wantAll) {
			t.Fatalf("node %d: Graph Store GET gave %v, want %v", nd.cfg.Node, got, wantAll)
		}
	}
	// Named graphs stay refused (501), and one that is not there is 404.
	if _, err := nodes[0].Backend().PutGraph(ctx, web.GraphName{IRI: "http://ex.org/g"},
		web.GraphBody{MediaType: "application/n-triples", Body: strings.NewReader("")}); !errors.Is(err, web.ErrUnsupported) {
		t.Errorf("PUT of a named graph: %v", err)
	}
	if err := nodes[0].Backend().DeleteGraph(ctx, web.GraphName{IRI: "http://ex.org/g"}); !errors.Is(err, web.ErrNotFound) {
		t.Errorf("DELETE of a missing named graph: %v", err)
	}
	// Restarted once more, the node opens from its own snapshot and log.
	nodes[stopped].Close()
	sim.Crash(fmt.Sprintf("node%d:7000", stopped))
	nodes[stopped] = openSimNode(t, sim, dir, raftDir, stopped, 3, cfg)
	waitWritable(t, nodes)
	waitVersion(t, nodes, final)
	if all, typed := allTriples(t, ctx, nodes[stopped]); !slices.Equal(all, wantAll) || !slices.Equal(typed, wantTyped) {
		t.Fatalf("restarted node %d: %v (typed %v), want %v", stopped, all, typed, wantAll)
	}
}
