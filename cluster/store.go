package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

// ShardStore is the engine's view of a store of which this process holds
// some shards (those of its fabric node): it implements exec.Store and
// exec.Transport. Shard s lives on fabric node s mod nodes.
type ShardStore struct {
	s     *graphstore.Store
	f     rdmakv.Fabric
	self  rdmakv.NodeID
	stats *planner.Stats
	local []int

	queues  []chan envelope // per shard; nil where not local
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	dropped atomic.Uint64

	// vs says which version each node has applied; dict is the newest
	// applied version's dictionary (it decodes every ID of every older
	// version too); rdelta caches the delta tables of the shards, opened
	// through the fabric, and noDelta[i]-1 is a version at which shard
	// i's node had applied and had no delta yet.
	vs      *versions
	dict    atomic.Pointer[graphstore.Dict]
	rdelta  []atomic.Pointer[rdmakv.RemoteDelta]
	noDelta []atomic.Uint64
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

// NewShardStore adapts s, whose local shards must be exactly those of
// fabric node self, and starts the router that takes this node's messages
// off the fabric. vs says which version each node applied (nil: s is
// never written). Close stops it.
func NewShardStore(s *graphstore.Store, self rdmakv.NodeID, vs *versions) (*ShardStore, error) {
	f := s.Fabric()
	if !f.IsLocal(self) {
		return nil, fmt.Errorf("node %d is not local to the store's fabric", self)
	}
	local := s.LocalShards()
	var want []int
	for i := 0; i < s.NumShards(); i++ {
		if s.NodeOf(i) == self {
			want = append(want, i)
		}
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("node %d of %d owns no shard of %d: use at most as many nodes as shards", self, f.Nodes(), s.NumShards())
	}
	if fmt.Sprint(local) != fmt.Sprint(want) {
		return nil, fmt.Errorf("node %d must hold shards %v, the store holds %v", self, want, local)
	}
	ss := &ShardStore{s: s, f: f, self: self, stats: exec.PlannerStats(s), local: local, queues: make([]chan envelope, s.NumShards()),
		vs: vs, rdelta: make([]atomic.Pointer[rdmakv.RemoteDelta], s.NumShards()), noDelta: make([]atomic.Uint64, s.NumShards())}
	ss.dict.Store(s.Dict())
	for _, i := range local {
		ss.queues[i] = make(chan envelope, 1024)
	}
	ss.ctx, ss.cancel = context.WithCancel(context.Background())
	ss.wg.Add(1)
	go ss.route()
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
func (ss *ShardStore) PlannerStats() *planner.Stats { return ss.stats }

// Lookup implements exec.Store: a shard of this node is read from its
// region, another through the fabric (one batched lookup; the cost is what
// the fabric counted for it); then, once writes were applied, the shard's
// delta at the version ctx reads (mergeDelta).
func (ss *ShardStore) Lookup(ctx context.Context, self, shard int, keys []exec.Key, out [][]exec.ID) (exec.ReadCost, error) {
	cost, err := ss.lookupBase(ctx, shard, keys, out)
	if err != nil || ss.vs == nil {
		return cost, err
	}
	if v := ss.readVersion(ctx); v > ss.vs.base {
		dc, err := ss.mergeDelta(ctx, v, shard, keys, out)
		if err != nil {
			return cost, err
		}
		cost.Reads += dc.Reads
		cost.Bytes += dc.Bytes
		cost.RoundTrips += dc.RoundTrips
	}
	return cost, nil
}

// mergeDelta merges shard's delta at version v into the base lists out:
// it waits until the shard's node has applied v (up to ctx's deadline),
// then reads the toggles of every key at v's stamp through the fabric
// (one round trip for the buckets, one more per chain level, one for the
// blocks; a copy for this node's own shards).
func (ss *ShardStore) mergeDelta(ctx context.Context, v uint64, shard int, keys []exec.Key, out [][]exec.ID) (exec.ReadCost, error) {
	node := ss.s.NodeOf(shard)
	if err := ss.vs.waitNode(ctx, node, v); err != nil {
		return exec.ReadCost{}, err
	}
	if nd := ss.noDelta[shard].Load(); nd > v {
		return exec.ReadCost{}, nil // the node had applied v without a delta on the shard
	}
	rd := ss.rdelta[shard].Load()
	if rd == nil {
		var err error
		rd, err = rdmakv.OpenRemoteDelta(ctx, ss.f, ss.self, node, rdmakv.RegionID(ss.s.NumShards()+shard))
		if errors.Is(err, rdmakv.ErrNoRegion) {
			// Not made yet: no write reached the shard by the version its
			// node had applied (≥ v) when it answered.
			for {
				nd := ss.noDelta[shard].Load()
				if nd > v || ss.noDelta[shard].CompareAndSwap(nd, v+1) {
					break
				}
			}
			return exec.ReadCost{}, nil
		}
		if err != nil {
			return exec.ReadCost{}, fmt.Errorf("cannot open the delta of shard %d on node %d: %w", shard, node, err)
		}
		ss.rdelta[shard].CompareAndSwap(nil, rd)
		rd = ss.rdelta[shard].Load()
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

// lookupBase reads the base lists of keys of shard.
func (ss *ShardStore) lookupBase(ctx context.Context, shard int, keys []exec.Key, out [][]exec.ID) (exec.ReadCost, error) {
	if v := ss.s.Shard(shard); v != nil {
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
	rt, err := ss.s.RemoteTable(ctx, ss.self, shard)
	if err != nil {
		return exec.ReadCost{}, fmt.Errorf("cannot open shard %d on node %d: %w", shard, ss.s.NodeOf(shard), err)
	}
	lookups := make([]rdmakv.Lookup, len(keys))
	for i, k := range keys {
		lookups[i] = rdmakv.Lookup{Table: rt, Key: uint64(k)}
	}
	m := &rdmakv.Meter{}
	vals, ends, err := rdmakv.LookupBatch(rdmakv.ContextWithMeter(ctx, m), ss.f, ss.self, lookups, nil, nil)
	if err != nil {
		return exec.ReadCost{}, fmt.Errorf("cannot read %d keys of shard %d on node %d: %w", len(keys), shard, ss.s.NodeOf(shard), err)
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
// its queue, to another node through the fabric.
func (ss *ShardStore) Send(ctx context.Context, from, to int, msg []byte) error {
	if to < 0 || to >= len(ss.queues) {
		return fmt.Errorf("send to shard %d of %d", to, len(ss.queues))
	}
	node := ss.s.NodeOf(to)
	version := ss.readVersion(ctx)
	if node == ss.self {
		return ss.deliver(ctx, to, envelope{from: from, version: version, data: append([]byte(nil), msg...)})
	}
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
		if to >= len(ss.queues) || ss.queues[to] == nil || from >= len(ss.queues) || ss.s.NodeOf(from) != m.From {
			ss.dropped.Add(1)
			continue
		}
		version := binary.LittleEndian.Uint64(m.Data[8:])
		if ss.deliver(ss.ctx, to, envelope{from: from, version: version, data: m.Data[envelopeHeader:]}) != nil {
			return
		}
	}
}
