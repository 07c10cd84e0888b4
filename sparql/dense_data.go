package sparql

import (
	"context"
	"strings"

	"github.com/wukongd/wukongd/rdf"
)

// Dense INSERT DATA and DELETE DATA blocks bypass the generated parser as
// dense VALUES blocks do (dense.go): a block of at least liftDataMin bytes
// whose content is plain ground triples — subjects and objects that are
// IRIs without escapes, simple prefixed names, blank node labels (INSERT
// DATA only), short strings with a language or datatype, numbers and
// booleans (objects), predicates that are IRIs, prefixed names or 'a',
// the separators '.', ';' and ',', and GRAPH blocks named by an IRI or a
// prefixed name — is lexed and checked against the grammar by
// liftQuadData, and the parser sees the block empty. The builder decodes
// the tokens into quads where it builds the operation, with the prefixes
// and base in force there. Anything else (variables, '[ ]', collections,
// long strings, a literal subject, two '.' in a row, escapes in names)
// leaves the whole block to the parser, which reports errors exactly.

// Tokens of lifted quad data, beyond those of dense.go.
const (
	lA        liftKind = iota + 64 // the verb 'a'
	lBlank                         // _:label, text without "_:"
	lDot                           // .
	lSemi                          // ;
	lComma                         // ,
	lGraph                         // GRAPH; an lIRI or lPName and the block follow
	lGraphEnd                      // the '}' of a GRAPH block
)

// quadState is where liftQuadData is in the grammar of QuadData.
type quadState uint8

const (
	qSubject    quadState = iota // a subject, GRAPH (outside a GRAPH block) or '}'
	qVerb                        // a predicate
	qVerbOrEnd                   // after ';': a predicate, ';', '.' or '}'
	qObject                      // an object
	qAfter                       // after an object: ',', ';', '.' or '}'
	qAfterDot                    // after '.': a subject, GRAPH (outside) or '}'
	qGraphName                   // after GRAPH: the graph's IRI
	qGraphOpen                   // after the graph's name: '{'
	qAfterGraph                  // after a GRAPH block: '.', a subject, GRAPH or '}'
)

// liftQuadData reads, after the DATA keyword of INSERT DATA (blanks) or
// DELETE DATA ending at i, a block of plain quad data. It returns the
// offsets of the block's braces and its tokens, or nil when the block is
// small or not plain data.
func liftQuadData(ctx context.Context, text string, i int, blanks bool) (open, close int, b *liftedBlock) {
	i = skipSpace(text, i)
	if i >= len(text) || text[i] != '{' {
		return 0, 0, nil
	}
	open = i
	b = &liftedBlock{}
	st := qSubject
	inGraph := false
	for i, n := open+1, 0; ; n++ {
		if n%checkInterval == checkInterval-1 {
			checkContext(ctx)
		}
		i = skipSpace(text, i)
		if i >= len(text) {
			return 0, 0, nil
		}
		c := text[i]
		switch {
		case c == '}':
			switch st {
			case qSubject, qAfterDot, qAfterGraph, qAfter, qVerbOrEnd:
			default:
				return 0, 0, nil
			}
			if inGraph {
				b.toks = append(b.toks, mkTok(lGraphEnd, i, i, i))
				inGraph, st, i = false, qAfterGraph, i+1
				continue
			}
			if i-open < liftDataMin {
				return 0, 0, nil
			}
			return open, i, b
		case c == '{':
			if st != qGraphOpen {
				return 0, 0, nil
			}
			inGraph, st, i = true, qSubject, i+1
			continue
		case c == '.' && (st == qAfter || st == qVerbOrEnd || st == qAfterGraph && !inGraph):
			if st != qAfterGraph {
				b.toks = append(b.toks, mkTok(lDot, i, i, i))
			}
			st, i = qAfterDot, i+1
			continue
		case c == ';' && (st == qAfter || st == qVerbOrEnd):
			b.toks = append(b.toks, mkTok(lSemi, i, i, i))
			st, i = qVerbOrEnd, i+1
			continue
		case c == ',' && st == qAfter:
			b.toks = append(b.toks, mkTok(lComma, i, i, i))
			st, i = qObject, i+1
			continue
		}
		switch st {
		case qSubject, qAfterDot, qAfterGraph:
			if !inGraph && (c == 'g' || c == 'G') && i+5 <= len(text) && strings.EqualFold(text[i:i+5], "graph") && !isPNameByte(text, i+5) {
				b.toks = append(b.toks, mkTok(lGraph, i, i, i))
				st, i = qGraphName, i+5
				continue
			}
			j, ok := b.liftNode(text, i, blanks)
			if !ok {
				return 0, 0, nil
			}
			st, i = qVerb, j
		case qVerb, qVerbOrEnd:
			if c == 'a' && !isPNameByte(text, i+1) {
				b.toks = append(b.toks, mkTok(lA, i, i, i))
				st, i = qObject, i+1
				continue
			}
			j, ok := b.liftIRIOrPName(text, i)
			if !ok {
				return 0, 0, nil
			}
			st, i = qObject, j
		case qObject:
			j, ok := b.liftNode(text, i, blanks)
			if !ok {
				j, ok = b.liftLiteral(text, i)
			}
			if !ok {
				return 0, 0, nil
			}
			st, i = qAfter, j
		case qGraphName:
			j, ok := b.liftIRIOrPName(text, i)
			if !ok {
				return 0, 0, nil
			}
			st, i = qGraphOpen, j
		default:
			return 0, 0, nil
		}
		if !dataDelimited(text, i) {
			return 0, 0, nil
		}
	}
}

// isPNameByte reports whether text[i] would continue a name (so a keyword
// before it is not one).
func isPNameByte(text string, i int) bool {
	return i < len(text) && (isNameASCII(text[i]) || text[i] == ':' || text[i] == '.' || text[i] >= 0x80)
}

// dataDelimited reports whether a token ending at i is followed by what
// surely ends it for the lexer too.
func dataDelimited(text string, i int) bool {
	if i >= len(text) {
		return true
	}
	switch text[i] {
	case ' ', '\t', '\n', '\r', '}', '{', '#', '.', ';', ',':
		return true
	}
	return false
}

// liftIRIOrPName lexes an IRI without escapes or a simple prefixed name.
func (b *liftedBlock) liftIRIOrPName(text string, i int) (int, bool) {
	if text[i] == '<' {
		j, ok := scanIRI(text, i)
		if !ok || strings.IndexByte(text[i:j], '\\') >= 0 {
			return 0, false
		}
		b.toks = append(b.toks, mkTok(lIRI, i, i+1, j-1))
		return j, true
	}
	j, ok := scanPName(text, i)
	if !ok || j == i {
		return 0, false
	}
	b.toks = append(b.toks, mkTok(lPName, i, i, j))
	return j, true
}

// liftNode lexes an IRI, a prefixed name or (blanks) a blank node label.
func (b *liftedBlock) liftNode(text string, i int, blanks bool) (int, bool) {
	if text[i] == '_' && i+1 < len(text) && text[i+1] == ':' {
		if !blanks {
			return 0, false
		}
		j := i + 2
		for j < len(text) && (isNameASCII(text[j]) || j > i+2 && text[j] == '.') {
			j++
		}
		for j > i+2 && text[j-1] == '.' {
			j--
		}
		if j == i+2 || text[i+2] == '-' || (j < len(text) && (text[j] == '.' || text[j] >= 0x80 || text[j] == ':')) {
			return 0, false
		}
		b.toks = append(b.toks, mkTok(lBlank, i, i+2, j))
		return j, true
	}
	return b.liftIRIOrPName(text, i)
}

// liftLiteral lexes a short string (with a language tag or a datatype), a
// number or a boolean.
func (b *liftedBlock) liftLiteral(text string, i int) (int, bool) {
	c := text[i]
	switch {
	case c == '"' || c == '\'':
		j, ok := scanString(text, i)
		if !ok || j-i < 2 || strings.HasPrefix(text[i:], `"""`) || strings.HasPrefix(text[i:], `'''`) {
			return 0, false
		}
		b.toks = append(b.toks, mkTok(lString, i, i+1, j-1))
		i = j
		switch {
		case i < len(text) && text[i] == '@':
			j := i + 1
			for j < len(text) && (text[j]|0x20 >= 'a' && text[j]|0x20 <= 'z' || j > i+1 && (text[j] == '-' || text[j] >= '0' && text[j] <= '9')) {
				j++
			}
			if j == i+1 || text[j-1] == '-' {
				return 0, false
			}
			b.toks = append(b.toks, mkTok(lLang, i, i+1, j))
			return j, true
		case strings.HasPrefix(text[i:], "^^"):
			b.toks = append(b.toks, mkTok(lType, i, i, i))
			if i+2 >= len(text) {
				return 0, false
			}
			return b.liftIRIOrPName(text, i+2)
		}
		return i, true
	case c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.':
		j, kind, ok := scanNumber(text, i)
		if !ok || j < len(text) && text[j] == '.' {
			return 0, false // "1." before a '.': left to the lexer
		}
		b.toks = append(b.toks, mkTok(kind, i, i, j))
		return j, true
	}
	j := i
	for j < len(text) && (text[j]|0x20 >= 'a' && text[j]|0x20 <= 'z') {
		j++
	}
	if w := text[i:j]; (strings.EqualFold(w, "true") || strings.EqualFold(w, "false")) && !isPNameByte(text, j) {
		b.toks = append(b.toks, mkTok(lBool, i, i, j))
		return j, true
	}
	return 0, false
}

// liftedQuads decodes a lifted quad data block with the builder's
// prefixes and base; blank node labels are scoped as the parser's path
// scopes those of INSERT DATA.
func (b *builder) liftedQuads(lb *liftedBlock) []rdf.Quad {
	text := b.text
	toks := lb.toks
	out := make([]rdf.Quad, 0, len(toks)/3)
	var s, p, g rdf.Term
	var st quadState // qSubject: the next node is a subject; qVerb: a predicate; qObject: an object
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if i&1023 == 0 {
			checkContext(b.ctx)
		}
		var term rdf.Term
		switch t.kind {
		case lDot:
			st = qSubject
			continue
		case lSemi:
			st = qVerb
			continue
		case lComma:
			st = qObject
			continue
		case lGraph:
			i++
			g, st = b.liftedIRI(toks[i], text), qSubject
			continue
		case lGraphEnd:
			g, st = rdf.Term{}, qSubject
			continue
		case lA:
			term = rdf.NewIRI(rdf.RDFType)
		case lBlank:
			if sc, ok := b.labelScope[t.str(text)]; ok && sc != b.curScope {
				failf(offPos(text, int(t.off)), "blank node label _:%s is already used in another basic graph pattern or INSERT DATA", t.str(text))
			}
			b.labelScope[t.str(text)] = b.curScope
			term = rdf.NewBlank(t.str(text))
		case lIRI, lPName, lString, lInteger, lDecimal, lDouble, lBool:
			term, i = b.liftedConst(toks, i, text)
		default:
			failf(offPos(text, int(t.off)), "BUG: lifted token %d", t.kind)
		}
		switch st {
		case qSubject:
			s, st = term, qVerb
		case qVerb:
			p, st = term, qObject
		default:
			out = append(out, rdf.Quad{S: s, P: p, O: term, G: g})
		}
	}
	return out
}
