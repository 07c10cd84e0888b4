package loader

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/wukongd/wukongd/rdf"
)

// Format is an RDF serialization the loader can parse.
type Format int

const (
	// NTriples is W3C RDF 1.1 N-Triples (.nt).
	NTriples Format = iota + 1
	// NQuads is W3C RDF 1.1 N-Quads (.nq).
	NQuads
	// Turtle is W3C RDF 1.1 Turtle (.ttl).
	Turtle
	// TriG is W3C RDF 1.1 TriG (.trig).
	TriG
	// RDFXML is W3C RDF 1.1 XML Syntax (.rdf, .owl, .xml).
	RDFXML
)

// String returns the usual name of the format.
func (f Format) String() string {
	switch f {
	case NTriples:
		return "N-Triples"
	case NQuads:
		return "N-Quads"
	case Turtle:
		return "Turtle"
	case TriG:
		return "TriG"
	case RDFXML:
		return "RDF/XML"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// FormatForPath returns the format for a file name by its extension,
// looking through a trailing ".gz".
func FormatForPath(path string) (Format, bool) {
	p := strings.ToLower(path)
	p = strings.TrimSuffix(p, ".gz")
	switch filepath.Ext(p) {
	case ".nt", ".ntriples":
		return NTriples, true
	case ".nq", ".nquads":
		return NQuads, true
	case ".ttl", ".turtle":
		return Turtle, true
	case ".trig":
		return TriG, true
	case ".rdf", ".owl", ".xml":
		return RDFXML, true
	}
	return 0, false
}

// FormatForMediaType returns the format for a MIME type such as
// "text/turtle" (parameters are ignored).
func FormatForMediaType(mt string) (Format, bool) {
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	switch strings.ToLower(strings.TrimSpace(mt)) {
	case "application/n-triples", "text/plain":
		return NTriples, true
	case "application/n-quads":
		return NQuads, true
	case "text/turtle", "application/x-turtle":
		return Turtle, true
	case "application/trig":
		return TriG, true
	case "application/rdf+xml", "application/xml", "text/xml":
		return RDFXML, true
	}
	return 0, false
}

// Options controls a parse.
type Options struct {
	// Name is the file name used in errors.
	Name string
	// Base is the base IRI against which relative IRIs are resolved
	// (Turtle, TriG, RDF/XML). N-Triples and N-Quads require absolute IRIs.
	Base string
	// BlankPrefix scopes blank node labels: every label is prefixed with it,
	// and generated blank nodes use it too. Leave it empty to get a fresh
	// prefix per Parse call, so that blank nodes of different documents
	// never collide. Set it explicitly only to parse parts of one document
	// (e.g. chunks of one N-Triples file) with the same scope.
	BlankPrefix string
	// OnError, when set, is called for each syntax error; the parser then
	// recovers (skips the bad line, or the bad statement where the syntax
	// allows, else the rest of the document) and goes on. When OnError
	// returns an error, parsing stops with it. When OnError is nil the first
	// syntax error stops the parse and is returned.
	OnError func(*SyntaxError) error
}

// SyntaxError is an error in the input, with its position.
type SyntaxError struct {
	File string
	Line int // 1-based
	Col  int // 1-based, in characters
	Msg  string
}

func (e *SyntaxError) Error() string {
	f := e.File
	if f == "" {
		f = "<input>"
	}
	return fmt.Sprintf("%s:%d:%d: %s", f, e.Line, e.Col, e.Msg)
}

var docCounter atomic.Uint64

// NewBlankPrefix returns a fresh blank node scope, distinct from every other
// one returned in this process.
func NewBlankPrefix() string {
	return fmt.Sprintf("d%d", docCounter.Add(1))
}

// Blank node labels in a scope are prefix+"u"+label for labels written in
// the document and prefix+"g"+n for generated ones, so they never collide.
func userBlank(prefix string, label []byte) string {
	b := make([]byte, 0, len(prefix)+1+len(label))
	b = append(b, prefix...)
	b = append(b, 'u')
	b = append(b, label...)
	return string(b)
}

// Parse reads RDF in format f from r and calls emit for each statement, in
// document order. It streams: memory stays bounded whatever the input size
// (except for RDF/XML, whose memory grows with element nesting depth only).
// Triples in the default graph have the zero G. The first error from emit
// stops the parse and is returned.
func Parse(r io.Reader, f Format, opts Options, emit func(rdf.Quad) error) error {
	if opts.BlankPrefix == "" {
		opts.BlankPrefix = NewBlankPrefix()
	}
	switch f {
	case NTriples, NQuads:
		return parseNT(r, f == NQuads, opts, emit)
	case Turtle, TriG:
		return parseTurtle(r, f == TriG, opts, emit)
	case RDFXML:
		return parseRDFXML(r, opts, emit)
	}
	return fmt.Errorf("cannot parse: unknown format %v", f)
}

// ParseFile parses the file at path, choosing the format by its extension
// and decompressing .gz. opts.Name defaults to path and opts.Base to the
// file's "file://" URL.
func ParseFile(path string, opts Options, emit func(rdf.Quad) error) error {
	f, ok := FormatForPath(path)
	if !ok {
		return fmt.Errorf("cannot parse %s: unknown RDF format (extension)", path)
	}
	r, err := OpenFile(path)
	if err != nil {
		return err
	}
	defer r.Close()
	if opts.Name == "" {
		opts.Name = path
	}
	if opts.Base == "" {
		opts.Base = FileBase(path)
	}
	return Parse(r, f, opts, emit)
}

// FileBase returns the default base IRI of a file: "file:///" followed by
// its absolute path without a trailing ".gz".
func FileBase(path string) string {
	p := strings.TrimSuffix(path, ".gz")
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	p = filepath.ToSlash(p)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	var b strings.Builder
	b.WriteString("file://")
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c <= 0x20 || c >= 0x7f || strings.IndexByte("<>\"{}|^`\\%#?", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

type fileReader struct {
	io.Reader
	f  *os.File
	gz *gzip.Reader
}

func (r *fileReader) Close() error {
	if r.gz != nil {
		r.gz.Close()
	}
	return r.f.Close()
}

// OpenFile opens path for reading, decompressing it when it ends in ".gz"
// (or starts with the gzip magic bytes).
func OpenFile(path string) (io.ReadCloser, error) { return openCounted(path, nil) }

// openCounted is OpenFile that adds the bytes read from the file (before
// decompression) to count, when count is not nil.
func openCounted(path string, count *atomic.Int64) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", path, err)
	}
	var raw io.Reader = f
	if count != nil {
		raw = countingReader{f, count}
	}
	br := bufio.NewReaderSize(raw, 1<<16)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("cannot read %s: %w", path, err)
		}
		return &fileReader{Reader: gz, f: f, gz: gz}, nil
	}
	return &fileReader{Reader: br, f: f}, nil
}

// --- character classes shared by the parsers ---

func isIRIForbidden(c byte) bool {
	return c <= 0x20 || c == '<' || c == '>' || c == '"' || c == '{' || c == '}' ||
		c == '|' || c == '^' || c == '`' || c == '\\'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// decodeHex decodes n hex digits at the start of b; ok is false when there
// are too few or a non-hex digit, or the value is not a Unicode scalar.
func decodeHex(b []byte, n int) (rune, bool) {
	if len(b) < n {
		return 0, false
	}
	var v rune
	for i := 0; i < n; i++ {
		h := hexVal(b[i])
		if h < 0 {
			return 0, false
		}
		v = v<<4 | rune(h)
	}
	if v > utf8.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
		return 0, false
	}
	return v, true
}

func isPNCharsBase(r rune) bool {
	switch {
	case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		return true
	case r < 0xC0:
		return false
	case r <= 0xD6, r >= 0xD8 && r <= 0xF6, r >= 0xF8 && r <= 0x2FF,
		r >= 0x370 && r <= 0x37D, r >= 0x37F && r <= 0x1FFF,
		r >= 0x200C && r <= 0x200D, r >= 0x2070 && r <= 0x218F,
		r >= 0x2C00 && r <= 0x2FEF, r >= 0x3001 && r <= 0xD7FF,
		r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFFD,
		r >= 0x10000 && r <= 0xEFFFF:
		return true
	}
	return false
}

func isPNCharsU(r rune) bool { return r == '_' || isPNCharsBase(r) }

func isPNChars(r rune) bool {
	return isPNCharsU(r) || r == '-' || (r >= '0' && r <= '9') || r == 0xB7 ||
		(r >= 0x300 && r <= 0x36F) || (r >= 0x203F && r <= 0x2040)
}

// runeCol returns the 1-based character column of byte offset off in line.
func runeCol(line []byte, off int) int {
	if off > len(line) {
		off = len(line)
	}
	return utf8.RuneCount(line[:off]) + 1
}
