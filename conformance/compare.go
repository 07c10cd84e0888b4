package conformance

import (
	"bytes"
	"fmt"
	"math/big"
	"sort"
	"strconv"
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
		if _, diff := rdf.MatchBags(tripleTuples(a), tripleTuples(e)); diff != "" {
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
	m, diff := rdf.MatchBags(rows, expected.Rows)
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

// NumbersByValue returns a copy of a whose numeric literals of the XSD
// types integer, decimal, float and double are rewritten in one canonical
// lexical form of their value, the datatype kept: compared afterwards,
// numbers of one datatype compare by value ("2E-1" = "2.0E-1" as
// xsd:double; 1 ≠ 1.0, an integer and a decimal, still). That is how the
// W3C results are judged (as Jena's harness does), because they write
// computed numbers in lexical forms that contradict each other.
func NumbersByValue(a *Answer) *Answer {
	c := *a
	c.Rows = make([][]rdf.Term, len(a.Rows))
	for i, r := range a.Rows {
		c.Rows[i] = make([]rdf.Term, len(r))
		for j, t := range r {
			c.Rows[i][j] = canonicalNumber(t)
		}
	}
	c.Graph = make([]rdf.Triple, len(a.Graph))
	for i, t := range a.Graph {
		c.Graph[i] = rdf.Triple{S: t.S, P: t.P, O: canonicalNumber(t.O)}
	}
	return &c
}

func canonicalNumber(t rdf.Term) rdf.Term {
	if !t.IsLiteral() {
		return t
	}
	v := strings.TrimSpace(t.Value)
	switch t.Datatype {
	case rdf.XSD + "integer", rdf.XSD + "decimal":
		if _, ok := new(big.Rat).SetString(v); !ok || strings.ContainsAny(v, "eE/") {
			return t
		}
		return rdf.NewLiteral(canonicalDecimal(v), t.Datatype)
	case rdf.XSD + "double", rdf.XSD + "float":
		bits := 64
		if t.Datatype == rdf.XSD+"float" {
			bits = 32
		}
		switch v {
		case "INF", "+INF", "-INF", "NaN":
			return rdf.NewLiteral(strings.TrimPrefix(v, "+"), t.Datatype)
		}
		f, err := strconv.ParseFloat(v, bits)
		if err != nil {
			return t
		}
		return rdf.NewLiteral(strconv.FormatFloat(f, 'g', -1, bits), t.Datatype)
	}
	return t
}

// canonicalDecimal writes a valid xsd:decimal (or integer) lexical form
// without a sign on positives, leading zeros, trailing fractional zeros
// or an empty fraction ("+01.50" → "1.5", "-0.0" → "0").
func canonicalDecimal(v string) string {
	neg := strings.HasPrefix(v, "-")
	v = strings.TrimLeft(v, "+-")
	ip, fp, _ := strings.Cut(v, ".")
	ip = strings.TrimLeft(ip, "0")
	fp = strings.TrimRight(fp, "0")
	if ip == "" {
		ip = "0"
	}
	out := ip
	if fp != "" {
		out += "." + fp
	}
	if neg && out != "0" {
		out = "-" + out
	}
	return out
}
