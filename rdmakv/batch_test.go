package rdmakv

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// AppendValuesBatch returns what AppendValues returns key by key, for
// every width, with chains (few buckets), escaped lengths, absent keys and
// groups cut at every boundary.
func TestAppendValuesBatchEqualsOneByOne(t *testing.T) {
	old := lenEscape
	defer func() { lenEscape = old }()
	for _, w := range []int{3, 4, 8} {
		lenEscape = old
		if w != 3 {
			lenEscape = 40 // width 3 tables have no escaped lengths
		}
		for _, buckets := range []int{0, 7} {
			entries := testEntries(3000, uint64(w))
			for k, vals := range entries {
				if w == 3 {
					for i := range vals {
						vals[i] &= 1<<24 - 1
					}
					slices.Sort(vals)
				}
				entries[k] = vals
			}
			tab := buildTable(t, entries, TableOptions{Width: w, Buckets: buckets})
			r := rand.New(rand.NewPCG(uint64(w), uint64(buckets)))
			var keys []uint64
			for k := range entries {
				keys = append(keys, k)
				if r.IntN(4) == 0 {
					keys = append(keys, r.Uint64()) // (almost surely) absent
				}
				if r.IntN(8) == 0 {
					keys = append(keys, k) // twice
				}
			}
			for _, n := range []int{0, 1, lookupGroup - 1, lookupGroup, lookupGroup + 1, len(keys)} {
				want, wantEnds := []uint64{7}, []int{}
				for _, k := range keys[:n] {
					want = tab.AppendValues(want, k)
					wantEnds = append(wantEnds, len(want))
				}
				got, ends := tab.AppendValuesBatch([]uint64{7}, keys[:n], []int{})
				if !slices.Equal(got, want) || !slices.Equal(ends, wantEnds) {
					t.Fatalf("width %d, %d buckets, %d keys: batch differs from one by one", w, buckets, n)
				}
			}
		}
	}
}
