package rdmakv

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// TCPOptions configures a TCP fabric. Self and Peers are required; the
// zero value of every other field picks the default given.
type TCPOptions struct {
	// Self is this process's node.
	Self NodeID
	// Peers is the fabric address (host:port) of every node, indexed by
	// NodeID; the cluster has len(Peers) nodes. Peers[Self] is listened on
	// unless Listener is set.
	Peers []string
	// ClusterID must be the same on every node (for example a hash of the
	// snapshot's manifest): a peer with another id is refused at the
	// handshake, so nodes over different data never mix.
	ClusterID uint64
	// Listener, if set, is used instead of listening on Peers[Self] (tests
	// with port 0, the simulated network).
	Listener net.Listener
	// Dial opens a connection to a peer (default: a net.Dialer over TCP).
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// RingSize is the capacity of the receive ring in messages (1024).
	RingSize int
	// MaxFrame is the largest frame payload sent or accepted (64 MiB); a
	// ReadBatch for more bytes per peer is split into several frames.
	MaxFrame int
	// DialTimeout bounds one connection attempt with its handshake (1 s).
	DialTimeout time.Duration
	// ConnectWait is how long a call waits for a peer that is not
	// connected before it fails with ErrNodeDown (1 s).
	ConnectWait time.Duration
	// HeartbeatInterval is the period of pings on an open connection
	// (250 ms); HeartbeatTimeout the silence after which a peer counts as
	// gone: its connection is dropped, its calls fail (2 s).
	HeartbeatInterval, HeartbeatTimeout time.Duration
	// BackoffMin and BackoffMax bound the exponential backoff between
	// connection attempts (20 ms, 1 s), with jitter from Seed.
	BackoffMin, BackoffMax time.Duration
	Seed                   int64
	// Logf, if set, receives connection events (connected, lost, refused).
	Logf func(format string, args ...any)
	// OnPeerLost, if set, is called when an established connection to a
	// peer breaks (not at Close), from the fabric's goroutine: it must not
	// block. A node uses it to fail queries that wait on that peer.
	OnPeerLost func(node NodeID, err error)
	// StartPaused defers answering peers until Resume, so that a node can
	// register its regions before any peer reads them. (It still dials.)
	StartPaused bool
}

func (o *TCPOptions) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.RingSize <= 0 {
		o.RingSize = 1024
	}
	if o.MaxFrame <= 0 {
		o.MaxFrame = 64 << 20
	}
	def(&o.DialTimeout, time.Second)
	def(&o.ConnectWait, time.Second)
	def(&o.HeartbeatInterval, 250*time.Millisecond)
	def(&o.HeartbeatTimeout, 2*time.Second)
	def(&o.BackoffMin, 20*time.Millisecond)
	def(&o.BackoffMax, time.Second)
	if o.BackoffMax < o.BackoffMin {
		o.BackoffMax = o.BackoffMin
	}
	if o.Dial == nil {
		d := &net.Dialer{KeepAlive: 15 * time.Second}
		o.Dial = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	}
}

// TCP is the fabric of a cluster with one process per node, over TCP (or
// any net.Conn: see SimNet). Its own goroutines answer the peers' READs
// straight from the registered regions, without the query engine, so a
// READ is one-sided in effect; the READs of one ReadBatch to one peer
// travel in one frame and one round trip (the analogue of doorbell
// batching). Messages go into the peer's receive ring and are acknowledged
// once they are in it; a full ring makes Send retry until its context ends.
//
// Each node dials every peer and keeps the connection up (retries with
// exponential backoff and jitter; heartbeats detect a peer that stops
// answering). A call to a peer that is down fails with ErrNodeDown after at
// most ConnectWait, a call on a connection that breaks fails at once, and a
// call that outlives its context fails with the context's error: never a
// hang. Frames are length-checked and carry a CRC-32C (tcp_frame.go).
//
// Close the fabric before closing the regions registered on it.
type TCP struct {
	opts    TCPOptions
	self    NodeID
	regions atomic.Pointer[[]*Region]
	regMu   sync.Mutex
	ring    chan Message
	ln      net.Listener
	peers   []*tcpPeer // nil at Self
	meter   Meter

	ctx        context.Context // ends at Close (cancels dials)
	cancel     context.CancelFunc
	closed     chan struct{}
	closeOnce  sync.Once
	resumed    chan struct{}
	resumeOnce sync.Once
	wg         sync.WaitGroup
	srvMu      sync.Mutex
	srvConns   map[net.Conn]struct{}
}

var _ Fabric = (*TCP)(nil)

// NewTCP starts node opts.Self of a TCP fabric: it listens for its peers
// and starts connecting to them in the background (WaitConnected waits for
// that).
func NewTCP(opts TCPOptions) (*TCP, error) {
	n := len(opts.Peers)
	if n == 0 || opts.Self < 0 || int(opts.Self) >= n {
		return nil, fmt.Errorf("tcp fabric: node %d is not in a peer list of %d nodes", opts.Self, n)
	}
	opts.setDefaults()
	f := &TCP{opts: opts, self: opts.Self, ring: make(chan Message, opts.RingSize),
		peers: make([]*tcpPeer, n), closed: make(chan struct{}), srvConns: map[net.Conn]struct{}{}}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	f.resumed = make(chan struct{})
	if !opts.StartPaused {
		f.Resume()
	}
	f.ln = opts.Listener
	if f.ln == nil {
		ln, err := net.Listen("tcp", opts.Peers[opts.Self])
		if err != nil {
			f.cancel()
			return nil, fmt.Errorf("tcp fabric: node %d cannot listen: %w", opts.Self, err)
		}
		f.ln = ln
	}
	for i := range f.peers {
		if NodeID(i) == f.self {
			continue
		}
		f.peers[i] = &tcpPeer{f: f, node: NodeID(i), addr: opts.Peers[i], up: make(chan struct{}),
			kick: make(chan struct{}, 1), rnd: rand.New(rand.NewSource(opts.Seed*7919 + int64(i)))}
	}
	f.wg.Add(1)
	go f.accept()
	for _, p := range f.peers {
		if p != nil {
			f.wg.Add(1)
			go p.maintain()
		}
	}
	return f, nil
}

// Resume starts answering peers (see TCPOptions.StartPaused).
func (f *TCP) Resume() { f.resumeOnce.Do(func() { close(f.resumed) }) }

// Addr returns the address the fabric listens on.
func (f *TCP) Addr() net.Addr { return f.ln.Addr() }

// Self returns this process's node.
func (f *TCP) Self() NodeID { return f.self }

// Nodes implements Fabric.
func (f *TCP) Nodes() int { return len(f.peers) }

// IsLocal implements Fabric: only Self is local.
func (f *TCP) IsLocal(node NodeID) bool { return node == f.self }

func (f *TCP) logf(format string, args ...any) {
	if f.opts.Logf != nil {
		f.opts.Logf(format, args...)
	}
}

func (f *TCP) isClosed() bool {
	select {
	case <-f.closed:
		return true
	default:
		return false
	}
}

// Register implements Fabric.
func (f *TCP) Register(node NodeID, id RegionID, r *Region) error {
	if node != f.self {
		return fmt.Errorf("cannot register region %d on node %d: %w", id, node, ErrNotLocal)
	}
	f.regMu.Lock()
	defer f.regMu.Unlock()
	var old []*Region
	if p := f.regions.Load(); p != nil {
		old = *p
	}
	regs := make([]*Region, max(len(old), int(id)+1))
	copy(regs, old)
	regs[id] = r
	f.regions.Store(&regs)
	return nil
}

func (f *TCP) region(id RegionID) *Region {
	p := f.regions.Load()
	if p == nil || int(id) >= len(*p) {
		return nil
	}
	return (*p)[id]
}

// copyLocal performs a read of a local region into dst.
func (f *TCP) copyLocal(id RegionID, off uint64, dst []byte) (byte, error) {
	r := f.region(id)
	if r == nil {
		return statusNoRegion, fmt.Errorf("read of node %d region %d: %w", f.self, id, ErrNoRegion)
	}
	buf := r.Bytes()
	if off > uint64(len(buf)) || uint64(len(dst)) > uint64(len(buf))-off {
		return statusOutOfRange, fmt.Errorf("read of node %d region %d [%d,+%d) of %d bytes: %w",
			f.self, id, off, len(dst), len(buf), ErrOutOfRange)
	}
	copy(dst, buf[off:])
	return statusOK, nil
}

// charge adds c to the fabric's totals, to peer node's counters (node <
// 0: none) and to the meters attached to ctx.
func (f *TCP) charge(ctx context.Context, node NodeID, c Counters) {
	f.meter.Add(c)
	if node >= 0 && int(node) < len(f.peers) && f.peers[node] != nil {
		f.peers[node].meter.Add(c)
	}
	if m := MeterFromContext(ctx); m != nil {
		m.Add(c)
	}
	if m := PeerMeterFromContext(ctx).Node(node); m != nil {
		m.Add(c)
	}
}

func (f *TCP) fail(ctx context.Context, node NodeID, err error) error {
	f.charge(ctx, node, Counters{FailedCalls: 1})
	return err
}

func (f *TCP) checkCall(ctx context.Context, from NodeID) error {
	if f.isClosed() {
		return ErrClosed
	}
	if from != f.self {
		return fmt.Errorf("call on behalf of node %d: %w", from, ErrNotLocal)
	}
	return ctx.Err()
}

func (f *TCP) peer(node NodeID) (*tcpPeer, error) {
	if node < 0 || int(node) >= len(f.peers) || f.peers[node] == nil {
		return nil, fmt.Errorf("node %d of %d: %w", node, len(f.peers), ErrNodeDown)
	}
	return f.peers[node], nil
}

// Read implements Fabric.
func (f *TCP) Read(ctx context.Context, from NodeID, req ReadRequest) error {
	return f.ReadBatch(ctx, from, []ReadRequest{req})
}

// ReadBatch implements Fabric. Reads of the local node are copies; the
// reads to each peer go out in one frame (more if they exceed MaxFrame),
// to all peers at once, and the call waits for every reply. The first
// failure cancels the rest.
func (f *TCP) ReadBatch(ctx context.Context, from NodeID, reqs []ReadRequest) error {
	if len(reqs) == 0 {
		return nil
	}
	if err := f.checkCall(ctx, from); err != nil {
		return f.fail(ctx, -1, err)
	}
	// Group the remote requests by peer, preserving order; copy local ones.
	var local Counters
	type group struct {
		p    *tcpPeer
		reqs []ReadRequest
	}
	var groupsArr [8]group
	groups := groupsArr[:0]
	for i := range reqs {
		r := &reqs[i]
		if r.Node == f.self {
			if _, err := f.copyLocal(r.Region, r.Offset, r.Dst); err != nil {
				return f.fail(ctx, f.self, err)
			}
			local.Reads++
			local.LocalReads++
			local.ReadBytes += uint64(len(r.Dst))
			continue
		}
		if uint64(len(r.Dst)) > uint64(f.opts.MaxFrame) || len(r.Dst) > int(^uint32(0)) {
			return f.fail(ctx, r.Node, fmt.Errorf("read of %d bytes from node %d exceeds the frame limit of %d bytes", len(r.Dst), r.Node, f.opts.MaxFrame))
		}
		p, err := f.peer(r.Node)
		if err != nil {
			return f.fail(ctx, r.Node, err)
		}
		j := 0
		for j < len(groups) && groups[j].p != p {
			j++
		}
		if j == len(groups) {
			groups = append(groups, group{p: p})
		}
		groups[j].reqs = append(groups[j].reqs, *r)
	}
	if local.Reads > 0 {
		f.charge(ctx, f.self, local)
	}
	if len(groups) == 0 {
		return nil
	}
	if len(groups) == 1 {
		return groups[0].p.readAll(ctx, groups[0].reqs)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for i := 1; i < len(groups); i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if errs[i] = groups[i].p.readAll(cctx, groups[i].reqs); errs[i] != nil {
				cancel()
			}
		}(i)
	}
	if errs[0] = groups[0].p.readAll(cctx, groups[0].reqs); errs[0] != nil {
		cancel()
	}
	wg.Wait()
	// Report the cause, not the cancellations it caused.
	for _, err := range errs {
		if err != nil && !(errors.Is(err, context.Canceled) && ctx.Err() == nil) {
			return err
		}
	}
	return errors.Join(errs...)
}

// Send implements Fabric. The message is in the peer's ring when Send
// returns nil; a Send that fails may or may not have been delivered if the
// connection broke after writing it.
func (f *TCP) Send(ctx context.Context, from, to NodeID, data []byte) error {
	if err := f.checkCall(ctx, from); err != nil {
		return f.fail(ctx, to, err)
	}
	if len(data) > f.opts.MaxFrame {
		return f.fail(ctx, to, fmt.Errorf("message of %d bytes to node %d exceeds the frame limit of %d bytes", len(data), to, f.opts.MaxFrame))
	}
	if to == f.self {
		msg := Message{From: from, Data: append([]byte(nil), data...)}
		select {
		case f.ring <- msg:
		case <-ctx.Done():
			return f.fail(ctx, to, ctx.Err())
		case <-f.closed:
			return f.fail(ctx, to, ErrClosed)
		}
		f.charge(ctx, to, Counters{Sends: 1, SendBytes: uint64(len(data))})
		return nil
	}
	p, err := f.peer(to)
	if err != nil {
		return f.fail(ctx, to, err)
	}
	return p.send(ctx, data)
}

// Post is Send without waiting for the peer's acknowledgement: the
// message is queued on this node's connection to the peer, behind the
// frames queued before it (so the posts to one peer arrive in order), and
// Post returns. It is lost if the connection breaks before the peer takes
// it or the peer's receive ring is full (not retried); done, if not nil,
// is told how it ended once that is known (nil: in the peer's ring;
// ErrRingFull; a connection error wrapping ErrNodeDown), on a goroutine
// of the fabric (it must not block). For traffic that tolerates loss and
// must not wait a round trip per message, like Raft's (Raft resends). An
// error from Post itself: nothing was queued.
func (f *TCP) Post(ctx context.Context, from, to NodeID, data []byte, done func(error)) error {
	if err := f.checkCall(ctx, from); err != nil {
		return f.fail(ctx, to, err)
	}
	if len(data) > f.opts.MaxFrame {
		return f.fail(ctx, to, fmt.Errorf("message of %d bytes to node %d exceeds the frame limit of %d bytes", len(data), to, f.opts.MaxFrame))
	}
	if to == f.self {
		err := f.Send(ctx, from, to, data)
		if done != nil {
			done(err)
		}
		return err
	}
	p, err := f.peer(to)
	if err != nil {
		return f.fail(ctx, to, err)
	}
	return p.post(ctx, data, done)
}

// Recv implements Fabric.
func (f *TCP) Recv(ctx context.Context, node NodeID) (Message, error) {
	if node != f.self {
		return Message{}, fmt.Errorf("receive on node %d: %w", node, ErrNotLocal)
	}
	select {
	case m := <-f.ring:
		f.charge(ctx, -1, Counters{Recvs: 1})
		return m, nil
	case <-ctx.Done():
		return Message{}, ctx.Err()
	case <-f.closed:
		return Message{}, ErrClosed
	}
}

// Counters implements Fabric.
func (f *TCP) Counters() Counters { return f.meter.Snapshot() }

// PeerStats describes the fabric's link to one peer.
type PeerStats struct {
	Node      NodeID
	Addr      string
	Connected bool
	// Counters are the calls this node made to the peer.
	Counters Counters
	// RoundTripNanos is the wall time summed over the round trips (reads
	// and acknowledged messages) to the peer.
	RoundTripNanos uint64
	// Connects counts established connections (the first one and every
	// reconnection), DialFailures failed attempts, Disconnects lost
	// connections.
	Connects, DialFailures, Disconnects uint64
	// ServedReads, ServedBytes and ServedMessages count what this node's
	// fabric goroutines answered for the peer.
	ServedReads, ServedBytes, ServedMessages uint64
	// LastError is the last connection error ("" if none).
	LastError string
}

// Peers returns the state of the link to every peer (Self excluded), in
// node order.
func (f *TCP) Peers() []PeerStats {
	var out []PeerStats
	for _, p := range f.peers {
		if p == nil {
			continue
		}
		p.mu.Lock()
		connected, lastErr := p.conn != nil, p.lastErr
		p.mu.Unlock()
		s := PeerStats{Node: p.node, Addr: p.addr, Connected: connected, Counters: p.meter.Snapshot(),
			RoundTripNanos: p.rttNanos.Load(), Connects: p.connects.Load(), DialFailures: p.dialFails.Load(),
			Disconnects: p.disconnects.Load(), ServedReads: p.servedReads.Load(),
			ServedBytes: p.servedBytes.Load(), ServedMessages: p.servedMsgs.Load()}
		if lastErr != nil {
			s.LastError = lastErr.Error()
		}
		out = append(out, s)
	}
	return out
}

// Link reports whether this node has a connection to node now and how
// many connections to it were established so far (a new count means a
// new connection: the peer may be a restarted process). It is cheap, for
// routing around a peer that is down; Self is always up.
func (f *TCP) Link(node NodeID) (up bool, connects uint64) {
	if node == f.self {
		return true, 0
	}
	if int(node) >= len(f.peers) || f.peers[node] == nil {
		return false, 0
	}
	p := f.peers[node]
	p.mu.Lock()
	up = p.conn != nil
	p.mu.Unlock()
	return up, p.connects.Load()
}

// WaitConnected waits until this node has a connection to every peer, or
// ctx ends (then the error names the peers still missing).
func (f *TCP) WaitConnected(ctx context.Context) error {
	for _, p := range f.peers {
		if p == nil {
			continue
		}
		for {
			p.mu.Lock()
			c, up, lastErr := p.conn, p.up, p.lastErr
			p.mu.Unlock()
			if c != nil {
				break
			}
			select {
			case <-up:
			case <-ctx.Done():
				return fmt.Errorf("node %d (%s) not connected (last error: %v): %w", p.node, p.addr, lastErr, ctx.Err())
			case <-f.closed:
				return ErrClosed
			}
		}
	}
	return nil
}

// Close implements Fabric: it stops listening, drops every connection,
// fails pending calls with ErrClosed and waits for the fabric's
// goroutines. It does not close the registered regions.
func (f *TCP) Close() error {
	f.closeOnce.Do(func() {
		close(f.closed)
		f.cancel()
		f.ln.Close()
		f.srvMu.Lock()
		for c := range f.srvConns {
			c.Close()
		}
		f.srvMu.Unlock()
	})
	f.wg.Wait()
	return nil
}
