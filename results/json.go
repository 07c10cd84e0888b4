package results

import (
	"unicode/utf8"

	"github.com/wukongd/wukongd/rdf"
)

// jsonSolutionWriter writes SPARQL 1.1 Query Results JSON
// (https://www.w3.org/TR/sparql11-results-json/).
type jsonSolutionWriter struct {
	baseWriter
	rows int
}

func (w *jsonSolutionWriter) WriteHead(vars []string) error {
	if err := w.head(vars); err != nil {
		return err
	}
	w.buf = append(w.buf, `{"head":{"vars":[`...)
	for i, v := range vars {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = appendJSONString(w.buf, v)
	}
	w.buf = append(w.buf, "]},\n\"results\":{\"bindings\":["...)
	return w.flushBuf()
}

func (w *jsonSolutionWriter) WriteRow(row []rdf.Term) error {
	if err := w.checkRow(row); err != nil {
		return err
	}
	if w.rows > 0 {
		w.buf = append(w.buf, ',')
	}
	w.rows++
	w.buf = append(w.buf, "\n{"...)
	first := true
	for i, t := range row {
		if t.IsZero() {
			continue
		}
		if !first {
			w.buf = append(w.buf, ',')
		}
		first = false
		w.buf = appendJSONString(w.buf, w.vars[i])
		w.buf = append(w.buf, ':')
		w.buf = appendJSONTerm(w.buf, t)
	}
	w.buf = append(w.buf, '}')
	return w.flushBuf()
}

func (w *jsonSolutionWriter) Close() error { return w.close(w.WriteHead, "\n]}}\n") }

// appendJSONTerm appends the JSON object of an RDF term.
func appendJSONTerm(dst []byte, t rdf.Term) []byte {
	switch t.Kind {
	case rdf.KindIRI:
		dst = append(dst, `{"type":"uri","value":`...)
		dst = appendJSONString(dst, t.Value)
	case rdf.KindBlank:
		dst = append(dst, `{"type":"bnode","value":`...)
		dst = appendJSONString(dst, t.Value)
	case rdf.KindLiteral:
		dst = append(dst, `{"type":"literal","value":`...)
		dst = appendJSONString(dst, t.Value)
		if t.Lang != "" {
			dst = append(dst, `,"xml:lang":`...)
			dst = appendJSONString(dst, t.Lang)
		} else if t.Datatype != "" {
			dst = append(dst, `,"datatype":`...)
			dst = appendJSONString(dst, t.Datatype)
		}
	default:
		return append(dst, "null"...)
	}
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// jsonPlain[c] is true for the ASCII bytes a JSON string holds as they
// are (not a control character, '"' or '\\'): one table load per byte
// instead of four comparisons in appendJSONString's common case.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes
// U+FFFD; control characters, U+2028 and U+2029 are escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if jsonPlain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += n
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += n
			start = i
			continue
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
