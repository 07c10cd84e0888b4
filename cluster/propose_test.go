package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/wal"
	"github.com/wukongd/wukongd/web"
)

func exIRI(s string) rdf.Term { return rdf.NewIRI("http://ex.org/" + s) }

func insertReq(t *testing.T, reads bool, base uint64, triples ...rdf.Triple) *request {
	t.Helper()
	data, err := wal.AppendChanges(nil, []graphstore.GraphChange{{Insert: triples}})
	if err != nil {
		t.Fatal(err)
	}
	return &request{reads: reads, base: base, data: data}
}

// TestClusterBatchedEntry: the requests of one entry apply together (one
// version) and are answered one by one; a request that is refused (a
// vertex used as a predicate), cannot be decoded, or read a version an
// earlier request of the entry changed is left out on every node alike,
// and the others apply.
func TestClusterBatchedEntry(t *testing.T) {
	nodes := writableSimCluster(t, 13, 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := updateRetry(ctx, nodes[0], "INSERT DATA { <http://ex.org/v1> <http://ex.org/p> <http://ex.org/o> }"); err != nil {
		t.Fatal(err)
	}
	v, reqs0 := nodes[0].Version(), nodes[0].requests.Load()
	waitVersion(t, nodes, v)
	tr := func(s, p, o string) rdf.Triple { return rdf.Triple{S: exIRI(s), P: exIRI(p), O: exIRI(o)} }
	batch := []*request{
		insertReq(t, true, v, tr("c", "p", "o")),       // read v, first: applies
		insertReq(t, false, 0, tr("a", "p", "o")),      // applies
		insertReq(t, true, v, tr("stale", "p", "o")),   // read v, but a is before it: conflict
		insertReq(t, false, 0, tr("x", "v1", "o")),     // v1 is a plain vertex: refused
		insertReq(t, false, 0, tr("b", "p", "o")),      // applies
		{data: []byte{0xff, 0xff, 0xff}},               // not changes: refused
		insertReq(t, true, v-1, tr("older", "p", "o")), // read an older version: conflict
	}
	_, res, err := nodes[1].raft.Propose(ctx, encodeBatch(batch))
	if err != nil {
		t.Fatal(err)
	}
	outs := res.([]outcome)
	if len(outs) != len(batch) {
		t.Fatalf("%d outcomes for %d requests", len(outs), len(batch))
	}
	for i, want := range []string{"ok", "ok", "conflict", "refused", "ok", "refused", "conflict"} {
		o := outs[i]
		got := "ok"
		switch {
		case o.conflict:
			got = "conflict"
		case o.err != nil:
			got = "refused"
			if !errors.Is(o.err, errRefused) {
				t.Errorf("request %d: %v, want errRefused", i, o.err)
			}
		case o.version != v+1:
			got = fmt.Sprintf("version %d", o.version)
		}
		if got != want {
			t.Errorf("request %d: %s (%+v), want %s", i, got, o, want)
		}
	}
	waitVersion(t, nodes, v+1)
	for _, nd := range nodes {
		if got := nd.Version(); got != v+1 {
			t.Errorf("node %d at version %d after one entry from %d", nd.cfg.Node, got, v)
		}
		if got := nd.requests.Load(); got != reqs0+3 {
			t.Errorf("node %d applied %d requests, want %d", nd.cfg.Node, got, reqs0+3)
		}
		for _, mode := range []web.ExecMode{web.ModeInPlace, web.ModeForkJoin} {
			got, err := selectIn(ctx, nd, mode, `SELECT ?s WHERE { ?s <http://ex.org/p> <http://ex.org/o> }`)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"<http://ex.org/a>", "<http://ex.org/b>", "<http://ex.org/c>", "<http://ex.org/v1>"}
			if !slices.Equal(got, want) {
				t.Errorf("node %d %s: %v, want %v", nd.cfg.Node, mode, got, want)
			}
		}
	}
}

// TestClusterConcurrentWrites: writers through every node at once; every
// write is acknowledged and on every node, each applied exactly once
// (one request each), and the nodes agree on the version.
func TestClusterConcurrentWrites(t *testing.T) {
	nodes := writableSimCluster(t, 17, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	v0, reqs0 := nodes[0].Version(), nodes[0].requests.Load()
	const writers, each = 12, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := updateRetry(ctx, nodes[w%3], fmt.Sprintf("INSERT DATA { <http://ex.org/cw%d_%d> <http://ex.org/cw> %d }", w, i, i)); err != nil {
					errs <- fmt.Errorf("writer %d, write %d: %w", w, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	final := uint64(0)
	for _, nd := range nodes {
		final = max(final, nd.Version())
	}
	waitVersion(t, nodes, final)
	t.Logf("%d writes made %d versions", writers*each, final-v0)
	for _, nd := range nodes {
		if got := nd.requests.Load(); got != reqs0+writers*each {
			t.Errorf("node %d applied %d requests, want %d", nd.cfg.Node, got-reqs0, writers*each)
		}
		got, err := selectIn(ctx, nd, web.ModeForkJoin, `SELECT ?s WHERE { ?s <http://ex.org/cw> ?n }`)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != writers*each {
			t.Errorf("node %d holds %d of the %d writes", nd.cfg.Node, len(got), writers*each)
		}
	}
}

// TestClusterWritesShareEntry: writes that reach a node while every slot
// of its proposer is taken queue up and go into the next entry together —
// one entry, one version, on every node — through the whole write path
// (Backend().Update); each is answered on its own: one that is refused at
// apply (a plain vertex used as a predicate) fails alone, leaves nothing
// behind (neither its triple nor its new terms), and does not fail the
// requests it shared the entry with.
func TestClusterWritesShareEntry(t *testing.T) {
	nodes := writableSimCluster(t, 19, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := updateRetry(ctx, nodes[0], "INSERT DATA { <http://ex.org/v1> <http://ex.org/p> <http://ex.org/o> }"); err != nil {
		t.Fatal(err)
	}
	v := nodes[0].Version()
	waitVersion(t, nodes, v)
	reqs0 := make([]uint64, len(nodes))
	for i, nd := range nodes {
		reqs0[i] = nd.requests.Load()
	}
	nd := nodes[1]
	p := nd.prop
	for range maxInflight {
		p.slots <- struct{}{} // as if maxInflight entries were in flight
	}
	const writers = 12
	errs := make([]error, writers+1)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			errs[w] = update(ctx, nd, fmt.Sprintf("INSERT DATA { <http://ex.org/bw%d> <http://ex.org/bw> %d }", w, w))
		})
	}
	wg.Go(func() {
		errs[writers] = update(ctx, nd, "INSERT DATA { <http://ex.org/bx> <http://ex.org/v1> <http://ex.org/leftbehind> }")
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		p.mu.Lock()
		queued := len(p.queue)
		p.mu.Unlock()
		if queued == writers+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d writes queued", queued, writers+1)
		}
		time.Sleep(2 * time.Millisecond)
	}
	for range maxInflight {
		<-p.slots
	}
	wg.Wait()
	for w, err := range errs[:writers] {
		if err != nil {
			t.Errorf("write %d: %v", w, err)
		}
	}
	if err := errs[writers]; !errors.Is(err, web.ErrUnsupported) {
		t.Errorf("the write using a vertex as a predicate: %v, want ErrUnsupported", err)
	}
	waitVersion(t, nodes, v+1)
	var want []string
	for w := range writers {
		want = append(want, fmt.Sprintf("<http://ex.org/bw%d>", w))
	}
	slices.Sort(want)
	for i, nd := range nodes {
		if got := nd.Version(); got != v+1 {
			t.Errorf("node %d at version %d after the %d writes from %d, want one entry (%d)", nd.cfg.Node, got, writers+1, v, v+1)
		}
		if got := nd.requests.Load() - reqs0[i]; got != writers {
			t.Errorf("node %d applied %d requests, want %d", nd.cfg.Node, got, writers)
		}
		for _, mode := range []web.ExecMode{web.ModeInPlace, web.ModeForkJoin} {
			got, err := selectIn(ctx, nd, mode, `SELECT ?s WHERE { ?s <http://ex.org/bw> ?n }`)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("node %d %s: %v, want %v", nd.cfg.Node, mode, got, want)
			}
			got, err = selectIn(ctx, nd, mode, `SELECT ?o WHERE { <http://ex.org/bx> ?p ?o }`)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 0 {
				t.Errorf("node %d %s: the refused write left %v", nd.cfg.Node, mode, got)
			}
		}
		nd.tipMu.Lock()
		d := nd.tip.Dict()
		nd.tipMu.Unlock()
		for _, s := range []string{"bx", "leftbehind"} {
			if _, ok := d.Lookup(exIRI(s)); ok {
				t.Errorf("node %d: the refused write left the term %s in the dictionary", nd.cfg.Node, s)
			}
		}
	}
}
