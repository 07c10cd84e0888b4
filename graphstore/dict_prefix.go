package graphstore

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// prefixTable is the IRI prefix table of a dictionary (entry code =
// index + 1): strings in memory while building, or the prefix section of
// a mapped dict.bin (WKDICT03: a count, an offset width, the offsets, the
// bytes back to back), which opening does not walk — at LUBM-2560 it
// holds 2.3 M prefixes (≈ 150 MB) that copying into strings at open
// would cost seconds and as much heap.
type prefixTable struct {
	strs []string // in memory; nil when mapped
	raw  []byte   // mapped: the prefixes back to back
	offs []byte   // mapped: (n+1) offsets into raw of offW bytes
	offW uint64
	n    int
}

func stringPrefixes(s []string) prefixTable { return prefixTable{strs: s, n: len(s)} }

func (t *prefixTable) len() int { return t.n }

// get returns prefix i (0-based); ok is false for an i outside the table
// or a mapped prefix whose offsets are out of order (a corrupt file). A
// mapped prefix is a view of the mapping (no copy): callers compare it or
// copy it into a new string or buffer, and never keep it past the
// dictionary's Close.
func (t *prefixTable) get(i int) (string, bool) {
	if i < 0 || i >= t.n {
		return "", false
	}
	if t.offs == nil {
		return t.strs[i], true
	}
	lo, hi := getUint(t.offs, t.offW, uint64(i)), getUint(t.offs, t.offW, uint64(i)+1)
	if lo > hi || hi > uint64(len(t.raw)) {
		return "", false
	}
	if lo == hi {
		return "", true
	}
	return unsafe.String(&t.raw[lo], int(hi-lo)), true
}

// at is get for an index known to be valid (in memory, or already checked).
func (t *prefixTable) at(i int) string {
	p, _ := t.get(i)
	return p
}

// bytes is the size of the prefixes (and, mapped, of their offsets).
func (t *prefixTable) bytes() uint64 {
	if t.offs != nil {
		return uint64(len(t.raw) + len(t.offs))
	}
	n := uint64(0)
	for _, p := range t.strs {
		n += uint64(len(p))
	}
	return n
}

// all returns a copy of every prefix (for a dictionary rebuilt on writes).
func (t *prefixTable) all() []string {
	out := make([]string, t.n)
	for i := range out {
		out[i] = string([]byte(t.at(i)))
	}
	return out
}

// appendPrefixSection appends the WKDICT03 prefix section of t.
func (t *prefixTable) appendSection(b []byte) []byte {
	total := uint64(0)
	for i := 0; i < t.n; i++ {
		total += uint64(len(t.at(i)))
	}
	w := uint64(4)
	if total >= 1<<32 {
		w = 8
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(t.n))
	b = binary.LittleEndian.AppendUint64(b, w)
	at := len(b)
	b = append(b, make([]byte, w*uint64(t.n+1))...)
	off := uint64(0)
	for i := 0; i <= t.n; i++ {
		putUint(b[at:], w, uint64(i), off)
		if i < t.n {
			off += uint64(len(t.at(i)))
		}
	}
	for i := 0; i < t.n; i++ {
		b = append(b, t.at(i)...)
	}
	return b
}

// parsePrefixSection maps a WKDICT03 prefix section without copying it;
// only its bounds are checked (an offset beyond them is refused by the
// entry that uses it).
func parsePrefixSection(a []byte) (prefixTable, error) {
	if len(a) == 0 {
		return prefixTable{}, nil
	}
	if len(a) < 16 {
		return prefixTable{}, fmt.Errorf("dictionary: bad prefix table")
	}
	n, w := binary.LittleEndian.Uint64(a), binary.LittleEndian.Uint64(a[8:])
	if (w != 4 && w != 8) || n >= uint64(len(a)) || 16+w*(n+1) > uint64(len(a)) {
		return prefixTable{}, fmt.Errorf("dictionary: bad prefix table")
	}
	offs := a[16 : 16+w*(n+1)]
	raw := a[16+w*(n+1):]
	if getUint(offs, w, 0) != 0 || getUint(offs, w, n) != uint64(len(raw)) {
		return prefixTable{}, fmt.Errorf("dictionary: bad prefix table")
	}
	return prefixTable{raw: raw, offs: offs, offW: w, n: int(n)}, nil
}
