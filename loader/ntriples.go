package loader

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/wukongd/wukongd/rdf"
)

// rawTerm is a term as parsed, before it becomes an rdf.Term: its byte
// slices point into the input buffer (or into a fresh slice when the input
// had escapes), so parsing allocates nothing for plain terms. They stay valid
// only until the next chunk is read.
type rawTerm struct {
	kind rdf.Kind
	val  []byte
	dt   []byte // datatype IRI; nil for a simple or language-tagged literal
	lang []byte // language tag as written; nil when none
}

type rawQuad struct{ s, p, o, g rawTerm }

var xsdStringBytes = []byte(rdf.XSDString)

// term converts t into an rdf.Term, scoping blank nodes with bp.
func (t *rawTerm) term(bp string) rdf.Term {
	switch t.kind {
	case rdf.KindIRI:
		return rdf.Term{Kind: rdf.KindIRI, Value: string(t.val)}
	case rdf.KindBlank:
		return rdf.Term{Kind: rdf.KindBlank, Value: userBlank(bp, t.val)}
	case rdf.KindLiteral:
		lt := rdf.Term{Kind: rdf.KindLiteral, Value: string(t.val)}
		if t.lang != nil {
			lt.Lang = lowerASCII(t.lang)
		} else if t.dt != nil && !bytes.Equal(t.dt, xsdStringBytes) {
			lt.Datatype = string(t.dt)
		}
		return lt
	}
	return rdf.Term{}
}

func (q *rawQuad) quad(bp string) rdf.Quad {
	out := rdf.Quad{S: q.s.term(bp), P: q.p.term(bp), O: q.o.term(bp)}
	if q.g.kind != rdf.KindNone {
		out.G = q.g.term(bp)
	}
	return out
}

func lowerASCII(b []byte) string {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			return strings.ToLower(string(b))
		}
	}
	return string(b)
}

// ntParser parses N-Triples or N-Quads lines.
type ntParser struct {
	quads bool
	line  []byte
	pos   int
	msg   string // set on a syntax error
	epos  int    // byte offset of the error in line
}

// chunkSize is the size of the blocks the streaming N-Triples reader reads.
const chunkSize = 1 << 20

// parseNT parses a whole N-Triples or N-Quads stream sequentially.
func parseNT(r io.Reader, quads bool, opts Options, emit func(rdf.Quad) error) error {
	var p ntParser
	p.quads = quads
	bp := opts.BlankPrefix
	return readLineChunks(r, chunkSize, func(chunk []byte, firstLine int) error {
		return p.parseChunk(chunk, firstLine, opts, func(q *rawQuad) error {
			return emit(q.quad(bp))
		})
	})
}

// readLineChunks reads r in blocks of about size bytes, each ending at a
// line boundary (except possibly the last), and calls fn with each block
// and the 1-based number of its first line. The block is reused after fn
// returns.
func readLineChunks(r io.Reader, size int, fn func(chunk []byte, firstLine int) error) error {
	buf := make([]byte, size)
	n := 0 // bytes held in buf
	line := 1
	for {
		m, err := io.ReadFull(r, buf[n:])
		n += m
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return err
		}
		if eof {
			if n > 0 {
				return fn(buf[:n], line)
			}
			return nil
		}
		cut := bytes.LastIndexByte(buf[:n], '\n')
		if cut < 0 {
			// A line longer than the buffer: grow it.
			nb := make([]byte, 2*len(buf))
			copy(nb, buf[:n])
			buf = nb
			continue
		}
		chunk := buf[:cut+1]
		if err := fn(chunk, line); err != nil {
			return err
		}
		line += bytes.Count(chunk, []byte{'\n'})
		n = copy(buf, buf[cut+1:n])
	}
}

// parseChunk parses the lines in chunk (the first has number firstLine) and
// calls fn for each statement. Syntax errors go to opts.OnError (the line is
// skipped) or stop the parse.
func (p *ntParser) parseChunk(chunk []byte, firstLine int, opts Options, fn func(*rawQuad) error) error {
	var q rawQuad
	lineNo := firstLine
	for len(chunk) > 0 {
		var line []byte
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			line, chunk = chunk[:i], chunk[i+1:]
		} else {
			line, chunk = chunk, nil
		}
		// A CR is an end of line too; a CR before LF is the usual case.
		for len(line) > 0 {
			seg := line
			if i := bytes.IndexByte(line, '\r'); i >= 0 {
				seg, line = line[:i], line[i+1:]
			} else {
				line = nil
			}
			ok := p.parseLine(seg, &q)
			if p.msg != "" {
				se := &SyntaxError{File: opts.Name, Line: lineNo, Col: runeCol(seg, p.epos), Msg: p.msg}
				if opts.OnError == nil {
					return se
				}
				if err := opts.OnError(se); err != nil {
					return err
				}
				continue
			}
			if ok {
				if err := fn(&q); err != nil {
					return err
				}
			}
		}
		lineNo++
	}
	return nil
}

func (p *ntParser) fail(msg string) bool {
	if p.msg == "" {
		p.msg = msg
		p.epos = p.pos
	}
	return false
}

func (p *ntParser) skipWS() {
	for p.pos < len(p.line) && (p.line[p.pos] == ' ' || p.line[p.pos] == '\t') {
		p.pos++
	}
}

// parseLine parses one line into q. It returns false for a line without a
// statement, and sets p.msg on a syntax error.
func (p *ntParser) parseLine(line []byte, q *rawQuad) bool {
	p.line, p.pos, p.msg = line, 0, ""
	p.skipWS()
	if p.pos == len(line) || line[p.pos] == '#' {
		return false
	}
	*q = rawQuad{}
	if !p.subject(&q.s) {
		return false
	}
	p.skipWS()
	if p.pos >= len(line) || line[p.pos] != '<' {
		return p.fail("expected a predicate IRI")
	}
	if !p.iri(&q.p) {
		return false
	}
	p.skipWS()
	if !p.object(&q.o) {
		return false
	}
	p.skipWS()
	if p.quads && p.pos < len(line) && line[p.pos] != '.' {
		switch line[p.pos] {
		case '<':
			if !p.iri(&q.g) {
				return false
			}
		case '_':
			if !p.blank(&q.g) {
				return false
			}
		default:
			return p.fail("expected a graph label or '.'")
		}
		p.skipWS()
	}
	if p.pos >= len(line) || line[p.pos] != '.' {
		return p.fail("expected '.' at the end of the statement")
	}
	p.pos++
	p.skipWS()
	if p.pos < len(line) && line[p.pos] != '#' {
		return p.fail("unexpected text after '.'")
	}
	return true
}

func (p *ntParser) subject(t *rawTerm) bool {
	if p.pos >= len(p.line) {
		return p.fail("expected a subject")
	}
	switch p.line[p.pos] {
	case '<':
		return p.iri(t)
	case '_':
		return p.blank(t)
	}
	return p.fail("expected a subject IRI or blank node")
}

func (p *ntParser) object(t *rawTerm) bool {
	if p.pos >= len(p.line) {
		return p.fail("expected an object")
	}
	switch p.line[p.pos] {
	case '<':
		return p.iri(t)
	case '_':
		return p.blank(t)
	case '"':
		return p.literal(t)
	}
	return p.fail("expected an object IRI, blank node or literal")
}

// iri parses an absolute IRIREF at p.pos (which is '<').
func (p *ntParser) iri(t *rawTerm) bool {
	v, ok := p.iriRef()
	if !ok {
		return false
	}
	t.kind, t.val = rdf.KindIRI, v
	return true
}

// iriPlain[c] is true for the ASCII bytes an IRIREF holds as they are
// (not '>', not forbidden): one table load per byte on the fast path.
var iriPlain = func() (t [256]bool) {
	for c := 0x21; c < 0x80; c++ {
		t[c] = c != '>' && !isIRIForbidden(byte(c))
	}
	return t
}()

func (p *ntParser) iriRef() ([]byte, bool) {
	line := p.line
	start := p.pos + 1
	i := start
	high := false
	for ; i < len(line); i++ {
		c := line[i]
		if iriPlain[c] {
			continue
		}
		if c == '>' {
			break
		}
		if c >= 0x80 {
			high = true
			continue
		}
		if isIRIForbidden(c) {
			if c == '\\' {
				return p.iriEscaped(start)
			}
			p.pos = i
			return nil, p.fail("character not allowed in an IRI")
		}
	}
	if i >= len(line) {
		p.pos = start - 1
		return nil, p.fail("unterminated IRI")
	}
	v := line[start:i]
	if high && !utf8.Valid(v) {
		p.pos = start
		return nil, p.fail("invalid UTF-8 in IRI")
	}
	if !rdf.HasScheme(v) {
		p.pos = start
		return nil, p.fail("relative IRI not allowed here")
	}
	p.pos = i + 1
	return v, true
}

// iriEscaped is the slow path of iriRef for IRIs with \u escapes.
func (p *ntParser) iriEscaped(start int) ([]byte, bool) {
	line := p.line
	v := make([]byte, 0, 64)
	i := start
	for ; i < len(line); i++ {
		c := line[i]
		if c == '>' {
			break
		}
		if c == '\\' {
			r, n, ok := decodeUCHAR(line[i:])
			if !ok {
				p.pos = i
				return nil, p.fail("bad escape in IRI (only \\uXXXX and \\UXXXXXXXX are allowed)")
			}
			if r <= 0x20 || (r < 0x80 && isIRIForbidden(byte(r))) {
				p.pos = i
				return nil, p.fail("escaped character not allowed in an IRI")
			}
			v = utf8.AppendRune(v, r)
			i += n - 1
			continue
		}
		if c < 0x80 && isIRIForbidden(c) {
			p.pos = i
			return nil, p.fail("character not allowed in an IRI")
		}
		v = append(v, c)
	}
	if i >= len(line) {
		p.pos = start - 1
		return nil, p.fail("unterminated IRI")
	}
	if !utf8.Valid(v) {
		p.pos = start
		return nil, p.fail("invalid UTF-8 in IRI")
	}
	if !rdf.HasScheme(v) {
		p.pos = start
		return nil, p.fail("relative IRI not allowed here")
	}
	p.pos = i + 1
	return v, true
}

// decodeUCHAR decodes \uXXXX or \UXXXXXXXX at the start of b and returns
// the rune and the number of bytes used.
func decodeUCHAR(b []byte) (rune, int, bool) {
	if len(b) < 2 || b[0] != '\\' {
		return 0, 0, false
	}
	switch b[1] {
	case 'u':
		r, ok := decodeHex(b[2:], 4)
		return r, 6, ok
	case 'U':
		r, ok := decodeHex(b[2:], 8)
		return r, 10, ok
	}
	return 0, 0, false
}

// blank parses "_:label" at p.pos.
func (p *ntParser) blank(t *rawTerm) bool {
	line := p.line
	if p.pos+1 >= len(line) || line[p.pos+1] != ':' {
		return p.fail("expected '_:' for a blank node")
	}
	start := p.pos + 2
	n, ok := scanBlankLabel(line[start:])
	if !ok {
		p.pos = start
		return p.fail("bad blank node label")
	}
	t.kind, t.val = rdf.KindBlank, line[start:start+n]
	p.pos = start + n
	return true
}

// scanBlankLabel returns the length of the blank node label at the start of
// b: (PN_CHARS_U | [0-9]) ((PN_CHARS | '.')* PN_CHARS)?
func scanBlankLabel(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	r, n := utf8.DecodeRune(b)
	if !isPNCharsU(r) && !(r >= '0' && r <= '9') {
		return 0, false
	}
	i := n
	lastOK := i // end of the label if it stops at a PN_CHARS
	for i < len(b) {
		c := b[i]
		if c < 0x80 {
			if c == '.' {
				i++
				continue
			}
			if c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				i++
				lastOK = i
				continue
			}
			break
		}
		r, n := utf8.DecodeRune(b[i:])
		if !isPNChars(r) {
			break
		}
		i += n
		lastOK = i
	}
	return lastOK, true
}

// literal parses a quoted literal with its optional language tag or
// datatype at p.pos (which is '"').
func (p *ntParser) literal(t *rawTerm) bool {
	line := p.line
	start := p.pos + 1
	i := start
	high := false
	var val []byte
	for ; i < len(line); i++ {
		c := line[i]
		if c == '"' {
			val = line[start:i]
			break
		}
		if c == '\\' {
			v, end, ok := p.literalEscaped(start)
			if !ok {
				return false
			}
			val, i = v, end
			break
		}
		if c >= 0x80 {
			high = true
		}
	}
	if i >= len(line) {
		p.pos = start - 1
		return p.fail("unterminated string literal")
	}
	if high && !utf8.Valid(val) {
		p.pos = start
		return p.fail("invalid UTF-8 in literal")
	}
	t.kind, t.val = rdf.KindLiteral, val
	p.pos = i + 1
	if p.pos < len(line) {
		switch line[p.pos] {
		case '@':
			n := scanLangTag(line[p.pos+1:])
			if n == 0 {
				return p.fail("bad language tag")
			}
			t.lang = line[p.pos+1 : p.pos+1+n]
			p.pos += 1 + n
		case '^':
			if p.pos+2 >= len(line) || line[p.pos+1] != '^' || line[p.pos+2] != '<' {
				return p.fail("expected '^^<' before a datatype IRI")
			}
			p.pos += 2
			dt, ok := p.iriRef()
			if !ok {
				return false
			}
			t.dt = dt
		}
	}
	return true
}

// literalEscaped decodes a literal with escapes starting at start; it
// returns the value and the index of the closing quote.
func (p *ntParser) literalEscaped(start int) ([]byte, int, bool) {
	line := p.line
	v := make([]byte, 0, 64)
	for i := start; i < len(line); i++ {
		c := line[i]
		switch c {
		case '"':
			if !utf8.Valid(v) {
				p.pos = start
				return nil, 0, p.fail("invalid UTF-8 in literal")
			}
			return v, i, true
		case '\\':
			if i+1 >= len(line) {
				p.pos = i
				return nil, 0, p.fail("unterminated escape")
			}
			if e := echar(line[i+1]); e != 0 {
				v = append(v, e)
				i++
				continue
			}
			r, n, ok := decodeUCHAR(line[i:])
			if !ok {
				p.pos = i
				return nil, 0, p.fail("bad escape sequence in literal")
			}
			v = utf8.AppendRune(v, r)
			i += n - 1
		default:
			v = append(v, c)
		}
	}
	p.pos = start - 1
	return nil, 0, p.fail("unterminated string literal")
}

// echar returns the character for the string escape \c, or 0.
func echar(c byte) byte {
	switch c {
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 'f':
		return '\f'
	case '"':
		return '"'
	case '\'':
		return '\''
	case '\\':
		return '\\'
	}
	return 0
}

// scanLangTag returns the length of [a-zA-Z]+ ('-' [a-zA-Z0-9]+)* at the
// start of b, or 0.
func scanLangTag(b []byte) int {
	i := 0
	for i < len(b) && isAlpha(b[i]) {
		i++
	}
	if i == 0 {
		return 0
	}
	for i < len(b) && b[i] == '-' {
		j := i + 1
		for j < len(b) && (isAlpha(b[j]) || b[j] >= '0' && b[j] <= '9') {
			j++
		}
		if j == i+1 {
			return 0
		}
		i = j
	}
	return i
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func readAllBytes(r io.Reader) ([]byte, error) { return io.ReadAll(r) }
