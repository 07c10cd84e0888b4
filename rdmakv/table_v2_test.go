package rdmakv

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// A main bucket with exactly 8 keys holds them all (slot 7 is an entry);
// with 9, slot 7 chains. Lookups of present and absent keys agree either
// way.
func TestTableEightKeysInOneBucket(t *testing.T) {
	for _, n := range []int{7, 8, 9, 16, 17} {
		entries := map[uint64][]uint64{}
		for i := 0; i < n; i++ {
			entries[uint64(i)*7919] = []uint64{uint64(i) + 1}
		}
		entries[0] = []uint64{3, 5} // key 0, not inline
		tab := buildTable(t, entries, TableOptions{Width: 4, Buckets: 1})
		for k, want := range entries {
			if got := tab.AppendValues(nil, k); !slices.Equal(got, want) {
				t.Fatalf("n=%d key %d: %v, want %v", n, k, got, want)
			}
		}
		for _, k := range []uint64{1, 7920, 1 << 40} {
			if got := tab.AppendValues(nil, k); len(got) != 0 {
				t.Fatalf("n=%d absent key %d: %v", n, k, got)
			}
		}
		if want := uint64(1); n == 8 && tab.Header().NBuckets != want {
			t.Fatalf("8 keys in %d buckets, want 1", tab.Header().NBuckets)
		}
	}
}

// Version 1 tables (slot 7 always a chain) are read; a newer version is
// refused.
func TestTableVersions(t *testing.T) {
	entries := testEntries(500, 3)
	opts := TableOptions{Width: 4, Buckets: 64}
	// Drop keys until no main bucket has exactly 8: the bytes are then a
	// valid version 1 table.
	h := TableHeader{NMain: 64}
	for {
		count := map[uint64][]uint64{}
		for k := range entries {
			count[h.Bucket(k)] = append(count[h.Bucket(k)], k)
		}
		done := true
		for _, ks := range count {
			if len(ks) == 8 {
				delete(entries, ks[0])
				done = false
			}
		}
		if done {
			break
		}
	}
	tab := buildTable(t, entries, opts)
	buf := tab.buf
	binary.LittleEndian.PutUint32(buf[8:], 1)
	tab, err := OpenTable(NewRegion(buf))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range entries {
		if got := tab.AppendValues(nil, k); !slices.Equal(got, want) {
			t.Fatalf("key %d: %v, want %v", k, got, want)
		}
	}
	binary.LittleEndian.PutUint32(buf[8:], TableVersion+1)
	if _, err := OpenTable(NewRegion(buf)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("newer version: %v", err)
	}
}

// Width 3: lists of 3-byte values read the same locally, remotely, one by
// one and batched; a value of 2^24 or more is refused.
func TestTableWidth3(t *testing.T) {
	entries := testEntries(500, 12)
	for k, vals := range entries {
		for i := range vals {
			vals[i] &= 1<<24 - 1
		}
		slices.Sort(vals)
		entries[k] = vals
	}
	tab := buildTable(t, entries, TableOptions{Width: 3, Buckets: 20})
	f, rt := remoteTableOn(t, tab, 3, 2, 5, LoopbackOptions{})
	ctx := context.Background()
	var lookups []Lookup
	var want []uint64
	for k, vals := range entries {
		if got := tab.AppendValues(nil, k); !slices.Equal(got, vals) {
			t.Fatalf("key %#x: local %v, want %v", k, got, vals)
		}
		got, err := rt.AppendValues(ctx, 0, nil, k)
		if err != nil || !slices.Equal(got, vals) {
			t.Fatalf("key %#x: remote %v (%v), want %v", k, got, err, vals)
		}
		lookups = append(lookups, Lookup{Table: rt, Key: k})
		want = append(want, vals...)
	}
	got, _, err := LookupBatch(ctx, f, 0, lookups, nil, nil)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("batched lookup differs (%v)", err)
	}
	b, _ := NewTableBuilder(TableOptions{Width: 3})
	if err := b.Add(1, []uint64{1, 1 << 24}); err == nil {
		t.Fatal("a value of 2^24 fits 3 bytes")
	}
}

// Overflowing groups put their rest into the free slots of other main
// buckets or into overflow buckets; at every load, every key is found
// (locally, remotely, batched) and absent keys are not.
func TestTablePackingAtLoads(t *testing.T) {
	for _, n := range []int{1, 9, 50, 700, 3000} {
		for _, buckets := range []int{1, 2, n / 9, n / 7, n / 4} {
			if buckets < 1 {
				continue
			}
			entries := testEntries(n, uint64(n*31+buckets))
			tab := buildTable(t, entries, TableOptions{Width: 4, Buckets: buckets})
			f, rt := remoteTableOn(t, tab, 2, 1, 1, LoopbackOptions{})
			ctx := context.Background()
			var lookups []Lookup
			var want []uint64
			for k, vals := range entries {
				if got := tab.AppendValues(nil, k); !slices.Equal(got, vals) {
					t.Fatalf("n=%d buckets=%d key %#x: %v, want %v", n, buckets, k, got, vals)
				}
				if got, err := rt.AppendValues(ctx, 0, nil, k); err != nil || !slices.Equal(got, vals) {
					t.Fatalf("n=%d buckets=%d key %#x: remote %v (%v), want %v", n, buckets, k, got, err, vals)
				}
				lookups = append(lookups, Lookup{Table: rt, Key: k})
				want = append(want, vals...)
			}
			for k := uint64(0); k < 200; k++ {
				if _, ok := entries[k*0x9e3779b97f4a7c15]; ok {
					continue
				}
				if got := tab.AppendValues(nil, k*0x9e3779b97f4a7c15); len(got) != 0 {
					t.Fatalf("absent key found")
				}
				if got, err := rt.AppendValues(ctx, 0, nil, k*0x9e3779b97f4a7c15); err != nil || len(got) != 0 {
					t.Fatalf("absent key found remotely (%v)", err)
				}
			}
			if got, _, err := LookupBatch(ctx, f, 0, lookups, nil, nil); err != nil || !slices.Equal(got, want) {
				t.Fatalf("n=%d buckets=%d: batched lookup differs (%v)", n, buckets, err)
			}
		}
	}
}
