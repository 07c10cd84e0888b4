package graphstore

import (
	"cmp"
	"math/bits"
	"slices"
)

// krecRadixMin is the number of records from which sortKrecs sorts by
// radix: below it the comparator sort is as quick and allocates nothing.
const krecRadixMin = 4096

// krecDigits is the width of one radix digit: 2^11 counters a digit (16
// KiB) keep every digit's histogram in cache at once, and a scatter into
// 2,048 runs stays within the TLB.
const krecDigits = 11

// sortKrecs sorts recs in cmpKrec's order. A big slice is sorted by an LSD
// radix sort over (o, k, v) as one 192-bit number, 11 bits a pass, least
// significant first; a digit every record shares (the shard when the
// records are one shard's, the high bits of IDs) costs no pass. Equal
// records are identical, so stability does not matter to the result.
func sortKrecs(recs []krec) {
	n := len(recs)
	if n < krecRadixMin {
		slices.SortFunc(recs, cmpKrec)
		return
	}
	// Digits 0..5 of v, 6..11 of k, 12..17 of o (64 bits each: 6 digits
	// of 11 bits cover 66).
	const perWord = (64 + krecDigits - 1) / krecDigits
	const digits = 3 * perWord
	const mask = 1<<krecDigits - 1
	var counts [digits][1 << krecDigits]int
	oneShard := true
	for i := range recs {
		r := &recs[i]
		v, k := uint64(r.v), uint64(r.k)
		for d := 0; d < perWord; d++ {
			s := uint(d * krecDigits)
			counts[d][v>>s&mask]++
			counts[perWord+d][k>>s&mask]++
		}
		oneShard = oneShard && r.o == recs[0].o
	}
	if !oneShard {
		for i := range recs {
			o := uint64(recs[i].o)
			for d := 0; d < perWord; d++ {
				counts[2*perWord+d][o>>uint(d*krecDigits)&mask]++
			}
		}
	}
	src, dst := recs, make([]krec, n)
	for d := 0; d < digits; d++ {
		if d >= 2*perWord && oneShard {
			break
		}
		c := &counts[d]
		s := uint(d % perWord * krecDigits)
		if c[krecWord(&src[0], d/perWord)>>s&mask] == n {
			continue // every record has this digit
		}
		at := 0
		for i, x := range c {
			c[i] = at
			at += x
		}
		switch d / perWord {
		case 0:
			for i := range src {
				b := uint64(src[i].v) >> s & mask
				dst[c[b]] = src[i]
				c[b]++
			}
		case 1:
			for i := range src {
				b := uint64(src[i].k) >> s & mask
				dst[c[b]] = src[i]
				c[b]++
			}
		default:
			for i := range src {
				b := uint64(src[i].o) >> s & mask
				dst[c[b]] = src[i]
				c[b]++
			}
		}
		src, dst = dst, src
	}
	if &src[0] != &recs[0] {
		copy(recs, src)
	}
}

// krecWord is the 64-bit word w (0 v, 1 k, 2 o) of r, least significant first.
func krecWord(r *krec, w int) uint64 {
	switch w {
	case 0:
		return uint64(r.v)
	case 1:
		return uint64(r.k)
	}
	return uint64(r.o)
}

// sortBulkRecs sorts recs in cmpBulkRec's order (s, p, o, seq), or by
// seq alone if bySeq, by radix as sortKrecs does from krecRadixMin records
// on. seq is unique, so either order is total and the result is the
// comparator sort's exactly.
func sortBulkRecs(recs []bulkRec, bySeq bool) {
	n := len(recs)
	if n < krecRadixMin {
		if bySeq {
			slices.SortFunc(recs, func(a, b bulkRec) int { return cmp.Compare(a.seq, b.seq) })
		} else {
			slices.SortFunc(recs, cmpBulkRec)
		}
		return
	}
	const perWord = (64 + krecDigits - 1) / krecDigits
	const mask = 1<<krecDigits - 1
	// Words least significant first: seq, o, p, s.
	// Digits above a word's highest set bit are zero in every record: no
	// count, no pass.
	var or [4]uint64
	for i := range recs {
		r := &recs[i]
		or[0] |= r.seq
		or[1] |= uint64(r.o)
		or[2] |= uint64(r.p)
		or[3] |= uint64(r.s)
	}
	var need [4]int
	for w, x := range or {
		if w == 0 || !bySeq {
			need[w] = (bits.Len64(x) + krecDigits - 1) / krecDigits
		}
	}
	var counts [4 * perWord][1 << krecDigits]int
	for i := range recs {
		r := &recs[i]
		for d, sh := 0, uint(0); d < need[0]; d, sh = d+1, sh+krecDigits {
			counts[d][r.seq>>sh&mask]++
		}
		for d, sh := 0, uint(0); d < need[1]; d, sh = d+1, sh+krecDigits {
			counts[perWord+d][uint64(r.o)>>sh&mask]++
		}
		for d, sh := 0, uint(0); d < need[2]; d, sh = d+1, sh+krecDigits {
			counts[2*perWord+d][uint64(r.p)>>sh&mask]++
		}
		for d, sh := 0, uint(0); d < need[3]; d, sh = d+1, sh+krecDigits {
			counts[3*perWord+d][uint64(r.s)>>sh&mask]++
		}
	}
	word := func(r *bulkRec, w int) uint64 {
		switch w {
		case 0:
			return r.seq
		case 1:
			return uint64(r.o)
		case 2:
			return uint64(r.p)
		}
		return uint64(r.s)
	}
	src, dst := recs, make([]bulkRec, n)
	for d := range 4 * perWord {
		if d%perWord >= need[d/perWord] {
			continue // zero in every record
		}
		c := &counts[d]
		sh := uint(d % perWord * krecDigits)
		if c[word(&src[0], d/perWord)>>sh&mask] == n {
			continue // every record has this digit
		}
		at := 0
		for i, x := range c {
			c[i] = at
			at += x
		}
		switch d / perWord {
		case 0:
			for i := range src {
				b := src[i].seq >> sh & mask
				dst[c[b]] = src[i]
				c[b]++
			}
		case 1:
			for i := range src {
				b := uint64(src[i].o) >> sh & mask
				dst[c[b]] = src[i]
				c[b]++
			}
		case 2:
			for i := range src {
				b := uint64(src[i].p) >> sh & mask
				dst[c[b]] = src[i]
				c[b]++
			}
		default:
			for i := range src {
				b := uint64(src[i].s) >> sh & mask
				dst[c[b]] = src[i]
				c[b]++
			}
		}
		src, dst = dst, src
	}
	if &src[0] != &recs[0] {
		copy(recs, src)
	}
}
