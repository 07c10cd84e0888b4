package service

import (
	"fmt"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
	"github.com/wukongd/wukongd/web"
)

// A WHERE after a change in the same request, in a cluster (DESIGN.md
// §15, "A WHERE after a change"). The proposer evaluates the request at
// the version v it applied, without applying anything; a WHERE that
// follows changes of the same request must see them. Instead of an
// intermediate store (a node holds only some shards), the WHERE is
// rewritten so that, run at v, it reads v with the pending changes laid
// over it: every triple pattern some changed triple matches reads the
// stored triples minus the changed ones, plus the triples present after
// the changes.

// netChanges nets changes of the default graph into the triples present
// (true) or absent (false) after them, and whether the graph was
// cleared first (every stored triple is then absent).
type netChanges struct {
	cleared bool
	state   map[rdf.Triple]bool
	order   []rdf.Triple // first-touch order: the rows come out in a fixed order
}

func netOf(changes []graphstore.GraphChange) (*netChanges, error) {
	n := &netChanges{state: map[rdf.Triple]bool{}}
	set := func(t rdf.Triple, present bool) {
		if _, ok := n.state[t]; !ok {
			n.order = append(n.order, t)
		}
		n.state[t] = present
	}
	for _, c := range changes {
		if !c.Graph.IsZero() {
			return nil, fmt.Errorf("%w: a WHERE after a change of graph %s in the same request in a cluster (a cluster holds the default graph only)", web.ErrUnsupported, c.Graph)
		}
		if c.Clear || c.Drop {
			n.cleared = true
			clear(n.state)
			n.order = n.order[:0]
		}
		for _, t := range c.Delete {
			set(t, false)
		}
		for _, t := range c.WithTerms().Insert {
			set(t, true)
		}
	}
	return n, nil
}

// overlayPattern rewrites pat to read the store with n laid over it.
func overlayPattern(pat sparql.Pattern, n *netChanges) (sparql.Pattern, error) {
	o := &overlay{n: n}
	return o.pattern(pat)
}

type overlay struct {
	n *netChanges
}

// errOverlay refuses what the rewrite does not reach.
func errOverlay(what string, at sparql.Pos) error {
	return fmt.Errorf("%w: %s (line %d) in a WHERE after a change in the same request, in a cluster (send them as two requests)", web.ErrUnsupported, what, at.Line)
}

func (o *overlay) exprs(es ...sparql.Expr) error {
	for _, e := range es {
		if e == nil {
			continue
		}
		var bad *sparql.ExistsExpr
		sparql.WalkExpr(e, func(x sparql.Expr) bool {
			if ex, ok := x.(*sparql.ExistsExpr); ok && bad == nil {
				bad = ex
			}
			return bad == nil
		})
		if bad != nil {
			return errOverlay("EXISTS", bad.Pos)
		}
	}
	return nil
}

func (o *overlay) pattern(pat sparql.Pattern) (sparql.Pattern, error) {
	two := func(l, r sparql.Pattern) (sparql.Pattern, sparql.Pattern, error) {
		l, err := o.pattern(l)
		if err != nil {
			return nil, nil, err
		}
		r, err = o.pattern(r)
		return l, r, err
	}
	switch p := pat.(type) {
	case nil:
		return nil, nil
	case *sparql.BGP:
		return o.bgp(p), nil
	case *sparql.Join:
		l, r, err := two(p.Left, p.Right)
		return &sparql.Join{Pos: p.Pos, Left: l, Right: r}, err
	case *sparql.LeftJoin:
		if err := o.exprs(p.Expr); err != nil {
			return nil, err
		}
		l, r, err := two(p.Left, p.Right)
		return &sparql.LeftJoin{Pos: p.Pos, Left: l, Right: r, Expr: p.Expr}, err
	case *sparql.Union:
		l, r, err := two(p.Left, p.Right)
		return &sparql.Union{Pos: p.Pos, Left: l, Right: r}, err
	case *sparql.Minus:
		l, r, err := two(p.Left, p.Right)
		return &sparql.Minus{Pos: p.Pos, Left: l, Right: r}, err
	case *sparql.Filter:
		if err := o.exprs(p.Exprs...); err != nil {
			return nil, err
		}
		in, err := o.pattern(p.Input)
		return &sparql.Filter{Pos: p.Pos, Exprs: p.Exprs, Input: in}, err
	case *sparql.Extend:
		if err := o.exprs(p.Expr); err != nil {
			return nil, err
		}
		in, err := o.pattern(p.Input)
		return &sparql.Extend{Pos: p.Pos, Input: in, Var: p.Var, Expr: p.Expr}, err
	case *sparql.Group:
		if err := o.exprs(p.Keys...); err != nil {
			return nil, err
		}
		for _, a := range p.Aggregates {
			if err := o.exprs(a.Agg); err != nil {
				return nil, err
			}
		}
		in, err := o.pattern(p.Input)
		return &sparql.Group{Pos: p.Pos, Input: in, Keys: p.Keys, Aggregates: p.Aggregates}, err
	case *sparql.OrderBy:
		for _, c := range p.Conds {
			if err := o.exprs(c.Expr); err != nil {
				return nil, err
			}
		}
		in, err := o.pattern(p.Input)
		return &sparql.OrderBy{Pos: p.Pos, Input: in, Conds: p.Conds}, err
	case *sparql.Project:
		in, err := o.pattern(p.Input)
		return &sparql.Project{Pos: p.Pos, Input: in, Vars: p.Vars}, err
	case *sparql.Distinct:
		in, err := o.pattern(p.Input)
		return &sparql.Distinct{Pos: p.Pos, Input: in}, err
	case *sparql.Reduced:
		in, err := o.pattern(p.Input)
		return &sparql.Reduced{Pos: p.Pos, Input: in}, err
	case *sparql.Slice:
		in, err := o.pattern(p.Input)
		return &sparql.Slice{Pos: p.Pos, Input: in, Offset: p.Offset, Limit: p.Limit}, err
	case *sparql.Values:
		return p, nil
	case *sparql.Graph:
		// A named graph: a cluster's changes are of the default graph only.
		return p, nil
	case *sparql.PathPattern:
		return nil, errOverlay("a property path", p.Pos)
	case *sparql.Service:
		return nil, errOverlay("SERVICE", p.Pos)
	}
	return nil, fmt.Errorf("BUG: overlay of pattern %T", pat)
}

// bgp rewrites the triple patterns of b that a changed triple matches:
// each reads the stored triples without the changed ones (Minus) plus
// the ones present after the changes (Values); the others stay one BGP,
// joined with them. Subtracting the triples present after the changes
// too keeps the multiplicities: a triple inserted that was stored counts
// once.
func (o *overlay) bgp(b *sparql.BGP) sparql.Pattern {
	var keep []sparql.TriplePattern
	var parts []sparql.Pattern
	for _, tp := range b.Triples {
		vars := patternVars(tp)
		var touched, present [][]rdf.Term
		for _, t := range o.n.order {
			row, ok := matchRow(tp, vars, t)
			if !ok {
				continue
			}
			touched = append(touched, row)
			if o.n.state[t] {
				present = append(present, row)
			}
		}
		if len(touched) == 0 && !o.n.cleared {
			keep = append(keep, tp)
			continue
		}
		if len(vars) == 0 {
			// A ground pattern: one empty solution if its triple is
			// present after the changes, none if absent, else as stored.
			switch {
			case len(present) > 0:
				parts = append(parts, &sparql.BGP{Pos: tp.Pos})
			case len(touched) > 0 || o.n.cleared:
				parts = append(parts, noSolution(tp.Pos))
			default:
				keep = append(keep, tp)
			}
			continue
		}
		after := &sparql.Values{Pos: tp.Pos, Vars: vars, Rows: present}
		if o.n.cleared {
			parts = append(parts, after)
			continue
		}
		var p sparql.Pattern = &sparql.Minus{Pos: tp.Pos, Left: &sparql.BGP{Pos: tp.Pos, Triples: []sparql.TriplePattern{tp}},
			Right: &sparql.Values{Pos: tp.Pos, Vars: vars, Rows: touched}}
		if len(present) > 0 {
			p = &sparql.Union{Pos: tp.Pos, Left: p, Right: after}
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return b
	}
	var out sparql.Pattern
	if len(keep) > 0 {
		out = &sparql.BGP{Pos: b.Pos, Triples: keep}
	}
	for _, p := range parts {
		if out == nil {
			out = p
		} else {
			out = &sparql.Join{Pos: b.Pos, Left: out, Right: p}
		}
	}
	return out
}

// noSolution is a pattern with no solution: a table of no rows.
func noSolution(at sparql.Pos) sparql.Pattern {
	return &sparql.Values{Pos: at, Vars: []sparql.Var{"_overlay_none"}, Rows: nil}
}

// patternVars returns tp's variables in order, each once.
func patternVars(tp sparql.TriplePattern) []sparql.Var {
	var vars []sparql.Var
	for _, x := range []sparql.TermOrVar{tp.S, tp.P, tp.O} {
		if x.IsVar() && !containsVar(vars, x.Var) {
			vars = append(vars, x.Var)
		}
	}
	return vars
}

func containsVar(vs []sparql.Var, v sparql.Var) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// matchRow matches t against tp: the row of tp's variables (in vars'
// order), false if a constant differs or a repeated variable would take
// two values.
func matchRow(tp sparql.TriplePattern, vars []sparql.Var, t rdf.Triple) ([]rdf.Term, bool) {
	row := make([]rdf.Term, len(vars))
	for i, x := range []sparql.TermOrVar{tp.S, tp.P, tp.O} {
		v := [3]rdf.Term{t.S, t.P, t.O}[i]
		if !x.IsVar() {
			if x.Term != v {
				return nil, false
			}
			continue
		}
		for j, w := range vars {
			if w == x.Var {
				if !row[j].IsZero() && row[j] != v {
					return nil, false
				}
				row[j] = v
			}
		}
	}
	return row, true
}
