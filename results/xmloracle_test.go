package results

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/wukongd/wukongd/rdf"
)

// The XML reader that decoded each <result> with DecodeElement, kept as
// the oracle of TestXMLReaderMatchesOracle and FuzzXMLReader.

// oldXMLReader streams an XML results document with encoding/xml.
type oldXMLReader struct {
	dec     *xml.Decoder
	vars    []string
	index   map[string]int
	isBool  bool
	boolean bool
	done    bool
	row     []rdf.Term
}

func newOldXMLReader(r io.Reader) (*oldXMLReader, error) {
	xr := &oldXMLReader{dec: xml.NewDecoder(r)}
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
			xr.vars = append(xr.vars, oldAttr(se, "name"))
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

func oldAttr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

func (xr *oldXMLReader) Vars() []string  { return xr.vars }
func (xr *oldXMLReader) IsBoolean() bool { return xr.isBool }
func (xr *oldXMLReader) Boolean() bool   { return xr.boolean }

type oldXMLBinding struct {
	Name    string  `xml:"name,attr"`
	URI     *string `xml:"uri"`
	BNode   *string `xml:"bnode"`
	Literal *struct {
		Value    string `xml:",chardata"`
		Lang     string `xml:"http://www.w3.org/XML/1998/namespace lang,attr"`
		Datatype string `xml:"datatype,attr"`
	} `xml:"literal"`
}

func (xr *oldXMLReader) Next() ([]rdf.Term, error) {
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
				Bindings []oldXMLBinding `xml:"binding"`
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
