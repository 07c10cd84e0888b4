package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestClusterSnapshotKill: 3 real processes, R = 2, the replicated log
// snapshotted every 20 entries, over a net effect made big first (30,000
// written triples, so a snapshot takes a while to write, fetch and
// install). Writers go through all three nodes. Each round kills -9 a
// follower, lets the others snapshot past it, restarts it and kills it
// again as soon as it logs that it installs a snapshot, restarts it;
// then kills the leader 0-20 ms after it logs that it writes a snapshot
// (a snapshot-*.tmp file left in its log directory says it died writing
// the file) and restarts it. In the end every node has
// applied the same version, every acknowledged write is on every node,
// and no request was applied twice: the applied-request counter equals
// the written triples present — across the restarts from snapshots and
// across a leader kill with batched entries (6 writers: many requests an
// entry). WUKONGD_SNAPKILL_ROUNDS sets the rounds (default 1).
func TestClusterSnapshotKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	rounds := 1
	if s := os.Getenv("WUKONGD_SNAPKILL_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	tmp := t.TempDir()
	bin := serverBinary(t, tmp)
	dir := defaultSnapshot(t, 6)
	var out lockedBuffer
	w := &lineWatch{out: &out}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := StartProcs(ctx, ProcsConfig{Binary: bin, Data: dir, Nodes: 3, Output: w,
		Args: []string{"--replicas", "2", "--update-token", "storm", "--commit-timeout", "3s", "--log-level", "info",
			"--raft-snapshot-entries", "20", "--raft-snapshot-keep", "5"}})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	defer p.Stop()
	defer func() {
		if t.Failed() {
			t.Logf("node output:\n%.20000s", out.String())
		}
	}()
	client := &http.Client{Timeout: 60 * time.Second}
	retryUpdate := func(i int, text string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			status, err := postUpdate(client, p.URL(i), text)
			if err == nil && status/100 == 2 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("update through node %d: %d %v", i, status, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// The net effect every snapshot holds: 30,000 triples of 6,000 new
	// subjects.
	for c := 0; c < 6; c++ {
		var b strings.Builder
		b.WriteString("INSERT DATA {")
		for k := 0; k < 5000; k++ {
			fmt.Fprintf(&b, " <http://ex.org/big%d> <http://ex.org/big> %d .", c*1000+k/5, k)
		}
		b.WriteString(" }")
		retryUpdate(c%3, b.String())
	}
	// A bulk write retried after a 503 may have been applied before: the
	// requests applied so far, once every node has them.
	var bulkReqs float64
	for deadline := time.Now().Add(time.Minute); ; {
		r := [3]float64{metric(p, 0, "wukongd_cluster_requests_applied"), metric(p, 1, "wukongd_cluster_requests_applied"), metric(p, 2, "wukongd_cluster_requests_applied")}
		if r[0] >= 6 && r[0] == r[1] && r[1] == r[2] {
			bulkReqs = r[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bulk writes: requests applied %v", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var (
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	sw := &stormWriters{p: p, stop: &stop}
	sw.start(&wg, 6)
	snaps := func(i int, kind string) float64 {
		return metric(p, i, `wukongd_cluster_snapshots_total{kind="`+kind+`"}`)
	}
	raftDir := func(i int) string { return filepath.Join(dir, "raft", fmt.Sprintf("node-%d", i)) }
	tornTmp := func(i int) bool {
		ents, _ := os.ReadDir(raftDir(i))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "snapshot-") && strings.HasSuffix(e.Name(), ".tmp") {
				return true
			}
		}
		return false
	}
	restart := func(i int) {
		t.Helper()
		if err := p.Start(i); err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := p.WaitReady(wctx, i); err != nil {
			t.Fatalf("node %d after restart: %v", i, err)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 14))
	var duringInstall, duringTaking, leaderKills int
	time.Sleep(time.Second)
	for round := 0; round < rounds; round++ {
		l := raftLeader(p)
		if l < 0 {
			t.Fatal("no leader")
		}
		f := (l + 1) % 3
		before := snaps(l, "taken")
		if err := p.Kill(f); err != nil {
			t.Fatal(err)
		}
		// The others snapshot twice past it: its next entry is gone.
		deadline := time.Now().Add(30 * time.Second)
		for snaps(l, "taken") < before+2 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if got := snaps(l, "taken"); got < before+2 {
			t.Fatalf("round %d: leader %d took %v snapshots while node %d was down, want 2", round, l, got-before, f)
		}
		// Kill it again once it says it installs a snapshot (its log line).
		installing := w.watch(f, "fetched from a peer)")
		if err := p.Start(f); err != nil {
			t.Fatal(err)
		}
		select {
		case <-installing:
			if err := p.Kill(f); err != nil {
				t.Fatal(err)
			}
			duringInstall++
			t.Logf("round %d: follower %d killed while installing a snapshot it fetched", round, f)
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: node %d installed no snapshot", round, f)
		}
		restart(f)
		// The leader, while it writes a snapshot (one every 20 entries,
		// each the net effect of 30,000+ triples), a random moment after
		// it starts one.
		time.Sleep(time.Second)
		l = raftLeader(p)
		taking := w.watch(l, "writing a snapshot")
		select {
		case <-taking:
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: leader %d wrote no snapshot", round, l)
		}
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
		if err := p.Kill(l); err != nil {
			t.Fatal(err)
		}
		leaderKills++
		if tornTmp(l) {
			duringTaking++
		}
		t.Logf("round %d: leader %d killed (mid-snapshot file: %v)", round, l, tornTmp(l))
		restart(l)
		time.Sleep(time.Second)
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d rounds: %d follower kills while installing a snapshot, %d leader kills after it began writing one (%d left its file half-written)",
		rounds, duringInstall, leaderKills, duringTaking)
	v, present := checkStormWrites(t, p, sw, time.Minute, 60*time.Second)
	for i := 0; i < 3; i++ {
		// The bulk requests and one per written triple present.
		if n := metric(p, i, "wukongd_cluster_requests_applied"); n != float64(present[i])+bulkReqs {
			t.Errorf("node %d: %v requests applied for %v bulk writes and %d written triples (version %v)", i, n, bulkReqs, present[i], v[i])
		}
		status, body, err := query(p.URL(i), `SELECT (COUNT(*) AS ?n) WHERE { ?s <http://ex.org/big> ?o }`, 60*time.Second)
		if err != nil || status != http.StatusOK || !strings.Contains(body, `"30000"`) {
			t.Errorf("node %d: the bulk triples: %d %v %s", i, status, err, body)
		}
		t.Logf("node %d: snapshots taken %v, fetched %v, rejected %v, installed %v (this process)", i,
			snaps(i, "taken"), snaps(i, "fetched"), snaps(i, "rejected"), snaps(i, "installed"))
	}
}

// lineWatch is the nodes' output: kept in out, and watched for lines of a
// node that contain a string.
type lineWatch struct {
	out *lockedBuffer
	mu  sync.Mutex
	ws  []watchFor
}

type watchFor struct {
	prefix, sub string
	c           chan struct{}
}

// watch returns a channel closed at the next line of node i containing sub.
func (w *lineWatch) watch(i int, sub string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := make(chan struct{})
	w.ws = append(w.ws, watchFor{fmt.Sprintf("node %d: ", i), sub, c})
	return c
}

func (w *lineWatch) Write(b []byte) (int, error) {
	line := string(b)
	w.mu.Lock()
	keep := w.ws[:0]
	for _, x := range w.ws {
		if strings.HasPrefix(line, x.prefix) && strings.Contains(line, x.sub) {
			close(x.c)
			continue
		}
		keep = append(keep, x)
	}
	w.ws = keep
	w.mu.Unlock()
	if strings.Contains(line, `"level":"info"`) && strings.Contains(line, `"message":"request"`) {
		return len(b), nil // the requests: too many to keep
	}
	return w.out.Write(b)
}
