package graphstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/wukongd/wukongd/rdmakv"
)

// Store is a built or opened graph store: the dictionary, the statistics
// and the shards. A shard's table lives in one registered region of node
// shard mod Nodes(); this process holds the tables of its local shards and
// reads the others through the fabric. It is safe for concurrent use.
//
// A store is one version of a graph: the base (the tables, immutable) and
// the delta (delta.go) as of one stamp. Versions made by writes share the
// base, the delta regions and the fabric (storeShared) and differ in
// their stamp, statistics and dictionary. The engines of several versions
// share the fabric through ports of their own (exec/mux.go).
type Store struct {
	dict  *Dict
	stats *Stats
	n     int
	nodes int // of the fabric
	// place names the fabric node of each shard (nil: shard mod nodes).
	place   func(shard int) rdmakv.NodeID
	fabric  rdmakv.Fabric
	regions []*rdmakv.Region // nil: not local
	tables  []*rdmakv.Table
	views   []*ShardView
	sh      *storeShared
	// stamp: the delta records this version reads (those ≤ stamp);
	// deltaOn[i]: shard i's delta has records this version reads.
	stamp   uint64
	deltaOn []bool
	// rc caches the tables of other shards read through the fabric
	// (shared by the versions).
	rc        *remoteCache
	closeOnce sync.Once
}

// remoteCache holds a store's views of other shards' tables.
type remoteCache struct {
	mu     sync.Mutex
	remote []*rdmakv.RemoteTable
	rdelta []*rdmakv.RemoteDelta
}

func newRemoteCache(n int) *remoteCache {
	return &remoteCache{remote: make([]*rdmakv.RemoteTable, n), rdelta: make([]*rdmakv.RemoteDelta, n)}
}

// storeShared is what the versions of one graph store share.
type storeShared struct {
	// ownFabric: the store made its own loopback fabric, which the last
	// version to close closes.
	ownFabric bool
	refs      atomic.Int64
	// w is the write state (delta.go): the delta tables and what the
	// writer keeps about them. Only the writer of the dataset's lineage
	// uses it.
	w *storeWriter
	// pcEnd, vEnd bound the IDs the base tables can hold: low IDs up to
	// pcEnd, vertex IDs below vEnd (what the dictionary the base was
	// built with had). A key naming a later ID has an empty base list,
	// so the writer does not look it up (inBase).
	pcEnd, vEnd ID
	// snap, if set, names the snapshot graph the base is
	// (dataset_checkpoint.go): set once, before the store is written to.
	snap *snapBase
}

// inBase reports whether key k can have a list in the base tables.
func (sh *storeShared) inBase(k Key) bool {
	in := func(x ID) bool {
		if x < FirstVertexID {
			return x <= sh.pcEnd
		}
		return x < sh.vEnd
	}
	return in(k.Vertex()) && in(k.Pred())
}

// newStore assembles a store. regions[i] is nil for a shard that is not
// local. A nil fabric means a new loopback fabric with one node per shard.
// place, if set, names the fabric node of each shard (OpenOptions.Place).
func newStore(dict *Dict, stats *Stats, regions []*rdmakv.Region, fabric rdmakv.Fabric, place func(shard int) rdmakv.NodeID) (*Store, error) {
	s := &Store{dict: dict, stats: stats, n: len(regions), fabric: fabric, regions: regions, place: place,
		tables: make([]*rdmakv.Table, len(regions)), views: make([]*ShardView, len(regions)),
		sh: &storeShared{}, deltaOn: make([]bool, len(regions)), rc: newRemoteCache(len(regions))}
	s.sh.refs.Store(1)
	s.sh.pcEnd, s.sh.vEnd = MaxPredicate, MaxID+1
	if dict != nil {
		s.sh.pcEnd, s.sh.vEnd = ID(dict.NumPredicatesAndClasses()), max(dict.MaxID()+1, FirstVertexID)
	}
	if s.fabric == nil {
		s.fabric = rdmakv.NewLoopback(len(regions), rdmakv.LoopbackOptions{})
		s.sh.ownFabric = true
	}
	s.nodes = s.fabric.Nodes()
	for i, r := range regions {
		if r == nil {
			continue
		}
		node := s.NodeOf(i)
		if !s.fabric.IsLocal(node) {
			return nil, fmt.Errorf("shard %d belongs to node %d, which is not local to this fabric", i, node)
		}
		t, err := rdmakv.OpenTable(r)
		if err != nil {
			return nil, fmt.Errorf("shard %d: %w", i, err)
		}
		if err := s.fabric.Register(node, rdmakv.RegionID(i), r); err != nil {
			return nil, fmt.Errorf("cannot register shard %d: %w", i, err)
		}
		s.tables[i] = t
		s.views[i] = &ShardView{s: s, id: i, node: node, table: t}
	}
	return s, nil
}

// NumShards returns the number of shards.
func (s *Store) NumShards() int { return s.n }

// Nodes returns the number of nodes of the fabric.
func (s *Store) Nodes() int { return s.nodes }

// NodeOf returns the node hosting shard i: i mod Nodes(), or what
// OpenOptions.Place said.
func (s *Store) NodeOf(shard int) rdmakv.NodeID {
	if s.place != nil {
		return s.place(shard)
	}
	return rdmakv.NodeID(shard % s.nodes)
}

// Owner returns the shard owning vertex v (a hash of v modulo the number of
// shards). The index vertex is on every shard; Owner(IndexVertex) is
// meaningless.
func (s *Store) Owner(v ID) int { return ownerOf(v, s.n) }

// Dict returns the dictionary.
func (s *Store) Dict() *Dict { return s.dict }

// Stats returns the planner statistics. They must not be modified.
func (s *Store) Stats() *Stats { return s.stats }

// Fabric returns the fabric the store reads remote shards through (every
// version of the store has the same).
func (s *Store) Fabric() rdmakv.Fabric { return s.fabric }

// Counters returns the fabric's counters (those of every version of the
// store, and of other stores sharing the fabric).
func (s *Store) Counters() rdmakv.Counters { return s.fabric.Counters() }

// LocalShards returns the shards whose tables this process holds.
func (s *Store) LocalShards() []int {
	var r []int
	for i, t := range s.tables {
		if t != nil {
			r = append(r, i)
		}
	}
	return r
}

// Shard returns the view of local shard i, or nil if it is not local.
func (s *Store) Shard(i int) *ShardView {
	if i < 0 || i >= s.n {
		return nil
	}
	return s.views[i]
}

// ShardBytes returns the size of local shard i's region (0 if not local).
func (s *Store) ShardBytes(i int) int {
	if s.regions[i] == nil {
		return 0
	}
	return s.regions[i].Len()
}

// Close releases the regions (unmapping snapshot files) and a fabric the
// store created itself. Views and slices of the store must not be used
// afterwards; IDs and decoded terms stay valid.
func (s *Store) Close() error {
	var errs []error
	s.closeOnce.Do(func() {
		if s.sh.refs.Add(-1) != 0 {
			return // another version of the store still holds the base
		}
		if s.sh.ownFabric {
			errs = append(errs, s.fabric.Close())
		}
		for _, r := range s.regions {
			if r != nil {
				errs = append(errs, r.Close())
			}
		}
		if s.sh.w != nil {
			errs = append(errs, s.sh.w.close())
		}
		if s.dict != nil && s.dict.region != nil {
			errs = append(errs, s.dict.region.Close())
		}
	})
	return errors.Join(errs...)
}

// version returns another version of s: the same base and delta regions
// read at stamp, with its own statistics and dictionary. Close each
// version; the last one closes the shared parts.
func (s *Store) version(stamp uint64, stats *Stats, dict *Dict) (*Store, error) {
	v := &Store{dict: dict, stats: stats, n: s.n, nodes: s.nodes, place: s.place, fabric: s.fabric, regions: s.regions, tables: s.tables,
		views: make([]*ShardView, s.n), sh: s.sh, stamp: stamp, deltaOn: make([]bool, s.n), rc: s.rc}
	s.sh.refs.Add(1)
	for i, t := range s.tables {
		if t != nil {
			v.views[i] = &ShardView{s: v, id: i, node: s.views[i].node, table: t}
		}
		if w := s.sh.w; w != nil && w.deltas[i] != nil && w.deltas[i].Keys() > 0 {
			v.deltaOn[i] = true
		}
	}
	return v, nil
}

// hasDelta reports whether any shard's delta has records this version
// reads.
func (s *Store) hasDelta() bool {
	for _, on := range s.deltaOn {
		if on {
			return true
		}
	}
	return false
}

// RemoteTable returns the view of shard j's table through the store's
// fabric, reading its header on behalf of node from on first use; the view
// is kept for every later caller. It is safe for concurrent use.
func (s *Store) RemoteTable(ctx context.Context, from rdmakv.NodeID, j int) (*rdmakv.RemoteTable, error) {
	sh := s.rc
	sh.mu.Lock()
	rt := sh.remote[j]
	sh.mu.Unlock()
	if rt != nil {
		return rt, nil
	}
	rt, err := rdmakv.OpenRemoteTable(ctx, s.fabric, from, s.NodeOf(j), rdmakv.RegionID(j))
	if err != nil {
		return nil, err
	}
	sh.mu.Lock()
	if sh.remote[j] == nil {
		sh.remote[j] = rt
	}
	rt = sh.remote[j]
	sh.mu.Unlock()
	return rt, nil
}

// deltaRegion is the region ID of shard j's delta: after the shards'.
func (s *Store) deltaRegion(j int) rdmakv.RegionID { return rdmakv.RegionID(s.n + j) }

// remoteDelta returns shard j's delta table through the fabric (opened
// once, like RemoteTable).
func (s *Store) remoteDelta(ctx context.Context, from rdmakv.NodeID, j int) (*rdmakv.RemoteDelta, error) {
	sh := s.rc
	sh.mu.Lock()
	rd := sh.rdelta[j]
	sh.mu.Unlock()
	if rd != nil {
		return rd, nil
	}
	rd, err := rdmakv.OpenRemoteDelta(ctx, s.fabric, from, s.NodeOf(j), s.deltaRegion(j))
	if err != nil {
		return nil, err
	}
	sh.mu.Lock()
	if sh.rdelta[j] == nil {
		sh.rdelta[j] = rd
	}
	rd = sh.rdelta[j]
	sh.mu.Unlock()
	return rd, nil
}

// ShardView is the store as seen by an engine running on one local shard:
// keys owned by a shard of the same node are read from its region
// directly, others through the fabric (READ bucket chain, READ value).
//
// Append* methods append to dst and return it (grown as append does);
// nothing returned aliases the store, so results stay valid after Close.
// Absent keys append nothing; errors come only from the fabric.
type ShardView struct {
	s     *Store
	id    int
	node  rdmakv.NodeID
	table *rdmakv.Table
}

// ID returns the shard number.
func (v *ShardView) ID() int { return v.id }

// Node returns the node hosting the shard.
func (v *ShardView) Node() rdmakv.NodeID { return v.node }

// Store returns the store.
func (v *ShardView) Store() *Store { return v.s }

// IsLocal reports whether the edges of vertex vtx can be read without the
// fabric from this shard (it or a shard of the same node owns vtx).
func (v *ShardView) IsLocal(vtx ID) bool {
	if vtx == IndexVertex {
		return true
	}
	o := v.s.Owner(vtx)
	return o == v.id || (v.s.NodeOf(o) == v.node && v.s.tables[o] != nil)
}

// edgeBatchScratch holds AppendEdgesBatch's buffers between calls.
type edgeBatchScratch struct {
	lookups  []rdmakv.Lookup
	remoteAt []int
	rvals    []uint64
	rends    []int
}

var edgeBatchPool = sync.Pool{New: func() any { return new(edgeBatchScratch) }}

func asU64(s []ID) []uint64 {
	if cap(s) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(s))), cap(s))[:len(s)]
}

func asKeys(s []Key) []uint64 {
	if cap(s) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(s))), cap(s))[:len(s)]
}

func asIDs(s []uint64) []ID {
	if cap(s) == 0 {
		return nil
	}
	return unsafe.Slice((*ID)(unsafe.Pointer(unsafe.SliceData(s))), cap(s))[:len(s)]
}

// AppendEdges appends the sorted neighbour list of (vtx, p, d) to dst.
// vtx = IndexVertex reads this shard's index; p = AllPredicates the
// predicates of vtx.
func (v *ShardView) AppendEdges(ctx context.Context, dst []ID, vtx, p ID, d Dir) ([]ID, error) {
	if vtx > MaxID || p > MaxPredicate || d > Out {
		return dst, nil // no such key can exist
	}
	k := MakeKey(vtx, p, d)
	o := v.id
	if vtx != IndexVertex {
		o = v.s.Owner(vtx)
	}
	if o == v.id || (v.s.NodeOf(o) == v.node && v.s.tables[o] != nil) {
		start := len(dst)
		dst = asIDs(v.s.tables[o].AppendValues(asU64(dst), uint64(k)))
		if v.s.deltaOn[o] {
			dst = v.s.mergeLocalDelta(dst, start, o, k)
		}
		return dst, nil
	}
	rt, err := v.s.RemoteTable(ctx, v.node, o)
	if err != nil {
		return dst, fmt.Errorf("shard %d: %w", o, err)
	}
	start := len(dst)
	r, err := rt.AppendValues(ctx, v.node, asU64(dst), uint64(k))
	if err != nil {
		return dst, fmt.Errorf("cannot read %v from shard %d: %w", k, o, err)
	}
	dst = asIDs(r)
	if v.s.deltaOn[o] {
		rd, err := v.s.remoteDelta(ctx, v.node, o)
		if err != nil {
			return dst, fmt.Errorf("shard %d: %w", o, err)
		}
		tg, _, err := rdmakv.LookupDeltaBatch(ctx, v.s.fabric, v.node, []rdmakv.DeltaLookup{{Delta: rd, Key: uint64(k)}}, v.s.stamp, nil, nil)
		if err != nil {
			return dst, fmt.Errorf("cannot read the delta of %v from shard %d: %w", k, o, err)
		}
		dst = mergeToggles(dst, start, tg)
	}
	return dst, nil
}

// AppendIndex appends this shard's index vertex (IndexVertex, p, d): for
// d = Out the local subjects having p, for d = In the local objects of p,
// or, for a class p, its local instances.
func (v *ShardView) AppendIndex(dst []ID, p ID, d Dir) []ID {
	k := MakeKey(IndexVertex, p, d)
	start := len(dst)
	dst = asIDs(v.table.AppendValues(asU64(dst), uint64(k)))
	if v.s.deltaOn[v.id] {
		dst = v.s.mergeLocalDelta(dst, start, v.id, k)
	}
	return dst
}

// AppendPredicates appends the predicates having a local d-edge
// (rdf:type included for Out).
func (v *ShardView) AppendPredicates(dst []ID, d Dir) []ID {
	return v.AppendIndex(dst, AllPredicates, d)
}

// AppendEdgesBatch appends the lists of all keys to dst in order and sets
// ends[i] to the end of key i's list in dst (its start is ends[i-1], or
// len(dst) on entry). Keys read through the fabric go in one batched
// lookup: usually one ReadBatch round for the buckets and one for the
// values, each one round trip per peer. ends is reused if it has room.
func (v *ShardView) AppendEdgesBatch(ctx context.Context, keys []Key, dst []ID, ends []int) ([]ID, []int, error) {
	return v.appendBatch(ctx, keys, -1, dst, ends)
}

// AppendShardBatch is AppendEdgesBatch for keys that all belong to shard
// shard, index vertices included (its index, not this shard's): an
// engine's read of another shard's lists.
func (v *ShardView) AppendShardBatch(ctx context.Context, shard int, keys []Key, dst []ID, ends []int) ([]ID, []int, error) {
	if shard < 0 || shard >= v.s.n {
		return dst, ends[:0], fmt.Errorf("no shard %d of %d", shard, v.s.n)
	}
	return v.appendBatch(ctx, keys, shard, dst, ends)
}

// keyOwner returns the shard whose list key k is: shard if ≥ 0, else the
// vertex's owner (this shard for an index vertex).
func (v *ShardView) keyOwner(k Key, shard int) int {
	switch {
	case shard >= 0:
		return shard
	case k.Vertex() == IndexVertex:
		return v.id
	}
	return v.s.Owner(k.Vertex())
}

// localShard reports whether shard o's table is in this process on this
// view's node.
func (v *ShardView) localShard(o int) bool {
	return o == v.id || (v.s.NodeOf(o) == v.node && v.s.tables[o] != nil)
}

func (v *ShardView) appendBatch(ctx context.Context, keys []Key, shard int, dst []ID, ends []int) ([]ID, []int, error) {
	ends = ends[:0]
	start0 := len(dst)
	bs := edgeBatchPool.Get().(*edgeBatchScratch)
	defer func() {
		clear(bs.lookups)
		bs.lookups, bs.remoteAt, bs.rvals, bs.rends = bs.lookups[:0], bs.remoteAt[:0], bs.rvals[:0], bs.rends[:0]
		edgeBatchPool.Put(bs)
	}()
	lookups, remoteAt := bs.lookups[:0], bs.remoteAt[:0]
	for i, k := range keys {
		if o := v.keyOwner(k, shard); !v.localShard(o) {
			rt, err := v.s.RemoteTable(ctx, v.node, o)
			if err != nil {
				return dst, ends, fmt.Errorf("shard %d: %w", o, err)
			}
			lookups = append(lookups, rdmakv.Lookup{Table: rt, Key: uint64(k)})
			remoteAt = append(remoteAt, i)
		}
	}
	bs.lookups, bs.remoteAt = lookups, remoteAt
	rvals, rends := bs.rvals[:0], bs.rends[:0]
	if len(lookups) > 0 {
		var err error
		rvals, rends, err = rdmakv.LookupBatch(ctx, v.s.fabric, v.node, lookups, rvals, rends)
		bs.rvals, bs.rends = rvals, rends
		if err != nil {
			return dst, ends, fmt.Errorf("cannot read %d keys through the fabric: %w", len(lookups), err)
		}
	}
	ri, rstart := 0, 0
	for i := 0; i < len(keys); {
		if ri < len(remoteAt) && remoteAt[ri] == i {
			dst = append(dst, asIDs(rvals[rstart:rends[ri]])...)
			rstart = rends[ri]
			ri++
			ends = append(ends, len(dst))
			i++
			continue
		}
		// A run of local keys of one table, looked up together.
		o := v.keyOwner(keys[i], shard)
		j := i + 1
		for j < len(keys) && (ri >= len(remoteAt) || remoteAt[ri] != j) && v.keyOwner(keys[j], shard) == o {
			j++
		}
		var d []uint64
		d, ends = v.s.tables[o].AppendValuesBatch(asU64(dst), asKeys(keys[i:j]), ends)
		dst = asIDs(d)
		i = j
	}
	if v.s.hasDelta() {
		return v.mergeBatchDelta(ctx, keys, shard, dst, start0, ends)
	}
	return dst, ends, nil
}

// SizeBytes returns the bytes of the dictionary's tables (arena, offsets,
// hash table, roles, prefixes).
func (d *Dict) SizeBytes() int {
	return len(d.arena) + len(d.offs) + len(d.table) + len(d.roles) + int(d.prefixes.bytes())
}

// RegionBytes returns the total size of the local shards' regions.
func (s *Store) RegionBytes() int {
	n := 0
	for _, r := range s.regions {
		if r != nil {
			n += r.Len()
		}
	}
	return n
}

// StoreSizes breaks down the memory of a store's local shards and its
// dictionary, in bytes (for capacity planning and the benchmarks).
type StoreSizes struct {
	Keys        uint64 // keys in the local shards' tables
	Buckets     uint64 // buckets (main + overflow)
	MainBuckets uint64
	BucketBytes uint64 // header + buckets
	ValueBytes  uint64 // value areas
	DictArena   uint64
	DictOffsets uint64
	DictHash    uint64
	DictOther   uint64 // roles, prefixes
}

// Sizes returns the breakdown of the store's memory.
func (s *Store) Sizes() StoreSizes {
	var z StoreSizes
	for _, t := range s.tables {
		if t == nil {
			continue
		}
		h := t.Header()
		z.Keys += h.NKeys
		z.Buckets += h.NBuckets
		z.MainBuckets += h.NMain
		z.BucketBytes += h.ValuesOff
		z.ValueBytes += h.NValues * uint64(h.Width)
	}
	d := s.dict
	z.DictArena, z.DictOffsets, z.DictHash = uint64(len(d.arena)), uint64(len(d.offs)), uint64(len(d.table))
	z.DictOther = uint64(len(d.roles)) + d.prefixes.bytes()
	return z
}
