package rdmakv

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// TableOptions configures a TableBuilder.
type TableOptions struct {
	// Width is the size of a stored value in bytes: 3, 4 or 8 (default
	// 8). Values must fit; a graph store picks 3 when every ID is below
	// 2^24, 4 when below 2^32. (Width 3 needs version 2 readers, and its
	// lists stay below 2^27 values: no escaped lengths.)
	Width int
	// Keys and Values are the expected numbers of keys and of stored
	// values (capacity hints; they may be exceeded). The number of main
	// buckets follows the keys actually added.
	Keys, Values int
	// Load is keys per main-bucket slot (default 0.97, at most 2): main
	// buckets = keys / (8 × Load). A bucket holds up to 8 keys; the keys
	// of a larger group beyond 7 go to free slots of other main buckets or
	// to packed overflow buckets, so the slots overall stay well used. On
	// LUBM-10 (graph store, 4 shards) 92.7% of all slots hold a key at
	// 0.97 (88.9% at 0.9, 91.3% at 1.1, when the free slots run out), and
	// a remote lookup takes 1.41 READs on average (LUBM-1; 1.39 at 0.9,
	// 1.47 at 1.1).
	Load float64
	// Buckets, if > 0, fixes the number of main buckets (tests use a tiny
	// table to force collisions and chains).
	Buckets int
	// Seed is the hash seed written to the header.
	Seed uint64
	// Wide forces 16-byte slots (version 2) where compact slots (version
	// 3, see table.go) would fit.
	Wide bool
}

// TableBuilder collects (key, sorted list) entries and lays them out as a
// table. It is not safe for concurrent use.
type TableBuilder struct {
	opts   TableOptions
	keys   []uint64
	words  []uint64
	values []byte
	nvals  uint64
	shared map[uint64]uint64 // AddShared: hash of a list -> its entry word
}

// longList is the length from which Add stores a list's length in the
// value area (escaped: 8 bytes before the elements, the slot's length
// field all ones) in a table of 4- or 8-byte values, so that a compact
// slot's length field never needs more than 16 bits. Without it a table
// whose longest list needs L bits and whose value area needs O bits is
// compact only if L+O ≤ 47: at LUBM-2560 (16 shards) a predicate's index
// list (≈ 2^22 IDs) and the value area (≈ 2^26 elements) did not fit, and
// whole tables fell back to 16-byte slots. The escape costs 8 bytes per
// list of at least 64 Ki elements (≥ 256 KiB of values), and one more
// small read for a remote reader (the length, then the list). Readers of
// every table version already resolve escaped lengths, so tables written
// with it open in older builds that read their version. A variable so
// tests exercise long lists with short ones.
var longList = uint64(1)<<16 - 1

// maxSharedLen bounds the lists AddShared tries to share.
const maxSharedLen = 64

// NewTableBuilder returns a builder.
func NewTableBuilder(opts TableOptions) (*TableBuilder, error) {
	if opts.Width == 0 {
		opts.Width = 8
	}
	if opts.Width != 3 && opts.Width != 4 && opts.Width != 8 {
		return nil, fmt.Errorf("table value width %d: must be 3, 4 or 8", opts.Width)
	}
	if opts.Load <= 0 || opts.Load > 2 {
		opts.Load = 0.97
	}
	return &TableBuilder{
		opts:   opts,
		keys:   make([]uint64, 0, opts.Keys),
		words:  make([]uint64, 0, opts.Keys),
		values: make([]byte, 0, opts.Values*opts.Width),
	}, nil
}

// Len returns the number of keys added.
func (b *TableBuilder) Len() int { return len(b.keys) }

// ValueBytes returns the size of the value area so far.
func (b *TableBuilder) ValueBytes() int { return len(b.values) }

// Add adds key with its list vals (sorted by the caller; copied). An empty
// list is not stored (a lookup of it returns nothing either way). Each key
// must be added once.
func (b *TableBuilder) Add(key uint64, vals []uint64) error {
	switch {
	case len(vals) == 0:
		return nil
	case len(vals) == 1 && vals[0]&inlineBit == 0:
		b.keys = append(b.keys, key)
		b.words = append(b.words, inlineBit|vals[0])
		return nil
	}
	w := uint64(b.opts.Width)
	if w < 8 {
		for _, v := range vals {
			if v>>(8*w) != 0 {
				return fmt.Errorf("value %d of key %#x does not fit %d bytes", v, key, w)
			}
		}
	}
	off := b.nvals
	if off > offMask {
		return fmt.Errorf("table value area full (%d elements)", off)
	}
	n := uint64(len(vals))
	lenField := n
	if n >= lenEscape || (w >= 4 && n >= longList) {
		if w == 3 {
			return fmt.Errorf("list of %d values: too long for a table of 3-byte values", n)
		}
		lenField = lenEscape
		b.values = binary.LittleEndian.AppendUint64(b.values, n)
		b.nvals += 8 / w
	}
	switch w {
	case 3:
		for _, v := range vals {
			b.values = append(b.values, byte(v), byte(v>>8), byte(v>>16))
		}
	case 4:
		for _, v := range vals {
			b.values = binary.LittleEndian.AppendUint32(b.values, uint32(v))
		}
	default:
		for _, v := range vals {
			b.values = binary.LittleEndian.AppendUint64(b.values, v)
		}
	}
	b.nvals += n
	b.keys = append(b.keys, key)
	b.words = append(b.words, lenField<<offBits|off)
	return nil
}

// AddShared is Add for lists that often repeat (a graph store's predicate
// sets of vertices): a list equal to one added before with AddShared is
// stored once and both entries point at it. A reader cannot tell the
// difference.
func (b *TableBuilder) AddShared(key uint64, vals []uint64) error {
	if len(vals) < 2 || len(vals) > maxSharedLen {
		return b.Add(key, vals)
	}
	h := uint64(len(vals))
	for _, v := range vals {
		h = mix64(h ^ v)
	}
	if w, ok := b.shared[h]; ok && b.sameList(w, vals) {
		b.keys = append(b.keys, key)
		b.words = append(b.words, w)
		return nil
	}
	if err := b.Add(key, vals); err != nil {
		return err
	}
	if b.shared == nil {
		b.shared = map[uint64]uint64{}
	}
	if _, ok := b.shared[h]; !ok {
		b.shared[h] = b.words[len(b.words)-1]
	}
	return nil
}

// sameList reports whether the non-inline entry word w holds vals.
func (b *TableBuilder) sameList(w uint64, vals []uint64) bool {
	inline, _, ref := decodeWord(w)
	if inline || ref.escaped || ref.n != uint64(len(vals)) {
		return false
	}
	if b.opts.Width == 3 {
		for i, v := range vals {
			p := 3 * (ref.off + uint64(i))
			if uint64(b.values[p])|uint64(b.values[p+1])<<8|uint64(b.values[p+2])<<16 != v {
				return false
			}
		}
		return true
	}
	if b.opts.Width == 4 {
		for i, v := range vals {
			if uint64(binary.LittleEndian.Uint32(b.values[4*(ref.off+uint64(i)):])) != v {
				return false
			}
		}
		return true
	}
	for i, v := range vals {
		if binary.LittleEndian.Uint64(b.values[8*(ref.off+uint64(i)):]) != v {
			return false
		}
	}
	return true
}

// Build lays out the table: the returned bytes are a complete region (or
// the start of one). Keys must be unique (the graph store guarantees it by
// construction); a duplicate is not detected and would be shadowed.
func (b *TableBuilder) Build() ([]byte, error) {
	head, err := b.layout(true)
	if err != nil {
		return nil, err
	}
	return append(head, b.values...), nil
}

// WriteTo lays out the table like Build and writes it to w without holding
// a second copy of the value area: only the header and buckets are built
// in memory, then the value area is written as it is. The builder is spent
// afterwards (its keys are released while writing).
func (b *TableBuilder) WriteTo(w io.Writer) (int64, error) {
	head, err := b.layout(false)
	if err != nil {
		return 0, err
	}
	b.keys, b.words, b.shared = nil, nil, nil
	n, err := w.Write(head)
	if err != nil {
		return int64(n), err
	}
	head = nil
	m, err := w.Write(b.values)
	b.values = nil
	return int64(n + m), err
}

// layout builds the header and the buckets; with room, the returned slice
// has the capacity for the value area too.
func (b *TableBuilder) layout(room bool) ([]byte, error) {
	n := uint64(len(b.keys))
	nMain := uint64(b.opts.Buckets)
	if nMain == 0 {
		nMain = uint64(math.Ceil(float64(n) / (SlotsPerBucket * b.opts.Load)))
		if nMain == 0 {
			nMain = 1
		}
	}
	if nMain > math.MaxUint32 {
		return nil, fmt.Errorf("table of %d buckets too large", nMain)
	}
	h := TableHeader{Version: TableVersion, Width: uint32(b.opts.Width), NMain: nMain, NKeys: n, Seed: b.opts.Seed}
	b.chooseCompact(&h)
	// Group the keys by main bucket (counting sort): ends[mb] is the end
	// of bucket mb's keys in order.
	mbs := make([]uint32, n)
	ends := make([]uint32, nMain+1)
	for i, k := range b.keys {
		mb := uint32(h.Bucket(k))
		mbs[i] = mb
		ends[mb+1]++
	}
	for mb := uint64(0); mb < nMain; mb++ {
		ends[mb+1] += ends[mb]
	}
	order := make([]uint32, n)
	fill := ends[:nMain:nMain] // reused as the next free position of each group
	fill = append([]uint32(nil), fill...)
	for i, mb := range mbs {
		order[fill[mb]] = uint32(i)
		fill[mb]++
	}
	size := func(mb uint64) uint64 { return uint64(ends[mb+1] - ends[mb]) }
	// A group of at most 8 keys fills its main bucket (slot 7 holds an
	// entry only when there are exactly 8). Of a larger group, the first 7
	// keys take the main bucket's slots and slot 7 chains to where the
	// rest are: preferably the free slots of another main bucket that does
	// not chain and holds at most 8 keys afterwards (its searches end at
	// an empty slot or at its last slot; the rest of the group is found
	// there), best fit, largest rests first; else overflow buckets,
	// packed: bucket after
	// bucket, each group's run continuing where the previous one ended
	// (an overflow bucket chains to the next one when some group's run
	// continues there). A lookup therefore sees all of its group's keys,
	// and stops at an empty slot or a full bucket without a chain.
	used := make([]uint8, nMain) // slots in use (from 0)
	var byFree [SlotsPerBucket + 1][]uint32
	var byRest [][]uint32 // overflowing groups by rest (c - 7)
	for mb := uint64(0); mb < nMain; mb++ {
		c := size(mb)
		switch {
		case c > SlotsPerBucket:
			r := c - EntriesPerBucket
			for uint64(len(byRest)) <= r {
				byRest = append(byRest, nil)
			}
			byRest[r] = append(byRest[r], uint32(mb))
			used[mb] = EntriesPerBucket
		case c == SlotsPerBucket:
			used[mb] = EntriesPerBucket
		default:
			used[mb] = uint8(c)
			if f := SlotsPerBucket - c; f > 0 && mb != 0 { // bucket 0 is never a chain target
				byFree[f] = append(byFree[f], uint32(mb))
			}
		}
	}
	target := make(map[uint32]uint32) // overflowing group -> main bucket taking its rest
	var overflow uint64
	for r := len(byRest) - 1; r > 0; r-- {
		for _, mb := range byRest[r] {
			f := r
			for f <= SlotsPerBucket && len(byFree[f]) == 0 {
				f++
			}
			if f > SlotsPerBucket {
				overflow += uint64(r)
				continue
			}
			t := byFree[f][len(byFree[f])-1]
			byFree[f] = byFree[f][:len(byFree[f])-1]
			target[mb] = t
			if left := f - r; left > 0 {
				byFree[left] = append(byFree[left], t)
			}
		}
	}
	nOver := (overflow + EntriesPerBucket - 1) / EntriesPerBucket
	h.NBuckets = nMain + nOver
	if h.NBuckets > math.MaxUint32 {
		return nil, fmt.Errorf("table of %d buckets too large", h.NBuckets)
	}
	h.ValuesOff = HeaderSize + h.NBuckets*h.BucketBytes()
	h.NValues = b.nvals
	capacity := h.ValuesOff
	if room {
		capacity = h.Size()
	}
	out := make([]byte, h.ValuesOff, capacity)
	h.encode(out)
	put := func(bk, slot uint64, i uint32) {
		p := HeaderSize + bk*BucketSize + slot*SlotSize
		binary.LittleEndian.PutUint64(out[p:], b.keys[i])
		binary.LittleEndian.PutUint64(out[p+8:], b.words[i])
	}
	chain := func(from, to uint64) {
		p := HeaderSize + from*BucketSize + EntriesPerBucket*SlotSize
		binary.LittleEndian.PutUint64(out[p:], to)
	}
	if h.Version == CompactTableVersion {
		put48 := func(p, v uint64) {
			var x [8]byte
			binary.LittleEndian.PutUint64(x[:], v)
			copy(out[p:p+6], x[:6])
		}
		put = func(bk, slot uint64, i uint32) {
			p := HeaderSize + bk*CompactBucketSize + slot*CompactSlotSize
			k, _ := h.compactKey(b.keys[i])
			put48(p, k)
			put48(p+6, h.compactWord(b.words[i]))
		}
		chain = func(from, to uint64) {
			put48(HeaderSize+from*CompactBucketSize+EntriesPerBucket*CompactSlotSize, to)
		}
	}
	var pos uint64 // next overflow slot
	for mb := uint64(0); mb < nMain; mb++ {
		group := order[ends[mb]:ends[mb+1]]
		if len(group) <= SlotsPerBucket {
			for j, i := range group {
				put(mb, uint64(j), i)
			}
			continue
		}
		for j, i := range group[:EntriesPerBucket] {
			put(mb, uint64(j), i)
		}
		rest := group[EntriesPerBucket:]
		if t, ok := target[uint32(mb)]; ok {
			chain(mb, uint64(t))
			for _, i := range rest {
				put(uint64(t), uint64(used[t]), i)
				used[t]++
			}
			continue
		}
		for j, i := range rest {
			bk := nMain + pos/EntriesPerBucket
			switch {
			case j == 0:
				chain(mb, bk)
			case pos%EntriesPerBucket == 0:
				chain(bk-1, bk)
			}
			put(bk, pos%EntriesPerBucket, i)
			pos++
		}
	}
	return out, nil
}

// chooseCompact makes h a version 3 table (12-byte slots) if every key,
// word and offset fits: values of at most 4 bytes, keys of at most 48
// bits once the longest run of bits zero in all keys is left out, and
// list lengths and offsets that share 47 bits.
func (b *TableBuilder) chooseCompact(h *TableHeader) {
	if b.opts.Wide || b.opts.Width > 4 || len(b.keys) == 0 {
		return
	}
	var or uint64
	for _, k := range b.keys {
		or |= k
	}
	top := bits.Len64(or)
	var gapLo, gapLen int
	if top > 48 {
		// The longest run of zero bits below top.
		for i := 0; i < top; {
			if or>>i&1 != 0 {
				i++
				continue
			}
			j := i
			for j < top && or>>j&1 == 0 {
				j++
			}
			if j-i > gapLen {
				gapLo, gapLen = i, j-i
			}
			i = j
		}
		if top-gapLen > 48 {
			return
		}
	}
	var maxLen uint64
	for _, w := range b.words {
		if w&inlineBit != 0 {
			continue
		}
		if n := w >> offBits & lenMask; n != lenEscape {
			maxLen = max(maxLen, n)
		}
	}
	lenBits := max(bits.Len64(maxLen+1), 1)
	offBits := max(bits.Len64(b.nvals), 1)
	if lenBits+offBits > 47 {
		return
	}
	h.Version, h.GapLo, h.GapLen, h.LenBits, h.OffBits = CompactTableVersion, uint8(gapLo), uint8(gapLen), uint8(lenBits), uint8(offBits)
}
