package results

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/wukongd/wukongd/rdf"
)

// The encoding/json reader that jsonreader.go replaced, kept as the oracle
// of the fuzz and equivalence tests.

// oldJSONTerm is the JSON object of one binding.
type oldJSONTerm struct {
	Type     string `json:"type"`
	Value    string `json:"value"`
	Lang     string `json:"xml:lang"`
	Datatype string `json:"datatype"`
}

func (jt *oldJSONTerm) term() (rdf.Term, error) {
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

// oldJSONReader streams a JSON results document with encoding/json's token
// API: the head is read first; bindings are decoded one at a time. A
// document that puts "results" before "head" is buffered whole.
type oldJSONReader struct {
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

func newOldJSONReader(r io.Reader) (*oldJSONReader, error) {
	jr := &oldJSONReader{dec: json.NewDecoder(r)}
	if err := jr.expectDelim('{'); err != nil {
		return nil, err
	}
	var rawBindings []map[string]oldJSONTerm
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
				Bindings []map[string]oldJSONTerm `json:"bindings"`
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

func (jr *oldJSONReader) setIndex() {
	jr.index = make(map[string]int, len(jr.vars))
	for i, v := range jr.vars {
		jr.index[v] = i
	}
	jr.row = make([]rdf.Term, len(jr.vars))
}

func (jr *oldJSONReader) expectDelim(d json.Delim) error {
	tok, err := jr.dec.Token()
	if err != nil {
		return fmt.Errorf("results: bad JSON: %w", err)
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return fmt.Errorf("results: bad JSON: expected %q, found %v", d, tok)
	}
	return nil
}

func (jr *oldJSONReader) key() (string, error) {
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

func (jr *oldJSONReader) convert(b map[string]oldJSONTerm) ([]rdf.Term, error) {
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

func (jr *oldJSONReader) Vars() []string  { return jr.vars }
func (jr *oldJSONReader) IsBoolean() bool { return jr.isBool }
func (jr *oldJSONReader) Boolean() bool   { return jr.boolean }

func (jr *oldJSONReader) Next() ([]rdf.Term, error) {
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
	var b map[string]oldJSONTerm
	if err := jr.dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("results: bad JSON binding: %w", err)
	}
	return jr.convert(b)
}
