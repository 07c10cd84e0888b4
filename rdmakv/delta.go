package rdmakv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A DeltaTable is the writable companion of a Table: an append-only,
// versioned KV in one registered region, which a peer reads one-sidedly
// exactly as it reads a Table (READ a bucket, READ a value). One writer
// appends; any number of readers, local or through a Fabric, read at the
// same time without locks.
//
// Region layout (little-endian 64-bit words):
//
//	[0, 64)                 header: magic "WKDELTA1", number of main buckets
//	[64, 64+NBuckets*128)   main buckets; overflow buckets are allocated in
//	                        the arena behind them
//	arena                   list blocks and overflow buckets, bump-allocated
//
// A bucket is 8 slots of 16 bytes (DeltaSlotSize): slots 0..6 hold (key,
// ref), slot 7's second word the offset of the next (overflow) bucket, 0 at
// the end of a chain. ref packs a list block's word offset (36 bits) and
// the number of record words committed in it (28 bits); ref 0 is an empty
// slot.
//
// A list block is [key, capacity in words] and then records: groups of a
// stamp word (bit 63 set, then the stamp) and the IDs (bit 63 clear) the
// group toggles. Groups are in stamp order. A reader at stamp s takes the
// groups with stamp ≤ s and stops at the first later one.
//
// Publication: the writer writes records past the committed length (or,
// when the block is full, copies the block to a new one twice as large),
// then stores the slot's ref with one aligned 64-bit store. Committed words
// are never written again and blocks are never reused until the whole
// region is dropped, so a reader that saw a ref reads stable bytes, and it
// validates the block's first word against the key it asked for (what
// catches a torn or stale ref read through a network). A group whose stamp
// is beyond the reader's is simply skipped, which is what makes one region
// serve every version at once.
type DeltaTable struct {
	region   *Region
	words    []uint64 // the region as words
	nbuckets uint64
	top      uint64 // next free word of the arena
	keys     atomic.Int64
	closed   atomic.Bool
}

// Delta layout constants.
const (
	DeltaHeaderSize = 64
	DeltaSlotSize   = 16
	DeltaBucketSize = 8 * DeltaSlotSize
	deltaMagic      = 0x31415444_4c454b57 // "WKDELTA1" little-endian
	deltaStampBit   = 1 << 63
	deltaOffBits    = 36
	deltaLenBits    = 28
	deltaLenMask    = 1<<deltaLenBits - 1
	deltaSlots      = 7
	deltaBlockHdr   = 2
)

// ErrDeltaFull is returned when a delta region has no room left (compact
// the store: its delta is merged into a new base and a new region starts).
var ErrDeltaFull = errors.New("delta region full")

// NewDeltaTable reserves a region of reserve bytes (anonymous memory that
// is committed only as it is written) with nbuckets main buckets (rounded
// up to a power of two).
func NewDeltaTable(reserve int, nbuckets int) (*DeltaTable, error) {
	nb := uint64(1)
	for nb < uint64(nbuckets) {
		nb <<= 1
	}
	min := DeltaHeaderSize + int(nb)*DeltaBucketSize + 1<<16
	if reserve < min {
		reserve = min
	}
	reserve = (reserve + 4095) &^ 4095
	buf, err := unix.Mmap(-1, 0, reserve, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("cannot reserve a delta region of %d bytes: %w", reserve, err)
	}
	// Transparent huge pages where the system offers them on request
	// (advice only; an error changes nothing): a bulk write's appends hash
	// into every bucket page of the region and grow its arena by hundreds
	// of MB, and with 4 KiB pages each key's probe was a TLB miss and each
	// fresh page a fault. A GSP POST of 1.27 M new triples into LUBM-40,
	// 4 shards: its per-shard write 1,752 -> 1,526 ms (medians of 5
	// interleaved pairs, load 3.6-8). A small delta commits at most a huge
	// page more per region than it touches.
	_ = unix.Madvise(buf, unix.MADV_HUGEPAGE)
	words := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(buf))), len(buf)/8)
	words[0] = deltaMagic
	words[1] = nb
	t := &DeltaTable{region: &Region{buf: buf, mapped: true}, words: words, nbuckets: nb,
		top: (DeltaHeaderSize + nb*DeltaBucketSize) / 8}
	return t, nil
}

// Region returns the table's region (register it with a Fabric for peers).
func (t *DeltaTable) Region() *Region { return t.region }

// Keys returns the number of keys with a list.
func (t *DeltaTable) Keys() int { return int(t.keys.Load()) }

// UsedBytes returns the bytes of the region in use (header, buckets and
// arena up to its top).
func (t *DeltaTable) UsedBytes() uint64 { return t.top * 8 }

// Close releases the region. No reader may use it afterwards.
func (t *DeltaTable) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	return t.region.Close()
}

func deltaBucketOf(key, nbuckets uint64) uint64 { return mix64(key) & (nbuckets - 1) }

func deltaRef(off, n uint64) uint64 { return off<<deltaLenBits | n }

func deltaRefParts(ref uint64) (off, n uint64) { return ref >> deltaLenBits, ref & deltaLenMask }

// DeltaUndo records what Append changed, so that Rollback can take it back
// (a version that was built and then dropped before any reader saw it).
type DeltaUndo struct {
	top  uint64
	keys int64
	// saved is in blocks of undoBlock entries, so that the undo of a big
	// write (two entries per new key: millions) grows without copying.
	saved [][]deltaSaved
	valid bool
}

// undoBlock is the entries of one block of DeltaUndo.saved; the first
// block starts at undoFirst.
const (
	undoBlock = 4096
	undoFirst = 16
)

type deltaSaved struct {
	at, old uint64 // word index and its value before
}

// Mark starts recording into u (the state to roll back to).
func (t *DeltaTable) Mark(u *DeltaUndo) {
	if !u.valid {
		*u = DeltaUndo{top: t.top, keys: t.keys.Load(), valid: true}
	}
}

func (t *DeltaTable) store(u *DeltaUndo, at, v uint64) {
	if u != nil {
		// The first block starts small and grows by append (a small
		// write's undo is a few entries: a whole block for it cost a
		// one-triple INSERT ~9 % of its CPU in clearing 64 KiB); a block
		// never holds more than undoBlock entries.
		if n := len(u.saved); n == 0 || len(u.saved[n-1]) == undoBlock {
			c := undoBlock
			if n == 0 {
				c = undoFirst
			}
			u.saved = append(u.saved, make([]deltaSaved, 0, c))
		}
		last := &u.saved[len(u.saved)-1]
		*last = append(*last, deltaSaved{at, atomic.LoadUint64(&t.words[at])})
	}
	atomic.StoreUint64(&t.words[at], v)
}

// Rollback restores the table to the state Mark recorded in u. Readers
// never saw the rolled-back stamps; the words they may still be reading
// are only rewritten by later appends of the same (unpublished) stamps.
func (t *DeltaTable) Rollback(u *DeltaUndo) {
	if !u.valid || t.closed.Load() {
		return
	}
	for b := len(u.saved) - 1; b >= 0; b-- {
		blk := u.saved[b]
		for i := len(blk) - 1; i >= 0; i-- {
			atomic.StoreUint64(&t.words[blk[i].at], blk[i].old)
		}
	}
	t.top = u.top
	t.keys.Store(u.keys)
	*u = DeltaUndo{}
}

// alloc returns the word index of n fresh words.
func (t *DeltaTable) alloc(n uint64) (uint64, error) {
	if t.top+n > uint64(len(t.words)) || t.top+n >= 1<<deltaOffBits {
		return 0, fmt.Errorf("%w: %d bytes in use of %d", ErrDeltaFull, t.top*8, len(t.words)*8)
	}
	at := t.top
	t.top += n
	return at, nil
}

// find returns the word index of key's ref slot, or of the first free slot
// of its chain (free = true), or 0 if the chain is full (the index of the
// last bucket's link word is then returned in link).
func (t *DeltaTable) find(key uint64) (slot uint64, free bool, link uint64) {
	b := (DeltaHeaderSize + deltaBucketOf(key, t.nbuckets)*DeltaBucketSize) / 8
	for {
		for i := uint64(0); i < deltaSlots; i++ {
			at := b + 2*i
			ref := atomic.LoadUint64(&t.words[at+1])
			if ref == 0 {
				return at + 1, true, 0
			}
			if t.words[at] == key {
				return at + 1, false, 0
			}
		}
		next := atomic.LoadUint64(&t.words[b+15])
		if next == 0 {
			return 0, true, b + 15
		}
		b = next / 8
	}
}

// Append adds a group (stamp, ids) to key's list, recording the change in
// u (nil: not undoable). Stamps must not decrease per key. ids must be
// below 2^63.
func (t *DeltaTable) Append(key, stamp uint64, ids []uint64, u *DeltaUndo) error {
	if len(ids) == 0 {
		return nil
	}
	if stamp >= deltaStampBit {
		return fmt.Errorf("BUG: delta stamp %d out of range", stamp)
	}
	slot, free, link := t.find(key)
	if slot == 0 {
		// Chain full: a new overflow bucket.
		nb, err := t.alloc(DeltaBucketSize / 8)
		if err != nil {
			return err
		}
		clear(t.words[nb : nb+DeltaBucketSize/8])
		t.store(u, link, nb*8)
		slot = nb + 1
	}
	var off, n, capw uint64
	if !free {
		off, n = deltaRefParts(atomic.LoadUint64(&t.words[slot]))
		capw = t.words[off+1]
	}
	need := n + 1 + uint64(len(ids))
	if need > deltaLenMask {
		return fmt.Errorf("%w: list of key %#x would have %d words", ErrDeltaFull, key, need)
	}
	if free || need > capw {
		nc := max(2*capw, need, 6)
		if nc > deltaLenMask {
			nc = deltaLenMask
		}
		no, err := t.alloc(deltaBlockHdr + nc)
		if err != nil {
			return err
		}
		t.words[no], t.words[no+1] = key, nc
		if n > 0 {
			copy(t.words[no+deltaBlockHdr:], t.words[off+deltaBlockHdr:off+deltaBlockHdr+n])
		}
		off = no
	}
	w := t.words[off+deltaBlockHdr+n:]
	w[0] = deltaStampBit | stamp
	copy(w[1:], ids)
	if free {
		t.store(u, slot-1, key) // the key before the ref that publishes it
		t.keys.Add(1)
	}
	t.store(u, slot, deltaRef(off, need))
	return nil
}

// Records returns key's committed record words (groups of a stamp word and
// IDs), aliasing the region: valid until the table is closed, never to be
// modified. nil if the key has none.
func (t *DeltaTable) Records(key uint64) []uint64 {
	if t.keys.Load() == 0 {
		return nil
	}
	slot, free, _ := t.find(key)
	if slot == 0 || free {
		return nil
	}
	off, n := deltaRefParts(atomic.LoadUint64(&t.words[slot]))
	return t.words[off+deltaBlockHdr : off+deltaBlockHdr+n : off+deltaBlockHdr+n]
}

// AppendVisible appends the IDs of the groups of recs with a stamp ≤ stamp
// (in record order, not sorted) to dst.
func AppendVisible(dst, recs []uint64, stamp uint64) []uint64 {
	for i := 0; i < len(recs); {
		h := recs[i]
		if h&deltaStampBit == 0 || h&^deltaStampBit > stamp {
			break
		}
		j := i + 1
		for j < len(recs) && recs[j]&deltaStampBit == 0 {
			j++
		}
		dst = append(dst, recs[i+1:j]...)
		i = j
	}
	return dst
}

// StampedIn reports whether recs has a group with a stamp in (after,
// upto]: whether the list changed (or may have: a group can toggle an ID
// twice) between a reader at stamp after and one at upto.
func StampedIn(recs []uint64, after, upto uint64) bool {
	for _, x := range recs {
		if x&deltaStampBit == 0 {
			continue
		}
		if st := x &^ deltaStampBit; st > upto {
			return false
		} else if st > after {
			return true
		}
	}
	return false
}

// Toggled reports whether v occurs an odd number of times in the groups
// of recs with a stamp ≤ stamp (v entered or left the list once more than
// it did the other), without copying them.
func Toggled(recs []uint64, v, stamp uint64) bool {
	odd := false
	for _, x := range recs {
		if x&deltaStampBit != 0 {
			if x&^deltaStampBit > stamp {
				break
			}
			continue
		}
		if x == v {
			odd = !odd
		}
	}
	return odd
}

// RemoteDelta is a peer's DeltaTable read through a Fabric (bucket READs,
// then the block READ), without the peer's CPU.
type RemoteDelta struct {
	f        Fabric
	node     NodeID
	region   RegionID
	nbuckets uint64
}

// OpenRemoteDelta READs the header of the delta table in region region of
// node.
func OpenRemoteDelta(ctx context.Context, f Fabric, from, node NodeID, region RegionID) (*RemoteDelta, error) {
	var hb [DeltaHeaderSize]byte
	if err := f.Read(ctx, from, ReadRequest{Node: node, Region: region, Dst: hb[:]}); err != nil {
		return nil, fmt.Errorf("cannot read delta header of node %d region %d: %w", node, region, err)
	}
	if binary.LittleEndian.Uint64(hb[:]) != deltaMagic {
		return nil, fmt.Errorf("delta of node %d region %d: %w: bad magic", node, region, ErrCorrupt)
	}
	nb := binary.LittleEndian.Uint64(hb[8:])
	if nb == 0 || nb&(nb-1) != 0 || nb > 1<<32 {
		return nil, fmt.Errorf("delta of node %d region %d: %w: %d buckets", node, region, ErrCorrupt, nb)
	}
	return &RemoteDelta{f: f, node: node, region: region, nbuckets: nb}, nil
}

// DeltaLookup is one key of LookupDeltaBatch.
type DeltaLookup struct {
	Delta *RemoteDelta
	Key   uint64
}

// LookupDeltaBatch reads the records of every lookup's key through f on
// behalf of from: one ReadBatch for the first buckets, one per further
// chain level, one for all blocks. It appends each key's visible IDs at
// stamp (AppendVisible) to dst and sets ends like LookupBatch.
func LookupDeltaBatch(ctx context.Context, f Fabric, from NodeID, lookups []DeltaLookup, stamp uint64, dst []uint64, ends []int) ([]uint64, []int, error) {
	ends = ends[:0]
	n := len(lookups)
	if n == 0 {
		return dst, ends, nil
	}
	type state struct {
		bucket uint64 // byte offset
		ref    uint64
		done   bool
	}
	st := make([]state, n)
	buckets := make([]byte, n*DeltaBucketSize)
	var reqs []ReadRequest
	var idx []int
	for i, l := range lookups {
		st[i].bucket = DeltaHeaderSize + deltaBucketOf(l.Key, l.Delta.nbuckets)*DeltaBucketSize
	}
	for hop := 0; ; hop++ {
		reqs, idx = reqs[:0], idx[:0]
		for i := range lookups {
			if st[i].done {
				continue
			}
			if hop > 1<<20 {
				return dst, ends, fmt.Errorf("delta key %#x: %w: chain too long", lookups[i].Key, ErrCorrupt)
			}
			d := lookups[i].Delta
			reqs = append(reqs, ReadRequest{Node: d.node, Region: d.region, Offset: st[i].bucket, Dst: buckets[i*DeltaBucketSize : (i+1)*DeltaBucketSize]})
			idx = append(idx, i)
		}
		if len(reqs) == 0 {
			break
		}
		if err := f.ReadBatch(ctx, from, reqs); err != nil {
			return dst, ends, fmt.Errorf("cannot read delta buckets: %w", err)
		}
		for _, i := range idx {
			b := buckets[i*DeltaBucketSize : (i+1)*DeltaBucketSize]
			s := &st[i]
			s.done = true
			for k := 0; k < deltaSlots; k++ {
				ref := binary.LittleEndian.Uint64(b[k*16+8:])
				if ref == 0 {
					break
				}
				if binary.LittleEndian.Uint64(b[k*16:]) == lookups[i].Key {
					s.ref = ref
					break
				}
				if k == deltaSlots-1 {
					if next := binary.LittleEndian.Uint64(b[7*16+8:]); next != 0 {
						s.bucket, s.done = next, false
					}
				}
			}
		}
	}
	reqs, idx = reqs[:0], idx[:0]
	var total uint64
	for i := range st {
		if st[i].ref != 0 {
			_, nw := deltaRefParts(st[i].ref)
			total += (deltaBlockHdr + nw) * 8
		}
	}
	blocks := make([]byte, total)
	var at uint64
	for i := range st {
		if st[i].ref == 0 {
			continue
		}
		off, nw := deltaRefParts(st[i].ref)
		sz := (deltaBlockHdr + nw) * 8
		d := lookups[i].Delta
		reqs = append(reqs, ReadRequest{Node: d.node, Region: d.region, Offset: off * 8, Dst: blocks[at : at+sz]})
		idx = append(idx, i)
		at += sz
	}
	if len(reqs) > 0 {
		if err := f.ReadBatch(ctx, from, reqs); err != nil {
			return dst, ends, fmt.Errorf("cannot read delta lists: %w", err)
		}
	}
	ri := 0
	var recs []uint64
	for i := range lookups {
		if ri < len(idx) && idx[ri] == i {
			b := reqs[ri].Dst
			if binary.LittleEndian.Uint64(b) != lookups[i].Key {
				return dst, ends, fmt.Errorf("delta key %#x: %w: block belongs to key %#x", lookups[i].Key, ErrCorrupt, binary.LittleEndian.Uint64(b))
			}
			recs = recs[:0]
			for j := deltaBlockHdr * 8; j < len(b); j += 8 {
				recs = append(recs, binary.LittleEndian.Uint64(b[j:]))
			}
			dst = AppendVisible(dst, recs, stamp)
			ri++
		}
		ends = append(ends, len(dst))
	}
	return dst, ends, nil
}
