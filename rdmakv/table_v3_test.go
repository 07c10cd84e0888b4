package rdmakv

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// compactEntries returns n keys shaped like a graph store's (a vertex
// above bit 24, a small predicate, a direction bit: a run of zero bits in
// every key) with lists as testEntries, values below 2^(8·width).
func compactEntries(n int, seed uint64, width int) map[uint64][]uint64 {
	r := rand.New(rand.NewPCG(seed, 2))
	m := make(map[uint64][]uint64, n)
	for len(m) < n {
		k := r.Uint64N(1<<34)<<24 | r.Uint64N(1<<9)<<1 | r.Uint64N(2)
		ln := 1 + r.IntN(5)
		if r.IntN(20) == 0 {
			ln = 100 + r.IntN(200)
		}
		vals := make([]uint64, ln)
		for i := range vals {
			vals[i] = r.Uint64N(1 << (8 * width))
		}
		slices.Sort(vals)
		m[k] = slices.Compact(vals)
	}
	return m
}

// Version 3 (12-byte slots) reads exactly what version 2 reads: locally,
// by batch, remotely one by one and by LookupBatch, with chains, escaped
// lengths, and absent keys (among them keys with bits in the gap or above
// 48 compacted bits).
func TestCompactTableEqualsWide(t *testing.T) {
	old := lenEscape
	defer func() { lenEscape = old }()
	ctx := context.Background()
	for _, w := range []int{3, 4} {
		for _, esc := range []uint64{old, 5} {
			if w == 3 && esc != old {
				continue // width 3 tables have no escaped lengths
			}
			lenEscape = esc
			for _, buckets := range []int{0, 1, 7} {
				entries := compactEntries(1500, uint64(w)+esc, w)
				tab := buildTable(t, entries, TableOptions{Width: w, Buckets: buckets})
				wide := buildTable(t, entries, TableOptions{Width: w, Buckets: buckets, Wide: true})
				if v := tab.Header().Version; v != CompactTableVersion {
					t.Fatalf("width %d: version %d, want %d", w, v, CompactTableVersion)
				}
				if v := wide.Header().Version; v != TableVersion {
					t.Fatalf("Wide: version %d", v)
				}
				if h, wh := tab.Header(), wide.Header(); h.NBuckets != wh.NBuckets || h.ValuesOff-HeaderSize != wh.NBuckets*CompactBucketSize {
					t.Fatalf("width %d, %d buckets: %d buckets in %d bytes, wide %d", w, buckets, h.NBuckets, h.ValuesOff-HeaderSize, wh.NBuckets)
				}
				_, rt := remoteTableOn(t, tab, 2, 1, 0, LoopbackOptions{})
				r := rand.New(rand.NewPCG(uint64(buckets), 5))
				var keys []uint64
				for k := range entries {
					keys = append(keys, k)
					switch r.IntN(6) {
					case 0:
						keys = append(keys, k|1<<12) // a bit in the gap
					case 1:
						keys = append(keys, k^1<<63) // beyond the stored bits
					case 2:
						keys = append(keys, k+2) // another predicate
					}
				}
				keys = append(keys, 0, 1<<24)
				slices.Sort(keys)
				for _, k := range keys {
					want := entries[k]
					if got := tab.AppendValues(nil, k); !slices.Equal(got, want) || !slices.Equal(wide.AppendValues(nil, k), want) {
						t.Fatalf("width %d, escape %d, %d buckets, key %#x: got %v want %v", w, esc, buckets, k, got, want)
					}
					n, ok := tab.Lookup(k)
					if ok != (want != nil) || n != len(want) {
						t.Fatalf("Lookup(%#x) = %d, %v; want %d", k, n, ok, len(want))
					}
					got, err := rt.AppendValues(ctx, 0, nil, k)
					if err != nil || !slices.Equal(got, want) {
						t.Fatalf("remote key %#x: %v, %v; want %v", k, got, err, want)
					}
				}
				got, ends := tab.AppendValuesBatch(nil, keys, nil)
				wgot, wends := wide.AppendValuesBatch(nil, keys, nil)
				if !slices.Equal(got, wgot) || !slices.Equal(ends, wends) {
					t.Fatalf("width %d, %d buckets: AppendValuesBatch differs from the wide table's", w, buckets)
				}
				lk := make([]Lookup, len(keys))
				for i, k := range keys {
					lk[i] = Lookup{Table: rt, Key: k}
				}
				rgot, rends, err := LookupBatch(ctx, rt.f, 0, lk, nil, nil)
				if err != nil || !slices.Equal(rgot, wgot) || !slices.Equal(rends, wends) {
					t.Fatalf("width %d, %d buckets: LookupBatch differs (%v)", w, buckets, err)
				}
			}
		}
	}
}

// Keys that use more than 48 bits after their longest zero run, and 8-byte
// values, stay in 16-byte slots.
func TestCompactTableOnlyWhenItFits(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries map[uint64][]uint64
		width   int
	}{
		{"random keys", testEntries(200, 1), 4},
		{"8-byte values", compactEntries(200, 1, 4), 8},
	} {
		tab := buildTable(t, tc.entries, TableOptions{Width: tc.width})
		if v := tab.Header().Version; v != TableVersion {
			t.Errorf("%s: version %d, want %d", tc.name, v, TableVersion)
		}
	}
}

// Lists of longList elements or more have their length in the value area,
// so the longest list does not widen a compact slot's length field: with a
// threshold of 8 every list of compactEntries' long ones (100–300
// elements) is escaped, the table stays compact with at most 4 length
// bits, and it reads as the wide table does, locally, by batch and
// remotely.
func TestCompactTableLongLists(t *testing.T) {
	old := longList
	defer func() { longList = old }()
	longList = 8
	ctx := context.Background()
	for _, buckets := range []int{0, 3} {
		entries := compactEntries(1200, uint64(buckets)+11, 4)
		for k := range entries {
			if k%5 == 0 {
				entries[k] = []uint64{1, 2, 3, 4, 5, 6, 7} // just below the threshold
			} else if k%7 == 0 {
				entries[k] = []uint64{1, 2, 3, 4, 5, 6, 7, 8} // at it
			}
		}
		tab := buildTable(t, entries, TableOptions{Width: 4, Buckets: buckets})
		wide := buildTable(t, entries, TableOptions{Width: 4, Buckets: buckets, Wide: true})
		h := tab.Header()
		if h.Version != CompactTableVersion || h.LenBits > 4 {
			t.Fatalf("version %d, %d length bits; want %d and at most 4 (lists of 8 or more escaped)", h.Version, h.LenBits, CompactTableVersion)
		}
		_, rt := remoteTableOn(t, tab, 2, 1, 0, LoopbackOptions{})
		var keys []uint64
		long := 0
		for k, want := range entries {
			keys = append(keys, k, k+2)
			if len(want) >= 8 {
				long++
			}
			for _, tb := range []*Table{tab, wide} {
				if got := tb.AppendValues(nil, k); !slices.Equal(got, want) {
					t.Fatalf("key %#x (version %d): got %v want %v", k, tb.Header().Version, got, want)
				}
				if n, ok := tb.Lookup(k); !ok || n != len(want) {
					t.Fatalf("Lookup(%#x) = %d, %v; want %d", k, n, ok, len(want))
				}
			}
			got, err := rt.AppendValues(ctx, 0, nil, k)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("remote key %#x: %v, %v; want %v", k, got, err, want)
			}
		}
		if long < 50 {
			t.Fatalf("only %d long lists", long)
		}
		slices.Sort(keys)
		got, ends := tab.AppendValuesBatch(nil, keys, nil)
		wgot, wends := wide.AppendValuesBatch(nil, keys, nil)
		if !slices.Equal(got, wgot) || !slices.Equal(ends, wends) {
			t.Fatalf("%d buckets: AppendValuesBatch differs from the wide table's", buckets)
		}
		lk := make([]Lookup, len(keys))
		for i, k := range keys {
			lk[i] = Lookup{Table: rt, Key: k}
		}
		rgot, rends, err := LookupBatch(ctx, rt.f, 0, lk, nil, nil)
		if err != nil || !slices.Equal(rgot, wgot) || !slices.Equal(rends, wends) {
			t.Fatalf("%d buckets: LookupBatch differs (%v)", buckets, err)
		}
	}
}

// The LUBM-2560 case at the default threshold: a list of 70,000 elements
// (17 length bits unescaped) in a value area of 2^31 elements (31 offset
// bits) needs 48 bits unescaped; escaped, the table is compact.
func TestCompactTableLongListDefault(t *testing.T) {
	b, err := NewTableBuilder(TableOptions{Width: 4})
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]uint64, 70000)
	for i := range vals {
		vals[i] = uint64(2 * i)
	}
	for k := uint64(1); k <= 20; k++ {
		if err := b.Add(k<<24, vals[:k]); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Add(21<<24, vals); err != nil {
		t.Fatal(err)
	}
	b.nvals = 1<<31 - 1 // as if the value area were that large (the check reads only its size)
	h := TableHeader{Version: TableVersion, Width: 4}
	b.chooseCompact(&h)
	if h.Version != CompactTableVersion || h.LenBits != 5 || h.OffBits != 31 {
		t.Fatalf("version %d, length bits %d, offset bits %d; want %d, 5, 31", h.Version, h.LenBits, h.OffBits, CompactTableVersion)
	}
}
