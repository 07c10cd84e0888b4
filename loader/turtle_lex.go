package loader

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// runeSrc reads runes with arbitrary lookahead and tracks line and column.
type runeSrc struct {
	r         *bufio.Reader
	la        []rune // lookahead, la[0] is the next rune
	line, col int    // position of la[0] (or of the next rune read)
	ioErr     error
}

const eofRune = -1

// badRune stands for an invalid UTF-8 byte in the input.
const badRune = -2

func (s *runeSrc) fill(k int) {
	for len(s.la) <= k {
		r, n, err := s.r.ReadRune()
		if err != nil {
			if err != io.EOF && s.ioErr == nil {
				s.ioErr = err
			}
			s.la = append(s.la, eofRune)
			continue
		}
		if r == utf8.RuneError && n == 1 {
			r = badRune
		}
		s.la = append(s.la, r)
	}
}

// peek returns the rune k positions ahead (0 = next), or eofRune.
func (s *runeSrc) peek(k int) rune {
	if k < len(s.la) {
		return s.la[k]
	}
	s.fill(k)
	return s.la[k]
}

func (s *runeSrc) next() rune {
	r := s.peek(0)
	if r == eofRune {
		return r
	}
	s.la = s.la[1:]
	if len(s.la) == 0 {
		s.la = s.la[:0:0]
	}
	if r == '\n' {
		s.line++
		s.col = 1
	} else {
		s.col++
	}
	return r
}

type tokKind uint8

const (
	tEOF     tokKind = iota
	tIRI             // val: the IRI as written (unresolved), escapes decoded
	tPName           // prefix:local; pfx and val (local, decoded)
	tBlank           // val: label
	tLang            // val: tag (without '@'), e.g. "en" or "prefix"
	tString          // val: decoded
	tInteger         // val: lexical
	tDecimal
	tDouble
	tWord  // bare word: a, true, false, PREFIX, BASE, GRAPH
	tPunct // val: one of . , ; [ ] ( ) { } ^^
)

type token struct {
	kind      tokKind
	val, pfx  string
	line, col int
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tIRI:
		return "<" + t.val + ">"
	case tPName:
		return t.pfx + ":" + t.val
	case tBlank:
		return "_:" + t.val
	case tLang:
		return "@" + t.val
	case tString:
		return "string literal"
	case tPunct:
		return "'" + t.val + "'"
	}
	return t.val
}

// lexErr is the bail-out of the Turtle lexer and parser, recovered in the
// statement loop.
type lexErr struct {
	line, col int
	msg       string
}

type turtleLexer struct {
	src runeSrc
	buf strings.Builder
}

func (l *turtleLexer) fail(format string, args ...any) {
	panic(&lexErr{line: l.src.line, col: l.src.col, msg: fmt.Sprintf(format, args...)})
}

func (l *turtleLexer) skipSpace() {
	for {
		switch l.src.peek(0) {
		case ' ', '\t', '\r', '\n':
			l.src.next()
		case '#':
			for r := l.src.peek(0); r != '\n' && r != '\r' && r != eofRune; r = l.src.peek(0) {
				l.src.next()
			}
		default:
			return
		}
	}
}

// next returns the next token.
func (l *turtleLexer) next() token {
	l.skipSpace()
	t := token{line: l.src.line, col: l.src.col}
	r := l.src.peek(0)
	switch {
	case r == eofRune:
		if l.src.ioErr != nil {
			l.fail("read error: %v", l.src.ioErr)
		}
		t.kind = tEOF
	case r == badRune:
		l.fail("invalid UTF-8")
	case r == '<':
		l.src.next()
		t.kind, t.val = tIRI, l.iriBody()
	case r == '"' || r == '\'':
		t.kind, t.val = tString, l.stringLit()
	case r == '@':
		l.src.next()
		t.kind, t.val = tLang, l.langTag()
	case r == '_' && l.src.peek(1) == ':':
		l.src.next()
		l.src.next()
		t.kind, t.val = tBlank, l.blankLabel()
	case r >= '0' && r <= '9' || r == '+' || r == '-' ||
		r == '.' && l.src.peek(1) >= '0' && l.src.peek(1) <= '9':
		t.kind, t.val = l.number()
	case r == '^':
		l.src.next()
		if l.src.next() != '^' {
			l.fail("expected '^^'")
		}
		t.kind, t.val = tPunct, "^^"
	case strings.ContainsRune(".,;[](){}", r):
		l.src.next()
		t.kind, t.val = tPunct, string(r)
	case r == ':' || isPNCharsBase(r):
		l.name(&t)
	default:
		l.fail("unexpected character %q", r)
	}
	return t
}

func (l *turtleLexer) iriBody() string {
	b := &l.buf
	b.Reset()
	for {
		r := l.src.next()
		switch {
		case r == '>':
			return b.String()
		case r == eofRune:
			l.fail("unterminated IRI")
		case r == badRune:
			l.fail("invalid UTF-8 in IRI")
		case r == '\\':
			u := l.uchar()
			if u <= 0x20 || u < 0x80 && isIRIForbidden(byte(u)) {
				l.fail("escaped character %q not allowed in an IRI", u)
			}
			b.WriteRune(u)
		case r < 0x80 && isIRIForbidden(byte(r)):
			l.fail("character %q not allowed in an IRI", r)
		default:
			b.WriteRune(r)
		}
	}
}

// uchar reads the rest of \uXXXX or \UXXXXXXXX after the backslash.
func (l *turtleLexer) uchar() rune {
	var n int
	switch l.src.next() {
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		l.fail("bad escape (expected \\u or \\U)")
	}
	var v rune
	for i := 0; i < n; i++ {
		c := l.src.next()
		if c < 0 || c > 0x7f || hexVal(byte(c)) < 0 {
			l.fail("bad hex digit in \\u escape")
		}
		v = v<<4 | rune(hexVal(byte(c)))
	}
	if v > utf8.MaxRune || v >= 0xD800 && v <= 0xDFFF {
		l.fail("escape \\u%X is not a Unicode scalar value", v)
	}
	return v
}

func (l *turtleLexer) stringLit() string {
	q := l.src.next()
	long := l.src.peek(0) == q && l.src.peek(1) == q
	if long {
		l.src.next()
		l.src.next()
	}
	b := &l.buf
	b.Reset()
	for {
		r := l.src.next()
		switch {
		case r == eofRune:
			l.fail("unterminated string literal")
		case r == badRune:
			l.fail("invalid UTF-8 in string literal")
		case r == q:
			if !long {
				return b.String()
			}
			if l.src.peek(0) == q && l.src.peek(1) == q {
				l.src.next()
				l.src.next()
				return b.String()
			}
			b.WriteRune(r)
		case r == '\\':
			c := l.src.peek(0)
			if c >= 0 && c < 0x80 && echar(byte(c)) != 0 {
				l.src.next()
				b.WriteByte(echar(byte(c)))
			} else {
				b.WriteRune(l.uchar())
			}
		case !long && (r == '\n' || r == '\r'):
			l.fail("line break in a short string literal (use a long string or \\n)")
		default:
			b.WriteRune(r)
		}
	}
}

func (l *turtleLexer) langTag() string {
	b := &l.buf
	b.Reset()
	for r := l.src.peek(0); r >= 0 && r < 0x80 && isAlpha(byte(r)); r = l.src.peek(0) {
		b.WriteRune(l.src.next())
	}
	if b.Len() == 0 {
		l.fail("bad language tag")
	}
	for l.src.peek(0) == '-' {
		l.src.next()
		b.WriteByte('-')
		n := 0
		for r := l.src.peek(0); r >= 0 && r < 0x80 && (isAlpha(byte(r)) || r >= '0' && r <= '9'); r = l.src.peek(0) {
			b.WriteRune(l.src.next())
			n++
		}
		if n == 0 {
			l.fail("bad language tag")
		}
	}
	return b.String()
}

func (l *turtleLexer) blankLabel() string {
	r := l.src.peek(0)
	if !isPNCharsU(r) && !(r >= '0' && r <= '9') {
		l.fail("bad blank node label")
	}
	end := l.pnCharsEnd(1)
	b := &l.buf
	b.Reset()
	for i := 0; i < end; i++ {
		b.WriteRune(l.src.next())
	}
	return b.String()
}

// pnCharsEnd returns where (PN_CHARS | '.')* starting k runes ahead ends,
// in runes ahead, without a trailing '.'.
func (l *turtleLexer) pnCharsEnd(k int) int {
	end := k
	for ; ; k++ {
		c := l.src.peek(k)
		if c == '.' {
			continue
		}
		if c < 0 || !isPNChars(c) {
			break
		}
		end = k + 1
	}
	return end
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func (l *turtleLexer) number() (tokKind, string) {
	b := &l.buf
	b.Reset()
	if r := l.src.peek(0); r == '+' || r == '-' {
		b.WriteRune(l.src.next())
	}
	digits := 0
	for isDigit(l.src.peek(0)) {
		b.WriteRune(l.src.next())
		digits++
	}
	kind := tInteger
	// A '.' belongs to the number only if a digit or an exponent follows.
	if l.src.peek(0) == '.' && (isDigit(l.src.peek(1)) || digits > 0 && l.isExponent(1)) {
		b.WriteRune(l.src.next())
		kind = tDecimal
		for isDigit(l.src.peek(0)) {
			b.WriteRune(l.src.next())
			digits++
		}
	}
	if digits == 0 {
		l.fail("bad number")
	}
	if l.isExponent(0) {
		b.WriteRune(l.src.next())
		if r := l.src.peek(0); r == '+' || r == '-' {
			b.WriteRune(l.src.next())
		}
		for isDigit(l.src.peek(0)) {
			b.WriteRune(l.src.next())
		}
		kind = tDouble
	}
	return kind, b.String()
}

// isExponent reports whether an exponent ([eE] [+-]? [0-9]) starts k runes ahead.
func (l *turtleLexer) isExponent(k int) bool {
	if r := l.src.peek(k); r != 'e' && r != 'E' {
		return false
	}
	if r := l.src.peek(k + 1); r == '+' || r == '-' {
		k++
	}
	return isDigit(l.src.peek(k + 1))
}

// name lexes a prefixed name or a bare word.
func (l *turtleLexer) name(t *token) {
	// PN_PREFIX: PN_CHARS_BASE ((PN_CHARS | '.')* PN_CHARS)?
	end := 0
	if l.src.peek(0) != ':' {
		end = l.pnCharsEnd(1)
	}
	b := &l.buf
	b.Reset()
	if l.src.peek(end) != ':' {
		// A bare word: letters only.
		for r := l.src.peek(0); r >= 0 && r < 0x80 && isAlpha(byte(r)); r = l.src.peek(0) {
			b.WriteRune(l.src.next())
		}
		t.kind, t.val = tWord, b.String()
		switch t.val {
		case "a", "true", "false":
			return
		}
		switch strings.ToUpper(t.val) {
		case "PREFIX", "BASE", "GRAPH":
			return
		}
		l.fail("unexpected word %q (a prefixed name needs a ':')", t.val)
	}
	for i := 0; i < end; i++ {
		b.WriteRune(l.src.next())
	}
	l.src.next() // ':'
	t.kind, t.pfx = tPName, b.String()
	t.val = l.localName()
}

// localName lexes PN_LOCAL (possibly empty), decoding \-escapes and keeping
// %XX as written.
func (l *turtleLexer) localName() string {
	b := &l.buf
	b.Reset()
	okLen := 0 // length of b at the last rune that may end the name
	okK := 0   // lookahead offset just after that rune
	k := 0
	first := true
	for {
		c := l.src.peek(k)
		switch {
		case c == '%':
			if !isHexRune(l.src.peek(k+1)) || !isHexRune(l.src.peek(k+2)) {
				l.src.consume(k)
				l.fail("bad %% escape in a local name")
			}
			b.WriteRune('%')
			b.WriteRune(l.src.peek(k + 1))
			b.WriteRune(l.src.peek(k + 2))
			k += 3
		case c == '\\':
			e := l.src.peek(k + 1)
			if e < 0 || !strings.ContainsRune("_~.-!$&'()*+,;=/?#@%", e) {
				l.src.consume(k)
				l.fail("bad escape in a local name")
			}
			b.WriteRune(e)
			k += 2
		case c == ':' || (first && (isPNCharsU(c) || isDigit(c))) || (!first && isPNChars(c)):
			b.WriteRune(c)
			k++
		case c == '.' && !first:
			b.WriteRune(c)
			k++
			first = false
			continue
		default:
			l.src.consume(okK)
			return b.String()[:okLen]
		}
		first = false
		okLen, okK = b.Len(), k
	}
}

func (s *runeSrc) consume(k int) {
	for i := 0; i < k; i++ {
		s.next()
	}
}

func isHexRune(r rune) bool { return r >= 0 && r < 0x80 && hexVal(byte(r)) >= 0 }
