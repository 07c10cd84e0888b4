package cluster

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stormWriters are the writers of the kill tests (TestClusterWriteStorm,
// TestClusterSnapshotKill): each inserts one new triple
// <http://ex.org/wK> <http://ex.org/storm> K at a time, writer w through
// node w mod 3, until stop, and records the subjects acknowledged.
type stormWriters struct {
	p    *Procs
	stop *atomic.Bool
	// downNow, if set, says whether a node is down now: a write
	// acknowledged with a node down both when it was sent and when its
	// answer came counts in whileDown.
	downNow func() bool

	mu        sync.Mutex
	acked     map[string]bool // read it after the writers are done
	seq       atomic.Int64
	failed    atomic.Int64 // failed or refused
	whileDown atomic.Int64
}

// start starts n writers, each counted in wg.
func (sw *stormWriters) start(wg *sync.WaitGroup, n int) {
	sw.acked = map[string]bool{}
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			client := &http.Client{Timeout: 10 * time.Second}
			for !sw.stop.Load() {
				k := sw.seq.Add(1)
				s := fmt.Sprintf("http://ex.org/w%d", k)
				down := sw.downNow != nil && sw.downNow()
				status, err := postUpdate(client, sw.p.URL(w%3), fmt.Sprintf("INSERT DATA { <%s> <http://ex.org/storm> %d }", s, k))
				if err == nil && status/100 == 2 {
					sw.mu.Lock()
					sw.acked[s] = true
					sw.mu.Unlock()
					if down && sw.downNow() {
						sw.whileDown.Add(1)
					}
				} else {
					sw.failed.Add(1)
					time.Sleep(20 * time.Millisecond)
				}
			}
		}(w)
	}
}

// raftLeader is the leader as the first running node of p that knows one
// says (-1: none).
func raftLeader(p *Procs) int {
	for i := 0; i < 3; i++ {
		if p.Running(i) {
			if l := metric(p, i, "wukongd_raft_leader"); l >= 0 {
				return int(l)
			}
		}
	}
	return -1
}

// checkStormWrites is the end of a kill test, once its writers are done:
// within converge the three nodes of p report the same cluster version,
// at least 50 writes were acknowledged, and every acknowledged write is on
// every node (each queried with queryTimeout). It returns the nodes'
// versions and how many written triples each holds.
func checkStormWrites(t *testing.T, p *Procs, sw *stormWriters, converge, queryTimeout time.Duration) (v [3]float64, present [3]int) {
	t.Helper()
	deadline := time.Now().Add(converge)
	for {
		for i := range v {
			v[i] = metric(p, i, "wukongd_cluster_version")
		}
		if v[0] > 0 && v[0] == v[1] && v[1] == v[2] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("versions did not converge: %v", v)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d acknowledged writes, %d failed or refused, final version %v", len(sw.acked), sw.failed.Load(), v[0])
	if len(sw.acked) < 50 {
		t.Fatalf("only %d writes were acknowledged", len(sw.acked))
	}
	for i := 0; i < 3; i++ {
		status, body, err := query(p.URL(i), `SELECT ?s WHERE { ?s <http://ex.org/storm> ?o }`, queryTimeout)
		if err != nil || status != http.StatusOK {
			t.Fatalf("node %d: %d %v %s", i, status, err, body)
		}
		have := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(body), "\n")[1:] {
			have[strings.Trim(line, "<>")] = true
		}
		for s := range sw.acked {
			if !have[s] {
				t.Errorf("node %d lost the acknowledged write %s", i, s)
			}
		}
		present[i] = len(have)
	}
	return v, present
}
