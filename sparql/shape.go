package sparql

import (
	"strconv"
	"strings"

	"github.com/wukongd/wukongd/rdf"
)

// The shape of a query: its text with the constants that may vary taken
// out. Queries of one shape (the same text but for those constants) parse
// to the same algebra but for the constants, so a cache keyed by shape
// (Shapes, shapecache.go) can hand out one parsed template for all of them
// and let the planner's plan be re-bound to each query's constants.
//
// lexShape is a single pass over the text, far cheaper than the ANTLR
// lexer. It takes out as parameters ("slots"):
//   - absolute IRI references without escapes (<http://…>),
//   - prefixed names with a simple local part (ASCII letters, digits,
//     '_', '-', '.', ':', no escapes) whose prefix the prologue declares,
//   - short string literals without escapes and without a language tag
//     or datatype.
//
// Everything else stays in the shape as written (whitespace and comments
// collapsed): keywords, variables, numbers (so LIMIT and OFFSET values,
// which change the plan, are part of the shape), blank nodes, language
// tags, datatypes and the literals carrying them, relative IRIs, the IRIs
// of PREFIX and BASE, an IRI or prefixed name called as a function
// (followed by '('). A text the pass does not understand (non-ASCII
// outside IRIs and strings, an escape in a prefixed name, an unclosed
// string) has no shape: it takes the ordinary parse.
//
// Which slots are parameters of the plan and which must stay fixed (part
// of the cache key) is decided afterwards, on the parsed algebra
// (classify in shapecache.go).

// slotKind is what a slot holds.
type slotKind uint8

const (
	slotIRI    slotKind = iota + 1 // <…>: text is the IRI
	slotPName                      // prefix:local: text as written
	slotString                     // "…" or '…': text is the content
)

// slot is one constant taken out of the text.
type slot struct {
	kind  slotKind
	quote byte   // slotString: ' or "
	text  string // a substring of the text
}

// lexedShape is the result of lexShape: the shape's text in pieces
// (segs[0] slot0 segs[1] slot1 … segs[n]), the slots, and the prefixes
// the prologue declares.
type lexedShape struct {
	key      string // the segments joined by slot markers
	segs     []int  // end offset in key of each segment
	slots    []slot
	prefixes []Prefix
}

// maxShapeSlots bounds the slots of one shape (a longer list of constants
// is a data-heavy text, not a light query).
const maxShapeSlots = 64

// term returns the term slot i stands for.
func (l *lexedShape) term(i int) (rdf.Term, bool) {
	s := l.slots[i]
	switch s.kind {
	case slotIRI:
		return rdf.NewIRI(s.text), true
	case slotString:
		return rdf.NewLiteral(s.text, ""), true
	case slotPName:
		c := strings.IndexByte(s.text, ':')
		// The last declaration of a prefix is the one in force.
		for j := len(l.prefixes) - 1; j >= 0; j-- {
			if l.prefixes[j].Name == s.text[:c] {
				return rdf.NewIRI(l.prefixes[j].IRI + s.text[c+1:]), true
			}
		}
	}
	return rdf.Term{}, false
}

// text returns the query text with slot i written as with(i) (nil: as in
// the original text).
func (l *lexedShape) text(with func(i int) string) string {
	var b strings.Builder
	b.Grow(len(l.key) + 64*len(l.slots))
	start := 0
	for i, end := range l.segs {
		seg := l.key[start:end]
		if i > 0 {
			seg = seg[2:] // the slot marker
		}
		b.WriteString(seg)
		start = end
		if i < len(l.slots) {
			if with != nil {
				b.WriteString(with(i))
			} else {
				b.WriteString(slotSource(l.slots[i]))
			}
		}
	}
	return b.String()
}

// slotSource writes a slot as a SPARQL token.
func slotSource(s slot) string {
	switch s.kind {
	case slotIRI:
		return "<" + s.text + ">"
	case slotString:
		return string(s.quote) + s.text + string(s.quote)
	}
	return s.text
}

// Sentinels: the parameters of a template are written into its text as
// IRIs (or, for string slots, strings) no query uses, so that they can be
// found in the algebra the parser builds.
const sentinelPrefix = "urn:x-wukongd-param:"

func sentinel(i int, k slotKind) string {
	if k == slotString {
		return `"` + sentinelPrefix + strconv.Itoa(i) + `"`
	}
	return "<" + sentinelPrefix + strconv.Itoa(i) + ">"
}

// ParamIndex reports whether t is the sentinel of a template's parameter
// (an IRI or a simple literal urn:x-wukongd-param:N), and N.
func ParamIndex(t rdf.Term) (int, bool) {
	if (t.Kind != rdf.KindIRI && t.Kind != rdf.KindLiteral) || !strings.HasPrefix(t.Value, sentinelPrefix) {
		return 0, false
	}
	if t.Kind == rdf.KindLiteral && (t.Lang != "" || (t.Datatype != "" && t.Datatype != rdf.XSDString)) {
		return 0, false
	}
	n, err := strconv.Atoi(t.Value[len(sentinelPrefix):])
	if err != nil || n < 0 || n >= maxShapeSlots {
		return 0, false
	}
	return n, true
}

// lexShape lexes text into its shape; ok is false when the text has none
// (the ordinary parse then handles it).
func lexShape(text string) (l lexedShape, ok bool) {
	key := make([]byte, 0, len(text))
	// The prologue: PREFIX name: <iri> and BASE <iri> keep their IRIs.
	const (
		pNone = iota
		pPrefixName
		pPrefixIRI
		pBaseIRI
	)
	decl := pNone
	declName := ""
	datatype := false // the last token was ^^: the next IRI is a datatype
	space := func() {
		if len(key) > 0 && key[len(key)-1] != ' ' {
			key = append(key, ' ')
		}
	}
	addSlot := func(k slotKind, s string) bool {
		if len(l.slots) == maxShapeSlots {
			return false
		}
		l.segs = append(l.segs, len(key))
		key = append(key, 0, byte(k))
		l.slots = append(l.slots, slot{kind: k, text: s})
		return true
	}
	l.segs = make([]int, 0, 8)
	l.slots = make([]slot, 0, 8)
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			space()
			i++
			continue
		case c == '#':
			for i < len(text) && text[i] != '\n' && text[i] != '\r' {
				i++
			}
			space()
			continue
		case c >= 0x80 || c == 0:
			return l, false
		}
		wasDatatype := datatype
		datatype = false
		switch {
		case c == '<':
			j, isIRI := scanIRI(text, i)
			if !isIRI {
				key = append(key, c) // the operator
				i++
				continue
			}
			iri := text[i+1 : j-1]
			switch {
			case decl == pPrefixIRI || decl == pBaseIRI:
				if strings.IndexByte(iri, '\\') >= 0 || !rdf.HasScheme(iri) || hasNonASCII(iri) {
					return l, false // a prefix or base that needs resolving
				}
				if decl == pPrefixIRI {
					l.prefixes = append(l.prefixes, Prefix{Name: declName, IRI: iri})
				}
				decl = pNone
				key = append(key, text[i:j]...)
			case !wasDatatype && rdf.HasScheme(iri) && strings.IndexByte(iri, '\\') < 0 && !calledAt(text, j):
				if !addSlot(slotIRI, iri) {
					return l, false
				}
			default:
				key = append(key, text[i:j]...)
			}
			i = j
		case c == '"' || c == '\'':
			j, closed := scanString(text, i)
			if !closed {
				return l, false
			}
			long := j-i >= 6 && text[i+1] == c && text[i+2] == c
			tagged := j < len(text) && (text[j] == '@' || text[j] == '^')
			body := text[i+1 : j-1]
			if !long && !tagged && strings.IndexByte(body, '\\') < 0 && !hasNonASCII(body) {
				if !addSlot(slotString, body) {
					return l, false
				}
				l.slots[len(l.slots)-1].quote = c
			} else {
				key = append(key, text[i:j]...)
			}
			i = j
			if j < len(text) && text[j] == '@' {
				// The language tag stays in the shape.
				k := j + 1
				for k < len(text) && (isAlnum(text[k]) || text[k] == '-') {
					k++
				}
				key = append(key, text[j:k]...)
				i = k
			}
		case c == '^' && i+1 < len(text) && text[i+1] == '^':
			key = append(key, "^^"...)
			datatype = true
			i += 2
		case c == '?' || c == '$':
			j := i + 1
			for j < len(text) && (isAlnum(text[j]) || text[j] == '_') {
				j++
			}
			key = append(key, text[i:j]...)
			i = j
		case c == '_' && i+1 < len(text) && text[i+1] == ':':
			// A blank node label.
			j := i + 2
			for j < len(text) && (isAlnum(text[j]) || text[j] == '_' || text[j] == '-' || text[j] == '.') {
				j++
			}
			for j > i+2 && text[j-1] == '.' {
				j--
			}
			key = append(key, text[i:j]...)
			i = j
		case isAlnum(c) || c == ':':
			// A keyword, a number, a function name or a prefixed name.
			j := i
			for j < len(text) && (isAlnum(text[j]) || text[j] == '_' || text[j] == '-' || text[j] == '.') {
				j++
			}
			if j == len(text) || text[j] != ':' {
				// Not a prefixed name: a word or a number, kept whole (a
				// number's trailing '.' is the triple's end, also kept).
				word := text[i:j]
				switch {
				case strings.EqualFold(word, "PREFIX"):
					decl = pPrefixName
				case strings.EqualFold(word, "BASE"):
					decl = pBaseIRI
				}
				key = append(key, word...)
				i = j
				continue
			}
			prefix := text[i:j]
			if prefix != "" && (!isAlpha(prefix[0]) || prefix[len(prefix)-1] == '.') {
				return l, false
			}
			k := j + 1
			if k < len(text) && (isAlnum(text[k]) || text[k] == '_' || text[k] == ':') {
				for k < len(text) && (isAlnum(text[k]) || text[k] == '_' || text[k] == '-' || text[k] == '.' || text[k] == ':') {
					k++
				}
				for text[k-1] == '.' {
					k--
				}
			}
			if k < len(text) && (text[k] == '\\' || text[k] == '%' || text[k] >= 0x80) {
				return l, false
			}
			name := text[i:k]
			switch {
			case decl == pPrefixName:
				if k != j+1 {
					return l, false // PREFIX a:b — an error for the parser
				}
				declName, decl = prefix, pPrefixIRI
				key = append(key, name...)
			case k > j+1 && !wasDatatype && declared(l.prefixes, prefix) && !calledAt(text, k):
				if !addSlot(slotPName, name) {
					return l, false
				}
			default:
				key = append(key, name...)
			}
			i = k
		default:
			key = append(key, c)
			i++
		}
	}
	l.segs = append(l.segs, len(key))
	l.key = string(key)
	return l, true
}

// calledAt reports whether a '(' follows text[j:] after white space: the
// IRI before it is a function's name.
func calledAt(text string, j int) bool {
	for ; j < len(text); j++ {
		switch text[j] {
		case ' ', '\t', '\n', '\r':
			continue
		case '(':
			return true
		}
		return false
	}
	return false
}

func declared(ps []Prefix, name string) bool {
	for _, p := range ps {
		if p.Name == name {
			return true
		}
	}
	return false
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}
