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

func (w *xmlSolutionWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if !w.started {
		if err := w.WriteHead(nil); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, "  </results>\n</sparql>\n"...)
	if err := w.flushBuf(); err != nil {
		return err
	}
	return w.finish()
}

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

type xmlBinding struct {
	Name    string  `xml:"name,attr"`
	URI     *string `xml:"uri"`
	BNode   *string `xml:"bnode"`
	Literal *struct {
		Value    string `xml:",chardata"`
		Lang     string `xml:"http://www.w3.org/XML/1998/namespace lang,attr"`
		Datatype string `xml:"datatype,attr"`
	} `xml:"literal"`
}

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
			var res struct {
				Bindings []xmlBinding `xml:"binding"`
			}
			if err := xr.dec.DecodeElement(&res, &t); err != nil {
				return nil, fmt.Errorf("results: bad XML result: %w", err)
			}
			clear(xr.row)
			for _, b := range res.Bindings {
				i, ok := xr.index[b.Name]
				if !ok {
					return nil, fmt.Errorf("results: XML binding of undeclared variable %q", b.Name)
				}
				switch {
				case b.URI != nil:
					xr.row[i] = rdf.NewIRI(*b.URI)
				case b.BNode != nil:
					xr.row[i] = rdf.NewBlank(*b.BNode)
				case b.Literal != nil:
					if b.Literal.Lang != "" {
						xr.row[i] = rdf.NewLangLiteral(b.Literal.Value, b.Literal.Lang)
					} else {
						xr.row[i] = rdf.NewLiteral(b.Literal.Value, b.Literal.Datatype)
					}
				default:
					return nil, fmt.Errorf("results: XML binding of %q has no value", b.Name)
				}
			}
			return xr.row, nil
		}
	}
}
