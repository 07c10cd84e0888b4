package conformance

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/results"
)

// Compare checks an actual answer against the expected one and returns ""
// when they agree, else what differs (first line: a summary).
//
// Solutions compare as bags (multisets) of rows over the same set of
// variables (their order in the head does not matter), graphs as sets of
// triples, both up to a consistent one-to-one renaming of blank nodes.
// Literals compare as terms: lexical form, datatype and language tag
// ("1"^^xsd:integer is not "01"^^xsd:integer). When orderBy is not empty
// the rows must also come in the expected order of those variables: row i
// of the actual answer must bind each of them as row i of the expected one
// does. Rows that tie on the keys may come in any order, which is exactly
// the freedom ORDER BY leaves.
func Compare(expected, actual *Answer, orderBy []string) string {
	if expected.Kind != actual.Kind {
		return fmt.Sprintf("answer is %s, want %s", actual.Kind, expected.Kind)
	}
	switch expected.Kind {
	case Boolean:
		if expected.Boolean != actual.Boolean {
			return fmt.Sprintf("answer is %v, want %v", actual.Boolean, expected.Boolean)
		}
		return ""
	case Graph:
		a, e := dedupTriples(actual.Graph), dedupTriples(expected.Graph)
		if _, diff := matchBags(tripleTuples(a), tripleTuples(e)); diff != "" {
			return fmt.Sprintf("graph differs (%d triples, want %d): %s", len(a), len(e), diff)
		}
		return ""
	}
	act := actual
	if expected.Format == results.FormatCSV || expected.RoundTrip && expected.Format != results.FormatNone {
		var err error
		if act, err = roundTrip(actual, expected.Format); err != nil {
			return fmt.Sprintf("cannot write the answer as %s and read it back: %v", expected.Format, err)
		}
	}
	rows, err := reorderColumns(act, expected.Vars)
	if err != nil {
		return err.Error()
	}
	m, diff := matchBags(rows, expected.Rows)
	if diff != "" {
		return fmt.Sprintf("solutions differ (%d rows, want %d): %s", len(rows), len(expected.Rows), diff)
	}
	if len(orderBy) > 0 {
		return checkOrder(expected, rows, m, orderBy)
	}
	return ""
}

// reorderColumns returns the rows of a with its columns in the order of
// vars, which must be the same set of variables.
func reorderColumns(a *Answer, vars []string) ([][]rdf.Term, error) {
	got, want := append([]string(nil), a.Vars...), append([]string(nil), vars...)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return nil, fmt.Errorf("variables %s, want %s", varList(a.Vars), varList(vars))
	}
	col := make(map[string]int, len(a.Vars))
	for i, v := range a.Vars {
		col[v] = i
	}
	out := make([][]rdf.Term, len(a.Rows))
	for r, row := range a.Rows {
		if len(row) != len(a.Vars) {
			return nil, fmt.Errorf("row %d has %d terms for %d variables", r, len(row), len(a.Vars))
		}
		nr := make([]rdf.Term, len(vars))
		for i, v := range vars {
			nr[i] = row[col[v]]
		}
		out[r] = nr
	}
	return out, nil
}

func varList(vars []string) string {
	if len(vars) == 0 {
		return "(none)"
	}
	return "?" + strings.Join(vars, " ?")
}

// checkOrder checks that the actual rows (columns in expected.Vars order,
// blank nodes renamed by m into the expected ones) bind the orderBy
// variables as the expected rows do, position by position.
func checkOrder(expected *Answer, rows [][]rdf.Term, m map[rdf.Term]rdf.Term, orderBy []string) string {
	var cols []int
	for _, v := range orderBy {
		for i, ev := range expected.Vars {
			if ev == v {
				cols = append(cols, i)
			}
		}
	}
	for r := range rows {
		for _, c := range cols {
			got, want := rows[r][c], expected.Rows[r][c]
			if got.IsBlank() {
				got = m[got]
			}
			if got != want {
				return fmt.Sprintf("order differs: row %d binds ?%s to %s, want %s (ORDER BY %s)",
					r+1, expected.Vars[c], termText(rows[r][c]), termText(want), varList(orderBy))
			}
		}
	}
	return ""
}

// roundTrip writes a's solutions with our writer of format f and reads
// them back with our reader (for CSV, losing what CSV loses).
func roundTrip(a *Answer, f results.Format) (*Answer, error) {
	var buf bytes.Buffer
	w, err := results.NewSolutionWriter(f, &buf)
	if err != nil {
		return nil, err
	}
	if err := w.WriteHead(a.Vars); err != nil {
		return nil, err
	}
	for _, row := range a.Rows {
		if err := w.WriteRow(row); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	r, err := results.Read(f, &buf)
	if err != nil {
		return nil, err
	}
	return &Answer{Kind: Solutions, Vars: r.Vars, Rows: r.Rows}, nil
}

func dedupTriples(ts []rdf.Triple) []rdf.Triple {
	seen := make(map[rdf.Triple]bool, len(ts))
	out := make([]rdf.Triple, 0, len(ts))
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func tripleTuples(ts []rdf.Triple) [][]rdf.Term {
	out := make([][]rdf.Term, len(ts))
	for i, t := range ts {
		out[i] = []rdf.Term{t.S, t.P, t.O}
	}
	return out
}

// termText prints a term for messages ("UNDEF" when unbound).
func termText(t rdf.Term) string {
	if t.IsZero() {
		return "UNDEF"
	}
	return t.String()
}

// tupleKey is a map key for a tuple of terms.
func tupleKey(tu []rdf.Term) string {
	var b []byte
	for i, t := range tu {
		if i > 0 {
			b = append(b, ' ')
		}
		b = rdf.AppendNTriples(b, t)
		if t.IsZero() {
			b = append(b, '-')
		}
	}
	return string(b)
}

// shapeKey is tupleKey with every blank node written as "_:".
func shapeKey(tu []rdf.Term) string {
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
			b = rdf.AppendNTriples(b, t)
		}
	}
	return string(b)
}

func hasBlankTerm(tu []rdf.Term) bool {
	for _, t := range tu {
		if t.IsBlank() {
			return true
		}
	}
	return false
}

// maxSearch bounds the backtracking of matchBags.
const maxSearch = 1 << 20

// matchBags decides whether the bags of tuples a (actual) and b (expected)
// are equal under some one-to-one renaming of a's blank nodes to b's. It
// returns the renaming, or a description of the difference.
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
func matchBags(a, b [][]rdf.Term) (map[rdf.Term]rdf.Term, string) {
	if d := shapeDiff(a, b); d != "" {
		return nil, d
	}
	countA, countB := map[string]int{}, map[string]int{}
	var bnA, bnB [][]rdf.Term
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
		return map[rdf.Term]rdf.Term{}, ""
	}
	colA, colB := colourBlanks(bnA), colourBlanks(bnB)
	if len(colA) != len(colB) {
		return nil, fmt.Sprintf("%d distinct blank nodes, want %d", len(colA), len(colB))
	}
	byColB := map[uint64][]rdf.Term{}
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
	nodes := make([]rdf.Term, 0, len(colA))
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
	order := make(map[rdf.Term]int, len(nodes))
	for i, n := range nodes {
		order[n] = i
	}
	check := make([][][]rdf.Term, len(nodes))
	for _, tu := range bnA {
		last := -1
		for _, t := range tu {
			if t.IsBlank() && order[t] > last {
				last = order[t]
			}
		}
		check[last] = append(check[last], tu)
	}
	m := make(map[rdf.Term]rdf.Term, len(nodes))
	used := map[rdf.Term]bool{}
	img := make([]rdf.Term, 0, 8)
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
func shapeDiff(a, b [][]rdf.Term) string {
	cnt := map[string]int{}
	first := map[string][]rdf.Term{}
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

func tupleText(tu []rdf.Term) string {
	f := make([]string, len(tu))
	for i, t := range tu {
		if t.IsBlank() {
			f[i] = "_:b"
		} else {
			f[i] = termText(t)
		}
	}
	return "(" + strings.Join(f, " ") + ")"
}

// colourBlanks colours the blank nodes of tuples: a node's colour starts
// from the shapes of its tuples and its positions in them and is refined
// with the colours of the nodes it shares tuples with.
func colourBlanks(tuples [][]rdf.Term) map[rdf.Term]uint64 {
	col := map[rdf.Term]uint64{}
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
		sigs := map[rdf.Term][]uint64{}
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
		next := make(map[rdf.Term]uint64, len(col))
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
