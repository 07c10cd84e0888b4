package sparql

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/wukongd/wukongd/rdf"
)

// The printer turns the algebra back into SPARQL text whose translation is
// the same algebra (up to positions): group elements are emitted in an order
// and nesting that the translation of §18.2 maps back onto the same tree,
// select expressions, GROUP BY and HAVING are re-sugared from the Extend,
// Group and Filter nodes above a grouping, and aggregate result variables
// are replaced by their aggregates.

type printer struct {
	b      strings.Builder
	indent int
	aggs   map[Var]*Aggregate
}

func (p *printer) w(s string) { p.b.WriteString(s) }

func (p *printer) nl() {
	p.b.WriteByte('\n')
	for i := 0; i < p.indent; i++ {
		p.b.WriteString("  ")
	}
}

var (
	reInteger = regexp.MustCompile(`^[0-9]+$`)
	reDecimal = regexp.MustCompile(`^[0-9]*\.[0-9]+$`)
	reDouble  = regexp.MustCompile(`^([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)[eE][+-]?[0-9]+$`)
)

func (p *printer) term(t rdf.Term) {
	if t.Kind == rdf.KindLiteral && t.Lang == "" {
		switch t.Datatype {
		case rdf.XSDInteger:
			if reInteger.MatchString(t.Value) {
				p.w(t.Value)
				return
			}
		case rdf.XSDDecimal:
			if reDecimal.MatchString(t.Value) {
				p.w(t.Value)
				return
			}
		case rdf.XSDDouble:
			if reDouble.MatchString(t.Value) {
				p.w(t.Value)
				return
			}
		case rdf.XSDBoolean:
			if t.Value == "true" || t.Value == "false" {
				p.w(t.Value)
				return
			}
		}
	}
	if t.Kind == rdf.KindNone {
		p.w("UNDEF")
		return
	}
	p.b.Write(rdf.AppendNTriples(nil, t))
}

func (p *printer) variable(v Var) {
	if v.IsBlank() {
		p.w(string(v))
		return
	}
	p.w("?")
	p.w(string(v))
}

func (p *printer) tv(x TermOrVar) {
	if x.IsVar() {
		p.variable(x.Var)
		return
	}
	p.term(x.Term)
}

func (p *printer) iri(s string) { p.term(rdf.NewIRI(s)) }

// ---------------------------------------------------------------------------
// Expressions

func (p *printer) expr(e Expr) {
	switch x := e.(type) {
	case *VarExpr:
		if a, ok := p.aggs[x.Var]; ok {
			p.expr(a)
			return
		}
		p.variable(x.Var)
	case *TermExpr:
		p.term(x.Term)
	case *UnaryExpr:
		p.w("(")
		p.w(x.Op)
		p.w(" ")
		p.expr(x.X)
		p.w(")")
	case *BinaryExpr:
		p.w("(")
		p.expr(x.L)
		p.w(" ")
		p.w(x.Op)
		p.w(" ")
		p.expr(x.R)
		p.w(")")
	case *InExpr:
		p.w("(")
		p.expr(x.X)
		if x.Not {
			p.w(" NOT IN (")
		} else {
			p.w(" IN (")
		}
		p.exprList(x.List)
		p.w("))")
	case *CallExpr:
		p.w(x.Name)
		p.w("(")
		p.exprList(x.Args)
		p.w(")")
	case *FuncExpr:
		p.iri(x.IRI)
		p.w("(")
		if x.Distinct {
			p.w("DISTINCT ")
		}
		p.exprList(x.Args)
		p.w(")")
	case *ExistsExpr:
		if x.Not {
			p.w("NOT ")
		}
		p.w("EXISTS ")
		p.group(x.Pattern)
	case *Aggregate:
		p.w(x.Name)
		p.w("(")
		if x.Distinct {
			p.w("DISTINCT ")
		}
		if x.Arg == nil {
			p.w("*")
		} else {
			p.expr(x.Arg)
		}
		if x.Name == "GROUP_CONCAT" && x.Separator != " " {
			p.w(" ; SEPARATOR=")
			p.term(rdf.NewLiteral(x.Separator, ""))
		}
		p.w(")")
	case nil:
		p.w("true")
	default:
		panic("BUG: unknown expression type")
	}
}

func (p *printer) exprList(list []Expr) {
	for i, a := range list {
		if i > 0 {
			p.w(", ")
		}
		p.expr(a)
	}
}

// ---------------------------------------------------------------------------
// Paths

func (p *printer) path(x Path) {
	switch x := x.(type) {
	case *LinkPath:
		p.iri(x.IRI)
	case *InversePath:
		p.w("^")
		if _, ok := x.Path.(*LinkPath); ok {
			p.path(x.Path)
		} else {
			p.w("(")
			p.path(x.Path)
			p.w(")")
		}
	case *SequencePath:
		p.w("(")
		p.path(x.Left)
		p.w(" / ")
		p.path(x.Right)
		p.w(")")
	case *AlternativePath:
		p.w("(")
		p.path(x.Left)
		p.w(" | ")
		p.path(x.Right)
		p.w(")")
	case *ZeroOrMorePath:
		p.modPath(x.Path, "*")
	case *OneOrMorePath:
		p.modPath(x.Path, "+")
	case *ZeroOrOnePath:
		p.modPath(x.Path, "?")
	case *NegatedPropertySet:
		p.w("!(")
		n := 0
		for _, f := range x.Forward {
			if n > 0 {
				p.w(" | ")
			}
			p.iri(f)
			n++
		}
		for _, f := range x.Inverse {
			if n > 0 {
				p.w(" | ")
			}
			p.w("^")
			p.iri(f)
			n++
		}
		p.w(")")
	default:
		panic("BUG: unknown path type")
	}
}

func (p *printer) modPath(x Path, mod string) {
	p.w("(")
	p.path(x)
	p.w(")")
	p.w(mod)
}

// ---------------------------------------------------------------------------
// Graph patterns

// group writes "{ … }" whose translation is pat.
func (p *printer) group(pat Pattern) {
	p.w("{")
	p.indent++
	switch pat.(type) {
	case *Project, *Distinct, *Reduced, *Slice, *OrderBy, *Group:
		p.nl()
		p.subSelect(pat)
	default:
		p.elems(pat)
	}
	p.indent--
	p.nl()
	p.w("}")
}

// elems writes the elements of a group whose translation is pat; a Filter
// at the top becomes the group's FILTERs.
func (p *printer) elems(pat Pattern) {
	var last elemKind
	if f, ok := pat.(*Filter); ok {
		p.inner(f.Input, &last)
		for _, e := range f.Exprs {
			p.nl()
			p.w("FILTER ")
			p.bracketed(e)
		}
		return
	}
	p.inner(pat, &last)
}

func (p *printer) bracketed(e Expr) {
	switch e.(type) {
	case *BinaryExpr, *UnaryExpr, *InExpr:
		p.expr(e) // already parenthesised
	default:
		p.bracketedAlways(e)
	}
}

type elemKind uint8

const (
	elemNone  elemKind = iota
	elemBlock          // a triples block (its BGPs and paths can merge with a following one)
	elemOther
)

// pureBlock reports whether pat is what the translation of one triples
// block gives: BGPs and paths joined left-deep, never two BGPs in a row.
func pureBlock(pat Pattern) bool {
	switch x := pat.(type) {
	case *BGP:
		return len(x.Triples) > 0
	case *PathPattern:
		return true
	case *Join:
		switch x.Right.(type) {
		case *BGP:
			_, lb := lastPiece(x.Left).(*BGP)
			return !lb && pureBlock(x.Left) && len(x.Right.(*BGP).Triples) > 0
		case *PathPattern:
			return pureBlock(x.Left)
		}
	}
	return false
}

func lastPiece(pat Pattern) Pattern {
	if j, ok := pat.(*Join); ok {
		return j.Right
	}
	return pat
}

// inner writes elements translating to pat when the group so far is empty
// (Z) or, through the recursion on Join, the left side already written.
func (p *printer) inner(pat Pattern, last *elemKind) {
	if pureBlock(pat) {
		p.element(pat, last)
		return
	}
	switch x := pat.(type) {
	case *BGP:
		if len(x.Triples) == 0 && *last == elemNone {
			return
		}
	case *Join:
		p.inner(x.Left, last)
		p.element(x.Right, last)
		return
	case *LeftJoin:
		p.inner(x.Left, last)
		p.nl()
		p.w("OPTIONAL {")
		p.indent++
		if _, isFilter := x.Right.(*Filter); isFilter && x.Expr != nil {
			var l elemKind
			p.element(x.Right, &l)
		} else {
			p.elems(x.Right)
		}
		if x.Expr != nil {
			p.nl()
			p.w("FILTER ")
			p.bracketed(x.Expr)
		}
		p.indent--
		p.nl()
		p.w("}")
		*last = elemOther
		return
	case *Minus:
		p.inner(x.Left, last)
		p.nl()
		p.w("MINUS ")
		p.group(x.Right)
		*last = elemOther
		return
	case *Extend:
		p.inner(x.Input, last)
		p.nl()
		p.w("BIND (")
		p.expr(x.Expr)
		p.w(" AS ")
		p.variable(x.Var)
		p.w(")")
		*last = elemOther
		return
	}
	p.element(pat, last)
}

// element writes one group element whose translation is joined to the
// group so far.
func (p *printer) element(pat Pattern, last *elemKind) {
	if pureBlock(pat) {
		if *last == elemBlock {
			p.nl()
			p.group(pat)
			*last = elemOther
			return
		}
		p.block(pat)
		*last = elemBlock
		return
	}
	*last = elemOther
	p.nl()
	switch x := pat.(type) {
	case *Union:
		p.union(x)
	case *Graph:
		p.w("GRAPH ")
		p.tv(x.Name)
		p.w(" ")
		p.group(x.Input)
	case *Service:
		p.w("SERVICE ")
		if x.Silent {
			p.w("SILENT ")
		}
		p.tv(x.Name)
		p.w(" ")
		p.group(x.Input)
	case *Values:
		p.values(x)
	default:
		p.group(pat)
	}
}

func (p *printer) union(u *Union) {
	if l, ok := u.Left.(*Union); ok {
		p.union(l)
	} else {
		p.group(u.Left)
	}
	p.w(" UNION ")
	p.group(u.Right)
}

func (p *printer) block(pat Pattern) {
	switch x := pat.(type) {
	case *BGP:
		for _, t := range x.Triples {
			p.triple(t.S, t.P, t.O)
		}
	case *PathPattern:
		p.nl()
		p.tv(x.S)
		p.w(" ")
		p.path(x.Path)
		p.w(" ")
		p.tv(x.O)
		p.w(" .")
	case *Join:
		p.block(x.Left)
		p.block(x.Right)
	}
}

// triple writes "s p o ." on a new line.
func (p *printer) triple(s, pr, o TermOrVar) {
	p.nl()
	p.tv(s)
	p.w(" ")
	p.tv(pr)
	p.w(" ")
	p.tv(o)
	p.w(" .")
}

func (p *printer) values(v *Values) {
	p.w("VALUES (")
	for i, x := range v.Vars {
		if i > 0 {
			p.w(" ")
		}
		p.variable(x)
	}
	p.w(") {")
	for _, row := range v.Rows {
		p.w(" (")
		for i, t := range row {
			if i > 0 {
				p.w(" ")
			}
			p.term(t)
		}
		p.w(")")
	}
	p.w(" }")
}

// modifiers are the solution modifiers peeled off the top of a query's
// pattern.
type modifiers struct {
	slice    *Slice
	distinct bool
	reduced  bool
	project  *Project
	order    *OrderBy
	selExprs []*Extend // select expressions, in order
	values   *Values   // trailing VALUES of an aggregate query
	having   *Filter
	group    *Group
	where    Pattern
	star     bool // print SELECT * (no select expressions are peeled)
}

func peel(pat Pattern, wantProject, star bool) modifiers {
	var m modifiers
	m.star = star
	if s, ok := pat.(*Slice); ok {
		m.slice, pat = s, s.Input
	}
	if wantProject {
		switch d := pat.(type) {
		case *Distinct:
			m.distinct, pat = true, d.Input
		case *Reduced:
			m.reduced, pat = true, d.Input
		}
		if pr, ok := pat.(*Project); ok {
			m.project, pat = pr, pr.Input
		}
	}
	if o, ok := pat.(*OrderBy); ok {
		m.order, pat = o, o.Input
	}
	if m.project == nil {
		m.where = pat
		return m
	}
	// Extends above a grouping are select expressions; so are the top
	// Extends whose variables are projected in the same order.
	var exts []*Extend
	rest := pat
	for {
		e, ok := rest.(*Extend)
		if !ok {
			break
		}
		exts = append(exts, e)
		rest = e.Input
	}
	under := rest
	var values *Values
	if j, ok := under.(*Join); ok {
		if v, ok := j.Right.(*Values); ok {
			if g := groupUnder(j.Left); g != nil {
				values, under = v, j.Left
			}
		}
	}
	var having *Filter
	if f, ok := under.(*Filter); ok {
		if _, ok := f.Input.(*Group); ok {
			having, under = f, f.Input
		}
	}
	if g, ok := under.(*Group); ok {
		m.group, m.having, m.values = g, having, values
		for i := len(exts) - 1; i >= 0; i-- {
			m.selExprs = append(m.selExprs, exts[i])
		}
		m.where = g.Input
		return m
	}
	// Not grouped: peel the longest run of top Extends that reads as
	// select expressions of this projection.
	pos := map[Var]int{}
	for i, v := range m.project.Vars {
		pos[v] = i
	}
	k := 0 // exts[:k] are peeled (top-down)
	prev := len(m.project.Vars)
	for k < len(exts) && !star {
		i, ok := pos[exts[k].Var]
		if !ok || i >= prev {
			break
		}
		prev = i
		k++
	}
	for i := k - 1; i >= 0; i-- {
		m.selExprs = append(m.selExprs, exts[i])
	}
	if k > 0 {
		m.where = exts[k-1].Input
	} else {
		m.where = pat
	}
	return m
}

func groupUnder(pat Pattern) *Group {
	if f, ok := pat.(*Filter); ok {
		pat = f.Input
	}
	g, _ := pat.(*Group)
	return g
}

// subSelect prints a SELECT (sub-)query for pat.
func (p *printer) subSelect(pat Pattern) {
	m := peel(pat, true, false)
	if m.project == nil {
		// Not a projection at the top: project everything.
		m.project = &Project{Vars: nil}
	}
	p.selectClause(&m)
	p.w(" WHERE ")
	p.group(m.where)
	p.tail(&m)
}

func (p *printer) selectClause(m *modifiers) {
	saved := p.aggs
	p.setAggs(m)
	p.w("SELECT")
	if m.distinct {
		p.w(" DISTINCT")
	}
	if m.reduced {
		p.w(" REDUCED")
	}
	exprOf := map[Var]*Extend{}
	for _, e := range m.selExprs {
		exprOf[e.Var] = e
	}
	if len(m.project.Vars) == 0 || m.star {
		p.w(" *")
		p.aggs = saved
		return
	}
	for _, v := range m.project.Vars {
		p.w(" ")
		if e, ok := exprOf[v]; ok {
			p.w("(")
			p.expr(e.Expr)
			p.w(" AS ")
			p.variable(v)
			p.w(")")
			continue
		}
		p.variable(v)
	}
	p.aggs = saved
}

func (p *printer) setAggs(m *modifiers) {
	if m.group == nil {
		return
	}
	aggs := map[Var]*Aggregate{}
	for k, v := range p.aggs {
		aggs[k] = v
	}
	for _, a := range m.group.Aggregates {
		aggs[a.Var] = a.Agg
	}
	p.aggs = aggs
}

// tail prints GROUP BY, HAVING, ORDER BY, LIMIT/OFFSET and VALUES.
func (p *printer) tail(m *modifiers) {
	saved := p.aggs
	p.setAggs(m)
	defer func() { p.aggs = saved }()
	if m.group != nil && len(m.group.Keys) > 0 {
		p.w(" GROUP BY")
		for _, k := range m.group.Keys {
			p.w(" ")
			if v, ok := k.(*VarExpr); ok {
				p.variable(v.Var)
				continue
			}
			p.bracketedAlways(k)
		}
	}
	if m.having != nil {
		p.w(" HAVING")
		for _, e := range m.having.Exprs {
			p.w(" ")
			p.bracketedAlways(e)
		}
	}
	if m.order != nil {
		p.w(" ORDER BY")
		for _, c := range m.order.Conds {
			if c.Desc {
				p.w(" DESC(")
			} else {
				p.w(" ASC(")
			}
			p.expr(c.Expr)
			p.w(")")
		}
	}
	if s := m.slice; s != nil {
		if s.Limit >= 0 {
			p.w(" LIMIT ")
			p.w(strconv.FormatInt(s.Limit, 10))
		}
		if s.Offset > 0 || s.Limit < 0 {
			p.w(" OFFSET ")
			p.w(strconv.FormatInt(s.Offset, 10))
		}
	}
	if m.values != nil {
		p.nl()
		p.values(m.values)
	}
}

func (p *printer) bracketedAlways(e Expr) {
	p.w("(")
	p.expr(e)
	p.w(")")
}

// ---------------------------------------------------------------------------
// Queries and updates

func (p *printer) prologue(base string, prefixes []Prefix) {
	if base != "" {
		p.w("BASE ")
		p.iri(base)
		p.b.WriteByte('\n')
	}
	for _, pr := range prefixes {
		p.w("PREFIX ")
		p.w(pr.Name)
		p.w(": ")
		p.iri(pr.IRI)
		p.b.WriteByte('\n')
	}
}

func (p *printer) dataset(d *Dataset, kw string) {
	if d == nil {
		return
	}
	for _, g := range d.Default {
		p.nl()
		p.w(kw + " ")
		p.iri(g)
	}
	for _, g := range d.Named {
		p.nl()
		p.w(kw + " NAMED ")
		p.iri(g)
	}
}

func (p *printer) template(ts []TriplePattern) {
	p.w("{")
	p.indent++
	for _, t := range ts {
		p.triple(t.S, t.P, t.O)
	}
	p.indent--
	p.nl()
	p.w("}")
}

func (p *printer) query(q *Query) {
	p.prologue(q.Base, q.Prefixes)
	switch q.Form {
	case FormSelect:
		m := peel(q.Pattern, true, q.Star)
		if m.project == nil {
			m.project = &Project{Vars: q.Vars}
		}
		p.selectClause(&m)
		p.dataset(q.Dataset, "FROM")
		p.where(&m)
	case FormConstruct:
		m := peel(q.Pattern, false, false)
		p.w("CONSTRUCT ")
		p.template(q.Template)
		p.dataset(q.Dataset, "FROM")
		p.where(&m)
	case FormAsk:
		m := peel(q.Pattern, false, false)
		p.w("ASK")
		p.dataset(q.Dataset, "FROM")
		p.where(&m)
	case FormDescribe:
		p.w("DESCRIBE")
		if q.Star {
			p.w(" *")
		} else {
			for _, d := range q.Describe {
				p.w(" ")
				p.tv(d)
			}
		}
		p.dataset(q.Dataset, "FROM")
		if q.Pattern != nil {
			m := peel(q.Pattern, false, false)
			p.where(&m)
		}
	}
}

// where writes the WHERE clause of a query and its solution modifiers.
func (p *printer) where(m *modifiers) {
	p.nl()
	p.w("WHERE ")
	p.group(m.where)
	p.tail(m)
}

func (p *printer) quads(qs []QuadPattern) {
	p.w("{")
	p.indent++
	var g TermOrVar
	open := false
	for _, q := range qs {
		if open && q.G != g {
			p.indent--
			p.nl()
			p.w("}")
			open = false
		}
		if !open && !q.G.IsZero() {
			g = q.G
			p.nl()
			p.w("GRAPH ")
			p.tv(g)
			p.w(" {")
			p.indent++
			open = true
		}
		p.triple(q.S, q.P, q.O)
	}
	if open {
		p.indent--
		p.nl()
		p.w("}")
	}
	p.indent--
	p.nl()
	p.w("}")
}

func groundQuads(qs []rdf.Quad) []QuadPattern {
	out := make([]QuadPattern, len(qs))
	for i, q := range qs {
		out[i] = QuadPattern{S: NewTermRef(q.S), P: NewTermRef(q.P), O: NewTermRef(q.O)}
		if !q.G.IsZero() {
			out[i].G = NewTermRef(q.G)
		}
	}
	return out
}

func (p *printer) silent(s bool) {
	if s {
		p.w(" SILENT")
	}
}

func (p *printer) target(t GraphTarget) {
	switch t.Kind {
	case TargetDefault:
		p.w(" DEFAULT")
	case TargetNamed:
		p.w(" NAMED")
	case TargetAll:
		p.w(" ALL")
	default:
		p.w(" GRAPH ")
		p.iri(t.IRI)
	}
}

func (p *printer) graphRef(g GraphRef) {
	if g.IRI == "" {
		p.w(" DEFAULT")
		return
	}
	p.w(" GRAPH ")
	p.iri(g.IRI)
}

func (p *printer) transfer(kw string, silent bool, from, to GraphRef) {
	p.w(kw)
	p.silent(silent)
	p.graphRef(from)
	p.w(" TO")
	p.graphRef(to)
}

func (p *printer) op(op UpdateOp) {
	switch x := op.(type) {
	case *InsertData:
		p.w("INSERT DATA ")
		p.quads(groundQuads(x.Quads))
	case *DeleteData:
		p.w("DELETE DATA ")
		p.quads(groundQuads(x.Quads))
	case *Modify:
		if x.ShortForm {
			p.w("DELETE WHERE ")
			p.quads(x.Delete)
			return
		}
		if x.With != "" {
			p.w("WITH ")
			p.iri(x.With)
			p.nl()
		}
		if x.Delete != nil {
			p.w("DELETE ")
			p.quads(x.Delete)
			p.nl()
		}
		if x.Insert != nil {
			p.w("INSERT ")
			p.quads(x.Insert)
			p.nl()
		}
		if x.Using != nil {
			for _, g := range x.Using.Default {
				p.w("USING ")
				p.iri(g)
				p.nl()
			}
			for _, g := range x.Using.Named {
				p.w("USING NAMED ")
				p.iri(g)
				p.nl()
			}
		}
		p.w("WHERE ")
		p.group(x.Pattern)
	case *Load:
		p.w("LOAD")
		p.silent(x.Silent)
		p.w(" ")
		p.iri(x.Source)
		if x.Into != "" {
			p.w(" INTO GRAPH ")
			p.iri(x.Into)
		}
	case *Clear:
		p.w("CLEAR")
		p.silent(x.Silent)
		p.target(x.Target)
	case *Drop:
		p.w("DROP")
		p.silent(x.Silent)
		p.target(x.Target)
	case *Create:
		p.w("CREATE")
		p.silent(x.Silent)
		p.w(" GRAPH ")
		p.iri(x.Graph)
	case *Copy:
		p.transfer("COPY", x.Silent, x.From, x.To)
	case *Move:
		p.transfer("MOVE", x.Silent, x.From, x.To)
	case *Add:
		p.transfer("ADD", x.Silent, x.From, x.To)
	default:
		panic("BUG: unknown update operation")
	}
}

// String prints q as a SPARQL query whose translation is q.
func (q *Query) String() string {
	var p printer
	p.query(q)
	return p.b.String()
}

// String prints u as a SPARQL update request whose translation is u.
func (u *Update) String() string {
	var p printer
	p.prologue(u.Base, u.Prefixes)
	for i, op := range u.Operations {
		if i > 0 {
			p.w(" ;\n")
		}
		p.op(op)
	}
	return p.b.String()
}

func patternString(pat Pattern) string {
	var p printer
	p.group(pat)
	return p.b.String()
}

func exprString(e Expr) string {
	var p printer
	p.expr(e)
	return p.b.String()
}

func pathString(x Path) string {
	var p printer
	p.path(x)
	return p.b.String()
}

func opString(op UpdateOp) string {
	var p printer
	p.op(op)
	return p.b.String()
}

func (x *BGP) String() string         { return patternString(x) }
func (x *PathPattern) String() string { return patternString(x) }
func (x *Join) String() string        { return patternString(x) }
func (x *LeftJoin) String() string    { return patternString(x) }
func (x *Filter) String() string      { return patternString(x) }
func (x *Union) String() string       { return patternString(x) }
func (x *Minus) String() string       { return patternString(x) }
func (x *Graph) String() string       { return patternString(x) }
func (x *Extend) String() string      { return patternString(x) }
func (x *Group) String() string       { return patternString(x) }
func (x *Values) String() string      { return patternString(x) }
func (x *Service) String() string     { return patternString(x) }
func (x *OrderBy) String() string     { return patternString(x) }
func (x *Project) String() string     { return patternString(x) }
func (x *Distinct) String() string    { return patternString(x) }
func (x *Reduced) String() string     { return patternString(x) }
func (x *Slice) String() string       { return patternString(x) }

func (x *LinkPath) String() string           { return pathString(x) }
func (x *InversePath) String() string        { return pathString(x) }
func (x *SequencePath) String() string       { return pathString(x) }
func (x *AlternativePath) String() string    { return pathString(x) }
func (x *ZeroOrMorePath) String() string     { return pathString(x) }
func (x *OneOrMorePath) String() string      { return pathString(x) }
func (x *ZeroOrOnePath) String() string      { return pathString(x) }
func (x *NegatedPropertySet) String() string { return pathString(x) }

func (x *VarExpr) String() string    { return exprString(x) }
func (x *TermExpr) String() string   { return exprString(x) }
func (x *UnaryExpr) String() string  { return exprString(x) }
func (x *BinaryExpr) String() string { return exprString(x) }
func (x *InExpr) String() string     { return exprString(x) }
func (x *CallExpr) String() string   { return exprString(x) }
func (x *FuncExpr) String() string   { return exprString(x) }
func (x *ExistsExpr) String() string { return exprString(x) }
func (x *Aggregate) String() string  { return exprString(x) }

func (x *InsertData) String() string { return opString(x) }
func (x *DeleteData) String() string { return opString(x) }
func (x *Modify) String() string     { return opString(x) }
func (x *Load) String() string       { return opString(x) }
func (x *Clear) String() string      { return opString(x) }
func (x *Drop) String() string       { return opString(x) }
func (x *Create) String() string     { return opString(x) }
func (x *Copy) String() string       { return opString(x) }
func (x *Move) String() string       { return opString(x) }
func (x *Add) String() string        { return opString(x) }
