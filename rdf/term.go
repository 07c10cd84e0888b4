package rdf

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

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
		dst = appendEscapedIRI(dst, t.Value)
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
			dst = appendEscapedIRI(dst, t.Datatype)
			return append(dst, '>')
		}
	}
	return dst
}

// AppendEscapedString appends s escaped for the inside of an N-Triples
// string literal ("\"", "\\", "\n", "\r" escaped; other characters as UTF-8).
func AppendEscapedString(dst []byte, s string) []byte {
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
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func appendEscapedIRI(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r <= 0x20 || strings.ContainsRune("<>\"{}|^`\\", r) {
			if r > 0xFFFF {
				dst = append(dst, "\\U"...)
				dst = appendHex(dst, uint64(r), 8)
			} else {
				dst = append(dst, "\\u"...)
				dst = appendHex(dst, uint64(r), 4)
			}
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}

func appendHex(dst []byte, v uint64, width int) []byte {
	h := strconv.FormatUint(v, 16)
	for i := len(h); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, strings.ToUpper(h)...)
}

// Triple is an RDF triple.
type Triple struct{ S, P, O Term }

// Quad is a triple in a graph; G is the zero Term for the default graph.
type Quad struct{ S, P, O, G Term }

// Triple returns the quad without its graph.
func (q Quad) Triple() Triple { return Triple{q.S, q.P, q.O} }
