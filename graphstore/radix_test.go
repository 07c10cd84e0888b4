package graphstore

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// randomRecs returns n edges over about vertices vertex IDs and a few
// predicates, with repeats, as a load's runs hold them.
func randomRecs(rng *rand.Rand, n, vertices int) []rec {
	r := make([]rec, n)
	for i := range r {
		s := FirstVertexID + ID(rng.IntN(vertices))
		p := ID(1 + rng.IntN(40))
		r[i] = rec{MakeKey(s, p, Dir(rng.IntN(2))), FirstVertexID + ID(rng.IntN(vertices))}
	}
	return r
}

func TestRadixSortRecs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 255, 256, 1000, 100_000} {
		for _, vertices := range []int{1, 3, 1000, 1 << 26} {
			r := randomRecs(rng, n, vertices)
			if n > 10 {
				// Full 64-bit values and equal records too.
				r[0] = rec{^Key(0), ^ID(0)}
				r[1] = r[2]
			}
			want := slices.Clone(r)
			slices.SortFunc(want, cmpRec)
			got := radixSortRecs(r, make([]rec, len(r)))
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d vertices=%d: radix order differs from cmpRec's", n, vertices)
			}
		}
	}
}

func BenchmarkSortRuns(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := randomRecs(rng, 1<<20, 90_000_000)
	r := make([]rec, len(src))
	scratch := make([]rec, len(src))
	b.Run("slices.SortFunc", func(b *testing.B) {
		for b.Loop() {
			copy(r, src)
			slices.SortFunc(r, cmpRec)
		}
	})
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			copy(r, src)
			radixSortRecs(r, scratch)
		}
	})
}
