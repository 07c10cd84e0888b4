package rdmakv

import (
	"context"
	"errors"
	"sync/atomic"
)

// NodeID is a node of the cluster, 0 ≤ NodeID < Fabric.Nodes().
type NodeID int

// ReadRequest is one one-sided read: len(Dst) bytes at Offset of region
// Region of node Node are copied into Dst.
type ReadRequest struct {
	Node   NodeID
	Region RegionID
	Offset uint64
	Dst    []byte
}

// Message is a message taken from a node's receive ring. Data belongs to
// the receiver.
type Message struct {
	From NodeID
	Data []byte
}

// Errors a Fabric returns (wrapped with context).
var (
	// ErrNodeDown: the peer is unreachable (crashed, disconnected, or
	// marked down in a loopback fabric).
	ErrNodeDown = errors.New("node down")
	// ErrNoRegion: the peer has no such registered region.
	ErrNoRegion = errors.New("no such region")
	// ErrOutOfRange: a read beyond the end of a region.
	ErrOutOfRange = errors.New("read out of range")
	// ErrClosed: the fabric was closed.
	ErrClosed = errors.New("fabric closed")
	// ErrNotLocal: the operation needs a node hosted by this process.
	ErrNotLocal = errors.New("node not local")
	// ErrRingFull: a posted message found the peer's receive ring full
	// and was dropped (TCP.Post; Send waits and tries again).
	ErrRingFull = errors.New("receive ring full")
)

// Poster is a fabric that can post a message without waiting for the
// peer's acknowledgement (TCP.Post).
type Poster interface {
	Post(ctx context.Context, from, to NodeID, data []byte, done func(error)) error
}

// Fabric is everything that crosses nodes: one-sided reads of registered
// regions and messages into receive rings (RDMA READ and RDMA WRITE into a
// ring with polling in Wukong). Every call takes a context: a deadline or
// cancellation ends a wait with the context's error, and an unreachable
// peer is an error (ErrNodeDown), never a hang.
//
// Implementations: Loopback (all nodes in one process). A tcp fabric (one
// process per node, whose fabric goroutines answer reads straight from the
// registered regions, one round trip per peer per ReadBatch) fits the same
// interface: there Local reports only the process's own node.
//
// All methods are safe for concurrent use.
type Fabric interface {
	// Nodes returns the number of nodes in the cluster.
	Nodes() int
	// IsLocal reports whether node is hosted by this process (its regions
	// can be registered and its ring received from here).
	IsLocal(node NodeID) bool
	// Register publishes region r of a local node under id; peers may read
	// it until the fabric is closed. Registering an id again replaces it.
	Register(node NodeID, id RegionID, r *Region) error
	// Read performs one one-sided read on behalf of local node from.
	Read(ctx context.Context, from NodeID, req ReadRequest) error
	// ReadBatch performs all reqs (to any peers) on behalf of from. Reads
	// to one peer travel in one round trip. On error, some Dst may have
	// been filled.
	ReadBatch(ctx context.Context, from NodeID, reqs []ReadRequest) error
	// Send copies data into the receive ring of node to. It blocks while
	// the ring is full, until ctx is done.
	Send(ctx context.Context, from, to NodeID, data []byte) error
	// Recv takes the next message from the ring of local node node,
	// waiting until one arrives or ctx is done.
	Recv(ctx context.Context, node NodeID) (Message, error)
	// Counters returns the totals of this fabric since it was created.
	Counters() Counters
	// Close releases the fabric; pending and later calls fail with
	// ErrClosed.
	Close() error
}

// OwningSender is a Fabric that can deliver a message without the copy
// Send makes: SendOwned takes data over, and the caller must neither read
// nor write it after the call, whatever the call returns. A caller that
// built a buffer only to send it (exec's ports, which put a tag before
// each message) sends it this way and saves a copy of every message.
type OwningSender interface {
	SendOwned(ctx context.Context, from, to NodeID, data []byte) error
}

// Counters are operation and byte counts per kind.
type Counters struct {
	Reads       uint64 // one-sided reads (each request of a batch counts)
	ReadBytes   uint64
	RoundTrips  uint64 // network round trips: one per peer per ReadBatch, one per Read
	Sends       uint64
	SendBytes   uint64
	Recvs       uint64
	ModelNanos  uint64 // time charged by a network model (see NetModel)
	LocalReads  uint64 // reads a node made of its own regions through the fabric
	FailedCalls uint64 // calls that returned an error
}

// Add returns c + o.
func (c Counters) Add(o Counters) Counters {
	return Counters{
		Reads: c.Reads + o.Reads, ReadBytes: c.ReadBytes + o.ReadBytes, RoundTrips: c.RoundTrips + o.RoundTrips,
		Sends: c.Sends + o.Sends, SendBytes: c.SendBytes + o.SendBytes, Recvs: c.Recvs + o.Recvs,
		ModelNanos: c.ModelNanos + o.ModelNanos, LocalReads: c.LocalReads + o.LocalReads,
		FailedCalls: c.FailedCalls + o.FailedCalls,
	}
}

// Sub returns c - o (for the counts of an interval).
func (c Counters) Sub(o Counters) Counters {
	return Counters{
		Reads: c.Reads - o.Reads, ReadBytes: c.ReadBytes - o.ReadBytes, RoundTrips: c.RoundTrips - o.RoundTrips,
		Sends: c.Sends - o.Sends, SendBytes: c.SendBytes - o.SendBytes, Recvs: c.Recvs - o.Recvs,
		ModelNanos: c.ModelNanos - o.ModelNanos, LocalReads: c.LocalReads - o.LocalReads,
		FailedCalls: c.FailedCalls - o.FailedCalls,
	}
}

// Meter accumulates Counters atomically. A fabric keeps one for its totals;
// a query can attach its own with ContextWithMeter so that the fabric also
// charges the query's calls to it (for EXPLAIN ANALYZE).
type Meter struct {
	reads, readBytes, roundTrips, sends, sendBytes, recvs, modelNanos, localReads, failed atomic.Uint64
}

// Snapshot returns the current counts.
func (m *Meter) Snapshot() Counters {
	return Counters{
		Reads: m.reads.Load(), ReadBytes: m.readBytes.Load(), RoundTrips: m.roundTrips.Load(),
		Sends: m.sends.Load(), SendBytes: m.sendBytes.Load(), Recvs: m.recvs.Load(),
		ModelNanos: m.modelNanos.Load(), LocalReads: m.localReads.Load(), FailedCalls: m.failed.Load(),
	}
}

// Add adds c to the meter.
func (m *Meter) Add(c Counters) {
	add := func(a *atomic.Uint64, v uint64) {
		if v != 0 {
			a.Add(v)
		}
	}
	add(&m.reads, c.Reads)
	add(&m.readBytes, c.ReadBytes)
	add(&m.roundTrips, c.RoundTrips)
	add(&m.sends, c.Sends)
	add(&m.sendBytes, c.SendBytes)
	add(&m.recvs, c.Recvs)
	add(&m.modelNanos, c.ModelNanos)
	add(&m.localReads, c.LocalReads)
	add(&m.failed, c.FailedCalls)
}

type meterKey struct{}

// ContextWithMeter returns a context whose fabric calls are also counted
// in m.
func ContextWithMeter(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

// MeterFromContext returns the meter attached by ContextWithMeter, or nil.
func MeterFromContext(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}
