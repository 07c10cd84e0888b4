package loader

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wukongd/wukongd/rdf"
)

const (
	xmlNS          = "http://www.w3.org/XML/1998/namespace"
	rdfXMLLiteral  = rdf.RDFNS + "XMLLiteral"
	rdfStatement   = rdf.RDFNS + "Statement"
	rdfDescription = rdf.RDFNS + "Description"
)

// xnode is an element of the XML tree of one top-level node element. The
// RDF/XML parser builds the tree of each child of rdf:RDF, turns it into
// triples and drops it, so memory is bounded by the largest such element.
type xnode struct {
	name      xml.Name
	attrs     []xml.Attr
	parent    *xnode
	content   []any // *xnode, xml.CharData, xml.ProcInst (comments are dropped)
	ns        map[string]string
	line, col int
}

// lookupPrefix returns a prefix bound to url in the scope of n ("" for the
// default namespace), and whether there is one.
func (n *xnode) lookupPrefix(url string, attr bool) (string, bool) {
	seen := map[string]bool{}
	for e := n; e != nil; e = e.parent {
		// Prefer a named prefix for attributes (the default namespace does
		// not apply to them).
		keys := make([]string, 0, len(e.ns))
		for k := range e.ns {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, p := range keys {
			if seen[p] {
				continue
			}
			seen[p] = true
			if e.ns[p] == url && !(attr && p == "") {
				return p, true
			}
		}
	}
	return "", false
}

type rdfxmlParser struct {
	dec    *xml.Decoder
	opts   Options
	nblank uint64
	ids    map[string]bool
	out    []rdf.Quad

	// Internal DTD entities, expanded at use (never at declaration) and
	// within MaxEntityExpansion bytes for the whole document: the decoder
	// inserts a marker (marker, the entity's index, U+E001) that
	// expandEntities replaces. The marker is a private-use character and a
	// random nonce, so that no text of the document can pass for one.
	entities []entity
	expanded int    // bytes produced by expansions so far
	marker   string // "\uE000" and the nonce
}

// entity is a declared internal entity: its literal value, with
// references to entities declared before it left unexpanded.
type entity struct {
	name, raw string
	size      int    // the length of its full expansion, capped past the limit
	full      string // the expansion, once needed
	done      bool
}

// MaxEntityExpansion is the most text the internal entities of one RDF/XML
// document may expand to, all uses together; past it the document is a
// *SyntaxError ("billion laughs" is refused, not expanded).
const MaxEntityExpansion = 1 << 20

// xmlFail is the bail-out panic of the RDF/XML parser.
type xmlFail struct {
	line, col int
	msg       string
}

func (p *rdfxmlParser) fail(n *xnode, format string, args ...any) {
	f := &xmlFail{msg: fmt.Sprintf(format, args...)}
	if n != nil {
		f.line, f.col = n.line, n.col
	} else {
		f.line, f.col = p.dec.InputPos()
	}
	panic(f)
}

func parseRDFXML(r io.Reader, opts Options, emit func(rdf.Quad) error) (err error) {
	src := &readErrs{r: r}
	dec := xml.NewDecoder(src)
	dec.Strict = true
	dec.Entity = map[string]string{} // internal DTD entities only; nothing is ever fetched
	p := &rdfxmlParser{dec: dec, opts: opts, ids: map[string]bool{}}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(*xmlFail)
			if !ok {
				panic(r)
			}
			err = &SyntaxError{File: opts.Name, Line: max(f.line, 1), Col: max(f.col, 1), Msg: f.msg}
			if opts.OnError != nil {
				// RDF/XML cannot resynchronise: the rest of the document is skipped.
				err = opts.OnError(err.(*SyntaxError))
			}
		}
	}()
	var stack []*xnode
	var root *xnode      // rdf:RDF, when the document has one
	var inRDF, done bool // inside rdf:RDF; the top-level element ended
	flush := func() error {
		for _, q := range p.out {
			if err := emit(q); err != nil {
				return err
			}
		}
		p.out = p.out[:0]
		return nil
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if len(stack) > 0 || !done && root != nil {
				p.fail(nil, "unexpected end of document")
			}
			return nil
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				line, col := dec.InputPos()
				panic(&xmlFail{line: line, col: col, msg: "XML: " + se.Msg})
			}
			if src.err == nil {
				// Not the reader's error: the decoder refused the document
				// (e.g. an unsupported XML version).
				line, col := dec.InputPos()
				panic(&xmlFail{line: line, col: col, msg: err.Error()})
			}
			return fmt.Errorf("cannot read %s: %w", opts.Name, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			for i := range t.Attr {
				t.Attr[i].Value = p.expandEntities(t.Attr[i].Value)
			}
			line, col := dec.InputPos()
			n := &xnode{name: t.Name, line: line, col: col}
			for _, a := range t.Attr {
				switch {
				case a.Name.Space == "xmlns":
					if n.ns == nil {
						n.ns = map[string]string{}
					}
					n.ns[a.Name.Local] = a.Value
				case a.Name.Space == "" && a.Name.Local == "xmlns":
					if n.ns == nil {
						n.ns = map[string]string{}
					}
					n.ns[""] = a.Value
				default:
					n.attrs = append(n.attrs, a)
				}
			}
			if len(stack) > 0 {
				n.parent = stack[len(stack)-1]
				n.parent.content = append(n.parent.content, n)
			} else if done {
				p.fail(n, "more than one top-level element")
			} else if t.Name.Space == rdf.RDFNS && t.Name.Local == "RDF" && !inRDF {
				root, inRDF = n, true
				continue
			} else if inRDF {
				n.parent = root
			}
			if len(stack) >= MaxNesting {
				p.fail(n, "elements nest deeper than the limit of %d levels", MaxNesting)
			}
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) == 0 {
				if inRDF {
					inRDF, done = false, true
					continue
				}
				p.fail(nil, "unbalanced end tag")
			}
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				// A complete top-level node element.
				base, lang := opts.Base, ""
				if root != nil {
					base, lang = p.scope(root, base, lang)
				}
				p.nodeElement(n, base, lang)
				if err := flush(); err != nil {
					return err
				}
				if !inRDF {
					done = true
				}
			}
		case xml.CharData:
			if len(p.entities) > 0 {
				t = xml.CharData(p.expandEntities(string(t)))
			}
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				top.content = append(top.content, t.Copy())
			} else if len(strings.TrimSpace(string(t))) > 0 {
				p.fail(nil, "text outside of node elements")
			}
		case xml.ProcInst:
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				top.content = append(top.content, t.Copy())
			}
		case xml.Directive:
			p.directive(t)
		}
	}
}

var entityDecl = regexp.MustCompile(`<!ENTITY\s+([^\s%]+)\s+(?:"([^"]*)"|'([^']*)')\s*>`)

// directive takes general entity declarations with literal values from an
// internal DTD subset. External entities (SYSTEM/PUBLIC) are not declared
// and so are refused when used; nothing is ever fetched.
func (p *rdfxmlParser) directive(d xml.Directive) {
	s := string(d)
	if !strings.HasPrefix(s, "DOCTYPE") {
		return
	}
	for _, m := range entityDecl.FindAllStringSubmatch(s, -1) {
		if _, dup := p.dec.Entity[m[1]]; dup {
			continue // the first declaration binds
		}
		e := entity{name: m[1], raw: m[2] + m[3]}
		// The size of its expansion, from those of the entities declared
		// before it (references to others stay as they are written).
		e.size = len(e.raw)
		p.eachRef(e.raw, func(i int) {
			if e.size < MaxEntityExpansion+1 {
				e.size += p.entities[i].size - len(p.entities[i].name) - 2
			}
		})
		e.size = min(e.size, MaxEntityExpansion+1)
		if p.marker == "" {
			p.marker = fmt.Sprintf("\uE000%016x:", rand.Uint64())
		}
		p.dec.Entity[e.name] = p.marker + strconv.Itoa(len(p.entities)) + "\uE001"
		p.entities = append(p.entities, e)
	}
}

// eachRef calls fn with the index of each declared entity referenced
// (&name;) in v.
func (p *rdfxmlParser) eachRef(v string, fn func(i int)) {
	for {
		a := strings.IndexByte(v, '&')
		if a < 0 {
			return
		}
		b := strings.IndexByte(v[a:], ';')
		if b < 0 {
			return
		}
		name := v[a+1 : a+b]
		v = v[a+b+1:]
		for i := range p.entities {
			if p.entities[i].name == name {
				fn(i)
				break
			}
		}
	}
}

// expandEntities replaces the entity markers in s by the entities' values,
// failing once the document's expansions pass MaxEntityExpansion.
func (p *rdfxmlParser) expandEntities(s string) string {
	if len(p.entities) == 0 || !strings.Contains(s, p.marker) {
		return s
	}
	var b strings.Builder
	for {
		a := strings.Index(s, p.marker)
		if a < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:a])
		s = s[a+len(p.marker):]
		num, rest, ok := strings.Cut(s, "\uE001")
		i, err := strconv.Atoi(num)
		if !ok || err != nil || i < 0 || i >= len(p.entities) {
			p.fail(nil, "BUG: bad entity marker")
		}
		b.WriteString(p.entity(i))
		s = rest
	}
}

// entity returns the full expansion of entity i, charging it to the
// document's expansion budget.
func (p *rdfxmlParser) entity(i int) string {
	e := &p.entities[i]
	if p.expanded += e.size; e.size > MaxEntityExpansion || p.expanded > MaxEntityExpansion {
		p.fail(nil, "the entities of the document expand to more than %d bytes (entity %q)", MaxEntityExpansion, e.name)
	}
	if !e.done {
		v := e.raw
		for j := i - 1; j >= 0; j-- {
			if ej := &p.entities[j]; strings.Contains(v, "&"+ej.name+";") {
				if !ej.done {
					p.expanded -= ej.size // the outer entity's charge covers it
					p.entity(j)
				}
				v = strings.ReplaceAll(v, "&"+ej.name+";", ej.full)
			}
		}
		e.full, e.done = v, true
	}
	return e.full
}

// scope applies the xml:base and xml:lang attributes of n.
func (p *rdfxmlParser) scope(n *xnode, base, lang string) (string, string) {
	for _, a := range n.attrs {
		if a.Name.Space == xmlNS {
			switch a.Name.Local {
			case "base":
				b := a.Value
				if i := strings.IndexByte(b, '#'); i >= 0 {
					b = b[:i]
				}
				base = rdf.ResolveIRI(base, b)
			case "lang":
				lang = a.Value
			}
		}
	}
	return base, lang
}

func (p *rdfxmlParser) add(s, pr, o rdf.Term) {
	p.out = append(p.out, rdf.Quad{S: s, P: pr, O: o})
}

func (p *rdfxmlParser) newBlank() rdf.Term {
	p.nblank++
	return rdf.NewBlank(p.opts.BlankPrefix + "g" + strconv.FormatUint(p.nblank, 10))
}

func (p *rdfxmlParser) nodeIDBlank(n *xnode, id string) rdf.Term {
	if !isNCName(id) {
		p.fail(n, "rdf:nodeID %q is not an XML NCName", id)
	}
	return rdf.NewBlank(p.opts.BlankPrefix + "u" + id)
}

func (p *rdfxmlParser) idIRI(n *xnode, base, id string) rdf.Term {
	if !isNCName(id) {
		p.fail(n, "rdf:ID %q is not an XML NCName", id)
	}
	iri := rdf.ResolveIRI(base, "#"+id)
	if p.ids[iri] {
		p.fail(n, "rdf:ID %q used twice", id)
	}
	p.ids[iri] = true
	return rdf.NewIRI(iri)
}

func elemIRI(n xml.Name) string { return n.Space + n.Local }

func isRDF(n xml.Name, locals ...string) bool {
	if n.Space != rdf.RDFNS {
		return false
	}
	for _, l := range locals {
		if n.Local == l {
			return true
		}
	}
	return false
}

var (
	coreSyntaxTerms = []string{"RDF", "ID", "about", "parseType", "resource", "nodeID", "datatype"}
	oldTerms        = []string{"aboutEach", "aboutEachPrefix", "bagID"}
)

// nodeElement turns a node element into triples and returns its subject.
func (p *rdfxmlParser) nodeElement(n *xnode, base, lang string) rdf.Term {
	base, lang = p.scope(n, base, lang)
	if n.name.Space == "" {
		p.fail(n, "element <%s> has no namespace", n.name.Local)
	}
	if isRDF(n.name, coreSyntaxTerms...) || isRDF(n.name, oldTerms...) || isRDF(n.name, "li") {
		p.fail(n, "rdf:%s is not allowed as a node element", n.name.Local)
	}
	var subj rdf.Term
	var props []xml.Attr
	var typ string
	set := func(t rdf.Term, what string) {
		if !subj.IsZero() {
			p.fail(n, "%s together with another of rdf:about, rdf:ID, rdf:nodeID", what)
		}
		subj = t
	}
	for _, a := range n.attrs {
		switch {
		case a.Name.Space == xmlNS || isXMLReserved(a.Name):
		case a.Name.Space == "":
			p.fail(n, "attribute %q has no namespace", a.Name.Local)
		case isRDF(a.Name, "about"):
			set(rdf.NewIRI(rdf.ResolveIRI(base, a.Value)), "rdf:about")
		case isRDF(a.Name, "ID"):
			set(p.idIRI(n, base, a.Value), "rdf:ID")
		case isRDF(a.Name, "nodeID"):
			set(p.nodeIDBlank(n, a.Value), "rdf:nodeID")
		case isRDF(a.Name, "type"):
			typ = rdf.ResolveIRI(base, a.Value)
		case isRDF(a.Name, coreSyntaxTerms...) || isRDF(a.Name, oldTerms...) || isRDF(a.Name, "li", "Description"):
			p.fail(n, "rdf:%s is not allowed as an attribute here", a.Name.Local)
		default:
			props = append(props, a)
		}
	}
	if subj.IsZero() {
		subj = p.newBlank()
	}
	if !isRDF(n.name, "Description") {
		p.add(subj, rdfTypeTerm, rdf.NewIRI(elemIRI(n.name)))
	}
	if typ != "" {
		p.add(subj, rdfTypeTerm, rdf.NewIRI(typ))
	}
	for _, a := range props {
		p.add(subj, rdf.NewIRI(elemIRI(a.Name)), rdf.NewLangLiteral(a.Value, lang))
	}
	li := 0
	for _, c := range n.content {
		switch c := c.(type) {
		case *xnode:
			p.propertyElement(c, subj, base, lang, &li)
		case xml.CharData:
			if !isXMLSpace(c) {
				p.fail(n, "text is not allowed in a node element")
			}
		}
	}
	return subj
}

func isXMLReserved(n xml.Name) bool {
	// Names starting with "xml" (case-insensitively) are reserved by XML;
	// RDF/XML ignores such attributes.
	if n.Space == "" {
		return strings.HasPrefix(strings.ToLower(n.Local), "xml")
	}
	return !strings.Contains(n.Space, ":") && strings.HasPrefix(strings.ToLower(n.Space), "xml")
}

func isXMLSpace(c xml.CharData) bool {
	for _, b := range c {
		if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			return false
		}
	}
	return true
}

// propertyElement turns a property element of subject subj into triples.
func (p *rdfxmlParser) propertyElement(n *xnode, subj rdf.Term, base, lang string, li *int) {
	base, lang = p.scope(n, base, lang)
	if n.name.Space == "" {
		p.fail(n, "element <%s> has no namespace", n.name.Local)
	}
	if isRDF(n.name, coreSyntaxTerms...) || isRDF(n.name, oldTerms...) || isRDF(n.name, "Description") {
		p.fail(n, "rdf:%s is not allowed as a property element", n.name.Local)
	}
	pred := elemIRI(n.name)
	if isRDF(n.name, "li") {
		*li++
		pred = rdf.RDFNS + "_" + strconv.Itoa(*li)
	}
	predT := rdf.NewIRI(pred)
	var id, nodeID, resource, datatype, parseType string
	var hasID, hasNodeID, hasResource, hasDatatype, hasParseType bool
	var props []xml.Attr
	for _, a := range n.attrs {
		switch {
		case a.Name.Space == xmlNS || isXMLReserved(a.Name):
		case a.Name.Space == "":
			p.fail(n, "attribute %q has no namespace", a.Name.Local)
		case isRDF(a.Name, "ID"):
			id, hasID = a.Value, true
		case isRDF(a.Name, "nodeID"):
			nodeID, hasNodeID = a.Value, true
		case isRDF(a.Name, "resource"):
			resource, hasResource = a.Value, true
		case isRDF(a.Name, "datatype"):
			datatype, hasDatatype = a.Value, true
		case isRDF(a.Name, "parseType"):
			parseType, hasParseType = a.Value, true
		case isRDF(a.Name, coreSyntaxTerms...) || isRDF(a.Name, oldTerms...) || isRDF(a.Name, "li", "Description"):
			p.fail(n, "rdf:%s is not allowed as an attribute here", a.Name.Local)
		default:
			props = append(props, a)
		}
	}
	var reif rdf.Term
	if hasID {
		reif = p.idIRI(n, base, id)
	}
	emit := func(o rdf.Term) {
		p.add(subj, predT, o)
		if hasID {
			p.add(reif, rdfTypeTerm, rdf.NewIRI(rdfStatement))
			p.add(reif, rdf.NewIRI(rdf.RDFNS+"subject"), subj)
			p.add(reif, rdf.NewIRI(rdf.RDFNS+"predicate"), predT)
			p.add(reif, rdf.NewIRI(rdf.RDFNS+"object"), o)
		}
	}
	var elems []*xnode
	text := false
	for _, c := range n.content {
		switch c := c.(type) {
		case *xnode:
			elems = append(elems, c)
		case xml.CharData:
			if !isXMLSpace(c) {
				text = true
			}
		}
	}
	if hasParseType {
		if hasNodeID || hasResource || hasDatatype || len(props) > 0 {
			p.fail(n, "rdf:parseType does not go with rdf:resource, rdf:nodeID, rdf:datatype or property attributes")
		}
		switch parseType {
		case "Resource":
			if text {
				p.fail(n, "text in a rdf:parseType=\"Resource\" element")
			}
			b := p.newBlank()
			emit(b)
			li2 := 0
			for _, c := range elems {
				p.propertyElement(c, b, base, lang, &li2)
			}
		case "Collection":
			if text {
				p.fail(n, "text in a rdf:parseType=\"Collection\" element")
			}
			head := rdfNilTerm
			var prev rdf.Term
			var items []rdf.Term
			for _, c := range elems {
				items = append(items, p.nodeElement(c, base, lang))
			}
			for _, it := range items {
				cell := p.newBlank()
				if prev.IsZero() {
					head = cell
				} else {
					p.add(prev, rdfRestTerm, cell)
				}
				p.add(cell, rdfFirstTerm, it)
				prev = cell
			}
			if !prev.IsZero() {
				p.add(prev, rdfRestTerm, rdfNilTerm)
			}
			emit(head)
		default: // "Literal" and any other value
			emit(rdf.NewLiteral(xmlLiteral(n), rdfXMLLiteral))
		}
		return
	}
	switch {
	case len(elems) > 0:
		if text {
			p.fail(n, "a property element has both text and an element")
		}
		if len(elems) > 1 {
			p.fail(elems[1], "a property element holds more than one node element")
		}
		if hasNodeID || hasResource || hasDatatype || len(props) > 0 {
			p.fail(n, "a property element with a node element may not have rdf:resource, rdf:nodeID, rdf:datatype or property attributes")
		}
		emit(p.nodeElement(elems[0], base, lang))
	case len(n.content) > 0 && (text || hasDatatype) || hasDatatype:
		if hasNodeID || hasResource || len(props) > 0 {
			p.fail(n, "a literal property element may not have rdf:resource, rdf:nodeID or property attributes")
		}
		var sb strings.Builder
		for _, c := range n.content {
			if cd, ok := c.(xml.CharData); ok {
				sb.Write(cd)
			}
		}
		if hasDatatype {
			emit(rdf.NewLiteral(sb.String(), rdf.ResolveIRI(base, datatype)))
		} else {
			emit(rdf.NewLangLiteral(sb.String(), lang))
		}
	default:
		// An empty property element (or whitespace only).
		if !hasNodeID && !hasResource && len(props) == 0 {
			var sb strings.Builder
			for _, c := range n.content {
				if cd, ok := c.(xml.CharData); ok {
					sb.Write(cd)
				}
			}
			emit(rdf.NewLangLiteral(sb.String(), lang))
			return
		}
		if hasNodeID && hasResource {
			p.fail(n, "rdf:nodeID together with rdf:resource")
		}
		var o rdf.Term
		switch {
		case hasResource:
			o = rdf.NewIRI(rdf.ResolveIRI(base, resource))
		case hasNodeID:
			o = p.nodeIDBlank(n, nodeID)
		default:
			o = p.newBlank()
		}
		for _, a := range props {
			if isRDF(a.Name, "type") {
				p.add(o, rdfTypeTerm, rdf.NewIRI(rdf.ResolveIRI(base, a.Value)))
			} else {
				p.add(o, rdf.NewIRI(elemIRI(a.Name)), rdf.NewLangLiteral(a.Value, lang))
			}
		}
		emit(o)
	}
}

// isNCName reports whether s is an XML NCName (a name without ':').
func isNCName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == ':' {
			return false
		}
		if i == 0 {
			if !(r == '_' || unicode.IsLetter(r)) {
				return false
			}
			continue
		}
		if !(r == '_' || r == '-' || r == '.' || r == 0xB7 || unicode.IsLetter(r) || unicode.IsDigit(r) ||
			unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)) {
			return false
		}
	}
	return utf8.ValidString(s)
}

// xmlLiteral serializes the content of n as exclusive canonical XML (the
// lexical form of an rdf:XMLLiteral).
func xmlLiteral(n *xnode) string {
	var b strings.Builder
	for _, c := range n.content {
		writeCanonical(&b, c, map[string]string{})
	}
	return b.String()
}

func writeCanonical(b *strings.Builder, c any, rendered map[string]string) {
	switch c := c.(type) {
	case xml.CharData:
		for _, r := range string(c) {
			switch r {
			case '&':
				b.WriteString("&amp;")
			case '<':
				b.WriteString("&lt;")
			case '>':
				b.WriteString("&gt;")
			case '\r':
				b.WriteString("&#xD;")
			default:
				b.WriteRune(r)
			}
		}
	case xml.ProcInst:
		b.WriteString("<?" + c.Target)
		if len(c.Inst) > 0 {
			b.WriteString(" " + string(c.Inst))
		}
		b.WriteString("?>")
	case *xnode:
		qname := func(name xml.Name, attr bool) (string, string, bool) {
			if name.Space == "" {
				return name.Local, "", false
			}
			pfx, ok := c.lookupPrefix(name.Space, attr)
			if !ok {
				// An unresolved prefix: encoding/xml keeps it as Space.
				return name.Space + ":" + name.Local, "", false
			}
			if pfx == "" {
				return name.Local, "", true
			}
			return pfx + ":" + name.Local, pfx, true
		}
		en, epfx, eok := qname(c.name, false)
		type nsDecl struct{ pfx, url string }
		var decls []nsDecl
		mine := map[string]string{}
		for k, v := range rendered {
			mine[k] = v
		}
		use := func(pfx, url string) {
			if v, ok := mine[pfx]; ok && v == url {
				return
			}
			mine[pfx] = url
			decls = append(decls, nsDecl{pfx, url})
		}
		if eok {
			use(epfx, c.name.Space)
		} else if c.name.Space == "" {
			if v, ok := mine[""]; ok && v != "" {
				use("", "")
			}
		}
		type attr struct{ space, local, qn, val string }
		var attrs []attr
		for _, a := range c.attrs {
			qn, pfx, ok := qname(a.Name, true)
			if ok {
				use(pfx, a.Name.Space)
			}
			attrs = append(attrs, attr{a.Name.Space, a.Name.Local, qn, a.Value})
		}
		sort.Slice(decls, func(i, j int) bool { return decls[i].pfx < decls[j].pfx })
		sort.Slice(attrs, func(i, j int) bool {
			if attrs[i].space != attrs[j].space {
				return attrs[i].space < attrs[j].space
			}
			return attrs[i].local < attrs[j].local
		})
		b.WriteString("<" + en)
		for _, d := range decls {
			if d.pfx == "" {
				b.WriteString(` xmlns="`)
			} else {
				b.WriteString(" xmlns:" + d.pfx + `="`)
			}
			writeAttrValue(b, d.url)
			b.WriteByte('"')
		}
		for _, a := range attrs {
			b.WriteString(" " + a.qn + `="`)
			writeAttrValue(b, a.val)
			b.WriteByte('"')
		}
		b.WriteByte('>')
		for _, cc := range c.content {
			writeCanonical(b, cc, mine)
		}
		b.WriteString("</" + en + ">")
	}
}

func writeAttrValue(b *strings.Builder, s string) {
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '"':
			b.WriteString("&quot;")
		case '\t':
			b.WriteString("&#x9;")
		case '\n':
			b.WriteString("&#xA;")
		case '\r':
			b.WriteString("&#xD;")
		default:
			b.WriteRune(r)
		}
	}
}

// readErrs is the reader of the XML decoder, remembering the first error
// of the underlying reader (other than EOF), so that the decoder's own
// errors can be told from I/O errors.
type readErrs struct {
	r   io.Reader
	err error
}

func (r *readErrs) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}
