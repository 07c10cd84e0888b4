// Package refeval is the reference evaluator for differential tests: a
// naive, single-shard, obviously correct evaluation of the SPARQL algebra
// over a plain list of triples, with no IDs, no planner and no shards.
//
// In: a *sparql.Query and []rdf.Triple. Out: the result variables and the
// rows as rdf.Terms (a bag, in no particular order unless ORDER BY).
// It covers what the engine covers: basic graph patterns (and joins of
// them), projection, DISTINCT, REDUCED, ORDER BY variables, OFFSET and
// LIMIT. It is deliberately slow: nested loops over the triples, which are
// only grouped by predicate so that tests finish.
package refeval

import (
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// ErrUnsupported is returned for algebra the reference does not evaluate.
var ErrUnsupported = errors.New("refeval: not supported")

// Graph is a set of triples grouped by subject, predicate and object.
type Graph struct {
	all    []rdf.Triple
	byPred map[rdf.Term][]rdf.Triple
	bySubj map[rdf.Term][]rdf.Triple
	byObj  map[rdf.Term][]rdf.Triple
	// Limit, when > 0, bounds the solutions of any step: Eval fails with
	// ErrTooLarge beyond it (tests use it to skip explosive queries).
	Limit int
}

// ErrTooLarge is returned when an evaluation exceeds Graph.Limit.
var ErrTooLarge = errors.New("refeval: too many solutions")

// NewGraph returns the graph of triples (duplicates removed: a graph is a
// set).
func NewGraph(triples []rdf.Triple) *Graph {
	g := &Graph{byPred: map[rdf.Term][]rdf.Triple{}, bySubj: map[rdf.Term][]rdf.Triple{}, byObj: map[rdf.Term][]rdf.Triple{}}
	seen := map[rdf.Triple]bool{}
	for _, t := range triples {
		if seen[t] {
			continue
		}
		seen[t] = true
		g.all = append(g.all, t)
		g.byPred[t.P] = append(g.byPred[t.P], t)
		g.bySubj[t.S] = append(g.bySubj[t.S], t)
		g.byObj[t.O] = append(g.byObj[t.O], t)
	}
	return g
}

// solution maps variables to terms.
type solution map[sparql.Var]rdf.Term

// Eval evaluates a SELECT query.
func (g *Graph) Eval(q *sparql.Query) ([]sparql.Var, [][]rdf.Term, error) {
	if q.Form != sparql.FormSelect {
		return nil, nil, fmt.Errorf("%w: %s", ErrUnsupported, q.Form)
	}
	sols, err := g.eval(q.Pattern)
	if err != nil {
		return nil, nil, err
	}
	rows := make([][]rdf.Term, len(sols))
	for i, s := range sols {
		row := make([]rdf.Term, len(q.Vars))
		for j, v := range q.Vars {
			row[j] = s[v]
		}
		rows[i] = row
	}
	return q.Vars, rows, nil
}

func (g *Graph) eval(p sparql.Pattern) ([]solution, error) {
	switch p := p.(type) {
	case *sparql.BGP:
		sols := []solution{{}}
		for _, tp := range p.Triples {
			var next []solution
			for _, s := range sols {
				next = append(next, g.match(tp, s)...)
				if g.Limit > 0 && len(next) > g.Limit {
					return nil, ErrTooLarge
				}
			}
			sols = next
		}
		return sols, nil
	case *sparql.Join:
		l, err := g.eval(p.Left)
		if err != nil {
			return nil, err
		}
		r, err := g.eval(p.Right)
		if err != nil {
			return nil, err
		}
		var out []solution
		for _, a := range l {
			for _, b := range r {
				if m, ok := merge(a, b); ok {
					out = append(out, m)
				}
			}
		}
		return out, nil
	case *sparql.Project:
		in, err := g.eval(p.Input)
		if err != nil {
			return nil, err
		}
		out := make([]solution, len(in))
		for i, s := range in {
			o := solution{}
			for _, v := range p.Vars {
				if t, ok := s[v]; ok {
					o[v] = t
				}
			}
			out[i] = o
		}
		return out, nil
	case *sparql.Distinct:
		in, err := g.eval(p.Input)
		if err != nil {
			return nil, err
		}
		var out []solution
		seen := map[string]bool{}
		for _, s := range in {
			k := key(s)
			if !seen[k] {
				seen[k] = true
				out = append(out, s)
			}
		}
		return out, nil
	case *sparql.Reduced:
		return g.eval(p.Input)
	case *sparql.OrderBy:
		in, err := g.eval(p.Input)
		if err != nil {
			return nil, err
		}
		var vars []sparql.Var
		for _, c := range p.Conds {
			v, ok := c.Expr.(*sparql.VarExpr)
			if !ok {
				return nil, fmt.Errorf("%w: ORDER BY %s", ErrUnsupported, c.Expr)
			}
			vars = append(vars, v.Var)
		}
		sort.SliceStable(in, func(i, j int) bool {
			for k, v := range vars {
				c := Compare(in[i][v], in[j][v])
				if p.Conds[k].Desc {
					c = -c
				}
				if c != 0 {
					return c < 0
				}
			}
			return false
		})
		return in, nil
	case *sparql.Slice:
		in, err := g.eval(p.Input)
		if err != nil {
			return nil, err
		}
		lo := min(max(p.Offset, 0), int64(len(in)))
		in = in[lo:]
		if p.Limit >= 0 && p.Limit < int64(len(in)) {
			in = in[:p.Limit]
		}
		return in, nil
	}
	return nil, fmt.Errorf("%w: %T", ErrUnsupported, p)
}

// match extends s by every triple matching tp under s.
func (g *Graph) match(tp sparql.TriplePattern, s solution) []solution {
	// The smallest group of triples that can match (all triples when no
	// position is known).
	cands := g.all
	if x, ok := value(tp.P, s); ok && len(g.byPred[x]) < len(cands) {
		cands = g.byPred[x]
	}
	if x, ok := value(tp.S, s); ok && len(g.bySubj[x]) < len(cands) {
		cands = g.bySubj[x]
	}
	if x, ok := value(tp.O, s); ok && len(g.byObj[x]) < len(cands) {
		cands = g.byObj[x]
	}
	var out []solution
	for _, t := range cands {
		if !fits(tp.S, t.S, s) || !fits(tp.P, t.P, s) || !fits(tp.O, t.O, s) {
			continue
		}
		n := solution{}
		for k, v := range s {
			n[k] = v
		}
		if bind(n, tp.S, t.S) && bind(n, tp.P, t.P) && bind(n, tp.O, t.O) {
			out = append(out, n)
		}
	}
	return out
}

// fits reports whether t can stand at x under s (a quick test before
// bind, which also checks repeated variables).
func fits(x sparql.TermOrVar, t rdf.Term, s solution) bool {
	v, ok := value(x, s)
	return !ok || v == t
}

// value returns the term x stands for under s, if known.
func value(x sparql.TermOrVar, s solution) (rdf.Term, bool) {
	if !x.IsVar() {
		return x.Term, true
	}
	t, ok := s[x.Var]
	return t, ok
}

// bind unifies x with t in s.
func bind(s solution, x sparql.TermOrVar, t rdf.Term) bool {
	if !x.IsVar() {
		return x.Term == t
	}
	if old, ok := s[x.Var]; ok {
		return old == t
	}
	s[x.Var] = t
	return true
}

func merge(a, b solution) (solution, bool) {
	m := solution{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		if old, ok := m[k]; ok && old != v {
			return nil, false
		}
		m[k] = v
	}
	return m, true
}

func key(s solution) string {
	ks := make([]string, 0, len(s))
	for k, v := range s {
		ks = append(ks, string(k)+"="+v.String())
	}
	sort.Strings(ks)
	return strings.Join(ks, "\x00")
}

// Compare orders terms for ORDER BY: unbound < blank < IRI < literal;
// numeric literals by value among themselves, then by lexical form,
// datatype and language.
func Compare(a, b rdf.Term) int {
	rank := func(k rdf.Kind) int {
		return map[rdf.Kind]int{rdf.KindNone: 0, rdf.KindBlank: 1, rdf.KindIRI: 2, rdf.KindLiteral: 3}[k]
	}
	if a.Kind != b.Kind {
		return rank(a.Kind) - rank(b.Kind)
	}
	if a.Kind == rdf.KindLiteral {
		x, okx := number(a)
		y, oky := number(b)
		if okx && oky {
			if c := x.Cmp(y); c != 0 {
				return c
			}
		}
	}
	if c := strings.Compare(a.Value, b.Value); c != 0 {
		return c
	}
	if c := strings.Compare(a.Datatype, b.Datatype); c != 0 {
		return c
	}
	return strings.Compare(a.Lang, b.Lang)
}

func number(t rdf.Term) (*big.Rat, bool) {
	switch strings.TrimPrefix(t.Datatype, rdf.XSD) {
	case "integer", "decimal", "float", "double", "int", "long", "short", "byte",
		"nonNegativeInteger", "positiveInteger", "nonPositiveInteger", "negativeInteger",
		"unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte":
		if !strings.HasPrefix(t.Datatype, rdf.XSD) {
			return nil, false
		}
		return new(big.Rat).SetString(strings.TrimSpace(t.Value))
	}
	return nil, false
}
