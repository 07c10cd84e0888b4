package rdmakv

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Delta images: a DeltaTable written to a file and read back (a
// checkpoint of a graph store's delta, package graphstore).
//
// An image is the table's region up to its top, with two more header
// words: word 2 the top (in words) and word 3 the number of keys. Squash
// makes the table an image is written from: one group per key, so the
// image holds what a version reads and nothing of older or newer ones.

// Squash returns a new table with t's number of main buckets and, for
// every key of t, one group of stamp as: the IDs that t's groups with
// stamps ≤ stamp toggle an odd number of times, sorted (a key left with
// none is left out). It reads t as a reader at stamp does, so t's writer
// may append meanwhile. reserve is the new region's size (NewDeltaTable).
func (t *DeltaTable) Squash(stamp, as uint64, reserve int) (*DeltaTable, error) {
	nt, err := NewDeltaTable(reserve, int(t.nbuckets))
	if err != nil {
		return nil, err
	}
	var tg []uint64
	err = t.eachKey(func(key uint64, recs []uint64) error {
		tg = OddOnes(AppendVisible(tg[:0], recs, stamp))
		if len(tg) == 0 {
			return nil
		}
		return nt.appendNew(key, as, tg)
	})
	if err != nil {
		nt.Close()
		return nil, err
	}
	return nt, nil
}

// appendNew is Append of a key t does not hold yet, into a block of
// exactly the words it needs (an image holds no spare capacity; the
// first later append copies the block into one twice as large).
func (t *DeltaTable) appendNew(key, stamp uint64, ids []uint64) error {
	slot, free, link := t.find(key)
	if !free {
		return fmt.Errorf("BUG: squashing key %#x twice", key)
	}
	if slot == 0 {
		nb, err := t.alloc(DeltaBucketSize / 8)
		if err != nil {
			return err
		}
		clear(t.words[nb : nb+DeltaBucketSize/8])
		t.words[link] = nb * 8
		slot = nb + 1
	}
	need := 1 + uint64(len(ids))
	if need > deltaLenMask {
		return fmt.Errorf("%w: list of key %#x would have %d words", ErrDeltaFull, key, need)
	}
	off, err := t.alloc(deltaBlockHdr + need)
	if err != nil {
		return err
	}
	t.words[off], t.words[off+1] = key, need
	t.words[off+deltaBlockHdr] = deltaStampBit | stamp
	copy(t.words[off+deltaBlockHdr+1:], ids)
	t.words[slot-1] = key
	t.words[slot] = deltaRef(off, need)
	t.keys.Add(1)
	return nil
}

// eachKey calls fn with every key of t that has a list and its committed
// record words (aliasing the region), bucket by bucket.
func (t *DeltaTable) eachKey(fn func(key uint64, recs []uint64) error) error {
	for b := uint64(0); b < t.nbuckets; b++ {
		at := (DeltaHeaderSize + b*DeltaBucketSize) / 8
		for {
			for i := uint64(0); i < deltaSlots; i++ {
				ref := atomic.LoadUint64(&t.words[at+2*i+1])
				if ref == 0 {
					continue
				}
				key := t.words[at+2*i]
				off, n := deltaRefParts(ref)
				if err := fn(key, t.words[off+deltaBlockHdr:off+deltaBlockHdr+n:off+deltaBlockHdr+n]); err != nil {
					return err
				}
			}
			next := atomic.LoadUint64(&t.words[at+15])
			if next == 0 {
				break
			}
			at = next / 8
		}
	}
	return nil
}

// OddOnes sorts tg and keeps the values that occur an odd number of times
// (in place): what a list of toggles leaves toggled. graphstore's delta
// reads its records with it too.
func OddOnes(tg []uint64) []uint64 {
	slices.Sort(tg)
	w := 0
	for i := 0; i < len(tg); {
		j := i + 1
		for j < len(tg) && tg[j] == tg[i] {
			j++
		}
		if (j-i)%2 == 1 {
			tg[w] = tg[i]
			w++
		}
		i = j
	}
	return tg[:w]
}

// ImageSize returns the bytes WriteImage writes.
func (t *DeltaTable) ImageSize() int64 { return int64(t.top) * 8 }

// WriteImage writes t's image to w. No one may append to t meanwhile (t
// is a table Squash made, or its writer waits).
func (t *DeltaTable) WriteImage(w io.Writer) error {
	var hdr [DeltaHeaderSize / 8]uint64
	copy(hdr[:], t.words[:DeltaHeaderSize/8])
	hdr[2], hdr[3] = t.top, uint64(t.keys.Load())
	if _, err := w.Write(wordBytes(hdr[:])); err != nil {
		return err
	}
	_, err := w.Write(wordBytes(t.words[DeltaHeaderSize/8 : t.top]))
	return err
}

// wordBytes views words as bytes (the region's little-endian layout on
// a little-endian machine, as the rest of the delta code assumes).
func wordBytes(w []uint64) []byte {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8)
}

// ErrBadImage is returned for a delta image that is not one.
var ErrBadImage = errors.New("bad delta image")

// LoadDeltaTable reads a delta image of size bytes from r into a new
// table (a region of reserve bytes, NewDeltaTable, or more if the image
// needs it) and checks its structure: every chain, slot, block and
// record bound, so that a damaged image is refused (ErrBadImage) rather
// than read out of bounds. check, if set, is called with the image's
// bytes once they are read (a checksum), before they are parsed. The
// table can be appended to as if it had been written here.
func LoadDeltaTable(r io.Reader, size int64, reserve int, check func([]byte) error) (*DeltaTable, error) {
	if size < DeltaHeaderSize || size%8 != 0 || size >= 1<<(deltaOffBits+3) {
		return nil, fmt.Errorf("%w: %d bytes", ErrBadImage, size)
	}
	need := int(size) + 1<<20
	if reserve < need {
		reserve = need
	}
	reserve = (reserve + 4095) &^ 4095
	buf, err := unix.Mmap(-1, 0, reserve, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("cannot reserve a delta region of %d bytes: %w", reserve, err)
	}
	t := &DeltaTable{region: &Region{buf: buf, mapped: true}, words: unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(buf))), len(buf)/8)}
	fail := func(err error) (*DeltaTable, error) {
		t.Close()
		return nil, err
	}
	if _, err := io.ReadFull(r, buf[:size]); err != nil {
		return fail(fmt.Errorf("cannot read a delta image of %d bytes: %w", size, err))
	}
	if check != nil {
		if err := check(buf[:size]); err != nil {
			return fail(err)
		}
	}
	if err := t.adoptImage(uint64(size) / 8); err != nil {
		return fail(err)
	}
	return t, nil
}

// adoptImage checks the image in t's first words words and makes t the
// table it holds.
func (t *DeltaTable) adoptImage(words uint64) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrBadImage, fmt.Sprintf(format, a...))
	}
	w := t.words
	nb, top, keys := w[1], w[2], w[3]
	mainEnd := (DeltaHeaderSize + nb*DeltaBucketSize) / 8
	switch {
	case w[0] != deltaMagic:
		return bad("magic %#x", w[0])
	case nb == 0 || nb&(nb-1) != 0 || nb > 1<<32:
		return bad("%d buckets", nb)
	case top != words || top < mainEnd:
		return bad("top %d of %d words, the buckets end at %d", top, words, mainEnd)
	}
	for i := 2; i < DeltaHeaderSize/8; i++ {
		if i > 3 && w[i] != 0 {
			return bad("header word %d is %#x", i, w[i])
		}
	}
	// Every chain: buckets inside the arena, not more than could fit;
	// every slot's key hashing to its chain, its block inside the arena,
	// naming the key, within its capacity, starting with a stamp word and
	// with stamps in order.
	var found uint64
	maxHops := (top-mainEnd)/(DeltaBucketSize/8) + 1
	for b := uint64(0); b < nb; b++ {
		at := (DeltaHeaderSize + b*DeltaBucketSize) / 8
		for hop := uint64(0); ; hop++ {
			if hop > maxHops {
				return bad("bucket %d: the chain loops", b)
			}
			for i := uint64(0); i < deltaSlots; i++ {
				key, ref := w[at+2*i], w[at+2*i+1]
				if ref == 0 {
					if key != 0 {
						return bad("bucket %d: an empty slot with key %#x", b, key)
					}
					continue
				}
				if deltaBucketOf(key, nb) != b {
					return bad("key %#x is in bucket %d's chain", key, b)
				}
				off, n := deltaRefParts(ref)
				if off < mainEnd || off+deltaBlockHdr > top || w[off] != key {
					return bad("key %#x: block at word %d", key, off)
				}
				capw := w[off+1]
				if n == 0 || n > capw || off+deltaBlockHdr+capw > top {
					return bad("key %#x: %d record words in a block of %d", key, n, capw)
				}
				recs := w[off+deltaBlockHdr : off+deltaBlockHdr+n]
				var last uint64
				for j, x := range recs {
					if x&deltaStampBit == 0 {
						if j == 0 {
							return bad("key %#x: records start with an ID", key)
						}
						continue
					}
					if s := x &^ deltaStampBit; s < last {
						return bad("key %#x: stamps out of order", key)
					} else {
						last = s
					}
				}
				found++
			}
			next := w[at+15]
			if w[at+14] != 0 {
				return bad("bucket %d: link slot key %#x", b, w[at+14])
			}
			if next == 0 {
				break
			}
			if next%8 != 0 || next/8 < mainEnd || next/8+DeltaBucketSize/8 > top {
				return bad("bucket %d: next bucket at byte %d", b, next)
			}
			at = next / 8
		}
	}
	if found != keys {
		return bad("%d keys found, the header says %d", found, keys)
	}
	w[2], w[3] = 0, 0
	t.nbuckets, t.top = nb, top
	t.keys.Store(int64(keys))
	return nil
}
