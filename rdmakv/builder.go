package rdmakv

import (
	"encoding/binary"
	"fmt"
	"math"
)

// TableOptions configures a TableBuilder.
type TableOptions struct {
	// Width is the size of a stored value in bytes: 4 or 8 (default 8).
	// Values must fit; a graph store picks 4 when every ID is below 2^32.
	Width int
	// Keys is the number of keys that will be added (a hint for the
	// number of main buckets; it may be exceeded).
	Keys int
	// Load is the target fill of the main buckets' entry slots
	// (default 0.85). Keys beyond a full bucket go to overflow buckets.
	Load float64
	// Buckets, if > 0, fixes the number of main buckets (tests use a tiny
	// table to force collisions and chains).
	Buckets int
	// Seed is the hash seed written to the header.
	Seed uint64
}

// TableBuilder collects (key, sorted list) entries and lays them out as a
// table. It is not safe for concurrent use.
type TableBuilder struct {
	opts   TableOptions
	keys   []uint64
	words  []uint64
	values []byte
	nvals  uint64
}

// NewTableBuilder returns a builder.
func NewTableBuilder(opts TableOptions) (*TableBuilder, error) {
	if opts.Width == 0 {
		opts.Width = 8
	}
	if opts.Width != 4 && opts.Width != 8 {
		return nil, fmt.Errorf("table value width %d: must be 4 or 8", opts.Width)
	}
	if opts.Load <= 0 || opts.Load > 1 {
		opts.Load = 0.85
	}
	return &TableBuilder{
		opts:  opts,
		keys:  make([]uint64, 0, opts.Keys),
		words: make([]uint64, 0, opts.Keys),
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
	off := b.nvals
	n := uint64(len(vals))
	lenField := n
	if n >= lenEscape {
		lenField = lenEscape
		b.values = binary.LittleEndian.AppendUint64(b.values, n)
		b.nvals += 8 / w
	}
	if off > offMask {
		return fmt.Errorf("table value area full (%d elements)", off)
	}
	if w == 4 {
		for _, v := range vals {
			if v > math.MaxUint32 {
				return fmt.Errorf("value %d of key %#x does not fit 4 bytes", v, key)
			}
			b.values = binary.LittleEndian.AppendUint32(b.values, uint32(v))
		}
	} else {
		for _, v := range vals {
			b.values = binary.LittleEndian.AppendUint64(b.values, v)
		}
	}
	b.nvals += n
	b.keys = append(b.keys, key)
	b.words = append(b.words, lenField<<offBits|off)
	return nil
}

// Build lays out the table: the returned bytes are a complete region (or
// the start of one). Keys must be unique (the graph store guarantees it by
// construction); a duplicate is not detected and would be shadowed.
func (b *TableBuilder) Build() ([]byte, error) {
	n := uint64(len(b.keys))
	nMain := uint64(b.opts.Buckets)
	if nMain == 0 {
		nMain = uint64(math.Ceil(float64(n) / (EntriesPerBucket * b.opts.Load)))
		if nMain == 0 {
			nMain = 1
		}
	}
	h := TableHeader{Width: uint32(b.opts.Width), NMain: nMain, NKeys: n, Seed: b.opts.Seed}
	// Place keys: fill[b] counts used entry slots of bucket b; last[b] is
	// the last bucket of b's chain.
	fill := make([]uint8, nMain, nMain+nMain/8+1)
	last := make([]uint32, nMain)
	for i := range last {
		last[i] = uint32(i)
	}
	if nMain > math.MaxUint32 {
		return nil, fmt.Errorf("table of %d buckets too large", nMain)
	}
	slotOf := make([]uint64, n) // bucket*8+slot of key i
	chain := make([]uint32, nMain, cap(fill))
	for i, k := range b.keys {
		mb := h.Bucket(k)
		bk := uint64(last[mb])
		if fill[bk] == EntriesPerBucket {
			nb := uint64(len(fill))
			if nb > math.MaxUint32 {
				return nil, fmt.Errorf("table of %d buckets too large", nb)
			}
			fill = append(fill, 0)
			chain = append(chain, 0)
			chain[bk] = uint32(nb)
			last[mb] = uint32(nb)
			bk = nb
		}
		slotOf[i] = bk*SlotsPerBucket + uint64(fill[bk])
		fill[bk]++
	}
	h.NBuckets = uint64(len(fill))
	h.ValuesOff = HeaderSize + h.NBuckets*BucketSize
	h.NValues = b.nvals
	out := make([]byte, h.Size())
	h.encode(out)
	for i, s := range slotOf {
		p := HeaderSize + s*SlotSize
		binary.LittleEndian.PutUint64(out[p:], b.keys[i])
		binary.LittleEndian.PutUint64(out[p+8:], b.words[i])
	}
	for bk, nx := range chain {
		if nx != 0 {
			p := HeaderSize + uint64(bk)*BucketSize + EntriesPerBucket*SlotSize
			binary.LittleEndian.PutUint64(out[p:], uint64(nx))
		}
	}
	copy(out[h.ValuesOff:], b.values)
	return out, nil
}
