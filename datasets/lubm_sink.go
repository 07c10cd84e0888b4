package datasets

import (
	"strconv"

	"github.com/wukongd/wukongd/rdf"
)

// sink receives one university from the generator, in the structure of
// UBA's files: a file per department, in it sections (an instance's type,
// then its properties). IRIs and literal values come as byte slices that
// are only valid during the call (the generator reuses its buffers).
// Generated IRIs and literals never hold characters that N-Triples or XML
// must escape, so no escaping is done.
type sink interface {
	// file starts UBA's file University<univ>_<dept>.owl, with its
	// owl:Ontology header (in N-Triples: <file:///University<univ>_<dept>.owl>
	// a owl:Ontology; owl:imports univ-bench).
	file(univ, dept int)
	// typ starts the section of instance s: <s> rdf:type c. repeat says the
	// data set has had this triple before (only a University's can repeat);
	// the N-Triples sinks drop it then.
	typ(s []byte, c class, repeat bool)
	// iri adds <s> p <o>.
	iri(s []byte, p predicate, o []byte)
	// lit adds <s> p "v".
	lit(s []byte, p predicate, v []byte)
	// univ adds <s> p <o> where o is a university, which UBA writes as a
	// nested node: <o> rdf:type ub:University comes first, unless repeat.
	univ(s []byte, p predicate, o []byte, repeat bool)
}

// appendFileIRI appends file:///University<u>_<d>.owl, the name of a UBA
// file's owl:Ontology once its "" is resolved against the file's name.
func appendFileIRI(dst []byte, u, d int) []byte {
	dst = append(dst, "file:///"...)
	return appendFileName(dst, u, d)
}

// appendFileName appends University<u>_<d>.owl.
func appendFileName(dst []byte, u, d int) []byte {
	dst = append(dst, "University"...)
	dst = strconv.AppendInt(dst, int64(u), 10)
	dst = append(dst, '_')
	dst = strconv.AppendInt(dst, int64(d), 10)
	return append(dst, ".owl"...)
}

// textSink appends N-Triples lines to buf.
type textSink struct {
	buf     []byte
	triples int64
	scratch []byte
}

func (t *textSink) file(u, d int) {
	t.scratch = appendFileIRI(t.scratch[:0], u, d)
	t.typ(t.scratch, classOntology, false)
	t.iri(t.scratch, predImports, univBenchOntology)
}

func (t *textSink) univ(s []byte, p predicate, o []byte, repeat bool) {
	t.typ(o, classUniversity, repeat)
	t.iri(s, p, o)
}

func (t *textSink) iri(s []byte, p predicate, o []byte) {
	b := append(t.buf, '<')
	b = append(b, s...)
	b = append(b, '>', ' ')
	b = append(b, predToken[p]...)
	b = append(b, '<')
	b = append(b, o...)
	t.buf = append(b, '>', ' ', '.', '\n')
	t.triples++
}

func (t *textSink) lit(s []byte, p predicate, v []byte) {
	b := append(t.buf, '<')
	b = append(b, s...)
	b = append(b, '>', ' ')
	b = append(b, predToken[p]...)
	b = append(b, '"')
	b = append(b, v...)
	t.buf = append(b, '"', ' ', '.', '\n')
	t.triples++
}

func (t *textSink) typ(s []byte, c class, repeat bool) {
	if repeat {
		return
	}
	b := append(t.buf, '<')
	b = append(b, s...)
	b = append(b, '>', ' ')
	t.buf = append(b, typeToken[c]...)
	t.triples++
}

// tripleSink collects rdf.Triples. Strings are interned per university, so
// a subject's IRI is allocated once for all its triples.
type tripleSink struct {
	triples []rdf.Triple
	intern  map[string]string
	scratch []byte
}

func (t *tripleSink) file(u, d int) {
	t.scratch = appendFileIRI(t.scratch[:0], u, d)
	t.typ(t.scratch, classOntology, false)
	t.iri(t.scratch, predImports, univBenchOntology)
}

func (t *tripleSink) univ(s []byte, p predicate, o []byte, repeat bool) {
	t.typ(o, classUniversity, repeat)
	t.iri(s, p, o)
}

func (t *tripleSink) str(b []byte) string {
	if s, ok := t.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	t.intern[s] = s
	return s
}

func (t *tripleSink) iri(s []byte, p predicate, o []byte) {
	t.triples = append(t.triples, rdf.Triple{S: rdf.NewIRI(t.str(s)), P: predTerm[p], O: rdf.NewIRI(t.str(o))})
}

func (t *tripleSink) lit(s []byte, p predicate, v []byte) {
	t.triples = append(t.triples, rdf.Triple{S: rdf.NewIRI(t.str(s)), P: predTerm[p], O: rdf.NewLiteral(t.str(v), "")})
}

func (t *tripleSink) typ(s []byte, c class, repeat bool) {
	if repeat {
		return
	}
	t.triples = append(t.triples, rdf.Triple{S: rdf.NewIRI(t.str(s)), P: predTerm[predType], O: classTerm[c]})
}

// nopSink drops every triple; typedBefore runs the generator with it.
type nopSink struct{}

func (nopSink) file(int, int)                        {}
func (nopSink) typ([]byte, class, bool)              {}
func (nopSink) iri([]byte, predicate, []byte)        {}
func (nopSink) lit([]byte, predicate, []byte)        {}
func (nopSink) univ([]byte, predicate, []byte, bool) {}
