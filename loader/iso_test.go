package loader

import (
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/wukongd/wukongd/rdf"
)

// isomorphic compares two RDF datasets up to blank node renaming. It
// returns "" when they are isomorphic, else a reason.
//
// Blank nodes are first coloured by iterated neighbourhood hashing (each
// round hashes a node's colour with the sorted colours of the statements it
// takes part in); then a backtracking search maps nodes of a to nodes of b
// with the same colour, checking every statement of a whose blank nodes are
// all mapped.
func isomorphic(a, b []rdf.Quad) string {
	a, b = dedupQuads(a), dedupQuads(b)
	if len(a) != len(b) {
		return fmt.Sprintf("%d statements, want %d", len(a), len(b))
	}
	setB := map[rdf.Quad]bool{}
	for _, q := range b {
		setB[q] = true
	}
	var bnA, bnB []rdf.Quad
	for _, q := range a {
		if hasBlank(q) {
			bnA = append(bnA, q)
		} else if !setB[q] {
			return fmt.Sprintf("unexpected statement %v", q)
		}
	}
	for _, q := range b {
		if hasBlank(q) {
			bnB = append(bnB, q)
		}
	}
	if len(bnA) != len(bnB) {
		return fmt.Sprintf("%d statements with blank nodes, want %d", len(bnA), len(bnB))
	}
	colA, colB := colours(bnA), colours(bnB)
	if len(colA) != len(colB) {
		return fmt.Sprintf("%d blank nodes, want %d", len(colA), len(colB))
	}
	// Candidates per colour.
	byColB := map[uint64][]rdf.Term{}
	for n, c := range colB {
		byColB[c] = append(byColB[c], n)
	}
	nodes := make([]rdf.Term, 0, len(colA))
	for n := range colA {
		nodes = append(nodes, n)
	}
	// Nodes with the rarest colour first.
	sort.Slice(nodes, func(i, j int) bool {
		ci, cj := len(byColB[colA[nodes[i]]]), len(byColB[colA[nodes[j]]])
		if ci != cj {
			return ci < cj
		}
		return nodes[i].Value < nodes[j].Value
	})
	// Statements of a by the last node (in search order) they mention.
	order := map[rdf.Term]int{}
	for i, n := range nodes {
		order[n] = i
	}
	check := make([][]rdf.Quad, len(nodes))
	for _, q := range bnA {
		last := -1
		for _, t := range []rdf.Term{q.S, q.O, q.G} {
			if t.IsBlank() && order[t] > last {
				last = order[t]
			}
		}
		check[last] = append(check[last], q)
	}
	m := map[rdf.Term]rdf.Term{}
	used := map[rdf.Term]bool{}
	mapT := func(t rdf.Term) rdf.Term {
		if t.IsBlank() {
			return m[t]
		}
		return t
	}
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
			m[n], used[c] = c, true
			ok := true
			for _, q := range check[i] {
				if !setB[rdf.Quad{S: mapT(q.S), P: q.P, O: mapT(q.O), G: mapT(q.G)}] {
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
		return "no blank node mapping makes the graphs equal"
	}
	return ""
}

func hasBlank(q rdf.Quad) bool { return q.S.IsBlank() || q.O.IsBlank() || q.G.IsBlank() }

func dedupQuads(qs []rdf.Quad) []rdf.Quad {
	seen := map[rdf.Quad]bool{}
	var out []rdf.Quad
	for _, q := range qs {
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out
}

func hashStr(h uint64, s string) uint64 {
	f := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(h >> (8 * i))
	}
	f.Write(b[:])
	f.Write([]byte(s))
	return f.Sum64()
}

// colours returns a colour per blank node after refinement rounds.
func colours(qs []rdf.Quad) map[rdf.Term]uint64 {
	col := map[rdf.Term]uint64{}
	for _, q := range qs {
		for _, t := range []rdf.Term{q.S, q.O, q.G} {
			if t.IsBlank() {
				col[t] = 1
			}
		}
	}
	term := func(t rdf.Term, c map[rdf.Term]uint64) string {
		if t.IsBlank() {
			return fmt.Sprintf("_%d", c[t])
		}
		return t.String()
	}
	for round := 0; round < len(col)+1 && round < 64; round++ {
		sigs := map[rdf.Term][]string{}
		for _, q := range qs {
			line := term(q.S, col) + " " + q.P.String() + " " + term(q.O, col) + " " + term(q.G, col)
			for pos, t := range []rdf.Term{q.S, q.O, q.G} {
				if t.IsBlank() {
					sigs[t] = append(sigs[t], fmt.Sprint(pos)+line)
				}
			}
		}
		next := map[rdf.Term]uint64{}
		for n, s := range sigs {
			sort.Strings(s)
			h := col[n]
			for _, x := range s {
				h = hashStr(h, x)
			}
			next[n] = h
		}
		if classes(next) == classes(col) {
			col = next
			break
		}
		col = next
	}
	return col
}

func classes(c map[rdf.Term]uint64) int {
	s := map[uint64]bool{}
	for _, v := range c {
		s[v] = true
	}
	return len(s)
}
