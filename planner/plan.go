package planner

import (
	"sort"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/sparql"
)

// ID is a dictionary ID of a term. 0 is never a term: in a column it means
// "unbound".
type ID = graphstore.ID

// Dir is the direction of a step along an edge: Out follows subject→object,
// In follows object→subject.
type Dir = graphstore.Dir

// The directions.
const (
	Out = graphstore.Out
	In  = graphstore.In
)

// Mode is how a step reaches adjacency lists owned by other shards.
type Mode uint8

const (
	// ModeAuto lets the planner choose per step (only as an option).
	ModeAuto Mode = iota
	// ModeLocal: every row's source vertex is owned by the node running the
	// step (the rows are partitioned on that column, or there is one shard).
	ModeLocal
	// ModeInPlace: the node reads remote adjacency lists through batched
	// one-sided fabric READs and keeps the rows.
	ModeInPlace
	// ModeForkJoin: the rows are split by owner shard and shipped, with the
	// rest of the plan, to the owners; the parent concatenates their rows.
	ModeForkJoin
)

func (m Mode) String() string {
	switch m {
	case ModeAuto:
		return "auto"
	case ModeLocal:
		return "local"
	case ModeInPlace:
		return "in-place"
	case ModeForkJoin:
		return "fork-join"
	}
	return "mode(?)"
}

// ParseMode parses "auto", "in-place" or "fork-join".
func ParseMode(s string) (Mode, bool) {
	switch s {
	case "", "auto":
		return ModeAuto, true
	case "in-place", "inplace":
		return ModeInPlace, true
	case "fork-join", "forkjoin":
		return ModeForkJoin, true
	}
	return ModeAuto, false
}

// OperandKind says what a step operand is.
type OperandKind uint8

const (
	// OpConst is a constant ID (ID 0 when the dictionary does not know the
	// term: it matches nothing).
	OpConst OperandKind = iota
	// OpVar is a column of the table (Col), bound before the step unless
	// the step binds it (Step.PredNew / Step.ToNew).
	OpVar
	// OpAny is the any-predicate of an index start over all vertices.
	OpAny
)

// Operand is one position of a step: a constant or a column.
type Operand struct {
	Kind OperandKind
	ID   ID  // for OpConst
	Col  int // for OpVar
}

// Const returns a constant operand.
func Const(id ID) Operand { return Operand{Kind: OpConst, ID: id} }

// Column returns a column operand.
func Column(c int) Operand { return Operand{Kind: OpVar, Col: c} }

// StepKind is the kind of an exploration step.
type StepKind uint8

const (
	// StepIndex binds To from an index vertex on every shard: the type
	// index (Pred = class, Dir In), the subjects (Dir Out) or objects
	// (Dir In) of a predicate, or all subjects (Pred OpAny). As the first
	// step it starts the exploration; later it is a cross product.
	StepIndex StepKind = iota
	// StepExpand follows the edges (From, Pred, Dir) of every row to a new
	// variable To (const→var, known→var; also binds Pred when PredNew).
	StepExpand
	// StepCheck keeps the rows whose From has an edge Pred in Dir to To (a
	// bound column or a constant): known→known, known→const, const→known.
	StepCheck
)

func (k StepKind) String() string {
	switch k {
	case StepIndex:
		return "index"
	case StepExpand:
		return "expand"
	case StepCheck:
		return "check"
	}
	return "step(?)"
}

// Step is one physical step of an exploration. Every choice is stated.
type Step struct {
	Kind    StepKind
	Pattern int     // index of the triple pattern in the BGP it comes from (-1: none)
	From    Operand // the bound end the step starts from (StepIndex: unused)
	Pred    Operand
	PredNew bool // Pred is a variable the step binds (variable predicate)
	Dir     Dir
	To      Operand
	ToNew   bool // To is a variable the step binds
	Mode    Mode // how remote adjacency is reached (StepIndex: fork to all shards or read all)
	// Partitioned is the column the rows are known to be partitioned on
	// (owner of its value = the node running the step) before the step;
	// -1 when unknown.
	Partitioned int
	EstRows     float64 // estimated rows after the step
	// TypeCheck, when nonzero, is a type check fused into an expansion
	// (StepExpand binding To, constant predicate): the pattern
	// ?To rdf:type TypeCheck (CheckPattern in the BGP) that would be the
	// next step runs inside the expansion, which keeps only the neighbours
	// of that class, so the rows the check would drop are never built.
	// EstRows is then the estimate after the check. See fuseTypeChecks.
	TypeCheck    ID
	CheckPattern int
	// Intersect is a known→known check fused into an expansion (StepExpand
	// binding To from a bound From, constant predicate): the pattern
	// IntersectPattern of the BGP, which would be the next step, relates
	// ?To to the bound column IntersectCol by IntersectPred, so the
	// expansion keeps only the neighbours that are also in the sorted list
	// (?IntersectCol, IntersectPred, IntersectDir): per row, two sorted
	// lists merged instead of one row per neighbour and a lookup or a
	// search per row. EstRows is then the estimate after the check. See
	// fuseIntersections.
	Intersect        bool
	IntersectCol     int
	IntersectPred    ID
	IntersectDir     Dir
	IntersectPattern int
}

// Explore is a basic graph pattern as an exploration plan. Its Table has
// one column per variable of Vars (full history); Seeded explorations start
// from an input table (bind join), others from one empty row.
type Explore struct {
	Vars  []sparql.Var
	Steps []Step
	// Empty is set when a constant of the pattern is unknown to the
	// dictionary (or the pattern is otherwise known to match nothing).
	Empty bool
	// Seed, when non-nil, is evaluated first and its rows seed the
	// exploration (its columns map to Vars by name; its other columns are
	// carried along). SeedVars are the variables of the pattern the seed
	// binds in every row: bound before the first step.
	Seed     Node
	SeedVars []sparql.Var
	// Carried are the seed's other variables (which the pattern does not
	// mention): their columns travel with the rows, unchanged, and pushed
	// filters may read them.
	Carried []sparql.Var
	// Filters are the FILTER expressions pushed into the exploration
	// (pushFilters), each run right after the step that binds the last
	// variable it reads.
	Filters []StepFilter
	// Coordinator says where the exploration begins: the owner of a
	// constant (StartConst) or the node running the query.
	StartConst ID
	EstRows    float64
	EstCost    float64
}

// Node is a node of the physical plan tree. The concrete types are
// *Explore, *Project, *Distinct, *OrderBy, *Slice and the operators of
// ops.go: *Join, *LeftJoin, *Union, *Minus, *Filter, *Extend, *Group,
// *Values, *SeedRef, *Let, *PathScan and *GraphScan.
type Node interface{ planNode() }

// Project keeps Cols of Input's table (by variable), in order; a variable
// the input does not bind is an all-unbound column.
type Project struct {
	Input Node
	Vars  []sparql.Var
}

// Distinct removes duplicate rows.
type Distinct struct{ Input Node }

// OrderBy sorts rows by the terms of Keys (SPARQL ordering).
type OrderBy struct {
	Input Node
	Keys  []OrderKey
}

// OrderKey is one ORDER BY key: a variable (Var, Expr nil) or an
// expression, ascending unless Desc. An expression that errs sorts as
// unbound.
type OrderKey struct {
	Var  sparql.Var
	Expr sparql.Expr
	Desc bool
}

// Slice skips Offset rows and keeps at most Limit (-1: all).
type Slice struct {
	Input         Node
	Offset, Limit int64
}

func (*Explore) planNode()  {}
func (*Project) planNode()  {}
func (*Distinct) planNode() {}
func (*OrderBy) planNode()  {}
func (*Slice) planNode()    {}

// Plan is a physical plan: the operator tree and the options it was made
// under.
type Plan struct {
	// Form is the query form. Root gives the solutions (SELECT), whether
	// there is one (ASK), the solutions the Template is instantiated with
	// (CONSTRUCT), or the solutions whose values are described
	// (DESCRIBE; Root is nil for a DESCRIBE without WHERE).
	Form     sparql.Form
	Base     string // the query's base IRI (for IRI())
	Root     Node
	Template []sparql.TriplePattern // CONSTRUCT
	Describe *DescribePlan          // DESCRIBE
	// Exists are the plans of the EXISTS patterns of the expressions, by
	// pattern (the ExistsFunc of exec/expr is called with the pattern).
	Exists map[sparql.Pattern]*ExistsPlan
	// Vars are the result variables (the SELECT projection).
	Vars          []sparql.Var
	Mode          Mode // the mode requested (ModeAuto: chosen per step)
	ForkThreshold float64
	Shards        int
}

// Explores returns the exploration nodes of the plan in evaluation order
// (then those of the EXISTS patterns and of DESCRIBE).
func (p *Plan) Explores() []*Explore {
	var out []*Explore
	seen := map[Node]bool{}
	var walk func(n Node)
	walk = func(n Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		for _, c := range Children(n) {
			walk(c)
		}
		if x, ok := n.(*Explore); ok {
			out = append(out, x)
		}
	}
	walk(p.Root)
	for _, e := range p.ExistsPlans() {
		walk(e.Node)
	}
	if p.Describe != nil {
		walk(p.Describe.Explore)
	}
	return out
}

// ExistsPlans returns the EXISTS plans by slot (the order they were
// planned in).
func (p *Plan) ExistsPlans() []*ExistsPlan {
	out := make([]*ExistsPlan, 0, len(p.Exists))
	for _, e := range p.Exists {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slot < out[j].Slot })
	return out
}
