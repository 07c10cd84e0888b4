package results

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/wukongd/wukongd/rdf"
)

const sparqlResultsNS = "http://www.w3.org/2005/sparql-results#"

const xmlHeader = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
	`<sparql xmlns="` + sparqlResultsNS + `">` + "\n"

// xmlSolutionWriter writes SPARQL Query Results XML
// (https://www.w3.org/TR/rdf-sparql-XMLres/).
type xmlSolutionWriter struct {
	baseWriter
}

func (w *xmlSolutionWriter) WriteHead(vars []string) error {
	if err := w.head(vars); err != nil {
		return err
	}
	w.buf = append(w.buf, xmlHeader...)
	w.buf = append(w.buf, "  <head>\n"...)
	for _, v := range vars {
		w.buf = append(w.buf, `    <variable name="`...)
		w.buf = appendXMLEscaped(w.buf, v, true)
		w.buf = append(w.buf, "\"/>\n"...)
	}
	w.buf = append(w.buf, "  </head>\n  <results>\n"...)
	return w.flushBuf()
}

func (w *xmlSolutionWriter) WriteRow(row []rdf.Term) error {
	if err := w.checkRow(row); err != nil {
		return err
	}
	w.buf = append(w.buf, "    <result>\n"...)
	for i, t := range row {
		if t.IsZero() {
			continue
		}
		w.buf = append(w.buf, `      <binding name="`...)
		w.buf = appendXMLEscaped(w.buf, w.vars[i], true)
		w.buf = append(w.buf, `">`...)
		switch t.Kind {
		case rdf.KindIRI:
			w.buf = append(w.buf, "<uri>"...)
			w.buf = appendXMLEscaped(w.buf, t.Value, false)
			w.buf = append(w.buf, "</uri>"...)
		case rdf.KindBlank:
			w.buf = append(w.buf, "<bnode>"...)
			w.buf = appendXMLEscaped(w.buf, t.Value, false)
			w.buf = append(w.buf, "</bnode>"...)
		case rdf.KindLiteral:
			w.buf = append(w.buf, "<literal"...)
			if t.Lang != "" {
				w.buf = append(w.buf, ` xml:lang="`...)
				w.buf = appendXMLEscaped(w.buf, t.Lang, true)
				w.buf = append(w.buf, '"')
			} else if t.Datatype != "" {
				w.buf = append(w.buf, ` datatype="`...)
				w.buf = appendXMLEscaped(w.buf, t.Datatype, true)
				w.buf = append(w.buf, '"')
			}
			w.buf = append(w.buf, '>')
			w.buf = appendXMLEscaped(w.buf, t.Value, false)
			w.buf = append(w.buf, "</literal>"...)
		}
		w.buf = append(w.buf, "</binding>\n"...)
	}
	w.buf = append(w.buf, "    </result>\n"...)
	return w.flushBuf()
}

func (w *xmlSolutionWriter) Close() error { return w.close(w.WriteHead, "  </results>\n</sparql>\n") }

// appendXMLEscaped appends s as XML character data (attr: inside a
// double-quoted attribute). Characters XML 1.0 cannot carry at all (most C0
// controls, U+FFFE, U+FFFF, invalid UTF-8) become U+FFFD; CR, and in
// attributes TAB and LF, are written as character references so that they
// survive end-of-line and attribute normalization.
func appendXMLEscaped(dst []byte, s string, attr bool) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '&':
				dst = append(dst, "&amp;"...)
			case c == '<':
				dst = append(dst, "&lt;"...)
			case c == '>':
				dst = append(dst, "&gt;"...)
			case c == '"' && attr:
				dst = append(dst, "&quot;"...)
			case c == '\r':
				dst = append(dst, "&#xD;"...)
			case (c == '\n' || c == '\t') && attr:
				if c == '\n' {
					dst = append(dst, "&#xA;"...)
				} else {
					dst = append(dst, "&#x9;"...)
				}
			case c < 0x20 && c != '\n' && c != '\t':
				dst = append(dst, "\uFFFD"...)
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || r == 0xFFFE || r == 0xFFFF {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}

// xmlReader streams an XML results document with encoding/xml.
type xmlReader struct {
	dec     *xml.Decoder
	vars    []string
	index   map[string]int
	isBool  bool
	boolean bool
	done    bool
	row     []rdf.Term
	buf     []byte
}

func newXMLReader(r io.Reader) (*xmlReader, error) {
	xr := &xmlReader{dec: xml.NewDecoder(r)}
	xr.dec.Strict = true
	// Read up to <results> or <boolean>.
	for {
		tok, err := xr.dec.Token()
		if err != nil {
			return nil, fmt.Errorf("results: bad XML results: %w", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "sparql", "head", "link":
		case "variable":
			xr.vars = append(xr.vars, attr(se, "name"))
		case "results":
			xr.index = make(map[string]int, len(xr.vars))
			for i, v := range xr.vars {
				xr.index[v] = i
			}
			xr.row = make([]rdf.Term, len(xr.vars))
			return xr, nil
		case "boolean":
			var s string
			if err := xr.dec.DecodeElement(&s, &se); err != nil {
				return nil, fmt.Errorf("results: bad XML boolean: %w", err)
			}
			switch strings.TrimSpace(s) {
			case "true":
				xr.boolean = true
			case "false":
			default:
				return nil, fmt.Errorf("results: bad XML boolean %q", s)
			}
			xr.isBool, xr.done = true, true
			return xr, nil
		default:
			return nil, fmt.Errorf("results: unexpected XML element <%s>", se.Name.Local)
		}
	}
}

func attr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

func (xr *xmlReader) Vars() []string  { return xr.vars }
func (xr *xmlReader) IsBoolean() bool { return xr.isBool }
func (xr *xmlReader) Boolean() bool   { return xr.boolean }

// Next walks the tokens of one <result> itself: what DecodeElement into
// a struct of bindings gave, without the reflection (BenchmarkReadXML10000:
// 81 -> 64 allocations a row; encoding/xml's tokenizer is the rest). Children are matched by local name; a repeated
// attribute, <uri>, <bnode> or <literal> overrides the earlier one (a
// literal keeps the attributes the later one does not set); the text of an
// element is its own character data, nested elements skipped.
func (xr *xmlReader) Next() ([]rdf.Term, error) {
	if xr.done {
		return nil, io.EOF
	}
	for {
		tok, err := xr.dec.Token()
		if err != nil {
			return nil, fmt.Errorf("results: bad XML results: %w", err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if t.Name.Local == "results" {
				xr.done = true
				return nil, io.EOF
			}
		case xml.StartElement:
			if t.Name.Local != "result" {
				return nil, fmt.Errorf("results: unexpected XML element <%s> in <results>", t.Name.Local)
			}
			return xr.result()
		}
	}
}

// result reads the children of a <result>.
func (xr *xmlReader) result() ([]rdf.Term, error) {
	clear(xr.row)
	var bad error
	for {
		tok, err := xr.dec.Token()
		if err != nil {
			return nil, fmt.Errorf("results: bad XML result: %w", err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if bad != nil {
				return nil, bad
			}
			return xr.row, nil
		case xml.StartElement:
			if t.Name.Local != "binding" {
				if err := xr.dec.Skip(); err != nil {
					return nil, fmt.Errorf("results: bad XML result: %w", err)
				}
				continue
			}
			if err := xr.binding(t, &bad); err != nil {
				return nil, err
			}
		}
	}
}

// binding reads one <binding> into the row; a binding that is well-formed
// but wrong (an undeclared variable, no value) is kept in *bad, reported
// once the result has been read as the old reader did.
func (xr *xmlReader) binding(start xml.StartElement, bad *error) error {
	var name string
	for _, a := range start.Attr {
		if a.Name.Local == "name" {
			name = a.Value
		}
	}
	var uri, bnode *string
	var lit *xmlLiteral
	for {
		tok, err := xr.dec.Token()
		if err != nil {
			return fmt.Errorf("results: bad XML result: %w", err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if *bad != nil {
				return nil
			}
			i, ok := xr.index[name]
			if !ok {
				*bad = fmt.Errorf("results: XML binding of undeclared variable %q", name)
				return nil
			}
			switch {
			case uri != nil:
				xr.row[i] = rdf.NewIRI(*uri)
			case bnode != nil:
				xr.row[i] = rdf.NewBlank(*bnode)
			case lit != nil:
				if lit.lang != "" {
					xr.row[i] = rdf.NewLangLiteral(lit.value, lit.lang)
				} else {
					xr.row[i] = rdf.NewLiteral(lit.value, lit.datatype)
				}
			default:
				*bad = fmt.Errorf("results: XML binding of %q has no value", name)
			}
			return nil
		case xml.StartElement:
			var dst *string
			switch t.Name.Local {
			case "uri":
				uri = new(string)
				dst = uri
			case "bnode":
				bnode = new(string)
				dst = bnode
			case "literal":
				if lit == nil {
					lit = &xmlLiteral{}
				}
				for _, a := range t.Attr {
					switch {
					case a.Name.Local == "lang" && a.Name.Space == xmlNS:
						lit.lang = a.Value
					case a.Name.Local == "datatype":
						lit.datatype = a.Value
					}
				}
				dst = &lit.value
			default:
				if err := xr.dec.Skip(); err != nil {
					return fmt.Errorf("results: bad XML result: %w", err)
				}
				continue
			}
			if err := xr.text(dst); err != nil {
				return err
			}
		}
	}
}

const xmlNS = "http://www.w3.org/XML/1998/namespace"

type xmlLiteral struct {
	value, lang, datatype string
}

// text reads the character data of the element just started, up to its
// end, into *dst; nested elements are skipped.
func (xr *xmlReader) text(dst *string) error {
	xr.buf = xr.buf[:0]
	for {
		tok, err := xr.dec.Token()
		if err != nil {
			return fmt.Errorf("results: bad XML result: %w", err)
		}
		switch t := tok.(type) {
		case xml.CharData:
			xr.buf = append(xr.buf, t...)
		case xml.StartElement:
			if err := xr.dec.Skip(); err != nil {
				return fmt.Errorf("results: bad XML result: %w", err)
			}
		case xml.EndElement:
			*dst = string(xr.buf)
			return nil
		}
	}
}
