package sparql

import (
	"context"
	"math"
	"strings"

	"github.com/wukongd/wukongd/rdf"
)

// Dense VALUES blocks bypass the generated parser. ANTLR keeps every token
// and a tree of rule contexts for the whole text — about a kilobyte per
// value, 75–290 bytes of memory per byte of a dense VALUES block, and
// seconds per megabyte. liftValues finds VALUES blocks of more than
// liftMin bytes whose content is plain data (IRIs without escapes, simple
// prefixed names, short strings, numbers, booleans, UNDEF, rows in
// parentheses, comments), lexes them itself into liftedTokens that point
// into the text, and hands the parser a text in which each such block is
// empty (its newlines kept, so that every later position is unchanged).
// The builder then decodes the lifted tokens where it builds the block,
// with the prefixes and base in force there. A block that is not plain
// data in this sense is left in the text for the parser, which gives the
// exact error.

// liftMin is the size from which a VALUES block is lifted; smaller ones go
// through the parser (their cost is small).
var liftMin = 64 << 10 // a variable for the tests

// liftDataMin is the size from which an INSERT DATA or DELETE DATA block
// is lifted (dense_data.go): every one. A one-triple INSERT DATA through
// the generated parser cost ~300 µs of CPU at load 37 and ~50 µs lifted
// (the parser then sees "INSERT DATA { }"), and such writes come by the
// thousand a second; the lifted path decodes the same quads and leaves
// anything it does not know to the parser.
var liftDataMin = 0

// maxPad is the most spaces a lifted block leaves on its last line to keep
// the columns after it right; a longer last line (a query on one line)
// keeps its lines but not its columns past the block.
const maxPad = 4096

type liftKind uint8

const (
	lOpen   liftKind = iota + 1 // (
	lClose                      // )
	lNil                        // ()
	lIRI                        // <…>, text without the brackets
	lPName                      // prefix:local
	lString                     // text without the quotes (may hold ECHARs)
	lLang                       // after an lString: the tag without '@'
	lType                       // after an lString: ^^ and an lIRI or lPName follows
	lInteger
	lDecimal
	lDouble
	lBool
	lUndef
)

type liftedToken struct {
	off  uint32 // byte offset in the original text
	n    uint32 // the length of its text, which starts skip bytes after off
	skip uint8
	kind liftKind
}

// mkTok is a token at byte off whose text is text[start:end].
func mkTok(kind liftKind, off, start, end int) liftedToken {
	return liftedToken{off: uint32(off), n: uint32(end - start), skip: uint8(start - off), kind: kind}
}

// str is the token's text, a substring of the original text src. (Tokens
// hold no pointers: a block of millions of them costs 12 bytes each and
// nothing to the garbage collector.)
func (t liftedToken) str(src string) string {
	s := int(t.off) + int(t.skip)
	return src[s : s+int(t.n)]
}

// liftedBlock is the content of one lifted VALUES block.
type liftedBlock struct {
	toks []liftedToken
}

// liftValues returns the text for the parser and the lifted blocks, keyed
// by the position of their '{'.
//
// The scan looks at ctx (nil: never stops) every checkChars bytes of text
// and, in a block, every checkInterval tokens; when it is done the scan
// stops with a parseAbort panic (recovered by parseWith).
func liftValues(ctx context.Context, text string) (string, map[Pos]*liftedBlock) {
	if len(text) < min(liftMin, liftDataMin) || len(text) > math.MaxUint32 || !mayContainWordFold(text, "values") && !mayContainWordFold(text, "data") {
		return text, nil
	}
	nextCheck := checkChars
	var out strings.Builder
	var blocks map[Pos]*liftedBlock
	last := 0  // text[last:] is not yet copied to out
	word := "" // the last word seen
	line, col, at := 1, 1, 0
	posOf := func(off int) Pos { // off ≥ at
		for ; at < off; at++ {
			c := text[at]
			if c == '\n' {
				line, col = line+1, 1
			} else if c < 0x80 || c >= 0xC0 {
				col++
			}
		}
		return Pos{Line: line, Col: col}
	}
	for i := 0; i < len(text); {
		if i >= nextCheck {
			checkContext(ctx)
			nextCheck = i + checkChars
		}
		c := text[i]
		switch {
		case c == '#':
			for i < len(text) && text[i] != '\n' && text[i] != '\r' {
				i++
			}
		case c == '<':
			if j, ok := scanIRI(text, i); ok {
				i = j
			} else {
				i++
			}
		case c == '"' || c == '\'':
			j, ok := scanString(text, i)
			if !ok {
				return text, nil // the parser reports it; lift nothing
			}
			i = j
		case c == '?' || c == '$' || c == ':' || isWordByte(c):
			j := i
			for j < len(text) && (isWordByte(text[j]) || text[j] == '?' || text[j] == '$' || text[j] == ':' || text[j] >= 0x80) {
				j++
			}
			w := text[i:j]
			prev, insert := word, strings.EqualFold(word, "insert")
			word = w
			var open, close int
			var b *liftedBlock
			switch {
			case len(w) == 6 && strings.EqualFold(w, "values"):
				open, close, b = liftBlock(ctx, text, j)
			case len(w) == 4 && strings.EqualFold(w, "data") && (insert || strings.EqualFold(prev, "delete")):
				open, close, b = liftQuadData(ctx, text, j, insert)
			}
			if b != nil {
				if blocks == nil {
					blocks = map[Pos]*liftedBlock{}
				}
				blocks[posOf(open)] = b
				out.WriteString(text[last : open+1])
				out.WriteString(padding(text[open+1 : close]))
				last = close
				i = close
				continue
			}
			i = j
		default:
			i++
		}
	}
	if blocks == nil {
		return text, nil
	}
	out.WriteString(text[last:])
	return out.String(), blocks
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// mayContainWordFold reports whether text holds word, ASCII case-folded.
func mayContainWordFold(text, word string) bool {
	n := len(word)
	for i := 0; i+n <= len(text); i++ {
		if text[i]|0x20 == word[0] && strings.EqualFold(text[i:i+n], word) {
			return true
		}
	}
	return false
}

// padding is what replaces a lifted block's content: its line breaks, and
// as many spaces as the last line has code points (at most maxPad).
func padding(s string) string {
	nl := strings.Count(s, "\n")
	lastLine := s[strings.LastIndexByte(s, '\n')+1:]
	n := min(strings.Count(lastLine, "")-1, maxPad) // code points
	return strings.Repeat("\n", nl) + strings.Repeat(" ", n)
}

// scanIRI matches IRIREF at text[i] ('<'), as the lexer does.
func scanIRI(text string, i int) (int, bool) {
	for j := i + 1; j < len(text); j++ {
		switch c := text[j]; {
		case c == '>':
			return j + 1, true
		case c <= 0x20 || c == '<' || c == '"' || c == '{' || c == '}' || c == '|' || c == '^' || c == '`':
			return 0, false
		case c == '\\':
			if j+1 < len(text) && (text[j+1] == 'u' || text[j+1] == 'U') {
				j++ // UCHAR: its hex digits are plain IRI characters here
				continue
			}
			return 0, false
		}
	}
	return 0, false
}

// scanString matches a string literal (short or long) at text[i], as the
// lexer does; ok is false when it is not closed.
func scanString(text string, i int) (int, bool) {
	q := text[i]
	if strings.HasPrefix(text[i:], strings.Repeat(string(q), 3)) {
		for j := i + 3; j < len(text); j++ {
			switch text[j] {
			case '\\':
				j++
			case q:
				if strings.HasPrefix(text[j:], strings.Repeat(string(q), 3)) {
					// The longest match: a run of more quotes ends at its last three.
					k := j + 3
					for k < len(text) && text[k] == q && k-j < 5 {
						k++
					}
					return k, true
				}
			}
		}
		return 0, false
	}
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			j++
		case '\n', '\r':
			return 0, false
		case q:
			return j + 1, true
		}
	}
	return 0, false
}

// liftBlock reads, after the VALUES keyword ending at i, a variable list
// and a block of plain data. It returns the offsets of the block's braces
// and its tokens, or nil when the block is small or not plain data.
func liftBlock(ctx context.Context, text string, i int) (open, close int, b *liftedBlock) {
	i = skipSpace(text, i)
	switch {
	case i < len(text) && (text[i] == '?' || text[i] == '$'):
		i = skipVar(text, i)
	case i < len(text) && text[i] == '(':
		i = skipSpace(text, i+1)
		for i < len(text) && (text[i] == '?' || text[i] == '$') {
			i = skipSpace(text, skipVar(text, i))
		}
		if i >= len(text) || text[i] != ')' {
			return 0, 0, nil
		}
		i++
	default:
		return 0, 0, nil
	}
	i = skipSpace(text, i)
	if i >= len(text) || text[i] != '{' {
		return 0, 0, nil
	}
	open = i
	b = &liftedBlock{}
	for i = open + 1; ; {
		if len(b.toks)%checkInterval == checkInterval-1 {
			checkContext(ctx)
		}
		i = skipSpace(text, i)
		if i >= len(text) {
			return 0, 0, nil
		}
		c := text[i]
		start := i
		var k liftKind
		switch {
		case c == '}':
			if i-open < liftMin {
				return 0, 0, nil
			}
			return open, i, b
		case c == '(':
			j := skipSpace(text, i+1)
			if j < len(text) && text[j] == ')' {
				k, i = lNil, j+1
			} else {
				k, i = lOpen, i+1
			}
		case c == ')':
			k, i = lClose, i+1
		case c == '<':
			j, ok := scanIRI(text, i)
			if !ok || strings.IndexByte(text[i:j], '\\') >= 0 {
				return 0, 0, nil
			}
			b.toks = append(b.toks, mkTok(lIRI, i, i+1, j-1))
			i = j
			if !delimited(text, i) {
				return 0, 0, nil
			}
			continue
		case c == '"' || c == '\'':
			j, ok := scanString(text, i)
			if !ok || j-i < 2 || strings.HasPrefix(text[i:], `"""`) || strings.HasPrefix(text[i:], `'''`) {
				return 0, 0, nil
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
					return 0, 0, nil
				}
				b.toks = append(b.toks, mkTok(lLang, i, i+1, j))
				i = j
			case strings.HasPrefix(text[i:], "^^"):
				b.toks = append(b.toks, mkTok(lType, i, i, i))
				i += 2
				if i < len(text) && text[i] == '<' {
					j, ok := scanIRI(text, i)
					if !ok || strings.IndexByte(text[i:j], '\\') >= 0 {
						return 0, 0, nil
					}
					b.toks = append(b.toks, mkTok(lIRI, i, i+1, j-1))
					i = j
				} else if j, ok := scanPName(text, i); ok {
					b.toks = append(b.toks, mkTok(lPName, i, i, j))
					i = j
				} else {
					return 0, 0, nil
				}
			}
			if !delimited(text, i) {
				return 0, 0, nil
			}
			continue
		case c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.':
			j, kind, ok := scanNumber(text, i)
			if !ok {
				return 0, 0, nil
			}
			k, i = kind, j
		default:
			j := i
			for j < len(text) && (text[j]|0x20 >= 'a' && text[j]|0x20 <= 'z') {
				j++
			}
			switch w := text[i:j]; {
			case strings.EqualFold(w, "true") || strings.EqualFold(w, "false"):
				k, i = lBool, j
			case strings.EqualFold(w, "undef"):
				k, i = lUndef, j
			default:
				pj, ok := scanPName(text, i)
				if !ok {
					return 0, 0, nil
				}
				k, i = lPName, pj
			}
		}
		if k != lOpen && k != lClose && k != lNil && !delimited(text, i) {
			return 0, 0, nil
		}
		b.toks = append(b.toks, mkTok(k, start, start, i))
	}
}

// delimited reports whether a token ending at i is followed by what
// surely ends it for the lexer too.
func delimited(text string, i int) bool {
	if i >= len(text) {
		return true
	}
	switch text[i] {
	case ' ', '\t', '\n', '\r', '(', ')', '}', '#':
		return true
	}
	return false
}

func skipSpace(text string, i int) int {
	for i < len(text) {
		switch text[i] {
		case ' ', '\t', '\n', '\r':
			i++
		case '#':
			for i < len(text) && text[i] != '\n' && text[i] != '\r' {
				i++
			}
		default:
			return i
		}
	}
	return i
}

// skipVar skips ?name or $name (ASCII names only; others end the lift by
// not being followed by what liftBlock expects).
func skipVar(text string, i int) int {
	j := i + 1
	for j < len(text) && (text[j] >= 'a' && text[j] <= 'z' || text[j] >= 'A' && text[j] <= 'Z' || text[j] >= '0' && text[j] <= '9' || text[j] == '_') {
		j++
	}
	if j == i+1 {
		return i // not a variable: the caller finds no '{' or ')'
	}
	return j
}

// scanPName matches a simple prefixed name: an ASCII prefix (a letter,
// then letters, digits, '_', '-' or inner '.') or none, ':', and an ASCII
// local part (letters, digits, '_', '-', ':', inner '.'); escapes, '%' and
// non-ASCII names are left to the parser.
func scanPName(text string, i int) (int, bool) {
	j := i
	if j < len(text) && (text[j]|0x20 >= 'a' && text[j]|0x20 <= 'z') {
		for j < len(text) && (isNameASCII(text[j]) || text[j] == '.') {
			j++
		}
		if text[j-1] == '.' {
			return 0, false
		}
	}
	if j >= len(text) || text[j] != ':' {
		return 0, false
	}
	j++
	k := j
	for k < len(text) && (isNameASCII(text[k]) || text[k] == ':' || k > j && text[k] == '.') {
		k++
	}
	for k > j && text[k-1] == '.' {
		k-- // a trailing '.' is not part of the name (nor allowed after it here)
	}
	if k < len(text) && (text[k] == '.' || text[k] == '\\' || text[k] == '%' || text[k] >= 0x80) {
		return 0, false
	}
	return k, true
}

func isNameASCII(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// scanNumber matches INTEGER, DECIMAL or DOUBLE, optionally signed.
func scanNumber(text string, i int) (int, liftKind, bool) {
	j := i
	if text[j] == '+' || text[j] == '-' {
		j++
	}
	d0 := j
	for j < len(text) && text[j] >= '0' && text[j] <= '9' {
		j++
	}
	intDigits := j - d0
	kind := lInteger
	if j < len(text) && text[j] == '.' {
		f := j + 1
		for f < len(text) && text[f] >= '0' && text[f] <= '9' {
			f++
		}
		switch {
		case f > j+1:
			kind, j = lDecimal, f
		case intDigits > 0 && f < len(text) && text[f]|0x20 == 'e':
			kind, j = lDecimal, f // "1." only before an exponent
		default:
			return 0, 0, false
		}
	}
	if intDigits == 0 && kind == lInteger {
		return 0, 0, false
	}
	if j < len(text) && text[j]|0x20 == 'e' {
		e := j + 1
		if e < len(text) && (text[e] == '+' || text[e] == '-') {
			e++
		}
		e0 := e
		for e < len(text) && text[e] >= '0' && text[e] <= '9' {
			e++
		}
		if e == e0 {
			return 0, 0, false
		}
		kind, j = lDouble, e
	}
	return j, kind, true
}

// liftedRows decodes a lifted block into the rows of v (whose Vars are
// set), with the builder's prefixes and base; oneVar is the form VALUES ?x
// { … }, where every value is a row.
func (b *builder) liftedRows(v *Values, lb *liftedBlock, oneVar bool) {
	text := b.text
	var row []rdf.Term
	var rowOff int
	inRow := false
	toks := lb.toks
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if i&1023 == 0 {
			checkContext(b.ctx)
		}
		switch t.kind {
		case lOpen:
			if oneVar || inRow {
				failf(offPos(text, int(t.off)), "unexpected '(' in VALUES")
			}
			inRow, row, rowOff = true, make([]rdf.Term, 0, len(v.Vars)), int(t.off)
			continue
		case lClose:
			if !inRow {
				failf(offPos(text, int(t.off)), "unexpected ')' in VALUES")
			}
			b.addRow(v, row, offPos(text, rowOff))
			inRow, row = false, nil
			continue
		case lNil:
			if oneVar || inRow {
				failf(offPos(text, int(t.off)), "unexpected '()' in VALUES")
			}
			b.addRow(v, []rdf.Term{}, offPos(text, int(t.off)))
			continue
		}
		var term rdf.Term
		switch t.kind {
		case lIRI, lPName, lString, lInteger, lDecimal, lDouble, lBool:
			term, i = b.liftedConst(toks, i, text)
		case lUndef:
		default:
			failf(offPos(text, int(t.off)), "BUG: lifted token %d", t.kind)
		}
		switch {
		case oneVar:
			v.Rows = append(v.Rows, []rdf.Term{term})
		case inRow:
			row = append(row, term)
		default:
			failf(offPos(text, int(t.off)), "a VALUES value outside a row's parentheses")
		}
	}
	if inRow {
		failf(offPos(text, rowOff), "unclosed VALUES row")
	}
}

// liftedIRI decodes a lifted IRI or prefixed-name token.
func (b *builder) liftedIRI(t liftedToken, text string) rdf.Term {
	if t.kind == lIRI {
		return rdf.NewIRI(resolveIRI(b.base, t.str(text)))
	}
	return rdf.NewIRI(b.liftedPName(t, text))
}

// liftedConst decodes the constant at toks[i] (an IRI, a prefixed name, a
// number, a boolean, or a string with its language tag or datatype) as
// the builder decodes the parser's; it returns the term and the index of
// the constant's last token. Shared by VALUES and quad data blocks.
func (b *builder) liftedConst(toks []liftedToken, i int, text string) (rdf.Term, int) {
	t := toks[i]
	switch t.kind {
	case lIRI, lPName:
		return b.liftedIRI(t, text), i
	case lString:
		lex := t.str(text)
		if strings.IndexByte(lex, '\\') >= 0 {
			u, err := unescapeString(lex)
			if err != nil {
				failf(offPos(text, int(t.off)), "%v in string", err)
			}
			lex = u
		}
		if i+1 < len(toks) && toks[i+1].kind == lLang {
			return rdf.NewLangLiteral(lex, toks[i+1].str(text)), i + 1
		}
		if i+2 < len(toks) && toks[i+1].kind == lType {
			return rdf.NewLiteral(lex, b.liftedIRI(toks[i+2], text).Value), i + 2
		}
		return rdf.NewLiteral(lex, ""), i
	case lInteger:
		return rdf.NewLiteral(t.str(text), rdf.XSDInteger), i // as written, sign included (numericTerm)
	case lDecimal:
		return rdf.NewLiteral(t.str(text), rdf.XSDDecimal), i
	case lDouble:
		return rdf.NewLiteral(t.str(text), rdf.XSDDouble), i
	case lBool:
		return rdf.NewLiteral(strings.ToLower(t.str(text)), rdf.XSDBoolean), i
	}
	failf(offPos(text, int(t.off)), "BUG: lifted token %d", t.kind)
	return rdf.Term{}, i
}
func (b *builder) liftedPName(t liftedToken, text string) string {
	i := strings.IndexByte(t.str(text), ':')
	ns, ok := b.prefixes[t.str(text)[:i]]
	if !ok {
		failf(offPos(text, int(t.off)), "undefined prefix %q", t.str(text)[:i+1])
	}
	return ns + t.str(text)[i+1:]
}

// offPos is the line and column (in code points) of byte off of text.
func offPos(text string, off int) Pos {
	line, col := 1, 1
	for i := 0; i < off && i < len(text); i++ {
		c := text[i]
		if c == '\n' {
			line, col = line+1, 1
		} else if c < 0x80 || c >= 0xC0 {
			col++
		}
	}
	return Pos{Line: line, Col: col}
}
