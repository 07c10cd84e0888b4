package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

// ShardStore is the engine's view of a store of which this process holds
// some shards (those its fabric node hosts): it implements exec.Store and
// exec.Transport. The Placement says which nodes host each shard; a shard
// this node does not host is read from, and forked to, a live replica
// (routing.go).
type ShardStore struct {
	s      *graphstore.Store
	f      rdmakv.Fabric
	self   rdmakv.NodeID
	pl     Placement
	stats0 *planner.Stats                // the snapshot's
	stats  atomic.Pointer[planner.Stats] // stats0 with the classes the log added
	local  []int

	queues  []chan envelope // per shard; nil where not local
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	dropped atomic.Uint64

	// vs says which version each node has applied; dict is the newest
	// applied version's dictionary (it decodes every ID of every older
	// version too). By replica (shard·nodes + node, rep): rtab and rdelta
	// cache the base and delta tables opened through the fabric, and
	// noDelta-1 is a version at which that node had applied and had no
	// delta on the shard yet.
	vs      *versions
	dict    atomic.Pointer[graphstore.Dict]
	rtab    []atomic.Pointer[rdmakv.RemoteTable]
	rdelta  []atomic.Pointer[rdmakv.RemoteDelta]
	noDelta []atomic.Uint64
	// peers is what this node knows of each peer's health (routing.go);
	// status is this node's published status word (region statusRegion).
	peers  []peerState
	status []uint64
	// raft receives the Raft messages of the fabric (nil: none expected).
	raft atomic.Pointer[func(from rdmakv.NodeID, msg []byte)]
}

var (
	_ exec.Store            = (*ShardStore)(nil)
	_ exec.ContextTransport = (*ShardStore)(nil)
)

type envelope struct {
	from    int
	version uint64
	data    []byte
}

// Header of a message between shards on the fabric: u32 destination
// shard, u32 source shard, u64 the version the query reads, then the
// engine's message. A destination of raftShard marks a Raft message of
// the replicated log (the source is then the sending node).
const (
	envelopeHeader = 16
	raftShard      = ^uint32(0)
)

// NewShardStore adapts s, whose local shards must be exactly those pl
// puts on fabric node self, and starts the router that takes this node's
// messages off the fabric and the prober that follows the peers' health.
// vs says which version each node applied (nil: s is never written).
// Close stops them.
func NewShardStore(s *graphstore.Store, self rdmakv.NodeID, vs *versions, pl Placement) (*ShardStore, error) {
	f := s.Fabric()
	if !f.IsLocal(self) {
		return nil, fmt.Errorf("node %d is not local to the store's fabric", self)
	}
	if pl.Shards != s.NumShards() || pl.Nodes != f.Nodes() {
		return nil, fmt.Errorf("a placement of %d shards on %d nodes for a store of %d shards on %d nodes", pl.Shards, pl.Nodes, s.NumShards(), f.Nodes())
	}
	local := s.LocalShards()
	want := pl.Hosted(self)
	if len(want) == 0 {
		return nil, fmt.Errorf("node %d of %d owns no shard of %d: use at most as many nodes as shards", self, f.Nodes(), s.NumShards())
	}
	if fmt.Sprint(local) != fmt.Sprint(want) {
		return nil, fmt.Errorf("node %d must hold shards %v, the store holds %v", self, want, local)
	}
	for _, i := range local {
		if s.NodeOf(i) != self {
			return nil, fmt.Errorf("the store puts its shard %d on node %d, not on this node %d", i, s.NodeOf(i), self)
		}
	}
	reps := s.NumShards() * f.Nodes()
	ss := &ShardStore{s: s, f: f, self: self, pl: pl, stats0: exec.PlannerStats(s), local: local, queues: make([]chan envelope, s.NumShards()),
		vs: vs, rtab: make([]atomic.Pointer[rdmakv.RemoteTable], reps), rdelta: make([]atomic.Pointer[rdmakv.RemoteDelta], reps),
		noDelta: make([]atomic.Uint64, reps), peers: make([]peerState, f.Nodes()), status: make([]uint64, 1)}
	ss.dict.Store(s.Dict())
	ss.stats.Store(ss.stats0)
	for _, i := range local {
		ss.queues[i] = make(chan envelope, 1024)
	}
	if err := f.Register(self, ss.statusRegion(), rdmakv.NewRegion(wordBytes(ss.status))); err != nil {
		return nil, fmt.Errorf("cannot register the status region: %w", err)
	}
	ss.ctx, ss.cancel = context.WithCancel(context.Background())
	ss.wg.Add(2)
	go ss.route()
	go ss.probe()
	return ss, nil
}

// LocalShards returns the shards of this node.
func (ss *ShardStore) LocalShards() []int { return ss.local }

// Graph returns the store.
func (ss *ShardStore) Graph() *graphstore.Store { return ss.s }

// Dropped counts messages the router discarded (malformed or addressed to
// a shard this node does not hold).
func (ss *ShardStore) Dropped() uint64 { return ss.dropped.Load() }

// Close stops the router. Close the engine first.
func (ss *ShardStore) Close() error {
	ss.cancel()
	ss.wg.Wait()
	return nil
}

// Shards implements exec.Store.
func (ss *ShardStore) Shards() int { return ss.s.NumShards() }

// Owner implements exec.Store.
func (ss *ShardStore) Owner(v exec.ID) int { return ss.s.Owner(v) }

// LookupTerm implements exec.Store.
func (ss *ShardStore) LookupTerm(t rdf.Term) (exec.ID, bool) { return ss.dict.Load().Lookup(t) }

// Term implements exec.Store.
func (ss *ShardStore) Term(id exec.ID) (rdf.Term, bool) { return ss.dict.Load().Term(id) }

// AppendNTriples appends id's term in N-Triples syntax (the engine's fast
// path for result output).
func (ss *ShardStore) AppendNTriples(dst []byte, id exec.ID) ([]byte, bool) {
	return ss.dict.Load().AppendNTriples(dst, id)
}

// IsClass implements exec.Store.
func (ss *ShardStore) IsClass(id exec.ID) bool { return ss.dict.Load().IsClass(id) }

// setDict makes d (a newly applied version's dictionary) the one terms
// are looked up and decoded in.
func (ss *ShardStore) setDict(d *graphstore.Dict) { ss.dict.Store(d) }

// readVersion returns the version ctx reads (the newest applied here if
// it names none).
func (ss *ShardStore) readVersion(ctx context.Context) uint64 {
	if ss.vs == nil {
		return 0
	}
	if v, ok := versionOf(ctx); ok {
		return v
	}
	return ss.vs.current()
}

// PlannerStats implements exec.Store.
func (ss *ShardStore) PlannerStats() *planner.Stats { return ss.stats.Load() }

// addClasses makes the statistics know every class of d (a newly applied
// version's dictionary): the engine enumerates the classes of its
// statistics for an rdf:type step with a variable class, so a class the
// log added is counted with one instance (its true count is on the nodes
// that hold its instances). The snapshot's figures stay as they were.
func (ss *ShardStore) addClasses(d *graphstore.Dict) {
	cur := ss.stats.Load()
	var add []graphstore.ID
	for id := graphstore.ID(1); int(id) <= d.NumPredicatesAndClasses(); id++ {
		if d.IsClass(id) && cur.Classes[id] == 0 {
			add = append(add, id)
		}
	}
	if len(add) == 0 {
		return
	}
	st := *cur
	st.Classes = maps.Clone(cur.Classes)
	if st.Classes == nil {
		st.Classes = map[exec.ID]uint64{}
	}
	for _, c := range add {
		st.Classes[c] = 1
	}
	st.TypeID = graphstore.TypeID // the snapshot may have had no rdf:type
	ss.stats.Store(&st)
}

// Lookup implements exec.Store: a shard of this node is read from its
// region, another from a live replica through the fabric (one batched
// lookup; the cost is what the fabric counted for it); then, once writes
// were applied, the shard's delta at the version ctx reads (mergeDelta).
// A replica found down on the way is left for the next one.
func (ss *ShardStore) Lookup(ctx context.Context, self, shard int, keys []exec.Key, out [][]exec.ID) (exec.ReadCost, error) {
	if shard < 0 || shard >= ss.pl.Shards {
		return exec.ReadCost{}, fmt.Errorf("lookup on shard %d of %d", shard, ss.pl.Shards)
	}
	var tried []bool
	patient := ss.pl.Replicas == 1
	behind := false // a replica of this round was behind (not down)
	for {
		node, err := ss.pick(shard, tried)
		if err != nil && behind {
			// Every replica was behind or down: another round, so the
			// first replica to apply the version answers (each try waits
			// behindWait; the query's deadline ends it).
			tried, behind = nil, false
			continue
		}
		if err != nil {
			return exec.ReadCost{}, err
		}
		cost, err := ss.lookupOn(ctx, node, shard, keys, out, patient)
		if err == nil || !ss.failover(ctx, err) {
			return cost, err
		}
		if tried == nil {
			tried = make([]bool, ss.pl.Nodes)
		}
		tried[node] = true
		if errors.Is(err, rdmakv.ErrNodeDown) {
			ss.suspect(node)
		} else {
			behind = true
		}
	}
}

// lookupOn reads keys of shard from its replica on node; unless patient,
// it waits at most behindWait for node to apply the version ctx reads
// (then errBehind).
func (ss *ShardStore) lookupOn(ctx context.Context, node rdmakv.NodeID, shard int, keys []exec.Key, out [][]exec.ID, patient bool) (exec.ReadCost, error) {
	cost, err := ss.lookupBase(ctx, node, shard, keys, out)
	if err != nil || ss.vs == nil {
		return cost, err
	}
	if v := ss.readVersion(ctx); v > ss.vs.base {
		dc, err := ss.mergeDelta(ctx, v, node, shard, keys, out, patient)
		if err != nil {
			return cost, err
		}
		cost.Reads += dc.Reads
		cost.Bytes += dc.Bytes
		cost.RoundTrips += dc.RoundTrips
	}
	return cost, nil
}

// rep indexes the caches by replica.
func (ss *ShardStore) rep(shard int, node rdmakv.NodeID) int { return shard*ss.pl.Nodes + int(node) }

// mergeDelta merges the delta of shard's replica on node at version v
// into the base lists out: it waits until node has applied v (up to
// ctx's deadline), then reads the toggles of every key at v's stamp
// through the fabric (one round trip for the buckets, one more per chain
// level, one for the blocks; a copy for this node's own shards).
func (ss *ShardStore) mergeDelta(ctx context.Context, v uint64, node rdmakv.NodeID, shard int, keys []exec.Key, out [][]exec.ID, patient bool) (exec.ReadCost, error) {
	wctx := ctx
	if !patient && node != ss.self && ss.vs.seen(node) < v {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeoutCause(ctx, behindWait, errBehind)
		defer cancel()
	}
	if err := ss.vs.waitNode(wctx, node, v); err != nil {
		if ctx.Err() == nil && wctx.Err() != nil {
			return exec.ReadCost{}, fmt.Errorf("node %d: %w", node, errBehind)
		}
		return exec.ReadCost{}, err
	}
	r := ss.rep(shard, node)
	if nd := ss.noDelta[r].Load(); nd > v {
		return exec.ReadCost{}, nil // the node had applied v without a delta on the shard
	}
	rd := ss.rdelta[r].Load()
	if rd == nil {
		var err error
		rd, err = rdmakv.OpenRemoteDelta(ctx, ss.f, ss.self, node, rdmakv.RegionID(ss.s.NumShards()+shard))
		if errors.Is(err, rdmakv.ErrNoRegion) {
			// Not made yet: no write reached the shard by the version its
			// node had applied (≥ v) when it answered.
			for {
				nd := ss.noDelta[r].Load()
				if nd > v || ss.noDelta[r].CompareAndSwap(nd, v+1) {
					break
				}
			}
			return exec.ReadCost{}, nil
		}
		if err != nil {
			return exec.ReadCost{}, fmt.Errorf("cannot open the delta of shard %d on node %d: %w", shard, node, err)
		}
		ss.rdelta[r].CompareAndSwap(nil, rd)
		rd = ss.rdelta[r].Load()
	}
	lookups := make([]rdmakv.DeltaLookup, len(keys))
	for i, k := range keys {
		lookups[i] = rdmakv.DeltaLookup{Delta: rd, Key: uint64(k)}
	}
	m := &rdmakv.Meter{}
	tg, ends, err := rdmakv.LookupDeltaBatch(rdmakv.ContextWithMeter(ctx, m), ss.f, ss.self, lookups, ss.vs.stampOf(v), nil, nil)
	if err != nil {
		return exec.ReadCost{}, fmt.Errorf("cannot read the delta of %d keys of shard %d on node %d: %w", len(keys), shard, node, err)
	}
	start := 0
	for i, e := range ends {
		if e > start {
			merged := graphstore.MergeToggles(append([]exec.ID(nil), out[i]...), 0, tg[start:e])
			out[i] = merged[:len(merged):len(merged)]
		}
		start = e
	}
	c := m.Snapshot()
	return exec.ReadCost{Reads: c.Reads, Bytes: c.ReadBytes, RoundTrips: c.RoundTrips}, nil
}

// lookupBase reads the base lists of keys of shard's replica on node.
func (ss *ShardStore) lookupBase(ctx context.Context, node rdmakv.NodeID, shard int, keys []exec.Key, out [][]exec.ID) (exec.ReadCost, error) {
	if v := ss.s.Shard(shard); v != nil && node == ss.self {
		buf, ends, err := v.AppendEdgesBatch(ctx, keys, nil, nil)
		if err != nil {
			return exec.ReadCost{}, err
		}
		start := 0
		for i, e := range ends {
			out[i] = buf[start:e:e]
			start = e
		}
		return exec.ReadCost{}, nil
	}
	r := ss.rep(shard, node)
	rt := ss.rtab[r].Load()
	if rt == nil {
		var err error
		if rt, err = rdmakv.OpenRemoteTable(ctx, ss.f, ss.self, node, rdmakv.RegionID(shard)); err != nil {
			return exec.ReadCost{}, fmt.Errorf("cannot open shard %d on node %d: %w", shard, node, err)
		}
		ss.rtab[r].CompareAndSwap(nil, rt)
		rt = ss.rtab[r].Load()
	}
	lookups := make([]rdmakv.Lookup, len(keys))
	for i, k := range keys {
		lookups[i] = rdmakv.Lookup{Table: rt, Key: uint64(k)}
	}
	m := &rdmakv.Meter{}
	vals, ends, err := rdmakv.LookupBatch(rdmakv.ContextWithMeter(ctx, m), ss.f, ss.self, lookups, nil, nil)
	if err != nil {
		return exec.ReadCost{}, fmt.Errorf("cannot read %d keys of shard %d on node %d: %w", len(keys), shard, node, err)
	}
	ids := make([]exec.ID, len(vals))
	for i, v := range vals {
		ids[i] = exec.ID(v)
	}
	start := 0
	for i, e := range ends {
		out[i] = ids[start:e:e]
		start = e
	}
	c := m.Snapshot()
	return exec.ReadCost{Reads: c.Reads, Bytes: c.ReadBytes, RoundTrips: c.RoundTrips}, nil
}

// Send implements exec.Transport: to a shard of this node straight into
// its queue, to another node through the fabric — a sub-query to a live
// replica of shard to (the next one if that one is found down), a reply
// or a cancel to the exact node that forked (to is then the sender id
// RecvContext gave, see peerShard).
func (ss *ShardStore) Send(ctx context.Context, from, to int, msg []byte) error {
	version := ss.readVersion(ctx)
	if to >= ss.pl.Shards {
		node, shard, ok := ss.peerShard(to)
		if !ok {
			return fmt.Errorf("send to shard %d of %d", to, ss.pl.Shards)
		}
		if node == ss.self {
			return ss.deliver(ctx, shard, envelope{from: from, version: version, data: append([]byte(nil), msg...)})
		}
		return ss.sendTo(ctx, node, from, shard, version, msg)
	}
	if to < 0 {
		return fmt.Errorf("send to shard %d of %d", to, ss.pl.Shards)
	}
	if ss.queues[to] != nil {
		return ss.deliver(ctx, to, envelope{from: from, version: version, data: append([]byte(nil), msg...)})
	}
	var tried []bool
	for {
		node, err := ss.pick(to, tried)
		if err != nil {
			return err
		}
		err = ss.sendTo(ctx, node, from, to, version, msg)
		if err == nil || !ss.failover(ctx, err) {
			return err
		}
		if tried == nil {
			tried = make([]bool, ss.pl.Nodes)
		}
		tried[node] = true
		ss.suspect(node)
	}
}

// sendTo sends msg from local shard from to shard to on node.
func (ss *ShardStore) sendTo(ctx context.Context, node rdmakv.NodeID, from, to int, version uint64, msg []byte) error {
	if qt := trackFromContext(ctx); qt != nil {
		qt.sent[node].Store(true) // the query may now wait on node
	}
	buf := make([]byte, envelopeHeader, envelopeHeader+len(msg))
	binary.LittleEndian.PutUint32(buf, uint32(to))
	binary.LittleEndian.PutUint32(buf[4:], uint32(from))
	binary.LittleEndian.PutUint64(buf[8:], version)
	buf = append(buf, msg...)
	if err := ss.f.Send(ctx, ss.self, node, buf); err != nil {
		return fmt.Errorf("cannot send to shard %d on node %d: %w", to, node, err)
	}
	return nil
}

// peerShard decodes a sender id of a message from another node: shard
// s on node n is s + shards·(n+1), so that the forks of two replicas of
// one shard never share an id in the engine (its fork keys are (sender,
// fork number)) and a reply goes back to the node that forked.
func (ss *ShardStore) peerShard(id int) (rdmakv.NodeID, int, bool) {
	n := id/ss.pl.Shards - 1
	if n < 0 || n >= ss.pl.Nodes {
		return 0, 0, false
	}
	return rdmakv.NodeID(n), id % ss.pl.Shards, true
}

func (ss *ShardStore) deliver(ctx context.Context, to int, e envelope) error {
	q := ss.queues[to]
	if q == nil {
		return fmt.Errorf("shard %d is not on node %d", to, ss.self)
	}
	select {
	case q <- e:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-ss.ctx.Done():
		return rdmakv.ErrClosed
	}
}

// Recv implements exec.Transport.
func (ss *ShardStore) Recv(ctx context.Context, shard int) (int, []byte, error) {
	_, from, msg, err := ss.RecvContext(ctx, shard)
	return from, msg, err
}

// RecvContext implements exec.ContextTransport: a sub-query reads the
// version its message carries.
func (ss *ShardStore) RecvContext(ctx context.Context, shard int) (context.Context, int, []byte, error) {
	if shard < 0 || shard >= len(ss.queues) || ss.queues[shard] == nil {
		return ctx, 0, nil, fmt.Errorf("receive on shard %d: %w", shard, rdmakv.ErrNotLocal)
	}
	select {
	case e := <-ss.queues[shard]:
		if ss.vs != nil {
			ctx = withVersion(ctx, e.version)
		}
		return ctx, e.from, e.data, nil
	case <-ctx.Done():
		return ctx, 0, nil, ctx.Err()
	case <-ss.ctx.Done():
		return ctx, 0, nil, rdmakv.ErrClosed
	}
}

// SendRaft sends a Raft message of the replicated log to node to.
func (ss *ShardStore) SendRaft(ctx context.Context, to rdmakv.NodeID, msg []byte) error {
	buf := make([]byte, envelopeHeader, envelopeHeader+len(msg))
	binary.LittleEndian.PutUint32(buf, raftShard)
	binary.LittleEndian.PutUint32(buf[4:], uint32(ss.self))
	buf = append(buf, msg...)
	return ss.f.Send(ctx, ss.self, to, buf)
}

// PostRaft is SendRaft without waiting for the peer's acknowledgement
// (the fabric must be an rdmakv.Poster): done says how it ended.
func (ss *ShardStore) PostRaft(ctx context.Context, to rdmakv.NodeID, msg []byte, done func(error)) error {
	buf := make([]byte, envelopeHeader, envelopeHeader+len(msg))
	binary.LittleEndian.PutUint32(buf, raftShard)
	binary.LittleEndian.PutUint32(buf[4:], uint32(ss.self))
	buf = append(buf, msg...)
	return ss.f.(rdmakv.Poster).Post(ctx, ss.self, to, buf, done)
}

// queryTrack follows one query coordinated on this node: the nodes it
// sent sub-queries to, and how to cancel it when one of them is lost (a
// sub-query's reply would then never come: without this the query would
// wait for its deadline).
type queryTrack struct {
	cancel context.CancelCauseFunc
	sent   []atomic.Bool // by fabric node
}

type trackKey struct{}

func withTrack(ctx context.Context, qt *queryTrack) context.Context {
	return context.WithValue(ctx, trackKey{}, qt)
}

func trackFromContext(ctx context.Context) *queryTrack {
	qt, _ := ctx.Value(trackKey{}).(*queryTrack)
	return qt
}

// route takes this node's messages off the fabric and queues each for its
// shard.
func (ss *ShardStore) route() {
	defer ss.wg.Done()
	for {
		m, err := ss.f.Recv(ss.ctx, ss.self)
		if err != nil {
			if ss.ctx.Err() != nil || errors.Is(err, rdmakv.ErrClosed) {
				return
			}
			continue
		}
		if len(m.Data) < envelopeHeader {
			ss.dropped.Add(1)
			continue
		}
		to32 := binary.LittleEndian.Uint32(m.Data)
		from := int(binary.LittleEndian.Uint32(m.Data[4:]))
		if to32 == raftShard {
			h := ss.raft.Load()
			if h == nil || rdmakv.NodeID(from) != m.From {
				ss.dropped.Add(1)
				continue
			}
			(*h)(m.From, m.Data[envelopeHeader:])
			continue
		}
		to := int(to32)
		if to >= len(ss.queues) || ss.queues[to] == nil || from >= ss.pl.Shards || int(m.From) >= ss.pl.Nodes || !ss.pl.Hosts(m.From, from) {
			ss.dropped.Add(1)
			continue
		}
		version := binary.LittleEndian.Uint64(m.Data[8:])
		sender := from + ss.pl.Shards*(int(m.From)+1)
		if ss.deliver(ss.ctx, to, envelope{from: sender, version: version, data: m.Data[envelopeHeader:]}) != nil {
			return
		}
	}
}
