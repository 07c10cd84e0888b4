package planner

import (
	"fmt"

	"github.com/wukongd/wukongd/sparql"
)

// ---------------------------------------------------------------------------
// lowerQuery: algebra → operator tree with unordered BGPs.
//
// Lowering follows the algebra, with one twist: a pattern may be lowered
// "from a seed" — rows already computed that it must be joined with. A BGP
// lowered from a seed becomes a join candidate (a seeded exploration, or
// its own exploration and a hash join: chooseJoins decides); a Join lowers
// its right side from its left side; a LeftJoin lowers its right side from
// its numbered left rows; the pattern of EXISTS is lowered from the rows it
// tests. Whatever a node is built over a seed, its output keeps the
// seed's columns. Where pushing the seed into a pattern would change what
// an expression sees (a FILTER or BIND reading a variable the seed binds
// but the pattern may not), the pattern runs on its own and is hash-joined
// with the seed.

// scope is what the planner knows of a pattern's solutions: the variables
// they may bind (in order of first appearance) and those bound in every
// solution.
type scope struct {
	vars    []sparql.Var
	certain map[sparql.Var]bool
}

func newScope() scope { return scope{certain: map[sparql.Var]bool{}} }

func (s scope) has(v sparql.Var) bool {
	for _, x := range s.vars {
		if x == v {
			return true
		}
	}
	return false
}

func (s *scope) add(v sparql.Var, certain bool) {
	if !s.has(v) {
		s.vars = append(s.vars, v)
	}
	if certain {
		s.certain[v] = true
	}
}

func (s scope) clone() scope {
	c := scope{vars: append([]sparql.Var(nil), s.vars...), certain: make(map[sparql.Var]bool, len(s.certain))}
	for v := range s.certain {
		c.certain[v] = true
	}
	return c
}

// joinScope is the scope of the join of a and b.
func joinScope(a, b scope) scope {
	s := a.clone()
	for _, v := range b.vars {
		s.add(v, b.certain[v])
	}
	return s
}

// unionScope is the scope of the union of a and b.
func unionScope(a, b scope) scope {
	s := newScope()
	for _, v := range a.vars {
		s.add(v, a.certain[v] && b.certain[v])
	}
	for _, v := range b.vars {
		s.add(v, false)
	}
	return s
}

// scopeOf computes the scope of an algebra pattern.
func scopeOf(p sparql.Pattern) scope {
	s := newScope()
	switch p := p.(type) {
	case *sparql.BGP:
		for _, tp := range p.Triples {
			for _, x := range []sparql.TermOrVar{tp.S, tp.P, tp.O} {
				if x.IsVar() {
					s.add(x.Var, true)
				}
			}
		}
	case *sparql.PathPattern:
		for _, x := range []sparql.TermOrVar{p.S, p.O} {
			if x.IsVar() {
				s.add(x.Var, true)
			}
		}
	case *sparql.Join:
		return joinScope(scopeOf(p.Left), scopeOf(p.Right))
	case *sparql.LeftJoin:
		l := scopeOf(p.Left)
		for _, v := range scopeOf(p.Right).vars {
			l.add(v, false)
		}
		return l
	case *sparql.Union:
		return unionScope(scopeOf(p.Left), scopeOf(p.Right))
	case *sparql.Minus:
		return scopeOf(p.Left)
	case *sparql.Filter:
		return scopeOf(p.Input)
	case *sparql.Extend:
		in := scopeOf(p.Input)
		in.add(p.Var, false)
		return in
	case *sparql.Group:
		in := scopeOf(p.Input)
		for _, k := range p.Keys {
			if v, ok := k.(*sparql.VarExpr); ok {
				s.add(v.Var, in.certain[v.Var])
			}
		}
		for _, a := range p.Aggregates {
			s.add(a.Var, false)
		}
	case *sparql.Values:
		for i, v := range p.Vars {
			certain := true
			for _, row := range p.Rows {
				if row[i].IsZero() {
					certain = false
				}
			}
			s.add(v, certain)
		}
	case *sparql.Graph:
		s = scopeOf(p.Input)
		if p.Name.IsVar() {
			s.add(p.Name.Var, true)
		}
	case *sparql.Service:
		s = scopeOf(p.Input)
	case *sparql.OrderBy:
		return scopeOf(p.Input)
	case *sparql.Distinct:
		return scopeOf(p.Input)
	case *sparql.Reduced:
		return scopeOf(p.Input)
	case *sparql.Slice:
		return scopeOf(p.Input)
	case *sparql.Project:
		in := scopeOf(p.Input)
		for _, v := range p.Vars {
			s.add(v, in.certain[v])
		}
	}
	return s
}

// exprVars returns every variable an expression mentions, also inside the
// patterns of its EXISTS.
func exprVars(es ...sparql.Expr) map[sparql.Var]bool {
	out := map[sparql.Var]bool{}
	var visit func(e sparql.Expr)
	visit = func(e sparql.Expr) {
		sparql.WalkExpr(e, func(e sparql.Expr) bool {
			switch x := e.(type) {
			case *sparql.VarExpr:
				out[x.Var] = true
			case *sparql.ExistsExpr:
				for _, v := range patternVars(x.Pattern) {
					out[v] = true
				}
			}
			return true
		})
	}
	for _, e := range es {
		if e != nil {
			visit(e)
		}
	}
	return out
}

// patternVars returns every variable mentioned anywhere in p (also those a
// sub-select projects away and those of its expressions).
func patternVars(p sparql.Pattern) []sparql.Var {
	seen := map[sparql.Var]bool{}
	var out []sparql.Var
	add := func(v sparql.Var) {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	exprs := func(es ...sparql.Expr) {
		for v := range exprVars(es...) {
			add(v)
		}
	}
	sparql.Walk(p, func(p sparql.Pattern) bool {
		switch p := p.(type) {
		case *sparql.BGP:
			for _, tp := range p.Triples {
				add(tp.S.Var)
				add(tp.P.Var)
				add(tp.O.Var)
			}
		case *sparql.PathPattern:
			add(p.S.Var)
			add(p.O.Var)
		case *sparql.Graph:
			add(p.Name.Var)
		case *sparql.Extend:
			add(p.Var)
		case *sparql.Values:
			for _, v := range p.Vars {
				add(v)
			}
		case *sparql.Group:
			for _, a := range p.Aggregates {
				add(a.Var)
				if a.Agg.Arg != nil {
					exprs(a.Agg.Arg)
				}
			}
		case *sparql.Project:
			for _, v := range p.Vars {
				add(v)
			}
		case *sparql.Filter:
			exprs(p.Exprs...)
		case *sparql.LeftJoin:
			if p.Expr != nil {
				exprs(p.Expr)
			}
		}
		return true
	})
	return out
}

// seed is rows a pattern is lowered from: node computes them, sc is their
// scope. subst is set for the rows an EXISTS tests: their bindings are
// substituted into the pattern (§18.6), so they reach its FILTERs too.
type seed struct {
	node  Node
	sc    scope
	subst bool
}

// joinCand is a BGP lowered from a seed: both ways of running it are
// planned, and chooseJoins keeps the cheaper.
type joinCand struct {
	join *Join
	bind *bgpWork // the exploration seeded with the left rows
	hash *bgpWork // the exploration on its own
}

func lowerQuery(st *state) error {
	q := st.query
	if q == nil {
		return fmt.Errorf("%w: no query", ErrUnsupported)
	}
	// FROM / FROM NAMED choose the graphs the plan runs on (exec sets up
	// the query's dataset); they do not change the plan.
	st.exists = map[sparql.Pattern]*ExistsPlan{}
	st.cands = map[*Join]*joinCand{}
	st.slotRows = map[int]Node{}
	if q.Pattern == nil {
		if q.Form != sparql.FormDescribe {
			return fmt.Errorf("%w: a %s query without a pattern", ErrUnsupported, q.Form)
		}
	} else {
		root, _, err := st.lower(q.Pattern, nil)
		if err != nil {
			return err
		}
		if q.Form == sparql.FormAsk {
			// One solution answers ASK.
			root = &Slice{Input: root, Limit: 1}
		}
		st.root = root
	}
	switch q.Form {
	case sparql.FormSelect, sparql.FormAsk:
	case sparql.FormConstruct:
		st.template = q.Template
	case sparql.FormDescribe:
		st.lowerDescribe(q.Describe)
	default:
		return fmt.Errorf("%w: %s queries (line %d)", ErrUnsupported, q.Form, q.Line)
	}
	return nil
}

// lowerDescribe plans DESCRIBE: a seeded exploration "?r ?p ?o" from the
// resources to describe.
func (st *state) lowerDescribe(targets []sparql.TermOrVar) {
	r, p, o := sparql.Var(".describe"), sparql.Var(".describe.p"), sparql.Var(".describe.o")
	slot := st.newSlot()
	ref := &SeedRef{Slot: slot, Vars: []sparql.Var{r}}
	w := &bgpWork{node: &Explore{Seed: ref, SeedVars: []sparql.Var{r}}, seed: ref, seedVars: []sparql.Var{r},
		patterns: []sparql.TriplePattern{{S: sparql.NewVarRef(r), P: sparql.NewVarRef(p), O: sparql.NewVarRef(o)}}}
	st.bgps = append(st.bgps, w)
	st.describe = &DescribePlan{Targets: targets, Slot: slot, Explore: w.node}
}

func (st *state) newSlot() int {
	st.slots++
	return st.slots
}

func (st *state) newRowVar() sparql.Var {
	st.rowVars++
	return sparql.Var(fmt.Sprintf(".row%d", st.rowVars))
}

// hashWith joins node (of scope sc) with the seed's rows by hashing.
func hashWith(sd *seed, node Node, why string) Node {
	return &Join{Left: sd.node, Right: node, Algo: HashJoin, Why: why}
}

// lower lowers p, joined with the seed's rows when sd is not nil, and
// returns the node and its scope.
func (st *state) lower(p sparql.Pattern, sd *seed) (Node, scope, error) {
	own := scopeOf(p)
	sc := own
	if sd != nil {
		sc = joinScope(sd.sc, own)
	}
	n, err := st.lowerNode(p, sd, own)
	return n, sc, err
}

func (st *state) lowerNode(p sparql.Pattern, sd *seed, own scope) (Node, error) {
	// independent lowers p on its own; with a seed, it is hash-joined.
	independent := func(why string) (Node, error) {
		n, err := st.lowerAlone(p)
		if err != nil || sd == nil {
			return n, err
		}
		return hashWith(sd, n, why), nil
	}
	switch p := p.(type) {
	case *sparql.BGP, *sparql.Join:
		if tps, ok := flattenBGP(p); ok {
			return st.lowerBGP(tps, sd)
		}
		j := p.(*sparql.Join)
		if v, ok := j.Right.(*sparql.Values); ok && sd == nil {
			if _, bgp := flattenBGP(j.Left); bgp {
				// A BGP joined with an inline table (the trailing VALUES of
				// a query): the table first, so that the exploration can
				// start from its rows (the join commutes).
				j = &sparql.Join{Pos: j.Pos, Left: v, Right: j.Left}
			}
		}
		left, lsc, err := st.lower(j.Left, sd)
		if err != nil {
			return nil, err
		}
		right, _, err := st.lower(j.Right, &seed{node: left, sc: lsc, subst: sd != nil && sd.subst})
		return right, err
	case *sparql.Union:
		var body func(s *seed) (Node, error)
		body = func(s *seed) (Node, error) {
			l, _, err := st.lower(p.Left, s)
			if err != nil {
				return nil, err
			}
			r, _, err := st.lower(p.Right, s)
			if err != nil {
				return nil, err
			}
			return &Union{Left: l, Right: r}, nil
		}
		if sd == nil {
			return body(nil)
		}
		if _, ok := sd.node.(*SeedRef); ok {
			return body(sd)
		}
		slot := st.newSlot()
		st.slotRows[slot] = sd.node
		ref := &SeedRef{Slot: slot, Vars: sd.sc.vars}
		b, err := body(&seed{node: ref, sc: sd.sc, subst: sd.subst})
		if err != nil {
			return nil, err
		}
		return &Let{Slot: slot, Value: sd.node, Body: b}, nil
	case *sparql.LeftJoin:
		if sd != nil && !sd.subst {
			// (S ⋈ A) ⟕ B is S ⋈ (A ⟕ B) only if every variable of B or of
			// the condition that the seed S may bind is bound by A in every
			// row (so B meets it with A's value either way). A pattern that
			// is not well designed — ?n bound outside and inside a nested
			// OPTIONAL but not by its left side — runs on its own.
			if v, ok := seedReaches(sd, scopeOf(p.Left), scopeOf(p.Right).vars, exprVars(p.Expr)); ok {
				return independent(fmt.Sprintf("the OPTIONAL reads ?%s, which the outer rows bind and its left side may not", v))
			}
		}
		left, lsc, err := st.lower(p.Left, sd)
		if err != nil {
			return nil, err
		}
		slot, rv := st.newSlot(), st.newRowVar()
		st.slotRows[slot] = left
		rsc := lsc.clone()
		rsc.add(rv, true)
		ref := &SeedRef{Slot: slot, Vars: rsc.vars}
		right, outSc, err := st.lower(p.Right, &seed{node: ref, sc: rsc})
		if err != nil {
			return nil, err
		}
		if p.Expr != nil {
			if err := st.planExists(outSc, p.Expr); err != nil {
				return nil, err
			}
		}
		return &LeftJoin{Left: left, Right: right, Slot: slot, RowVar: rv, Expr: p.Expr}, nil
	case *sparql.Minus:
		if sd != nil && !sd.subst {
			// Likewise (S ⋈ A) − B is S ⋈ (A − B) only if B shares with
			// S nothing that A may leave unbound.
			if v, ok := seedReaches(sd, scopeOf(p.Left), scopeOf(p.Right).vars, nil); ok {
				return independent(fmt.Sprintf("MINUS reads ?%s, which the outer rows bind and its left side may not", v))
			}
		}
		left, lsc, err := st.lower(p.Left, sd)
		if err != nil {
			return nil, err
		}
		rown := scopeOf(p.Right)
		shared, certain := 0, true
		for _, v := range rown.vars {
			if lsc.has(v) {
				shared++
				certain = certain && lsc.certain[v] && rown.certain[v]
			}
		}
		if shared > 0 && certain {
			// Every compatible pair shares a bound variable: MINUS is an
			// anti-join, run from the numbered left rows.
			slot, rv := st.newSlot(), st.newRowVar()
			st.slotRows[slot] = left
			rsc := lsc.clone()
			rsc.add(rv, true)
			right, _, err := st.lower(p.Right, &seed{node: &SeedRef{Slot: slot, Vars: rsc.vars}, sc: rsc})
			if err != nil {
				return nil, err
			}
			return &Minus{Left: left, Right: right, Slot: slot, RowVar: rv}, nil
		}
		right, _, err := st.lower(p.Right, nil)
		if err != nil {
			return nil, err
		}
		return &Minus{Left: left, Right: right}, nil
	case *sparql.Filter:
		if sd != nil && !sd.subst {
			in := scopeOf(p.Input)
			for v := range exprVars(p.Exprs...) {
				if sd.sc.has(v) && !in.certain[v] {
					return independent(fmt.Sprintf("FILTER reads ?%s, which the left side binds and the filtered pattern may not", v))
				}
			}
		}
		in, insc, err := st.lower(p.Input, sd)
		if err != nil {
			return nil, err
		}
		if err := st.planExists(insc, p.Exprs...); err != nil {
			return nil, err
		}
		return &Filter{Input: in, Exprs: append([]sparql.Expr(nil), p.Exprs...)}, nil
	case *sparql.Extend:
		// A chain of Extends is one node (the binds of a SELECT share the
		// row's identity).
		var binds []Bind
		var x sparql.Pattern = p
		for {
			e, ok := x.(*sparql.Extend)
			if !ok {
				break
			}
			binds = append([]Bind{{Var: e.Var, Expr: e.Expr}}, binds...)
			x = e.Input
		}
		if sd != nil {
			in := scopeOf(x)
			for _, b := range binds {
				if sd.sc.has(b.Var) {
					return independent(fmt.Sprintf("BIND ?%s: the left side binds it too", b.Var))
				}
				for v := range exprVars(b.Expr) {
					if sd.sc.has(v) && !in.certain[v] && !sd.subst {
						return independent(fmt.Sprintf("BIND reads ?%s, which the left side binds and the pattern may not", v))
					}
				}
				in.add(b.Var, false)
			}
		}
		in, insc, err := st.lower(x, sd)
		if err != nil {
			return nil, err
		}
		for _, b := range binds {
			if err := st.planExists(insc, b.Expr); err != nil {
				return nil, err
			}
			insc.add(b.Var, false)
		}
		return &Extend{Input: in, Binds: binds}, nil
	case *sparql.PathPattern:
		switch {
		case sd == nil:
			return &PathScan{Pattern: p}, nil
		case st.certainShared(sd, own):
			return &PathScan{Pattern: p, Seed: sd.node}, nil
		}
		return independent("a shared variable of the path may be unbound on the left")
	case *sparql.Graph:
		if sd == nil || st.certainShared(sd, own) {
			in, _, err := st.lower(p.Input, nil)
			if err != nil {
				return nil, err
			}
			g := &GraphScan{Graph: p, Input: in}
			if sd != nil {
				g.Seed = sd.node
			}
			return g, nil
		}
		return independent("a shared variable of GRAPH may be unbound on the left")
	case *sparql.Service:
		pos := p.Position()
		return nil, fmt.Errorf("%w: SERVICE (line %d, column %d)", ErrUnsupported, pos.Line, pos.Col)
	}
	return independent("a sub-query, group, VALUES or solution modifier runs on its own")
}

// seedReaches returns a variable of vars or exprVars that the seed may bind
// and the left side (of scope left) may leave unbound: with such a
// variable, pushing the seed's rows through the left side into the right
// side changes what the right side sees.
func seedReaches(sd *seed, left scope, vars []sparql.Var, exprVars map[sparql.Var]bool) (sparql.Var, bool) {
	for _, v := range vars {
		if sd.sc.has(v) && !left.certain[v] {
			return v, true
		}
	}
	for v := range exprVars {
		if sd.sc.has(v) && !left.certain[v] {
			return v, true
		}
	}
	return "", false
}

// certainShared reports whether every variable of own that the seed may
// bind is bound in every seed row.
func (st *state) certainShared(sd *seed, own scope) bool {
	for _, v := range own.vars {
		if sd.sc.has(v) && !sd.sc.certain[v] {
			return false
		}
	}
	return true
}

// lowerAlone lowers the patterns that run on their own: sub-queries and
// their modifiers, groups, VALUES (and, through lower, anything else).
func (st *state) lowerAlone(p sparql.Pattern) (Node, error) {
	switch p := p.(type) {
	case *sparql.Slice:
		in, _, err := st.lower(p.Input, nil)
		if err != nil {
			return nil, err
		}
		return &Slice{Input: in, Offset: p.Offset, Limit: p.Limit}, nil
	case *sparql.Distinct:
		in, _, err := st.lower(p.Input, nil)
		if err != nil {
			return nil, err
		}
		return &Distinct{Input: in}, nil
	case *sparql.Reduced:
		// REDUCED permits removing duplicates: remove them all.
		in, _, err := st.lower(p.Input, nil)
		if err != nil {
			return nil, err
		}
		return &Distinct{Input: in}, nil
	case *sparql.Project:
		in, _, err := st.lower(p.Input, nil)
		if err != nil {
			return nil, err
		}
		return &Project{Input: in, Vars: append([]sparql.Var(nil), p.Vars...)}, nil
	case *sparql.OrderBy:
		in, insc, err := st.lower(p.Input, nil)
		if err != nil {
			return nil, err
		}
		ob := &OrderBy{Input: in}
		for _, c := range p.Conds {
			if v, ok := c.Expr.(*sparql.VarExpr); ok {
				ob.Keys = append(ob.Keys, OrderKey{Var: v.Var, Desc: c.Desc})
				continue
			}
			if err := st.planExists(insc, c.Expr); err != nil {
				return nil, err
			}
			ob.Keys = append(ob.Keys, OrderKey{Expr: c.Expr, Desc: c.Desc})
		}
		return ob, nil
	case *sparql.Group:
		in, insc, err := st.lower(p.Input, nil)
		if err != nil {
			return nil, err
		}
		exprs := append([]sparql.Expr(nil), p.Keys...)
		for _, a := range p.Aggregates {
			if a.Agg.Arg != nil {
				exprs = append(exprs, a.Agg.Arg)
			}
		}
		if err := st.planExists(insc, exprs...); err != nil {
			return nil, err
		}
		return &Group{Input: in, Keys: append([]sparql.Expr(nil), p.Keys...),
			Aggs: append([]sparql.AggregateBinding(nil), p.Aggregates...)}, nil
	case *sparql.Values:
		return &Values{Vars: append([]sparql.Var(nil), p.Vars...), Rows: p.Rows}, nil
	}
	switch p.(type) {
	case *sparql.BGP, *sparql.Join, *sparql.LeftJoin, *sparql.Union, *sparql.Minus, *sparql.Filter,
		*sparql.Extend, *sparql.PathPattern, *sparql.Graph, *sparql.Service:
		n, _, err := st.lower(p, nil)
		return n, err
	}
	return nil, fmt.Errorf("%w: pattern %T", ErrUnsupported, p)
}

// lowerBGP makes the exploration of a BGP; from a seed, a join candidate.
func (st *state) lowerBGP(tps []sparql.TriplePattern, sd *seed) (Node, error) {
	if sd == nil {
		w := &bgpWork{node: &Explore{}, patterns: tps}
		st.bgps = append(st.bgps, w)
		return w.node, nil
	}
	if len(tps) == 0 {
		return sd.node, nil // the empty BGP is the identity of Join
	}
	var shared []sparql.Var
	certain := true
	for _, v := range scopeOf(&sparql.BGP{Triples: tps}).vars {
		if sd.sc.has(v) {
			shared = append(shared, v)
			if !sd.sc.certain[v] {
				certain = false
			}
		}
	}
	free := &bgpWork{node: &Explore{}, patterns: tps}
	if !certain {
		st.bgps = append(st.bgps, free)
		return &Join{Left: sd.node, Right: free.node, Algo: HashJoin,
			Why: "a shared variable may be unbound on the left"}, nil
	}
	var carried []sparql.Var
	own := scopeOf(&sparql.BGP{Triples: tps})
	for _, v := range sd.sc.vars {
		if !own.has(v) {
			carried = append(carried, v)
		}
	}
	bound := &bgpWork{node: &Explore{Seed: sd.node, SeedVars: shared, Carried: carried}, patterns: tps, seed: sd.node, seedVars: shared}
	st.bgps = append(st.bgps, bound, free)
	j := &Join{Left: sd.node}
	st.cands[j] = &joinCand{join: j, bind: bound, hash: free}
	st.candOrder = append(st.candOrder, j)
	return j, nil
}

// planExists plans the pattern of every EXISTS in es (not those nested in
// the patterns: lowering those patterns plans them), seeded with the rows
// the expressions are evaluated on (of scope sc).
func (st *state) planExists(sc scope, es ...sparql.Expr) error {
	var err error
	for _, e := range es {
		sparql.WalkExpr(e, func(e sparql.Expr) bool {
			x, ok := e.(*sparql.ExistsExpr)
			if !ok || err != nil {
				return err == nil
			}
			if _, done := st.exists[x.Pattern]; done {
				return true
			}
			slot, rv := st.newSlot(), st.newRowVar()
			rsc := sc.clone()
			rsc.add(rv, true)
			ref := &SeedRef{Slot: slot, Vars: rsc.vars}
			st.slotRows[slot] = nil
			var n Node
			n, _, err = st.lower(x.Pattern, &seed{node: ref, sc: rsc, subst: true})
			st.exists[x.Pattern] = &ExistsPlan{Slot: slot, RowVar: rv, Node: n}
			return true
		})
	}
	return err
}

// flattenBGP merges a join tree of BGPs into one list of triple patterns
// (the join of BGPs is the BGP of all their patterns); false when the tree
// holds anything else.
func flattenBGP(p sparql.Pattern) ([]sparql.TriplePattern, bool) {
	switch p := p.(type) {
	case *sparql.BGP:
		return p.Triples, true
	case *sparql.Join:
		l, ok := flattenBGP(p.Left)
		if !ok {
			return nil, false
		}
		r, ok := flattenBGP(p.Right)
		if !ok {
			return nil, false
		}
		return append(append([]sparql.TriplePattern(nil), l...), r...), true
	}
	return nil, false
}

// estimate is the planner's estimate of the rows of n (after orderPatterns
// has estimated the explorations below it).
func (st *state) estimate(n Node) float64 {
	switch n := n.(type) {
	case nil:
		return 1
	case *Explore:
		return n.EstRows
	case *Join:
		if c := st.cands[n]; c != nil {
			return c.bind.node.EstRows
		}
		if n.EstRows > 0 {
			return n.EstRows
		}
		return max(st.estimate(n.Left), st.estimate(n.Right))
	case *LeftJoin:
		return max(st.estimate(n.Left), st.estimate(n.Right))
	case *Union:
		return st.estimate(n.Left) + st.estimate(n.Right)
	case *Minus:
		return st.estimate(n.Left)
	case *Filter:
		return st.estimate(n.Input)
	case *Extend:
		return st.estimate(n.Input)
	case *Group:
		if len(n.Keys) == 0 {
			return 1
		}
		return st.estimate(n.Input)
	case *Values:
		return float64(len(n.Rows))
	case *SeedRef:
		if v := st.slotRows[n.Slot]; v != nil {
			return st.estimate(v)
		}
		return 1
	case *Let:
		return st.estimate(n.Body)
	case *Project:
		return st.estimate(n.Input)
	case *Distinct:
		return st.estimate(n.Input)
	case *OrderBy:
		return st.estimate(n.Input)
	case *Slice:
		r := st.estimate(n.Input)
		if n.Limit >= 0 {
			r = min(r, float64(n.Limit))
		}
		return r
	case *PathScan:
		if n.Seed != nil {
			return st.estimate(n.Seed)
		}
		return 100
	case *GraphScan:
		return st.estimate(n.Input)
	}
	return 1
}
