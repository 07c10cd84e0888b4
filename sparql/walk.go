package sparql

// Walk calls fn for pat and then, in pre-order, for every pattern nested in
// it, including the patterns of EXISTS / NOT EXISTS in expressions. When fn
// returns false the children of that pattern are skipped.
func Walk(pat Pattern, fn func(Pattern) bool) {
	if pat == nil || !fn(pat) {
		return
	}
	walkExprs := func(es ...Expr) {
		for _, e := range es {
			WalkExpr(e, func(e Expr) bool {
				if x, ok := e.(*ExistsExpr); ok {
					Walk(x.Pattern, fn)
				}
				return true
			})
		}
	}
	switch x := pat.(type) {
	case *Join:
		Walk(x.Left, fn)
		Walk(x.Right, fn)
	case *LeftJoin:
		Walk(x.Left, fn)
		Walk(x.Right, fn)
		if x.Expr != nil {
			walkExprs(x.Expr)
		}
	case *Union:
		Walk(x.Left, fn)
		Walk(x.Right, fn)
	case *Minus:
		Walk(x.Left, fn)
		Walk(x.Right, fn)
	case *Filter:
		walkExprs(x.Exprs...)
		Walk(x.Input, fn)
	case *Graph:
		Walk(x.Input, fn)
	case *Service:
		Walk(x.Input, fn)
	case *Extend:
		walkExprs(x.Expr)
		Walk(x.Input, fn)
	case *Group:
		walkExprs(x.Keys...)
		Walk(x.Input, fn)
	case *OrderBy:
		for _, c := range x.Conds {
			walkExprs(c.Expr)
		}
		Walk(x.Input, fn)
	case *Project:
		Walk(x.Input, fn)
	case *Distinct:
		Walk(x.Input, fn)
	case *Reduced:
		Walk(x.Input, fn)
	case *Slice:
		Walk(x.Input, fn)
	}
}

// WalkExpr calls fn for e and then, in pre-order, for its operands (not
// descending into EXISTS patterns; use Walk for those). When fn returns
// false the operands of that expression are skipped.
func WalkExpr(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch x := e.(type) {
	case *UnaryExpr:
		WalkExpr(x.X, fn)
	case *BinaryExpr:
		WalkExpr(x.L, fn)
		WalkExpr(x.R, fn)
	case *InExpr:
		WalkExpr(x.X, fn)
		for _, a := range x.List {
			WalkExpr(a, fn)
		}
	case *CallExpr:
		for _, a := range x.Args {
			WalkExpr(a, fn)
		}
	case *FuncExpr:
		for _, a := range x.Args {
			WalkExpr(a, fn)
		}
	case *Aggregate:
		WalkExpr(x.Arg, fn)
	}
}
