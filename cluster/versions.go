package cluster

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/web"
)

// Versions across the cluster (DESIGN.md §14). Every node applies the
// replicated log's entries in order, so version v (the v-th change since
// the snapshot) is the same data on every node. A query reads the version
// its coordinator has applied when it starts; the version travels in its
// context, in its fork-join messages (the envelope), and every lookup
// reads the delta at that version's stamp — on a shard of another node
// only once that node has applied it (it publishes its applied version in
// a registered region of 8 bytes, read one-sidedly).

// versionKey is the context key of the version a query reads.
type versionKey struct{}

// withVersion returns ctx reading version v.
func withVersion(ctx context.Context, v uint64) context.Context {
	return context.WithValue(ctx, versionKey{}, v)
}

// versionOf returns the version ctx reads (ok false: none set).
func versionOf(ctx context.Context) (uint64, bool) {
	v, ok := ctx.Value(versionKey{}).(uint64)
	return v, ok
}

// versions is what a node knows of the versions: its own applied one and
// the highest it saw each peer publish.
type versions struct {
	f     rdmakv.Fabric
	self  rdmakv.NodeID
	reg   rdmakv.RegionID // the applied-version region on every node
	word  []uint64        // this node's published applied version (word[0]) and floor (word[1])
	base  uint64          // the snapshot's version
	stamp uint64          // the snapshot's delta stamp (version v reads stamp v-base+stamp)

	mu      sync.Mutex
	applied atomic.Uint64
	floor   atomic.Uint64 // versions below are not on this node (it installed a snapshot past them)
	changed chan struct{} // closed and replaced at each apply
	// peers holds what was last seen of each peer's published words: its
	// applied version and its floor, as one pair (nil: nothing seen since
	// it was last forgotten). One pointer, so a reader never pairs a
	// version it saw with a floor from before it (a prober that saw a
	// restarted peer's version but not its floor let a version the peer
	// had compacted past read from it).
	peers []atomic.Pointer[peerSeen]
}

// peerSeen is what was seen of a peer: the highest applied version and
// the highest floor (once a peer's floor passed v, v is read from it no
// more).
type peerSeen struct{ applied, floor uint64 }

func newVersions(f rdmakv.Fabric, self rdmakv.NodeID, reg rdmakv.RegionID, base, stamp uint64) (*versions, error) {
	vs := &versions{f: f, self: self, reg: reg, word: make([]uint64, 2), base: base, stamp: stamp,
		changed: make(chan struct{}), peers: make([]atomic.Pointer[peerSeen], f.Nodes())}
	vs.applied.Store(base)
	vs.word[0] = base
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&vs.word[0])), 16) // aligned words: a reader sees each whole
	if err := f.Register(self, reg, rdmakv.NewRegion(buf)); err != nil {
		return nil, fmt.Errorf("cannot register the applied-version region: %w", err)
	}
	return vs, nil
}

// current returns the newest version applied on this node.
func (vs *versions) current() uint64 { return vs.applied.Load() }

// stampOf returns the delta stamp of version v.
func (vs *versions) stampOf(v uint64) uint64 { return v - vs.base + vs.stamp }

// set publishes v as applied here.
func (vs *versions) set(v uint64) {
	vs.mu.Lock()
	vs.applied.Store(v)
	atomic.StoreUint64(&vs.word[0], v)
	close(vs.changed)
	vs.changed = make(chan struct{})
	vs.mu.Unlock()
}

// setFloor publishes that versions below f are not on this node: it
// installed a snapshot of the log at version f, jumping over them.
func (vs *versions) setFloor(f uint64) {
	vs.floor.Store(f)
	atomic.StoreUint64(&vs.word[1], f)
}

// compactedPast is the error of a query reading version v on a node whose
// floor is past it.
func compactedPast(node rdmakv.NodeID, v, floor uint64) error {
	return fmt.Errorf("%w: node %d has compacted past version %d the query reads (it installed a snapshot of the replicated log at version %d); run the query again", web.ErrNotReady, node, v, floor)
}

// observe records that node published applied version got and floor
// (the highest seen of each is kept). Both come from one read of the
// node's applied-version region.
func (vs *versions) observe(node rdmakv.NodeID, got, floor uint64) {
	for {
		old := vs.peers[node].Load()
		next := peerSeen{applied: got, floor: floor}
		if old != nil {
			next = peerSeen{applied: max(old.applied, got), floor: max(old.floor, floor)}
			if next == *old {
				return
			}
		}
		if vs.peers[node].CompareAndSwap(old, &next) {
			return
		}
	}
}

// observeWords records the applied-version region's 16 bytes read from
// node: its applied version, then its floor.
func (vs *versions) observeWords(node rdmakv.NodeID, b []byte) {
	vs.observe(node, binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]))
}

// forget drops what was seen of node's version: it is a new process (a
// restarted node replays from the snapshot), whose applied version starts
// again lower.
func (vs *versions) forget(node rdmakv.NodeID) {
	vs.peers[node].Store(nil)
}

// seen returns the highest version node was seen to have applied since
// it was last forgotten.
func (vs *versions) seen(node rdmakv.NodeID) uint64 {
	if node == vs.self {
		return vs.current()
	}
	if s := vs.peers[node].Load(); s != nil {
		return s.applied
	}
	return 0
}

// waitLocal waits until this node has applied version v.
func (vs *versions) waitLocal(ctx context.Context, v uint64) error {
	for {
		vs.mu.Lock()
		c := vs.changed
		vs.mu.Unlock()
		if f := vs.floor.Load(); v < f {
			return compactedPast(vs.self, v, f)
		}
		if cur := vs.applied.Load(); cur >= v {
			if f := vs.floor.Load(); v < f { // a snapshot installed meanwhile
				return compactedPast(vs.self, v, f)
			}
			return nil
		}
		select {
		case <-c:
		case <-ctx.Done():
			return fmt.Errorf("node %d has applied version %d, not yet version %d the query reads: %w", vs.self, vs.applied.Load(), v, context.Cause(ctx))
		}
	}
}

// waitNode waits until node has applied version v (this node: waitLocal;
// a peer: its published version, read through the fabric until it is
// there).
func (vs *versions) waitNode(ctx context.Context, node rdmakv.NodeID, v uint64) error {
	if node == vs.self {
		return vs.waitLocal(ctx, v)
	}
	if s := vs.peers[node].Load(); s != nil && s.applied >= v && s.floor <= v {
		return nil
	}
	var b [16]byte
	pause := 200 * time.Microsecond
	for {
		if err := vs.f.Read(ctx, vs.self, rdmakv.ReadRequest{Node: node, Region: vs.reg, Dst: b[:]}); err != nil {
			return fmt.Errorf("cannot read the version node %d applied: %w", node, err)
		}
		got, floor := binary.LittleEndian.Uint64(b[:]), binary.LittleEndian.Uint64(b[8:])
		vs.observe(node, got, floor)
		if v < floor {
			return compactedPast(node, v, floor)
		}
		if got >= v {
			return nil
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return fmt.Errorf("node %d has applied version %d, not yet version %d the query reads: %w", node, got, v, context.Cause(ctx))
		}
		pause = min(2*pause, 10*time.Millisecond)
	}
}
