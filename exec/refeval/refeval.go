// Package refeval is the reference evaluator for differential tests: a
// naive, single-shard, obviously correct evaluation of the SPARQL algebra
// over a plain list of triples, with no IDs, no planner and no shards.
//
// In: a *sparql.Query and []rdf.Triple. Out: the result variables and the
// rows as rdf.Terms (a bag, in no particular order unless ORDER BY).
// It covers basic graph patterns and joins of them, OPTIONAL (LeftJoin
// with its condition), UNION, MINUS, FILTER with a small set of
// expressions (BOUND, !, &&, ||, = and != as RDFterm-equal with numbers by
// value, < > <= >= on numbers, sameTerm, isIRI, isLiteral), projection,
// DISTINCT, REDUCED, ORDER BY variables, OFFSET and LIMIT. Every operator
// evaluates its operands on their own, bottom up, exactly as §18.5 defines
// it — the engine's seeding of one side with the other's rows must agree
// with that. It is deliberately slow: nested loops over the triples, which
// are only grouped by predicate so that tests finish.
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
	// Limit, when > 0, bounds the solutions of any step, and the pairs a
	// join, left join or minus compares by 100×Limit: Eval fails with
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

// evalBoth evaluates the two operands of a binary operator on their own
// (bottom-up, as the algebra defines every binary operator).
func (g *Graph) evalBoth(left, right sparql.Pattern) (l, r []solution, err error) {
	if l, err = g.eval(left); err != nil {
		return nil, nil, err
	}
	if r, err = g.eval(right); err != nil {
		return nil, nil, err
	}
	return l, r, nil
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
		l, r, err := g.evalBoth(p.Left, p.Right)
		if err != nil {
			return nil, err
		}
		if err := g.pairs(l, r); err != nil {
			return nil, err
		}
		var out []solution
		for _, a := range l {
			for _, b := range r {
				if m, ok := merge(a, b); ok {
					out = append(out, m)
				}
			}
			if g.Limit > 0 && len(out) > g.Limit {
				return nil, ErrTooLarge
			}
		}
		return out, nil
	case *sparql.LeftJoin:
		// §18.5: LeftJoin(Ω1, Ω2, expr) = Filter(expr, Join(Ω1, Ω2)) ∪
		// Diff(Ω1, Ω2, expr).
		l, r, err := g.evalBoth(p.Left, p.Right)
		if err != nil {
			return nil, err
		}
		if err := g.pairs(l, r); err != nil {
			return nil, err
		}
		var out []solution
		for _, a := range l {
			matched := false
			for _, b := range r {
				m, ok := merge(a, b)
				if !ok {
					continue
				}
				if p.Expr != nil {
					v, err := ebv(p.Expr, m)
					if errors.Is(err, ErrUnsupported) {
						return nil, err
					}
					if err != nil || !v {
						continue
					}
				}
				matched = true
				out = append(out, m)
			}
			if !matched {
				out = append(out, a)
			}
			if g.Limit > 0 && len(out) > g.Limit {
				return nil, ErrTooLarge
			}
		}
		return out, nil
	case *sparql.Union:
		l, r, err := g.evalBoth(p.Left, p.Right)
		if err != nil {
			return nil, err
		}
		if g.Limit > 0 && len(l)+len(r) > g.Limit {
			return nil, ErrTooLarge
		}
		return append(l, r...), nil
	case *sparql.Minus:
		l, r, err := g.evalBoth(p.Left, p.Right)
		if err != nil {
			return nil, err
		}
		if err := g.pairs(l, r); err != nil {
			return nil, err
		}
		var out []solution
		for _, a := range l {
			removed := false
			for _, b := range r {
				if _, ok := merge(a, b); ok && sharesVar(a, b) {
					removed = true
					break
				}
			}
			if !removed {
				out = append(out, a)
			}
		}
		return out, nil
	case *sparql.Filter:
		in, err := g.eval(p.Input)
		if err != nil {
			return nil, err
		}
		var out []solution
	rows:
		for _, s := range in {
			for _, e := range p.Exprs {
				v, err := ebv(e, s)
				if errors.Is(err, ErrUnsupported) {
					return nil, err
				}
				if err != nil || !v {
					continue rows
				}
			}
			out = append(out, s)
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

// pairs fails with ErrTooLarge when comparing every solution of l with
// every one of r would exceed the limit.
func (g *Graph) pairs(l, r []solution) error {
	if g.Limit > 0 && int64(len(l))*int64(len(r)) > 100*int64(g.Limit) {
		return ErrTooLarge
	}
	return nil
}

func sharesVar(a, b solution) bool {
	for k := range a {
		if _, ok := b[k]; ok {
			return true
		}
	}
	return false
}

// errType is an expression's type error (a FILTER drops the row).
var errType = errors.New("refeval: type error")

// ebv evaluates e under s to its effective boolean value.
func ebv(e sparql.Expr, s solution) (bool, error) {
	t, err := evalExpr(e, s)
	if err != nil {
		return false, err
	}
	if t.Kind == rdf.KindLiteral && t.Datatype == rdf.XSD+"boolean" {
		return t.Value == "true" || t.Value == "1", nil
	}
	if n, ok := number(t); ok {
		return n.Sign() != 0, nil
	}
	if t.Kind == rdf.KindLiteral && (t.Datatype == "" || t.Datatype == rdf.XSD+"string") && t.Lang == "" {
		return t.Value != "", nil
	}
	return false, errType
}

func boolTerm(b bool) rdf.Term {
	if b {
		return rdf.NewLiteral("true", rdf.XSD+"boolean")
	}
	return rdf.NewLiteral("false", rdf.XSD+"boolean")
}

// evalExpr evaluates the expressions the reference knows.
func evalExpr(e sparql.Expr, s solution) (rdf.Term, error) {
	switch e := e.(type) {
	case *sparql.VarExpr:
		t, ok := s[e.Var]
		if !ok {
			return rdf.Term{}, errType
		}
		return t, nil
	case *sparql.TermExpr:
		return e.Term, nil
	case *sparql.UnaryExpr:
		if e.Op != "!" {
			break
		}
		v, err := ebv(e.X, s)
		if err != nil {
			return rdf.Term{}, err
		}
		return boolTerm(!v), nil
	case *sparql.BinaryExpr:
		switch e.Op {
		case "&&", "||":
			// §17.2: an error on one side is overruled by false (&&) or
			// true (||) on the other.
			a, ea := ebv(e.L, s)
			b, eb := ebv(e.R, s)
			decisive := e.Op == "||"
			switch {
			case ea == nil && a == decisive, eb == nil && b == decisive:
				return boolTerm(decisive), nil
			case ea != nil:
				return rdf.Term{}, ea
			case eb != nil:
				return rdf.Term{}, eb
			}
			return boolTerm(!decisive), nil
		case "=", "!=", "<", ">", "<=", ">=":
			a, err := evalExpr(e.L, s)
			if err != nil {
				return rdf.Term{}, err
			}
			b, err := evalExpr(e.R, s)
			if err != nil {
				return rdf.Term{}, err
			}
			x, okx := number(a)
			y, oky := number(b)
			if okx && oky {
				c := x.Cmp(y)
				return boolTerm(map[string]bool{"=": c == 0, "!=": c != 0, "<": c < 0, ">": c > 0, "<=": c <= 0, ">=": c >= 0}[e.Op]), nil
			}
			if e.Op != "=" && e.Op != "!=" {
				return rdf.Term{}, errType
			}
			eq := a == b
			if !eq && a.Kind == rdf.KindLiteral && b.Kind == rdf.KindLiteral && !(okx || oky) {
				// Two different literals of datatypes the reference does
				// not compare by value: leave the test out.
				return rdf.Term{}, fmt.Errorf("%w: %s %s %s", ErrUnsupported, a, e.Op, b)
			}
			return boolTerm(eq == (e.Op == "=")), nil
		}
	case *sparql.CallExpr:
		switch {
		case e.Name == "BOUND" && len(e.Args) == 1:
			v, ok := e.Args[0].(*sparql.VarExpr)
			if !ok {
				break
			}
			_, bound := s[v.Var]
			return boolTerm(bound), nil
		case (e.Name == "SAMETERM") && len(e.Args) == 2:
			a, err := evalExpr(e.Args[0], s)
			if err != nil {
				return rdf.Term{}, err
			}
			b, err := evalExpr(e.Args[1], s)
			if err != nil {
				return rdf.Term{}, err
			}
			return boolTerm(a == b), nil
		case (e.Name == "ISIRI" || e.Name == "ISURI" || e.Name == "ISLITERAL") && len(e.Args) == 1:
			a, err := evalExpr(e.Args[0], s)
			if err != nil {
				return rdf.Term{}, err
			}
			if e.Name == "ISLITERAL" {
				return boolTerm(a.Kind == rdf.KindLiteral), nil
			}
			return boolTerm(a.Kind == rdf.KindIRI), nil
		}
	}
	return rdf.Term{}, fmt.Errorf("%w: expression %T", ErrUnsupported, e)
}
