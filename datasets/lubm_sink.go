package datasets

import "github.com/wukongd/wukongd/rdf"

// sink receives the triples of one university from the generator. IRIs and
// literal values come as byte slices that are only valid during the call
// (the generator reuses its buffers). Generated IRIs and literals never hold
// characters that N-Triples must escape, so no escaping is done.
type sink interface {
	// iri adds <s> p <o>.
	iri(s []byte, p predicate, o []byte)
	// lit adds <s> p "v".
	lit(s []byte, p predicate, v []byte)
	// typ adds <s> rdf:type c.
	typ(s []byte, c class)
}

// textSink appends N-Triples lines to buf.
type textSink struct {
	buf     []byte
	triples int64
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

func (t *textSink) typ(s []byte, c class) {
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

func (t *tripleSink) typ(s []byte, c class) {
	t.triples = append(t.triples, rdf.Triple{S: rdf.NewIRI(t.str(s)), P: predTerm[predType], O: classTerm[c]})
}

// nopSink drops every triple; typedBefore runs the generator with it.
type nopSink struct{}

func (nopSink) iri([]byte, predicate, []byte) {}
func (nopSink) lit([]byte, predicate, []byte) {}
func (nopSink) typ([]byte, class)             {}
