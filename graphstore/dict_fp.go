package graphstore

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/wukongd/wukongd/rdf"
)

// Fingerprints of the base dictionary's hash table (DESIGN.md §9, "Bulk
// writes"): a byte per slot, 0 for an empty slot, else a byte of the
// hash of the term the slot holds (1…255). The table is linear probing
// at load 0.7, so a lookup of a term it lacks passes ~6 occupied slots
// before an empty one, and without fingerprints each costs the entry's
// offset and bytes, two random reads: a Graph Store POST of new data
// looks up every new term so (LUBM-10 renamed into LUBM-40: 351 k misses,
// about half of its parse CPU). With them a probe reads a byte of one
// contiguous array and an entry only when its byte matches (1 in 255).
//
// They are built once per table, by a bulk insertion that looked up
// slots/8 terms in the table (BulkInsert.probed: by then its lookups have
// cost about what the build does, so a small body never pays it),
// on the goroutine that counts the last, and kept in memory only (1 byte per slot: ~1.4
// bytes per term).
type dictFP struct {
	once  sync.Once
	ready atomic.Bool
	fp    []byte
	err   error
}

// fpOf is the fingerprint of hash h (never 0).
func fpOf(h uint64) byte {
	if f := byte(h); f != 0 {
		return f
	}
	return 1
}

// fingerprints returns the table's fingerprints (nil: not built).
func (d *Dict) fingerprints() []byte {
	if f := d.fp; f != nil && f.ready.Load() {
		return f.fp
	}
	return nil
}

// buildFingerprints builds the fingerprints of d's table once (every
// Dict sharing the table shares them); it returns when they are built.
func (d *Dict) buildFingerprints() error {
	f := d.fp
	if f == nil || d.slots == 0 {
		return nil
	}
	f.once.Do(func() {
		// By entry, in order (the arena and offsets are read in order,
		// only the slot is a random read): an entry's slot is the first
		// of its probe sequence that names it; one left out of the table
		// (an aliased vertex, after compaction) meets an empty slot first.
		// On the caller's goroutine: a bulk goroutine that holds its
		// processor (cpugate), while the others go on without.
		fp := make([]byte, d.slots)
		var buf []byte
		for idx := range d.n {
			h, b, err := d.entryHash(idx, buf)
			if err != nil {
				f.err = err
				return
			}
			buf = b
			i, _ := bits.Mul64(h, d.slots)
			for e := d.slot(i); e != 0 && e != idx+1; e = d.slot(i) {
				if i++; i == d.slots {
					i = 0
				}
			}
			if d.slot(i) == idx+1 {
				fp[i] = fpOf(h)
			}
		}
		f.fp = fp
		f.ready.Store(true)
	})
	return f.err
}

// entryHash returns the hash of entry i's term (the one its slot was
// chosen by); buf is scratch space, returned for reuse.
func (d *Dict) entryHash(i uint64, buf []byte) (uint64, []byte, error) {
	kind, code, pfx, sfx, v, ok := parseEntry(d.entry(i))
	if !ok {
		return 0, buf, fmt.Errorf("BUG: malformed dictionary entry %d", i)
	}
	switch {
	case kind == byte(rdf.KindIRI):
		p, ok := d.prefix(code)
		if !ok {
			return 0, buf, fmt.Errorf("BUG: dictionary entry %d has prefix %d of %d", i, code, d.prefixes.len())
		}
		buf = append(append(buf[:0], p...), v...)
		return hashTerm(kind, 0, unsafe.String(unsafe.SliceData(buf), len(buf))), buf, nil
	case pfx != 0 || sfx != 0:
		p, x, ok := affixes(&d.prefixes, pfx, sfx)
		if !ok {
			return 0, buf, fmt.Errorf("BUG: dictionary entry %d has affixes %d, %d of %d", i, pfx, sfx, d.prefixes.len())
		}
		buf = append(append(append(buf[:0], p...), v...), x...)
		return hashTerm(kind, code, unsafe.String(unsafe.SliceData(buf), len(buf))), buf, nil
	}
	return hashTerm(kind, code, unsafe.String(unsafe.SliceData(v), len(v))), buf, nil
}
