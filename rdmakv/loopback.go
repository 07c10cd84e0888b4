package rdmakv

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// NetModel is a latency/bandwidth model for a simulated network. The zero
// value is a free network.
//
// Costs: a Read, and each (from, peer) group of a ReadBatch, costs
// RoundTrip + bytes/Bandwidth; a ReadBatch to several peers costs the most
// expensive peer's group (the round trips overlap, as doorbell-batched RDMA
// reads do). A Send costs MessageLatency + bytes/Bandwidth. Reads of a
// node's own regions cost nothing.
//
// The model is deterministic: the cost of a call depends only on its sizes.
// It is always charged to Counters.ModelNanos; with Sleep, the calling
// goroutine also sleeps for it (for wall-clock experiments; tests should
// use the counter instead).
type NetModel struct {
	RoundTrip      time.Duration
	MessageLatency time.Duration
	// Bandwidth in bytes per second; 0 means unlimited.
	Bandwidth float64
	Sleep     bool
}

func (m *NetModel) transfer(bytes int) time.Duration {
	if m.Bandwidth <= 0 || bytes == 0 {
		return 0
	}
	return time.Duration(float64(bytes) / m.Bandwidth * float64(time.Second))
}

// LoopbackOptions configures a Loopback fabric.
type LoopbackOptions struct {
	// RingSize is the capacity of each node's receive ring in messages
	// (default 1024).
	RingSize int
	// Model, if set, charges (and optionally sleeps) simulated network time.
	Model *NetModel
}

// Loopback is a Fabric whose nodes all live in this process: a read is a
// copy out of the peer's registered region, a message is a copy into the
// peer's ring (a buffered channel). It goes through the same calls a
// network fabric would, so the counters show what a cluster would transfer.
type Loopback struct {
	nodes   []*loopNode
	model   NetModel
	meter   Meter
	closed  chan struct{}
	closeMu sync.Once
}

type loopNode struct {
	regions atomic.Pointer[[]*Region] // indexed by RegionID; copy-on-write
	regMu   sync.Mutex
	down    atomic.Bool
	ring    chan Message
}

var _ Fabric = (*Loopback)(nil)

// NewLoopback returns a loopback fabric of n nodes.
func NewLoopback(n int, opts LoopbackOptions) *Loopback {
	if n <= 0 {
		panic(fmt.Sprintf("BUG: loopback fabric of %d nodes", n))
	}
	if opts.RingSize <= 0 {
		opts.RingSize = 1024
	}
	f := &Loopback{nodes: make([]*loopNode, n), closed: make(chan struct{})}
	if opts.Model != nil {
		f.model = *opts.Model
	}
	for i := range f.nodes {
		f.nodes[i] = &loopNode{ring: make(chan Message, opts.RingSize)}
	}
	return f
}

// Nodes implements Fabric.
func (f *Loopback) Nodes() int { return len(f.nodes) }

// IsLocal implements Fabric: every node of a loopback fabric is local.
func (f *Loopback) IsLocal(node NodeID) bool { return node >= 0 && int(node) < len(f.nodes) }

// SetDown marks node as unreachable (or reachable again): reads and sends
// to it fail with ErrNodeDown. For failure tests.
func (f *Loopback) SetDown(node NodeID, down bool) { f.nodes[node].down.Store(down) }

// Register implements Fabric.
func (f *Loopback) Register(node NodeID, id RegionID, r *Region) error {
	if !f.IsLocal(node) {
		return fmt.Errorf("cannot register region %d on node %d: %w", id, node, ErrNotLocal)
	}
	n := f.nodes[node]
	n.regMu.Lock()
	defer n.regMu.Unlock()
	var old []*Region
	if p := n.regions.Load(); p != nil {
		old = *p
	}
	size := len(old)
	if int(id) >= size {
		size = int(id) + 1
	}
	regs := make([]*Region, size)
	copy(regs, old)
	regs[id] = r
	n.regions.Store(&regs)
	return nil
}

func (f *Loopback) check(ctx context.Context, node NodeID) (*loopNode, error) {
	select {
	case <-f.closed:
		return nil, ErrClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if node < 0 || int(node) >= len(f.nodes) {
		return nil, fmt.Errorf("node %d of %d: %w", node, len(f.nodes), ErrNodeDown)
	}
	n := f.nodes[node]
	if n.down.Load() {
		return nil, fmt.Errorf("node %d: %w", node, ErrNodeDown)
	}
	return n, nil
}

// copyOut performs one read against node n.
func (f *Loopback) copyOut(n *loopNode, req *ReadRequest) error {
	p := n.regions.Load()
	if p == nil || int(req.Region) >= len(*p) || (*p)[req.Region] == nil {
		return fmt.Errorf("read of node %d region %d: %w", req.Node, req.Region, ErrNoRegion)
	}
	buf := (*p)[req.Region].Bytes()
	if req.Offset > uint64(len(buf)) || uint64(len(req.Dst)) > uint64(len(buf))-req.Offset {
		return fmt.Errorf("read of node %d region %d [%d,+%d) of %d bytes: %w",
			req.Node, req.Region, req.Offset, len(req.Dst), len(buf), ErrOutOfRange)
	}
	copy(req.Dst, buf[req.Offset:])
	return nil
}

func (f *Loopback) charge(ctx context.Context, c Counters) {
	if c.ModelNanos != 0 && f.model.Sleep {
		t := time.NewTimer(time.Duration(c.ModelNanos))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	f.meter.Add(c)
	if m := MeterFromContext(ctx); m != nil {
		m.Add(c)
	}
}

func (f *Loopback) fail(ctx context.Context, err error) error {
	f.charge(ctx, Counters{FailedCalls: 1})
	return err
}

// Read implements Fabric.
func (f *Loopback) Read(ctx context.Context, from NodeID, req ReadRequest) error {
	n, err := f.check(ctx, req.Node)
	if err != nil {
		return f.fail(ctx, err)
	}
	if err := f.copyOut(n, &req); err != nil {
		return f.fail(ctx, err)
	}
	c := Counters{Reads: 1, ReadBytes: uint64(len(req.Dst))}
	if req.Node == from {
		c.LocalReads = 1
	} else {
		c.RoundTrips = 1
		c.ModelNanos = uint64(f.model.RoundTrip + f.model.transfer(len(req.Dst)))
	}
	f.charge(ctx, c)
	return nil
}

// ReadBatch implements Fabric.
func (f *Loopback) ReadBatch(ctx context.Context, from NodeID, reqs []ReadRequest) error {
	if len(reqs) == 0 {
		return nil
	}
	var c Counters
	// Per-peer byte totals for the model; small clusters, so a short slice
	// of (peer, bytes) found by scanning.
	type peerBytes struct {
		node  NodeID
		bytes int
	}
	var peersArr [8]peerBytes
	peers := peersArr[:0]
	for i := range reqs {
		r := &reqs[i]
		n, err := f.check(ctx, r.Node)
		if err != nil {
			return f.fail(ctx, err)
		}
		if err := f.copyOut(n, r); err != nil {
			return f.fail(ctx, err)
		}
		c.Reads++
		c.ReadBytes += uint64(len(r.Dst))
		if r.Node == from {
			c.LocalReads++
			continue
		}
		j := 0
		for j < len(peers) && peers[j].node != r.Node {
			j++
		}
		if j == len(peers) {
			peers = append(peers, peerBytes{node: r.Node})
		}
		peers[j].bytes += len(r.Dst)
	}
	c.RoundTrips = uint64(len(peers))
	var worst time.Duration
	for _, p := range peers {
		if d := f.model.RoundTrip + f.model.transfer(p.bytes); d > worst {
			worst = d
		}
	}
	c.ModelNanos = uint64(worst)
	f.charge(ctx, c)
	return nil
}

var _ OwningSender = (*Loopback)(nil)

// Send implements Fabric.
func (f *Loopback) Send(ctx context.Context, from, to NodeID, data []byte) error {
	return f.SendOwned(ctx, from, to, append([]byte(nil), data...))
}

// SendOwned implements OwningSender: data itself goes into the ring.
func (f *Loopback) SendOwned(ctx context.Context, from, to NodeID, data []byte) error {
	n, err := f.check(ctx, to)
	if err != nil {
		return f.fail(ctx, err)
	}
	msg := Message{From: from, Data: data}
	select {
	case n.ring <- msg:
	case <-ctx.Done():
		return f.fail(ctx, ctx.Err())
	case <-f.closed:
		return f.fail(ctx, ErrClosed)
	}
	c := Counters{Sends: 1, SendBytes: uint64(len(data))}
	if from != to {
		c.ModelNanos = uint64(f.model.MessageLatency + f.model.transfer(len(data)))
	}
	f.charge(ctx, c)
	return nil
}

// Recv implements Fabric.
func (f *Loopback) Recv(ctx context.Context, node NodeID) (Message, error) {
	if !f.IsLocal(node) {
		return Message{}, fmt.Errorf("receive on node %d: %w", node, ErrNotLocal)
	}
	select {
	case m := <-f.nodes[node].ring:
		f.charge(ctx, Counters{Recvs: 1})
		return m, nil
	case <-ctx.Done():
		return Message{}, ctx.Err()
	case <-f.closed:
		return Message{}, ErrClosed
	}
}

// Counters implements Fabric.
func (f *Loopback) Counters() Counters { return f.meter.Snapshot() }

// Close implements Fabric. It does not close the registered regions (their
// owners do).
func (f *Loopback) Close() error {
	f.closeMu.Do(func() { close(f.closed) })
	return nil
}
