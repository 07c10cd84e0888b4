package sparql

import (
	"strings"

	"github.com/wukongd/wukongd/rdf"
)

// The algebra is plain data named after the SPARQL 1.1 algebra (§18). Every
// node embeds a Pos, its position in the source text. A parsed *Query or
// *Update may be shared with other callers through the parse cache: treat
// every value reachable from it as immutable (copy before rewriting).

// Pos is a position in the source text: 1-based line and 1-based column
// (counted in Unicode code points). The zero Pos means "no position", which
// nodes built by hand and not by the parser have.
type Pos struct {
	Line, Col int
}

// Position returns p; every node embeds a Pos, so every node has Position.
func (p Pos) Position() Pos { return p }

// Var is a variable name without the leading ? or $.
//
// Besides the user's variables the parser introduces two kinds of hidden
// variables, whose names no query text can produce as a variable:
//   - blank nodes of a graph pattern ("_:b", "[]", "[ :p ?o ]", collections)
//     and the fresh variables of property-path rewriting become variables
//     named "_:" + label (IsBlank). They are never projected by SELECT * and
//     never described by DESCRIBE *. They print as blank nodes.
//   - aggregate results are bound to variables named ".agg" + n (IsAggregate);
//     the printer puts the aggregate back in their place.
type Var string

// IsBlank reports whether v stands for a blank node (or a path's fresh
// variable) of a graph pattern.
func (v Var) IsBlank() bool { return strings.HasPrefix(string(v), "_:") }

// IsAggregate reports whether v is the hidden result variable of an
// aggregate.
func (v Var) IsAggregate() bool { return strings.HasPrefix(string(v), ".") }

// Visible reports whether v is a variable the user wrote (not blank, not an
// aggregate result): only those are projected by SELECT *.
func (v Var) Visible() bool { return !v.IsBlank() && !v.IsAggregate() }

// TermOrVar is one position of a triple or quad pattern: a constant term
// (Var == "") or a variable (Var != "", Term is the zero Term).
type TermOrVar struct {
	Term rdf.Term
	Var  Var
}

// IsVar reports whether x is a variable.
func (x TermOrVar) IsVar() bool { return x.Var != "" }

// IsZero reports whether x is neither a term nor a variable (the default
// graph in a QuadPattern).
func (x TermOrVar) IsZero() bool { return x.Var == "" && x.Term.IsZero() }

// NewVarRef returns the TermOrVar for variable v.
func NewVarRef(v Var) TermOrVar { return TermOrVar{Var: v} }

// NewTermRef returns the TermOrVar for constant t.
func NewTermRef(t rdf.Term) TermOrVar { return TermOrVar{Term: t} }

// TriplePattern is a triple whose positions are terms or variables. Its
// Pos is the position of its object in the text (each object of "s p o1,
// o2" makes a triple of its own).
type TriplePattern struct {
	Pos
	S, P, O TermOrVar
}

// QuadPattern is a triple pattern in a graph; G is zero for the default
// graph (of the update's dataset).
type QuadPattern struct {
	Pos
	S, P, O, G TermOrVar
}

// ---------------------------------------------------------------------------
// Graph patterns

// Pattern is a node of the graph-pattern algebra. The concrete types are
// *BGP, *PathPattern, *Join, *LeftJoin, *Filter, *Union, *Minus, *Graph,
// *Extend, *Group, *Values, *Service and the solution modifiers *OrderBy,
// *Project, *Distinct, *Reduced and *Slice (a sub-select is the modifiers'
// tree nested inside a pattern, exactly as §18.2.3 translates it).
type Pattern interface {
	Position() Pos
	// String prints the pattern as a SPARQL group graph pattern "{ … }"
	// (or, for a modifier at the top, a sub-select in braces).
	String() string
	patternNode()
}

// BGP is a basic graph pattern: triple patterns whose blank nodes have been
// replaced by blank variables (Var.IsBlank). The empty BGP is the identity
// of Join (the spec's Z).
type BGP struct {
	Pos
	Triples []TriplePattern
}

// PathPattern is Path(S, Path, O): a property path that §18.2.2.4 does not
// rewrite into triple patterns (links, inverse links and sequences are
// rewritten; alternatives, repetitions and negated sets stay paths).
type PathPattern struct {
	Pos
	S    TermOrVar
	Path Path
	O    TermOrVar
}

// Join is the join of two patterns.
type Join struct {
	Pos
	Left, Right Pattern
}

// LeftJoin is OPTIONAL: Left with the compatible solutions of Right that
// satisfy Expr (nil means true: no filter inside the OPTIONAL).
type LeftJoin struct {
	Pos
	Left, Right Pattern
	Expr        Expr
}

// Filter keeps the solutions of Input for which every expression of Exprs
// is true (the group's FILTERs, a conjunction, in the order written; also
// HAVING).
type Filter struct {
	Pos
	Exprs []Expr
	Input Pattern
}

// Union is the bag union of two patterns.
type Union struct {
	Pos
	Left, Right Pattern
}

// Minus is Left without the solutions compatible with (and sharing a
// variable with) a solution of Right.
type Minus struct {
	Pos
	Left, Right Pattern
}

// Graph evaluates Input in the named graph Name (an IRI or a variable
// ranging over the named graphs).
type Graph struct {
	Pos
	Name  TermOrVar
	Input Pattern
}

// Extend binds Var to the value of Expr on each solution of Input (BIND, a
// SELECT expression, GROUP BY (expr AS ?v)). An evaluation error leaves
// Var unbound.
type Extend struct {
	Pos
	Input Pattern
	Var   Var
	Expr  Expr
}

// Group groups the solutions of Input by the values of Keys (no keys: one
// group of everything, the implicit grouping of aggregates) and binds each
// Aggregates[i].Var to its aggregate over the group. GROUP BY (expr AS ?v)
// is an Extend below the Group and the key ?v.
type Group struct {
	Pos
	Input      Pattern
	Keys       []Expr
	Aggregates []AggregateBinding
}

// AggregateBinding binds an aggregate's result to a hidden variable
// (Var.IsAggregate); expressions above the Group refer to that variable.
type AggregateBinding struct {
	Var Var
	Agg *Aggregate
}

// Values is an inline table (VALUES, also the trailing VALUES of a query):
// each row has one term per variable; the zero rdf.Term is UNDEF.
type Values struct {
	Pos
	Vars []Var
	Rows [][]rdf.Term
}

// Service is SERVICE [SILENT] name { pattern }. It is kept in the algebra;
// the engine may refuse it.
type Service struct {
	Pos
	Silent bool
	Name   TermOrVar
	Input  Pattern
}

// OrderBy sorts the solutions of Input by Conds, the first condition first.
type OrderBy struct {
	Pos
	Input Pattern
	Conds []OrderCond
}

// OrderCond is one ORDER BY condition.
type OrderCond struct {
	Expr Expr
	Desc bool
}

// Project keeps Vars of each solution of Input, in this order. For SELECT *
// Vars lists the visible in-scope variables in order of first appearance.
type Project struct {
	Pos
	Input Pattern
	Vars  []Var
}

// Distinct removes duplicate solutions.
type Distinct struct {
	Pos
	Input Pattern
}

// Reduced permits removing duplicate solutions.
type Reduced struct {
	Pos
	Input Pattern
}

// Slice skips Offset solutions and keeps at most Limit (-1: no limit).
type Slice struct {
	Pos
	Input  Pattern
	Offset int64
	Limit  int64
}

func (*BGP) patternNode()         {}
func (*PathPattern) patternNode() {}
func (*Join) patternNode()        {}
func (*LeftJoin) patternNode()    {}
func (*Filter) patternNode()      {}
func (*Union) patternNode()       {}
func (*Minus) patternNode()       {}
func (*Graph) patternNode()       {}
func (*Extend) patternNode()      {}
func (*Group) patternNode()       {}
func (*Values) patternNode()      {}
func (*Service) patternNode()     {}
func (*OrderBy) patternNode()     {}
func (*Project) patternNode()     {}
func (*Distinct) patternNode()    {}
func (*Reduced) patternNode()     {}
func (*Slice) patternNode()       {}

// ---------------------------------------------------------------------------
// Property paths

// Path is a property path expression. The concrete types are *LinkPath,
// *InversePath, *SequencePath, *AlternativePath, *ZeroOrMorePath,
// *OneOrMorePath, *ZeroOrOnePath and *NegatedPropertySet.
type Path interface {
	Position() Pos
	// String prints the path in SPARQL syntax.
	String() string
	pathNode()
}

// LinkPath is a single predicate IRI.
type LinkPath struct {
	Pos
	IRI string
}

// InversePath is ^Path.
type InversePath struct {
	Pos
	Path Path
}

// SequencePath is Left/Right.
type SequencePath struct {
	Pos
	Left, Right Path
}

// AlternativePath is Left|Right.
type AlternativePath struct {
	Pos
	Left, Right Path
}

// ZeroOrMorePath is Path*.
type ZeroOrMorePath struct {
	Pos
	Path Path
}

// OneOrMorePath is Path+.
type OneOrMorePath struct {
	Pos
	Path Path
}

// ZeroOrOnePath is Path?.
type ZeroOrOnePath struct {
	Pos
	Path Path
}

// NegatedPropertySet is !(iri|…|^iri|…): one step along any predicate not in
// Forward, or backwards along any predicate not in Inverse. With only
// forward IRIs it matches no inverse step, and vice versa (§18.2.2.3).
type NegatedPropertySet struct {
	Pos
	Forward []string
	Inverse []string
}

func (*LinkPath) pathNode()           {}
func (*InversePath) pathNode()        {}
func (*SequencePath) pathNode()       {}
func (*AlternativePath) pathNode()    {}
func (*ZeroOrMorePath) pathNode()     {}
func (*OneOrMorePath) pathNode()      {}
func (*ZeroOrOnePath) pathNode()      {}
func (*NegatedPropertySet) pathNode() {}

// ---------------------------------------------------------------------------
// Expressions

// Expr is an expression. The concrete types are *VarExpr, *TermExpr,
// *UnaryExpr, *BinaryExpr, *InExpr, *CallExpr, *FuncExpr, *ExistsExpr and
// *Aggregate (the latter only inside Group.Aggregates after translation).
type Expr interface {
	Position() Pos
	// String prints the expression in SPARQL syntax, fully parenthesised.
	String() string
	exprNode()
}

// VarExpr is a variable reference.
type VarExpr struct {
	Pos
	Var Var
}

// TermExpr is a constant: an IRI or a literal (numbers and booleans as
// typed literals with the lexical form as written).
type TermExpr struct {
	Pos
	Term rdf.Term
}

// UnaryExpr is Op X with Op one of "!", "-", "+".
type UnaryExpr struct {
	Pos
	Op string
	X  Expr
}

// BinaryExpr is L Op R with Op one of "||", "&&", "=", "!=", "<", ">",
// "<=", ">=", "+", "-", "*", "/".
type BinaryExpr struct {
	Pos
	Op   string
	L, R Expr
}

// InExpr is X IN (List…), or X NOT IN (List…) when Not.
type InExpr struct {
	Pos
	X    Expr
	List []Expr
	Not  bool
}

// CallExpr is a call of a built-in function. Name is the upper-case SPARQL
// name: STR, LANG, LANGMATCHES, DATATYPE, BOUND, IRI (URI is written as
// IRI), BNODE, RAND, ABS, CEIL, FLOOR, ROUND, CONCAT, SUBSTR, STRLEN,
// REPLACE, UCASE, LCASE, ENCODE_FOR_URI, CONTAINS, STRSTARTS, STRENDS,
// STRBEFORE, STRAFTER, YEAR, MONTH, DAY, HOURS, MINUTES, SECONDS, TIMEZONE,
// TZ, NOW, UUID, STRUUID, MD5, SHA1, SHA256, SHA384, SHA512, COALESCE, IF,
// STRLANG, STRDT, SAMETERM, ISIRI (isURI is written as ISIRI), ISBLANK,
// ISLITERAL, ISNUMERIC, REGEX. Args are in the order written.
type CallExpr struct {
	Pos
	Name string
	Args []Expr
}

// FuncExpr is a call of a function named by an IRI, such as the XSD casts
// xsd:integer(?x). Distinct is set when written f(DISTINCT …) (custom
// aggregates; the engine may refuse them).
type FuncExpr struct {
	Pos
	IRI      string
	Args     []Expr
	Distinct bool
}

// ExistsExpr is EXISTS { Pattern }, or NOT EXISTS when Not.
type ExistsExpr struct {
	Pos
	Not     bool
	Pattern Pattern
}

// Aggregate is an aggregate function: Name is COUNT, SUM, MIN, MAX, AVG,
// SAMPLE or GROUP_CONCAT. Arg is nil for COUNT(*). Separator is the
// GROUP_CONCAT separator (" " when not written).
type Aggregate struct {
	Pos
	Name      string
	Distinct  bool
	Arg       Expr
	Separator string
}

func (*VarExpr) exprNode()    {}
func (*TermExpr) exprNode()   {}
func (*UnaryExpr) exprNode()  {}
func (*BinaryExpr) exprNode() {}
func (*InExpr) exprNode()     {}
func (*CallExpr) exprNode()   {}
func (*FuncExpr) exprNode()   {}
func (*ExistsExpr) exprNode() {}
func (*Aggregate) exprNode()  {}

// ---------------------------------------------------------------------------
// Queries and updates

// Form is the form of a query.
type Form uint8

const (
	FormSelect Form = iota + 1
	FormConstruct
	FormAsk
	FormDescribe
)

func (f Form) String() string {
	switch f {
	case FormSelect:
		return "SELECT"
	case FormConstruct:
		return "CONSTRUCT"
	case FormAsk:
		return "ASK"
	case FormDescribe:
		return "DESCRIBE"
	}
	return "Form(?)"
}

// Prefix is a PREFIX declaration (kept for printing; all IRIs in the
// algebra are already expanded and resolved).
type Prefix struct {
	Name string // without the colon; "" for the default prefix
	IRI  string
}

// Dataset is the RDF dataset of FROM / FROM NAMED (or USING / USING NAMED
// of an update): IRIs of the graphs merged into the default graph and of
// the named graphs.
type Dataset struct {
	Default []string
	Named   []string
}

// Query is a parsed SPARQL query.
type Query struct {
	Pos
	Form     Form
	Base     string   // the last BASE IRI, "" when none
	Prefixes []Prefix // in the order declared
	Dataset  *Dataset // nil when the query has no FROM clause
	// Pattern is the whole algebra expression: the WHERE pattern with the
	// solution modifiers on top (for SELECT: … Project, Distinct/Reduced,
	// Slice). It is nil only for a DESCRIBE without WHERE.
	Pattern Pattern
	// Vars is the SELECT projection in order (for SELECT * the visible
	// in-scope variables), the same as the Project node's.
	Vars []Var
	// Star is set for SELECT * and DESCRIBE *.
	Star bool
	// Template is the CONSTRUCT template; its blank nodes stay blank-node
	// terms (fresh per solution), they are not variables.
	Template []TriplePattern
	// Describe lists the DESCRIBE targets (IRIs and variables); for
	// DESCRIBE * the visible in-scope variables.
	Describe []TermOrVar
}

// Update is a parsed SPARQL update request: operations run in order.
type Update struct {
	Pos
	Base       string
	Prefixes   []Prefix
	Operations []UpdateOp
}

// UpdateOp is one update operation: *InsertData, *DeleteData, *Modify,
// *Load, *Clear, *Drop, *Create, *Copy, *Move or *Add.
type UpdateOp interface {
	Position() Pos
	// String prints the operation in SPARQL syntax.
	String() string
	updateNode()
}

// InsertData is INSERT DATA { quads }; blank nodes are blank-node terms.
type InsertData struct {
	Pos
	Quads []rdf.Quad
}

// DeleteData is DELETE DATA { quads } (no blank nodes).
type DeleteData struct {
	Pos
	Quads []rdf.Quad
}

// Modify is DELETE { … } INSERT { … } [USING …] WHERE { … } with an
// optional WITH graph; also DELETE WHERE { quads } (ShortForm, Delete are
// the quads and Pattern their translation). In the templates a zero G means
// the WITH graph, else the default graph; blank nodes in Insert are
// blank-node terms, fresh per solution.
type Modify struct {
	Pos
	With      string // "" when absent
	Delete    []QuadPattern
	Insert    []QuadPattern
	Using     *Dataset // nil when no USING clause
	Pattern   Pattern
	ShortForm bool // written DELETE WHERE { … }
}

// GraphTarget names the graphs of CLEAR and DROP.
type GraphTarget struct {
	Kind GraphTargetKind
	IRI  string // for TargetGraph
}

// GraphTargetKind says which graphs a GraphTarget names.
type GraphTargetKind uint8

const (
	TargetGraph   GraphTargetKind = iota + 1 // GRAPH <iri>
	TargetDefault                            // DEFAULT
	TargetNamed                              // NAMED: every named graph
	TargetAll                                // ALL: every graph
)

// GraphRef is the source or destination of ADD, COPY and MOVE: the default
// graph when IRI is "".
type GraphRef struct {
	IRI string
}

// Load is LOAD [SILENT] <source> [INTO GRAPH <into>].
type Load struct {
	Pos
	Silent bool
	Source string
	Into   string // "" for the default graph
}

// Clear is CLEAR [SILENT] target.
type Clear struct {
	Pos
	Silent bool
	Target GraphTarget
}

// Drop is DROP [SILENT] target.
type Drop struct {
	Pos
	Silent bool
	Target GraphTarget
}

// Create is CREATE [SILENT] GRAPH <iri>.
type Create struct {
	Pos
	Silent bool
	Graph  string
}

// Copy is COPY [SILENT] from TO to.
type Copy struct {
	Pos
	Silent   bool
	From, To GraphRef
}

// Move is MOVE [SILENT] from TO to.
type Move struct {
	Pos
	Silent   bool
	From, To GraphRef
}

// Add is ADD [SILENT] from TO to.
type Add struct {
	Pos
	Silent   bool
	From, To GraphRef
}

func (*InsertData) updateNode() {}
func (*DeleteData) updateNode() {}
func (*Modify) updateNode()     {}
func (*Load) updateNode()       {}
func (*Clear) updateNode()      {}
func (*Drop) updateNode()       {}
func (*Create) updateNode()     {}
func (*Copy) updateNode()       {}
func (*Move) updateNode()       {}
func (*Add) updateNode()        {}
