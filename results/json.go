package results

import (
	"encoding/json"
	"fmt"
	"io"
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

func (w *jsonSolutionWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if !w.started {
		if err := w.WriteHead(nil); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, "\n]}}\n"...)
	if err := w.flushBuf(); err != nil {
		return err
	}
	return w.bw.Flush()
}

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

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes
// U+FFFD; control characters, U+2028 and U+2029 are escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
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

// jsonTerm is the JSON object of one binding.
type jsonTerm struct {
	Type     string `json:"type"`
	Value    string `json:"value"`
	Lang     string `json:"xml:lang"`
	Datatype string `json:"datatype"`
}

func (jt *jsonTerm) term() (rdf.Term, error) {
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

// jsonReader streams a JSON results document with encoding/json's token
// API: the head is read first; bindings are decoded one at a time. A
// document that puts "results" before "head" is buffered whole.
type jsonReader struct {
	dec      *json.Decoder
	vars     []string
	index    map[string]int
	isBool   bool
	boolean  bool
	inRows   bool // positioned inside the bindings array
	buffered [][]rdf.Term
	done     bool
	row      []rdf.Term
}

func newJSONReader(r io.Reader) (*jsonReader, error) {
	jr := &jsonReader{dec: json.NewDecoder(r)}
	if err := jr.expectDelim('{'); err != nil {
		return nil, err
	}
	var rawBindings []map[string]jsonTerm
	sawHead := false
	for jr.dec.More() {
		key, err := jr.key()
		if err != nil {
			return nil, err
		}
		switch key {
		case "head":
			var h struct {
				Vars []string `json:"vars"`
			}
			if err := jr.dec.Decode(&h); err != nil {
				return nil, fmt.Errorf("results: bad JSON head: %w", err)
			}
			jr.vars = h.Vars
			sawHead = true
		case "boolean":
			if err := jr.dec.Decode(&jr.boolean); err != nil {
				return nil, fmt.Errorf("results: bad JSON boolean: %w", err)
			}
			jr.isBool = true
		case "results":
			if sawHead {
				// Stream: enter {"bindings": [
				if err := jr.expectDelim('{'); err != nil {
					return nil, err
				}
				for {
					if !jr.dec.More() {
						return nil, fmt.Errorf("results: JSON results object has no bindings")
					}
					k, err := jr.key()
					if err != nil {
						return nil, err
					}
					if k == "bindings" {
						break
					}
					var skip json.RawMessage
					if err := jr.dec.Decode(&skip); err != nil {
						return nil, fmt.Errorf("results: bad JSON: %w", err)
					}
				}
				if err := jr.expectDelim('['); err != nil {
					return nil, err
				}
				jr.inRows = true
				jr.setIndex()
				return jr, nil
			}
			var res struct {
				Bindings []map[string]jsonTerm `json:"bindings"`
			}
			if err := jr.dec.Decode(&res); err != nil {
				return nil, fmt.Errorf("results: bad JSON results: %w", err)
			}
			rawBindings = res.Bindings
		default:
			var skip json.RawMessage
			if err := jr.dec.Decode(&skip); err != nil {
				return nil, fmt.Errorf("results: bad JSON: %w", err)
			}
		}
	}
	if !sawHead && !jr.isBool {
		return nil, fmt.Errorf("results: JSON document has no head")
	}
	jr.setIndex()
	for _, b := range rawBindings {
		row, err := jr.convert(b)
		if err != nil {
			return nil, err
		}
		jr.buffered = append(jr.buffered, append([]rdf.Term(nil), row...))
	}
	jr.done = true
	return jr, nil
}

func (jr *jsonReader) setIndex() {
	jr.index = make(map[string]int, len(jr.vars))
	for i, v := range jr.vars {
		jr.index[v] = i
	}
	jr.row = make([]rdf.Term, len(jr.vars))
}

func (jr *jsonReader) expectDelim(d json.Delim) error {
	tok, err := jr.dec.Token()
	if err != nil {
		return fmt.Errorf("results: bad JSON: %w", err)
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return fmt.Errorf("results: bad JSON: expected %q, found %v", d, tok)
	}
	return nil
}

func (jr *jsonReader) key() (string, error) {
	tok, err := jr.dec.Token()
	if err != nil {
		return "", fmt.Errorf("results: bad JSON: %w", err)
	}
	k, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("results: bad JSON: expected a key, found %v", tok)
	}
	return k, nil
}

func (jr *jsonReader) convert(b map[string]jsonTerm) ([]rdf.Term, error) {
	clear(jr.row)
	for name, jt := range b {
		i, ok := jr.index[name]
		if !ok {
			return nil, fmt.Errorf("results: JSON binding of undeclared variable %q", name)
		}
		t, err := jt.term()
		if err != nil {
			return nil, err
		}
		jr.row[i] = t
	}
	return jr.row, nil
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
	if !jr.dec.More() {
		jr.done = true
		// Read the rest of the document: "]" "}" and any trailing members
		// (a boolean cannot follow bindings in a valid document).
		if err := jr.expectDelim(']'); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	var b map[string]jsonTerm
	if err := jr.dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("results: bad JSON binding: %w", err)
	}
	return jr.convert(b)
}
