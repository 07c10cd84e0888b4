package results

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/wukongd/wukongd/rdf"
)

// SolutionWriter streams SELECT results. Call WriteHead once, then WriteRow
// per solution, then Close.
type SolutionWriter interface {
	// WriteHead writes the variable names (without '?').
	WriteHead(vars []string) error
	// WriteRow writes one solution: row[i] is the value of vars[i]; the zero
	// rdf.Term leaves the variable unbound. The row is not retained.
	WriteRow(row []rdf.Term) error
	// Close writes the trailer and flushes; it does not close the
	// underlying writer.
	Close() error
}

// ErrFormat is returned when a format cannot carry what is asked of it (a
// boolean in CSV, a graph in JSON results, …).
var ErrFormat = errors.New("results: format cannot carry this result")

// NewSolutionWriter returns a writer of SELECT results in format f (one of
// SolutionFormats).
func NewSolutionWriter(f Format, w io.Writer) (SolutionWriter, error) {
	switch f {
	case FormatJSON, FormatXML, FormatCSV, FormatTSV:
	default:
		return nil, fmt.Errorf("%w: %s is not a solution format", ErrFormat, f)
	}
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(w)
	base := baseWriter{bw: bw}
	switch f {
	case FormatJSON:
		return &jsonSolutionWriter{baseWriter: base}, nil
	case FormatXML:
		return &xmlSolutionWriter{baseWriter: base}, nil
	case FormatCSV:
		return &csvSolutionWriter{baseWriter: base}, nil
	case FormatTSV:
		return &tsvSolutionWriter{baseWriter: base}, nil
	}
	return nil, fmt.Errorf("%w: %s is not a solution format", ErrFormat, f)
}

// WriteBoolean writes an ASK result in format f (FormatJSON or FormatXML;
// the CSV and TSV formats define no boolean form and get ErrFormat).
func WriteBoolean(f Format, w io.Writer, b bool) error {
	var buf []byte
	switch f {
	case FormatJSON:
		buf = append(buf, `{"head":{},"boolean":`...)
		buf = appendBool(buf, b)
		buf = append(buf, "}\n"...)
	case FormatXML:
		buf = append(buf, xmlHeader...)
		buf = append(buf, "  <head/>\n  <boolean>"...)
		buf = appendBool(buf, b)
		buf = append(buf, "</boolean>\n</sparql>\n"...)
	default:
		return fmt.Errorf("%w: %s cannot carry a boolean", ErrFormat, f)
	}
	_, err := w.Write(buf)
	return err
}

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// baseWriter holds the buffered output and a reused scratch buffer.
type baseWriter struct {
	bw      *bufio.Writer
	buf     []byte
	vars    []string
	started bool
	closed  bool
}

// writerPool holds the 32 KiB output buffers of the solution writers: a
// response of a few rows would otherwise allocate and clear one each.
var writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 32<<10) }}

// finish flushes the output and gives its buffer back to the pool.
func (b *baseWriter) finish() error {
	err := b.bw.Flush()
	b.bw.Reset(nil)
	writerPool.Put(b.bw)
	b.bw = nil
	return err
}

func (b *baseWriter) flushBuf() error {
	_, err := b.bw.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}

// close is every solution writer's Close: once only, the head (of no
// variables) if WriteHead was never called, then trailer, then finish.
func (b *baseWriter) close(writeHead func([]string) error, trailer string) error {
	if b.closed {
		return nil
	}
	b.closed = true
	if !b.started {
		if err := writeHead(nil); err != nil {
			return err
		}
	}
	if trailer != "" {
		b.buf = append(b.buf, trailer...)
		if err := b.flushBuf(); err != nil {
			return err
		}
	}
	return b.finish()
}

func (b *baseWriter) checkRow(row []rdf.Term) error {
	if b.closed {
		return errors.New("results: WriteRow after Close")
	}
	if !b.started {
		return errors.New("results: WriteRow before WriteHead")
	}
	if len(row) != len(b.vars) {
		return fmt.Errorf("results: row has %d values for %d variables", len(row), len(b.vars))
	}
	return nil
}

func (b *baseWriter) head(vars []string) error {
	if b.started {
		return errors.New("results: WriteHead called twice")
	}
	b.started = true
	b.vars = append(b.vars[:0], vars...)
	return nil
}

// SolutionReader streams SELECT or ASK results.
type SolutionReader interface {
	// Vars returns the variable names (without '?'); nil for a boolean.
	Vars() []string
	// IsBoolean reports whether the document is an ASK result; Boolean
	// returns it.
	IsBoolean() bool
	Boolean() bool
	// Next returns the next row (row[i] binds Vars()[i]; unbound is the
	// zero Term) or io.EOF after the last one. The slice is reused: it is
	// valid until the next call.
	Next() ([]rdf.Term, error)
}

// NewSolutionReader reads the head of a results document in format f from r
// and returns a reader positioned at the first row.
func NewSolutionReader(f Format, r io.Reader) (SolutionReader, error) {
	switch f {
	case FormatJSON:
		return newJSONReader(r)
	case FormatXML:
		return newXMLReader(r)
	case FormatCSV:
		return newCSVReader(r)
	case FormatTSV:
		return newTSVReader(r)
	}
	return nil, fmt.Errorf("%w: %s is not a solution format", ErrFormat, f)
}

// Results is a whole results document in memory.
type Results struct {
	Vars      []string
	Rows      [][]rdf.Term
	IsBoolean bool
	Boolean   bool
}

// Read reads a whole results document in format f.
func Read(f Format, r io.Reader) (*Results, error) {
	sr, err := NewSolutionReader(f, r)
	if err != nil {
		return nil, err
	}
	res := &Results{Vars: sr.Vars(), IsBoolean: sr.IsBoolean(), Boolean: sr.Boolean()}
	for {
		row, err := sr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, append([]rdf.Term(nil), row...))
	}
	res.IsBoolean, res.Boolean = sr.IsBoolean(), sr.Boolean()
	return res, nil
}
