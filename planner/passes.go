package planner

import (
	"fmt"
	"slices"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// ---------------------------------------------------------------------------
// foldConstants: subexpressions without variables are evaluated once.

// nonDeterministic are the built-ins whose value is not fixed at planning
// time (a fresh value per call, or per query run).
var nonDeterministic = map[string]bool{
	"RAND": true, "NOW": true, "UUID": true, "STRUUID": true, "BNODE": true,
	"IRI": true, // resolves against the query's base, which folding does not have
}

func foldConstants(st *state) error {
	if st.opts.ConstEval == nil {
		return nil
	}
	f := &folder{eval: st.opts.ConstEval}
	walkNodes(st.root, func(n Node) {
		switch n := n.(type) {
		case *Filter:
			kept := n.Exprs[:0:0]
			for _, e := range n.Exprs {
				e = f.fold(e)
				if t, ok := e.(*sparql.TermExpr); ok && t.Term == rdf.NewLiteral("true", rdf.XSD+"boolean") {
					continue // always true
				}
				kept = append(kept, e)
			}
			n.Exprs = kept
		case *Extend:
			for i := range n.Binds {
				n.Binds[i].Expr = f.fold(n.Binds[i].Expr)
			}
		case *LeftJoin:
			if n.Expr != nil {
				n.Expr = f.fold(n.Expr)
			}
		case *OrderBy:
			for i := range n.Keys {
				if n.Keys[i].Expr != nil {
					n.Keys[i].Expr = f.fold(n.Keys[i].Expr)
				}
			}
		case *Group:
			for i := range n.Keys {
				n.Keys[i] = f.fold(n.Keys[i])
			}
		}
	})
	return nil
}

type folder struct {
	eval func(sparql.Expr) (rdf.Term, error)
}

// fold returns e with its constant subexpressions replaced by their values
// (a new expression: the algebra is shared and never modified). A
// constant subexpression that raises an error stays as written.
func (f *folder) fold(e sparql.Expr) sparql.Expr {
	constant := func(args ...sparql.Expr) bool {
		for _, a := range args {
			if _, ok := a.(*sparql.TermExpr); !ok {
				return false
			}
		}
		return true
	}
	try := func(orig, e sparql.Expr, args ...sparql.Expr) sparql.Expr {
		if !constant(args...) {
			return e
		}
		t, err := f.eval(e)
		if err != nil || t.IsZero() {
			return e
		}
		return &sparql.TermExpr{Pos: orig.Position(), Term: t}
	}
	switch x := e.(type) {
	case *sparql.UnaryExpr:
		c := *x
		c.X = f.fold(x.X)
		return try(x, &c, c.X)
	case *sparql.BinaryExpr:
		c := *x
		c.L, c.R = f.fold(x.L), f.fold(x.R)
		return try(x, &c, c.L, c.R)
	case *sparql.InExpr:
		c := *x
		c.X = f.fold(x.X)
		c.List = make([]sparql.Expr, len(x.List))
		for i, a := range x.List {
			c.List[i] = f.fold(a)
		}
		return try(x, &c, append([]sparql.Expr{c.X}, c.List...)...)
	case *sparql.CallExpr:
		c := *x
		c.Args = make([]sparql.Expr, len(x.Args))
		for i, a := range x.Args {
			c.Args[i] = f.fold(a)
		}
		if nonDeterministic[x.Name] || x.Name == "BOUND" {
			return &c
		}
		return try(x, &c, c.Args...)
	case *sparql.FuncExpr:
		c := *x
		c.Args = make([]sparql.Expr, len(x.Args))
		for i, a := range x.Args {
			c.Args[i] = f.fold(a)
		}
		return try(x, &c, c.Args...)
	}
	return e // variables, terms, EXISTS (kept: its plan is keyed by its pattern)
}

// walkNodes calls fn for every node of the tree under n (and the trees of
// the EXISTS plans are walked by their own calls).
func walkNodes(n Node, fn func(Node)) {
	seen := map[Node]bool{}
	var walk func(n Node)
	walk = func(n Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		fn(n)
		if j, ok := n.(*Join); ok {
			walk(j.Left) // Children leaves out a bind join's Left
			walk(j.Right)
			return
		}
		for _, c := range Children(n) {
			walk(c)
		}
	}
	walk(n)
}

// allRoots returns the roots of the trees the planner built: the query's
// and the EXISTS patterns'.
func (st *state) allRoots() []Node {
	roots := []Node{st.root}
	for _, e := range st.exists {
		roots = append(roots, e.Node)
	}
	return roots
}

// ---------------------------------------------------------------------------
// chooseJoins: bind join or hash join for every BGP lowered from a seed.
//
// A bind join runs the BGP's exploration from the left rows (the shared
// variables bound): its cost is the seeded exploration's estimate. A hash
// join runs the exploration on its own and joins: the unseeded
// exploration's cost plus a pass over both sides' rows.

func chooseJoins(st *state) error {
	for _, j := range st.candOrder {
		c := st.cands[j]
		bind := c.bind.node.EstCost
		if c.bind.node.Empty {
			bind = 0
		}
		left := max(1, c.bind.seedRows)
		hash := c.hash.node.EstCost + left + c.hash.node.EstRows
		if c.bind.node.Empty || bind <= hash {
			j.Algo, j.Right = BindJoin, c.bind.node
		} else {
			j.Algo, j.Right = HashJoin, c.hash.node
		}
		j.Why = fmt.Sprintf("est cost bind %s, hash %s", fnum(bind), fnum(hash))
		j.EstRows = c.bind.node.EstRows
	}
	// The explorations that lost take no further part.
	kept := st.bgps[:0]
	for _, w := range st.bgps {
		if w.lost(st) {
			continue
		}
		kept = append(kept, w)
	}
	st.bgps = kept
	st.cands = nil
	return nil
}

func (w *bgpWork) lost(st *state) bool {
	for _, j := range st.candOrder {
		c := st.cands[j]
		if (c.bind == w && j.Algo != BindJoin) || (c.hash == w && j.Algo != HashJoin) {
			return true
		}
	}
	return false
}

func fnum(x float64) string {
	if x >= 1e6 {
		return fmt.Sprintf("%.3g", x)
	}
	return fmt.Sprintf("%.0f", x)
}

// ---------------------------------------------------------------------------
// pushFilters: a FILTER over an exploration runs inside it, right after
// the step that binds the last variable it reads, so rows are dropped
// before they are expanded (and shipped). A filter that reads a variable
// the exploration does not bind, or that holds an EXISTS (whose pattern
// runs as a query of its own, not on a worker), stays a Filter node.

func pushFilters(st *state) error {
	for _, root := range st.allRoots() {
		walkNodes(root, func(n Node) {
			switch n := n.(type) {
			case *Filter:
				var es []sparql.Expr
				for _, e := range n.Exprs {
					es = append(es, conjuncts(e)...)
				}
				if kept, pushed := pushInto(filterTarget(n.Input), es); pushed {
					n.Exprs = kept
				}
			case *LeftJoin:
				// The OPTIONAL's filter drops right rows before the left
				// rows without a match are found: it may run inside the
				// right side's exploration.
				if n.Expr == nil {
					return
				}
				if kept, pushed := pushInto(filterTarget(n.Right), conjuncts(n.Expr)); pushed {
					n.Expr = conjunction(kept)
				}
			}
		})
	}
	return nil
}

// pushInto moves the expressions that can run inside ex there and returns
// the others; pushed is false when none moved.
func pushInto(ex *Explore, es []sparql.Expr) (kept []sparql.Expr, pushed bool) {
	if ex == nil || ex.Empty {
		return es, false
	}
	for _, e := range es {
		if after, ok := pushPoint(ex, e); ok {
			ex.Filters = append(ex.Filters, StepFilter{After: after, Expr: e})
			pushed = true
			continue
		}
		kept = append(kept, e)
	}
	return kept, pushed
}

// filterTarget returns the exploration whose every row is (or becomes,
// unchanged in the variables the exploration binds) a row of n: n itself,
// the exploration of a bind join, or the left side of an OPTIONAL (each
// output row extends a left row). nil when there is none.
func filterTarget(n Node) *Explore {
	switch n := n.(type) {
	case *Explore:
		return n
	case *Join:
		if n.Algo == BindJoin {
			return filterTarget(n.Right)
		}
	case *LeftJoin:
		return filterTarget(n.Left)
	}
	return nil
}

// pushPoint returns the step after which e can run in ex (-1: on the seed
// rows), false when it cannot run inside ex.
func pushPoint(ex *Explore, e sparql.Expr) (int, bool) {
	hasExists := false
	sparql.WalkExpr(e, func(e sparql.Expr) bool {
		if _, ok := e.(*sparql.ExistsExpr); ok {
			hasExists = true
		}
		return !hasExists
	})
	if hasExists {
		return 0, false
	}
	after := -1
	for v := range exprVars(e) {
		col := -1
		for c, x := range ex.Vars {
			if x == v {
				col = c
			}
		}
		if col < 0 {
			if slices.Contains(ex.Carried, v) {
				continue // a seed column: there from the start
			}
			return 0, false
		}
		seeded := false
		for _, s := range ex.SeedVars {
			if s == v {
				seeded = true
			}
		}
		if seeded {
			continue
		}
		k := bindingStep(ex, col)
		if k < 0 {
			return 0, false
		}
		after = max(after, k)
	}
	if len(ex.Steps) == 0 {
		return 0, false
	}
	return after, true
}

// conjuncts splits e at its top-level && (a filter keeps a row when every
// conjunct is true: an error in one makes the row go either way).
func conjuncts(e sparql.Expr) []sparql.Expr {
	if b, ok := e.(*sparql.BinaryExpr); ok && b.Op == "&&" {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []sparql.Expr{e}
}

// conjunction joins es with && (nil for none).
func conjunction(es []sparql.Expr) sparql.Expr {
	if len(es) == 0 {
		return nil
	}
	e := es[0]
	for _, x := range es[1:] {
		e = &sparql.BinaryExpr{Pos: e.Position(), Op: "&&", L: e, R: x}
	}
	return e
}

// bindingStep returns the step that binds column col, or -1.
func bindingStep(ex *Explore, col int) int {
	for k, s := range ex.Steps {
		if (s.ToNew && s.To.Kind == OpVar && s.To.Col == col) || (s.PredNew && s.Pred.Kind == OpVar && s.Pred.Col == col) {
			return k
		}
	}
	return -1
}
