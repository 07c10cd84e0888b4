package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/service"
)

// SimConfig configures a SimCluster.
type SimConfig struct {
	// Data is the snapshot every node opens (at least Nodes shards).
	Data string
	// Nodes is the number of nodes; Replicas the copies of each shard.
	Nodes, Replicas int
	// RaftDir holds node I's replicated log under RaftDir/I (a tmpfs
	// leaves the disk's sync out of what the process spends; the
	// simulation models it).
	RaftDir string
	// Base holds the engine settings, limits and log settings of every
	// node (Data, Node, Peers, RaftDir and Replicas are set here).
	Base Config
	// Model is the network model of the loopback fabric (charged to its
	// counters, never slept).
	Model rdmakv.NetModel
}

// SimCluster is a whole cluster in one process, for `wukongd cluster-sim
// --writes` and the simulation tests: Nodes cluster nodes, each with its
// shards, engine, service and replicated log (raftlog over
// go.etcd.io/raft, applying with graphstore.Dataset.ApplyHosted: the
// write path of a real node), over one rdmakv.Loopback fabric with a
// network model instead of the tcp fabric. A one-sided READ is a copy out
// of the peer's registered region and a message (fork-join or Raft) a
// copy into its ring, so n nodes cost O(n) goroutines and buffers, not
// the O(n²) connections of a tcp mesh (64 nodes of those do not fit in
// one process of 2.5 GB).
//
// What differs from Open: no tcp fabric (no handshakes, heartbeats or
// reconnection: the loopback network never fails unless SetDown), and a
// node starts serving at once (every node opens the same snapshot with an
// empty log, so there is nothing to catch up).
//
// Every goroutine a node starts carries the pprof label "node" = its
// index (goroutines inherit labels), so a CPU profile of the process says
// what each simulated node spent; callers label the goroutines that call
// a node (NodeLabels) the same way.
type SimCluster struct {
	Fabric *rdmakv.Loopback
	Nodes  []*Node
	views  []*simFabric
}

// SimTraffic is what one simulated node sent: Raft messages, and the
// fork-join messages and one-sided READs of queries.
type SimTraffic struct {
	RaftMessages, RaftBytes uint64
	QueryMessages, QueryMsgBytes,
	Reads, ReadBytes, RoundTrips uint64
}

// NodeLabels returns the pprof labels of node i's goroutines.
func NodeLabels(i int) pprof.LabelSet { return pprof.Labels("node", strconv.Itoa(i)) }

// OpenSim opens the nodes of cfg and waits until every node knows a
// leader.
func OpenSim(ctx context.Context, cfg SimConfig) (_ *SimCluster, err error) {
	if cfg.Nodes < 1 {
		return nil, errors.New("a simulated cluster needs at least one node")
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	m, err := graphstore.ReadManifest(cfg.Data)
	if err != nil {
		return nil, err
	}
	pl, err := NewPlacement(m.Shards, cfg.Nodes, cfg.Replicas)
	if err != nil {
		return nil, err
	}
	peers := make([]string, cfg.Nodes)
	for i := range peers {
		peers[i] = fmt.Sprintf("sim-node-%d", i)
	}
	c := &SimCluster{Fabric: rdmakv.NewLoopback(cfg.Nodes, rdmakv.LoopbackOptions{RingSize: 4096, Model: &cfg.Model})}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	for i := 0; i < cfg.Nodes; i++ {
		nc := cfg.Base
		nc.Data, nc.Node, nc.Peers, nc.Replicas, nc.SkipChecksums = cfg.Data, i, peers, cfg.Replicas, true
		nc.RaftDir = filepath.Join(cfg.RaftDir, strconv.Itoa(i))
		view := &simFabric{Loopback: c.Fabric, self: rdmakv.NodeID(i)}
		c.views = append(c.views, view)
		var nd *Node
		pprof.Do(context.Background(), NodeLabels(i), func(context.Context) {
			nd, err = openLoopbackNode(nc, pl, m.Shards, view)
		})
		if err != nil {
			return nil, fmt.Errorf("simulated node %d of %d: %w", i, cfg.Nodes, err)
		}
		c.Nodes = append(c.Nodes, nd)
	}
	for _, nd := range c.Nodes {
		for nd.RaftStatus().Leader == 0 || nd.writable() != nil {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("simulated node %d knows no leader: %+v: %w", nd.cfg.Node, nd.RaftStatus(), ctx.Err())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return c, nil
}

// openLoopbackNode is Open over a view of the loopback fabric (see
// SimCluster).
func openLoopbackNode(cfg Config, pl Placement, shards int, f *simFabric) (n *Node, err error) {
	n = &Node{cfg: cfg, pl: pl, tracks: map[*queryTrack]struct{}{}}
	defer func() {
		if err != nil {
			n.Close()
		}
	}()
	self := f.self
	if n.store, err = graphstore.OpenSnapshot(cfg.Data, graphstore.OpenOptions{Shards: pl.Hosted(self), Fabric: f,
		SkipChecksums: cfg.SkipChecksums, Place: pl.placeOn(self)}); err != nil {
		return nil, err
	}
	n.ds0 = graphstore.NewDataset(n.store)
	n.tip = n.ds0
	if n.vs, err = newVersions(f, self, rdmakv.RegionID(2*shards), n.ds0.Version(), n.ds0.Stamp()); err != nil {
		return nil, err
	}
	if n.shards, err = NewShardStore(n.store, self, n.vs, pl); err != nil {
		return nil, err
	}
	n.shardsp.Store(n.shards)
	n.svc, err = service.NewDataset(n.ds0, service.Options{Workers: cfg.Workers, Mode: cfg.Mode,
		ForkThreshold: cfg.ForkThreshold, Shards: shards, NewEngine: n.newEngine,
		MaxQueryMemory: cfg.MaxQueryMemory, MaxMemory: cfg.MaxMemory, MaxValueBytes: cfg.MaxValueBytes})
	if err != nil {
		n.store = nil // closed by NewDataset
		return nil, err
	}
	if err := n.openRaft(); err != nil {
		return nil, err
	}
	n.caughtUp.Store(true)
	n.shards.setServing()
	n.backend = &backend{n: n, svc: n.svc}
	return n, nil
}

// Leader returns the index of the leader node 0 knows (-1: none).
func (c *SimCluster) Leader() int { return int(c.Nodes[0].RaftStatus().Leader) - 1 }

// Traffic returns what node i sent so far.
func (c *SimCluster) Traffic(i int) SimTraffic {
	v := c.views[i]
	return SimTraffic{RaftMessages: v.raftMsgs.Load(), RaftBytes: v.raftBytes.Load(),
		QueryMessages: v.msgs.Load(), QueryMsgBytes: v.msgBytes.Load(),
		Reads: v.reads.Load(), ReadBytes: v.readBytes.Load(), RoundTrips: v.roundTrips.Load()}
}

// Close closes every node and the fabric.
func (c *SimCluster) Close() {
	for _, nd := range c.Nodes {
		nd.Close()
	}
	c.Fabric.Close()
}

// simFabric is one node's view of the shared loopback fabric: only its
// own node is local, and what it sends is counted.
type simFabric struct {
	*rdmakv.Loopback
	self rdmakv.NodeID

	raftMsgs, raftBytes, msgs, msgBytes atomic.Uint64
	reads, readBytes, roundTrips        atomic.Uint64
}

var _ rdmakv.Fabric = (*simFabric)(nil)

func (f *simFabric) IsLocal(node rdmakv.NodeID) bool { return node == f.self }

// Close is the SimCluster's (the nodes share the fabric).
func (f *simFabric) Close() error { return nil }

func (f *simFabric) Send(ctx context.Context, from, to rdmakv.NodeID, data []byte) error {
	if from != f.self {
		return fmt.Errorf("node %d sends as node %d: %w", f.self, from, rdmakv.ErrNotLocal)
	}
	err := f.Loopback.Send(ctx, from, to, data)
	if err == nil && to != from {
		if len(data) >= 4 && binary.LittleEndian.Uint32(data) == raftShard {
			f.raftMsgs.Add(1)
			f.raftBytes.Add(uint64(len(data)))
		} else {
			f.msgs.Add(1)
			f.msgBytes.Add(uint64(len(data)))
		}
	}
	return err
}

func (f *simFabric) Recv(ctx context.Context, node rdmakv.NodeID) (rdmakv.Message, error) {
	if node != f.self {
		return rdmakv.Message{}, fmt.Errorf("node %d receives for node %d: %w", f.self, node, rdmakv.ErrNotLocal)
	}
	return f.Loopback.Recv(ctx, node)
}

func (f *simFabric) Read(ctx context.Context, from rdmakv.NodeID, req rdmakv.ReadRequest) error {
	err := f.Loopback.Read(ctx, from, req)
	if err == nil && req.Node != from {
		f.reads.Add(1)
		f.readBytes.Add(uint64(len(req.Dst)))
		f.roundTrips.Add(1)
	}
	return err
}

func (f *simFabric) ReadBatch(ctx context.Context, from rdmakv.NodeID, reqs []rdmakv.ReadRequest) error {
	err := f.Loopback.ReadBatch(ctx, from, reqs)
	if err != nil {
		return err
	}
	var buf [64]rdmakv.NodeID
	peers := buf[:0]
	for i := range reqs {
		r := &reqs[i]
		if r.Node == from {
			continue
		}
		f.reads.Add(1)
		f.readBytes.Add(uint64(len(r.Dst)))
		if !slices.Contains(peers, r.Node) {
			peers = append(peers, r.Node)
		}
	}
	f.roundTrips.Add(uint64(len(peers)))
	return nil
}
