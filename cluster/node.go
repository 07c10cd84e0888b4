package cluster

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wukongd/wukongd/cluster/raftlog"
	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/service"
	"github.com/wukongd/wukongd/web"
)

// Config configures a node.
type Config struct {
	// Data is the snapshot directory (every node opens the same snapshot:
	// the dictionary and statistics, and its own shards).
	Data string
	// Node is this node's index in Peers.
	Node int
	// Peers is the fabric address of every node; this node listens on
	// Peers[Node].
	Peers []string
	// Workers, Mode and ForkThreshold go to the engine (see
	// service.Options).
	Workers       int
	Mode          planner.Mode
	ForkThreshold float64
	// MaxQueryMemory, MaxMemory and MaxValueBytes bound a query's memory,
	// the memory of every query the node runs (its own and its peers'
	// sub-queries), and the largest string an expression may make (see
	// service.Options; serve --max-query-memory, --max-memory,
	// --max-value-bytes).
	MaxQueryMemory, MaxMemory int64
	MaxValueBytes             int
	// Fabric tunes the tcp fabric (timeouts, backoff, Listener, Dial,
	// Logf); Self, Peers and ClusterID are set by Open.
	Fabric rdmakv.TCPOptions
	// SkipChecksums skips the CRC-32C check of the snapshot's files.
	SkipChecksums bool
	// RaftDir is the directory of this node's replicated log (default
	// DATA/raft/node-I): the cluster's write-ahead log.
	RaftDir string
	// RaftTick is the Raft tick (default 100 ms: elections after 1 s
	// without a heartbeat).
	RaftTick time.Duration
	// WriteTimeout bounds how long a write waits to be committed and
	// applied here (default 10 s); past it the answer is 503 with the
	// outcome unknown.
	WriteTimeout time.Duration
	// SnapshotEntries: after this many applied entries a node writes a
	// snapshot of the replicated log (its net effect on the data
	// directory's snapshot) and truncates its log before it (default
	// 10,000; < 0: never). SnapshotKeep entries before it stay in memory
	// for a follower a little behind (default 1,024); one further behind
	// installs the snapshot (snapshot.go).
	SnapshotEntries int
	SnapshotKeep    int
	// Replicas is the number of nodes hosting each shard (default 1; at
	// most the number of nodes): see Placement.
	Replicas int
}

// Node is one process of a cluster: the tcp fabric, the local shards,
// the engine and the service over them.
type Node struct {
	cfg     Config
	trackMu sync.Mutex
	tracks  map[*queryTrack]struct{} // queries coordinated here, in flight
	fabric  *rdmakv.TCP
	store   *graphstore.Store
	shards  *ShardStore
	svc     *service.Service
	backend *backend

	// The replicated log (replicate.go): raft, the versions each node
	// applied, the newest applied dataset (tip; ds0 is the snapshot's,
	// owned by the service) and the queues of Raft messages per peer.
	raft *raftlog.Node
	prop *proposer // gathers the writes made here into entries (propose.go)
	// requests counts the write requests applied since the cluster's
	// snapshot (a snapshot of the log carries it): every node has the same
	// count at the same version, and a request applied twice counts twice.
	requests atomic.Uint64
	raftp    atomic.Pointer[raftlog.Node] // raft, for the goroutines started before it
	vs       *versions
	tipMu    sync.Mutex
	tip      *graphstore.Dataset
	ds0      *graphstore.Dataset
	raftOut  []chan []byte
	postRaft bool // the fabric posts (sendLoop does not wait for acks)
	raftWG   sync.WaitGroup
	stopOut  chan struct{}
	snap     *snapshots // the log's snapshots (snapshot.go)

	// Catching up after a start (catchup.go): the version a peer had
	// applied when this node looked (what it waits for), and whether it
	// got there.
	engMu    sync.Mutex
	engines  []*exec.Engine // made by newEngine (plans to forget)
	pl       Placement
	shardsp  atomic.Pointer[ShardStore] // shards, for the fabric's goroutines
	target   atomic.Uint64
	caughtUp atomic.Bool
}

// ClusterID returns the id the nodes of a cluster over the snapshot in dir
// agree on: a hash of its manifest (which holds every file's CRC-32C).
func ClusterID(dir string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return 0, fmt.Errorf("cannot read the snapshot manifest: %w", err)
	}
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64(), nil
}

// Open starts node cfg.Node: it opens its shards of the snapshot, starts
// the fabric (which connects to the peers in the background; Ready
// reports when all are connected) and the engine.
func Open(cfg Config) (n *Node, err error) {
	if len(cfg.Peers) == 0 || cfg.Node < 0 || cfg.Node >= len(cfg.Peers) {
		return nil, fmt.Errorf("node %d is not in a peer list of %d addresses", cfg.Node, len(cfg.Peers))
	}
	m, err := graphstore.ReadManifest(cfg.Data)
	if err != nil {
		return nil, err
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	pl, err := NewPlacement(m.Shards, len(cfg.Peers), cfg.Replicas)
	if err != nil {
		return nil, err
	}
	id, err := ClusterID(cfg.Data)
	if err != nil {
		return nil, err
	}
	fo := cfg.Fabric
	fo.Self, fo.Peers, fo.ClusterID = rdmakv.NodeID(cfg.Node), cfg.Peers, id
	if fo.Seed == 0 {
		fo.Seed = int64(cfg.Node) + 1
	}
	nd := &Node{cfg: cfg, pl: pl, tracks: map[*queryTrack]struct{}{}}
	n = nd
	userLost := fo.OnPeerLost
	fo.OnPeerLost = func(node rdmakv.NodeID, err error) {
		n.peerLost(node, err)
		if userLost != nil {
			userLost(node, err)
		}
	}
	defer func() {
		if err != nil {
			nd.Close()
		}
	}()
	self := rdmakv.NodeID(cfg.Node)
	local := pl.Hosted(self)
	// The fabric answers peers only once the shards are registered.
	fo.StartPaused = true
	if n.fabric, err = rdmakv.NewTCP(fo); err != nil {
		return nil, err
	}
	if n.store, err = graphstore.OpenSnapshot(cfg.Data, graphstore.OpenOptions{Shards: local, Fabric: n.fabric,
		SkipChecksums: cfg.SkipChecksums, Place: pl.placeOn(self)}); err != nil {
		return nil, err
	}
	n.ds0 = graphstore.NewDataset(n.store)
	n.tip = n.ds0
	if n.vs, err = newVersions(n.fabric, rdmakv.NodeID(cfg.Node), rdmakv.RegionID(2*m.Shards), n.ds0.Version(), n.ds0.Stamp()); err != nil {
		n.ds0.Close()
		n.store = nil
		return nil, err
	}
	n.fabric.Resume()
	if n.shards, err = NewShardStore(n.store, self, n.vs, pl); err != nil {
		n.ds0.Close()
		n.store = nil
		return nil, err
	}
	n.shardsp.Store(n.shards)
	n.svc, err = service.NewDataset(n.ds0, service.Options{Workers: cfg.Workers, Mode: cfg.Mode,
		ForkThreshold: cfg.ForkThreshold, Shards: m.Shards, NewEngine: n.newEngine,
		MaxQueryMemory: cfg.MaxQueryMemory, MaxMemory: cfg.MaxMemory, MaxValueBytes: cfg.MaxValueBytes})
	if err != nil {
		n.store = nil // closed by NewDataset
		return nil, err
	}
	if err := n.openRaft(); err != nil {
		return nil, err
	}
	n.raftWG.Add(1)
	go n.catchUp()
	n.backend = &backend{n: n, svc: n.svc}
	return n, nil
}

func (n *Node) newEngine(st *graphstore.Store, cfg exec.Config) (*exec.Engine, error) {
	if st != n.store {
		return nil, fmt.Errorf("%w: a cluster serves its snapshot only", web.ErrUnsupported)
	}
	cfg.LocalShards = n.shards.LocalShards()
	e := exec.New(n.shards, n.shards, cfg)
	n.engMu.Lock()
	n.engines = append(n.engines, e)
	n.engMu.Unlock()
	return e, nil
}

// termsAdded drops the engines' cached plans: the dictionary gained terms,
// and a plan made while a constant was unknown has no answers (a cluster
// node keeps its engine across writes, unlike one process's generations).
func (n *Node) termsAdded() {
	n.engMu.Lock()
	defer n.engMu.Unlock()
	for _, e := range n.engines {
		e.ForgetPlans()
	}
}

// track registers a query coordinated here and returns its context.
func (n *Node) track(ctx context.Context) (context.Context, *queryTrack) {
	ctx, cancel := context.WithCancelCause(ctx)
	qt := &queryTrack{cancel: cancel, sent: make([]atomic.Bool, len(n.cfg.Peers))}
	n.trackMu.Lock()
	n.tracks[qt] = struct{}{}
	n.trackMu.Unlock()
	return withTrack(ctx, qt), qt
}

// untrack ends the following of a query (its exploration is over; its
// context stays valid for reading the rows).
func (n *Node) untrack(qt *queryTrack) {
	n.trackMu.Lock()
	delete(n.tracks, qt)
	n.trackMu.Unlock()
}

// peerLost cancels the queries that sent sub-queries to a lost node, with
// a cause that says so.
func (n *Node) peerLost(node rdmakv.NodeID, err error) {
	if ss := n.shardsp.Load(); ss != nil {
		ss.forget(node) // routed around at once; a restarted process is new
	}
	cause := fmt.Errorf("node %d (%s) was lost while the query waited on it: %w", node, n.cfg.Peers[node], err)
	n.trackMu.Lock()
	defer n.trackMu.Unlock()
	for qt := range n.tracks {
		if qt.sent[node].Load() {
			qt.cancel(cause)
		}
	}
}

// Fabric returns the node's fabric.
func (n *Node) Fabric() *rdmakv.TCP { return n.fabric }

// Backend returns the web.Backend of the node.
func (n *Node) Backend() web.Backend { return n.backend }

// Info describes what the node serves.
func (n *Node) Info() service.Info { return n.svc.Info() }

// LocalShards returns the node's shards.
func (n *Node) LocalShards() []int { return n.shards.LocalShards() }

// WaitConnected waits until the node is connected to every peer.
func (n *Node) WaitConnected(ctx context.Context) error { return n.fabric.WaitConnected(ctx) }

// Close stops the node: the fabric first (its goroutines read the mapped
// shards), then the service with the engine and the store, then the
// router.
func (n *Node) Close() error {
	if n.raft != nil {
		n.raft.Close() // no more applies
	}
	if n.prop != nil {
		n.prop.close()
	}
	if n.fabric != nil {
		n.fabric.Close()
	}
	n.closeRaft()
	if n.svc != nil {
		n.svc.Close()
	} else if n.store != nil {
		n.store.Close()
	}
	if n.shards != nil {
		n.shards.Close()
	}
	return nil
}

// Registry returns a Prometheus registry with the Go and process
// collectors and the per-peer fabric counters of this node, for
// web.Options.Registry.
func (n *Node) Registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}),
		&peerCollector{n: n})
	return reg
}

// peerCollector exports the fabric's per-peer counters.
type peerCollector struct{ n *Node }

var (
	peerLabels   = []string{"peer", "addr"}
	descPeerUp   = prometheus.NewDesc("wukongd_fabric_peer_up", "1 while the fabric is connected to the peer.", peerLabels, nil)
	descPeerOps  = prometheus.NewDesc("wukongd_fabric_peer_operations_total", "Fabric operations this node made to the peer, by kind (read, round_trip, send, failed).", append(peerLabels, "kind"), nil)
	descPeerByte = prometheus.NewDesc("wukongd_fabric_peer_bytes_total", "Bytes this node read from or sent to the peer.", append(peerLabels, "kind"), nil)
	descPeerRTT  = prometheus.NewDesc("wukongd_fabric_peer_round_trip_seconds_total", "Wall time of the round trips to the peer.", peerLabels, nil)
	descPeerConn = prometheus.NewDesc("wukongd_fabric_peer_connections_total", "Connection events with the peer (connect, dial_failure, disconnect).", append(peerLabels, "event"), nil)
	descServed   = prometheus.NewDesc("wukongd_fabric_peer_served_total", "What this node's fabric goroutines served the peer (read, byte, message).", append(peerLabels, "kind"), nil)
	descVersion  = prometheus.NewDesc("wukongd_cluster_version", "The newest version (count of changes since the snapshot) applied on this node.", nil, nil)
	descLeader   = prometheus.NewDesc("wukongd_raft_leader", "The node index of the replicated log's leader this node knows (-1: none).", nil, nil)
	descRaft     = prometheus.NewDesc("wukongd_raft_index", "Entries of the replicated log on this node, by kind (commit, applied).", []string{"kind"}, nil)
	descTerm     = prometheus.NewDesc("wukongd_raft_term", "The Raft term this node is in.", nil, nil)
	descRequests = prometheus.NewDesc("wukongd_cluster_requests_applied", "Write requests applied on this node since the cluster's snapshot (an entry of the replicated log carries many).", nil, nil)
	descSnaps    = prometheus.NewDesc("wukongd_cluster_snapshots_total", "Snapshots of the replicated log since this process started, by kind (taken, fetched from a peer, rejected transfers, installed).", []string{"kind"}, nil)
)

func (c *peerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPeerUp, descPeerOps, descPeerByte, descPeerRTT, descPeerConn, descServed, descVersion, descLeader, descRaft, descTerm, descRequests, descSnaps} {
		ch <- d
	}
}

func (c *peerCollector) Collect(ch chan<- prometheus.Metric) {
	if c.n.fabric == nil {
		return
	}
	if c.n.raft != nil {
		st := c.n.raft.Status()
		ch <- prometheus.MustNewConstMetric(descVersion, prometheus.GaugeValue, float64(c.n.vs.current()))
		ch <- prometheus.MustNewConstMetric(descLeader, prometheus.GaugeValue, float64(int64(st.Leader)-1))
		ch <- prometheus.MustNewConstMetric(descRaft, prometheus.GaugeValue, float64(st.Commit), "commit")
		ch <- prometheus.MustNewConstMetric(descRaft, prometheus.GaugeValue, float64(st.Applied), "applied")
		ch <- prometheus.MustNewConstMetric(descTerm, prometheus.GaugeValue, float64(st.Term))
		ch <- prometheus.MustNewConstMetric(descRequests, prometheus.GaugeValue, float64(c.n.requests.Load()))
		sc := c.n.Snapshots()
		for kind, v := range map[string]uint64{"taken": sc.Taken, "fetched": sc.Fetched, "rejected": sc.Rejected, "installed": sc.Installed} {
			ch <- prometheus.MustNewConstMetric(descSnaps, prometheus.CounterValue, float64(v), kind)
		}
	}
	for _, p := range c.n.fabric.Peers() {
		l := []string{strconv.Itoa(int(p.Node)), p.Addr}
		up := 0.0
		if p.Connected {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(descPeerUp, prometheus.GaugeValue, up, l...)
		cnt := func(d *prometheus.Desc, v uint64, kind string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append(l, kind)...)
		}
		cnt(descPeerOps, p.Counters.Reads, "read")
		cnt(descPeerOps, p.Counters.RoundTrips, "round_trip")
		cnt(descPeerOps, p.Counters.Sends, "send")
		cnt(descPeerOps, p.Counters.FailedCalls, "failed")
		cnt(descPeerByte, p.Counters.ReadBytes, "read")
		cnt(descPeerByte, p.Counters.SendBytes, "send")
		cnt(descPeerConn, p.Connects, "connect")
		cnt(descPeerConn, p.DialFailures, "dial_failure")
		cnt(descPeerConn, p.Disconnects, "disconnect")
		cnt(descServed, p.ServedReads, "read")
		cnt(descServed, p.ServedBytes, "byte")
		cnt(descServed, p.ServedMessages, "message")
		ch <- prometheus.MustNewConstMetric(descPeerRTT, prometheus.CounterValue, float64(p.RoundTripNanos)/1e9, l...)
	}
}
