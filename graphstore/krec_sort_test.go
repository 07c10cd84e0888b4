package graphstore

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// randKrecs draws n records of shards < shards, with IDs below 1<<bits,
// and some duplicates.
func randKrecs(rng *rand.Rand, n, shards int, bits uint) []krec {
	recs := make([]krec, n)
	for i := range recs {
		if i > 0 && rng.IntN(8) == 0 {
			recs[i] = recs[rng.IntN(i)]
			continue
		}
		v, p := ID(rng.Uint64N(1<<bits)), ID(rng.Uint64N(1<<10))
		recs[i] = krec{rng.IntN(shards), MakeKey(v, p, Dir(rng.IntN(2))), ID(rng.Uint64N(1 << bits))}
	}
	return recs
}

func TestSortKrecsMatchesComparatorSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		n, shards int
		bits      uint
	}{
		{10, 4, 20}, {krecRadixMin - 1, 4, 20}, {krecRadixMin, 1, 20}, {20000, 4, 22},
		{20000, 1, 40}, {50000, 3, 8}, {30000, 70000, 30},
	} {
		recs := randKrecs(rng, tc.n, tc.shards, tc.bits)
		want := slices.Clone(recs)
		slices.SortFunc(want, cmpKrec)
		sortKrecs(recs)
		if !slices.Equal(recs, want) {
			t.Fatalf("n=%d shards=%d bits=%d: radix order differs from cmpKrec's", tc.n, tc.shards, tc.bits)
		}
	}
	// All records alike: every digit is skipped.
	same := slices.Repeat([]krec{{2, MakeKey(5, 3, In), 7}}, krecRadixMin+5)
	sortKrecs(same)
	if same[0] != (krec{2, MakeKey(5, 3, In), 7}) || same[len(same)-1] != same[0] {
		t.Fatal("records changed")
	}
}

func BenchmarkSortKrecs(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := randKrecs(rng, 1<<20, 1, 22)
	recs := make([]krec, len(base))
	for _, s := range []struct {
		name string
		sort func([]krec)
	}{{"comparator", func(r []krec) { slices.SortFunc(r, cmpKrec) }}, {"radix", sortKrecs}} {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				copy(recs, base)
				s.sort(recs)
			}
		})
	}
}

func randBulkRecs(rng *rand.Rand, n int, bits uint) []bulkRec {
	recs := make([]bulkRec, n)
	for i := range recs {
		if i > 0 && rng.IntN(8) == 0 {
			recs[i] = recs[rng.IntN(i)]
		} else {
			recs[i] = bulkRec{ID(rng.Uint64N(1 << bits)), ID(rng.Uint64N(64)), ID(rng.Uint64N(1 << bits)), 0}
		}
		recs[i].seq = uint64(i) // unique, as the parse numbers them
	}
	rng.Shuffle(n, func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	return recs
}

func TestSortBulkRecsMatchesComparatorSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		n    int
		bits uint
	}{{10, 20}, {krecRadixMin - 1, 20}, {krecRadixMin, 8}, {30000, 22}, {30000, 40}} {
		recs := randBulkRecs(rng, tc.n, tc.bits)
		want := slices.Clone(recs)
		slices.SortFunc(want, cmpBulkRec)
		bySeq := slices.Clone(recs)
		sortBulkRecs(recs, false)
		if !slices.Equal(recs, want) {
			t.Fatalf("n=%d bits=%d: radix order differs from cmpBulkRec's", tc.n, tc.bits)
		}
		sortBulkRecs(bySeq, true)
		for i := range bySeq {
			if bySeq[i].seq != uint64(i) {
				t.Fatalf("n=%d bits=%d: by seq, record %d has seq %d", tc.n, tc.bits, i, bySeq[i].seq)
			}
		}
	}
}

func BenchmarkSortBulkRecs(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	base := randBulkRecs(rng, 640_000, 22)
	recs := make([]bulkRec, len(base))
	for _, s := range []struct {
		name string
		sort func([]bulkRec)
	}{{"comparator", func(r []bulkRec) { slices.SortFunc(r, cmpBulkRec) }}, {"radix", func(r []bulkRec) { sortBulkRecs(r, false) }}} {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				copy(recs, base)
				s.sort(recs)
			}
		})
	}
}
