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
}

var (
	_ exec.Store     = (*ShardStore)(nil)
	_ exec.Transport = (*ShardStore)(nil)
)

type envelope struct {
	from int
	data []byte
}

// Header of a message between shards on the fabric: u32 destination
// shard, u32 source shard, then the engine's message.
const envelopeHeader = 8

// NewShardStore adapts s, whose local shards must be exactly those of
// fabric node self, and starts the router that takes this node's messages
// off the fabric. Close stops it.
func NewShardStore(s *graphstore.Store, self rdmakv.NodeID) (*ShardStore, error) {
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
	ss := &ShardStore{s: s, f: f, self: self, stats: exec.PlannerStats(s), local: local, queues: make([]chan envelope, s.NumShards())}
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
func (ss *ShardStore) LookupTerm(t rdf.Term) (exec.ID, bool) { return ss.s.Dict().Lookup(t) }

// Term implements exec.Store.
func (ss *ShardStore) Term(id exec.ID) (rdf.Term, bool) { return ss.s.Dict().Term(id) }

// AppendNTriples appends id's term in N-Triples syntax (the engine's fast
// path for result output).
func (ss *ShardStore) AppendNTriples(dst []byte, id exec.ID) ([]byte, bool) {
	return ss.s.Dict().AppendNTriples(dst, id)
}

// IsClass implements exec.Store.
func (ss *ShardStore) IsClass(id exec.ID) bool { return ss.s.Dict().IsClass(id) }

// PlannerStats implements exec.Store.
func (ss *ShardStore) PlannerStats() *planner.Stats { return ss.stats }

// Lookup implements exec.Store: a shard of this node is read from its
// region, another through the fabric (one batched lookup; the cost is what
// the fabric counted for it).
func (ss *ShardStore) Lookup(ctx context.Context, self, shard int, keys []exec.Key, out [][]exec.ID) (exec.ReadCost, error) {
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
	if node == ss.self {
		return ss.deliver(ctx, to, envelope{from: from, data: append([]byte(nil), msg...)})
	}
	if qt := trackFromContext(ctx); qt != nil {
		qt.sent[node].Store(true) // the query may now wait on node
	}
	buf := make([]byte, envelopeHeader, envelopeHeader+len(msg))
	binary.LittleEndian.PutUint32(buf, uint32(to))
	binary.LittleEndian.PutUint32(buf[4:], uint32(from))
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
	if shard < 0 || shard >= len(ss.queues) || ss.queues[shard] == nil {
		return 0, nil, fmt.Errorf("receive on shard %d: %w", shard, rdmakv.ErrNotLocal)
	}
	select {
	case e := <-ss.queues[shard]:
		return e.from, e.data, nil
	case <-ctx.Done():
		return 0, nil, ctx.Err()
	case <-ss.ctx.Done():
		return 0, nil, rdmakv.ErrClosed
	}
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
		to := int(binary.LittleEndian.Uint32(m.Data))
		from := int(binary.LittleEndian.Uint32(m.Data[4:]))
		if to >= len(ss.queues) || ss.queues[to] == nil || from >= len(ss.queues) || ss.s.NodeOf(from) != m.From {
			ss.dropped.Add(1)
			continue
		}
		if ss.deliver(ss.ctx, to, envelope{from: from, data: m.Data[envelopeHeader:]}) != nil {
			return
		}
	}
}
