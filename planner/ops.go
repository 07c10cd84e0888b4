package planner

import (
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// The operators above explorations. Each takes and gives a table of rows
// (ID columns named by variables); exec evaluates the tree bottom-up.
//
// Seeds: an operator may run its right side "seeded" with rows it already
// has (a bind join): the rows are held in a numbered slot, a SeedRef reads
// them, and every node built over a seed keeps the seed's columns in its
// output (so a LeftJoin finds its left row again through RowVar).

// JoinAlgo is how a Join runs.
type JoinAlgo uint8

const (
	// BindJoin: Right is an *Explore seeded with Left's rows (Right.Seed ==
	// Left): the exploration starts from the left rows, with the shared
	// variables bound, and carries every left column along.
	BindJoin JoinAlgo = iota + 1
	// HashJoin: both sides run on their own; the rows are joined on the
	// shared variables (an unbound value is compatible with anything).
	HashJoin
)

func (a JoinAlgo) String() string {
	switch a {
	case BindJoin:
		return "bind join"
	case HashJoin:
		return "hash join"
	}
	return "join(?)"
}

// Join is the join of Left and Right; Algo says how it runs.
type Join struct {
	Left, Right Node
	Algo        JoinAlgo
	// Why is the reason for Algo (the costs compared, or what made a bind
	// join impossible), for EXPLAIN.
	Why     string
	EstRows float64
}

// LeftJoin is OPTIONAL. Left is evaluated, a hidden column RowVar numbers
// its rows, and those rows fill slot Slot; Right is built over
// SeedRef{Slot} (seeded: its rows extend left rows and keep RowVar). A
// right row is kept when Expr (nil: true) holds on it; a left row no right
// row extends is kept as is.
type LeftJoin struct {
	Left   Node
	Right  Node
	Slot   int
	RowVar sparql.Var
	Expr   sparql.Expr
}

// Union is the bag union of Left and Right (columns matched by variable).
type Union struct{ Left, Right Node }

// Minus removes from Left the rows that are compatible with a row of Right
// and share a bound variable with it (SPARQL's MINUS: with no shared
// variable nothing is removed). When RowVar is set (an anti bind join: the
// variables shared are bound in every row of both sides), Left's rows are
// numbered in RowVar and fill slot Slot, Right is built over them
// (seeded), and a left row goes when a right row carries its number;
// otherwise both sides run on their own and are compared by hashing.
type Minus struct {
	Left, Right Node
	Slot        int
	RowVar      sparql.Var
}

// Filter keeps the rows of Input on which every expression is true (an
// error counts as false). Filters the planner could push into an
// exploration are in Explore.Filters instead.
type Filter struct {
	Input Node
	Exprs []sparql.Expr
}

// Bind is one computed column of an Extend.
type Bind struct {
	Var  sparql.Var
	Expr sparql.Expr
}

// Extend adds a column per Bind, in order (a later expression sees the
// earlier columns); an evaluation error leaves the value unbound. The
// binds of one Extend share the row's identity (BNODE(str)).
type Extend struct {
	Input Node
	Binds []Bind
}

// Group groups the rows of Input by the values of Keys (none: one group,
// also over no rows) and computes the aggregates per group. The output
// has a column per variable key and per aggregate.
type Group struct {
	Input Node
	Keys  []sparql.Expr
	Aggs  []sparql.AggregateBinding
}

// Values is an inline table; the zero term is UNDEF. Its terms get IDs at
// run time (the dictionary's, else query-local ones).
type Values struct {
	Vars []sparql.Var
	Rows [][]rdf.Term
}

// SeedRef reads the rows held in a slot (the left rows of a LeftJoin, the
// rows an EXISTS tests, the shared input of a UNION's branches).
type SeedRef struct {
	Slot int
	Vars []sparql.Var // the variables the planner knows the rows to have
}

// Let evaluates Value into slot Slot, then Body (which reads it through
// SeedRefs, possibly more than once).
type Let struct {
	Slot  int
	Value Node
	Body  Node
}

// PathScan is a property path pattern (sparql.PathPattern). With a Seed it
// is evaluated from the seed's rows, whose variables shared with the path
// are bound in every row; its output keeps the seed's columns.
type PathScan struct {
	Pattern *sparql.PathPattern
	Seed    Node
}

// GraphScan is GRAPH Name { Input }: Input evaluated in the named graph(s)
// (Input is planned on its own). With a Seed it is evaluated from the
// seed's rows, like PathScan.
type GraphScan struct {
	Graph *sparql.Graph
	Input Node
	Seed  Node
}

// StepFilter is a FILTER expression pushed into an exploration: it runs on
// the rows after step After (-1: on the seed rows before the first step),
// the first point at which every variable it reads is bound.
type StepFilter struct {
	After int
	Expr  sparql.Expr
}

// ExistsPlan is the plan of the pattern of an EXISTS / NOT EXISTS: the rows
// being tested fill Slot, with a hidden column RowVar numbering them; Node
// is the pattern seeded with them (substituting the rows' bindings), so a
// row passes when some output row carries its number.
type ExistsPlan struct {
	Slot   int
	RowVar sparql.Var
	Node   Node
}

// DescribePlan is how DESCRIBE finds its triples: the resources (Targets:
// constants and variables of the solutions of Plan.Root) fill Slot, column
// Explore.Vars[0]; Explore binds each one's predicates and objects
// (Vars[1], Vars[2]). Blank-node objects are described in turn (the
// concise bounded description without reification).
type DescribePlan struct {
	Targets []sparql.TermOrVar
	Slot    int
	Explore *Explore
}

func (*Join) planNode()      {}
func (*LeftJoin) planNode()  {}
func (*Union) planNode()     {}
func (*Minus) planNode()     {}
func (*Filter) planNode()    {}
func (*Extend) planNode()    {}
func (*Group) planNode()     {}
func (*Values) planNode()    {}
func (*SeedRef) planNode()   {}
func (*Let) planNode()       {}
func (*PathScan) planNode()  {}
func (*GraphScan) planNode() {}

// Children returns the inputs of n in evaluation order (a bind join's
// left side is its right Explore's seed: listed once).
func Children(n Node) []Node {
	switch n := n.(type) {
	case *Explore:
		if n.Seed != nil {
			return []Node{n.Seed}
		}
	case *Project:
		return []Node{n.Input}
	case *Distinct:
		return []Node{n.Input}
	case *OrderBy:
		return []Node{n.Input}
	case *Slice:
		return []Node{n.Input}
	case *Join:
		if n.Algo == BindJoin {
			return []Node{n.Right}
		}
		return []Node{n.Left, n.Right}
	case *LeftJoin:
		return []Node{n.Left, n.Right}
	case *Union:
		return []Node{n.Left, n.Right}
	case *Minus:
		return []Node{n.Left, n.Right}
	case *Filter:
		return []Node{n.Input}
	case *Extend:
		return []Node{n.Input}
	case *Group:
		return []Node{n.Input}
	case *Let:
		return []Node{n.Value, n.Body}
	case *PathScan:
		if n.Seed != nil {
			return []Node{n.Seed}
		}
	case *GraphScan:
		if n.Seed != nil {
			return []Node{n.Seed, n.Input}
		}
		return []Node{n.Input}
	}
	return nil
}
