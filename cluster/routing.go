package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/wukongd/wukongd/rdmakv"
)

// Routing to replicas (DESIGN.md §15). A step on a shard this node does
// not host — a one-sided READ or a forked sub-query — goes to the first
// live replica in placement order (primary, then its successors), so a
// fork and its cancel meet the same node. A peer is live while the fabric
// is connected to it, its status word says it serves (it has replayed and
// caught up), and the prober read that word within peerStale. A call that
// fails because the peer is down (rdmakv.ErrNodeDown: the connection
// broke or is gone) is retried on the next replica, so a query that
// starts after a node died does not fail while a replica of each shard
// lives. Failure detection: a killed process's connections break at once
// (the kernel closes them); a hung one stops answering the prober, which
// reads every peer each probeEvery with a probeTimeout, and is routed
// around once its last answer is peerStale old.
const (
	probeEvery   = 100 * time.Millisecond
	probeTimeout = 250 * time.Millisecond
	peerStale    = 400 * time.Millisecond
)

// peerState is what a node knows of one peer's health.
type peerState struct {
	epoch    atomic.Uint64 // the fabric's connection count when last looked at
	probedAt atomic.Int64  // unix nanos of the last answered probe
	serving  atomic.Bool   // its status word said it serves
}

// linker is the fabric's cheap connection check (rdmakv.TCP.Link).
type linker interface {
	Link(node rdmakv.NodeID) (up bool, connects uint64)
}

// statusRegion is the region of a node's status word (after the shards,
// their deltas, the applied version and the log snapshot being served).
func (ss *ShardStore) statusRegion() rdmakv.RegionID { return rdmakv.RegionID(2*ss.pl.Shards + 2) }

// wordBytes views one aligned word as the bytes of a region (a peer's
// READ sees it whole).
func wordBytes(w []uint64) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 8) }

// setServing publishes that this node serves (it has caught up): peers
// route to it from their next probe on.
func (ss *ShardStore) setServing() { atomic.StoreUint64(&ss.status[0], 1) }

// link returns whether node is connected, noticing a new connection (a
// restarted process: what was cached of the old one is dropped).
func (ss *ShardStore) link(node rdmakv.NodeID) bool {
	l, ok := ss.f.(linker)
	if !ok {
		return true
	}
	up, ep := l.Link(node)
	p := &ss.peers[node]
	if old := p.epoch.Load(); old != ep && p.epoch.CompareAndSwap(old, ep) {
		ss.forget(node)
	}
	return up
}

// forget drops everything cached of node's process: its applied version,
// its delta tables, that it serves.
func (ss *ShardStore) forget(node rdmakv.NodeID) {
	p := &ss.peers[node]
	p.serving.Store(false)
	p.probedAt.Store(0)
	if ss.vs != nil {
		ss.vs.forget(node)
	}
	for s := 0; s < ss.pl.Shards; s++ {
		r := ss.rep(s, node)
		ss.rdelta[r].Store(nil)
		ss.noDelta[r].Store(0)
		ss.rtab[r].Store(nil)
	}
}

// suspect marks node as not serving until the prober hears from it again
// (a call to it just failed as down).
func (ss *ShardStore) suspect(node rdmakv.NodeID) {
	if node != ss.self {
		ss.peers[node].serving.Store(false)
	}
}

// live reports whether node can take steps now.
func (ss *ShardStore) live(node rdmakv.NodeID) bool {
	if node == ss.self {
		return true
	}
	if !ss.link(node) {
		return false
	}
	p := &ss.peers[node]
	return p.serving.Load() && time.Since(time.Unix(0, p.probedAt.Load())) < peerStale
}

// pick returns the node to run a step on shard on: this one if it hosts
// the shard, else the first replica not tried yet that is live; failing
// that one that served when last probed and is connected (its probe may
// just be late on a loaded machine), then one connected (it may be
// catching up: the step waits for the version), then any (the fabric
// waits briefly for it to connect).
func (ss *ShardStore) pick(shard int, tried []bool) (rdmakv.NodeID, error) {
	if ss.queues[shard] != nil {
		return ss.self, nil
	}
	skip := func(n rdmakv.NodeID) bool { return tried != nil && tried[n] }
	for pass := 0; pass < 4; pass++ {
		for k := 0; k < ss.pl.Replicas; k++ {
			n := ss.pl.Replica(shard, k)
			if skip(n) {
				continue
			}
			switch {
			case pass == 0 && ss.live(n),
				pass == 1 && ss.peers[n].serving.Load() && ss.link(n),
				pass == 2 && ss.link(n),
				pass == 3:
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("no live replica of shard %d (nodes %v): %w", shard, ss.replicas(shard), rdmakv.ErrNodeDown)
}

func (ss *ShardStore) replicas(shard int) []rdmakv.NodeID {
	r := make([]rdmakv.NodeID, ss.pl.Replicas)
	for k := range r {
		r[k] = ss.pl.Replica(shard, k)
	}
	return r
}

// failover reports whether a failed call may be tried on another replica:
// the peer was down, or had not applied the query's version within
// behindWait, and the query's context is still good.
func (ss *ShardStore) failover(ctx context.Context, err error) bool {
	return ctx.Err() == nil && ss.pl.Replicas > 1 && (errors.Is(err, rdmakv.ErrNodeDown) || errors.Is(err, errBehind))
}

// errBehind: a replica had not applied the query's version within
// behindWait (another replica may have).
var errBehind = errors.New("the replica is behind the query's version")

// behindWait is how long a lookup waits for a replica to apply the
// query's version before it tries another one (round after round until
// one has it or the query's deadline ends the lookup).
const behindWait = 200 * time.Millisecond

// Serving reports whether the fabric node serves now, as this node
// knows it (itself: always).
func (ss *ShardStore) Serving(node rdmakv.NodeID) bool { return ss.live(node) }

// probe follows every peer's applied version and status word: one
// goroutine per peer reads both each probeEvery (one batch of two READs),
// so a hung peer delays no other's probes; until Close.
func (ss *ShardStore) probe() {
	defer ss.wg.Done()
	var wg sync.WaitGroup
	for i := 0; i < ss.pl.Nodes; i++ {
		if node := rdmakv.NodeID(i); node != ss.self {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ss.probePeer(node)
			}()
		}
	}
	wg.Wait()
}

func (ss *ShardStore) probePeer(node rdmakv.NodeID) {
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	var st [8]byte
	var ver [16]byte // the applied version and the floor
	reqs := []rdmakv.ReadRequest{{Node: node, Region: ss.statusRegion(), Dst: st[:]},
		{Node: node, Region: rdmakv.RegionID(2 * ss.pl.Shards), Dst: ver[:]}}
	if ss.vs == nil {
		reqs = reqs[:1] // no applied-version regions
	}
	for {
		select {
		case <-t.C:
		case <-ss.ctx.Done():
			return
		}
		if !ss.link(node) {
			continue
		}
		ctx, cancel := context.WithTimeout(ss.ctx, probeTimeout)
		err := ss.f.ReadBatch(ctx, ss.self, reqs)
		cancel()
		if err != nil {
			continue // stale after peerStale
		}
		if ss.vs != nil {
			ss.vs.observeWords(node, ver[:])
		}
		p := &ss.peers[node]
		p.serving.Store(binary.LittleEndian.Uint64(st[:]) != 0)
		p.probedAt.Store(time.Now().UnixNano())
	}
}
