package graphstore

import "slices"

// radixSortRecs sorts r by (key, neighbour) as cmpRec does, with a
// least-significant-digit radix sort over the 16 bytes of (k, v): one
// pass counts every byte position, then each position whose byte is not
// the same in every record moves the records once between r and scratch
// (stable, so later passes keep the order of earlier ones). Keys of a
// load use few of their bits (vertex IDs below 2^27, a handful of
// predicates), so about nine of the sixteen positions move anything.
// scratch must hold len(r) records; the sorted records end up in r or in
// scratch, whichever is returned.
func radixSortRecs(r, scratch []rec) []rec {
	if len(r) < 256 {
		slices.SortFunc(r, cmpRec)
		return r
	}
	var counts [16][256]uint32
	for _, x := range r {
		k, v := uint64(x.k), uint64(x.v)
		for b := 0; b < 8; b++ {
			counts[b][byte(v>>(8*b))]++
			counts[8+b][byte(k>>(8*b))]++
		}
	}
	src, dst := r, scratch[:len(r)]
	n := uint32(len(r))
	for pos := 0; pos < 16; pos++ {
		c := &counts[pos]
		if c[byte(digitOf(src[0], pos))] == n {
			continue // every record has the same byte here
		}
		var offs [256]uint32
		sum := uint32(0)
		for i, k := range c {
			offs[i] = sum
			sum += k
		}
		shift := uint(8 * (pos % 8))
		if pos < 8 {
			for _, x := range src {
				d := byte(uint64(x.v) >> shift)
				dst[offs[d]] = x
				offs[d]++
			}
		} else {
			for _, x := range src {
				d := byte(uint64(x.k) >> shift)
				dst[offs[d]] = x
				offs[d]++
			}
		}
		src, dst = dst, src
	}
	return src
}

// digitOf is byte pos of x's sort key: 0–7 the neighbour's, least
// significant first, 8–15 the key's.
func digitOf(x rec, pos int) uint64 {
	if pos < 8 {
		return uint64(x.v) >> (8 * pos)
	}
	return uint64(x.k) >> (8 * (pos - 8))
}
