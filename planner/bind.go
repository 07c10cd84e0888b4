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
		if in := b.node(x.Input); in != x.Input {
			c := *x
			c.Input = in
			return &c
		}
	case *Distinct:
		if in := b.node(x.Input); in != x.Input {
			return &Distinct{Input: in}
		}
	case *OrderBy:
		if in := b.node(x.Input); in != x.Input {
			c := *x
			c.Input = in
			return &c
		}
	case *Slice:
		if in := b.node(x.Input); in != x.Input {
			c := *x
			c.Input = in
			return &c
		}
	case *Join:
		l, r := b.node(x.Left), b.node(x.Right)
		if l != x.Left || r != x.Right {
			c := *x
			c.Left, c.Right = l, r
			return &c
		}
	case *LeftJoin:
		l, r := b.node(x.Left), b.node(x.Right)
		if l != x.Left || r != x.Right {
			c := *x
			c.Left, c.Right = l, r
			return &c
		}
	case *Union:
		l, r := b.node(x.Left), b.node(x.Right)
		if l != x.Left || r != x.Right {
			return &Union{Left: l, Right: r}
		}
	case *Minus:
		l, r := b.node(x.Left), b.node(x.Right)
		if l != x.Left || r != x.Right {
			c := *x
			c.Left, c.Right = l, r
			return &c
		}
	case *Filter:
		if in := b.node(x.Input); in != x.Input {
			c := *x
			c.Input = in
			return &c
		}
	case *Extend:
		if in := b.node(x.Input); in != x.Input {
			c := *x
			c.Input = in
			return &c
		}
	case *Group:
		if in := b.node(x.Input); in != x.Input {
			c := *x
			c.Input = in
			return &c
		}
	case *Let:
		v, body := b.node(x.Value), b.node(x.Body)
		if v != x.Value || body != x.Body {
			c := *x
			c.Value, c.Body = v, body
			return &c
		}
	case *PathScan:
		if s := b.node(x.Seed); s != x.Seed {
			c := *x
			c.Seed = s
			return &c
		}
	case *GraphScan:
		in, s := b.node(x.Input), b.node(x.Seed)
		if in != x.Input || s != x.Seed {
			c := *x
			c.Input, c.Seed = in, s
			return &c
		}
	}
	// *Values, *SeedRef: no IDs. A node type not listed keeps its
	// parameters, which the caller's check finds (exec).
	return n
}
