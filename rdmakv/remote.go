package rdmakv

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
)

// RemoteTable is a view of a table in a peer's region, read through a
// Fabric: a lookup READs the key's bucket (and the overflow buckets of its
// chain), then READs the value unless it is inline in the slot. The peer's
// CPU takes no part. It is safe for concurrent use.
type RemoteTable struct {
	f      Fabric
	node   NodeID
	region RegionID
	h      TableHeader
}

// OpenRemoteTable READs the header of the table at the start of region
// region of node and returns a view of it; from is the local node on whose
// behalf reads are made.
func OpenRemoteTable(ctx context.Context, f Fabric, from, node NodeID, region RegionID) (*RemoteTable, error) {
	var hb [HeaderSize]byte
	if err := f.Read(ctx, from, ReadRequest{Node: node, Region: region, Dst: hb[:]}); err != nil {
		return nil, fmt.Errorf("cannot read table header of node %d region %d: %w", node, region, err)
	}
	h, err := ParseTableHeader(hb[:], math.MaxUint64)
	if err != nil {
		return nil, fmt.Errorf("table of node %d region %d: %w", node, region, err)
	}
	return &RemoteTable{f: f, node: node, region: region, h: h}, nil
}

// Header returns the table's header.
func (t *RemoteTable) Header() TableHeader { return t.h }

// Node returns the node holding the table.
func (t *RemoteTable) Node() NodeID { return t.node }

// AppendValues appends key's list to dst, reading it through the fabric on
// behalf of local node from. An absent key appends nothing.
func (t *RemoteTable) AppendValues(ctx context.Context, from NodeID, dst []uint64, key uint64) ([]uint64, error) {
	// The buffers escape through the Fabric interface; pooling them saves
	// two allocations per lookup (BenchmarkTableLookupRemote).
	sc := lookupScratchPool.Get().(*lookupScratch)
	defer lookupScratchPool.Put(sc)
	bucket := &sc.bucket
	b := t.h.Bucket(key)
	var w uint64
	for hop := uint64(0); ; hop++ {
		if b >= t.h.NBuckets || hop > t.h.NBuckets {
			return dst, fmt.Errorf("key %#x on node %d: %w: chain leaves the table", key, t.node, ErrCorrupt)
		}
		req := ReadRequest{Node: t.node, Region: t.region, Offset: t.h.BucketOffset(b), Dst: bucket[:t.h.BucketBytes()]}
		if err := t.f.Read(ctx, from, req); err != nil {
			return dst, fmt.Errorf("cannot read bucket: %w", err)
		}
		var next uint64
		var r slotResult
		w, next, r = t.h.search(bucket[:t.h.BucketBytes()], key)
		if r == slotAbsent {
			return dst, nil
		}
		if r == slotFound {
			break
		}
		b = next
	}
	inline, v, ref := decodeWord(w)
	if inline {
		return append(dst, v), nil
	}
	if ref.escaped || ref.n > 16 {
		// Long lists: the general path sizes its buffers.
		dst, _, err := LookupBatch(ctx, t.f, from, []Lookup{{Table: t, Key: key}}, dst, nil)
		return dst, err
	}
	wd := uint64(t.h.Width)
	if ref.off > t.h.NValues || ref.n > t.h.NValues-ref.off {
		return dst, fmt.Errorf("key %#x on node %d: %w: list outside the value area", key, t.node, ErrCorrupt)
	}
	raw := &sc.raw
	req := ReadRequest{Node: t.node, Region: t.region, Offset: t.h.ValuesOff + ref.off*wd, Dst: raw[:ref.n*wd]}
	if err := t.f.Read(ctx, from, req); err != nil {
		return dst, fmt.Errorf("cannot read values: %w", err)
	}
	return appendDecoded(dst, raw[:ref.n*wd], t.h.Width), nil
}

type lookupScratch struct {
	bucket [BucketSize]byte
	raw    [16 * 8]byte
}

var lookupScratchPool = sync.Pool{New: func() any { return new(lookupScratch) }}

// batchScratch holds LookupBatch's buffers between calls (they escape
// through the Fabric interface; pooling saves their allocation and
// zeroing, see BenchmarkTableLookupRemoteBatch256).
type batchScratch struct {
	st      []lookupState
	buckets []byte
	reqs    []ReadRequest
	idx     []int
	vals    []byte
	lens    []byte
}

var batchScratchPool = sync.Pool{New: func() any { return new(batchScratch) }}

// release returns the scratch to the pool, dropping references to caller
// memory and not keeping very large buffers.
func (b *batchScratch) release() {
	clear(b.reqs[:cap(b.reqs)])
	clear(b.st[:cap(b.st)])
	if cap(b.vals) > 1<<20 {
		b.vals = nil
	}
	batchScratchPool.Put(b)
}

// growTo returns (*s)[:n], reallocating if needed.
func growTo[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	}
	*s = (*s)[:n]
	return *s
}

// Lookup is one key of a batched lookup.
type Lookup struct {
	Table *RemoteTable
	Key   uint64
}

type lookupState struct {
	bucket uint64
	word   uint64
	found  bool
	done   bool
	ref    valueRef
	raw    []byte
}

// LookupBatch looks up many keys, of any peers, through f on behalf of
// from, in as few rounds as the data allows: one ReadBatch for all first
// buckets, one per further chain level, one for escaped lengths (rare) and
// one for all values. It appends each key's list to dst in order and
// records in ends[i] the end of lookup i's list in dst (its start is the
// previous end, or len(dst) on entry for i = 0); ends is reused if it has
// the capacity.
func LookupBatch(ctx context.Context, f Fabric, from NodeID, lookups []Lookup, dst []uint64, ends []int) ([]uint64, []int, error) {
	ends = ends[:0]
	if len(lookups) == 0 {
		return dst, ends, nil
	}
	bs := batchScratchPool.Get().(*batchScratch)
	defer bs.release()
	n := len(lookups)
	st := growTo(&bs.st, n)
	clear(st)
	buckets := growTo(&bs.buckets, n*BucketSize)
	reqs := growTo(&bs.reqs, n)[:0]
	idx := growTo(&bs.idx, n)[:0]
	for i := range lookups {
		st[i].bucket = lookups[i].Table.h.Bucket(lookups[i].Key)
	}
	// Bucket rounds.
	for hop := 0; ; hop++ {
		reqs, idx = reqs[:0], idx[:0]
		for i := range lookups {
			s := &st[i]
			if s.done {
				continue
			}
			t := lookups[i].Table
			if s.bucket >= t.h.NBuckets || uint64(hop) > t.h.NBuckets {
				return dst, ends, fmt.Errorf("key %#x on node %d: %w: chain leaves the table", lookups[i].Key, t.node, ErrCorrupt)
			}
			reqs = append(reqs, ReadRequest{Node: t.node, Region: t.region, Offset: t.h.BucketOffset(s.bucket),
				Dst: buckets[i*BucketSize : i*BucketSize+int(t.h.BucketBytes())]})
			idx = append(idx, i)
		}
		if len(reqs) == 0 {
			break
		}
		if err := f.ReadBatch(ctx, from, reqs); err != nil {
			return dst, ends, fmt.Errorf("cannot read buckets: %w", err)
		}
		for _, i := range idx {
			s := &st[i]
			t := lookups[i].Table
			w, next, r := t.h.search(buckets[i*BucketSize:i*BucketSize+int(t.h.BucketBytes())], lookups[i].Key)
			switch r {
			case slotFound:
				s.word, s.found, s.done = w, true, true
			case slotAbsent:
				s.done = true
			case slotChain:
				s.bucket = next
			}
		}
	}
	// Escaped lengths (lists of 2^27 or more values).
	reqs, idx = reqs[:0], idx[:0]
	var lens []byte
	for i := range st {
		s := &st[i]
		if !s.found {
			continue
		}
		var inline bool
		inline, _, s.ref = decodeWord(s.word)
		if !inline && s.ref.escaped {
			idx = append(idx, i)
		}
	}
	if len(idx) > 0 {
		lens = growTo(&bs.lens, 8*len(idx))
		for k, i := range idx {
			t := lookups[i].Table
			reqs = append(reqs, ReadRequest{Node: t.node, Region: t.region,
				Offset: t.h.ValuesOff + st[i].ref.off*uint64(t.h.Width), Dst: lens[8*k : 8*k+8]})
		}
		if err := f.ReadBatch(ctx, from, reqs); err != nil {
			return dst, ends, fmt.Errorf("cannot read list lengths: %w", err)
		}
		for k, i := range idx {
			st[i].ref.n = binary.LittleEndian.Uint64(lens[8*k:])
		}
	}
	// Values.
	reqs = reqs[:0]
	var total uint64
	for i := range st {
		s := &st[i]
		if !s.found || s.word&inlineBit != 0 {
			continue
		}
		t := lookups[i].Table
		w := uint64(t.h.Width)
		skip := uint64(0)
		if s.ref.escaped {
			skip = 8 / w
		}
		if s.ref.off > t.h.NValues || s.ref.n > t.h.NValues-s.ref.off || s.ref.n+skip > t.h.NValues-s.ref.off {
			return dst, ends, fmt.Errorf("key %#x on node %d: %w: list outside the value area", lookups[i].Key, t.node, ErrCorrupt)
		}
		total += s.ref.n * w
	}
	if total > 0 {
		vals := growTo(&bs.vals, int(total))
		var pos uint64
		for i := range st {
			s := &st[i]
			if !s.found || s.word&inlineBit != 0 {
				continue
			}
			t := lookups[i].Table
			w := uint64(t.h.Width)
			off := t.h.ValuesOff + s.ref.off*w
			if s.ref.escaped {
				off += 8
			}
			s.raw = vals[pos : pos+s.ref.n*w]
			pos += s.ref.n * w
			reqs = append(reqs, ReadRequest{Node: t.node, Region: t.region, Offset: off, Dst: s.raw})
		}
		if err := f.ReadBatch(ctx, from, reqs); err != nil {
			return dst, ends, fmt.Errorf("cannot read values: %w", err)
		}
	}
	for i := range st {
		s := &st[i]
		if s.found {
			if s.word&inlineBit != 0 {
				dst = append(dst, s.word&^inlineBit)
			} else {
				dst = appendDecoded(dst, s.raw, lookups[i].Table.h.Width)
			}
		}
		ends = append(ends, len(dst))
	}
	return dst, ends, nil
}
