package sparql

import (
	"context"
	"strconv"
	"strings"

	"github.com/antlr4-go/antlr/v4"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql/internal/parser"
)

// builder turns the parse tree into the algebra following §18.2. Semantic
// errors stop it through failf (a bailout panic recovered in parseWith).
type builder struct {
	base       string
	prefixes   map[string]string
	prefixList []Prefix

	usedLabels map[string]bool // blank node labels written in the text
	fresh      int

	// Blank node label scoping: the basic graph pattern (block) in which a
	// label was first used; a label may not appear in two.
	labelScope map[string]int
	scopeID    int
	curScope   int

	// aggs collects the aggregates of the SELECT clause, HAVING and ORDER
	// BY of the query being built; nil where aggregates are not allowed.
	aggs     *[]AggregateBinding
	aggCount int

	// template is set while building a CONSTRUCT template or update
	// quads: blank nodes stay blank-node terms.
	template bool
	// noBlank, noVars reject blank nodes / variables in update data.
	noBlank, noVars string
	// dataLabels scopes the blank node labels of INSERT DATA like those of
	// basic graph patterns (one operation may not reuse another's labels).
	dataLabels bool

	// ctx is the parse's context, checked once per group.
	ctx context.Context

	// text is the text as written; lifted are its dense VALUES blocks that
	// the parser saw empty (liftValues), by the position of their '{'.
	text   string
	lifted map[Pos]*liftedBlock
}

func newBuilder(tokens *antlr.CommonTokenStream) *builder {
	b := &builder{prefixes: map[string]string{}, labelScope: map[string]int{}}
	for _, t := range tokens.GetAllTokens() {
		if t.GetTokenType() == parser.SparqlLexerBLANK_NODE_LABEL {
			if b.usedLabels == nil {
				b.usedLabels = map[string]bool{}
			}
			b.usedLabels[t.GetText()[2:]] = true
		}
	}
	return b
}

func pos(ctx antlr.ParserRuleContext) Pos {
	t := ctx.GetStart()
	return Pos{Line: t.GetLine(), Col: t.GetColumn() + 1}
}

func tokPos(t antlr.Token) Pos { return Pos{Line: t.GetLine(), Col: t.GetColumn() + 1} }

// noDoubleDot rejects two '.' in a row inside a triples block, template or
// construct template. Our grammar writes these rules as
// "triples ( '.' triples? )*" for the parser's sake, which also accepts
// "?s ?p ?o . ."; the W3C grammar ("TriplesBlock ::= TriplesSameSubjectPath
// ( '.' TriplesBlock? )?") does not.
func noDoubleDot(ctx antlr.ParserRuleContext) {
	dot := false
	for _, ch := range ctx.GetChildren() {
		t, ok := ch.(antlr.TerminalNode)
		if !ok || t.GetText() != "." {
			dot = false
			continue
		}
		if dot {
			failf(tokPos(t.GetSymbol()), "'.' cannot follow '.' in a triples block")
		}
		dot = true
	}
}

func (b *builder) freshLabel() string {
	for {
		l := "b" + strconv.Itoa(b.fresh)
		b.fresh++
		if !b.usedLabels[l] {
			return l
		}
	}
}

// ---------------------------------------------------------------------------
// Prologue and terms

func (b *builder) prologue(ctx parser.IPrologueContext) {
	for _, c := range ctx.GetChildren() {
		switch d := c.(type) {
		case *parser.BaseDeclContext:
			b.base = b.resolve(d.IRIREF().GetSymbol())
		case *parser.PrefixDeclContext:
			name := d.PNAME_NS().GetText()
			name = name[:len(name)-1]
			iri := b.resolve(d.IRIREF().GetSymbol())
			b.prefixes[name] = iri
			b.prefixList = append(b.prefixList, Prefix{Name: name, IRI: iri})
		}
	}
}

// resolve returns the IRI of an IRIREF token, unescaped and resolved
// against the base.
func (b *builder) resolve(t antlr.Token) string {
	s := t.GetText()
	s = s[1 : len(s)-1]
	if strings.IndexByte(s, '\\') >= 0 {
		u, err := unescapeString(s)
		if err != nil {
			failf(tokPos(t), "%v in IRI", err)
		}
		s = u
	}
	return resolveIRI(b.base, s)
}

func (b *builder) iri(ctx parser.IIriContext) string {
	c := ctx.(*parser.IriContext)
	if t := c.IRIREF(); t != nil {
		return b.resolve(t.GetSymbol())
	}
	pn := c.PrefixedName().(*parser.PrefixedNameContext)
	var text string
	var tok antlr.Token
	if t := pn.PNAME_LN(); t != nil {
		tok = t.GetSymbol()
	} else {
		tok = pn.PNAME_NS().GetSymbol()
	}
	text = tok.GetText()
	i := strings.IndexByte(text, ':')
	ns, ok := b.prefixes[text[:i]]
	if !ok {
		failf(tokPos(tok), "undefined prefix %q", text[:i+1])
	}
	local := text[i+1:]
	if strings.IndexByte(local, '\\') >= 0 {
		var sb strings.Builder
		for j := 0; j < len(local); j++ {
			if local[j] == '\\' && j+1 < len(local) {
				j++
			}
			sb.WriteByte(local[j])
		}
		local = sb.String()
	}
	return ns + local
}

func (b *builder) stringLit(ctx parser.IStringContext) string {
	t := ctx.GetStart()
	s := t.GetText()
	switch t.GetTokenType() {
	case parser.SparqlLexerSTRING_LITERAL_LONG1, parser.SparqlLexerSTRING_LITERAL_LONG2:
		s = s[3 : len(s)-3]
	default:
		s = s[1 : len(s)-1]
	}
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	u, err := unescapeString(s)
	if err != nil {
		failf(tokPos(t), "%v in string", err)
	}
	return u
}

func (b *builder) rdfLiteral(ctx parser.IRdfLiteralContext) rdf.Term {
	c := ctx.(*parser.RdfLiteralContext)
	lex := b.stringLit(c.String_())
	if t := c.LANGTAG(); t != nil {
		return rdf.NewLangLiteral(lex, t.GetText()[1:])
	}
	if c.Iri() != nil {
		return rdf.NewLiteral(lex, b.iri(c.Iri()))
	}
	return rdf.NewLiteral(lex, "")
}

func numericDatatype(tokenType int) string {
	switch tokenType {
	case parser.SparqlLexerINTEGER, parser.SparqlLexerINTEGER_POSITIVE, parser.SparqlLexerINTEGER_NEGATIVE:
		return rdf.XSDInteger
	case parser.SparqlLexerDECIMAL, parser.SparqlLexerDECIMAL_POSITIVE, parser.SparqlLexerDECIMAL_NEGATIVE:
		return rdf.XSDDecimal
	}
	return rdf.XSDDouble
}

func numericTerm(t antlr.Token) rdf.Term {
	return rdf.NewLiteral(t.GetText(), numericDatatype(t.GetTokenType()))
}

func booleanTerm(ctx parser.IBooleanLiteralContext) rdf.Term {
	return rdf.NewLiteral(strings.ToLower(ctx.GetText()), rdf.XSDBoolean)
}

func variable(ctx parser.IVarContext) Var { return Var(ctx.GetText()[1:]) }

// blank returns the node for a blank node: a blank variable in patterns, a
// blank-node term in templates and data.
func (b *builder) blank(label string, p Pos, written bool) TermOrVar {
	if b.noBlank != "" {
		failf(p, "blank nodes are not allowed in %s", b.noBlank)
	}
	if b.template && !b.dataLabels {
		return NewTermRef(rdf.NewBlank(label))
	}
	if written {
		if s, ok := b.labelScope[label]; ok && s != b.curScope {
			failf(p, "blank node label _:%s is already used in another basic graph pattern or INSERT DATA", label)
		}
		b.labelScope[label] = b.curScope
	}
	if b.template {
		return NewTermRef(rdf.NewBlank(label))
	}
	return NewVarRef(Var("_:" + label))
}

func (b *builder) varOrTerm(ctx parser.IVarOrTermContext) TermOrVar {
	c := ctx.(*parser.VarOrTermContext)
	if v := c.Var_(); v != nil {
		return b.varRef(v)
	}
	g := c.GraphTerm().(*parser.GraphTermContext)
	switch {
	case g.Iri() != nil:
		return NewTermRef(rdf.NewIRI(b.iri(g.Iri())))
	case g.RdfLiteral() != nil:
		return NewTermRef(b.rdfLiteral(g.RdfLiteral()))
	case g.NumericLiteral() != nil:
		return NewTermRef(numericTerm(g.NumericLiteral().GetStart()))
	case g.BooleanLiteral() != nil:
		return NewTermRef(booleanTerm(g.BooleanLiteral()))
	case g.BlankNode() != nil:
		bn := g.BlankNode().(*parser.BlankNodeContext)
		if t := bn.BLANK_NODE_LABEL(); t != nil {
			return b.blank(t.GetText()[2:], pos(bn), true)
		}
		return b.blank(b.freshLabel(), pos(bn), false)
	default: // NIL
		return NewTermRef(rdf.NewIRI(rdf.RDFNil))
	}
}

func (b *builder) varOrIri(ctx parser.IVarOrIriContext) TermOrVar {
	c := ctx.(*parser.VarOrIriContext)
	if v := c.Var_(); v != nil {
		return b.varRef(v)
	}
	return NewTermRef(rdf.NewIRI(b.iri(c.Iri())))
}

// varRef is a variable in a subject, predicate, object or graph position;
// an error where variables are not allowed (b.noVars).
func (b *builder) varRef(v parser.IVarContext) TermOrVar {
	if b.noVars != "" {
		failf(pos(v), "variables are not allowed in %s", b.noVars)
	}
	return NewVarRef(variable(v))
}

// ---------------------------------------------------------------------------
// Triples

// triples collects the triple and path patterns of a block (or template)
// in order.
type triples struct {
	items []Pattern // *BGP with one triple, or *PathPattern
}

func (ts *triples) add(p Pos, s, pr, o TermOrVar) {
	ts.items = append(ts.items, &BGP{Pos: p, Triples: []TriplePattern{{Pos: p, S: s, P: pr, O: o}}})
}

// addPath adds s path o, rewriting links, inverse links and sequences into
// triple patterns (§18.2.2.4).
func (b *builder) addPath(ts *triples, p Pos, s TermOrVar, path Path, o TermOrVar) {
	switch x := path.(type) {
	case *LinkPath:
		ts.add(p, s, NewTermRef(rdf.NewIRI(x.IRI)), o)
		return
	case *InversePath:
		if l, ok := x.Path.(*LinkPath); ok {
			ts.add(p, o, NewTermRef(rdf.NewIRI(l.IRI)), s)
			return
		}
	case *SequencePath:
		v := NewVarRef(Var("_:" + b.freshLabel()))
		b.addPath(ts, p, s, x.Left, v)
		b.addPath(ts, p, v, x.Right, o)
		return
	}
	ts.items = append(ts.items, &PathPattern{Pos: p, S: s, Path: path, O: o})
}

func (b *builder) triplesSameSubject(ctx *parser.TriplesSameSubjectContext, ts *triples) {
	if vt := ctx.VarOrTerm(); vt != nil {
		s := b.varOrTerm(vt)
		b.propertyList(ctx.PropertyListNotEmpty(), s, ts)
		return
	}
	s := b.triplesNode(ctx.TriplesNode(), ts)
	if pl := ctx.PropertyList().(*parser.PropertyListContext).PropertyListNotEmpty(); pl != nil {
		b.propertyList(pl, s, ts)
	}
}

func (b *builder) propertyList(ctx parser.IPropertyListNotEmptyContext, s TermOrVar, ts *triples) {
	var verb TermOrVar
	for _, c := range ctx.GetChildren() {
		switch x := c.(type) {
		case *parser.VerbContext:
			if x.A() != nil {
				verb = NewTermRef(rdf.NewIRI(rdf.RDFType))
			} else {
				verb = b.varOrIri(x.VarOrIri())
			}
		case *parser.ObjectListContext:
			b.objectList(x, s, verb, ts)
		}
	}
}

func (b *builder) objectList(ctx *parser.ObjectListContext, s, verb TermOrVar, ts *triples) {
	for _, o := range ctx.AllObject() {
		oc := o.(*parser.ObjectContext)
		obj := b.graphNode(oc.GraphNode(), ts)
		ts.add(pos(oc), s, verb, obj)
	}
}

func (b *builder) graphNode(ctx parser.IGraphNodeContext, ts *triples) TermOrVar {
	c := ctx.(*parser.GraphNodeContext)
	if vt := c.VarOrTerm(); vt != nil {
		return b.varOrTerm(vt)
	}
	return b.triplesNode(c.TriplesNode(), ts)
}

func (b *builder) triplesNode(ctx parser.ITriplesNodeContext, ts *triples) TermOrVar {
	c := ctx.(*parser.TriplesNodeContext)
	if bl := c.BlankNodePropertyList(); bl != nil {
		n := b.blank(b.freshLabel(), pos(bl), false)
		b.propertyList(bl.(*parser.BlankNodePropertyListContext).PropertyListNotEmpty(), n, ts)
		return n
	}
	col := c.Collection().(*parser.CollectionContext)
	var items []TermOrVar
	for _, g := range col.AllGraphNode() {
		items = append(items, b.graphNode(g, ts))
	}
	return b.collection(pos(col), items, ts)
}

func (b *builder) collection(p Pos, items []TermOrVar, ts *triples) TermOrVar {
	first := NewTermRef(rdf.NewIRI(rdf.RDFFirst))
	rest := NewTermRef(rdf.NewIRI(rdf.RDFRest))
	nodes := make([]TermOrVar, len(items))
	for i := range items {
		nodes[i] = b.blank(b.freshLabel(), p, false)
	}
	for i, it := range items {
		ts.add(p, nodes[i], first, it)
		next := NewTermRef(rdf.NewIRI(rdf.RDFNil))
		if i+1 < len(items) {
			next = nodes[i+1]
		}
		ts.add(p, nodes[i], rest, next)
	}
	return nodes[0]
}

// Path variants of the triples rules.

func (b *builder) triplesSameSubjectPath(ctx *parser.TriplesSameSubjectPathContext, ts *triples) {
	if vt := ctx.VarOrTerm(); vt != nil {
		s := b.varOrTerm(vt)
		b.propertyListPath(ctx.PropertyListPathNotEmpty(), s, ts)
		return
	}
	s := b.triplesNodePath(ctx.TriplesNodePath(), ts)
	if pl := ctx.PropertyListPath().(*parser.PropertyListPathContext).PropertyListPathNotEmpty(); pl != nil {
		b.propertyListPath(pl, s, ts)
	}
}

func (b *builder) propertyListPath(ctx parser.IPropertyListPathNotEmptyContext, s TermOrVar, ts *triples) {
	var verb TermOrVar
	var path Path
	for _, c := range ctx.GetChildren() {
		switch x := c.(type) {
		case *parser.VerbPathContext:
			path = b.path(x.Path())
		case *parser.VerbSimpleContext:
			path = nil
			verb = NewVarRef(variable(x.Var_()))
		case *parser.ObjectListPathContext:
			for _, o := range x.AllObjectPath() {
				oc := o.(*parser.ObjectPathContext)
				obj := b.graphNodePath(oc.GraphNodePath(), ts)
				b.emit(ts, pos(oc), s, verb, path, obj)
			}
		case *parser.ObjectListContext:
			for _, o := range x.AllObject() {
				oc := o.(*parser.ObjectContext)
				obj := b.graphNode(oc.GraphNode(), ts)
				b.emit(ts, pos(oc), s, verb, path, obj)
			}
		}
	}
}

func (b *builder) emit(ts *triples, p Pos, s, verb TermOrVar, path Path, o TermOrVar) {
	if path != nil {
		b.addPath(ts, p, s, path, o)
		return
	}
	ts.add(p, s, verb, o)
}

func (b *builder) graphNodePath(ctx parser.IGraphNodePathContext, ts *triples) TermOrVar {
	c := ctx.(*parser.GraphNodePathContext)
	if vt := c.VarOrTerm(); vt != nil {
		return b.varOrTerm(vt)
	}
	return b.triplesNodePath(c.TriplesNodePath(), ts)
}

func (b *builder) triplesNodePath(ctx parser.ITriplesNodePathContext, ts *triples) TermOrVar {
	c := ctx.(*parser.TriplesNodePathContext)
	if bl := c.BlankNodePropertyListPath(); bl != nil {
		n := b.blank(b.freshLabel(), pos(bl), false)
		b.propertyListPath(bl.(*parser.BlankNodePropertyListPathContext).PropertyListPathNotEmpty(), n, ts)
		return n
	}
	col := c.CollectionPath().(*parser.CollectionPathContext)
	var items []TermOrVar
	for _, g := range col.AllGraphNodePath() {
		items = append(items, b.graphNodePath(g, ts))
	}
	return b.collection(pos(col), items, ts)
}

// ---------------------------------------------------------------------------
// Property paths

func (b *builder) path(ctx parser.IPathContext) Path {
	return b.pathAlternative(ctx.(*parser.PathContext).PathAlternative().(*parser.PathAlternativeContext))
}

func (b *builder) pathAlternative(ctx *parser.PathAlternativeContext) Path {
	var out Path
	var ch chain
	for _, s := range ctx.AllPathSequence() {
		ch.add(pos(s), "path alternatives")
		p := b.pathSequence(s.(*parser.PathSequenceContext))
		if out == nil {
			out = p
		} else {
			out = &AlternativePath{Pos: pos(ctx), Left: out, Right: p}
		}
	}
	return out
}

func (b *builder) pathSequence(ctx *parser.PathSequenceContext) Path {
	var out Path
	var ch chain
	for _, e := range ctx.AllPathEltOrInverse() {
		ec := e.(*parser.PathEltOrInverseContext)
		ch.add(pos(ec), "path steps")
		p := b.pathElt(ec.PathElt().(*parser.PathEltContext))
		if ec.HAT() != nil {
			p = &InversePath{Pos: pos(ec), Path: p}
		}
		if out == nil {
			out = p
		} else {
			out = &SequencePath{Pos: pos(ctx), Left: out, Right: p}
		}
	}
	return out
}

func (b *builder) pathElt(ctx *parser.PathEltContext) Path {
	pp := ctx.PathPrimary().(*parser.PathPrimaryContext)
	var p Path
	switch {
	case pp.Iri() != nil:
		p = &LinkPath{Pos: pos(pp), IRI: b.iri(pp.Iri())}
	case pp.A() != nil:
		p = &LinkPath{Pos: pos(pp), IRI: rdf.RDFType}
	case pp.PathNegatedPropertySet() != nil:
		nps := &NegatedPropertySet{Pos: pos(pp)}
		for _, o := range pp.PathNegatedPropertySet().(*parser.PathNegatedPropertySetContext).AllPathOneInPropertySet() {
			oc := o.(*parser.PathOneInPropertySetContext)
			iri := rdf.RDFType
			if oc.Iri() != nil {
				iri = b.iri(oc.Iri())
			}
			if oc.HAT() != nil {
				nps.Inverse = append(nps.Inverse, iri)
			} else {
				nps.Forward = append(nps.Forward, iri)
			}
		}
		p = nps
	default:
		p = b.path(pp.Path())
	}
	if m := ctx.PathMod(); m != nil {
		switch m.GetText() {
		case "*":
			p = &ZeroOrMorePath{Pos: pos(ctx), Path: p}
		case "+":
			p = &OneOrMorePath{Pos: pos(ctx), Path: p}
		default:
			p = &ZeroOrOnePath{Pos: pos(ctx), Path: p}
		}
	}
	return p
}

// ---------------------------------------------------------------------------
// Graph patterns

func isEmptyBGP(p Pattern) bool {
	if p == nil {
		return true
	}
	bgp, ok := p.(*BGP)
	return ok && len(bgp.Triples) == 0
}

// join is Join with the spec's simplification of the identity Z.
func join(p Pos, g, a Pattern) Pattern {
	switch {
	case isEmptyBGP(g) && g != nil && isEmptyBGP(a):
		return g
	case isEmptyBGP(g):
		if a == nil {
			return &BGP{Pos: p}
		}
		return a
	case isEmptyBGP(a):
		return g
	}
	return &Join{Pos: p, Left: g, Right: a}
}

func orZ(p Pos, g Pattern) Pattern {
	if g == nil {
		return &BGP{Pos: p}
	}
	return g
}

// blockPattern turns the items of a block into the left-deep join of its
// BGPs (adjacent triple patterns merged) and paths.
func blockPattern(items []Pattern) Pattern {
	var out Pattern
	var cur *BGP
	for _, it := range items {
		if t, ok := it.(*BGP); ok {
			if cur == nil {
				cur = &BGP{Pos: t.Pos}
			}
			cur.Triples = append(cur.Triples, t.Triples...)
			continue
		}
		if cur != nil {
			out = joinBlock(out, cur)
			cur = nil
		}
		out = joinBlock(out, it)
	}
	if cur != nil {
		out = joinBlock(out, cur)
	}
	return out
}

func joinBlock(l, r Pattern) Pattern {
	if l == nil {
		return r
	}
	return &Join{Pos: l.Position(), Left: l, Right: r}
}

func (b *builder) groupGraphPattern(ctx parser.IGroupGraphPatternContext) Pattern {
	c := ctx.(*parser.GroupGraphPatternContext)
	if s := c.SubSelect(); s != nil {
		return b.subSelect(s.(*parser.SubSelectContext))
	}
	gp := pos(c)
	sub := c.GroupGraphPatternSub()
	var g Pattern
	var filters []Expr
	var block []Pattern
	inBlock := false
	checkContext(b.ctx)
	var elems chain
	flush := func() {
		if len(block) > 0 {
			g = join(gp, g, blockPattern(block))
			block = nil
		}
		inBlock = false
	}
	for _, ch := range sub.GetChildren() {
		switch x := ch.(type) {
		case *parser.TriplesBlockContext:
			noDoubleDot(x)
			if !inBlock {
				b.scopeID++
				b.curScope = b.scopeID
				inBlock = true
			}
			var ts triples
			for _, t := range x.AllTriplesSameSubjectPath() {
				b.triplesSameSubjectPath(t.(*parser.TriplesSameSubjectPathContext), &ts)
			}
			block = append(block, ts.items...)
		case *parser.GraphPatternNotTriplesContext:
			elems.add(pos(x), "group elements")
			if f := x.Filter(); f != nil {
				filters = append(filters, b.constraint(f.(*parser.FilterContext).Constraint()))
				continue
			}
			flush()
			g = b.notTriples(gp, g, x)
		}
	}
	flush()
	g = orZ(gp, g)
	if len(filters) > 0 {
		g = &Filter{Pos: gp, Exprs: filters, Input: g}
	}
	return g
}

// hasOwnFilter reports whether the group has a FILTER of its own (not
// one of a nested group).
func hasOwnFilter(ctx parser.IGroupGraphPatternContext) bool {
	c := ctx.(*parser.GroupGraphPatternContext)
	if c.SubSelect() != nil || c.GroupGraphPatternSub() == nil {
		return false
	}
	sub := c.GroupGraphPatternSub()
	for _, ch := range sub.GetChildren() {
		if x, ok := ch.(*parser.GraphPatternNotTriplesContext); ok && x.Filter() != nil {
			return true
		}
	}
	return false
}

func (b *builder) notTriples(gp Pos, g Pattern, x *parser.GraphPatternNotTriplesContext) Pattern {
	switch {
	case x.GroupOrUnionGraphPattern() != nil:
		u := x.GroupOrUnionGraphPattern().(*parser.GroupOrUnionGraphPatternContext)
		var a Pattern
		var ch chain
		for _, gg := range u.AllGroupGraphPattern() {
			ch.add(pos(gg), "UNION branches")
			p := b.groupGraphPattern(gg)
			if a == nil {
				a = p
			} else {
				a = &Union{Pos: pos(u), Left: a, Right: p}
			}
		}
		return join(gp, g, a)
	case x.OptionalGraphPattern() != nil:
		o := x.OptionalGraphPattern().(*parser.OptionalGraphPatternContext)
		a := b.groupGraphPattern(o.GroupGraphPattern())
		lj := &LeftJoin{Pos: pos(o), Left: orZ(gp, g), Right: a}
		// Only the OPTIONAL group's own FILTERs become the LeftJoin's
		// expression (§18.2.2.6); a filter of a group nested in it stays
		// in that group's scope.
		if f, ok := a.(*Filter); ok && hasOwnFilter(o.GroupGraphPattern()) {
			lj.Right = f.Input
			lj.Expr = conjunction(f.Exprs)
		}
		return lj
	case x.MinusGraphPattern() != nil:
		m := x.MinusGraphPattern().(*parser.MinusGraphPatternContext)
		return &Minus{Pos: pos(m), Left: orZ(gp, g), Right: b.groupGraphPattern(m.GroupGraphPattern())}
	case x.GraphGraphPattern() != nil:
		gg := x.GraphGraphPattern().(*parser.GraphGraphPatternContext)
		name := b.varOrIri(gg.VarOrIri())
		return join(gp, g, &Graph{Pos: pos(gg), Name: name, Input: b.groupGraphPattern(gg.GroupGraphPattern())})
	case x.ServiceGraphPattern() != nil:
		s := x.ServiceGraphPattern().(*parser.ServiceGraphPatternContext)
		name := b.varOrIri(s.VarOrIri())
		return join(gp, g, &Service{Pos: pos(s), Silent: s.SILENT() != nil, Name: name, Input: b.groupGraphPattern(s.GroupGraphPattern())})
	case x.Bind() != nil:
		bc := x.Bind().(*parser.BindContext)
		v := variable(bc.Var_())
		e := b.expression(bc.Expression())
		in := orZ(gp, g)
		if containsVar(inScope(in), v) {
			failf(pos(bc.Var_()), "BIND: variable ?%s is already in scope", v)
		}
		return &Extend{Pos: pos(bc), Input: in, Var: v, Expr: e}
	case x.InlineData() != nil:
		d := x.InlineData().(*parser.InlineDataContext)
		return join(gp, g, b.dataBlock(d.DataBlock()))
	}
	panic("BUG: unknown GraphPatternNotTriples alternative")
}

func conjunction(es []Expr) Expr {
	out := es[0]
	for _, e := range es[1:] {
		out = &BinaryExpr{Pos: out.Position(), Op: "&&", L: out, R: e}
	}
	return out
}

func (b *builder) dataBlock(ctx parser.IDataBlockContext) *Values {
	c := ctx.(*parser.DataBlockContext)
	if one := c.InlineDataOneVar(); one != nil {
		o := one.(*parser.InlineDataOneVarContext)
		v := &Values{Pos: pos(o), Vars: []Var{variable(o.Var_())}}
		for _, d := range o.AllDataBlockValue() {
			v.Rows = append(v.Rows, []rdf.Term{b.dataBlockValue(d)})
		}
		if lb := b.lifted[tokPos(o.LBRACE().GetSymbol())]; lb != nil {
			b.liftedRows(v, lb, true)
		}
		return v
	}
	f := c.InlineDataFull().(*parser.InlineDataFullContext)
	v := &Values{Pos: pos(f)}
	inRows := false
	var row []rdf.Term
	var rowPos Pos
	for _, ch := range f.GetChildren() {
		switch x := ch.(type) {
		case *parser.VarContext:
			v.Vars = append(v.Vars, variable(x))
		case *parser.DataBlockValueContext:
			row = append(row, b.dataBlockValue(x))
		case antlr.TerminalNode:
			switch x.GetSymbol().GetTokenType() {
			case parser.SparqlLexerLBRACE:
				inRows = true
				if lb := b.lifted[tokPos(x.GetSymbol())]; lb != nil {
					b.liftedRows(v, lb, false)
				}
			case parser.SparqlLexerLPAREN:
				if inRows {
					row = []rdf.Term{}
					rowPos = tokPos(x.GetSymbol())
				}
			case parser.SparqlLexerNIL:
				if inRows {
					b.addRow(v, []rdf.Term{}, tokPos(x.GetSymbol()))
				}
			case parser.SparqlLexerRPAREN:
				if inRows {
					b.addRow(v, row, rowPos)
					row = nil
				}
			}
		}
	}
	return v
}

func (b *builder) addRow(v *Values, row []rdf.Term, p Pos) {
	if len(row) != len(v.Vars) {
		failf(p, "VALUES row has %d values for %d variables", len(row), len(v.Vars))
	}
	v.Rows = append(v.Rows, row)
}

func (b *builder) dataBlockValue(ctx parser.IDataBlockValueContext) rdf.Term {
	c := ctx.(*parser.DataBlockValueContext)
	switch {
	case c.Iri() != nil:
		return rdf.NewIRI(b.iri(c.Iri()))
	case c.RdfLiteral() != nil:
		return b.rdfLiteral(c.RdfLiteral())
	case c.NumericLiteral() != nil:
		return numericTerm(c.NumericLiteral().GetStart())
	case c.BooleanLiteral() != nil:
		return booleanTerm(c.BooleanLiteral())
	}
	return rdf.Term{} // UNDEF
}

// ---------------------------------------------------------------------------
// Variable scope (§18.2.1)

func containsVar(vs []Var, v Var) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// inScope returns the in-scope variables of p in order of first
// appearance (hidden ones included).
func inScope(p Pattern) []Var {
	var out []Var
	seen := map[Var]bool{}
	add := func(v Var) {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	var walk func(p Pattern)
	walk = func(p Pattern) {
		switch x := p.(type) {
		case *BGP:
			for _, t := range x.Triples {
				add(t.S.Var)
				add(t.P.Var)
				add(t.O.Var)
			}
		case *PathPattern:
			add(x.S.Var)
			add(x.O.Var)
		case *Join:
			walk(x.Left)
			walk(x.Right)
		case *LeftJoin:
			walk(x.Left)
			walk(x.Right)
		case *Union:
			walk(x.Left)
			walk(x.Right)
		case *Minus:
			walk(x.Left)
		case *Filter:
			walk(x.Input)
		case *Graph:
			add(x.Name.Var)
			walk(x.Input)
		case *Service:
			add(x.Name.Var)
			walk(x.Input)
		case *Extend:
			walk(x.Input)
			add(x.Var)
		case *Group:
			for _, k := range x.Keys {
				if v, ok := k.(*VarExpr); ok {
					add(v.Var)
				}
			}
			for _, a := range x.Aggregates {
				add(a.Var)
			}
		case *Values:
			for _, v := range x.Vars {
				add(v)
			}
		case *OrderBy:
			walk(x.Input)
		case *Distinct:
			walk(x.Input)
		case *Reduced:
			walk(x.Input)
		case *Slice:
			walk(x.Input)
		case *Project:
			for _, v := range x.Vars {
				add(v)
			}
		}
	}
	walk(p)
	return out
}

func visible(vs []Var) []Var {
	out := []Var{}
	for _, v := range vs {
		if v.Visible() {
			out = append(out, v)
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// Queries

func (b *builder) query(ctx *parser.QueryContext) *Query {
	b.prologue(ctx.Prologue())
	q := &Query{Pos: pos(ctx)}
	values := b.valuesClause(ctx.ValuesClause())
	switch {
	case ctx.SelectQuery() != nil:
		s := ctx.SelectQuery().(*parser.SelectQueryContext)
		q.Form = FormSelect
		q.Dataset = b.dataset(s.AllDatasetClause())
		q.Pattern, q.Vars, q.Star = b.selectPattern(s.SelectClause(), s.WhereClause(), s.SolutionModifier(), values)
	case ctx.ConstructQuery() != nil:
		c := ctx.ConstructQuery().(*parser.ConstructQueryContext)
		q.Form = FormConstruct
		q.Dataset = b.dataset(c.AllDatasetClause())
		if t := c.ConstructTemplate(); t != nil {
			if ct := t.(*parser.ConstructTemplateContext).ConstructTriples(); ct != nil {
				noDoubleDot(ct)
				q.Template = b.templateTriples(ct.(*parser.ConstructTriplesContext).AllTriplesSameSubject())
			}
			where := b.whereClause(c.WhereClause())
			q.Pattern = b.modifiers(c.SolutionModifier(), join(where.Position(), where, asPattern(values)), false)
		} else {
			var tss []parser.ITriplesSameSubjectContext
			if tt := c.TriplesTemplate(); tt != nil {
				noDoubleDot(tt)
				tss = tt.(*parser.TriplesTemplateContext).AllTriplesSameSubject()
			}
			q.Template = b.templateTriples(tss)
			b.scopeID++
			b.curScope = b.scopeID
			var ts triples
			for _, t := range tss {
				b.triplesSameSubject(t.(*parser.TriplesSameSubjectContext), &ts)
			}
			where := orZ(pos(c), blockPattern(ts.items))
			q.Pattern = b.modifiers(c.SolutionModifier(), join(where.Position(), where, asPattern(values)), false)
		}
	case ctx.AskQuery() != nil:
		a := ctx.AskQuery().(*parser.AskQueryContext)
		q.Form = FormAsk
		q.Dataset = b.dataset(a.AllDatasetClause())
		where := b.whereClause(a.WhereClause())
		q.Pattern = b.modifiers(a.SolutionModifier(), join(where.Position(), where, asPattern(values)), false)
	case ctx.DescribeQuery() != nil:
		d := ctx.DescribeQuery().(*parser.DescribeQueryContext)
		q.Form = FormDescribe
		q.Dataset = b.dataset(d.AllDatasetClause())
		for _, t := range d.AllVarOrIri() {
			q.Describe = append(q.Describe, b.varOrIri(t))
		}
		sm := d.SolutionModifier()
		if d.WhereClause() != nil || values != nil || sm.GetChildCount() > 0 {
			var where Pattern = &BGP{Pos: pos(d)}
			if d.WhereClause() != nil {
				where = b.whereClause(d.WhereClause())
			}
			q.Pattern = b.modifiers(sm, join(where.Position(), where, asPattern(values)), false)
		}
		if d.STAR() != nil {
			q.Star = true
			if q.Pattern != nil {
				for _, v := range visible(inScope(q.Pattern)) {
					q.Describe = append(q.Describe, NewVarRef(v))
				}
			}
		}
	}
	q.Base = b.base
	q.Prefixes = b.prefixList
	return q
}

// asPattern avoids a typed nil in the Pattern interface.
func asPattern(v *Values) Pattern {
	if v == nil {
		return nil
	}
	return v
}

func (b *builder) valuesClause(ctx parser.IValuesClauseContext) *Values {
	if ctx == nil {
		return nil
	}
	c := ctx.(*parser.ValuesClauseContext)
	if c.DataBlock() == nil {
		return nil
	}
	return b.dataBlock(c.DataBlock())
}

func (b *builder) dataset(cs []parser.IDatasetClauseContext) *Dataset {
	if len(cs) == 0 {
		return nil
	}
	d := &Dataset{}
	for _, c := range cs {
		dc := c.(*parser.DatasetClauseContext)
		iri := b.iri(dc.Iri())
		if dc.NAMED() != nil {
			d.Named = append(d.Named, iri)
		} else {
			d.Default = append(d.Default, iri)
		}
	}
	return d
}

func (b *builder) whereClause(ctx parser.IWhereClauseContext) Pattern {
	return b.groupGraphPattern(ctx.(*parser.WhereClauseContext).GroupGraphPattern())
}

func (b *builder) templateTriples(tss []parser.ITriplesSameSubjectContext) []TriplePattern {
	saved := b.template
	b.template = true
	defer func() { b.template = saved }()
	var ts triples
	for _, t := range tss {
		b.triplesSameSubject(t.(*parser.TriplesSameSubjectContext), &ts)
	}
	out := make([]TriplePattern, 0, len(ts.items))
	for _, it := range ts.items {
		out = append(out, it.(*BGP).Triples...)
	}
	return out
}

func (b *builder) subSelect(ctx *parser.SubSelectContext) Pattern {
	values := b.valuesClause(ctx.ValuesClause())
	p, _, _ := b.selectPattern(ctx.SelectClause(), ctx.WhereClause(), ctx.SolutionModifier(), values)
	return p
}

// selectPattern translates a SELECT (§18.2.4–18.2.5): grouping and
// aggregates, HAVING, VALUES, select expressions, ORDER BY, projection,
// DISTINCT/REDUCED and slicing.
func (b *builder) selectPattern(selCtx parser.ISelectClauseContext, whereCtx parser.IWhereClauseContext,
	smCtx parser.ISolutionModifierContext, values *Values) (Pattern, []Var, bool) {
	sel := selCtx.(*parser.SelectClauseContext)
	sm := smCtx.(*parser.SolutionModifierContext)
	p := b.whereClause(whereCtx)
	wherePos := p.Position()

	// GROUP BY keys (with their Extends below the grouping).
	var keys []Expr
	grouped := map[Var]bool{}
	if gc := sm.GroupClause(); gc != nil {
		for _, c := range gc.(*parser.GroupClauseContext).AllGroupCondition() {
			cc := c.(*parser.GroupConditionContext)
			switch {
			case cc.BuiltInCall() != nil:
				keys = append(keys, b.builtInCall(cc.BuiltInCall()))
			case cc.FunctionCall() != nil:
				keys = append(keys, b.functionCall(cc.FunctionCall()))
			case cc.Expression() != nil:
				e := b.expression(cc.Expression())
				if cc.Var_() != nil {
					v := variable(cc.Var_())
					p = &Extend{Pos: pos(cc), Input: p, Var: v, Expr: e}
					e = &VarExpr{Pos: pos(cc.Var_()), Var: v}
					grouped[v] = true
				}
				keys = append(keys, e)
			default:
				v := variable(cc.Var_())
				keys = append(keys, &VarExpr{Pos: pos(cc), Var: v})
				grouped[v] = true
			}
		}
	}

	// The SELECT clause, with aggregates collected.
	var aggs []AggregateBinding
	b.aggs = &aggs
	type item struct {
		v     Var
		e     Expr
		p, vp Pos // of the item and of its variable
		expr  bool
	}
	var items []item
	star := sel.STAR() != nil
	for _, sv := range sel.AllSelectVar() {
		s := sv.(*parser.SelectVarContext)
		v := variable(s.Var_())
		for _, it := range items {
			if it.v == v {
				failf(pos(s.Var_()), "variable ?%s is projected twice", v)
			}
		}
		if s.Expression() == nil {
			items = append(items, item{v: v, p: pos(s)})
			continue
		}
		e := b.expression(s.Expression())
		items = append(items, item{v: v, e: e, p: pos(s), vp: pos(s.Var_()), expr: true})
	}
	var having []Expr
	if hc := sm.HavingClause(); hc != nil {
		for _, c := range hc.(*parser.HavingClauseContext).AllConstraint() {
			having = append(having, b.constraint(c))
		}
	}
	var conds []OrderCond
	if oc := sm.OrderClause(); oc != nil {
		conds = b.orderConds(oc.(*parser.OrderClauseContext))
	}
	b.aggs = nil

	if keys != nil || having != nil || len(aggs) > 0 {
		if star {
			failf(tokPos(sel.STAR().GetSymbol()), "SELECT * is not allowed with GROUP BY or aggregates")
		}
		p = &Group{Pos: wherePos, Input: p, Keys: keys, Aggregates: aggs}
		if having != nil {
			p = &Filter{Pos: pos(sm.HavingClause()), Exprs: having, Input: p}
		}
		// Projected variables must be grouped; select expressions may use
		// grouped variables, aggregates and earlier select expressions.
		allowed := map[Var]bool{}
		for v := range grouped {
			allowed[v] = true
		}
		for _, it := range items {
			if !it.expr {
				if !allowed[it.v] {
					failf(it.p, "variable ?%s is projected but neither grouped nor aggregated", it.v)
				}
				continue
			}
			if v, ok := ungroupedVar(it.e, allowed); ok {
				failf(it.p, "variable ?%s is used in a select expression but neither grouped nor aggregated", v)
			}
			allowed[it.v] = true
		}
	}
	if values != nil {
		p = join(wherePos, p, values)
	}
	for _, it := range items {
		if it.expr {
			if containsVar(inScope(p), it.v) {
				failf(it.vp, "select expression: variable ?%s is already in scope", it.v)
			}
			p = &Extend{Pos: it.p, Input: p, Var: it.v, Expr: it.e}
		}
	}
	if conds != nil {
		p = &OrderBy{Pos: pos(sm.OrderClause()), Input: p, Conds: conds}
	}
	var vars []Var
	if star {
		vars = visible(inScope(p))
	} else {
		vars = make([]Var, len(items))
		for i, it := range items {
			vars[i] = it.v
		}
	}
	p = &Project{Pos: pos(sel), Input: p, Vars: vars}
	switch {
	case sel.DISTINCT() != nil:
		p = &Distinct{Pos: pos(sel), Input: p}
	case sel.REDUCED() != nil:
		p = &Reduced{Pos: pos(sel), Input: p}
	}
	return b.slice(sm, p), vars, star
}

// ungroupedVar returns a variable of e (outside aggregates, which are
// already replaced by hidden variables) that is not allowed.
func ungroupedVar(e Expr, allowed map[Var]bool) (Var, bool) {
	var bad Var
	var walk func(e Expr)
	walk = func(e Expr) {
		if bad != "" {
			return
		}
		switch x := e.(type) {
		case *VarExpr:
			if !x.Var.IsAggregate() && !allowed[x.Var] {
				bad = x.Var
			}
		case *UnaryExpr:
			walk(x.X)
		case *BinaryExpr:
			walk(x.L)
			walk(x.R)
		case *InExpr:
			walk(x.X)
			for _, a := range x.List {
				walk(a)
			}
		case *CallExpr:
			for _, a := range x.Args {
				walk(a)
			}
		case *FuncExpr:
			for _, a := range x.Args {
				walk(a)
			}
		}
	}
	walk(e)
	return bad, bad != ""
}

// modifiers applies the solution modifiers of a CONSTRUCT, ASK or
// DESCRIBE (grouping there has no projection to check but is translated).
func (b *builder) modifiers(smCtx parser.ISolutionModifierContext, p Pattern, _ bool) Pattern {
	sm := smCtx.(*parser.SolutionModifierContext)
	var keys []Expr
	if gc := sm.GroupClause(); gc != nil {
		for _, c := range gc.(*parser.GroupClauseContext).AllGroupCondition() {
			cc := c.(*parser.GroupConditionContext)
			switch {
			case cc.BuiltInCall() != nil:
				keys = append(keys, b.builtInCall(cc.BuiltInCall()))
			case cc.FunctionCall() != nil:
				keys = append(keys, b.functionCall(cc.FunctionCall()))
			case cc.Expression() != nil:
				e := b.expression(cc.Expression())
				if cc.Var_() != nil {
					v := variable(cc.Var_())
					p = &Extend{Pos: pos(cc), Input: p, Var: v, Expr: e}
					e = &VarExpr{Pos: pos(cc.Var_()), Var: v}
				}
				keys = append(keys, e)
			default:
				keys = append(keys, &VarExpr{Pos: pos(cc), Var: variable(cc.Var_())})
			}
		}
	}
	var aggs []AggregateBinding
	b.aggs = &aggs
	var having []Expr
	if hc := sm.HavingClause(); hc != nil {
		for _, c := range hc.(*parser.HavingClauseContext).AllConstraint() {
			having = append(having, b.constraint(c))
		}
	}
	var conds []OrderCond
	if oc := sm.OrderClause(); oc != nil {
		conds = b.orderConds(oc.(*parser.OrderClauseContext))
	}
	b.aggs = nil
	if keys != nil || having != nil || len(aggs) > 0 {
		p = &Group{Pos: p.Position(), Input: p, Keys: keys, Aggregates: aggs}
		if having != nil {
			p = &Filter{Pos: pos(sm.HavingClause()), Exprs: having, Input: p}
		}
	}
	if conds != nil {
		p = &OrderBy{Pos: pos(sm.OrderClause()), Input: p, Conds: conds}
	}
	return b.slice(sm, p)
}

func (b *builder) orderConds(oc *parser.OrderClauseContext) []OrderCond {
	var conds []OrderCond
	for _, c := range oc.AllOrderCondition() {
		cc := c.(*parser.OrderConditionContext)
		switch {
		case cc.BrackettedExpression() != nil:
			conds = append(conds, OrderCond{
				Expr: b.expression(cc.BrackettedExpression().(*parser.BrackettedExpressionContext).Expression()),
				Desc: cc.DESC() != nil,
			})
		case cc.Constraint() != nil:
			conds = append(conds, OrderCond{Expr: b.constraint(cc.Constraint())})
		default:
			conds = append(conds, OrderCond{Expr: &VarExpr{Pos: pos(cc), Var: variable(cc.Var_())}})
		}
	}
	return conds
}

func (b *builder) slice(sm *parser.SolutionModifierContext, p Pattern) Pattern {
	lo := sm.LimitOffsetClauses()
	if lo == nil {
		return p
	}
	l := lo.(*parser.LimitOffsetClausesContext)
	s := &Slice{Pos: pos(l), Input: p, Limit: -1}
	if lc := l.LimitClause(); lc != nil {
		s.Limit = b.count(lc.(*parser.LimitClauseContext).INTEGER().GetSymbol())
	}
	if oc := l.OffsetClause(); oc != nil {
		s.Offset = b.count(oc.(*parser.OffsetClauseContext).INTEGER().GetSymbol())
	}
	return s
}

func (b *builder) count(t antlr.Token) int64 {
	n, err := strconv.ParseInt(t.GetText(), 10, 64)
	if err != nil {
		failf(tokPos(t), "number %s is out of range", t.GetText())
	}
	return n
}

// ---------------------------------------------------------------------------
// Expressions

func (b *builder) constraint(ctx parser.IConstraintContext) Expr {
	c := ctx.(*parser.ConstraintContext)
	switch {
	case c.BrackettedExpression() != nil:
		return b.expression(c.BrackettedExpression().(*parser.BrackettedExpressionContext).Expression())
	case c.BuiltInCall() != nil:
		return b.builtInCall(c.BuiltInCall())
	}
	return b.functionCall(c.FunctionCall())
}

func (b *builder) functionCall(ctx parser.IFunctionCallContext) Expr {
	c := ctx.(*parser.FunctionCallContext)
	return b.call(pos(c), b.iri(c.Iri()), c.ArgList().(*parser.ArgListContext))
}

func (b *builder) call(p Pos, iri string, al *parser.ArgListContext) Expr {
	f := &FuncExpr{Pos: p, IRI: iri, Distinct: al.DISTINCT() != nil, Args: []Expr{}}
	for _, e := range al.AllExpression() {
		f.Args = append(f.Args, b.expression(e))
	}
	return f
}

func (b *builder) expression(ctx parser.IExpressionContext) Expr {
	or := ctx.(*parser.ExpressionContext).ConditionalOrExpression().(*parser.ConditionalOrExpressionContext)
	var out Expr
	var ch chain
	for _, a := range or.AllConditionalAndExpression() {
		ch.add(pos(a), "|| operands")
		e := b.andExpr(a.(*parser.ConditionalAndExpressionContext))
		if out == nil {
			out = e
		} else {
			out = &BinaryExpr{Pos: pos(or), Op: "||", L: out, R: e}
		}
	}
	return out
}

func (b *builder) andExpr(ctx *parser.ConditionalAndExpressionContext) Expr {
	var out Expr
	var ch chain
	for _, v := range ctx.AllValueLogical() {
		ch.add(pos(v), "&& operands")
		e := b.relational(v.(*parser.ValueLogicalContext).RelationalExpression().(*parser.RelationalExpressionContext))
		if out == nil {
			out = e
		} else {
			out = &BinaryExpr{Pos: pos(ctx), Op: "&&", L: out, R: e}
		}
	}
	return out
}

func (b *builder) relational(ctx *parser.RelationalExpressionContext) Expr {
	ns := ctx.AllNumericExpression()
	l := b.additive(ns[0].(*parser.NumericExpressionContext).AdditiveExpression().(*parser.AdditiveExpressionContext))
	switch {
	case len(ns) == 2:
		r := b.additive(ns[1].(*parser.NumericExpressionContext).AdditiveExpression().(*parser.AdditiveExpressionContext))
		return &BinaryExpr{Pos: pos(ctx), Op: ctx.GetOp().GetText(), L: l, R: r}
	case ctx.IN() != nil:
		return &InExpr{Pos: pos(ctx), X: l, List: b.expressionList(ctx.ExpressionList()), Not: ctx.NOT() != nil}
	}
	return l
}

func (b *builder) expressionList(ctx parser.IExpressionListContext) []Expr {
	out := []Expr{}
	for _, e := range ctx.(*parser.ExpressionListContext).AllExpression() {
		out = append(out, b.expression(e))
	}
	return out
}

func (b *builder) additive(ctx *parser.AdditiveExpressionContext) Expr {
	out := b.multiplicative(ctx.MultiplicativeExpression().(*parser.MultiplicativeExpressionContext))
	ch := chain{n: 1}
	for _, t := range ctx.AllAdditiveTail() {
		tc := t.(*parser.AdditiveTailContext)
		ch.add(pos(tc), "+ and - operands")
		if m := tc.MultiplicativeExpression(); m != nil {
			r := b.multiplicative(m.(*parser.MultiplicativeExpressionContext))
			out = &BinaryExpr{Pos: pos(tc), Op: tc.GetOp().GetText(), L: out, R: r}
			continue
		}
		// "?a -1" and "?a +1.5 * ?b": the signed literal is the operator
		// and an unsigned literal.
		var tok antlr.Token
		if n := tc.NumericLiteralPositive(); n != nil {
			tok = n.GetStart()
		} else {
			tok = tc.NumericLiteralNegative().GetStart()
		}
		text := tok.GetText()
		var r Expr = &TermExpr{Pos: tokPos(tok), Term: rdf.NewLiteral(text[1:], numericDatatype(tok.GetTokenType()))}
		r = b.multiplicativeTails(r, tc.AllMultiplicativeTail())
		out = &BinaryExpr{Pos: tokPos(tok), Op: text[:1], L: out, R: r}
	}
	return out
}

func (b *builder) multiplicative(ctx *parser.MultiplicativeExpressionContext) Expr {
	out := b.unary(ctx.UnaryExpression().(*parser.UnaryExpressionContext))
	return b.multiplicativeTails(out, ctx.AllMultiplicativeTail())
}

func (b *builder) multiplicativeTails(out Expr, tails []parser.IMultiplicativeTailContext) Expr {
	ch := chain{n: 1}
	for _, t := range tails {
		tc := t.(*parser.MultiplicativeTailContext)
		ch.add(pos(tc), "* and / operands")
		r := b.unary(tc.UnaryExpression().(*parser.UnaryExpressionContext))
		out = &BinaryExpr{Pos: pos(tc), Op: tc.GetOp().GetText(), L: out, R: r}
	}
	return out
}

func (b *builder) unary(ctx *parser.UnaryExpressionContext) Expr {
	e := b.primary(ctx.PrimaryExpression().(*parser.PrimaryExpressionContext))
	if op := ctx.GetOp(); op != nil {
		return &UnaryExpr{Pos: pos(ctx), Op: op.GetText(), X: e}
	}
	return e
}

func (b *builder) primary(ctx *parser.PrimaryExpressionContext) Expr {
	p := pos(ctx)
	switch {
	case ctx.BrackettedExpression() != nil:
		return b.expression(ctx.BrackettedExpression().(*parser.BrackettedExpressionContext).Expression())
	case ctx.BuiltInCall() != nil:
		return b.builtInCall(ctx.BuiltInCall())
	case ctx.IriOrFunction() != nil:
		f := ctx.IriOrFunction().(*parser.IriOrFunctionContext)
		iri := b.iri(f.Iri())
		if al := f.ArgList(); al != nil {
			return b.call(p, iri, al.(*parser.ArgListContext))
		}
		return &TermExpr{Pos: p, Term: rdf.NewIRI(iri)}
	case ctx.RdfLiteral() != nil:
		return &TermExpr{Pos: p, Term: b.rdfLiteral(ctx.RdfLiteral())}
	case ctx.NumericLiteral() != nil:
		return &TermExpr{Pos: p, Term: numericTerm(ctx.NumericLiteral().GetStart())}
	case ctx.BooleanLiteral() != nil:
		return &TermExpr{Pos: p, Term: booleanTerm(ctx.BooleanLiteral())}
	}
	return &VarExpr{Pos: p, Var: variable(ctx.Var_())}
}

// builtinName maps the keyword of a built-in to the name in CallExpr.
func builtinName(t antlr.Token) string {
	switch t.GetTokenType() {
	case parser.SparqlLexerURI:
		return "IRI"
	case parser.SparqlLexerISURI:
		return "ISIRI"
	}
	return strings.ToUpper(t.GetText())
}

func (b *builder) builtInCall(ctx parser.IBuiltInCallContext) Expr {
	c := ctx.(*parser.BuiltInCallContext)
	p := pos(c)
	switch {
	case c.Aggregate() != nil:
		return b.aggregate(c.Aggregate().(*parser.AggregateContext))
	case c.ExistsFunc() != nil:
		return b.exists(p, false, c.ExistsFunc().(*parser.ExistsFuncContext).GroupGraphPattern())
	case c.NotExistsFunc() != nil:
		return b.exists(p, true, c.NotExistsFunc().(*parser.NotExistsFuncContext).GroupGraphPattern())
	}
	call := &CallExpr{Pos: p, Name: builtinName(c.GetName()), Args: []Expr{}}
	for _, ch := range c.GetChildren() {
		switch x := ch.(type) {
		case *parser.ExpressionContext:
			call.Args = append(call.Args, b.expression(x))
		case *parser.VarContext:
			call.Args = append(call.Args, &VarExpr{Pos: pos(x), Var: variable(x)})
		case *parser.ExpressionListContext:
			call.Args = append(call.Args, b.expressionList(x)...)
		}
	}
	return call
}

func (b *builder) exists(p Pos, not bool, g parser.IGroupGraphPatternContext) Expr {
	saved := b.aggs
	b.aggs = nil
	defer func() { b.aggs = saved }()
	return &ExistsExpr{Pos: p, Not: not, Pattern: b.groupGraphPattern(g)}
}

func (b *builder) aggregate(ctx *parser.AggregateContext) Expr {
	p := pos(ctx)
	if b.aggs == nil {
		failf(p, "aggregate %s is not allowed here (only in SELECT, HAVING and ORDER BY, not nested)", strings.ToUpper(ctx.GetName().GetText()))
	}
	list := b.aggs
	b.aggs = nil // no nested aggregates
	a := &Aggregate{Pos: p, Name: strings.ToUpper(ctx.GetName().GetText()), Distinct: ctx.DISTINCT() != nil}
	if e := ctx.Expression(); e != nil {
		a.Arg = b.expression(e)
	}
	if a.Name == "GROUP_CONCAT" {
		a.Separator = " "
		if s := ctx.String_(); s != nil {
			a.Separator = b.stringLit(s)
		}
	}
	b.aggs = list
	v := Var(".agg" + strconv.Itoa(b.aggCount))
	b.aggCount++
	*list = append(*list, AggregateBinding{Var: v, Agg: a})
	return &VarExpr{Pos: p, Var: v}
}

// ---------------------------------------------------------------------------
// Updates

func (b *builder) update(ctx *parser.UpdateContext) *Update {
	u := &Update{Pos: pos(ctx)}
	for _, ch := range ctx.GetChildren() {
		switch x := ch.(type) {
		case *parser.PrologueContext:
			b.prologue(x)
		case *parser.Update1Context:
			u.Operations = append(u.Operations, b.update1(x))
		}
	}
	u.Base = b.base
	u.Prefixes = b.prefixList
	return u
}

func (b *builder) update1(ctx *parser.Update1Context) UpdateOp {
	p := pos(ctx)
	switch x := ctx.GetChild(0).(type) {
	case *parser.LoadContext:
		l := &Load{Pos: p, Silent: x.SILENT() != nil, Source: b.iri(x.Iri())}
		if g := x.GraphRef(); g != nil {
			l.Into = b.iri(g.(*parser.GraphRefContext).Iri())
		}
		return l
	case *parser.ClearContext:
		return &Clear{Pos: p, Silent: x.SILENT() != nil, Target: b.graphRefAll(x.GraphRefAll())}
	case *parser.DropContext:
		return &Drop{Pos: p, Silent: x.SILENT() != nil, Target: b.graphRefAll(x.GraphRefAll())}
	case *parser.CreateContext:
		return &Create{Pos: p, Silent: x.SILENT() != nil, Graph: b.iri(x.GraphRef().(*parser.GraphRefContext).Iri())}
	case *parser.AddContext:
		return &Add{Pos: p, Silent: x.SILENT() != nil, From: b.graphOrDefault(x.GraphOrDefault(0)), To: b.graphOrDefault(x.GraphOrDefault(1))}
	case *parser.MoveContext:
		return &Move{Pos: p, Silent: x.SILENT() != nil, From: b.graphOrDefault(x.GraphOrDefault(0)), To: b.graphOrDefault(x.GraphOrDefault(1))}
	case *parser.CopyContext:
		return &Copy{Pos: p, Silent: x.SILENT() != nil, From: b.graphOrDefault(x.GraphOrDefault(0)), To: b.graphOrDefault(x.GraphOrDefault(1))}
	case *parser.InsertDataContext:
		b.scopeID++
		b.curScope = b.scopeID
		qd := x.QuadData().(*parser.QuadDataContext)
		if lb := b.lifted[tokPos(qd.LBRACE().GetSymbol())]; lb != nil {
			return &InsertData{Pos: p, Quads: b.liftedQuads(lb)} // dense_data.go
		}
		b.dataLabels = true
		qs := b.quads(qd.Quads(), "", "INSERT DATA", true)
		b.dataLabels = false
		return &InsertData{Pos: p, Quads: groundOf(qs)}
	case *parser.DeleteDataContext:
		qd := x.QuadData().(*parser.QuadDataContext)
		if lb := b.lifted[tokPos(qd.LBRACE().GetSymbol())]; lb != nil {
			return &DeleteData{Pos: p, Quads: b.liftedQuads(lb)}
		}
		qs := b.quads(qd.Quads(), "DELETE DATA", "DELETE DATA", true)
		return &DeleteData{Pos: p, Quads: groundOf(qs)}
	case *parser.DeleteWhereContext:
		qs := b.quads(x.QuadPattern().(*parser.QuadPatternContext).Quads(), "DELETE WHERE", "", true)
		return &Modify{Pos: p, Delete: qs, Pattern: quadsPattern(p, qs), ShortForm: true}
	case *parser.ModifyContext:
		m := &Modify{Pos: p}
		if x.WITH() != nil {
			m.With = b.iri(x.Iri())
		}
		if d := x.DeleteClause(); d != nil {
			m.Delete = b.quads(d.(*parser.DeleteClauseContext).QuadPattern().(*parser.QuadPatternContext).Quads(), "a DELETE template", "", true)
			if m.Delete == nil {
				m.Delete = []QuadPattern{}
			}
		}
		if i := x.InsertClause(); i != nil {
			m.Insert = b.quads(i.(*parser.InsertClauseContext).QuadPattern().(*parser.QuadPatternContext).Quads(), "", "", true)
			if m.Insert == nil {
				m.Insert = []QuadPattern{}
			}
		}
		if us := x.AllUsingClause(); len(us) > 0 {
			m.Using = &Dataset{}
			for _, uc := range us {
				c := uc.(*parser.UsingClauseContext)
				if c.NAMED() != nil {
					m.Using.Named = append(m.Using.Named, b.iri(c.Iri()))
				} else {
					m.Using.Default = append(m.Using.Default, b.iri(c.Iri()))
				}
			}
		}
		m.Pattern = b.groupGraphPattern(x.GroupGraphPattern())
		return m
	}
	panic("BUG: unknown update operation")
}

func groundOf(qs []QuadPattern) []rdf.Quad {
	out := make([]rdf.Quad, len(qs))
	for i, q := range qs {
		out[i] = rdf.Quad{S: q.S.Term, P: q.P.Term, O: q.O.Term, G: q.G.Term}
	}
	return out
}

// quadsPattern translates the quads of DELETE WHERE into a pattern.
func quadsPattern(p Pos, qs []QuadPattern) Pattern {
	var out Pattern
	i := 0
	for i < len(qs) {
		g := qs[i].G
		bgp := &BGP{Pos: qs[i].Pos}
		for i < len(qs) && qs[i].G == g {
			bgp.Triples = append(bgp.Triples, TriplePattern{Pos: qs[i].Pos, S: qs[i].S, P: qs[i].P, O: qs[i].O})
			i++
		}
		var part Pattern = bgp
		if !g.IsZero() {
			part = &Graph{Pos: bgp.Pos, Name: g, Input: bgp}
		}
		out = join(p, out, part)
	}
	return orZ(p, out)
}

// quads builds the quads of update data or templates. noBlank / noVars
// name the context when blank nodes / variables are not allowed; blank
// nodes stay blank-node terms when template is set.
func (b *builder) quads(ctx parser.IQuadsContext, noBlank, noVars string, template bool) []QuadPattern {
	savedT, savedB, savedV := b.template, b.noBlank, b.noVars
	b.template, b.noBlank, b.noVars = template, noBlank, noVars
	defer func() { b.template, b.noBlank, b.noVars = savedT, savedB, savedV }()
	var out []QuadPattern
	add := func(g TermOrVar, tt parser.ITriplesTemplateContext) {
		if tt == nil {
			return
		}
		noDoubleDot(tt)
		var ts triples
		for _, t := range tt.(*parser.TriplesTemplateContext).AllTriplesSameSubject() {
			b.triplesSameSubject(t.(*parser.TriplesSameSubjectContext), &ts)
		}
		for _, it := range ts.items {
			for _, t := range it.(*BGP).Triples {
				out = append(out, QuadPattern{Pos: t.Pos, S: t.S, P: t.P, O: t.O, G: g})
			}
		}
	}
	for _, ch := range ctx.GetChildren() {
		switch x := ch.(type) {
		case *parser.TriplesTemplateContext:
			add(TermOrVar{}, x)
		case *parser.QuadsNotTriplesContext:
			add(b.varOrIri(x.VarOrIri()), x.TriplesTemplate())
		}
	}
	return out
}

func (b *builder) graphRefAll(ctx parser.IGraphRefAllContext) GraphTarget {
	c := ctx.(*parser.GraphRefAllContext)
	switch {
	case c.DEFAULT() != nil:
		return GraphTarget{Kind: TargetDefault}
	case c.NAMED() != nil:
		return GraphTarget{Kind: TargetNamed}
	case c.ALL() != nil:
		return GraphTarget{Kind: TargetAll}
	}
	return GraphTarget{Kind: TargetGraph, IRI: b.iri(c.GraphRef().(*parser.GraphRefContext).Iri())}
}

func (b *builder) graphOrDefault(ctx parser.IGraphOrDefaultContext) GraphRef {
	c := ctx.(*parser.GraphOrDefaultContext)
	if c.DEFAULT() != nil {
		return GraphRef{}
	}
	return GraphRef{IRI: b.iri(c.Iri())}
}
