package sparql

// Walk calls fn for pat and then, in pre-order, for every pattern nested in
// it, including the patterns of EXISTS / NOT EXISTS in expressions (of
// filters, OPTIONAL conditions, BIND, GROUP BY keys and aggregates, ORDER
// BY). When fn returns false the children of that pattern are skipped.
func Walk(pat Pattern, fn func(Pattern) bool) {
	w := walker{pattern: func(p Pattern, _ int) bool { return fn(p) }}
	w.walkPattern(pat, 1)
}

// WalkExpr calls fn for e and then, in pre-order, for its operands (not
// descending into EXISTS patterns; use Walk for those). When fn returns
// false the operands of that expression are skipped.
func WalkExpr(e Expr, fn func(Expr) bool) {
	w := walker{expr: func(e Expr, _ int) bool { return fn(e) }}
	w.walkExpr(e, 1)
}

// walker is one pre-order walk over an algebra tree that passes each node
// its depth (the root's is 1; a node's children, expressions and path are
// one deeper). A callback that returns false skips the node's children.
// With pattern nil no pattern is visited, not even those of EXISTS (the
// walk stays in the expression); with expr nil expressions are still
// walked for their EXISTS patterns; with path nil paths are not walked.
//
// The walk recurses once per level and its callbacks run before the
// level's children, so a callback that stops at a depth (checkDepth)
// bounds the walk's own recursion by that depth.
type walker struct {
	pattern func(p Pattern, depth int) bool
	expr    func(e Expr, depth int) bool
	path    func(p Path, at Pos, depth int) bool
}

func (w *walker) walkPattern(pat Pattern, d int) {
	if pat == nil || (w.pattern != nil && !w.pattern(pat, d)) {
		return
	}
	d++
	switch x := pat.(type) {
	case *Join:
		w.walkPattern(x.Left, d)
		w.walkPattern(x.Right, d)
	case *LeftJoin:
		w.walkPattern(x.Left, d)
		w.walkPattern(x.Right, d)
		w.walkExpr(x.Expr, d)
	case *Union:
		w.walkPattern(x.Left, d)
		w.walkPattern(x.Right, d)
	case *Minus:
		w.walkPattern(x.Left, d)
		w.walkPattern(x.Right, d)
	case *Filter:
		for _, e := range x.Exprs {
			w.walkExpr(e, d)
		}
		w.walkPattern(x.Input, d)
	case *Graph:
		w.walkPattern(x.Input, d)
	case *Service:
		w.walkPattern(x.Input, d)
	case *Extend:
		w.walkExpr(x.Expr, d)
		w.walkPattern(x.Input, d)
	case *Group:
		for _, e := range x.Keys {
			w.walkExpr(e, d)
		}
		for _, a := range x.Aggregates {
			w.walkExpr(a.Agg, d)
		}
		w.walkPattern(x.Input, d)
	case *OrderBy:
		for _, c := range x.Conds {
			w.walkExpr(c.Expr, d)
		}
		w.walkPattern(x.Input, d)
	case *Project:
		w.walkPattern(x.Input, d)
	case *Distinct:
		w.walkPattern(x.Input, d)
	case *Reduced:
		w.walkPattern(x.Input, d)
	case *Slice:
		w.walkPattern(x.Input, d)
	case *PathPattern:
		if w.path != nil {
			w.walkPath(x.Path, x.Pos, d)
		}
	}
}

func (w *walker) walkExpr(e Expr, d int) {
	if e == nil || (w.expr != nil && !w.expr(e, d)) {
		return
	}
	d++
	switch x := e.(type) {
	case *UnaryExpr:
		w.walkExpr(x.X, d)
	case *BinaryExpr:
		w.walkExpr(x.L, d)
		w.walkExpr(x.R, d)
	case *InExpr:
		w.walkExpr(x.X, d)
		for _, a := range x.List {
			w.walkExpr(a, d)
		}
	case *CallExpr:
		for _, a := range x.Args {
			w.walkExpr(a, d)
		}
	case *FuncExpr:
		for _, a := range x.Args {
			w.walkExpr(a, d)
		}
	case *Aggregate:
		w.walkExpr(x.Arg, d)
	case *ExistsExpr:
		if w.pattern != nil {
			w.walkPattern(x.Pattern, d)
		}
	}
}

func (w *walker) walkPath(p Path, at Pos, d int) {
	if p == nil || !w.path(p, at, d) {
		return
	}
	d++
	switch x := p.(type) {
	case *InversePath:
		w.walkPath(x.Path, at, d)
	case *SequencePath:
		w.walkPath(x.Left, at, d)
		w.walkPath(x.Right, at, d)
	case *AlternativePath:
		w.walkPath(x.Left, at, d)
		w.walkPath(x.Right, at, d)
	case *ZeroOrMorePath:
		w.walkPath(x.Path, at, d)
	case *OneOrMorePath:
		w.walkPath(x.Path, at, d)
	case *ZeroOrOnePath:
		w.walkPath(x.Path, at, d)
	}
}
