package reason

import (
	"cmp"
	"slices"
)

// The join indexes of a closure materialized in bulk (not Maintainable,
// no owl:sameAs): for each indexed predicate and direction, one flat,
// sorted table (CSR: a row of values per key) instead of a map of
// slices per key. A round's new facts are gathered as (key, value)
// pairs on the workers, and each table that got some is rebuilt once by
// merging its rows with them: a counting sort over the keys' ID range
// when that range is dense enough, else a sort of the pairs and a merge
// with the sorted keys. Building is sequential memory traffic and a few
// large allocations, where the maps cost a hash, a probe and often a
// slice regrowth per fact (a fifth of the materialization's CPU on
// LUBM-40). Readers (Objects, Subjects) see a table only between rounds,
// when nothing changes it.
type bulkIndex struct {
	slots []*csr // by slot (outSlot/inSlot)
	// outSlot / inSlot: a predicate's slot for its (p, s) → o and
	// (p, o) → s tables, or -1 (by ID below tabLimit; the maps beyond).
	outSlot, inSlot []int32
	outMap, inMap   map[ID]int32
}

// csr is one table: the values of key k are vals[off[i]:off[i+1]] for
// k = lo+i (dense: keys nil) or k = keys[i] (sorted keys).
type csr struct {
	lo   ID
	keys []ID
	off  []uint32
	vals []ID
}

type pair struct{ k, v ID }

func newBulkIndex(o *Ontology) *bulkIndex {
	bx := &bulkIndex{outMap: map[ID]int32{}, inMap: map[ID]int32{}}
	add := func(m map[ID]bool, tab *[]int32, big map[ID]int32) {
		ps := make([]ID, 0, len(m))
		for p, ok := range m {
			if ok {
				ps = append(ps, p)
			}
		}
		slices.Sort(ps)
		for _, p := range ps {
			s := int32(len(bx.slots))
			bx.slots = append(bx.slots, &csr{})
			if p < tabLimit {
				for ID(len(*tab)) <= p {
					*tab = append(*tab, -1)
				}
				(*tab)[p] = s
			} else {
				big[p] = s
			}
		}
	}
	add(o.outIdx, &bx.outSlot, bx.outMap)
	add(o.inIdx, &bx.inSlot, bx.inMap)
	return bx
}

func slotOf(tab []int32, m map[ID]int32, p ID) int {
	if p < ID(len(tab)) {
		return int(tab[p])
	}
	if s, ok := m[p]; ok {
		return int(s)
	}
	return -1
}

// row returns the values of key k (read-only: its capacity is its length).
func (x *csr) row(k ID) []ID {
	var i int
	if x.keys == nil {
		if k < x.lo || uint64(k-x.lo)+1 >= uint64(len(x.off)) {
			return nil
		}
		i = int(k - x.lo)
	} else {
		j, ok := slices.BinarySearch(x.keys, k)
		if !ok {
			return nil
		}
		i = j
	}
	a, b := x.off[i], x.off[i+1]
	return x.vals[a:b:b]
}

// rows calls fn with every key and its values, in key order.
func (x *csr) rows(fn func(k ID, vs []ID)) {
	for i := 0; i+1 < len(x.off); i++ {
		a, b := x.off[i], x.off[i+1]
		if a == b {
			continue
		}
		k := x.lo + ID(i)
		if x.keys != nil {
			k = x.keys[i]
		}
		fn(k, x.vals[a:b:b])
	}
}

// merged returns a table of x's rows and the pairs ps (ps is reordered).
func (x *csr) merged(ps []pair) *csr {
	if len(ps) == 0 {
		return x
	}
	total := len(x.vals) + len(ps)
	lo, hi := ps[0].k, ps[0].k
	for _, p := range ps {
		lo, hi = min(lo, p.k), max(hi, p.k)
	}
	if len(x.off) > 1 {
		first, last := x.lo, x.lo+ID(len(x.off)-2)
		if x.keys != nil {
			first, last = x.keys[0], x.keys[len(x.keys)-1]
		}
		lo, hi = min(lo, first), max(hi, last)
	}
	if uint64(hi-lo) < 4*uint64(total)+1<<16 { // dense: a counting sort
		n := int(hi-lo) + 1
		off := make([]uint32, n+1)
		x.rows(func(k ID, vs []ID) { off[k-lo+1] += uint32(len(vs)) })
		for _, p := range ps {
			off[p.k-lo+1]++
		}
		for i := 1; i <= n; i++ {
			off[i] += off[i-1]
		}
		vals := make([]ID, total)
		pos := slices.Clone(off[:n])
		x.rows(func(k ID, vs []ID) { pos[k-lo] += uint32(copy(vals[pos[k-lo]:], vs)) })
		for _, p := range ps {
			vals[pos[p.k-lo]] = p.v
			pos[p.k-lo]++
		}
		return &csr{lo: lo, off: off, vals: vals}
	}
	// Sparse: sorted keys, merged with the sorted pairs.
	slices.SortFunc(ps, func(a, b pair) int { return cmp.Compare(a.k, b.k) })
	type rowRef struct {
		k  ID
		vs []ID
	}
	var old []rowRef
	x.rows(func(k ID, vs []ID) { old = append(old, rowRef{k, vs}) })
	y := &csr{keys: make([]ID, 0, len(old)+len(ps)), off: make([]uint32, 1, len(old)+len(ps)+1), vals: make([]ID, 0, total)}
	for a, j := 0, 0; a < len(old) || j < len(ps); {
		var k ID
		switch {
		case a == len(old):
			k = ps[j].k
		case j == len(ps):
			k = old[a].k
		default:
			k = min(old[a].k, ps[j].k)
		}
		if a < len(old) && old[a].k == k {
			y.vals = append(y.vals, old[a].vs...)
			a++
		}
		for j < len(ps) && ps[j].k == k {
			y.vals = append(y.vals, ps[j].v)
			j++
		}
		y.keys = append(y.keys, k)
		y.off = append(y.off, uint32(len(y.vals)))
	}
	return y
}

// without returns a table of x's rows less the pairs of gone.
func (x *csr) without(gone map[pair]bool) *csr {
	var ps []pair
	x.rows(func(k ID, vs []ID) {
		for _, v := range vs {
			if !gone[pair{k, v}] {
				ps = append(ps, pair{k, v})
			}
		}
	})
	return (&csr{}).merged(ps)
}

// indexBulk adds fresh facts to the bulk tables: pairs gathered on the
// workers, then every table that got some merged (tables in parallel).
func (c *Closure) indexBulk(fresh keys) {
	bx := c.bulk
	chunks := fresh.chunks()
	if len(chunks) == 0 || len(bx.slots) == 0 {
		return
	}
	nw := min(c.workers, len(chunks))
	got := make([][][]pair, nw) // [worker][slot]
	for w := range got {
		got[w] = make([][]pair, len(bx.slots))
	}
	c.forWorkers(len(chunks), func(w, i int) {
		g := got[w]
		for _, k := range chunks[i] {
			k = k.open()
			p := ID(k.hi & (1<<predBits - 1))
			if s := slotOf(bx.outSlot, bx.outMap, p); s >= 0 {
				g[s] = append(g[s], pair{ID(k.hi >> predBits), ID(k.lo)})
			}
			if s := slotOf(bx.inSlot, bx.inMap, p); s >= 0 {
				g[s] = append(g[s], pair{ID(k.lo), ID(k.hi >> predBits)})
			}
		}
	})
	c.forWorkers(len(bx.slots), func(_, s int) {
		var ps []pair
		for w := range got {
			if ps == nil {
				ps = got[w][s]
			} else {
				ps = append(ps, got[w][s]...)
			}
		}
		bx.slots[s] = bx.slots[s].merged(ps)
	})
}

// unindexBulk removes gone facts from the bulk tables (rebuilding those
// they touch: only a closure materialized in bulk and then changed).
func (c *Closure) unindexBulk(gone []Triple) {
	bx := c.bulk
	del := make([]map[pair]bool, len(bx.slots))
	mark := func(s int, k, v ID) {
		if s < 0 {
			return
		}
		if del[s] == nil {
			del[s] = map[pair]bool{}
		}
		del[s][pair{k, v}] = true
	}
	for _, t := range gone {
		mark(slotOf(bx.outSlot, bx.outMap, t.P), t.S, t.O)
		mark(slotOf(bx.inSlot, bx.inMap, t.P), t.O, t.S)
	}
	for s, d := range del {
		if d != nil {
			bx.slots[s] = bx.slots[s].without(d)
		}
	}
}
