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
