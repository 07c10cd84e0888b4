package planner

import "github.com/wukongd/wukongd/sparql"

// Parameters: a query template (sparql.Shapes) is planned once with an ID
// standing for each parameter, and the plan is bound to each query's
// constants by Bind. The IDs lie above every term ID (graphstore.MaxID),
// so they can never be mistaken for a term; they never reach the
// executor, which sees only bound plans.
//
// The planner's choices do not depend on which IDs the parameters get:
// parameters are subjects and objects of triple patterns, never
// predicates nor classes (the objects of rdf:type), and the cost model
// reads the statistics of predicates and classes only. The start of an
// exploration at a constant is a choice of shape (the constant's owner is
// found at run time). A parameter the dictionary does not know would make
// the exploration empty: that query is planned on its own (exec).

// ParamBase is the ID of parameter 0.
const ParamBase ID = 1 << 62

// ParamID is the ID standing for parameter i while a template is planned.
func ParamID(i int) ID { return ParamBase + ID(i) }

// IsParam reports whether id stands for a parameter, and which.
func IsParam(id ID) (int, bool) {
	if id < ParamBase || id >= ParamBase+1<<16 {
		return 0, false
	}
	return int(id - ParamBase), true
}

// Bind returns p with every parameter ID replaced by ids[i] (a parameter
// ≥ len(ids) is left). The nodes on the way to an exploration that
// changes are copied, the others shared with p (both plans stay
// immutable). n is the number of places bound.
func (p *Plan) Bind(ids []ID) (out *Plan, n int) {
	b := binder{ids: ids}
	c := *p
	c.Root = b.node(p.Root)
	if len(p.Exists) > 0 {
		c.Exists = make(map[sparql.Pattern]*ExistsPlan, len(p.Exists))
		for k, e := range p.Exists {
			if x := b.node(e.Node); x != e.Node {
				ne := *e
				ne.Node = x
				e = &ne
			}
			c.Exists[k] = e
		}
	}
	if p.Describe != nil && p.Describe.Explore != nil {
		if x := b.node(p.Describe.Explore); x != Node(p.Describe.Explore) {
			d := *p.Describe
			d.Explore = x.(*Explore)
			c.Describe = &d
		}
	}
	return &c, b.n
}

type binder struct {
	ids  []ID
	n    int
	memo []bound // nodes seen: a plan is a DAG (a bind join's seed is shared)
}

type bound struct{ from, to Node }

func (b *binder) id(x ID) (ID, bool) {
	if i, ok := IsParam(x); ok && i < len(b.ids) {
		b.n++
		return b.ids[i], true
	}
	return x, false
}

func (b *binder) operand(o *Operand) bool {
	if o.Kind != OpConst {
		return false
	}
	id, ok := b.id(o.ID)
	o.ID = id
	return ok
}

// node returns n bound (n itself when nothing under it changes).
func (b *binder) node(n Node) Node {
	if n == nil {
		return nil
	}
	for _, m := range b.memo {
		if m.from == n {
			return m.to
		}
	}
	out := b.bindNode(n)
	b.memo = append(b.memo, bound{n, out})
	return out
}

func (b *binder) bindNode(n Node) Node {
	switch x := n.(type) {
	case *Explore:
		seed := b.node(x.Seed)
		changed := seed != x.Seed
		var steps []Step
		for k := range x.Steps {
			s := x.Steps[k]
			c := b.operand(&s.From)
			c = b.operand(&s.Pred) || c
			c = b.operand(&s.To) || c
			if id, ok := b.id(s.TypeCheck); ok {
				s.TypeCheck, c = id, true
			}
			if c && steps == nil {
				steps = append(make([]Step, 0, len(x.Steps)), x.Steps[:k]...)
			}
			if steps != nil {
				steps = append(steps, s)
			}
		}
		start, startChanged := b.id(x.StartConst)
		if !changed && steps == nil && !startChanged {
			return x
		}
		c := *x
		c.Seed, c.StartConst = seed, start
		if steps != nil {
			c.Steps = steps
		}
		return &c
	case *Project:
		return rebind(b, x, func(n *Project) [2]*Node { return [2]*Node{&n.Input} })
	case *Distinct:
		return rebind(b, x, func(n *Distinct) [2]*Node { return [2]*Node{&n.Input} })
	case *OrderBy:
		return rebind(b, x, func(n *OrderBy) [2]*Node { return [2]*Node{&n.Input} })
	case *Slice:
		return rebind(b, x, func(n *Slice) [2]*Node { return [2]*Node{&n.Input} })
	case *Filter:
		return rebind(b, x, func(n *Filter) [2]*Node { return [2]*Node{&n.Input} })
	case *Extend:
		return rebind(b, x, func(n *Extend) [2]*Node { return [2]*Node{&n.Input} })
	case *Group:
		return rebind(b, x, func(n *Group) [2]*Node { return [2]*Node{&n.Input} })
	case *PathScan:
		return rebind(b, x, func(n *PathScan) [2]*Node { return [2]*Node{&n.Seed} })
	case *Join:
		return rebind(b, x, func(n *Join) [2]*Node { return [2]*Node{&n.Left, &n.Right} })
	case *LeftJoin:
		return rebind(b, x, func(n *LeftJoin) [2]*Node { return [2]*Node{&n.Left, &n.Right} })
	case *Union:
		return rebind(b, x, func(n *Union) [2]*Node { return [2]*Node{&n.Left, &n.Right} })
	case *Minus:
		return rebind(b, x, func(n *Minus) [2]*Node { return [2]*Node{&n.Left, &n.Right} })
	case *Let:
		return rebind(b, x, func(n *Let) [2]*Node { return [2]*Node{&n.Value, &n.Body} })
	case *GraphScan:
		return rebind(b, x, func(n *GraphScan) [2]*Node { return [2]*Node{&n.Input, &n.Seed} })
	}
	// *Values, *SeedRef: no IDs. A node type not listed keeps its
	// parameters, which the caller's check finds (exec).
	return n
}

// rebind returns x, or when binding changes one of its child nodes (the
// one or two fields children points at; nil entries are not used) a copy
// of x with the bound children: the plan's nodes are shared, only those on
// the way to a changed exploration are copied.
func rebind[T any, P interface {
	*T
	Node
}](b *binder, x P, children func(P) [2]*Node) Node {
	var bound [2]Node
	changed := false
	for i, f := range children(x) {
		if f != nil {
			bound[i] = b.node(*f)
			changed = changed || bound[i] != *f
		}
	}
	if !changed {
		return x
	}
	c := P(new(T))
	*c = *x
	for i, f := range children(c) {
		if f != nil {
			*f = bound[i]
		}
	}
	return c
}
