package raftlog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// testNet connects nodes in one process; cut[i] isolates node i.
type testNet struct {
	mu    sync.Mutex
	nodes map[uint64]*Node
	cut   map[uint64]bool
	queue map[uint64]chan []byte
}

func newTestNet(n int) *testNet {
	tn := &testNet{nodes: map[uint64]*Node{}, cut: map[uint64]bool{}, queue: map[uint64]chan []byte{}}
	for i := 1; i <= n; i++ {
		q := make(chan []byte, 4096)
		tn.queue[uint64(i)] = q
		go func(id uint64) {
			for m := range q {
				tn.mu.Lock()
				nd := tn.nodes[id]
				tn.mu.Unlock()
				if nd != nil {
					nd.Step(context.Background(), m)
				}
			}
		}(uint64(i))
	}
	return tn
}

func (tn *testNet) send(from uint64) func(uint64, []byte) {
	return func(to uint64, msg []byte) {
		tn.mu.Lock()
		drop := tn.cut[from] || tn.cut[to]
		tn.mu.Unlock()
		if drop {
			return
		}
		select {
		case tn.queue[to] <- msg:
		default:
		}
	}
}

// sm is a state machine that records the applied entries.
type sm struct {
	mu   sync.Mutex
	data []string
}

func (s *sm) apply(index uint64, data []byte) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = append(s.data, string(data))
	return len(s.data), nil
}

func (s *sm) snapshot() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.data...)
}

type testCluster struct {
	t    *testing.T
	dir  string
	net  *testNet
	node []*Node
	sms  []*sm
}

func startCluster(t *testing.T, n int) *testCluster {
	tc := &testCluster{t: t, dir: t.TempDir(), net: newTestNet(n), node: make([]*Node, n+1), sms: make([]*sm, n+1)}
	for i := 1; i <= n; i++ {
		tc.open(i)
	}
	t.Cleanup(func() {
		for i := 1; i <= n; i++ {
			if tc.node[i] != nil {
				tc.node[i].Close()
			}
		}
	})
	return tc
}

func (tc *testCluster) open(i int) {
	s := &sm{}
	nd, err := Open(Config{Dir: filepath.Join(tc.dir, strconv.Itoa(i)), ID: uint64(i), Peers: len(tc.node) - 1,
		Send: tc.net.send(uint64(i)), Apply: s.apply, Tick: 10 * time.Millisecond})
	if err != nil {
		tc.t.Fatal(err)
	}
	tc.net.mu.Lock()
	tc.net.nodes[uint64(i)] = nd
	tc.net.mu.Unlock()
	tc.node[i], tc.sms[i] = nd, s
}

func (tc *testCluster) close(i int) {
	tc.net.mu.Lock()
	delete(tc.net.nodes, uint64(i))
	tc.net.mu.Unlock()
	if err := tc.node[i].Close(); err != nil {
		tc.t.Fatal(err)
	}
	tc.node[i] = nil
}

// propose retries until the proposal is applied (a leader is elected).
func (tc *testCluster) propose(i int, data string) {
	tc.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, _, err := tc.node[i].Propose(ctx, []byte(data))
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tc.t.Fatalf("node %d cannot propose %q: %v", i, data, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (tc *testCluster) waitSame(n int, want int) {
	tc.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ref := tc.sms[1].snapshot()
		same := len(ref) == want
		for i := 2; i <= n && same; i++ {
			same = fmt.Sprint(tc.sms[i].snapshot()) == fmt.Sprint(ref)
		}
		if same {
			return
		}
		if time.Now().After(deadline) {
			for i := 1; i <= n; i++ {
				tc.t.Logf("node %d applied %d: %v", i, len(tc.sms[i].snapshot()), tc.sms[i].snapshot())
			}
			tc.t.Fatalf("the nodes did not converge on %d entries", want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestReplicateAndRestart(t *testing.T) {
	tc := startCluster(t, 3)
	for k := 0; k < 30; k++ {
		tc.propose(k%3+1, fmt.Sprintf("w%d", k))
	}
	tc.waitSame(3, 30)
	// Every acknowledged proposal is applied once, in one order on all.
	seen := map[string]bool{}
	for _, d := range tc.sms[1].snapshot() {
		if seen[d] {
			t.Fatalf("%s applied twice", d)
		}
		seen[d] = true
	}
	// A restarted node replays its log to the same state.
	tc.close(2)
	tc.propose(1, "while-down")
	tc.open(2)
	tc.waitSame(3, 31)
	if got := tc.sms[2].snapshot(); got[len(got)-1] != "while-down" {
		t.Fatalf("node 2 after restart ends with %q", got[len(got)-1])
	}
}

func TestMinorityRefusesMajorityGoesOn(t *testing.T) {
	tc := startCluster(t, 3)
	tc.propose(1, "a")
	tc.waitSame(3, 1)
	// Cut off the leader: it is the minority of one.
	lead := int(tc.node[1].Leader())
	tc.net.mu.Lock()
	tc.net.cut[uint64(lead)] = true
	tc.net.mu.Unlock()
	other := lead%3 + 1
	tc.propose(other, "b") // the majority elects a new leader and goes on
	// The minority's proposals are never applied: they fail (no leader
	// once check-quorum steps it down, lost, or timed out).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_, _, err := tc.node[lead].Propose(ctx, []byte("minority"))
	cancel()
	if err == nil {
		t.Fatal("a proposal on a cut-off node was applied")
	}
	if !errors.Is(err, ErrNoLeader) && !errors.Is(err, ErrLost) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("minority proposal: %v", err)
	}
	// Heal: the old leader converges (its uncommitted entry is dropped).
	tc.net.mu.Lock()
	tc.net.cut[uint64(lead)] = false
	tc.net.mu.Unlock()
	tc.propose(other, "c")
	tc.waitSame(3, 3)
	if got := fmt.Sprint(tc.sms[lead].snapshot()); got != "[a b c]" {
		t.Fatalf("after healing node %d applied %s", lead, got)
	}
}
