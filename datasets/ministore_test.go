package datasets_test

import (
	"fmt"
	"strings"

	"github.com/wukongd/wukongd/rdf"
)

// miniStore is an obviously-correct, in-memory triple index with a naive
// basic-graph-pattern evaluator (nested loops, bag semantics), enough to
// evaluate the LUBM queries that need no reasoning on the real and the
// generated data. It is not the engine: it only lets these tests check that
// the generated data gives the benchmark queries something to find.
type miniStore struct {
	ids           map[rdf.Term]int32
	ts            [][3]int32
	byS, byO, byP map[int32][]int32 // triple indices
}

func newMiniStore(triples []rdf.Triple) *miniStore {
	m := &miniStore{ids: map[rdf.Term]int32{}, byS: map[int32][]int32{}, byO: map[int32][]int32{}, byP: map[int32][]int32{}}
	seen := map[[3]int32]bool{}
	for _, t := range triples {
		k := [3]int32{m.intern(t.S), m.intern(t.P), m.intern(t.O)}
		if seen[k] {
			continue // RDF graphs are sets
		}
		seen[k] = true
		i := int32(len(m.ts))
		m.ts = append(m.ts, k)
		m.byS[k[0]] = append(m.byS[k[0]], i)
		m.byP[k[1]] = append(m.byP[k[1]], i)
		m.byO[k[2]] = append(m.byO[k[2]], i)
	}
	return m
}

func (m *miniStore) intern(t rdf.Term) int32 {
	id, ok := m.ids[t]
	if !ok {
		id = int32(len(m.ids))
		m.ids[t] = id
	}
	return id
}

// slot is a position of a pattern: a variable (v >= 0) or a constant id
// (c; -1 for a constant the data does not hold, which matches nothing).
type slot struct {
	v int
	c int32
}

// bgpQuery is a SELECT query whose WHERE clause is one basic graph pattern.
type bgpQuery struct {
	vars []string
	pats [][3]string
}

// parseBGPQuery parses the restricted SPARQL of the LUBM query files:
// PREFIX lines, SELECT with variables, and a WHERE block of triple patterns
// whose terms are variables, <IRIs> and prefixed names.
func parseBGPQuery(text string) (bgpQuery, error) {
	prefixes := map[string]string{}
	var q bgpQuery
	open, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if open < 0 || end < open {
		return q, fmt.Errorf("no WHERE block")
	}
	for _, line := range strings.Split(text[:open], "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && strings.EqualFold(f[0], "PREFIX") {
			prefixes[strings.TrimSuffix(f[1], ":")] = strings.Trim(f[2], "<>")
		}
	}
	expand := func(tok string) (string, error) {
		switch {
		case strings.HasPrefix(tok, "?"), strings.HasPrefix(tok, "<"):
			return tok, nil
		}
		p, local, ok := strings.Cut(tok, ":")
		ns, known := prefixes[p]
		if !ok || !known {
			return "", fmt.Errorf("unsupported term %q", tok)
		}
		return "<" + ns + local + ">", nil
	}
	var cur []string
	for _, tok := range strings.Fields(text[open+1 : end]) {
		if tok == "." {
			if len(cur) != 3 {
				return q, fmt.Errorf("pattern of %d terms: %q", len(cur), cur)
			}
			q.pats = append(q.pats, [3]string(cur))
			cur = nil
			continue
		}
		t, err := expand(tok)
		if err != nil {
			return q, err
		}
		cur = append(cur, t)
	}
	if len(cur) == 3 {
		q.pats = append(q.pats, [3]string(cur))
	} else if len(cur) != 0 {
		return q, fmt.Errorf("trailing terms %q", cur)
	}
	return q, nil
}

// count returns the number of solutions of the pattern (bag semantics:
// SELECT without DISTINCT keeps one row per solution of the whole pattern).
func (m *miniStore) count(q bgpQuery) int {
	varIdx := map[string]int{}
	pats := make([][3]slot, len(q.pats))
	for i, p := range q.pats {
		for j, tok := range p {
			if strings.HasPrefix(tok, "?") {
				v, ok := varIdx[tok]
				if !ok {
					v = len(varIdx)
					varIdx[tok] = v
				}
				pats[i][j] = slot{v: v}
				continue
			}
			id, ok := m.ids[rdf.NewIRI(strings.Trim(tok, "<>"))]
			if !ok {
				id = -1
			}
			pats[i][j] = slot{v: -1, c: id}
		}
	}
	binding := make([]int32, len(varIdx))
	for i := range binding {
		binding[i] = -1
	}
	done := make([]bool, len(pats))
	return m.solve(pats, done, binding, len(pats))
}

func (m *miniStore) solve(pats [][3]slot, done []bool, binding []int32, left int) int {
	if left == 0 {
		return 1
	}
	// The next pattern: the one with the most bound positions.
	value := func(s slot) int32 {
		if s.v < 0 {
			return s.c
		}
		return binding[s.v]
	}
	best, bestBound := -1, -1
	for i, p := range pats {
		if done[i] {
			continue
		}
		n := 0
		for _, s := range p {
			if value(s) != -1 || s.v < 0 {
				n++
			}
		}
		if n > bestBound {
			best, bestBound = i, n
		}
	}
	p := pats[best]
	for _, s := range p {
		if s.v < 0 && s.c == -1 {
			return 0 // a constant the data does not hold
		}
	}
	var cand []int32
	switch {
	case value(p[0]) != -1:
		cand = m.byS[value(p[0])]
	case value(p[2]) != -1:
		cand = m.byO[value(p[2])]
	case value(p[1]) != -1:
		cand = m.byP[value(p[1])]
	default:
		cand = make([]int32, len(m.ts))
		for i := range cand {
			cand[i] = int32(i)
		}
	}
	done[best] = true
	total := 0
	for _, ti := range cand {
		t := m.ts[ti]
		var set []int
		ok := true
		for j, s := range p {
			want := value(s)
			switch {
			case want == -1:
				binding[s.v] = t[j]
				set = append(set, s.v)
			case want != t[j]:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok {
			total += m.solve(pats, done, binding, left-1)
		}
		for _, v := range set {
			binding[v] = -1
		}
	}
	done[best] = false
	return total
}
