package rdmakv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"testing"
	"time"
)

// faultTrace writes n chunks over a fresh simulated connection and
// returns, per write, whether it reached the reader intact, corrupted, or
// reset the connection (then the connection is redialed).
func faultTrace(t *testing.T, seed int64, n int) []string {
	sim := NewSimNet(seed)
	sim.SetDefault(LinkFaults{DropRate: 0.1, CorruptRate: 0.2, Jitter: time.Millisecond})
	ln, err := sim.Listen("b")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dial := sim.Dialer("a")
	var trace []string
	for len(trace) < n {
		cc, err := dial(context.Background(), "b")
		if err != nil {
			t.Fatal(err)
		}
		sc, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		for len(trace) < n {
			msg := []byte(fmt.Sprintf("chunk %04d", len(trace)))
			if _, err := cc.Write(msg); err != nil {
				trace = append(trace, "reset")
				if _, err := sc.Read(make([]byte, 1)); err == nil {
					t.Fatal("the other end of a reset connection reads")
				}
				break
			}
			got := make([]byte, len(msg))
			if _, err := io.ReadFull(sc, got); err != nil {
				t.Fatal(err)
			}
			if slices.Equal(got, msg) {
				trace = append(trace, "ok")
			} else {
				trace = append(trace, "corrupt")
			}
		}
		cc.Close()
		sc.Close()
	}
	return trace
}

func TestSimNetDeterministic(t *testing.T) {
	a, b := faultTrace(t, 7, 200), faultTrace(t, 7, 200)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, different faults:\n%v\n%v", a, b)
	}
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	if count["ok"] == 0 || count["corrupt"] == 0 || count["reset"] == 0 {
		t.Fatalf("faults at 10%% drop and 20%% corruption: %v", count)
	}
	if c := faultTrace(t, 8, 200); slices.Equal(a, c) {
		t.Fatal("another seed gives the same faults")
	}
}

func TestSimNetPartitionHoldsBytes(t *testing.T) {
	sim := NewSimNet(1)
	ln, _ := sim.Listen("b")
	defer ln.Close()
	cc, err := sim.Dialer("a")(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := ln.Accept()
	sim.Partition([]string{"a"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := sim.Dialer("a")(ctx, "b"); err == nil {
		t.Fatal("dialed across a partition")
	}
	cc.Write([]byte("held"))
	sc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := sc.Read(make([]byte, 4)); !isTimeout(err) {
		t.Fatalf("read across a partition: %v", err)
	}
	sim.Heal()
	sc.SetReadDeadline(time.Time{})
	got := make([]byte, 4)
	if _, err := io.ReadFull(sc, got); err != nil || string(got) != "held" {
		t.Fatalf("after heal: %q, %v", got, err)
	}
	cc.Close()
	if _, err := sc.Read(got); err != io.EOF {
		t.Fatalf("after the peer closed: %v", err)
	}
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// TestTCPOverSimNetFaults: with seeded drops and bit flips on every link,
// every lookup either returns exactly the stored lists or fails with
// ErrNodeDown; never wrong data, never a hang. Once the faults stop, the
// fabric reconnects and every lookup succeeds.
func TestTCPOverSimNetFaults(t *testing.T) {
	base := runtime.NumGoroutine()
	sim := NewSimNet(2026)
	c := newTCPCluster(t, 3, sim)
	sim.SetDefault(LinkFaults{DropRate: 0.02, CorruptRate: 0.02, Jitter: 200 * time.Microsecond})
	var ok, failed int
	for i := 0; i < 60; i++ {
		from, to := i%3, (i/3)%3
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := c.lookupAll(ctx, from, to) // lookupAll fails the test on wrong data
		cancel()
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrNodeDown):
			failed++
		default:
			t.Fatalf("lookup %d→%d: unexpected error %v", from, to, err)
		}
	}
	if ok == 0 || failed == 0 {
		t.Fatalf("%d lookups succeeded and %d failed under faults; want some of each", ok, failed)
	}
	var badFrames uint64
	for _, f := range c.fabs {
		for _, p := range f.Peers() {
			badFrames += p.Disconnects
		}
	}
	if badFrames == 0 {
		t.Fatal("no connection was dropped under faults")
	}
	sim.ClearLinks()
	for from := 0; from < 3; from++ {
		for to := 0; to < 3; to++ {
			c.waitConnects(from, (from+1)%3, 1)
			deadline := time.Now().Add(10 * time.Second)
			for {
				err := c.lookupAll(context.Background(), from, to)
				if err == nil {
					break
				}
				if !errors.Is(err, ErrNodeDown) || time.Now().After(deadline) {
					t.Fatalf("after the faults stopped, %d→%d: %v", from, to, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	t.Logf("%d lookups ok, %d failed cleanly", ok, failed)
	for _, f := range c.fabs {
		f.Close()
	}
	checkNoLeak(t, base)
}

// TestTCPOverSimNetPartition: a partitioned node's lookups fail within
// their deadline (heartbeats notice the silence), the rest of the cluster
// goes on, and the link comes back after Heal.
func TestTCPOverSimNetPartition(t *testing.T) {
	sim := NewSimNet(3)
	c := newTCPCluster(t, 3, sim)
	sim.Partition([]string{c.addrs[2]})
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := c.lookupAll(ctx, 0, 2)
	if err == nil {
		t.Fatal("lookup across a partition succeeded")
	}
	if !errors.Is(err, ErrNodeDown) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lookup across a partition: %v", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second+time.Second {
		t.Fatalf("failure after %v, past its deadline", elapsed)
	}
	// Heartbeats drop the silent connection: later calls fail fast with
	// ErrNodeDown, not at their deadline.
	deadline := time.Now().Add(5 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.lookupAll(ctx, 0, 2)
		cancel()
		if errors.Is(err, ErrNodeDown) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partitioned peer not reported down: %v", err)
		}
	}
	if err := c.lookupAll(context.Background(), 0, 1); err != nil {
		t.Fatalf("the other peer during the partition: %v", err)
	}
	sim.Heal()
	c.waitConnects(0, 2, 1)
	deadline = time.Now().Add(10 * time.Second)
	for {
		err := c.lookupAll(context.Background(), 0, 2)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after heal: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTCPOverSimNetSlowPeer: a slow link fails the calls whose deadline
// is shorter than its delay, and only those.
func TestTCPOverSimNetSlowPeer(t *testing.T) {
	sim := NewSimNet(4)
	c := newTCPCluster(t, 3, sim)
	sim.SetLink(c.addrs[2], c.addrs[0], LinkFaults{Delay: 150 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := c.fabs[0].Read(ctx, 0, ReadRequest{Node: 2, Region: 2, Dst: make([]byte, 64)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read from a slow peer: %v", err)
	}
	if err := c.lookupAll(context.Background(), 0, 1); err != nil {
		t.Fatal(err)
	}
	// With a deadline longer than the delay it works, on the same
	// connection (a slow peer is not a dead one).
	dst := make([]byte, 64)
	if err := c.fabs[0].Read(context.Background(), 0, ReadRequest{Node: 2, Region: 2, Dst: dst}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst, c.regions[2].Bytes()[:64]) {
		t.Fatalf("read from the slow peer: % x, want % x", dst, c.regions[2].Bytes()[:64])
	}
	if p := c.fabs[0].Peers()[1]; p.Disconnects != 0 {
		t.Fatalf("slow peer disconnected: %+v", p)
	}
}

// TestTCPOverSimNetCrash: a crashed node fails calls at once; its
// replacement on the same address is found again.
func TestTCPOverSimNetCrash(t *testing.T) {
	sim := NewSimNet(5)
	c := newTCPCluster(t, 3, sim)
	c.fabs[1].Close()
	sim.Crash(c.addrs[1])
	start := time.Now()
	err := c.lookupAll(context.Background(), 0, 1)
	if !errors.Is(err, ErrNodeDown) {
		t.Fatalf("crashed node: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("failure took %v", time.Since(start))
	}
	ln, err := sim.Listen(c.addrs[1])
	if err != nil {
		t.Fatal(err)
	}
	c.start(1, ln)
	c.waitConnects(0, 1, 2)
	if err := c.lookupAll(context.Background(), 0, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.lookupAll(context.Background(), 1, 2); err != nil {
		t.Fatal(err)
	}
}

// TestTCPOnPeerLost: the callback reports a broken connection, not a
// fabric's own Close.
func TestTCPOnPeerLost(t *testing.T) {
	sim := NewSimNet(6)
	addrs := []string{"a:1", "b:1"}
	lost := make(chan NodeID, 4)
	fabs := make([]*TCP, 2)
	for i := range fabs {
		ln, err := sim.Listen(addrs[i])
		if err != nil {
			t.Fatal(err)
		}
		o := fastTCPOptions()
		o.Self, o.Peers, o.Listener, o.Dial = NodeID(i), addrs, ln, sim.Dialer(addrs[i])
		o.OnPeerLost = func(node NodeID, err error) {
			if !errors.Is(err, ErrNodeDown) {
				t.Errorf("lost node %d: %v", node, err)
			}
			lost <- node
		}
		if fabs[i], err = NewTCP(o); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, f := range fabs {
		if err := f.WaitConnected(ctx); err != nil {
			t.Fatal(err)
		}
	}
	fabs[1].Close()
	sim.Crash(addrs[1])
	select {
	case n := <-lost:
		if n != 1 {
			t.Fatalf("lost node %d, want 1", n)
		}
	case <-ctx.Done():
		t.Fatal("no callback for a crashed peer")
	}
	fabs[0].Close()
	time.Sleep(50 * time.Millisecond)
	select {
	case n := <-lost:
		t.Fatalf("callback for node %d at Close", n)
	default:
	}
}
