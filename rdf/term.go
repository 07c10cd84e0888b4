package rdf

import "strings"

// Kind says which of the three RDF term kinds a Term is.
type Kind uint8

const (
	// KindNone is the zero Term: no term (an unbound variable in a result row).
	KindNone Kind = iota
	// KindIRI is an absolute IRI.
	KindIRI
	// KindBlank is a blank node; Value is its label without "_:".
	KindBlank
	// KindLiteral is a literal; Value is its lexical form exactly as written.
	KindLiteral
)

// Well-known datatype and vocabulary IRIs.
const (
	XSD         = "http://www.w3.org/2001/XMLSchema#"
	XSDString   = XSD + "string"
	XSDBoolean  = XSD + "boolean"
	XSDInteger  = XSD + "integer"
	XSDDecimal  = XSD + "decimal"
	XSDDouble   = XSD + "double"
	XSDFloat    = XSD + "float"
	XSDDateTime = XSD + "dateTime"

	RDFNS         = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	RDFType       = RDFNS + "type"
	RDFLangString = RDFNS + "langString"
	RDFFirst      = RDFNS + "first"
	RDFRest       = RDFNS + "rest"
	RDFNil        = RDFNS + "nil"
)

// Term is an RDF term as written in the data or the query. It is a small
// value type; compare Terms with ==.
//
// For literals, Datatype is empty for a simple literal (xsd:string, which
// RDF 1.1 makes the same term) and for a language-tagged literal (Lang is set
// then, lower-cased; the datatype is rdf:langString). The lexical form is
// kept exactly: "01"^^xsd:integer stays "01".
type Term struct {
	Kind     Kind
	Value    string
	Datatype string
	Lang     string
}

// NewIRI returns the IRI term for iri.
func NewIRI(iri string) Term { return Term{Kind: KindIRI, Value: iri} }

// NewBlank returns the blank node with the given label (without "_:").
func NewBlank(label string) Term { return Term{Kind: KindBlank, Value: label} }

// NewLiteral returns a literal with a datatype; xsd:string and "" both give
// a simple literal.
func NewLiteral(lexical, datatype string) Term {
	if datatype == XSDString {
		datatype = ""
	}
	return Term{Kind: KindLiteral, Value: lexical, Datatype: datatype}
}

// NewLangLiteral returns a language-tagged literal; the tag is lower-cased.
func NewLangLiteral(lexical, lang string) Term {
	return Term{Kind: KindLiteral, Value: lexical, Lang: strings.ToLower(lang)}
}

// IsZero reports whether t is the zero Term.
func (t Term) IsZero() bool { return t.Kind == KindNone }

// IsIRI, IsBlank and IsLiteral report the kind of t.
func (t Term) IsIRI() bool     { return t.Kind == KindIRI }
func (t Term) IsBlank() bool   { return t.Kind == KindBlank }
func (t Term) IsLiteral() bool { return t.Kind == KindLiteral }

// DatatypeIRI returns the literal's datatype IRI, with the implicit
// xsd:string and rdf:langString filled in. It is "" for non-literals.
func (t Term) DatatypeIRI() string {
	if t.Kind != KindLiteral {
		return ""
	}
	switch {
	case t.Lang != "":
		return RDFLangString
	case t.Datatype == "":
		return XSDString
	}
	return t.Datatype
}

// String returns t in N-Triples syntax; the zero Term prints as "".
func (t Term) String() string { return string(AppendNTriples(nil, t)) }

// AppendNTriples appends t in N-Triples syntax to dst.
func AppendNTriples(dst []byte, t Term) []byte {
	switch t.Kind {
	case KindIRI:
		dst = append(dst, '<')
		dst = AppendEscapedIRI(dst, t.Value)
		return append(dst, '>')
	case KindBlank:
		dst = append(dst, "_:"...)
		return append(dst, t.Value...)
	case KindLiteral:
		dst = append(dst, '"')
		dst = AppendEscapedString(dst, t.Value)
		dst = append(dst, '"')
		if t.Lang != "" {
			dst = append(dst, '@')
			return append(dst, t.Lang...)
		}
		if t.Datatype != "" {
			dst = append(dst, "^^<"...)
			dst = AppendEscapedIRI(dst, t.Datatype)
			return append(dst, '>')
		}
	}
	return dst
}

// AppendEscapedString appends s escaped for the inside of an N-Triples
// string literal ("\"", "\\", "\n", "\r" escaped, NUL as \u0000 — SPARQL text
// and most tools refuse a raw NUL; other characters as UTF-8).
func AppendEscapedString[S string | []byte](dst []byte, s S) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case 0:
			dst = append(dst, `\u0000`...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// AppendEscapedIRI appends s escaped for the inside of an N-Triples IRI:
// the bytes N-Triples does not allow there (0x00 to 0x20 and <>"{}|^`\)
// as \u00XX; all others, and bytes that are not UTF-8, as they are. Runs
// with nothing to escape are appended whole.
func AppendEscapedIRI[S string | []byte](dst []byte, s S) []byte {
	const hex = "0123456789ABCDEF"
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c <= 0x20, c == '<', c == '>', c == '"', c == '{', c == '}', c == '|', c == '^', c == '`', c == '\\':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			start = i + 1
		}
	}
	return append(dst, s[start:]...)
}

// Triple is an RDF triple.
type Triple struct{ S, P, O Term }

// Quad is a triple in a graph; G is the zero Term for the default graph.
type Quad struct{ S, P, O, G Term }

// Triple returns the quad without its graph.
func (q Quad) Triple() Triple { return Triple{q.S, q.P, q.O} }
