package graphstore

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wukongd/wukongd/rdf"
)

// Interning while building. Terms are spread over stripeCount stripes by
// hash, each with its own lock, arena and open-addressing table, so that
// goroutines feeding the builder rarely contend; a batch takes each stripe's
// lock once. A term's provisional number (tn) is local index << stripeBits
// | stripe; Build renumbers tns into final IDs (predicates and classes into
// the low range, whatever order they were first seen in).
const (
	stripeBits  = 4
	stripeCount = 1 << stripeBits
	maxLocal    = 1<<(32-stripeBits) - 1
)

type stripe struct {
	mu sync.Mutex
	// arena holds, per entry, its local index (4 bytes LE) and then the
	// entry; offs[i] is the start of entry i (after its index). A stripe
	// holds at most 4 GiB of entries (64 GiB in all), so offsets take 4
	// bytes: at 80 M terms the stripes' offsets, hashes and tables are
	// most of the builder's memory.
	arena  []byte
	offs   []uint32
	hashes []uint64 // hash of entry i
	roles  []byte   // role bits of entry i
	// table: hash tag (24 bits) << 40 | (arena offset of the entry's
	// index + 1); power-of-two size. A probe touches the table and the
	// arena only.
	table []uint64
	// IRI prefixes of this stripe (entry code = index + 1).
	prefixes   prefixTable // strings only
	prefixIdx  map[string]uint32
	lastPrefix uint32 // code of the prefix used last
	// prefixHot: direct-mapped by a hash of the prefix, the code of a
	// prefix looked up recently (0: none). An entry is checked against
	// prefixes, so one left over from before a reset is only a miss.
	prefixHot [prefixHotSize]uint32

	// Bounded interning (intern_spill.go): once the stripe holds more
	// than limit bytes (0: no limit), its terms are sealed as a
	// generation appended to gens and the stripe starts afresh; base
	// counts the local indexes handed out by the sealed generations, so
	// that a local index stays unique across them (a term seen again
	// after a seal gets a second one, merged when the dictionary is
	// laid out).
	limit       int64
	dir         string
	base        uint32
	gens        *os.File
	sealedBytes *atomic.Uint64 // the builder's termsSpilled
	genW        *bufio.Writer
	genN        int
	prefixBytes int64
}

const (
	tagShift = 40
	offMask  = 1<<tagShift - 1
)

// intern returns the local index of the term, adding it if new.
func (s *stripe) intern(h uint64, kind byte, code uint32, value string, role byte) (uint32, error) {
	if s.limit > 0 && len(s.offs) > 0 && s.memBytes() > s.limit {
		if err := s.seal(); err != nil {
			return 0, err
		}
	}
	if 4*(len(s.offs)+1) > 3*len(s.table) { // load at most 3/4
		s.grow()
	}
	mask := uint64(len(s.table) - 1)
	tag := h >> tagShift
	for i := h & mask; ; i = (i + 1) & mask {
		e := s.table[i]
		if e == 0 {
			idx := len(s.offs)
			if uint64(s.base)+uint64(idx) > maxLocal {
				return 0, fmt.Errorf("dictionary full: more than %d terms in a stripe", maxLocal)
			}
			at := uint64(len(s.arena))
			if at+4+uint64(len(value))+16 > math.MaxUint32 {
				return 0, fmt.Errorf("dictionary full: more than %d bytes of terms in a stripe", uint64(math.MaxUint32))
			}
			s.arena = binary.LittleEndian.AppendUint32(s.arena, uint32(idx))
			s.offs = append(s.offs, uint32(at+4))
			if kind == byte(rdf.KindIRI) {
				sp := iriSplit(value)
				s.arena = appendEntry(s.arena, kind, s.prefixID(value[:sp]), value[sp:])
			} else if kind == byte(rdf.KindLiteral) {
				head, tail := litSplit(value)
				s.arena = appendLiteralEntry(s.arena, code, s.prefixID(value[:head]), s.prefixID(value[tail:]), value[head:tail])
			} else {
				s.arena = appendEntry(s.arena, kind, code, value)
			}
			s.hashes = append(s.hashes, h)
			s.roles = append(s.roles, role)
			s.table[i] = tag<<tagShift | (at + 1)
			return s.base + uint32(idx), nil
		}
		if e>>tagShift == tag {
			at := e&offMask - 1
			if entryMatches(s.arena[at+4:], kind, code, value, &s.prefixes) {
				idx := binary.LittleEndian.Uint32(s.arena[at:])
				if role != 0 && s.roles[idx]&role == 0 {
					s.roles[idx] |= role
				}
				return s.base + idx, nil
			}
		}
	}
}

func (s *stripe) grow() {
	size := 2 * len(s.table)
	if size < 1024 {
		size = 1024
	}
	t := make([]uint64, size)
	mask := uint64(size - 1)
	for idx, h := range s.hashes {
		i := h & mask
		for t[i] != 0 {
			i = (i + 1) & mask
		}
		t[i] = h>>tagShift<<tagShift | (uint64(s.offs[idx]) - 4 + 1)
	}
	s.table = t
}

func (s *stripe) entry(idx uint32) []byte {
	end := uint64(len(s.arena))
	if int(idx)+1 < len(s.offs) {
		end = uint64(s.offs[idx+1]) - 4
	}
	return s.arena[s.offs[idx]:end]
}

// prefixID returns the code of IRI prefix p (0 for "").
func (s *stripe) prefixID(p string) uint32 {
	if p == "" {
		return 0
	}
	// New terms often come in runs of one namespace.
	if s.lastPrefix != 0 && s.prefixes.strs[s.lastPrefix-1] == p {
		return s.lastPrefix
	}
	// Before the map: a stripe holds tens of thousands of prefixes at
	// LUBM-640, and a Go map lookup of one (hash, control group, key
	// compare through the string pointer: two cache misses) was 7.7 of
	// the load's 157 sampled CPU-s; the few prefixes a batch's new terms
	// use stay in this small array.
	hot := &s.prefixHot[maphash.String(prefixSeed, p)&(prefixHotSize-1)]
	if id := *hot; id != 0 && int(id) <= len(s.prefixes.strs) && s.prefixes.strs[id-1] == p {
		s.lastPrefix = id
		return id
	}
	if id, ok := s.prefixIdx[p]; ok {
		s.lastPrefix, *hot = id, id
		return id
	}
	if s.prefixIdx == nil {
		s.prefixIdx = map[string]uint32{}
	}
	p = strings.Clone(p)                // p may alias the caller's bytes (AddRawTriples)
	s.prefixBytes += int64(len(p)) + 48 // the string, its header in strs and its map entry
	s.prefixes = stringPrefixes(append(s.prefixes.strs, p))
	id := uint32(s.prefixes.n)
	s.prefixIdx[p] = id
	s.lastPrefix, *hot = id, id
	return id
}

const prefixHotSize = 1024

var prefixSeed = maphash.MakeSeed()

// annotTable interns datatype IRIs and language tags.
type annotTable struct {
	mu     sync.RWMutex
	annots []annot
	langs  map[string]uint32
	dts    map[string]uint32
}

// code returns the annotation code of a literal with datatype dt or
// language tag lang (0 for a simple literal). dt and lang may alias
// caller memory; they are copied when stored.
func (a *annotTable) code(dt, lang string) uint32 {
	m, s, isLang := a.dts, dt, false
	switch {
	case lang != "":
		m, s, isLang = a.langs, lang, true
	case dt == "" || dt == rdf.XSDString:
		return 0
	}
	a.mu.RLock()
	c, ok := m[s]
	a.mu.RUnlock()
	if ok {
		return c
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := m[s]; ok {
		return c
	}
	s = strings.Clone(s)
	a.annots = append(a.annots, annot{lang: isLang, s: s})
	c = uint32(len(a.annots))
	m[s] = c
	return c
}

// termView is a term being interned. Its strings may alias memory of the
// caller (AddRawTriples) and are only read during the call; whatever is
// kept is copied.
type termView struct {
	value, datatype, lang string
	kind                  rdf.Kind
}

// termScratch is the per-batch work of interning.
type termScratch struct {
	views  []termView
	hashes []uint64
	codes  []uint32
	order  []uint32 // term positions grouped by stripe
	tns    []uint32
	hit    []uint8 // position resolved by the cache (hitCache) or equal to the previous triple's subject (hitPrevSubject)
	// cache of predicates and classes (few terms, repeated in every
	// triple): direct-mapped by hash, verified by value.
	cache [256]cachedTerm
}

const (
	hitCache       = 1
	hitPrevSubject = 2
)

type cachedTerm struct {
	h     uint64
	value string
	code  uint32
	tn    uint32
	kind  byte
	role  byte
}

// internBatch interns the terms of triples given as views (s, p, o of
// each triple in turn) into tns, in the same order.
func (b *Builder) internBatch(views []termView, sc *termScratch) ([]uint32, error) {
	n := len(views)
	sc.hashes = grow(sc.hashes, n)
	sc.codes = grow(sc.codes, n)
	sc.order = grow(sc.order, n)
	sc.tns = grow(sc.tns, n)
	sc.hit = grow(sc.hit, n)
	var counts [stripeCount + 1]int
	for i := 0; i+2 < n; i += 3 {
		if views[i+1].kind != rdf.KindIRI {
			return nil, fmt.Errorf("triple %d of the batch: the predicate is not an IRI", i/3)
		}
		isType := views[i+1].value == rdf.RDFType
		for j := 0; j < 3; j++ {
			pos := i + j
			v := &views[pos]
			// Statements come grouped by subject (N-Triples dumps: 83% of
			// LUBM's subjects repeat the previous line's).
			if j == 0 && i >= 3 && v.kind == views[i-3].kind && v.value == views[i-3].value && v.kind != rdf.KindLiteral {
				sc.hit[pos] = hitPrevSubject
				continue
			}
			var code uint32
			switch v.kind {
			case rdf.KindIRI, rdf.KindBlank:
			case rdf.KindLiteral:
				code = b.annots.code(v.datatype, v.lang)
			default:
				return nil, fmt.Errorf("triple %d of the batch: term %d is not an RDF term", i/3, j)
			}
			h := hashTerm(byte(v.kind), code, v.value)
			sc.hashes[pos], sc.codes[pos], sc.hit[pos] = h, code, 0
			if role := positionRole(j, isType); role != 0 {
				c := &sc.cache[h&255]
				if c.h == h && c.role == role && c.kind == byte(v.kind) && c.code == code && c.value == v.value {
					sc.tns[pos], sc.hit[pos] = c.tn, hitCache
					continue
				}
			}
			counts[h>>(64-stripeBits)+1]++
		}
	}
	for s := 1; s <= stripeCount; s++ {
		counts[s] += counts[s-1]
	}
	starts := counts
	for pos := 0; pos < n; pos++ {
		if sc.hit[pos] != 0 {
			continue
		}
		s := sc.hashes[pos] >> (64 - stripeBits)
		sc.order[counts[s]] = uint32(pos)
		counts[s]++
	}
	// Visit the stripes this batch needs, taking first those whose lock is
	// free: goroutines feeding batches at once then work on different
	// stripes instead of queueing on the same one in the same order.
	var pending [stripeCount]int
	np := 0
	for s := 0; s < stripeCount; s++ {
		if starts[s] != starts[s+1] {
			pending[np] = s
			np++
		}
	}
	for np > 0 {
		k := 0
		for ; k < np; k++ {
			if b.stripes[pending[k]].mu.TryLock() {
				break
			}
		}
		if k == np {
			k = 0
			b.stripes[pending[0]].mu.Lock()
		}
		s := pending[k]
		np--
		pending[k] = pending[np]
		lo, hi := starts[s], starts[s+1]
		st := &b.stripes[s]
		for _, pos := range sc.order[lo:hi] {
			v := &views[pos]
			role := positionRole(int(pos%3), views[pos-pos%3+1].value == rdf.RDFType)
			local, err := st.intern(sc.hashes[pos], byte(v.kind), sc.codes[pos], v.value, role)
			if err != nil {
				st.mu.Unlock()
				return nil, err
			}
			tn := local<<stripeBits | uint32(s)
			sc.tns[pos] = tn
			if role != 0 {
				h := sc.hashes[pos]
				if c := &sc.cache[h&255]; c.h != h || c.tn != tn || c.role != role {
					*c = cachedTerm{h: h, value: strings.Clone(v.value), code: sc.codes[pos], tn: tn, kind: byte(v.kind), role: role}
				}
			}
		}
		st.mu.Unlock()
	}
	for pos := 3; pos < n; pos += 3 {
		if sc.hit[pos] == hitPrevSubject {
			sc.tns[pos] = sc.tns[pos-3]
		}
	}
	return sc.tns[:n], nil
}

// positionRole is the role a term gets from its position in a triple.
func positionRole(j int, isType bool) byte {
	switch {
	case j == 1:
		return rolePredicate
	case j == 2 && isType:
		return roleClass
	}
	return 0
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// internTerm interns one term with a role into b's stripes (one at a
// time: for rdf:type and graph names).
func (b *Builder) internTerm(t rdf.Term, role byte) (uint32, error) {
	var code uint32
	switch t.Kind {
	case rdf.KindIRI, rdf.KindBlank:
	case rdf.KindLiteral:
		code = b.annots.code(t.Datatype, t.Lang)
	default:
		return 0, fmt.Errorf("not an RDF term")
	}
	h := hashTerm(byte(t.Kind), code, t.Value)
	s := h >> (64 - stripeBits)
	st := &b.stripes[s]
	st.mu.Lock()
	defer st.mu.Unlock()
	local, err := st.intern(h, byte(t.Kind), code, t.Value, role)
	if err != nil {
		return 0, err
	}
	return local<<stripeBits | uint32(s), nil
}

// buildDict renumbers the stripes' terms into final IDs and lays out the
// final dictionary. It returns the dictionary and, per stripe, the final ID
// of each local index.
func (b *Builder) buildDict() (*Dict, termRemap, error) {
	r, old, err := b.renumberAll()
	if err != nil {
		return nil, r.remap, err
	}
	d := b.layoutDict(r)
	if old != nil {
		composeRemap(&r.remap, old)
	}
	return d, r.remap, nil
}

// renumberAll is renumber after consolidating sealed stripes in memory
// (old, nil if none: see unseal and composeRemap).
func (b *Builder) renumberAll() (renumbering, *[stripeCount][]uint32, error) {
	if !b.sealed() {
		r, err := b.renumber()
		return r, nil, err
	}
	old, err := b.unseal()
	if err != nil {
		return renumbering{}, nil, err
	}
	r, err := b.renumber()
	return r, &old, err
}

// renumbering is the outcome of renumber: the final order of the terms and
// the final ID of every provisional one.
type renumbering struct {
	order  []uint32 // final index -> tn
	remap  termRemap
	npc, n uint64
}

// termRemap maps provisional term numbers to final IDs: per stripe, the
// final index of each local index (4 bytes a term, not an 8-byte ID).
type termRemap struct {
	idx [stripeCount][]uint32
	npc uint64
}

// id returns the final ID of provisional number tn.
func (m *termRemap) id(tn uint32) ID {
	i := uint64(m.idx[tn&(stripeCount-1)][tn>>stripeBits])
	if i < m.npc {
		return ID(i + 1)
	}
	return FirstVertexID + ID(i-m.npc)
}

// dense returns the dense index mapping of the final IDs.
func (r *renumbering) dense() denseIndex { return denseIndex{npc: r.npc, n: r.n} }

// maxID returns the largest final ID.
func (r *renumbering) maxID() ID {
	if r.n == r.npc {
		return ID(r.npc)
	}
	return FirstVertexID + ID(r.n-r.npc) - 1
}

// renumber assigns final IDs: rdf:type first, then the other predicates
// and classes, then the other terms, each in stripe order.
func (b *Builder) renumber() (renumbering, error) {
	var remap termRemap
	var npc, n uint64
	for s := range b.stripes {
		st := &b.stripes[s]
		n += uint64(len(st.offs))
		for _, r := range st.roles {
			if r != 0 {
				npc++
			}
		}
	}
	if npc > uint64(MaxPredicate) {
		return renumbering{}, fmt.Errorf("%d predicates and classes: more than the key's %d", npc, MaxPredicate)
	}
	if n-npc > uint64(MaxID-FirstVertexID+1) {
		return renumbering{}, fmt.Errorf("%d terms: more than the key's vertex field holds", n)
	}
	if n >= 1<<32-1 {
		return renumbering{}, fmt.Errorf("%d terms: the dictionary holds at most 2^32-2", n)
	}
	// rdf:type first, then the other predicates/classes, then vertices,
	// each in stripe order.
	typeS, typeL := b.typeTN&(stripeCount-1), b.typeTN>>stripeBits
	order := make([]uint32, n) // final index -> tn
	nextPC, nextV := uint64(1), npc
	order[0] = b.typeTN
	for s := range b.stripes {
		st := &b.stripes[s]
		rm := make([]uint32, len(st.offs))
		for l, r := range st.roles {
			var idx uint64
			switch {
			case uint32(s) == typeS && uint32(l) == typeL:
				idx = 0
			case r != 0:
				idx = nextPC
				nextPC++
			default:
				idx = nextV
				nextV++
			}
			order[idx] = uint32(l)<<stripeBits | uint32(s)
			rm[l] = uint32(idx)
		}
		remap.idx[s] = rm
	}
	remap.npc = npc
	return renumbering{order: order, remap: remap, npc: npc, n: n}, nil
}

// layoutDict lays out the final dictionary from the stripes in the order
// of r. It only reads the stripes (it may run alongside partition).
func (b *Builder) layoutDict(r renumbering) *Dict { return b.layoutDictOf(r, false, nil) }

// layoutDictReleasing is layoutDict releasing each stripe once its terms
// are laid out (vertices come stripe after stripe), so that the terms are
// not held twice; done counts the terms laid out.
func (b *Builder) layoutDictReleasing(r renumbering, done *atomic.Uint64) *Dict {
	return b.layoutDictOf(r, true, done)
}

func (b *Builder) layoutDictOf(r renumbering, release bool, done *atomic.Uint64) *Dict {
	order, npc, n := r.order, r.npc, r.n
	var lists [stripeCount][]string
	var arenaLen uint64
	for s := range b.stripes {
		st := &b.stripes[s]
		arenaLen += uint64(len(st.arena))
		lists[s] = st.prefixes.strs
	}
	d, pmap := newBuiltDict(lists[:], arenaLen, n, npc)
	free := func(s int) {
		st := &b.stripes[s]
		st.mu.Lock()
		st.arena, st.offs, st.hashes, st.roles, st.table = nil, nil, nil, nil, nil
		st.mu.Unlock()
	}
	prev := -1
	for idx, tn := range order {
		s := tn & (stripeCount - 1)
		if release && uint64(idx) >= npc && int(s) != prev {
			if prev >= 0 {
				free(prev)
			}
			prev = int(s)
		}
		if done != nil && idx&0xffff == 0 {
			done.Store(uint64(idx))
		}
		st := &b.stripes[s]
		l := tn >> stripeBits
		d.putBuilt(uint64(idx), st.entry(l), st.hashes[l], st.roles[l], pmap[s])
	}
	if release {
		for s := range b.stripes {
			free(s)
		}
	}
	b.finishBuiltDict(d, arenaLen)
	return d
}

// newBuiltDict returns an empty dictionary of n terms (npc predicates and
// classes) to be filled by putBuilt in final order, with one prefix table
// for all stripes (lists: each stripe's prefixes), and per stripe the
// global code of each of its prefix codes. arenaLen bounds the stripes'
// arenas (which hold a 4-byte index per entry besides the entry).
func newBuiltDict(lists [][]string, arenaLen, n, npc uint64) (*Dict, [][]uint32) {
	var prefixes []string
	global := map[string]uint32{}
	pmap := make([][]uint32, len(lists))
	for s, strs := range lists {
		pm := make([]uint32, len(strs)+1)
		for i, p := range strs {
			g, ok := global[p]
			if !ok {
				prefixes = append(prefixes, p)
				g = uint32(len(prefixes))
				global[p] = g
			}
			pm[i+1] = g
		}
		pmap[s] = pm
	}
	slots := n + n*3/7 + 1 // load 0.7
	slotW := slotWidth(n)
	d := &Dict{
		arena:    make([]byte, 0, arenaLen+n/8),
		table:    make([]byte, slotW*slots),
		slots:    slots,
		slotW:    slotW,
		roles:    make([]byte, npc),
		n:        n,
		npc:      npc,
		prefixes: stringPrefixes(prefixes),
		fp:       &dictFP{},
	}
	// The offsets go straight into their final width, chosen from a bound
	// on the arena: the stripes' arenas plus 4 bytes a term for prefix
	// codes that grow when renumbered globally.
	d.offW = offWidth(arenaLen + 4*n)
	d.offs = make([]byte, d.offW*(n+1))
	return d, pmap
}

// putBuilt lays out the term of final index idx: e is its stripe entry
// (prefix codes of its stripe, mapped to global ones by pm), h its hash,
// role its role bits.
func (d *Dict) putBuilt(idx uint64, e []byte, h uint64, role byte, pm []uint32) {
	d.putEntry(idx, e, role, pm)
	d.putSlot(idx, h)
}

// putEntry lays out the entry of the term of final index idx (offsets,
// arena, roles: putBuilt without the hash table), in index order.
func (d *Dict) putEntry(idx uint64, e []byte, role byte, pm []uint32) {
	putUint(d.offs, d.offW, idx, uint64(len(d.arena)))
	if e[0] == byte(rdf.KindIRI) {
		_, code, _, _, v, ok := parseEntry(e)
		if !ok || int(code) >= len(pm) {
			panic("BUG: malformed dictionary entry while building")
		}
		d.arena = appendEntry(d.arena, byte(rdf.KindIRI), pm[code], v)
	} else if e[0] == kindLitSuffix || e[0] == kindLitAffix {
		_, code, pfx, sfx, v, ok := parseEntry(e)
		if !ok || int(pfx) >= len(pm) || int(sfx) >= len(pm) {
			panic("BUG: malformed dictionary entry while building")
		}
		d.arena = appendLiteralEntry(d.arena, code, pm[pfx], pm[sfx], v)
	} else {
		d.arena = append(d.arena, e...)
	}
	if idx < d.npc {
		d.roles[idx] = role
	}
}

// putSlot enters the term of final index idx, of hash h, into the hash
// table; the table depends on the order of these calls (linear probing),
// which is index order. It touches only the table, so it may run beside
// putEntry.
func (d *Dict) putSlot(idx, h uint64) {
	i, _ := bits.Mul64(h, d.slots)
	for d.slot(i) != 0 {
		if i++; i == d.slots {
			i = 0
		}
	}
	putUint(d.table, d.slotW, i, idx+1)
}

// finishBuiltDict ends a dictionary filled by putBuilt.
func (b *Builder) finishBuiltDict(d *Dict, arenaLen uint64) {
	if uint64(len(d.arena)) > arenaLen+4*d.n {
		panic("BUG: the dictionary arena outgrew its bound")
	}
	putUint(d.offs, d.offW, d.n, uint64(len(d.arena)))
	b.annots.mu.RLock()
	d.annots, d.annIdx = newDictAnnots(append([]annot(nil), b.annots.annots...))
	b.annots.mu.RUnlock()
}
