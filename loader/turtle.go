package loader

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/wukongd/wukongd/rdf"
)

var (
	rdfTypeTerm  = rdf.NewIRI(rdf.RDFType)
	rdfFirstTerm = rdf.NewIRI(rdf.RDFFirst)
	rdfRestTerm  = rdf.NewIRI(rdf.RDFRest)
	rdfNilTerm   = rdf.NewIRI(rdf.RDFNil)
)

// turtleParser is a recursive-descent parser for Turtle and TriG. It
// buffers the triples of one statement and emits them when the statement
// is complete, so that a statement with an error contributes nothing.
type turtleParser struct {
	lex      turtleLexer
	trig     bool
	opts     Options
	base     string
	prefixes map[string]string
	tok      token // current token
	graph    rdf.Term
	inGraph  bool
	tokErr   bool // the last error was about the current token
	pending  []rdf.Quad
	nblank   uint64
	depth    int // nesting of [ … ] and ( … ) around the current token
}

// enter counts one more level of nesting, failing past MaxNesting; leave
// undoes it.
func (p *turtleParser) enter() {
	if p.depth++; p.depth > MaxNesting {
		p.failTok("blank node property lists and collections nest deeper than the limit of %d levels", MaxNesting)
	}
}

func (p *turtleParser) leave() { p.depth-- }

func parseTurtle(r io.Reader, trig bool, opts Options, emit func(rdf.Quad) error) error {
	p := &turtleParser{trig: trig, opts: opts, base: opts.Base, prefixes: map[string]string{}}
	p.lex.src = runeSrc{r: bufio.NewReaderSize(r, 1<<16), line: 1, col: 1}
	first := true
	for {
		done, err := p.statement(first)
		first = false
		if err != nil {
			se, ok := err.(*SyntaxError)
			if !ok || p.opts.OnError == nil {
				return err
			}
			if err := p.opts.OnError(se); err != nil {
				return err
			}
			p.pending = p.pending[:0]
			if !p.recover() {
				return nil
			}
			continue
		}
		for _, q := range p.pending {
			if err := emit(q); err != nil {
				return err
			}
		}
		p.pending = p.pending[:0]
		if done {
			return nil
		}
	}
}

// statement parses one statement (a directive, a triples statement or, in
// TriG, one statement inside or a whole graph block). It reads the first
// token itself when first is set.
func (p *turtleParser) statement(first bool) (done bool, err error) {
	p.depth = 0 // a statement starts outside brackets (also after an error)
	defer func() {
		if r := recover(); r != nil {
			le, ok := r.(*lexErr)
			if !ok {
				panic(r)
			}
			err = &SyntaxError{File: p.opts.Name, Line: le.line, Col: le.col, Msg: le.msg}
		}
	}()
	if first {
		p.advance()
	}
	if p.tok.kind == tEOF {
		if p.inGraph {
			p.failTok("unterminated graph block (missing '}')")
		}
		return true, nil
	}
	if p.inGraph {
		p.graphStatement()
		return false, nil
	}
	p.topStatement()
	return false, nil
}

func (p *turtleParser) advance() { p.tok = p.lex.next() }

func (p *turtleParser) failTok(format string, args ...any) {
	p.tokErr = true
	panic(&lexErr{line: p.tok.line, col: p.tok.col, msg: fmt.Sprintf(format, args...)})
}

func (p *turtleParser) isPunct(s string) bool { return p.tok.kind == tPunct && p.tok.val == s }

func (p *turtleParser) expect(s string) {
	if !p.isPunct(s) {
		p.failTok("expected '%s', found %v", s, p.tok)
	}
	p.advance()
}

func (p *turtleParser) isWord(w string) bool {
	return p.tok.kind == tWord && strings.EqualFold(p.tok.val, w)
}

// topStatement parses a statement at the top level of the document.
func (p *turtleParser) topStatement() {
	switch {
	case p.tok.kind == tLang && (p.tok.val == "prefix" || p.tok.val == "base"):
		p.directive(false)
		return
	case p.isWord("PREFIX") || p.isWord("BASE"):
		p.directive(true)
		return
	}
	if !p.trig {
		p.triples()
		p.expect(".")
		return
	}
	// TriG block.
	switch {
	case p.isWord("GRAPH"):
		p.advance()
		g := p.graphLabel()
		p.openGraph(g)
	case p.isPunct("{"):
		p.openGraph(rdf.Term{})
	case p.tok.kind == tIRI || p.tok.kind == tPName || p.tok.kind == tBlank || p.isPunct("["):
		var s rdf.Term
		if p.isPunct("[") {
			// "[ ]" may name a graph; "[ p o ]" starts triples.
			p.advance()
			if p.isPunct("]") {
				p.advance()
				s = p.newBlank()
				if p.isPunct("{") {
					p.openGraph(s)
					return
				}
			} else {
				s = p.newBlank()
				p.predicateObjectList(s)
				p.expect("]")
				if !p.isPunct(".") {
					p.predicateObjectList(s)
				}
				p.expect(".")
				return
			}
		} else {
			s = p.subjectTerm()
			if p.isPunct("{") {
				p.openGraph(s)
				return
			}
		}
		p.predicateObjectList(s)
		p.expect(".")
	default:
		p.triples()
		p.expect(".")
	}
}

// openGraph consumes '{' and enters a graph block named g.
func (p *turtleParser) openGraph(g rdf.Term) {
	p.expect("{")
	p.inGraph = true
	p.graph = g
	if p.isPunct("}") {
		p.closeGraph()
	}
}

func (p *turtleParser) closeGraph() {
	p.advance()
	p.inGraph = false
	p.graph = rdf.Term{}
}

// graphStatement parses one triples statement inside a TriG graph block,
// with its '.' or the closing '}'.
func (p *turtleParser) graphStatement() {
	p.triples()
	if p.isPunct("}") {
		p.closeGraph()
		return
	}
	p.expect(".")
	if p.isPunct("}") {
		p.closeGraph()
	}
}

func (p *turtleParser) graphLabel() rdf.Term {
	switch {
	case p.tok.kind == tIRI || p.tok.kind == tPName:
		return p.iri()
	case p.tok.kind == tBlank:
		return p.labelledBlank()
	case p.isPunct("["):
		p.advance()
		p.expect("]")
		return p.newBlank()
	}
	p.failTok("expected a graph name, found %v", p.tok)
	return rdf.Term{}
}

func (p *turtleParser) directive(sparqlStyle bool) {
	isPrefix := strings.EqualFold(p.tok.val, "prefix")
	p.advance()
	if isPrefix {
		if p.tok.kind != tPName || p.tok.val != "" {
			p.failTok("expected a prefix name ending in ':', found %v", p.tok)
		}
		pfx := p.tok.pfx
		p.advance()
		if p.tok.kind != tIRI {
			p.failTok("expected an IRI, found %v", p.tok)
		}
		p.prefixes[pfx] = p.resolve(p.tok.val)
		p.advance()
	} else {
		if p.tok.kind != tIRI {
			p.failTok("expected an IRI, found %v", p.tok)
		}
		p.base = p.resolve(p.tok.val)
		p.advance()
	}
	if !sparqlStyle {
		p.expect(".")
	}
}

func (p *turtleParser) resolve(iri string) string {
	return rdf.ResolveIRI(p.base, iri)
}

// labelledBlank returns the blank node of the label token at p.tok and
// advances.
func (p *turtleParser) labelledBlank() rdf.Term {
	t := rdf.NewBlank(p.opts.BlankPrefix + "u" + p.tok.val)
	p.advance()
	return t
}

func (p *turtleParser) newBlank() rdf.Term {
	p.nblank++
	return rdf.NewBlank(p.opts.BlankPrefix + "g" + strconv.FormatUint(p.nblank, 10))
}

func (p *turtleParser) add(s, pr, o rdf.Term) {
	p.pending = append(p.pending, rdf.Quad{S: s, P: pr, O: o, G: p.graph})
}

// triples parses: subject predicateObjectList | blankNodePropertyList
// predicateObjectList?
func (p *turtleParser) triples() {
	if p.isPunct("[") {
		p.advance()
		s := p.newBlank()
		if p.isPunct("]") {
			p.advance()
			p.predicateObjectList(s)
			return
		}
		p.predicateObjectList(s)
		p.expect("]")
		if !p.isPunct(".") && !p.isPunct("}") {
			p.predicateObjectList(s)
		}
		return
	}
	s := p.subjectTerm()
	p.predicateObjectList(s)
}

func (p *turtleParser) subjectTerm() rdf.Term {
	switch {
	case p.tok.kind == tIRI || p.tok.kind == tPName:
		return p.iri()
	case p.tok.kind == tBlank:
		return p.labelledBlank()
	case p.isPunct("("):
		return p.collection()
	}
	p.failTok("expected a subject, found %v", p.tok)
	return rdf.Term{}
}

func (p *turtleParser) iri() rdf.Term {
	t := p.tok
	p.advance()
	if t.kind == tIRI {
		return rdf.NewIRI(p.resolve(t.val))
	}
	ns, ok := p.prefixes[t.pfx]
	if !ok {
		panic(&lexErr{line: t.line, col: t.col, msg: fmt.Sprintf("undefined prefix %q", t.pfx+":")})
	}
	return rdf.NewIRI(ns + t.val)
}

func (p *turtleParser) predicateObjectList(s rdf.Term) {
	p.verbObjectList(s)
	for p.isPunct(";") {
		for p.isPunct(";") {
			p.advance()
		}
		if p.isPunct(".") || p.isPunct("]") || p.isPunct("}") || p.tok.kind == tEOF {
			return
		}
		p.verbObjectList(s)
	}
}

func (p *turtleParser) verbObjectList(s rdf.Term) {
	var pr rdf.Term
	switch {
	case p.tok.kind == tWord && p.tok.val == "a":
		pr = rdfTypeTerm
		p.advance()
	case p.tok.kind == tIRI || p.tok.kind == tPName:
		pr = p.iri()
	default:
		p.failTok("expected a predicate, found %v", p.tok)
	}
	p.add(s, pr, p.object())
	for p.isPunct(",") {
		p.advance()
		p.add(s, pr, p.object())
	}
}

func (p *turtleParser) object() rdf.Term {
	t := p.tok
	switch t.kind {
	case tIRI, tPName:
		return p.iri()
	case tBlank:
		return p.labelledBlank()
	case tString:
		p.advance()
		switch {
		case p.tok.kind == tLang:
			lang := p.tok.val
			p.advance()
			return rdf.NewLangLiteral(t.val, lang)
		case p.isPunct("^^"):
			p.advance()
			if p.tok.kind != tIRI && p.tok.kind != tPName {
				p.failTok("expected a datatype IRI, found %v", p.tok)
			}
			return rdf.NewLiteral(t.val, p.iri().Value)
		}
		return rdf.NewLiteral(t.val, "")
	case tInteger:
		p.advance()
		return rdf.NewLiteral(t.val, rdf.XSDInteger)
	case tDecimal:
		p.advance()
		return rdf.NewLiteral(t.val, rdf.XSDDecimal)
	case tDouble:
		p.advance()
		return rdf.NewLiteral(t.val, rdf.XSDDouble)
	case tWord:
		if t.val == "true" || t.val == "false" {
			p.advance()
			return rdf.NewLiteral(t.val, rdf.XSDBoolean)
		}
	case tPunct:
		switch t.val {
		case "[":
			p.enter()
			p.advance()
			b := p.newBlank()
			if !p.isPunct("]") {
				p.predicateObjectList(b)
			}
			p.expect("]")
			p.leave()
			return b
		case "(":
			return p.collection()
		}
	}
	p.failTok("expected an object, found %v", t)
	return rdf.Term{}
}

// collection parses '(' object* ')' into an rdf:first/rdf:rest list and
// returns its head.
func (p *turtleParser) collection() rdf.Term {
	p.enter()
	defer p.leave()
	p.advance()
	head := rdfNilTerm
	var prev rdf.Term
	for !p.isPunct(")") {
		if p.tok.kind == tEOF {
			p.failTok("unterminated collection")
		}
		cell := p.newBlank()
		if prev.IsZero() {
			head = cell
		} else {
			p.add(prev, rdfRestTerm, cell)
		}
		p.add(cell, rdfFirstTerm, p.object())
		prev = cell
	}
	p.advance()
	if !prev.IsZero() {
		p.add(prev, rdfRestTerm, rdfNilTerm)
	}
	return head
}

// recover skips input after a syntax error up to the end of the statement
// (a '.' or a '}' closing a graph block, outside brackets). It returns
// false when the rest of the document cannot be read.
func (p *turtleParser) recover() (more bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*lexErr); !ok {
				panic(r)
			}
			// An error while skipping: skip the bad rune and go on.
			if p.lex.src.ioErr != nil {
				more = false
				return
			}
			p.lex.src.next()
			more = p.recover()
		}
	}()
	depth := 0
	if p.tokErr {
		p.tokErr = false
		if p.isPunct(".") {
			p.advance()
			return true
		}
	}
	for {
		p.advance()
		switch {
		case p.tok.kind == tEOF:
			return false
		case p.isPunct("[") || p.isPunct("("):
			depth++
		case p.isPunct("]") || p.isPunct(")"):
			depth--
		case p.isPunct("{"):
			p.inGraph = true
			depth = 0
		case p.isPunct("}") && p.inGraph:
			p.inGraph = false
			p.graph = rdf.Term{}
			p.advance()
			return true
		case p.isPunct(".") && depth <= 0:
			p.advance()
			return true
		}
	}
}
