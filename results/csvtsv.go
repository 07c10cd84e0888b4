package results

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wukongd/wukongd/rdf"
)

// csvSolutionWriter writes SPARQL 1.1 Query Results CSV
// (https://www.w3.org/TR/sparql11-results-csv-tsv/): a header of variable
// names without '?', CRLF line ends, values as plain strings (IRIs and
// literals bare, blank nodes as _:label), quoted when they contain a
// double quote, comma, CR or LF, or begin or end with a space.
type csvSolutionWriter struct {
	baseWriter
}

func (w *csvSolutionWriter) WriteHead(vars []string) error {
	if err := w.head(vars); err != nil {
		return err
	}
	for i, v := range vars {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = appendCSVField(w.buf, v)
	}
	w.buf = append(w.buf, "\r\n"...)
	return w.flushBuf()
}

func (w *csvSolutionWriter) WriteRow(row []rdf.Term) error {
	if err := w.checkRow(row); err != nil {
		return err
	}
	for i, t := range row {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		switch t.Kind {
		case rdf.KindBlank:
			w.buf = appendCSVField(w.buf, "_:"+t.Value)
		case rdf.KindIRI, rdf.KindLiteral:
			w.buf = appendCSVField(w.buf, t.Value)
		}
	}
	w.buf = append(w.buf, "\r\n"...)
	return w.flushBuf()
}

func (w *csvSolutionWriter) Close() error { return w.close(w.WriteHead, "") }

func appendCSVField(dst []byte, s string) []byte {
	if !strings.ContainsAny(s, "\",\r\n") && !strings.HasPrefix(s, " ") && !strings.HasSuffix(s, " ") {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '"')
}

// tsvSolutionWriter writes SPARQL 1.1 Query Results TSV: a header of
// ?-prefixed variables, LF line ends, terms in their N-Triples form (the
// Turtle subset every reader accepts; tabs and newlines inside literals are
// escaped), unbound values empty.
type tsvSolutionWriter struct {
	baseWriter
}

func (w *tsvSolutionWriter) WriteHead(vars []string) error {
	if err := w.head(vars); err != nil {
		return err
	}
	for i, v := range vars {
		if i > 0 {
			w.buf = append(w.buf, '\t')
		}
		w.buf = append(w.buf, '?')
		w.buf = append(w.buf, v...)
	}
	w.buf = append(w.buf, '\n')
	return w.flushBuf()
}

func (w *tsvSolutionWriter) WriteRow(row []rdf.Term) error {
	if err := w.checkRow(row); err != nil {
		return err
	}
	for i, t := range row {
		if i > 0 {
			w.buf = append(w.buf, '\t')
		}
		w.buf = AppendTerm(w.buf, t)
	}
	w.buf = append(w.buf, '\n')
	return w.flushBuf()
}

func (w *tsvSolutionWriter) Close() error { return w.close(w.WriteHead, "") }

// AppendTerm appends t in N-Triples syntax, with every character that a
// line- or tab-separated format cannot carry raw (TAB, LF, CR, other C0
// controls) escaped as \t, \n, \r or \uXXXX, and blank node labels made
// valid (see BlankLabel). The zero Term appends nothing.
func AppendTerm(dst []byte, t rdf.Term) []byte {
	switch t.Kind {
	case rdf.KindBlank:
		dst = append(dst, "_:"...)
		return appendBlankLabel(dst, t.Value)
	case rdf.KindLiteral:
		dst = append(dst, '"')
		dst = appendLiteralEscaped(dst, t.Value)
		dst = append(dst, '"')
		if t.Lang != "" {
			dst = append(dst, '@')
			return append(dst, t.Lang...)
		}
		if t.Datatype != "" {
			return rdf.AppendNTriples(append(dst, "^^"...), rdf.NewIRI(t.Datatype))
		}
		return dst
	}
	return rdf.AppendNTriples(dst, t)
}

func appendLiteralEscaped(dst []byte, s string) []byte {
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
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 || c == 0x7f {
				dst = append(dst, '\\', 'u', '0', '0', upperHex(c>>4), upperHex(c&0xF))
				continue
			}
			dst = append(dst, c)
		}
	}
	return dst
}

func upperHex(n byte) byte { return "0123456789ABCDEF"[n] }

// appendBlankLabel appends label if it is a valid N-Triples/Turtle blank
// node label (ASCII letters, digits, '_', '-', '.' not at the end, not
// starting with '-' or '.'); otherwise an encoding of it that is valid and
// still distinct: "x" followed by the hex of its bytes.
func appendBlankLabel(dst []byte, label string) []byte {
	if validBlankLabel(label) {
		return append(dst, label...)
	}
	dst = append(dst, 'x')
	for i := 0; i < len(label); i++ {
		dst = append(dst, hexDigits[label[i]>>4], hexDigits[label[i]&0xF])
	}
	return dst
}

func validBlankLabel(s string) bool {
	if s == "" || s[len(s)-1] == '.' || s[0] == '-' || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// csvReader reads CSV results (lossy: see the package doc).
type csvReader struct {
	r    *csv.Reader
	vars []string
	row  []rdf.Term
}

func newCSVReader(r io.Reader) (*csvReader, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		// A header line with no variables (csv.Reader skips blank lines).
		return &csvReader{r: cr}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("results: bad CSV header: %w", err)
	}
	vars := make([]string, len(head))
	copy(vars, head)
	if len(vars) == 1 && vars[0] == "" {
		vars = nil
	}
	return &csvReader{r: cr, vars: vars, row: make([]rdf.Term, len(vars))}, nil
}

func (cr *csvReader) Vars() []string  { return cr.vars }
func (cr *csvReader) IsBoolean() bool { return false }
func (cr *csvReader) Boolean() bool   { return false }

func (cr *csvReader) Next() ([]rdf.Term, error) {
	rec, err := cr.r.Read()
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("results: bad CSV: %w", err)
	}
	if len(rec) == 1 && rec[0] == "" && len(cr.vars) != 1 {
		rec = rec[:0]
	}
	if len(rec) != len(cr.vars) && !(len(rec) == 0 && len(cr.vars) == 0) {
		line, _ := cr.r.FieldPos(0)
		return nil, fmt.Errorf("results: CSV line %d has %d fields for %d variables", line, len(rec), len(cr.vars))
	}
	for i, v := range rec {
		cr.row[i] = csvTerm(v)
	}
	return cr.row, nil
}

// csvTerm guesses the term a CSV value stands for.
func csvTerm(v string) rdf.Term {
	switch {
	case v == "":
		return rdf.Term{}
	case strings.HasPrefix(v, "_:"):
		return rdf.NewBlank(v[2:])
	case looksLikeIRI(v):
		return rdf.NewIRI(v)
	}
	return rdf.NewLiteral(v, "")
}

// looksLikeIRI reports whether v is scheme ":" rest with no spaces.
func looksLikeIRI(v string) bool {
	colon := strings.IndexByte(v, ':')
	if colon < 1 || strings.ContainsAny(v, " \t\n\r<>\"{}|^`\\") || colon == len(v)-1 {
		return false
	}
	for i := 0; i < colon; i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// tsvReader reads TSV results.
type tsvReader struct {
	sc   *bufio.Scanner
	line int
	vars []string
	row  []rdf.Term
}

func newTSVReader(r io.Reader) (*tsvReader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	tr := &tsvReader{sc: sc}
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("results: reading TSV: %w", err)
		}
		return nil, errors.New("results: empty TSV document")
	}
	tr.line = 1
	head := strings.TrimSuffix(sc.Text(), "\r")
	if head != "" {
		for _, f := range strings.Split(head, "\t") {
			f = strings.TrimSpace(f)
			if !strings.HasPrefix(f, "?") && !strings.HasPrefix(f, "$") {
				return nil, fmt.Errorf("results: TSV header field %q is not a variable", f)
			}
			tr.vars = append(tr.vars, f[1:])
		}
	}
	tr.row = make([]rdf.Term, len(tr.vars))
	return tr, nil
}

func (tr *tsvReader) Vars() []string  { return tr.vars }
func (tr *tsvReader) IsBoolean() bool { return false }
func (tr *tsvReader) Boolean() bool   { return false }

func (tr *tsvReader) Next() ([]rdf.Term, error) {
	if !tr.sc.Scan() {
		if err := tr.sc.Err(); err != nil {
			return nil, fmt.Errorf("results: reading TSV: %w", err)
		}
		return nil, io.EOF
	}
	tr.line++
	line := strings.TrimSuffix(tr.sc.Text(), "\r")
	var fields []string
	if line != "" || len(tr.vars) > 0 {
		fields = strings.Split(line, "\t")
	}
	if len(fields) != len(tr.vars) {
		return nil, fmt.Errorf("results: TSV line %d has %d fields for %d variables", tr.line, len(fields), len(tr.vars))
	}
	for i, f := range fields {
		f = strings.TrimSpace(f)
		if f == "" {
			tr.row[i] = rdf.Term{}
			continue
		}
		t, n, err := ParseTerm(f)
		if err == nil && n != len(f) {
			err = fmt.Errorf("unexpected %q after the term", f[n:])
		}
		if err != nil {
			return nil, fmt.Errorf("results: TSV line %d, column %d: %w", tr.line, i+1, err)
		}
		tr.row[i] = t
	}
	return tr.row, nil
}
