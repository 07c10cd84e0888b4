package rdf

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
)

// tupleKey is a map key for a tuple of terms.
func tupleKey(tu []Term) string {
	var b []byte
	for i, t := range tu {
		if i > 0 {
			b = append(b, ' ')
		}
		b = AppendNTriples(b, t)
		if t.IsZero() {
			b = append(b, '-')
		}
	}
	return string(b)
}

// shapeKey is tupleKey with every blank node written as "_:".
func shapeKey(tu []Term) string {
	var b []byte
	for i, t := range tu {
		if i > 0 {
			b = append(b, ' ')
		}
		switch {
		case t.IsBlank():
			b = append(b, "_:"...)
		case t.IsZero():
			b = append(b, '-')
		default:
			b = AppendNTriples(b, t)
		}
	}
	return string(b)
}

func hasBlankTerm(tu []Term) bool {
	for _, t := range tu {
		if t.IsBlank() {
			return true
		}
	}
	return false
}

// maxSearch bounds the backtracking of MatchBags.
const maxSearch = 1 << 20

// MatchBags decides whether the bags of tuples a (actual) and b (expected)
// are equal under some one-to-one renaming of a's blank nodes to b's. It
// returns the renaming, or a description of the difference ("" when they
// are equal). Tuples are rows of a solution sequence (a zero Term is
// unbound) or statements: two RDF graphs or datasets are isomorphic when
// the bags of their distinct triples or quads match.
//
// Tuples without blank nodes must match exactly. For the others, blank
// nodes are coloured by iterated neighbourhood hashing (a node's colour
// combines the shapes of the tuples it occurs in, its positions there and
// the colours of its co-occurring nodes), then a backtracking search maps
// a's nodes to b's nodes of the same colour, rarest colour first, checking
// each distinct tuple of a once all its blank nodes are mapped: its image
// must occur in b as often as it occurs in a. As the renaming is
// one-to-one, distinct tuples of a have distinct images, so equal counts
// for all of them and equal sizes make the bags equal.
func MatchBags(a, b [][]Term) (map[Term]Term, string) {
	if d := shapeDiff(a, b); d != "" {
		return nil, d
	}
	countA, countB := map[string]int{}, map[string]int{}
	var bnA, bnB [][]Term
	for _, tu := range a {
		k := tupleKey(tu)
		if countA[k] == 0 && hasBlankTerm(tu) {
			bnA = append(bnA, tu)
		}
		countA[k]++
	}
	for _, tu := range b {
		k := tupleKey(tu)
		if countB[k] == 0 && hasBlankTerm(tu) {
			bnB = append(bnB, tu)
		}
		countB[k]++
	}
	if len(bnA) == 0 {
		// Shapes agree and there are no blank nodes: the bags are equal.
		return map[Term]Term{}, ""
	}
	colA, colB := colourBlanks(bnA), colourBlanks(bnB)
	if len(colA) != len(colB) {
		return nil, fmt.Sprintf("%d distinct blank nodes, want %d", len(colA), len(colB))
	}
	byColB := map[uint64][]Term{}
	for n, c := range colB {
		byColB[c] = append(byColB[c], n)
	}
	sizeA := map[uint64]int{}
	for _, c := range colA {
		sizeA[c]++
	}
	for c, n := range sizeA {
		if len(byColB[c]) != n {
			return nil, "blank nodes are used differently (no renaming can match them)"
		}
	}
	for _, l := range byColB {
		sort.Slice(l, func(i, j int) bool { return l[i].Value < l[j].Value })
	}
	nodes := make([]Term, 0, len(colA))
	for n := range colA {
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool {
		ci, cj := len(byColB[colA[nodes[i]]]), len(byColB[colA[nodes[j]]])
		if ci != cj {
			return ci < cj
		}
		return nodes[i].Value < nodes[j].Value
	})
	order := make(map[Term]int, len(nodes))
	for i, n := range nodes {
		order[n] = i
	}
	check := make([][][]Term, len(nodes))
	for _, tu := range bnA {
		last := -1
		for _, t := range tu {
			if t.IsBlank() && order[t] > last {
				last = order[t]
			}
		}
		check[last] = append(check[last], tu)
	}
	m := make(map[Term]Term, len(nodes))
	used := map[Term]bool{}
	img := make([]Term, 0, 8)
	steps := 0
	var search func(i int) bool
	search = func(i int) bool {
		if i == len(nodes) {
			return true
		}
		n := nodes[i]
		for _, c := range byColB[colA[n]] {
			if used[c] {
				continue
			}
			if steps++; steps > maxSearch {
				return false
			}
			m[n], used[c] = c, true
			ok := true
			for _, tu := range check[i] {
				img = img[:0]
				for _, t := range tu {
					if t.IsBlank() {
						t = m[t]
					}
					img = append(img, t)
				}
				if countB[tupleKey(img)] != countA[tupleKey(tu)] {
					ok = false
					break
				}
			}
			if ok && search(i+1) {
				return true
			}
			delete(m, n)
			used[c] = false
		}
		return false
	}
	if !search(0) {
		if steps > maxSearch {
			return nil, "blank nodes: gave up searching for a renaming"
		}
		return nil, "blank nodes: no renaming makes the answers equal"
	}
	return m, ""
}

// shapeDiff compares the bags with every blank node written alike; it
// describes the rows missing from a and the unexpected ones.
func shapeDiff(a, b [][]Term) string {
	cnt := map[string]int{}
	first := map[string][]Term{}
	for _, tu := range a {
		k := shapeKey(tu)
		cnt[k]++
		if first[k] == nil {
			first[k] = tu
		}
	}
	for _, tu := range b {
		k := shapeKey(tu)
		cnt[k]--
		if first[k] == nil {
			first[k] = tu
		}
	}
	var missing, extra []string
	keys := make([]string, 0, len(cnt))
	for k := range cnt {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		n := cnt[k]
		s := tupleText(first[k])
		if n > 1 || n < -1 {
			s = fmt.Sprintf("%s (×%d)", s, max(n, -n))
		}
		switch {
		case n < 0:
			missing = append(missing, s)
		case n > 0:
			extra = append(extra, s)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing "+clip(missing))
	}
	if len(extra) > 0 {
		parts = append(parts, "unexpected "+clip(extra))
	}
	return strings.Join(parts, "; ")
}

func clip(items []string) string {
	const n = 4
	if len(items) > n {
		return fmt.Sprintf("[%s … and %d more]", strings.Join(items[:n], ", "), len(items)-n)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

func tupleText(tu []Term) string {
	f := make([]string, len(tu))
	for i, t := range tu {
		if t.IsBlank() {
			f[i] = "_:b"
		} else if t.IsZero() {
			f[i] = "UNDEF"
		} else {
			f[i] = t.String()
		}
	}
	return "(" + strings.Join(f, " ") + ")"
}

// colourBlanks colours the blank nodes of tuples: a node's colour starts
// from the shapes of its tuples and its positions in them and is refined
// with the colours of the nodes it shares tuples with.
func colourBlanks(tuples [][]Term) map[Term]uint64 {
	col := map[Term]uint64{}
	shapes := make([]uint64, len(tuples))
	for i, tu := range tuples {
		shapes[i] = hashString(0, shapeKey(tu))
		for _, t := range tu {
			if t.IsBlank() {
				col[t] = 1
			}
		}
	}
	classes := 1
	for round := 0; round < 8; round++ {
		sigs := map[Term][]uint64{}
		for i, tu := range tuples {
			for p, t := range tu {
				if !t.IsBlank() {
					continue
				}
				h := hashUint(shapes[i], uint64(p))
				for q, o := range tu {
					if o.IsBlank() {
						h = hashUint(hashUint(h, uint64(q)), col[o])
					}
				}
				sigs[t] = append(sigs[t], h)
			}
		}
		next := make(map[Term]uint64, len(col))
		distinct := map[uint64]bool{}
		for n, s := range sigs {
			sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
			h := col[n]
			for _, x := range s {
				h = hashUint(h, x)
			}
			next[n] = h
			distinct[h] = true
		}
		col = next
		if len(distinct) == classes {
			break
		}
		classes = len(distinct)
	}
	return col
}

func hashUint(h, x uint64) uint64 {
	var b [16]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(h >> (8 * i))
		b[8+i] = byte(x >> (8 * i))
	}
	f := fnv.New64a()
	f.Write(b[:])
	return f.Sum64()
}

func hashString(h uint64, s string) uint64 {
	f := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(h >> (8 * i))
	}
	f.Write(b[:])
	f.Write([]byte(s))
	return f.Sum64()
}
