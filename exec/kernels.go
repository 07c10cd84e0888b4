package exec

import (
	"math"
	"math/bits"
	"sort"
)

// Sorted-ID kernels. Adjacency lists are sorted ascending without
// duplicates; the kernels pick their strategy by size.

// contains reports whether the sorted list l holds x: a linear scan for
// short lists, binary search otherwise.
func contains(l []ID, x ID) bool {
	if len(l) <= 16 {
		for _, v := range l {
			if v >= x {
				return v == x
			}
		}
		return false
	}
	lo, hi := 0, len(l)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if l[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(l) && l[lo] == x
}

// mergeUnion returns the sorted union of sorted lists (the parts of an
// index vertex spread over shards, which are disjoint, or not).
func mergeUnion(lists [][]ID) []ID {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	out := make([]ID, 0, n)
	for _, l := range lists {
		out = append(out, l...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return dedupSorted(out)
}

// differenceSorted returns the IDs of a (sorted, distinct) not in b
// (sorted), in a new slice.
func differenceSorted(a, b []ID) []ID {
	out := make([]ID, 0, len(a))
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			continue
		}
		out = append(out, x)
	}
	return out
}

// appendIntersection appends the IDs in both sorted lists a and b to dst,
// ascending: it gallops through the longer list with each element of the
// shorter when their sizes differ by more than 8×, else merges the two.
func appendIntersection(dst, a, b []ID) []ID {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 {
		return dst
	}
	if len(a)*8 < len(b) {
		pos := 0
		for _, x := range a {
			pos = gallop(b, pos, x)
			if pos == len(b) {
				break
			}
			if b[pos] == x {
				dst = append(dst, x)
			}
		}
		return dst
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch x, y := a[i], b[j]; {
		case x < y:
			i++
		case x > y:
			j++
		default:
			dst = append(dst, x)
			i++
			j++
		}
	}
	return dst
}

// dedupSorted removes adjacent duplicates in place.
func dedupSorted(l []ID) []ID {
	if len(l) < 2 {
		return l
	}
	w := 1
	for i := 1; i < len(l); i++ {
		if l[i] != l[w-1] {
			l[w] = l[i]
			w++
		}
	}
	return l[:w]
}

// gallop returns the first index i >= from with l[i] >= x (len(l) if
// none): exponential steps from from, then binary search, so a run of
// ascending probes costs about the distance it moves, not log(len(l))
// each.
func gallop(l []ID, from int, x ID) int {
	if from >= len(l) || l[from] >= x {
		return from
	}
	step := 1
	lo, hi := from, from+1 // l[lo] < x
	for hi < len(l) && l[hi] < x {
		lo = hi
		step <<= 1
		hi = lo + step
	}
	if hi > len(l) {
		hi = len(l)
	}
	// l[lo] < x, and l[hi] >= x or hi == len(l)
	for lo+1 < hi {
		m := int(uint(lo+hi) >> 1)
		if l[m] < x {
			lo = m
		} else {
			hi = m
		}
	}
	return hi
}

// keySet maps adjacency keys to int32 handles: open addressing with
// linear probing over a power-of-two table, multiplicative hashing. Key 0
// (vertex 0, never looked up) marks an empty slot. It replaces a Go map on
// the per-row path of a step's key deduplication, where hashing every row's
// key through map[Key]int32 cost about 40 ns a row (LUBM-40 L1: 103,683
// rows, 5,194 distinct keys).
type keySet struct {
	keys  []Key
	vals  []int32
	shift uint
	n     int
}

func newKeySet(hint int) *keySet {
	size := 16
	for size < 2*hint {
		size <<= 1
	}
	s := &keySet{}
	s.alloc(size)
	return s
}

func (s *keySet) alloc(size int) {
	s.keys = make([]Key, size)
	s.vals = make([]int32, size)
	s.shift = uint(64 - bitsLen(size-1))
	s.n = 0
}

func bitsLen(x int) int {
	n := 0
	for x > 0 {
		n++
		x >>= 1
	}
	return n
}

// slot returns the slot of k: where it is, or the empty slot it would go.
func (s *keySet) slot(k Key) int {
	mask := len(s.keys) - 1
	i := int((uint64(k) * 0x9E3779B97F4A7C15) >> s.shift)
	for {
		if x := s.keys[i]; x == k || x == 0 {
			return i
		}
		i = (i + 1) & mask
	}
}

// get returns the handle of k.
func (s *keySet) get(k Key) (int32, bool) {
	i := s.slot(k)
	return s.vals[i], s.keys[i] != 0
}

// put sets the handle of k (k != 0, not yet in s).
func (s *keySet) put(k Key, h int32) {
	if 2*(s.n+1) > len(s.keys) {
		keys, vals := s.keys, s.vals
		s.alloc(2 * len(keys))
		for i, x := range keys {
			if x != 0 {
				s.put(x, vals[i])
			}
		}
	}
	i := s.slot(k)
	s.keys[i], s.vals[i] = k, h
	s.n++
}

// runs returns the number of runs of equal values in col.
func runs(col []ID) int {
	n := 0
	for i, v := range col {
		if i == 0 || v != col[i-1] {
			n++
		}
	}
	return n
}

// distinctEstimate estimates the distinct values of col by linear
// counting: hash each value to one of m = 2^17 bits; with z bits left
// zero, about -m·ln(z/m) values were distinct. One pass and 16 KiB,
// within a few percent up to some 300,000 distinct values, never above
// len(col).
func distinctEstimate(col []ID) float64 {
	const m = 1 << 17
	set := make([]uint64, m/64)
	for _, v := range col {
		h := uint64(v) // murmur3's finalizer: every bit of v moves the top bits
		h ^= h >> 33
		h *= 0xff51afd7ed558ccd
		h ^= h >> 33
		h *= 0xc4ceb9fe1a85ec53
		h ^= h >> 33
		h >>= 64 - 17
		set[h>>6] |= 1 << (h & 63)
	}
	zeros := 0
	for _, w := range set {
		zeros += 64 - popcount(w)
	}
	if zeros == 0 {
		return float64(len(col))
	}
	return math.Min(float64(len(col)), -m*math.Log(float64(zeros)/m))
}

func popcount(x uint64) int { return bits.OnesCount64(x) }
