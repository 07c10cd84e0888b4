package results

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/wukongd/wukongd/rdf"
)

// jsonReader streams a SPARQL JSON results document with a hand-written
// scanner over the bytes: no reflection and no map per binding. It accepts
// and decodes exactly what the encoding/json reader it replaced did for
// every syntactically valid document (jsonoracle_test.go keeps that reader
// as the oracle of a fuzz test): struct field names of the term objects
// and of the head match case-insensitively, variables by exact name, a
// repeated key overrides the earlier one, null leaves a field unset. The
// bindings are streamed when "head" comes before "results"; otherwise the
// results value is decoded whole with encoding/json. Reading stops at the
// end of the bindings array.
type jsonReader struct {
	s        jsonScanner
	vars     []string
	index    map[string]int // variable → column, for long heads
	isBool   bool
	boolean  bool
	inRows   bool // positioned inside the bindings array
	rowsRead int
	buffered [][]rdf.Term
	done     bool
	row      []rdf.Term
	slotErr  []error // per column: the bad term of this binding, if any
	nBad     int
	intern   map[string]string // datatypes and language tags
}

// jsonTermObj is the JSON object of one binding (the buffered path
// decodes it with encoding/json; its fields give the names matched).
type jsonTermObj struct {
	Type     string `json:"type"`
	Value    string `json:"value"`
	Lang     string `json:"xml:lang"`
	Datatype string `json:"datatype"`
}

func (jt *jsonTermObj) term() (rdf.Term, error) {
	switch jt.Type {
	case "uri":
		return rdf.NewIRI(jt.Value), nil
	case "bnode":
		return rdf.NewBlank(jt.Value), nil
	case "literal", "typed-literal":
		if jt.Lang != "" {
			return rdf.NewLangLiteral(jt.Value, jt.Lang), nil
		}
		return rdf.NewLiteral(jt.Value, jt.Datatype), nil
	}
	return rdf.Term{}, fmt.Errorf("results: JSON binding has unknown type %q", jt.Type)
}

// maxJSONDepth is encoding/json's nesting limit, counted from each value
// the old reader decoded (the head, a binding, a skipped member).
const maxJSONDepth = 10000

func newJSONReader(r io.Reader) (*jsonReader, error) {
	jr := &jsonReader{}
	jr.s.init(r)
	s := &jr.s
	if err := s.expect('{'); err != nil {
		return nil, err
	}
	sawHead := false
	var rawBindings []map[string]jsonTermObj
	for n := 0; ; n++ {
		_, end, err := s.member(n, '}', "after object key:value pair")
		if err != nil {
			return nil, err
		}
		if end {
			break
		}
		key, err := s.key()
		if err != nil {
			return nil, err
		}
		switch key {
		case "head":
			vars, err := s.head()
			if err != nil {
				return nil, err
			}
			jr.vars = vars
			sawHead = true
		case "boolean":
			if err := s.boolean(&jr.boolean); err != nil {
				return nil, err
			}
			jr.isBool = true
		case "results":
			if sawHead {
				if err := s.enterBindings(); err != nil {
					return nil, err
				}
				jr.inRows = true
				jr.setIndex()
				return jr, nil
			}
			raw, err := s.rawValue()
			if err != nil {
				return nil, err
			}
			var res struct {
				Bindings []map[string]jsonTermObj `json:"bindings"`
			}
			if err := json.Unmarshal(raw, &res); err != nil {
				return nil, fmt.Errorf("results: bad JSON results: %w", err)
			}
			rawBindings = res.Bindings
		default:
			if err := s.skipValue(0); err != nil {
				return nil, err
			}
		}
	}
	if !sawHead && !jr.isBool {
		return nil, fmt.Errorf("results: JSON document has no head")
	}
	jr.setIndex()
	for _, b := range rawBindings {
		clear(jr.row)
		for name, jt := range b {
			i, ok := jr.column([]byte(name))
			if !ok {
				return nil, fmt.Errorf("results: JSON binding of undeclared variable %q", name)
			}
			t, err := jt.term()
			if err != nil {
				return nil, err
			}
			jr.row[i] = t
		}
		jr.buffered = append(jr.buffered, append([]rdf.Term(nil), jr.row...))
	}
	jr.done = true
	s.release()
	return jr, nil
}

// setIndex prepares the row; with many variables a map finds the column
// (a variable named twice binds the last column of that name).
func (jr *jsonReader) setIndex() {
	if len(jr.vars) > 8 {
		jr.index = make(map[string]int, len(jr.vars))
		for i, v := range jr.vars {
			jr.index[v] = i
		}
	}
	jr.row = make([]rdf.Term, len(jr.vars))
}

func (jr *jsonReader) column(name []byte) (int, bool) {
	if jr.index != nil {
		i, ok := jr.index[string(name)]
		return i, ok
	}
	for i := len(jr.vars) - 1; i >= 0; i-- {
		if jr.vars[i] == string(name) {
			return i, true
		}
	}
	return 0, false
}

func (jr *jsonReader) Vars() []string  { return jr.vars }
func (jr *jsonReader) IsBoolean() bool { return jr.isBool }
func (jr *jsonReader) Boolean() bool   { return jr.boolean }

func (jr *jsonReader) Next() ([]rdf.Term, error) {
	if jr.done {
		if len(jr.buffered) == 0 {
			return nil, io.EOF
		}
		row := jr.buffered[0]
		jr.buffered = jr.buffered[1:]
		return row, nil
	}
	s := &jr.s
	c, err := s.peekNonSpace()
	if err != nil {
		return nil, err
	}
	if c == ']' {
		s.pos++
		jr.done = true
		s.release()
		return nil, io.EOF
	}
	if jr.rowsRead > 0 {
		if c != ',' {
			return nil, s.syntaxError(c, "after array element")
		}
		s.pos++
		if c, err = s.peekNonSpace(); err != nil {
			return nil, err
		}
	}
	jr.rowsRead++
	return jr.binding(c)
}

// binding reads one binding object (or null) starting with c.
func (jr *jsonReader) binding(c byte) ([]rdf.Term, error) {
	s := &jr.s
	clear(jr.row)
	switch c {
	case 'n':
		return jr.row, s.literal("null")
	case '{':
	default:
		return nil, s.typeError(c, 0, "binding")
	}
	s.pos++
	if jr.nBad > 0 {
		clear(jr.slotErr)
		jr.nBad = 0
	}
	var undeclared []byte
	for n := 0; ; n++ {
		c, end, err := s.member(n, '}', "after object key:value pair")
		if err != nil {
			return nil, err
		}
		if end {
			break
		}
		if c != '"' {
			return nil, s.syntaxError(c, "looking for beginning of object key string")
		}
		name, err := s.str()
		if err != nil {
			return nil, err
		}
		col, ok := jr.column(name)
		if !ok && undeclared == nil {
			undeclared = append([]byte{}, name...)
		}
		if err := s.colon(); err != nil {
			return nil, err
		}
		t, terr, err := jr.term()
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		jr.row[col] = t
		if terr != nil || (jr.nBad > 0 && jr.slotErr[col] != nil) {
			jr.setSlotErr(col, terr)
		}
	}
	if undeclared != nil {
		return nil, fmt.Errorf("results: JSON binding of undeclared variable %q", undeclared)
	}
	if jr.nBad > 0 {
		for _, e := range jr.slotErr {
			if e != nil {
				return nil, e
			}
		}
	}
	return jr.row, nil
}

// setSlotErr records (or, with nil, clears) the error of a column whose
// term is bad; a later key of the same name replaces it.
func (jr *jsonReader) setSlotErr(col int, err error) {
	if jr.slotErr == nil {
		jr.slotErr = make([]error, len(jr.row))
	}
	if jr.slotErr[col] != nil {
		jr.nBad--
	}
	jr.slotErr[col] = err
	if err != nil {
		jr.nBad++
	}
}

// Term object field names.
const (
	fieldNone = iota
	fieldType
	fieldValue
	fieldLang
	fieldDatatype
)

func termField(key []byte) int {
	switch string(key) {
	case "type":
		return fieldType
	case "value":
		return fieldValue
	case "datatype":
		return fieldDatatype
	case "xml:lang":
		return fieldLang
	}
	switch {
	case bytes.EqualFold(key, []byte("type")):
		return fieldType
	case bytes.EqualFold(key, []byte("value")):
		return fieldValue
	case bytes.EqualFold(key, []byte("datatype")):
		return fieldDatatype
	case bytes.EqualFold(key, []byte("xml:lang")):
		return fieldLang
	}
	return fieldNone
}

// Term types.
const (
	typeUnset = iota
	typeURI
	typeBNode
	typeLiteral
	typeOther
)

// term reads the term object of one variable. terr is a term that
// decodes but is not a valid term (an unknown type); err is bad JSON.
func (jr *jsonReader) term() (t rdf.Term, terr, err error) {
	s := &jr.s
	c, err := s.peekNonSpace()
	if err != nil {
		return t, nil, err
	}
	switch c {
	case 'n':
		if err := s.literal("null"); err != nil {
			return t, nil, err
		}
		return t, fmt.Errorf("results: JSON binding has unknown type %q", ""), nil
	case '{':
	default:
		return t, nil, s.typeError(c, 1, "term")
	}
	s.pos++
	typ := typeUnset
	var other string
	var value, lang, dt string
	for n := 0; ; n++ {
		c, end, err := s.member(n, '}', "after object key:value pair")
		if err != nil {
			return t, nil, err
		}
		if end {
			break
		}
		if c != '"' {
			return t, nil, s.syntaxError(c, "looking for beginning of object key string")
		}
		key, err := s.str()
		if err != nil {
			return t, nil, err
		}
		f := termField(key)
		if err := s.colon(); err != nil {
			return t, nil, err
		}
		if f == fieldNone {
			if err := s.skipValue(2); err != nil {
				return t, nil, err
			}
			continue
		}
		c, err = s.peekNonSpace()
		if err != nil {
			return t, nil, err
		}
		if c == 'n' {
			if err := s.literal("null"); err != nil {
				return t, nil, err
			}
			continue
		}
		if c != '"' {
			return t, nil, s.typeError(c, 2, "term field")
		}
		v, err := s.str()
		if err != nil {
			return t, nil, err
		}
		switch f {
		case fieldType:
			switch string(v) {
			case "uri":
				typ = typeURI
			case "bnode":
				typ = typeBNode
			case "literal", "typed-literal":
				typ = typeLiteral
			default:
				typ, other = typeOther, string(v)
			}
		case fieldValue:
			value = string(v)
		case fieldLang:
			lang = jr.internBytes(v)
		case fieldDatatype:
			dt = jr.internBytes(v)
		}
	}
	switch typ {
	case typeURI:
		return rdf.NewIRI(value), nil, nil
	case typeBNode:
		return rdf.NewBlank(value), nil, nil
	case typeLiteral:
		if lang != "" {
			return rdf.NewLangLiteral(value, lang), nil, nil
		}
		return rdf.NewLiteral(value, dt), nil, nil
	}
	return t, fmt.Errorf("results: JSON binding has unknown type %q", other), nil
}

// internBytes returns b as a string, shared with earlier equal strings
// (datatypes and language tags repeat on every row).
func (jr *jsonReader) internBytes(b []byte) string {
	if s, ok := jr.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if jr.intern == nil {
		jr.intern = make(map[string]string)
	}
	if len(jr.intern) < 256 {
		jr.intern[s] = s
	}
	return s
}

func jsonKind(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// jsonScanner reads JSON tokens from a buffered io.Reader.
type jsonScanner struct {
	r       io.Reader
	buf     []byte // unread input is buf[pos:]
	pos     int
	err     error  // read error; io.EOF at the end of input
	sb      []byte // unescaped string
	scratch []byte // raw value copy (rawValue)
	raw     bool   // fill copies the consumed bytes from rawFrom into scratch
	rawFrom int
}

var jsonBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func (s *jsonScanner) init(r io.Reader) {
	s.r = r
	s.buf = (*jsonBufPool.Get().(*[]byte))[:0]
}

// release returns the buffer once the document has been read; nothing
// handed out refers to it.
func (s *jsonScanner) release() {
	if s.buf != nil && cap(s.buf) <= 1<<20 {
		b := s.buf[:0]
		jsonBufPool.Put(&b)
	}
	s.buf, s.pos = nil, 0
}

// fill reads more input after buf[pos:], moving the unread bytes to the
// front; it reports whether any byte was added.
func (s *jsonScanner) fill() bool {
	if s.err != nil {
		return false
	}
	if s.raw {
		// skipValue's bytes between the last copy and pos.
		s.scratch = append(s.scratch, s.buf[s.rawFrom:s.pos]...)
		s.rawFrom = 0
	}
	n := copy(s.buf[:cap(s.buf)], s.buf[s.pos:])
	s.buf, s.pos = s.buf[:n], 0
	if n == cap(s.buf) {
		s.buf = append(s.buf, make([]byte, max(n, 4096))...)[:n]
	}
	for range 100 {
		m, err := s.r.Read(s.buf[n:cap(s.buf)])
		s.buf = s.buf[:n+m]
		if err != nil {
			s.err = err
		}
		if m > 0 {
			return true
		}
		if err != nil {
			return false
		}
	}
	s.err = io.ErrNoProgress
	return false
}

func (s *jsonScanner) readErr() error {
	if s.err == nil || s.err == io.EOF {
		return errors.New("results: bad JSON: unexpected end of input")
	}
	return fmt.Errorf("results: bad JSON: %w", s.err)
}

func (s *jsonScanner) syntaxError(c byte, context string) error {
	return fmt.Errorf("results: bad JSON: invalid character %q %s", c, context)
}

// peekNonSpace skips white space and returns the next byte unread.
func (s *jsonScanner) peekNonSpace() (byte, error) {
	for {
		for s.pos < len(s.buf) {
			c := s.buf[s.pos]
			if c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
				return c, nil
			}
			s.pos++
		}
		if !s.fill() {
			return 0, s.readErr()
		}
	}
}

// member starts the n-th member of an object, or element of an array (n
// from 0), whose opening byte has been read: end reports (and consumes) the
// closing byte; otherwise c is the member's first byte, unread, after the
// ',' that must separate it from the one before (after names what it
// follows in the syntax error when that ',' is missing).
func (s *jsonScanner) member(n int, close byte, after string) (c byte, end bool, err error) {
	if c, err = s.peekNonSpace(); err != nil {
		return 0, false, err
	}
	if c == close {
		s.pos++
		return c, true, nil
	}
	if n > 0 {
		if c != ',' {
			return c, false, s.syntaxError(c, after)
		}
		s.pos++
		c, err = s.peekNonSpace()
	}
	return c, false, err
}

func (s *jsonScanner) expect(want byte) error {
	c, err := s.peekNonSpace()
	if err != nil {
		return err
	}
	if c != want {
		return s.syntaxError(c, fmt.Sprintf("where %q was expected", want))
	}
	s.pos++
	return nil
}

func (s *jsonScanner) colon() error {
	c, err := s.peekNonSpace()
	if err != nil {
		return err
	}
	if c != ':' {
		return s.syntaxError(c, "after object key")
	}
	s.pos++
	return nil
}

// key reads an object key and its colon at the next non-space byte and
// returns it if it is one of the top-level names the reader knows.
func (s *jsonScanner) key() (string, error) {
	c, err := s.peekNonSpace()
	if err != nil {
		return "", err
	}
	if c != '"' {
		return "", s.syntaxError(c, "looking for beginning of object key string")
	}
	k, err := s.str()
	if err != nil {
		return "", err
	}
	var known string
	switch string(k) {
	case "head", "boolean", "results", "bindings":
		known = string(k)
	}
	return known, s.colon()
}

// literal reads the literal lit (true, false, null) at pos.
func (s *jsonScanner) literal(lit string) error {
	for len(s.buf)-s.pos < len(lit) {
		if !s.fill() {
			break
		}
	}
	n := min(len(lit), len(s.buf)-s.pos)
	for i := 0; i < n; i++ {
		if s.buf[s.pos+i] != lit[i] {
			return s.syntaxError(s.buf[s.pos+i], "in literal "+lit)
		}
	}
	if n < len(lit) {
		return s.readErr()
	}
	s.pos += len(lit)
	return nil
}

// str reads a string at pos (which holds '"') and returns its decoded
// bytes, valid until the next call: the string is unescaped as
// encoding/json does (invalid UTF-8 and lone surrogates become U+FFFD).
func (s *jsonScanner) str() ([]byte, error) {
	// i is an offset from s.pos, which stays at the opening quote until
	// the end so that fill keeps the whole string.
	i := 1
	start := 1 // first byte not yet copied to sb
	esc := false
	for {
		// Skip the bytes that need no attention.
		b := s.buf[min(s.pos+i, len(s.buf)):]
		j := 0
		for j+8 <= len(b) && plainString8(binary.LittleEndian.Uint64(b[j:])) {
			j += 8
		}
		for j < len(b) && plainStringByte[b[j]] {
			j++
		}
		i += j
		if j == len(b) {
			if !s.fill() {
				return nil, s.readErr()
			}
			continue
		}
		c := b[j]
		switch {
		case c == '"':
			var out []byte
			if esc {
				s.sb = append(s.sb, s.buf[s.pos+start:s.pos+i]...)
				out = s.sb
			} else {
				out = s.buf[s.pos+1 : s.pos+i]
			}
			s.pos += i + 1
			return out, nil
		case c < ' ':
			return nil, s.syntaxError(c, "in string literal")
		case c == '\\':
			if !esc {
				esc = true
				s.sb = s.sb[:0]
			}
			s.sb = append(s.sb, s.buf[s.pos+start:s.pos+i]...)
			n, err := s.escape(i)
			if err != nil {
				return nil, err
			}
			i += n
			start = i
		case c < utf8.RuneSelf:
			i++
		default:
			if !utf8.FullRune(s.buf[s.pos+i:]) && s.fill() {
				continue
			}
			r, n := utf8.DecodeRune(s.buf[s.pos+i:])
			if r == utf8.RuneError && n == 1 {
				if !esc {
					esc = true
					s.sb = s.sb[:0]
				}
				s.sb = append(s.sb, s.buf[s.pos+start:s.pos+i]...)
				s.sb = utf8.AppendRune(s.sb, utf8.RuneError)
				i++
				start = i
				continue
			}
			i += n
		}
	}
}

// plainStringByte marks the bytes a string copies as they are: ASCII
// other than the quote, the backslash and control characters.
var plainStringByte = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainString8 reports whether the 8 bytes of x are all plain string
// bytes (see plainStringByte), testing them at once.
func plainString8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return (x&highs)|((x-ones*0x20) & ^x & highs)|hasZero(x^(ones*'"'))|hasZero(x^(ones*'\\')) == 0
}

// ensure makes n bytes from pos+i available if the input has them.
func (s *jsonScanner) ensure(i, n int) {
	for len(s.buf)-s.pos-i < n && s.fill() {
	}
}

// escape decodes the escape at pos+i into sb and returns its length.
func (s *jsonScanner) escape(i int) (int, error) {
	s.ensure(i, 2)
	if len(s.buf)-s.pos-i < 2 {
		return 0, s.readErr()
	}
	c := s.buf[s.pos+i+1]
	switch c {
	case '"', '\\', '/':
		s.sb = append(s.sb, c)
	case 'b':
		s.sb = append(s.sb, '\b')
	case 'f':
		s.sb = append(s.sb, '\f')
	case 'n':
		s.sb = append(s.sb, '\n')
	case 'r':
		s.sb = append(s.sb, '\r')
	case 't':
		s.sb = append(s.sb, '\t')
	case 'u':
		s.ensure(i, 12)
		rr, err := s.hex4(i + 2)
		if err != nil {
			return 0, err
		}
		if utf16.IsSurrogate(rr) {
			// A following \uXXXX may complete the pair.
			b := s.buf[s.pos+i+6:]
			if len(b) >= 6 && b[0] == '\\' && b[1] == 'u' {
				if rr1, err := s.hex4(i + 8); err == nil {
					if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
						s.sb = utf8.AppendRune(s.sb, dec)
						return 12, nil
					}
				}
			}
			rr = utf8.RuneError
		}
		s.sb = utf8.AppendRune(s.sb, rr)
		return 6, nil
	default:
		return 0, s.syntaxError(c, "in string escape code")
	}
	return 2, nil
}

// hex4 decodes the 4 hex digits at pos+i.
func (s *jsonScanner) hex4(i int) (rune, error) {
	var r rune
	for k := 0; k < 4; k++ {
		if s.pos+i+k >= len(s.buf) {
			return 0, s.readErr()
		}
		c := s.buf[s.pos+i+k]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, s.syntaxError(c, "in \\u hexadecimal character escape")
		}
		r = r*16 + rune(c)
	}
	return r, nil
}

// skipValue reads and checks one value at the next non-space byte; depth
// is the nesting of its container (0 at the top of a decoded value).
func (s *jsonScanner) skipValue(depth int) error {
	c, err := s.peekNonSpace()
	if err != nil {
		return err
	}
	switch c {
	case '"':
		_, err := s.str()
		return err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case '{', '[':
		if depth+1 > maxJSONDepth {
			return errors.New("results: bad JSON: exceeded max depth")
		}
		s.pos++
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		for n := 0; ; n++ {
			c, err := s.peekNonSpace()
			if err != nil {
				return err
			}
			if c == end && n == 0 {
				s.pos++
				return nil
			}
			if n > 0 {
				if c == end {
					s.pos++
					return nil
				}
				if c != ',' {
					return s.syntaxError(c, "after value")
				}
				s.pos++
			}
			if end == '}' {
				if _, err := s.key(); err != nil {
					return err
				}
			}
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
		}
	}
	if c == '-' || '0' <= c && c <= '9' {
		return s.number()
	}
	return s.syntaxError(c, "looking for beginning of value")
}

// number reads a JSON number at pos.
func (s *jsonScanner) number() error {
	next := func() byte {
		if s.pos >= len(s.buf) && !s.fill() {
			return 0
		}
		return s.buf[s.pos]
	}
	digits := func() int {
		n := 0
		for c := next(); '0' <= c && c <= '9'; c = next() {
			s.pos++
			n++
		}
		return n
	}
	if next() == '-' {
		s.pos++
	}
	switch c := next(); {
	case c == '0':
		s.pos++
	case '1' <= c && c <= '9':
		digits()
	default:
		return s.badNumber(c)
	}
	if next() == '.' {
		s.pos++
		if digits() == 0 {
			return s.badNumber(next())
		}
	}
	if c := next(); c == 'e' || c == 'E' {
		s.pos++
		if c := next(); c == '+' || c == '-' {
			s.pos++
		}
		if digits() == 0 {
			return s.badNumber(next())
		}
	}
	return nil
}

func (s *jsonScanner) badNumber(c byte) error {
	if c == 0 && s.pos >= len(s.buf) {
		return s.readErr()
	}
	return s.syntaxError(c, "in numeric literal")
}

// rawValue reads one value and returns a copy of its bytes.
func (s *jsonScanner) rawValue() ([]byte, error) {
	if _, err := s.peekNonSpace(); err != nil {
		return nil, err
	}
	s.scratch, s.raw, s.rawFrom = s.scratch[:0], true, s.pos
	err := s.skipValue(0)
	s.raw = false
	if err != nil {
		return nil, err
	}
	return append(s.scratch, s.buf[s.rawFrom:s.pos]...), nil
}

// head reads the value of "head" as encoding/json decodes it into
// struct{ Vars []string }: null leaves it unset, "vars" matches without
// case, a repeated "vars" decodes into the earlier slice.
func (s *jsonScanner) head() ([]string, error) {
	c, err := s.peekNonSpace()
	if err != nil {
		return nil, err
	}
	switch c {
	case 'n':
		return nil, s.literal("null")
	case '{':
	default:
		return nil, s.typeError(c, 0, "head")
	}
	s.pos++
	var vars []string
	for n := 0; ; n++ {
		c, end, err := s.member(n, '}', "after object key:value pair")
		if err != nil {
			return nil, err
		}
		if end {
			return vars, nil
		}
		if c != '"' {
			return nil, s.syntaxError(c, "looking for beginning of object key string")
		}
		k, err := s.str()
		if err != nil {
			return nil, err
		}
		isVars := bytes.EqualFold(k, []byte("vars"))
		if err := s.colon(); err != nil {
			return nil, err
		}
		if !isVars {
			if err := s.skipValue(1); err != nil {
				return nil, err
			}
			continue
		}
		if c, err = s.peekNonSpace(); err != nil {
			return nil, err
		}
		switch c {
		case 'n':
			if err := s.literal("null"); err != nil {
				return nil, err
			}
			vars = nil
			continue
		case '[':
		default:
			return nil, s.typeError(c, 1, "head vars")
		}
		s.pos++
		i := 0
		for m := 0; ; m++ {
			c, end, err := s.member(m, ']', "after array element")
			if err != nil {
				return nil, err
			}
			if end {
				break
			}
			if i >= cap(vars) {
				vars = append(vars[:i], "")
			} else {
				vars = vars[:i+1]
			}
			switch c {
			case '"':
				v, err := s.str()
				if err != nil {
					return nil, err
				}
				vars[i] = string(v)
			case 'n':
				if err := s.literal("null"); err != nil {
					return nil, err
				}
			default:
				return nil, s.typeError(c, 2, "variable name")
			}
			i++
		}
		vars = vars[:i]
		if i == 0 {
			vars = []string{}
		}
	}
}

// boolean reads the value of "boolean": null leaves b as it is.
func (s *jsonScanner) boolean(b *bool) error {
	c, err := s.peekNonSpace()
	if err != nil {
		return err
	}
	switch c {
	case 'n':
		return s.literal("null")
	case 't':
		*b = true
		return s.literal("true")
	case 'f':
		*b = false
		return s.literal("false")
	}
	return s.typeError(c, 0, "boolean")
}

// enterBindings reads the results object up to the opening bracket of
// "bindings" (matched exactly), skipping the members before it.
func (s *jsonScanner) enterBindings() error {
	if err := s.expect('{'); err != nil {
		return err
	}
	for n := 0; ; n++ {
		c, err := s.peekNonSpace()
		if err != nil {
			return err
		}
		if c == '}' {
			return fmt.Errorf("results: JSON results object has no bindings")
		}
		if n > 0 {
			if c != ',' {
				return s.syntaxError(c, "after object key:value pair")
			}
			s.pos++
		}
		k, err := s.key()
		if err != nil {
			return err
		}
		if k == "bindings" {
			return s.expect('[')
		}
		if err := s.skipValue(0); err != nil {
			return err
		}
	}
}

// typeError reads the value starting with c, of the wrong JSON type for
// what, so that bad syntax inside it is reported as such, and returns an
// error; depth is the nesting of its container.
func (s *jsonScanner) typeError(c byte, depth int, what string) error {
	if err := s.skipValue(depth); err != nil {
		return err
	}
	return fmt.Errorf("results: bad JSON %s: unexpected %s", what, jsonKind(c))
}
