package results

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wukongd/wukongd/rdf"
)

// GraphWriter streams the triples of an RDF graph (CONSTRUCT, DESCRIBE,
// Graph Store GET). Call WriteTriple per triple, then Close.
type GraphWriter interface {
	WriteTriple(t rdf.Triple) error
	// Close writes the trailer and flushes; it does not close the
	// underlying writer.
	Close() error
}

// GraphOptions tune the graph writers. The zero value is fine.
type GraphOptions struct {
	// Prefixes maps prefix names (without ':') to namespace IRIs. Turtle
	// declares them and abbreviates IRIs with them; RDF/XML declares them
	// on the root element. Others ignore them.
	Prefixes map[string]string
}

// NewGraphWriter returns a writer of triples in format f (one of
// GraphFormats).
func NewGraphWriter(f Format, w io.Writer, opts GraphOptions) (GraphWriter, error) {
	bw := bufio.NewWriterSize(w, 32<<10)
	switch f {
	case FormatNTriples:
		return &ntriplesWriter{bw: bw}, nil
	case FormatTurtle:
		return newTurtleWriter(bw, opts), nil
	case FormatJSONLD:
		return &jsonldWriter{bw: bw}, nil
	case FormatRDFXML:
		return newRDFXMLWriter(bw, opts), nil
	}
	return nil, fmt.Errorf("%w: %s is not a graph format", ErrFormat, f)
}

func checkTriple(t rdf.Triple) error {
	if !(t.S.IsIRI() || t.S.IsBlank()) || !t.P.IsIRI() || t.O.IsZero() {
		return fmt.Errorf("results: not an RDF triple: %v %v %v", t.S, t.P, t.O)
	}
	return nil
}

// --- N-Triples ---

type ntriplesWriter struct {
	bw  *bufio.Writer
	buf []byte
}

func (w *ntriplesWriter) WriteTriple(t rdf.Triple) error {
	if err := checkTriple(t); err != nil {
		return err
	}
	w.buf = AppendTerm(w.buf[:0], t.S)
	w.buf = append(w.buf, ' ')
	w.buf = AppendTerm(w.buf, t.P)
	w.buf = append(w.buf, ' ')
	w.buf = AppendTerm(w.buf, t.O)
	w.buf = append(w.buf, " .\n"...)
	_, err := w.bw.Write(w.buf)
	return err
}

func (w *ntriplesWriter) Close() error { return w.bw.Flush() }

// --- Turtle ---

type turtleWriter struct {
	bw       *bufio.Writer
	buf      []byte
	prefixes []nsPrefix // longest namespace first
	started  bool
	open     bool // a statement is open (no final '.')
	lastS    rdf.Term
	lastP    rdf.Term
	header   []byte
}

type nsPrefix struct{ prefix, ns string }

func sortedPrefixes(m map[string]string) []nsPrefix {
	ps := make([]nsPrefix, 0, len(m))
	for p, ns := range m {
		ps = append(ps, nsPrefix{p, ns})
	}
	sort.Slice(ps, func(i, j int) bool {
		if len(ps[i].ns) != len(ps[j].ns) {
			return len(ps[i].ns) > len(ps[j].ns)
		}
		return ps[i].prefix < ps[j].prefix
	})
	return ps
}

func newTurtleWriter(bw *bufio.Writer, opts GraphOptions) *turtleWriter {
	w := &turtleWriter{bw: bw}
	for _, p := range sortedPrefixes(opts.Prefixes) {
		if !validPrefixName(p.prefix) {
			continue
		}
		w.prefixes = append(w.prefixes, p)
	}
	decl := append([]nsPrefix(nil), w.prefixes...)
	sort.Slice(decl, func(i, j int) bool { return decl[i].prefix < decl[j].prefix })
	for _, p := range decl {
		w.header = append(w.header, "@prefix "...)
		w.header = append(w.header, p.prefix...)
		w.header = append(w.header, ": "...)
		w.header = rdf.AppendNTriples(w.header, rdf.NewIRI(p.ns))
		w.header = append(w.header, " .\n"...)
	}
	if len(decl) > 0 {
		w.header = append(w.header, '\n')
	}
	return w
}

func (w *turtleWriter) WriteTriple(t rdf.Triple) error {
	if err := checkTriple(t); err != nil {
		return err
	}
	w.buf = w.buf[:0]
	if !w.started {
		w.started = true
		w.buf = append(w.buf, w.header...)
	}
	switch {
	case w.open && t.S == w.lastS && t.P == w.lastP:
		w.buf = append(w.buf, " ,\n        "...)
	case w.open && t.S == w.lastS:
		w.buf = append(w.buf, " ;\n    "...)
		w.buf = w.appendPredicate(w.buf, t.P)
		w.buf = append(w.buf, ' ')
	default:
		if w.open {
			w.buf = append(w.buf, " .\n"...)
		}
		w.buf = w.appendTerm(w.buf, t.S)
		w.buf = append(w.buf, ' ')
		w.buf = w.appendPredicate(w.buf, t.P)
		w.buf = append(w.buf, ' ')
	}
	w.buf = w.appendTerm(w.buf, t.O)
	w.open, w.lastS, w.lastP = true, t.S, t.P
	_, err := w.bw.Write(w.buf)
	return err
}

func (w *turtleWriter) appendPredicate(dst []byte, p rdf.Term) []byte {
	if p.Value == rdf.RDFType {
		return append(dst, 'a')
	}
	return w.appendTerm(dst, p)
}

func (w *turtleWriter) appendIRI(dst []byte, iri string) []byte {
	for _, p := range w.prefixes {
		if strings.HasPrefix(iri, p.ns) && validLocalName(iri[len(p.ns):]) {
			dst = append(dst, p.prefix...)
			dst = append(dst, ':')
			return append(dst, iri[len(p.ns):]...)
		}
	}
	return rdf.AppendNTriples(dst, rdf.NewIRI(iri))
}

func (w *turtleWriter) appendTerm(dst []byte, t rdf.Term) []byte {
	switch t.Kind {
	case rdf.KindIRI:
		return w.appendIRI(dst, t.Value)
	case rdf.KindLiteral:
		dst = append(dst, '"')
		dst = appendLiteralEscaped(dst, t.Value)
		dst = append(dst, '"')
		if t.Lang != "" {
			dst = append(dst, '@')
			return append(dst, t.Lang...)
		}
		if t.Datatype != "" {
			dst = append(dst, "^^"...)
			return w.appendIRI(dst, t.Datatype)
		}
		return dst
	}
	return AppendTerm(dst, t)
}

func (w *turtleWriter) Close() error {
	w.buf = w.buf[:0]
	if !w.started {
		w.started = true
		w.buf = append(w.buf, w.header...)
	}
	if w.open {
		w.buf = append(w.buf, " .\n"...)
		w.open = false
	}
	if _, err := w.bw.Write(w.buf); err != nil {
		return err
	}
	return w.bw.Flush()
}

// validPrefixName is a conservative PN_PREFIX (or the empty prefix).
func validPrefixName(p string) bool {
	if p == "" {
		return true
	}
	if !isAlpha(p[0]) || p[len(p)-1] == '.' {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(isAlpha(c) || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// validLocalName is a conservative PN_LOCAL: ASCII letters, digits, '_',
// '-' and inner '.', not starting with '-' or '.'. Anything else is written
// as a full IRI.
func validLocalName(l string) bool {
	if l == "" {
		return true
	}
	if l[0] == '-' || l[0] == '.' || l[len(l)-1] == '.' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(isAlpha(c) || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// --- JSON-LD (expanded document form) ---

// jsonldWriter writes an expanded JSON-LD 1.1 document: an array of node
// objects. Consecutive triples with the same subject share a node object
// and consecutive ones with the same predicate share its value array. A
// predicate that comes back after another one starts a new node object for
// the same subject (node objects with the same @id merge in JSON-LD), so
// no object ever repeats a key. rdf:type with an IRI or blank object is
// written as @type.
type jsonldWriter struct {
	bw      *bufio.Writer
	buf     []byte
	started bool
	inNode  bool
	lastS   rdf.Term
	lastP   rdf.Term
	seen    map[string]bool // keys used in the open node object
	nodes   int
}

func jsonldKey(t rdf.Triple) string {
	if t.P.Value == rdf.RDFType && !t.O.IsLiteral() {
		return "@type"
	}
	return t.P.Value
}

func appendJSONLDId(dst []byte, t rdf.Term) []byte {
	if t.IsBlank() {
		return appendJSONString(dst, "_:"+string(appendBlankLabel(nil, t.Value)))
	}
	return appendJSONString(dst, t.Value)
}

func (w *jsonldWriter) WriteTriple(t rdf.Triple) error {
	if err := checkTriple(t); err != nil {
		return err
	}
	w.buf = w.buf[:0]
	if !w.started {
		w.started = true
		w.buf = append(w.buf, '[')
	}
	key := jsonldKey(t)
	if w.inNode && t.S == w.lastS && t.P == w.lastP {
		w.buf = append(w.buf, ',')
	} else {
		if w.inNode && (t.S != w.lastS || w.seen[key]) {
			w.buf = append(w.buf, "]}"...)
			w.inNode = false
		} else if w.inNode {
			w.buf = append(w.buf, "],"...)
		}
		if !w.inNode {
			if w.nodes > 0 {
				w.buf = append(w.buf, ',')
			}
			w.nodes++
			w.buf = append(w.buf, "\n{\"@id\":"...)
			w.buf = appendJSONLDId(w.buf, t.S)
			w.buf = append(w.buf, ',')
			w.inNode = true
			clear(w.seen)
			if w.seen == nil {
				w.seen = map[string]bool{}
			}
		}
		w.seen[key] = true
		w.buf = appendJSONString(w.buf, key)
		w.buf = append(w.buf, ":["...)
	}
	if key == "@type" {
		w.buf = appendJSONLDId(w.buf, t.O)
	} else {
		switch t.O.Kind {
		case rdf.KindIRI, rdf.KindBlank:
			w.buf = append(w.buf, `{"@id":`...)
			w.buf = appendJSONLDId(w.buf, t.O)
		case rdf.KindLiteral:
			w.buf = append(w.buf, `{"@value":`...)
			w.buf = appendJSONString(w.buf, t.O.Value)
			if t.O.Lang != "" {
				w.buf = append(w.buf, `,"@language":`...)
				w.buf = appendJSONString(w.buf, t.O.Lang)
			} else if t.O.Datatype != "" {
				w.buf = append(w.buf, `,"@type":`...)
				w.buf = appendJSONString(w.buf, t.O.Datatype)
			}
		}
		w.buf = append(w.buf, '}')
	}
	w.lastS, w.lastP = t.S, t.P
	_, err := w.bw.Write(w.buf)
	return err
}

func (w *jsonldWriter) Close() error {
	w.buf = w.buf[:0]
	if !w.started {
		w.started = true
		w.buf = append(w.buf, '[')
	}
	if w.inNode {
		w.buf = append(w.buf, "]}"...)
		w.inNode = false
	}
	w.buf = append(w.buf, "\n]\n"...)
	if _, err := w.bw.Write(w.buf); err != nil {
		return err
	}
	return w.bw.Flush()
}

// --- RDF/XML ---

// rdfxmlWriter writes one rdf:Description per run of triples with the same
// subject. Predicates are split into a namespace and an XML local name; a
// predicate IRI that cannot be split (it ends in a character no NCName can
// end with) cannot be written in RDF/XML and is an error.
type rdfxmlWriter struct {
	bw       *bufio.Writer
	buf      []byte
	prefixes map[string]string // namespace → prefix, declared on rdf:RDF
	header   []byte
	started  bool
	open     bool
	lastS    rdf.Term
}

func newRDFXMLWriter(bw *bufio.Writer, opts GraphOptions) *rdfxmlWriter {
	w := &rdfxmlWriter{bw: bw, prefixes: map[string]string{rdf.RDFNS: "rdf"}}
	w.header = append(w.header, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\""...)
	ps := sortedPrefixes(opts.Prefixes)
	sort.Slice(ps, func(i, j int) bool { return ps[i].prefix < ps[j].prefix })
	for _, p := range ps {
		if p.prefix == "" || p.prefix == "rdf" || p.prefix == "xml" || strings.HasPrefix(strings.ToLower(p.prefix), "xml") || !validPrefixName(p.prefix) || strings.Contains(p.prefix, ".") {
			continue
		}
		if _, dup := w.prefixes[p.ns]; dup {
			continue
		}
		w.prefixes[p.ns] = p.prefix
		w.header = append(w.header, "\n    xmlns:"...)
		w.header = append(w.header, p.prefix...)
		w.header = append(w.header, "=\""...)
		w.header = appendXMLEscaped(w.header, p.ns, true)
		w.header = append(w.header, '"')
	}
	w.header = append(w.header, ">\n"...)
	return w
}

// splitPredicate splits iri into a namespace and the longest NCName suffix.
func splitPredicate(iri string) (ns, local string, ok bool) {
	i := len(iri)
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(iri[:i])
		if !isNCNameChar(r) {
			break
		}
		i -= n
	}
	// The local name must start with a name start character.
	for i < len(iri) {
		r, n := utf8.DecodeRuneInString(iri[i:])
		if isNCNameStart(r) {
			break
		}
		i += n
	}
	if i >= len(iri) || i == 0 {
		return "", "", false
	}
	return iri[:i], iri[i:], true
}

func isNCNameStart(r rune) bool {
	return r == '_' || unicode.IsLetter(r)
}

func isNCNameChar(r rune) bool {
	return isNCNameStart(r) || r == '-' || r == '.' || unicode.IsDigit(r) || r == 0xB7
}

func (w *rdfxmlWriter) WriteTriple(t rdf.Triple) error {
	if err := checkTriple(t); err != nil {
		return err
	}
	ns, local, ok := splitPredicate(t.P.Value)
	if !ok {
		return fmt.Errorf("results: predicate <%s> cannot be written in RDF/XML", t.P.Value)
	}
	w.buf = w.buf[:0]
	if !w.started {
		w.started = true
		w.buf = append(w.buf, w.header...)
	}
	if !w.open || t.S != w.lastS {
		if w.open {
			w.buf = append(w.buf, "  </rdf:Description>\n"...)
		}
		if t.S.IsBlank() {
			w.buf = append(w.buf, `  <rdf:Description rdf:nodeID="`...)
			w.buf = appendBlankLabel(w.buf, t.S.Value)
		} else {
			w.buf = append(w.buf, `  <rdf:Description rdf:about="`...)
			w.buf = appendXMLEscaped(w.buf, t.S.Value, true)
		}
		w.buf = append(w.buf, "\">\n"...)
		w.open, w.lastS = true, t.S
	}
	w.buf = append(w.buf, "    <"...)
	prefix, declared := w.prefixes[ns]
	if !declared {
		prefix = "ns0"
	}
	elem := len(w.buf)
	w.buf = append(w.buf, prefix...)
	w.buf = append(w.buf, ':')
	w.buf = append(w.buf, local...)
	name := string(w.buf[elem:])
	if !declared {
		w.buf = append(w.buf, ` xmlns:ns0="`...)
		w.buf = appendXMLEscaped(w.buf, ns, true)
		w.buf = append(w.buf, '"')
	}
	switch t.O.Kind {
	case rdf.KindIRI:
		w.buf = append(w.buf, ` rdf:resource="`...)
		w.buf = appendXMLEscaped(w.buf, t.O.Value, true)
		w.buf = append(w.buf, "\"/>\n"...)
	case rdf.KindBlank:
		w.buf = append(w.buf, ` rdf:nodeID="`...)
		w.buf = appendBlankLabel(w.buf, t.O.Value)
		w.buf = append(w.buf, "\"/>\n"...)
	case rdf.KindLiteral:
		if t.O.Lang != "" {
			w.buf = append(w.buf, ` xml:lang="`...)
			w.buf = appendXMLEscaped(w.buf, t.O.Lang, true)
			w.buf = append(w.buf, '"')
		} else if t.O.Datatype != "" {
			w.buf = append(w.buf, ` rdf:datatype="`...)
			w.buf = appendXMLEscaped(w.buf, t.O.Datatype, true)
			w.buf = append(w.buf, '"')
		}
		w.buf = append(w.buf, '>')
		w.buf = appendXMLEscaped(w.buf, t.O.Value, false)
		w.buf = append(w.buf, "</"...)
		w.buf = append(w.buf, name...)
		w.buf = append(w.buf, ">\n"...)
	}
	_, err := w.bw.Write(w.buf)
	return err
}

func (w *rdfxmlWriter) Close() error {
	w.buf = w.buf[:0]
	if !w.started {
		w.started = true
		w.buf = append(w.buf, w.header...)
	}
	if w.open {
		w.buf = append(w.buf, "  </rdf:Description>\n"...)
		w.open = false
	}
	w.buf = append(w.buf, "</rdf:RDF>\n"...)
	if _, err := w.bw.Write(w.buf); err != nil {
		return err
	}
	return w.bw.Flush()
}

// --- N-Triples reader ---

// NTriplesReader reads N-Triples line by line: what the Go client asks a
// server for on CONSTRUCT, DESCRIBE and Graph Store GET. It is strict about
// the term syntax (ParseTerm) and reports the line of an error.
type NTriplesReader struct {
	sc   *bufio.Scanner
	line int
}

// NewNTriplesReader returns a reader of the N-Triples document r.
func NewNTriplesReader(r io.Reader) *NTriplesReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	return &NTriplesReader{sc: sc}
}

// Next returns the next triple, or io.EOF after the last one.
func (r *NTriplesReader) Next() (rdf.Triple, error) {
	for r.sc.Scan() {
		r.line++
		line := strings.TrimSpace(r.sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		var ts [3]rdf.Term
		rest := line
		for i := range ts {
			t, n, err := ParseTerm(rest)
			if err != nil {
				return rdf.Triple{}, fmt.Errorf("results: N-Triples line %d: %w", r.line, err)
			}
			ts[i] = t
			rest = strings.TrimLeft(rest[n:], " \t")
		}
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, ".") {
			return rdf.Triple{}, fmt.Errorf("results: N-Triples line %d: expected '.' after the object", r.line)
		}
		if after := strings.TrimSpace(rest[1:]); after != "" && after[0] != '#' {
			return rdf.Triple{}, fmt.Errorf("results: N-Triples line %d: unexpected %q after '.'", r.line, truncate(after))
		}
		t := rdf.Triple{S: ts[0], P: ts[1], O: ts[2]}
		if err := checkTriple(t); err != nil {
			return rdf.Triple{}, fmt.Errorf("results: N-Triples line %d: %w", r.line, err)
		}
		return t, nil
	}
	if err := r.sc.Err(); err != nil {
		return rdf.Triple{}, fmt.Errorf("results: reading N-Triples: %w", err)
	}
	return rdf.Triple{}, io.EOF
}
