package rdmakv

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Contains answers as a search of AppendValues' list does, for every
// value width, for values present, absent, below and above the list.
func TestTableContains(t *testing.T) {
	for _, w := range []uint32{3, 4, 8} {
		entries := testEntries(500, uint64(w))
		mask := uint64(1)<<(8*w) - 1
		if w == 8 {
			mask = ^uint64(0) >> 1
		}
		for k, vals := range entries {
			for i := range vals {
				vals[i] &= mask
			}
			slices.Sort(vals)
			entries[k] = slices.Compact(vals)
		}
		tab := buildTable(t, entries, TableOptions{Width: int(w)})
		r := rand.New(rand.NewPCG(uint64(w), 2))
		for k, vals := range entries {
			list := tab.AppendValues(nil, k)
			probes := append(slices.Clone(vals), 0, mask)
			for range 8 {
				probes = append(probes, r.Uint64()&mask)
			}
			for _, v := range vals {
				probes = append(probes, v+1, v-1)
			}
			for _, v := range probes {
				_, want := slices.BinarySearch(list, v)
				if got := tab.Contains(k, v); got != want {
					t.Fatalf("width %d, key %#x, value %d: Contains %v, list has it: %v", w, k, v, got, want)
				}
			}
		}
		if tab.Contains(12345, 1) {
			t.Fatalf("width %d: an absent key contains a value", w)
		}
	}
}

// Toggled is the parity of a value in AppendVisible's IDs at a stamp.
func TestToggled(t *testing.T) {
	d, err := NewDeltaTable(1<<20, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r := rand.New(rand.NewPCG(7, 7))
	for stamp := uint64(1); stamp <= 40; stamp++ {
		ids := make([]uint64, 1+r.IntN(4))
		for i := range ids {
			ids[i] = uint64(r.IntN(12))
		}
		if err := d.Append(99, stamp, ids, nil); err != nil {
			t.Fatal(err)
		}
	}
	recs := d.Records(99)
	for _, stamp := range []uint64{0, 1, 7, 20, 40, 1 << 62} {
		vis := AppendVisible(nil, recs, stamp)
		for v := uint64(0); v < 14; v++ {
			n := 0
			for _, x := range vis {
				if x == v {
					n++
				}
			}
			if got := Toggled(recs, v, stamp); got != (n%2 == 1) {
				t.Fatalf("stamp %d, value %d: Toggled %v, %d occurrences", stamp, v, got, n)
			}
		}
	}
}
