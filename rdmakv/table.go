package rdmakv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Table layout in a region (all integers little-endian):
//
//	offset 0    header (HeaderSize = 64 bytes)
//	              0  magic     [8]byte "WKKVTBL1"
//	              8  version   uint32 (TableVersion)
//	             12  width     uint32 bytes per stored value: 3 (version 2), 4 or 8
//	             16  nMain     uint64 main buckets (the hash range)
//	             24  nBuckets  uint64 main + overflow buckets
//	             32  nKeys     uint64
//	             40  valuesOff uint64 byte offset of the value area
//	             48  nValues   uint64 value elements (of width bytes)
//	             56  seed      uint64 hash seed
//	offset 64   buckets: nBuckets × BucketSize (128) bytes; bucket b at 64+128·b.
//	            A bucket is 8 slots of 16 bytes: key uint64, word uint64.
//	            Slots 0..6 hold entries, filled in order (so an empty slot
//	            ends the search). Slot 7 holds an entry (word ≠ 0: a main
//	            bucket with exactly 8 keys, version 2 only) or chains: its
//	            key field is the index of the overflow bucket (0 = no
//	            chain; bucket 0 is a main bucket, never an overflow
//	            target), its word is 0. Buckets
//	            0..nMain-1 are the main buckets; overflow buckets follow,
//	            packed (one may hold the overflow of several main buckets,
//	            and chains to the next when a main bucket's overflow run
//	            continues there): a lookup walks its chain until it finds
//	            the key, an empty slot, or a full bucket without a chain.
//	valuesOff   the value area: nValues elements of width bytes; a list is
//	            a run of sorted elements.
//
// Version 3 (compact slots) differs only in the buckets: a bucket is 8
// slots of 12 bytes (96 bytes), each a 48-bit key and a 48-bit word, both
// little-endian. Its header's version field holds 3 in its low 16 bits,
// then lenBits (byte 10) and offBits (byte 11) of the word; its width
// field holds the width (byte 12), then gapLo (byte 13) and gapLen (byte
// 14): bits [gapLo, gapLo+gapLen) are zero in every key, and a key is
// stored without them (key>>(gapLo+gapLen)<<gapLo | key&(1<<gapLo-1)),
// which must fit 48 bits. Slot 7's chain index is 48 bits. The word:
//
//	0                    empty slot
//	bit 47 = 1           inline single value: word & (1<<47-1)
//	bit 47 = 0, word ≠ 0 length (lenBits) << offBits | element offset
//	                     (offBits); a length of all ones (1<<lenBits-1)
//	                     means escaped, as lenEscape below
//
// The builder writes version 3 whenever the keys, the inline values, the
// lists' lengths and the value area fit (graph-store tables with IDs below
// 2^32 and a few thousand predicates: a quarter less bucket space), else
// version 2.
//
// The word of an entry slot:
//
//	0                    empty slot
//	bit 63 = 1           inline single value: the value is word & (1<<63-1)
//	bit 63 = 0, word ≠ 0 bits 62..36 length (27 bits), bits 35..0 element
//	                     offset into the value area (36 bits). A length of
//	                     lenEscape means the list is longer: its real length
//	                     is a uint64 in the 8 bytes at the offset, and the
//	                     elements follow those 8 bytes. The builder also
//	                     escapes every list of longList (64 Ki − 1) elements
//	                     or more in a table of 4- or 8-byte values, so that
//	                     version 3's length field stays within 16 bits.
const (
	HeaderSize     = 64
	SlotSize       = 16
	SlotsPerBucket = 8
	BucketSize     = SlotSize * SlotsPerBucket
	// EntriesPerBucket is the number of key slots in a bucket; the last
	// slot chains to an overflow bucket.
	EntriesPerBucket = SlotsPerBucket - 1
	// TableVersion is the layout version written in the header of a
	// table with 16-byte slots. Version 2 lets a main bucket's slot 7
	// hold an entry; version 1 tables (slot 7 always a chain) are read
	// the same way. CompactTableVersion (3) is the version of a table
	// with 12-byte slots.
	TableVersion        = 2
	CompactTableVersion = 3
	minTableVersion     = 1
	// CompactSlotSize and CompactBucketSize are version 3's slot and
	// bucket sizes.
	CompactSlotSize   = 12
	CompactBucketSize = CompactSlotSize * SlotsPerBucket

	compactMask   = uint64(1)<<48 - 1
	compactInline = uint64(1) << 47

	inlineBit = uint64(1) << 63
	offBits   = 36
	offMask   = uint64(1)<<offBits - 1
	lenBits   = 27
	lenMask   = uint64(1)<<lenBits - 1
)

var tableMagic = [8]byte{'W', 'K', 'K', 'V', 'T', 'B', 'L', '1'}

// lenEscape is the length field value meaning "length stored in the value
// area"; a variable so tests can exercise the escape with short lists.
var lenEscape = lenMask

// ErrCorrupt is returned (wrapped) when a region does not hold a valid table.
var ErrCorrupt = errors.New("corrupt table")

// TableHeader is the decoded header of a table: all a reader needs to find a
// key's bucket. A remote reader fetches it once per peer region.
type TableHeader struct {
	// Version is the layout version (1, 2 or CompactTableVersion); with
	// version 3, GapLo/GapLen are the key bits not stored and
	// LenBits/OffBits the fields of a slot's word.
	Version                         uint32
	GapLo, GapLen, LenBits, OffBits uint8
	Width                           uint32
	NMain                           uint64
	NBuckets                        uint64
	NKeys                           uint64
	ValuesOff                       uint64
	NValues                         uint64
	Seed                            uint64
}

// Size returns the number of region bytes the table occupies.
func (h *TableHeader) Size() uint64 { return h.ValuesOff + h.NValues*uint64(h.Width) }

// BucketOffset returns the region offset of bucket b.
func (h *TableHeader) BucketOffset(b uint64) uint64 { return HeaderSize + b*h.BucketBytes() }

// BucketBytes returns the size of a bucket: BucketSize, or
// CompactBucketSize in a version 3 table.
func (h *TableHeader) BucketBytes() uint64 {
	if h.Version == CompactTableVersion {
		return CompactBucketSize
	}
	return BucketSize
}

// compactKey returns key as a version 3 slot stores it; ok is false for a
// key that no slot can hold (bits in the gap or beyond 48).
func (h *TableHeader) compactKey(key uint64) (uint64, bool) {
	lo, n := h.GapLo, h.GapLen
	if n > 0 {
		gap := (uint64(1)<<n - 1) << lo
		if key&gap != 0 {
			return 0, false
		}
		key = key>>(lo+n)<<lo | key&(uint64(1)<<lo-1)
	}
	return key, key <= compactMask
}

// search looks for key in one bucket's bytes (BucketBytes of them).
func (h *TableHeader) search(bucket []byte, key uint64) (word uint64, next uint64, r slotResult) {
	if h.Version != CompactTableVersion {
		return searchBucket(bucket, key)
	}
	ck, ok := h.compactKey(key)
	if !ok {
		return 0, 0, slotAbsent
	}
	return searchCompactBucket(bucket, ck, h)
}

// searchCompactBucket is searchBucket for a version 3 bucket; key is
// compacted. The word returned is in the version 2 encoding.
func searchCompactBucket(bucket []byte, key uint64, h *TableHeader) (word uint64, next uint64, r slotResult) {
	_ = bucket[CompactBucketSize-1]
	for i := 0; i < EntriesPerBucket; i++ {
		w := binary.LittleEndian.Uint64(bucket[i*CompactSlotSize+4:]) >> 16
		if w == 0 {
			return 0, 0, slotAbsent
		}
		if binary.LittleEndian.Uint64(bucket[i*CompactSlotSize:])&compactMask == key {
			return h.wideWord(w), 0, slotFound
		}
	}
	next = binary.LittleEndian.Uint64(bucket[EntriesPerBucket*CompactSlotSize:]) & compactMask
	if w := binary.LittleEndian.Uint64(bucket[EntriesPerBucket*CompactSlotSize+4:]) >> 16; w != 0 {
		if next == key {
			return h.wideWord(w), 0, slotFound
		}
		return 0, 0, slotAbsent
	}
	if next == 0 {
		return 0, 0, slotAbsent
	}
	return 0, next, slotChain
}

// wideWord turns a version 3 word into the version 2 encoding.
func (h *TableHeader) wideWord(w uint64) uint64 {
	if w&compactInline != 0 {
		return inlineBit | w&^compactInline
	}
	n := w >> h.OffBits & (uint64(1)<<h.LenBits - 1)
	if n == uint64(1)<<h.LenBits-1 {
		n = lenEscape
	}
	return n<<offBits | w&(uint64(1)<<h.OffBits-1)
}

// compactWord turns a version 2 word into h's version 3 encoding.
func (h *TableHeader) compactWord(w uint64) uint64 {
	if w&inlineBit != 0 {
		return compactInline | w&^inlineBit
	}
	n := w >> offBits & lenMask
	if n == lenEscape {
		n = uint64(1)<<h.LenBits - 1
	}
	return n<<h.OffBits | w&offMask
}

// Bucket returns the main bucket of key.
func (h *TableHeader) Bucket(key uint64) uint64 {
	hi, _ := bits.Mul64(mix64(key^h.Seed), h.NMain)
	return hi
}

// mix64 is a 64-bit finalizer (murmur3 fmix64): every input bit affects
// every output bit, so keys differing only in the vertex or predicate field
// spread over all buckets.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// ParseTableHeader decodes and validates a table header against the size of
// the region holding it.
func ParseTableHeader(b []byte, regionLen uint64) (TableHeader, error) {
	var h TableHeader
	if len(b) < HeaderSize {
		return h, fmt.Errorf("%w: header truncated (%d bytes)", ErrCorrupt, len(b))
	}
	if [8]byte(b[:8]) != tableMagic {
		return h, fmt.Errorf("%w: bad magic %q", ErrCorrupt, b[:8])
	}
	if v := binary.LittleEndian.Uint32(b[8:]); (v < minTableVersion || v > TableVersion) && uint16(v) != CompactTableVersion {
		return h, fmt.Errorf("%w: table version %d, this build reads %d to %d", ErrCorrupt, v, minTableVersion, CompactTableVersion)
	}
	h.Version = binary.LittleEndian.Uint32(b[8:])
	h.Width = binary.LittleEndian.Uint32(b[12:])
	if v := binary.LittleEndian.Uint16(b[8:]); v == CompactTableVersion {
		h.Version, h.LenBits, h.OffBits = CompactTableVersion, b[10], b[11]
		h.Width, h.GapLo, h.GapLen = uint32(b[12]), b[13], b[14]
		if b[15] != 0 || h.LenBits == 0 || h.OffBits == 0 || int(h.LenBits)+int(h.OffBits) > 47 || int(h.GapLo)+int(h.GapLen) > 64 || h.Width == 8 {
			return h, fmt.Errorf("%w: version 3 fields %v", ErrCorrupt, b[10:16])
		}
	}
	h.NMain = binary.LittleEndian.Uint64(b[16:])
	h.NBuckets = binary.LittleEndian.Uint64(b[24:])
	h.NKeys = binary.LittleEndian.Uint64(b[32:])
	h.ValuesOff = binary.LittleEndian.Uint64(b[40:])
	h.NValues = binary.LittleEndian.Uint64(b[48:])
	h.Seed = binary.LittleEndian.Uint64(b[56:])
	switch {
	case h.Width != 3 && h.Width != 4 && h.Width != 8:
		return h, fmt.Errorf("%w: value width %d", ErrCorrupt, h.Width)
	case h.NMain == 0 || h.NBuckets < h.NMain || h.NBuckets > (math.MaxUint64-HeaderSize)/BucketSize:
		return h, fmt.Errorf("%w: bucket counts %d/%d", ErrCorrupt, h.NMain, h.NBuckets)
	case h.ValuesOff != HeaderSize+h.NBuckets*h.BucketBytes():
		return h, fmt.Errorf("%w: value area at %d", ErrCorrupt, h.ValuesOff)
	case h.NValues > (math.MaxUint64-h.ValuesOff)/8 || h.Size() > regionLen:
		return h, fmt.Errorf("%w: table of %d values does not fit the region of %d bytes", ErrCorrupt, h.NValues, regionLen)
	case h.NKeys > h.NBuckets*SlotsPerBucket:
		return h, fmt.Errorf("%w: %d keys in %d buckets", ErrCorrupt, h.NKeys, h.NBuckets)
	}
	return h, nil
}

func (h *TableHeader) encode(b []byte) {
	copy(b, tableMagic[:])
	if h.Version == CompactTableVersion {
		binary.LittleEndian.PutUint16(b[8:], CompactTableVersion)
		b[10], b[11], b[12], b[13], b[14], b[15] = h.LenBits, h.OffBits, byte(h.Width), h.GapLo, h.GapLen, 0
	} else {
		binary.LittleEndian.PutUint32(b[8:], TableVersion)
		binary.LittleEndian.PutUint32(b[12:], h.Width)
	}
	binary.LittleEndian.PutUint64(b[16:], h.NMain)
	binary.LittleEndian.PutUint64(b[24:], h.NBuckets)
	binary.LittleEndian.PutUint64(b[32:], h.NKeys)
	binary.LittleEndian.PutUint64(b[40:], h.ValuesOff)
	binary.LittleEndian.PutUint64(b[48:], h.NValues)
	binary.LittleEndian.PutUint64(b[56:], h.Seed)
}

// slotResult is what searching one bucket found.
type slotResult uint8

const (
	slotAbsent slotResult = iota // the key is not in the table
	slotFound                    // word holds the entry
	slotChain                    // continue in bucket next
)

// searchBucket looks for key in one bucket's bytes.
func searchBucket(bucket []byte, key uint64) (word uint64, next uint64, r slotResult) {
	_ = bucket[BucketSize-1]
	for i := 0; i < EntriesPerBucket; i++ {
		w := binary.LittleEndian.Uint64(bucket[i*SlotSize+8:])
		if w == 0 {
			return 0, 0, slotAbsent
		}
		if binary.LittleEndian.Uint64(bucket[i*SlotSize:]) == key {
			return w, 0, slotFound
		}
	}
	next = binary.LittleEndian.Uint64(bucket[EntriesPerBucket*SlotSize:])
	if w := binary.LittleEndian.Uint64(bucket[EntriesPerBucket*SlotSize+8:]); w != 0 {
		// Slot 7 is an entry: the bucket holds exactly 8 keys.
		if next == key {
			return w, 0, slotFound
		}
		return 0, 0, slotAbsent
	}
	if next == 0 {
		return 0, 0, slotAbsent
	}
	return 0, next, slotChain
}

// valueRef is a decoded non-inline entry word.
type valueRef struct {
	off     uint64 // element offset
	n       uint64 // length, or 0 if escaped (read the length first)
	escaped bool
}

func decodeWord(w uint64) (inline bool, v uint64, ref valueRef) {
	if w&inlineBit != 0 {
		return true, w &^ inlineBit, ref
	}
	n := w >> offBits & lenMask
	ref = valueRef{off: w & offMask, n: n}
	if n == lenEscape {
		ref.n, ref.escaped = 0, true
	}
	return false, 0, ref
}

// appendDecoded appends the n values of width bytes in raw to dst.
func appendDecoded(dst []uint64, raw []byte, width uint32) []uint64 {
	if width == 3 {
		n := len(raw) / 3
		raw = raw[:3*n]
		for i := 0; i+2 < len(raw); i += 3 {
			dst = append(dst, uint64(raw[i])|uint64(raw[i+1])<<8|uint64(raw[i+2])<<16)
		}
		return dst
	}
	if width == 4 {
		n := len(raw) / 4
		for i := 0; i < n; i++ {
			dst = append(dst, uint64(binary.LittleEndian.Uint32(raw[4*i:])))
		}
		return dst
	}
	n := len(raw) / 8
	for i := 0; i < n; i++ {
		dst = append(dst, binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return dst
}

// Table is a local, read-only view of a table in a region: lookups read the
// region's bytes directly. It is safe for concurrent use.
type Table struct {
	h   TableHeader
	buf []byte
}

// OpenTable validates the table at the start of r and returns a view of it.
func OpenTable(r *Region) (*Table, error) {
	b := r.Bytes()
	h, err := ParseTableHeader(b, uint64(len(b)))
	if err != nil {
		return nil, err
	}
	return &Table{h: h, buf: b[:h.Size()]}, nil
}

// Header returns the table's header.
func (t *Table) Header() TableHeader { return t.h }

// Len returns the number of keys.
func (t *Table) Len() int { return int(t.h.NKeys) }

// Lookup reports whether key is present and the length of its list.
func (t *Table) Lookup(key uint64) (n int, ok bool) {
	w, ok := t.find(key)
	if !ok {
		return 0, false
	}
	inline, _, ref := decodeWord(w)
	if inline {
		return 1, true
	}
	_, n, ok = t.resolve(ref)
	return n, ok
}

// AppendValues appends key's sorted list to dst and returns it; an absent
// key appends nothing. The table's bytes are not retained in dst.
func (t *Table) AppendValues(dst []uint64, key uint64) []uint64 {
	w, ok := t.find(key)
	if !ok {
		return dst
	}
	inline, v, ref := decodeWord(w)
	if inline {
		return append(dst, v)
	}
	start, n, ok := t.resolve(ref)
	if !ok {
		return dst
	}
	return appendDecoded(dst, t.buf[start:start+uint64(n)*uint64(t.h.Width)], t.h.Width)
}

// Contains reports whether v is in key's sorted list, by binary search
// over the region's encoded values (nothing is decoded or copied).
func (t *Table) Contains(key, v uint64) bool {
	w, ok := t.find(key)
	if !ok {
		return false
	}
	inline, x, ref := decodeWord(w)
	if inline {
		return x == v
	}
	start, n, ok := t.resolve(ref)
	if !ok {
		return false
	}
	width := uint64(t.h.Width)
	raw := t.buf[start : start+uint64(n)*width]
	at := func(i int) uint64 {
		b := raw[uint64(i)*width:]
		switch width {
		case 3:
			return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16
		case 4:
			return uint64(binary.LittleEndian.Uint32(b))
		}
		return binary.LittleEndian.Uint64(b)
	}
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if at(m) < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < n && at(lo) == v
}

// lookupGroup is the number of keys AppendValuesBatch has in flight at
// once: enough misses to keep the memory system busy, few enough that a
// group's buckets and list heads stay in the cache until they are used.
const lookupGroup = 16

// AppendValuesBatch appends the sorted lists of keys to dst in order, as
// AppendValues does key by key, and appends to ends the end of each key's
// list in dst (the start of key i's list is the previous end, or len(dst)
// on entry for i = 0). In a large table a lookup is a cache miss for the
// bucket and another for the list; taking the keys in groups, it reads
// every bucket of a group first, then every list's first element, so that
// a group's misses overlap instead of following one another, and it grows
// dst once per group from the lists' lengths.
func (t *Table) AppendValuesBatch(dst []uint64, keys []uint64, ends []int) ([]uint64, []int) {
	var (
		slot0 [lookupGroup]uint64 // the first slot's word of each bucket
		start [lookupGroup]uint64 // byte offset of each list
		cnt   [lookupGroup]int    // list length (0: absent)
		head  [lookupGroup]uint64 // first element (the inline value)
	)
	width := uint64(t.h.Width)
	for len(keys) > 0 {
		g := keys[:min(len(keys), lookupGroup)]
		keys = keys[len(g):]
		// Buckets: one independent load each.
		for j, k := range g {
			off := t.h.BucketOffset(t.h.Bucket(k))
			if t.h.Version == CompactTableVersion {
				slot0[j] = binary.LittleEndian.Uint64(t.buf[off+4:off+12]) >> 16
			} else {
				slot0[j] = binary.LittleEndian.Uint64(t.buf[off+8 : off+16])
			}
		}
		// Entries, and the first element of each list.
		total := 0
		for j, k := range g {
			cnt[j] = 0
			if slot0[j] == 0 {
				continue // an empty bucket: absent
			}
			w, ok := t.find(k)
			if !ok {
				continue
			}
			inline, v, ref := decodeWord(w)
			if inline {
				cnt[j], head[j] = 1, v
				total++
				continue
			}
			s, n, ok := t.resolve(ref)
			if !ok || n == 0 {
				continue
			}
			start[j], cnt[j] = s, n
			head[j] = decodeAt(t.buf, s, t.h.Width)
			total += n
		}
		dst = slices.Grow(dst, total)
		for j := range g {
			n := cnt[j]
			if n == 0 {
				ends = append(ends, len(dst))
				continue
			}
			at := len(dst)
			dst = dst[:at+n]
			dst[at] = head[j]
			if n > 1 {
				s := start[j] + width
				decodeInto(dst[at+1:], t.buf[s:s+uint64(n-1)*width], t.h.Width)
			}
			ends = append(ends, len(dst))
		}
	}
	return dst, ends
}

// decodeAt returns the element of width bytes at byte offset off of b.
func decodeAt(b []byte, off uint64, width uint32) uint64 {
	switch width {
	case 3:
		p := b[off : off+3]
		return uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[off : off+4]))
	}
	return binary.LittleEndian.Uint64(b[off : off+8])
}

// decodeInto decodes the len(dst) elements of width bytes in raw into dst.
func decodeInto(dst []uint64, raw []byte, width uint32) {
	switch width {
	case 3:
		raw = raw[:3*len(dst)]
		n := len(dst)
		i := 0
		// Four bytes at a time (masked) while a byte follows the element.
		for ; i+1 < n; i++ {
			dst[i] = uint64(binary.LittleEndian.Uint32(raw[3*i:3*i+4])) & (1<<24 - 1)
		}
		for ; i < n; i++ {
			p := raw[3*i : 3*i+3]
			dst[i] = uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16
		}
	case 4:
		raw = raw[:4*len(dst)]
		for i := range dst {
			dst[i] = uint64(binary.LittleEndian.Uint32(raw[4*i : 4*i+4]))
		}
	default:
		raw = raw[:8*len(dst)]
		for i := range dst {
			dst[i] = binary.LittleEndian.Uint64(raw[8*i : 8*i+8])
		}
	}
}

// find returns the entry word of key. A chain longer than the number of
// buckets (only possible in a damaged region) ends the search.
func (t *Table) find(key uint64) (uint64, bool) {
	b := t.h.Bucket(key)
	for hops := uint64(0); hops <= t.h.NBuckets; hops++ {
		if b >= t.h.NBuckets {
			return 0, false
		}
		off := t.h.BucketOffset(b)
		w, next, r := t.h.search(t.buf[off:off+t.h.BucketBytes()], key)
		switch r {
		case slotFound:
			return w, true
		case slotAbsent:
			return 0, false
		}
		b = next
	}
	return 0, false
}

// resolve returns the byte offset and length of a non-inline list, checking
// bounds (false for an entry pointing outside the value area).
func (t *Table) resolve(ref valueRef) (start uint64, n int, ok bool) {
	w := uint64(t.h.Width)
	if ref.off > t.h.NValues {
		return 0, 0, false
	}
	start = t.h.ValuesOff + ref.off*w
	cnt := ref.n
	if ref.escaped {
		if start+8 > uint64(len(t.buf)) {
			return 0, 0, false
		}
		cnt = binary.LittleEndian.Uint64(t.buf[start:])
		start += 8
	}
	if cnt > (uint64(len(t.buf))-start)/w {
		return 0, 0, false
	}
	return start, int(cnt), true
}
