package wal

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
)

// The payload of a request's record: its ordered []graphstore.GraphChange,
// at the level of terms (so that replaying it through Dataset.Apply gives
// new terms the same IDs as the first time):
//
//	byte     changeFormat (1)
//	uvarint  number of changes
//	change*  flags byte (1 Drop, 2 Clear, 4 named graph), [graph term],
//	         uvarint number of deletes, (s p o term)*, uvarint number of inserts, (s p o term)*
//
// A term is a uvarint reference: i < the number of terms defined so far
// in this payload names the i-th; i equal to it defines the next term,
// written after it as a kind byte (1 IRI, 2 blank node, 3 literal), the
// value (uvarint length, bytes) and for a literal the datatype and the
// language (each uvarint length, bytes). A term repeated in a request is
// thus written once.
const changeFormat = 1

const (
	flagDrop  = 1
	flagClear = 2
	flagNamed = 4
)

// ErrBadRecord: a payload that does not decode (DecodeChanges).
var ErrBadRecord = errors.New("bad change record")

// changeEncoder appends changes with a term table.
type changeEncoder struct {
	dst   []byte
	terms map[rdf.Term]uint64
	// Terms tripleIDs defined, not yet in terms (a record of one bulk
	// change never needs them there); n counts every defined term.
	later []definedTerm
	n     uint64
}

type definedTerm struct {
	t   rdf.Term
	ref uint64
}

func (e *changeEncoder) uvarint(v uint64) { e.dst = binary.AppendUvarint(e.dst, v) }

func (e *changeEncoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.dst = append(e.dst, s...)
}

func (e *changeEncoder) term(t rdf.Term) error {
	_, err := e.termRef(t)
	return err
}

// termRef writes t's reference (and t, the first time) and returns it.
func (e *changeEncoder) termRef(t rdf.Term) (uint64, error) {
	for _, x := range e.later {
		if _, ok := e.terms[x.t]; !ok {
			e.terms[x.t] = x.ref
		}
	}
	e.later = e.later[:0]
	if i, ok := e.terms[t]; ok {
		e.uvarint(i)
		return i, nil
	}
	i, err := e.define(t)
	if err == nil {
		e.terms[t] = i
	}
	return i, err
}

// define writes the next reference and t's definition, and returns the
// reference.
func (e *changeEncoder) define(t rdf.Term) (uint64, error) {
	var kind byte
	switch t.Kind {
	case rdf.KindIRI:
		kind = 1
	case rdf.KindBlank:
		kind = 2
	case rdf.KindLiteral:
		kind = 3
	default:
		return 0, fmt.Errorf("cannot log %v: not an RDF term", t)
	}
	i := e.n
	e.n++
	e.uvarint(i)
	e.dst = append(e.dst, kind)
	e.str(t.Value)
	if kind == 3 {
		e.str(t.Datatype)
		e.str(t.Lang)
	}
	return i, nil
}

func (e *changeEncoder) triples(ts []rdf.Triple) error {
	e.uvarint(uint64(len(ts)))
	// The previous triple's terms and references: a subject's triples
	// come together and share a few predicates, so most terms are one of
	// them, found without hashing the term (a bulk record has millions).
	var prev [3]rdf.Term
	var prevRef [3]uint64
	for _, t := range ts {
		for j, x := range [3]rdf.Term{t.S, t.P, t.O} {
			if i := e.recent(x, &prev, &prevRef); i >= 0 {
				e.uvarint(prevRef[i])
				continue
			}
			ref, err := e.termRef(x)
			if err != nil {
				return err
			}
			prev[j], prevRef[j] = x, ref
		}
	}
	return nil
}

// tripleIDs is triples for the triples ids (one ID per term) whose
// terms term gives (term j of triple i, of ID id): a term is looked up
// once, when its ID is first seen, so the bytes are the ones triples
// writes for the same triples as terms.
//
// The references of IDs in [first, first+made) (the vertices the change
// made: most of a body of new data) are kept in a slice indexed by ID,
// the others in a map: a map's hash and probe per reference was 0.17 of
// the 0.23 CPU-s that encoding a 1.27 M-triple POST took.
func (e *changeEncoder) tripleIDs(ids []graphstore.IDTriple, first graphstore.ID, made int, term func(i, j int, id graphstore.ID) (rdf.Term, error)) error {
	e.uvarint(uint64(len(ids)))
	dense := make([]uint64, made) // reference+1 (0: none yet)
	refs := make(map[graphstore.ID]uint64)
	lookup := func(id graphstore.ID) (uint64, bool) {
		if id >= first && id-first < graphstore.ID(made) {
			r := dense[id-first]
			return r - 1, r != 0
		}
		r, ok := refs[id]
		return r, ok
	}
	keep := func(id graphstore.ID, ref uint64) {
		if id >= first && id-first < graphstore.ID(made) {
			dense[id-first] = ref + 1
		} else {
			refs[id] = ref
		}
	}
	earlier := len(e.terms) > 0 || len(e.later) > 0 // terms defined before (a graph name, deletes)
	var prev [3]graphstore.ID
	var prevRef [3]uint64
	for i, x := range ids {
		for j, id := range [3]graphstore.ID{x.S, x.P, x.O} {
			if id == prev[0] || id == prev[1] || id == prev[2] {
				k := 0
				for prev[k] != id {
					k++
				}
				e.uvarint(prevRef[k])
				continue
			}
			ref, ok := lookup(id)
			if ok {
				e.uvarint(ref)
			} else {
				t, err := term(i, j, id)
				if err != nil {
					return err
				}
				if earlier {
					ref, err = e.termRef(t)
				} else if ref, err = e.define(t); err == nil {
					e.later = append(e.later, definedTerm{t, ref})
				}
				if err != nil {
					return err
				}
				keep(id, ref)
			}
			prev[j], prevRef[j] = id, ref
		}
	}
	return nil
}

// recent returns the index in prev of a term equal to x (-1: none).
func (e *changeEncoder) recent(x rdf.Term, prev *[3]rdf.Term, prevRef *[3]uint64) int {
	for i := range prev {
		if p := &prev[i]; p.Kind != 0 && p.Kind == x.Kind && p.Value == x.Value && p.Datatype == x.Datatype && p.Lang == x.Lang {
			return i
		}
	}
	return -1
}

// AppendChanges appends the record payload of changes (one request's
// change, in order) to dst.
func AppendChanges(dst []byte, changes []graphstore.GraphChange) ([]byte, error) {
	if dst == nil {
		n := 0
		for _, c := range changes {
			n += len(c.Delete) + c.InsertLen()
		}
		dst = make([]byte, 0, 64+32*n) // a few bytes of references a triple, and its new terms
	}
	e := &changeEncoder{dst: dst, terms: map[rdf.Term]uint64{}}
	e.dst = append(e.dst, changeFormat)
	e.uvarint(uint64(len(changes)))
	for _, c := range changes {
		var flags byte
		if c.Drop {
			flags |= flagDrop
		}
		if c.Clear {
			flags |= flagClear
		}
		if !c.Graph.IsZero() {
			flags |= flagNamed
		}
		e.dst = append(e.dst, flags)
		if !c.Graph.IsZero() {
			if err := e.term(c.Graph); err != nil {
				return dst, err
			}
		}
		if err := e.triples(c.Delete); err != nil {
			return dst, err
		}
		if len(c.InsertIDs) > 0 && len(c.InsertIDs) == c.InsertLen() {
			term := func(i, j int, id graphstore.ID) (rdf.Term, error) {
				if c.Insert != nil {
					return [3]rdf.Term{c.Insert[i].S, c.Insert[i].P, c.Insert[i].O}[j], nil
				}
				t, ok := c.InsertTerm(id)
				if !ok {
					return rdf.Term{}, fmt.Errorf("cannot log inserted triple %d: ID %d has no term", i, id)
				}
				return t, nil
			}
			first, made := c.MadeIDs()
			if err := e.tripleIDs(c.InsertIDs, first, made, term); err != nil {
				return dst, err
			}
		} else if err := e.triples(c.Insert); err != nil {
			return dst, err
		}
	}
	return e.dst, nil
}

// changeDecoder reads a payload; the first error sticks.
type changeDecoder struct {
	b     []byte
	off   int
	terms []rdf.Term
	err   error
}

func (d *changeDecoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: at byte %d: %s", ErrBadRecord, d.off, fmt.Sprintf(format, a...))
	}
}

func (d *changeDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.b) {
		d.fail("the record ends early")
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

func (d *changeDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return v
}

func (d *changeDecoder) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail("a %d-byte string past the end", n)
		return ""
	}
	s := string(d.b[d.off : d.off+int(n)])
	d.off += int(n)
	return s
}

func (d *changeDecoder) term() rdf.Term {
	i := d.uvarint()
	if d.err != nil {
		return rdf.Term{}
	}
	switch {
	case i < uint64(len(d.terms)):
		return d.terms[i]
	case i > uint64(len(d.terms)):
		d.fail("term %d referenced before it is defined", i)
		return rdf.Term{}
	}
	var t rdf.Term
	switch k := d.byte(); k {
	case 1:
		t.Kind = rdf.KindIRI
	case 2:
		t.Kind = rdf.KindBlank
	case 3:
		t.Kind = rdf.KindLiteral
	default:
		d.fail("term kind %d", k)
		return rdf.Term{}
	}
	t.Value = d.str()
	if t.Kind == rdf.KindLiteral {
		t.Datatype = d.str()
		t.Lang = d.str()
	}
	d.terms = append(d.terms, t)
	return t
}

// count reads a count of items of at least min bytes each, bounded by
// what is left of the record (a corrupt count cannot allocate much).
func (d *changeDecoder) count(min int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)-d.off)/uint64(min) {
		d.fail("a count of %d past the end", n)
		return 0
	}
	return int(n)
}

func (d *changeDecoder) triples() []rdf.Triple {
	n := d.count(3)
	if n == 0 || d.err != nil {
		return nil
	}
	ts := make([]rdf.Triple, n)
	for i := range ts {
		ts[i] = rdf.Triple{S: d.term(), P: d.term(), O: d.term()}
		if d.err != nil {
			return nil
		}
	}
	return ts
}

// DecodeChanges decodes a payload made by AppendChanges. The result does
// not alias b.
func DecodeChanges(b []byte) ([]graphstore.GraphChange, error) {
	d := &changeDecoder{b: b}
	if v := d.byte(); d.err == nil && v != changeFormat {
		d.fail("format %d, this build reads %d", v, changeFormat)
	}
	n := d.count(3)
	var out []graphstore.GraphChange
	for i := 0; i < n && d.err == nil; i++ {
		var c graphstore.GraphChange
		flags := d.byte()
		if flags&^(flagDrop|flagClear|flagNamed) != 0 {
			d.fail("change flags %#x", flags)
		}
		c.Drop, c.Clear = flags&flagDrop != 0, flags&flagClear != 0
		if flags&flagNamed != 0 {
			if c.Graph = d.term(); d.err == nil && c.Graph.Kind == rdf.KindLiteral {
				d.fail("a literal graph name")
			}
		}
		c.Delete = d.triples()
		c.Insert = d.triples()
		out = append(out, c)
	}
	if d.err == nil && d.off != len(b) {
		d.fail("%d bytes after the last change", len(b)-d.off)
	}
	if d.err != nil {
		return nil, d.err
	}
	return out, nil
}
