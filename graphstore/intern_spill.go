package graphstore

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/wukongd/wukongd/rdf"
)

// Bounded interning (DatasetBuilder.SpillTo). The interning stripes grow
// with the number of distinct terms (≈ 50 bytes a term: entry, offset,
// hash, role, table slots), which at LUBM-2560's 84 M terms is more than
// the rest of the build. With a spill directory each stripe holds at most
// a share of the budget: when it is full, its terms are sealed — written
// as a generation to the stripe's file in the spill directory — and it
// starts afresh. Local indexes keep counting across generations (a
// stripe's base), so a provisional number stays unique; a term seen again
// after a seal is interned again under a second number.
//
// When the dictionary is laid out, each stripe in turn is consolidated:
// its generations, oldest first, are interned again into one fresh
// stripe, which gives every distinct term the local index it would have
// had without seals (the first occurrence wins, and role bits are or-ed),
// and maps every provisional number to it. The fresh stripe is written
// back to the spill directory, and only its prefixes and its predicates
// and classes stay in memory; the final dictionary is then laid out
// stripe after stripe from those files. The result is byte-identical to
// the unbounded build of the same input order. What stays proportional
// to the number of terms: the provisional-to-final map (4 bytes a
// provisional number, needed to partition the triples), the prefix
// strings, and the final dictionary itself while it is laid out.

// memBytes estimates the memory the stripe holds.
func (s *stripe) memBytes() int64 {
	return int64(cap(s.arena)) + 4*int64(cap(s.offs)) + 8*int64(cap(s.hashes)) + int64(cap(s.roles)) +
		8*int64(len(s.table)) + s.prefixBytes
}

// seal appends the stripe's terms to its generation file as one
// generation and empties the stripe (the caller holds its lock).
func (s *stripe) seal() error {
	if s.gens == nil {
		f, err := os.CreateTemp(s.dir, "terms-*")
		if err != nil {
			return fmt.Errorf("cannot spill terms: %w", err)
		}
		s.gens = f
	}
	if s.genW == nil {
		s.genW = bufio.NewWriterSize(s.gens, 64<<10)
	}
	w := s.genW
	if err := writeGeneration(w, s); err != nil {
		return fmt.Errorf("cannot spill terms: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("cannot spill terms: %w", err)
	}
	s.genN++
	s.sealedBytes.Add(uint64(len(s.arena) + 13*len(s.offs)))
	s.base += uint32(len(s.offs))
	s.arena, s.offs, s.hashes, s.roles, s.table = nil, nil, nil, nil, nil
	s.prefixes, s.prefixIdx, s.lastPrefix, s.prefixBytes = prefixTable{}, nil, 0, 0
	return nil
}

// writeGeneration writes the terms of s: counts, prefixes, arena,
// offsets, hashes, roles.
func writeGeneration(w io.Writer, s *stripe) error {
	var hdr [24]byte
	binary.LittleEndian.PutUint64(hdr[0:], uint64(len(s.offs)))
	binary.LittleEndian.PutUint64(hdr[8:], uint64(len(s.arena)))
	binary.LittleEndian.PutUint64(hdr[16:], uint64(len(s.prefixes.strs)))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	var b []byte
	for _, p := range s.prefixes.strs {
		b = binary.AppendUvarint(b[:0], uint64(len(p)))
		b = append(b, p...)
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	if _, err := w.Write(s.arena); err != nil {
		return err
	}
	if _, err := w.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s.offs))), 4*len(s.offs))); err != nil {
		return err
	}
	if _, err := w.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s.hashes))), 8*len(s.hashes))); err != nil {
		return err
	}
	_, err := w.Write(s.roles)
	return err
}

// readGeneration reads what writeGeneration wrote into a stripe without a
// table (entries, hashes, roles and prefixes only).
func readGeneration(r *bufio.Reader) (*stripe, error) {
	var hdr [24]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(hdr[0:])
	arena := binary.LittleEndian.Uint64(hdr[8:])
	np := binary.LittleEndian.Uint64(hdr[16:])
	if n > maxLocal+1 || arena > 1<<32 || np > arena+1 {
		return nil, fmt.Errorf("corrupt term generation (%d terms, %d bytes, %d prefixes)", n, arena, np)
	}
	s := &stripe{}
	strs := make([]string, np)
	for i := range strs {
		l, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		if l > 1<<24 {
			return nil, fmt.Errorf("corrupt term generation: a prefix of %d bytes", l)
		}
		p := make([]byte, l)
		if _, err := io.ReadFull(r, p); err != nil {
			return nil, err
		}
		strs[i] = unsafe.String(unsafe.SliceData(p), len(p))
	}
	s.prefixes = stringPrefixes(strs)
	s.arena = make([]byte, arena)
	s.offs = make([]uint32, n)
	s.hashes = make([]uint64, n)
	s.roles = make([]byte, n)
	for _, b := range [][]byte{s.arena,
		unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s.offs))), 4*n),
		unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s.hashes))), 8*n),
		s.roles} {
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
	}
	for i, o := range s.offs {
		if uint64(o) < 4 || uint64(o) > arena || (i > 0 && o < s.offs[i-1]) {
			return nil, fmt.Errorf("corrupt term generation: offset %d of term %d", o, i)
		}
	}
	return s, nil
}

// sealed reports whether any stripe sealed a generation.
func (b *Builder) sealed() bool {
	for s := range b.stripes {
		if b.stripes[s].genN > 0 {
			return true
		}
	}
	return false
}

// minStripeLimit is the least a stripe holds before it seals (a few
// hundred terms beside its smallest table).
const minStripeLimit = 12 << 10

// limitStripes makes each stripe seal its terms into dir beyond limit
// bytes.
func (b *Builder) limitStripes(dir string, limit int64) {
	for s := range b.stripes {
		st := &b.stripes[s]
		st.mu.Lock()
		st.sealedBytes = &b.termsSpilled
		st.dir, st.limit = dir, max(limit, minStripeLimit)
		st.mu.Unlock()
	}
}

// consolidate interns stripe si's generations, oldest first, and its
// live terms into a fresh stripe; old maps every local index handed out
// to the fresh stripe's. The generation file is removed and the live
// terms dropped.
func (b *Builder) consolidate(si int, done *atomic.Uint64) (fresh *stripe, old []uint32, err error) {
	st := &b.stripes[si]
	st.mu.Lock()
	defer st.mu.Unlock()
	old = make([]uint32, uint64(st.base)+uint64(len(st.offs)))
	fresh = &stripe{}
	pos := 0
	var buf []byte
	add := func(g *stripe) error {
		for i := range g.offs {
			var kind byte
			var code uint32
			kind, code, buf, err = g.fullTerm(uint32(i), buf)
			if err != nil {
				return err
			}
			nl, err := fresh.intern(g.hashes[i], kind, code, bytesView(buf), 0)
			if err != nil {
				return err
			}
			fresh.roles[nl] |= g.roles[i]
			old[pos] = nl
			pos++
		}
		if done != nil {
			done.Add(uint64(len(g.offs)))
		}
		return nil
	}
	if st.gens != nil {
		defer func() {
			name := st.gens.Name()
			st.gens.Close()
			os.Remove(name)
			st.gens, st.genN, st.genW = nil, 0, nil
		}()
		if _, err := st.gens.Seek(0, io.SeekStart); err != nil {
			return nil, nil, fmt.Errorf("cannot read spilled terms: %w", err)
		}
		r := bufio.NewReaderSize(st.gens, 1<<20)
		for k := 0; k < st.genN; k++ {
			g, err := readGeneration(r)
			if err != nil {
				return nil, nil, fmt.Errorf("cannot read spilled terms: %w", err)
			}
			if err := add(g); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := add(st); err != nil {
		return nil, nil, err
	}
	st.arena, st.offs, st.hashes, st.roles, st.table = nil, nil, nil, nil, nil
	st.prefixes, st.prefixIdx, st.lastPrefix, st.prefixBytes, st.base = prefixTable{}, nil, 0, 0, 0
	fresh.table = nil
	return fresh, old, nil
}

// fullTerm returns term i of s as intern takes it (kind, annotation code,
// the whole value, written into buf).
func (s *stripe) fullTerm(i uint32, buf []byte) (byte, uint32, []byte, error) {
	e := s.entry(i)
	kind, code, pfx, sfx, v, ok := parseEntry(e)
	if !ok {
		return 0, 0, buf, fmt.Errorf("corrupt spilled term %d", i)
	}
	buf = buf[:0]
	switch kind {
	case byte(rdf.KindIRI):
		if code > 0 {
			if int(code) > len(s.prefixes.strs) {
				return 0, 0, buf, fmt.Errorf("corrupt spilled term %d: prefix %d", i, code)
			}
			buf = append(buf, s.prefixes.strs[code-1]...)
		}
		return kind, 0, append(buf, v...), nil
	case byte(rdf.KindLiteral):
		head, suffix, ok := affixes(&s.prefixes, pfx, sfx)
		if !ok {
			return 0, 0, buf, fmt.Errorf("corrupt spilled term %d: affixes %d, %d", i, pfx, sfx)
		}
		buf = append(append(append(buf, head...), v...), suffix...)
		return kind, code, buf, nil
	}
	return kind, 0, append(buf, v...), nil
}

// adopt makes st hold fresh's terms (the caller holds st's lock).
func (st *stripe) adopt(fresh *stripe) {
	st.arena, st.offs, st.hashes, st.roles, st.table = fresh.arena, fresh.offs, fresh.hashes, fresh.roles, fresh.table
	st.prefixes, st.prefixIdx, st.lastPrefix, st.prefixBytes = fresh.prefixes, fresh.prefixIdx, fresh.lastPrefix, fresh.prefixBytes
	st.base, st.limit = 0, 0
}

// unseal consolidates every stripe in memory (Build after seals): the
// stripes then hold each distinct term once, as without seals, and old
// maps the provisional local indexes to theirs (composeRemap).
func (b *Builder) unseal() ([stripeCount][]uint32, error) {
	var old [stripeCount][]uint32
	for s := range b.stripes {
		fresh, o, err := b.consolidate(s, nil)
		if err != nil {
			return old, err
		}
		st := &b.stripes[s]
		st.mu.Lock()
		st.adopt(fresh)
		st.mu.Unlock()
		old[s] = o
	}
	ts := b.typeTN & (stripeCount - 1)
	b.typeTN = old[ts][b.typeTN>>stripeBits]<<stripeBits | ts
	return old, nil
}

// composeRemap makes m map provisional numbers of before the
// consolidation (old: provisional local -> consolidated local).
func composeRemap(m *termRemap, old *[stripeCount][]uint32) {
	for s := range old {
		o := old[s]
		for j, l := range o {
			o[j] = m.idx[s][l]
		}
		m.idx[s] = o
	}
}

// pcTerm is a predicate or class of a sealed build, kept in memory while
// the vertices are laid out from the consolidated stripes.
type pcTerm struct {
	entry []byte
	h     uint64
	role  byte
	s     int
}

// maxConsolidating is the most stripes consolidated at once.
const maxConsolidating = 4

// consolidated is where consolidateToFile puts a stripe's results.
type consolidated struct {
	file     **os.File // the consolidated stripe, written
	pcLocals *[]uint32 // consolidated locals of its predicates and classes, ascending
	pcs      *[]pcTerm // those terms, in local order
	prefixes *[]string // its prefix strings
	count    *uint64   // its distinct terms
	arena    *uint64   // its arena's bytes
	old      *[]uint32 // provisional local -> consolidated local
}

// consolidateToFile consolidates stripe s and writes the fresh stripe to
// a file in dir; only its predicates and classes and its prefixes stay
// in memory.
func (b *Builder) consolidateToFile(s int, dir string, done *atomic.Uint64, out *consolidated) error {
	fresh, old, err := b.consolidate(s, done)
	if err != nil {
		return fmt.Errorf("cannot build the dictionary: %w", err)
	}
	for l, r := range fresh.roles {
		if r != 0 {
			*out.pcLocals = append(*out.pcLocals, uint32(l))
			*out.pcs = append(*out.pcs, pcTerm{entry: append([]byte(nil), fresh.entry(uint32(l))...), h: fresh.hashes[l], role: r, s: s})
		}
	}
	f, err := os.CreateTemp(dir, "dict-*")
	if err != nil {
		return fmt.Errorf("cannot spill terms: %w", err)
	}
	*out.file = f
	w := bufio.NewWriterSize(f, 1<<20)
	if err := writeGeneration(w, fresh); err != nil {
		return fmt.Errorf("cannot spill terms: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("cannot spill terms: %w", err)
	}
	*out.prefixes = fresh.prefixes.strs
	*out.count = uint64(len(fresh.offs))
	*out.arena = uint64(len(fresh.arena))
	*out.old = old
	return nil
}

// buildSealedDict renumbers and lays out the dictionary of a builder
// whose stripes sealed generations, one stripe in memory at a time
// (see above); dir holds the consolidated stripes meanwhile. done counts
// the provisional terms consolidated, total is told their number.
func (b *Builder) buildSealedDict(dir string, done *atomic.Uint64, total func(uint64)) (*Dict, termRemap, error) {
	var remap termRemap
	var files [stripeCount]*os.File
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
	}()
	var lists [stripeCount][]string
	var counts [stripeCount]uint64
	var pcLocals [stripeCount][]uint32 // consolidated locals of predicates and classes, ascending
	var pcs []pcTerm                   // in stripe, local order
	var arenaLen, n, provisional uint64
	for s := range b.stripes {
		provisional += uint64(b.stripes[s].base) + uint64(len(b.stripes[s].offs))
	}
	total(provisional)
	// Stripes are consolidated independently: a few at a time (each holds
	// its fresh stripe, about a 64th of the terms, until written), their
	// results kept by stripe so that what follows sees them in order.
	var pcsOf [stripeCount][]pcTerm
	var errs [stripeCount]error
	var arenas [stripeCount]uint64
	parallelN(stripeCount, min(runtime.GOMAXPROCS(0), maxConsolidating), func(s int) {
		errs[s] = b.consolidateToFile(s, dir, done, &consolidated{file: &files[s], pcLocals: &pcLocals[s], pcs: &pcsOf[s],
			prefixes: &lists[s], count: &counts[s], arena: &arenas[s], old: &remap.idx[s]})
	})
	for s := range b.stripes {
		if errs[s] != nil {
			return nil, remap, errs[s]
		}
		pcs = append(pcs, pcsOf[s]...)
		pcsOf[s] = nil
		n += counts[s]
	}
	for _, a := range arenas {
		arenaLen += a
	}
	npc := uint64(len(pcs))
	if npc > uint64(MaxPredicate) {
		return nil, remap, fmt.Errorf("cannot build the dictionary: %d predicates and classes: more than the key's %d", npc, MaxPredicate)
	}
	if n-npc > uint64(MaxID-FirstVertexID+1) {
		return nil, remap, fmt.Errorf("cannot build the dictionary: %d terms: more than the key's vertex field holds", n)
	}
	if n >= 1<<32-1 {
		return nil, remap, fmt.Errorf("cannot build the dictionary: %d terms: the dictionary holds at most 2^32-2", n)
	}
	// Final indexes as renumber gives them: rdf:type first, then the
	// other predicates and classes, then the vertices, each in stripe
	// order.
	typeS := int(b.typeTN & (stripeCount - 1))
	typeL := remap.idx[typeS][b.typeTN>>stripeBits]
	order := make([]pcTerm, npc)
	nextPC, nextV := uint64(1), npc
	k := 0
	for s := range b.stripes {
		rm := make([]uint32, counts[s])
		pl := pcLocals[s]
		for l := range rm {
			var idx uint64
			switch {
			case len(pl) > 0 && pl[0] == uint32(l):
				if s == typeS && uint32(l) == typeL {
					idx = 0
				} else {
					idx = nextPC
					nextPC++
				}
				order[idx] = pcs[k]
				k++
				pl = pl[1:]
			default:
				idx = nextV
				nextV++
			}
			rm[l] = uint32(idx)
		}
		o := remap.idx[s]
		for j, l := range o {
			o[j] = rm[l]
		}
	}
	remap.npc = npc
	pcs = nil

	d, pmap := newBuiltDict(lists[:], arenaLen, n, npc)
	for idx, t := range order {
		d.putBuilt(uint64(idx), t.entry, t.h, t.role, pmap[t.s])
	}
	// The vertices, stripe after stripe: the next stripe is read while
	// one is laid out, and its entries and its hash table slots are
	// written by two goroutines (disjoint parts of d, each in index
	// order as putBuilt would).
	gens := make(chan *stripe)
	readErr := make(chan error, 1)
	go func() {
		defer close(gens)
		for s, f := range files {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				readErr <- fmt.Errorf("cannot read spilled terms: %w", err)
				return
			}
			g, err := readGeneration(bufio.NewReaderSize(f, 1<<20))
			if err != nil {
				readErr <- fmt.Errorf("cannot read spilled terms: %w", err)
				return
			}
			f.Close()
			os.Remove(f.Name())
			files[s] = nil
			gens <- g
		}
		readErr <- nil
	}()
	idx := npc
	s := 0
	for g := range gens {
		slots := make(chan struct{})
		go func(first uint64) {
			defer close(slots)
			i := first
			for l, h := range g.hashes {
				if g.roles[l] == 0 {
					d.putSlot(i, h)
					i++
				}
			}
		}(idx)
		for l := range g.offs {
			if g.roles[l] != 0 {
				continue
			}
			d.putEntry(idx, g.entry(uint32(l)), 0, pmap[s])
			idx++
		}
		<-slots
		s++
	}
	if err := <-readErr; err != nil {
		return nil, remap, err
	}
	if idx != n {
		panic("BUG: a consolidated stripe changed while laid out")
	}
	b.finishBuiltDict(d, arenaLen)
	return d, remap, nil
}
