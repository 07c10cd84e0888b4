package main

import (
	"testing"
	"time"

	"github.com/wukongd/wukongd/rdmakv"
)

// TestClusterSimMix runs cluster-sim --writes on 8 simulated nodes for a
// moment: the run's own check must pass (every node at one version with
// every acknowledged write, the first query answered alike everywhere),
// the profile must attribute CPU to the log on every node and to reads,
// and the model's commit latency must be the sum of its parts. Speed is
// not checked.
func TestClusterSimMix(t *testing.T) {
	qs, err := benchQueries([]string{"L4", "L5"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := mixConfig{univ: 1, replicas: 2, clients: 4, workers: 1, writes: 0.3, duration: 2 * time.Second,
		warmup: 500 * time.Millisecond, queries: qs, fsync: time.Millisecond, cores: 2, raftDir: t.TempDir(),
		model: rdmakv.NetModel{RoundTrip: 3 * time.Microsecond, MessageLatency: 5 * time.Microsecond, Bandwidth: 5e9}}
	r, err := simMix(cfg, 8, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d reads, %d writes; %s", r.reads, r.writes, r.check)
	if r.reads == 0 || r.writes == 0 {
		t.Fatalf("%d reads and %d writes measured", r.reads, r.writes)
	}
	if r.check == "" {
		t.Fatal("the run was not checked")
	}
	var read, log time.Duration
	for i := range r.cpu {
		read += r.cpu[i][partRead]
		log += r.cpu[i][partLog]
	}
	if read == 0 || log == 0 {
		t.Errorf("CPU attributed to reads %v, to the log %v: the profile's labels or the classification are off", read, log)
	}
	for i, tr := range r.traffic {
		if tr.RaftMessages == 0 {
			t.Errorf("node %d sent no Raft message in the run", i)
		}
	}
	m := modelMix(cfg, r)
	if m.commit <= 0 || m.commit != m.eval+m.logNet+m.logFsync+m.logCPU+m.apply {
		t.Errorf("commit %v is not eval %v + log %v/%v/%v + apply %v", m.commit, m.eval, m.logNet, m.logFsync, m.logCPU, m.apply)
	}
	if m.readsPerSec <= 0 || m.writesPerSec <= 0 || m.logFsync != cfg.fsync {
		t.Errorf("model: %+v", m)
	}
}
