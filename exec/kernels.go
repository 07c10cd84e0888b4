package exec

import "sort"

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
