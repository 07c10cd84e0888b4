package reason

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCSRMerge merges random batches of pairs into a table, on dense and
// on sparse key ranges, removes some, and compares every row with a map.
func TestCSRMerge(t *testing.T) {
	for _, spread := range []uint64{50, 1 << 40} { // dense (counting sort), sparse (sorted keys)
		r := rand.New(rand.NewPCG(spread, 7))
		want := map[ID][]ID{}
		x := &csr{}
		var all []pair
		for round := 0; round < 6; round++ {
			var ps []pair
			for range r.IntN(300) {
				p := pair{ID(1000 + r.Uint64N(spread)), ID(r.Uint64N(1 << 30))}
				ps = append(ps, p)
				want[p.k] = append(want[p.k], p.v)
				all = append(all, p)
			}
			x = x.merged(ps)
			check := func() {
				t.Helper()
				n := 0
				x.rows(func(k ID, vs []ID) {
					n++
					if !slices.Equal(slices.Sorted(slices.Values(vs)), slices.Sorted(slices.Values(want[k]))) {
						t.Fatalf("spread %d: row %d = %v, want %v", spread, k, vs, want[k])
					}
				})
				if n != len(want) {
					t.Fatalf("spread %d: %d rows, want %d", spread, n, len(want))
				}
				for k, vs := range want {
					if got := x.row(k); len(got) != len(vs) {
						t.Fatalf("spread %d: row(%d) has %d values, want %d", spread, k, len(got), len(vs))
					}
				}
				if x.row(1) != nil || x.row(1<<50) != nil {
					t.Fatalf("spread %d: a row for a key never added", spread)
				}
			}
			check()
			if round%2 == 1 && len(all) > 0 { // remove a few
				gone := map[pair]bool{}
				for range 20 {
					p := all[r.IntN(len(all))]
					if !gone[p] {
						gone[p] = true
						i := slices.Index(want[p.k], p.v)
						want[p.k] = slices.Delete(want[p.k], i, i+1)
						if len(want[p.k]) == 0 {
							delete(want, p.k)
						}
					}
				}
				all = slices.DeleteFunc(all, func(p pair) bool { return gone[p] })
				x = x.without(gone)
				check()
			}
		}
		if (spread > 1<<20) != (x.keys != nil) {
			t.Fatalf("spread %d: keys %v, want the other layout", spread, x.keys != nil)
		}
	}
}
