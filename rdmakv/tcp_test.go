package rdmakv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// regionOf builds a table of entries into a region.
func regionOf(t testing.TB, entries map[uint64][]uint64) *Region {
	t.Helper()
	return tableRegion(t, entries, TableOptions{})
}

// tcpCluster is a cluster of TCP fabrics in this process, one per node,
// each with one table region (RegionID = node).
type tcpCluster struct {
	t       testing.TB
	addrs   []string
	fabs    []*TCP
	entries []map[uint64][]uint64
	regions []*Region
	opts    func(i int) TCPOptions
}

// restartWithRing closes node i's fabric and starts it again on the same
// address, with RingSize size in the options of every node started from
// now on (the test is skipped if the address cannot be listened on
// again).
func (c *tcpCluster) restartWithRing(t *testing.T, i, size int) {
	t.Helper()
	c.fabs[i].Close()
	ln, err := net.Listen("tcp", c.addrs[i])
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", c.addrs[i], err)
	}
	opts := c.opts
	c.opts = func(k int) TCPOptions { o := opts(k); o.RingSize = size; return o }
	c.start(i, ln)
}

func fastTCPOptions() TCPOptions {
	return TCPOptions{DialTimeout: 300 * time.Millisecond, ConnectWait: 300 * time.Millisecond,
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: 400 * time.Millisecond,
		BackoffMin: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond, ClusterID: 42}
}

// newTCPCluster starts n nodes on 127.0.0.1 with free ports; listen, if
// set, supplies the listener and dialer (the simulated network).
func newTCPCluster(t testing.TB, n int, sim *SimNet) *tcpCluster {
	t.Helper()
	c := &tcpCluster{t: t, addrs: make([]string, n), fabs: make([]*TCP, n)}
	lns := make([]net.Listener, n)
	for i := range lns {
		var err error
		if sim != nil {
			c.addrs[i] = fmt.Sprintf("node%d:7000", i)
			lns[i], err = sim.Listen(c.addrs[i])
		} else {
			lns[i], err = net.Listen("tcp", "127.0.0.1:0")
			if err == nil {
				c.addrs[i] = lns[i].Addr().String()
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	c.opts = func(i int) TCPOptions {
		o := fastTCPOptions()
		o.Self, o.Peers, o.Seed = NodeID(i), c.addrs, int64(i)
		if sim != nil {
			o.Dial = sim.Dialer(c.addrs[i])
		}
		return o
	}
	for i := 0; i < n; i++ {
		c.entries = append(c.entries, testEntries(500, uint64(i)+1))
		c.regions = append(c.regions, regionOf(t, c.entries[i]))
	}
	for i := 0; i < n; i++ {
		c.start(i, lns[i])
	}
	t.Cleanup(func() {
		for _, f := range c.fabs {
			if f != nil {
				f.Close()
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, f := range c.fabs {
		if err := f.WaitConnected(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func (c *tcpCluster) start(i int, ln net.Listener) {
	c.t.Helper()
	o := c.opts(i)
	o.Listener = ln
	f, err := NewTCP(o)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := f.Register(NodeID(i), RegionID(i), c.regions[i]); err != nil {
		c.t.Fatal(err)
	}
	c.fabs[i] = f
}

// lookupAll looks up every key of node to's table from node from in one
// LookupBatch and checks the lists.
func (c *tcpCluster) lookupAll(ctx context.Context, from, to int) error {
	rt, err := OpenRemoteTable(ctx, c.fabs[from], NodeID(from), NodeID(to), RegionID(to))
	if err != nil {
		return err
	}
	keys := make([]uint64, 0, len(c.entries[to]))
	for k := range c.entries[to] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	lookups := make([]Lookup, len(keys))
	for i, k := range keys {
		lookups[i] = Lookup{Table: rt, Key: k}
	}
	vals, ends, err := LookupBatch(ctx, c.fabs[from], NodeID(from), lookups, nil, nil)
	if err != nil {
		return err
	}
	start := 0
	for i, k := range keys {
		if !slices.Equal(vals[start:ends[i]], c.entries[to][k]) {
			c.t.Fatalf("key %#x of node %d read from node %d: %v, want %v", k, to, from, vals[start:ends[i]], c.entries[to][k])
		}
		start = ends[i]
	}
	return nil
}

// waitConnects waits until node from has connected to node to n times.
func (c *tcpCluster) waitConnects(from, to int, n uint64) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, p := range c.fabs[from].Peers() {
			if p.Node == NodeID(to) && p.Connected && p.Connects >= n {
				return
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("node %d did not connect to node %d %d times: %+v", from, to, n, c.fabs[from].Peers())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkNoLeak waits for the goroutine count to come back to base.
func checkNoLeak(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTCPReadsAndCounters(t *testing.T) {
	base := runtime.NumGoroutine()
	c := newTCPCluster(t, 3, nil)
	ctx := context.Background()
	for from := 0; from < 3; from++ {
		for to := 0; to < 3; to++ {
			if err := c.lookupAll(ctx, from, to); err != nil {
				t.Fatalf("%d→%d: %v", from, to, err)
			}
		}
	}
	// One ReadBatch to two peers and the local node: two round trips, one
	// frame per peer, all bytes right.
	f := c.fabs[0]
	before := f.Counters()
	pm := NewPeerMeter(3)
	m := &Meter{}
	qctx := ContextWithPeerMeter(ContextWithMeter(ctx, m), pm)
	reqs := []ReadRequest{}
	for i := 0; i < 10; i++ {
		for node := 0; node < 3; node++ {
			reqs = append(reqs, ReadRequest{Node: NodeID(node), Region: RegionID(node), Offset: uint64(i * 7), Dst: make([]byte, 5+i)})
		}
	}
	if err := f.ReadBatch(qctx, 0, reqs); err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		want := c.regions[r.Node].Bytes()[r.Offset : r.Offset+uint64(len(r.Dst))]
		if !slices.Equal(r.Dst, want) {
			t.Fatalf("read %+v: %x, want %x", r, r.Dst, want)
		}
	}
	got := f.Counters().Sub(before)
	if got.Reads != 30 || got.RoundTrips != 2 || got.LocalReads != 10 {
		t.Fatalf("counters %+v, want 30 reads, 2 round trips, 10 local", got)
	}
	if q := m.Snapshot(); q != got {
		t.Fatalf("query meter %+v, fabric %+v", q, got)
	}
	per := pm.Snapshot()
	for node := 0; node < 3; node++ {
		wantRT := uint64(1)
		if node == 0 {
			wantRT = 0
		}
		if per[node].Reads != 10 || per[node].RoundTrips != wantRT {
			t.Fatalf("peer meter of node %d: %+v", node, per[node])
		}
	}
	ps := f.Peers()
	if len(ps) != 2 || ps[0].Node != 1 || !ps[0].Connected || ps[0].Counters.Reads == 0 || ps[0].Connects != 1 {
		t.Fatalf("peer stats %+v", ps)
	}
	// The peers' fabric goroutines served them.
	if s := c.fabs[1].Peers()[0]; s.Node != 0 || s.ServedReads < 10 {
		t.Fatalf("node 1 served %+v", s)
	}

	// Errors of the peer's region travel back as sentinels; the connection
	// stays usable.
	err := f.Read(ctx, 0, ReadRequest{Node: 1, Region: 9, Dst: make([]byte, 8)})
	if !errors.Is(err, ErrNoRegion) {
		t.Fatalf("missing region: %v", err)
	}
	err = f.Read(ctx, 0, ReadRequest{Node: 1, Region: 1, Offset: uint64(c.regions[1].Len() - 4), Dst: make([]byte, 8)})
	if !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("out of range: %v", err)
	}
	if err := c.lookupAll(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := NewTCP(TCPOptions{Self: 3, Peers: c.addrs}); err == nil {
		t.Fatal("node 3 of 3 accepted")
	}
	if err := f.Register(1, 0, c.regions[0]); !errors.Is(err, ErrNotLocal) {
		t.Fatalf("register on a peer: %v", err)
	}
	for _, f := range c.fabs {
		f.Close()
	}
	if err := f.Read(ctx, 0, reqs[1]); !errors.Is(err, ErrClosed) {
		t.Fatalf("read after close: %v", err)
	}
	checkNoLeak(t, base)
}

func TestTCPLargeBatchSplitsFrames(t *testing.T) {
	c := newTCPCluster(t, 2, nil)
	// A 4 KiB frame limit: reading a whole region takes several frames.
	for i := range c.fabs {
		c.fabs[i].Close()
	}
	lns := []net.Listener{}
	for i := range c.fabs {
		ln, err := net.Listen("tcp", c.addrs[i])
		if err != nil {
			t.Skipf("cannot listen on %s again: %v", c.addrs[i], err)
		}
		lns = append(lns, ln)
	}
	opts := c.opts
	c.opts = func(i int) TCPOptions { o := opts(i); o.MaxFrame = 4096; return o }
	for i := range c.fabs {
		c.start(i, lns[i])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.fabs[0].WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	size := c.regions[1].Len()
	var reqs []ReadRequest
	for off := 0; off < size; off += 1000 {
		reqs = append(reqs, ReadRequest{Node: 1, Region: 1, Offset: uint64(off), Dst: make([]byte, min(1000, size-off))})
	}
	before := c.fabs[0].Counters()
	if err := c.fabs[0].ReadBatch(ctx, 0, reqs); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for _, r := range reqs {
		got = append(got, r.Dst...)
	}
	if !slices.Equal(got, c.regions[1].Bytes()) {
		t.Fatal("region read in pieces differs")
	}
	d := c.fabs[0].Counters().Sub(before)
	if want := uint64((size + 3999) / 4000); d.RoundTrips < want {
		t.Fatalf("%d frames for %d bytes under a 4096-byte limit", d.RoundTrips, size)
	}
	if err := c.fabs[0].Read(ctx, 0, ReadRequest{Node: 1, Region: 1, Dst: make([]byte, 5000)}); err == nil || !strings.Contains(err.Error(), "frame limit") {
		t.Fatalf("read over the frame limit: %v", err)
	}
	if err := c.fabs[0].Send(ctx, 0, 1, make([]byte, 5000)); err == nil {
		t.Fatal("message over the frame limit sent")
	}
}

func TestTCPMessages(t *testing.T) {
	c := newTCPCluster(t, 3, nil)
	// A small ring: senders retry while it is full.
	c.restartWithRing(t, 2, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Until the senders have noticed the restart, a Send may go to the old
	// connection and fail (as it must: it cannot know whether the old
	// process got it).
	c.waitConnects(0, 2, 2)
	c.waitConnects(1, 2, 2)
	const per = 50
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for from := 0; from < 2; from++ {
		wg.Add(1)
		go func(from int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if err := c.fabs[from].Send(ctx, NodeID(from), 2, []byte(fmt.Sprintf("%d:%d", from, i))); err != nil {
					errs <- err
					return
				}
			}
		}(from)
	}
	next := [2]int{}
	for n := 0; n < 2*per; n++ {
		m, err := c.fabs[2].Recv(ctx, 2)
		if err != nil {
			select {
			case serr := <-errs:
				t.Fatalf("send: %v", serr)
			default:
			}
			t.Fatal(err)
		}
		want := fmt.Sprintf("%d:%d", m.From, next[m.From])
		if string(m.Data) != want {
			t.Fatalf("message %q from node %d, want %q (in order per sender)", m.Data, m.From, want)
		}
		next[m.From]++
		if n%10 == 0 {
			time.Sleep(time.Millisecond) // let the ring fill
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// To itself, through the ring.
	if err := c.fabs[2].Send(ctx, 2, 2, []byte("self")); err != nil {
		t.Fatal(err)
	}
	if m, err := c.fabs[2].Recv(ctx, 2); err != nil || string(m.Data) != "self" || m.From != 2 {
		t.Fatalf("self message %q from %d: %v", m.Data, m.From, err)
	}
	if _, err := c.fabs[2].Recv(ctx, 1); !errors.Is(err, ErrNotLocal) {
		t.Fatalf("receive on a peer: %v", err)
	}
	if err := c.fabs[0].Send(ctx, 1, 2, nil); !errors.Is(err, ErrNotLocal) {
		t.Fatalf("send on behalf of a peer: %v", err)
	}
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	if _, err := c.fabs[2].Recv(short, 2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("receive on an empty ring: %v", err)
	}
}

// TestTCPPeerDownAndBack kills a node: calls that need it fail with
// ErrNodeDown well within their deadline, calls to others go on, and the
// link comes back by itself when the node returns.
func TestTCPPeerDownAndBack(t *testing.T) {
	base := runtime.NumGoroutine()
	c := newTCPCluster(t, 3, nil)
	ctx := context.Background()
	if err := c.lookupAll(ctx, 0, 2); err != nil {
		t.Fatal(err)
	}
	c.fabs[2].Close()
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for i := 0; i < 3; i++ {
		err := c.lookupAll(qctx, 0, 2)
		if !errors.Is(err, ErrNodeDown) {
			t.Fatalf("lookup on a dead node: %v", err)
		}
		if !strings.Contains(err.Error(), c.addrs[2]) {
			t.Fatalf("error does not name the peer: %v", err)
		}
	}
	if qctx.Err() != nil {
		t.Fatal("the failure took the whole deadline")
	}
	if err := c.lookupAll(ctx, 0, 1); err != nil {
		t.Fatalf("the other peer: %v", err)
	}
	if err := c.fabs[1].Send(ctx, 1, 2, []byte("x")); !errors.Is(err, ErrNodeDown) {
		t.Fatalf("send to a dead node: %v", err)
	}
	// Restart node 2 on its address.
	ln, err := net.Listen("tcp", c.addrs[2])
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", c.addrs[2], err)
	}
	c.start(2, ln)
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	for _, f := range c.fabs {
		if err := f.WaitConnected(wctx); err != nil {
			t.Fatal(err)
		}
	}
	c.waitConnects(0, 2, 2)
	if err := c.lookupAll(ctx, 0, 2); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if err := c.lookupAll(ctx, 2, 0); err != nil {
		t.Fatalf("after restart, from the new node: %v", err)
	}
	ps := c.fabs[0].Peers()[1]
	if ps.Node != 2 || ps.Connects < 2 || ps.Disconnects < 1 || ps.Counters.FailedCalls == 0 {
		t.Fatalf("peer stats after a restart: %+v", ps)
	}
	for _, f := range c.fabs {
		f.Close()
	}
	checkNoLeak(t, base)
}

func TestTCPHandshakeRefusesOtherCluster(t *testing.T) {
	lns := make([]net.Listener, 2)
	addrs := make([]string, 2)
	for i := range lns {
		var err error
		if lns[i], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		addrs[i] = lns[i].Addr().String()
	}
	var logMu sync.Mutex
	var logs []string
	fabs := make([]*TCP, 2)
	for i := range fabs {
		o := fastTCPOptions()
		o.Self, o.Peers, o.Listener, o.ClusterID = NodeID(i), addrs, lns[i], uint64(100+i)
		o.Logf = func(format string, args ...any) {
			logMu.Lock()
			logs = append(logs, fmt.Sprintf(format, args...))
			logMu.Unlock()
		}
		f, err := NewTCP(o)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fabs[i] = f
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := fabs[0].WaitConnected(ctx); err == nil {
		t.Fatal("nodes of different clusters connected")
	}
	err := fabs[0].Read(context.Background(), 0, ReadRequest{Node: 1, Dst: make([]byte, 1)})
	if !errors.Is(err, ErrNodeDown) || !strings.Contains(err.Error(), "cluster id") {
		t.Fatalf("read from another cluster: %v", err)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !slices.ContainsFunc(logs, func(s string) bool { return strings.Contains(s, "refuses") }) {
		t.Fatalf("no refusal logged: %q", logs)
	}
}

// TestTCPCancelledReadLeavesDstAlone: a caller that gives up owns its
// buffers again at once; a late reply is dropped.
func TestTCPCancelledRead(t *testing.T) {
	sim := NewSimNet(1)
	c := newTCPCluster(t, 2, sim)
	sim.SetLink(c.addrs[1], c.addrs[0], LinkFaults{Delay: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	dst := make([]byte, 64)
	err := c.fabs[0].Read(ctx, 0, ReadRequest{Node: 1, Region: 1, Dst: dst})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow read: %v", err)
	}
	for i := range dst {
		dst[i] = 0xAA // the caller reuses its buffer (the race detector watches)
	}
	time.Sleep(150 * time.Millisecond)
	for _, b := range dst {
		if b != 0xAA {
			t.Fatal("a late reply wrote into an abandoned buffer")
		}
	}
	sim.ClearLinks()
	if err := c.lookupAll(context.Background(), 0, 1); err != nil {
		t.Fatal(err)
	}
}

// TestTCPPost: posted messages from two senders arrive in order per
// sender without the senders waiting; each post's done reports how it
// ended — in the ring, or dropped because the ring was full (never
// retried: every message is delivered once or reported dropped); a post
// to a dead node fails or reports ErrNodeDown, and posts go on after it
// returns.
func TestTCPPost(t *testing.T) {
	c := newTCPCluster(t, 3, nil)
	c.restartWithRing(t, 2, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c.waitConnects(0, 2, 2)
	c.waitConnects(1, 2, 2)
	const per = 400
	var mu sync.Mutex
	outcome := [2]map[int]error{{}, {}}
	var posted sync.WaitGroup
	for from := 0; from < 2; from++ {
		posted.Add(per)
		go func(from int) {
			for i := 0; i < per; i++ {
				err := c.fabs[from].Post(ctx, NodeID(from), 2, []byte(fmt.Sprintf("%d:%d", from, i)), func(err error) {
					mu.Lock()
					outcome[from][i] = err
					mu.Unlock()
					posted.Done()
				})
				if err != nil {
					t.Errorf("post %d from %d: %v", i, from, err)
					posted.Done()
				}
			}
		}(from)
	}
	// Receive slowly at first so the ring of 8 fills and drops some.
	var got [2][]int
	done := make(chan struct{})
	go func() { posted.Wait(); close(done) }()
	for n := 0; ; n++ {
		if n < 20 {
			time.Sleep(2 * time.Millisecond)
		}
		rctx, rcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		m, err := c.fabs[2].Recv(rctx, 2)
		rcancel()
		if err != nil {
			select {
			case <-done:
			default:
				continue
			}
			break
		}
		var from, i int
		if _, err := fmt.Sscanf(string(m.Data), "%d:%d", &from, &i); err != nil || NodeID(from) != m.From {
			t.Fatalf("message %q from %d", m.Data, m.From)
		}
		if k := len(got[from]); k > 0 && got[from][k-1] >= i {
			t.Fatalf("message %d from node %d after %d: out of order", i, from, got[from][k-1])
		}
		got[from] = append(got[from], i)
	}
	dropped := 0
	for from := 0; from < 2; from++ {
		in := map[int]bool{}
		for _, i := range got[from] {
			in[i] = true
		}
		for i := 0; i < per; i++ {
			err, ok := outcome[from][i]
			switch {
			case !ok:
				t.Fatalf("post %d from %d: done never called", i, from)
			case err == nil && !in[i]:
				t.Fatalf("post %d from %d reported delivered, not received", i, from)
			case err != nil && in[i]:
				t.Fatalf("post %d from %d reported %v, but received", i, from, err)
			case err != nil && !errors.Is(err, ErrRingFull):
				t.Fatalf("post %d from %d: %v", i, from, err)
			case err != nil:
				dropped++
			}
		}
	}
	if dropped == 0 || len(got[0])+len(got[1]) == 0 {
		t.Fatalf("%d dropped, %d+%d received: want some of each with a ring of 8", dropped, len(got[0]), len(got[1]))
	}
	// A dead peer: the post fails at once, or its done says the node is down.
	c.fabs[2].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := make(chan error, 1)
		err := c.fabs[0].Post(ctx, 0, 2, []byte("x"), func(err error) { res <- err })
		if err == nil {
			err = <-res
		}
		if errors.Is(err, ErrNodeDown) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("post to a dead node: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	ln, err := net.Listen("tcp", c.addrs[2])
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", c.addrs[2], err)
	}
	c.start(2, ln)
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := c.fabs[0].WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	for {
		if err := c.fabs[0].Post(ctx, 0, 2, []byte("back"), func(err error) { res <- err }); err == nil {
			if err := <-res; err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no post reached the restarted node")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if m, err := c.fabs[2].Recv(ctx, 2); err != nil || string(m.Data) != "back" {
		t.Fatalf("after the restart: %q, %v", m.Data, err)
	}
}
