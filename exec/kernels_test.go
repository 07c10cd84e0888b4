package exec

import (
	"math/rand/v2"
	"sort"
	"testing"
)

func TestKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 300; n++ {
		l := make([]ID, rng.IntN(200))
		for i := range l {
			l[i] = ID(rng.IntN(400))
		}
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
		l = dedupSorted(l)
		for i := 1; i < len(l); i++ {
			if l[i] <= l[i-1] {
				t.Fatalf("dedupSorted left %v", l)
			}
		}
		for q := 0; q < 50; q++ {
			x := ID(rng.IntN(420))
			want := sort.Search(len(l), func(i int) bool { return l[i] >= x })
			from := 0
			if want > 0 {
				from = rng.IntN(want + 1)
			}
			if got := gallop(l, from, x); got != want {
				t.Fatalf("gallop(%v, %d, %d) = %d, want %d", l, from, x, got, want)
			}
			if got := contains(l, x); got != (want < len(l) && l[want] == x) {
				t.Fatalf("contains(%v, %d) = %v", l, x, got)
			}
		}
		u := mergeUnion([][]ID{l, l[:len(l)/2], {1, 3}})
		if !sort.SliceIsSorted(u, func(i, j int) bool { return u[i] < u[j] }) || len(dedupSorted(append([]ID(nil), u...))) != len(u) {
			t.Fatalf("mergeUnion not a sorted set: %v", u)
		}
	}
}

func TestKeySet(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := newKeySet(rng.IntN(10))
	m := map[Key]int32{}
	for i := 0; i < 20000; i++ {
		k := Key(1 + rng.IntN(5000)*4096)
		h, ok := s.get(k)
		want, wok := m[k]
		if ok != wok || (ok && h != want) {
			t.Fatalf("get(%d) = %d, %v; want %d, %v", k, h, ok, want, wok)
		}
		if !ok {
			m[k] = int32(i)
			s.put(k, int32(i))
		}
	}
	if s.n != len(m) {
		t.Fatalf("%d keys, want %d", s.n, len(m))
	}
}

// TestIDSetAdd checks the class bitmap grows both ways (a shard's list
// below the bitmap's start re-bases it) and holds exactly what was added.
func TestIDSetAdd(t *testing.T) {
	var s idSet
	want := map[ID]bool{}
	for _, x := range []ID{1000, 1063, 1064, 5000, 70, 64, 63, 1, 200000, 999} {
		s.add(x)
		want[x] = true
	}
	if s.lo%64 != 0 {
		t.Fatalf("lo %d is not a multiple of 64", s.lo)
	}
	for x := ID(0); x < 200100; x++ {
		if s.has(x) != want[x] {
			t.Fatalf("has(%d) = %v, want %v", x, s.has(x), want[x])
		}
	}
}
