package graphstore

import (
	"encoding/binary"
	"fmt"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

// Dictionary entries. Every term is one entry in a string arena:
//
//	kind byte (rdf.Kind)
//	code uvarint         literals only: 0 = simple literal, else 1 + the
//	                     index of its datatype or language tag in the
//	                     annotation table
//	len  uvarint
//	value [len]byte      the IRI, blank label or lexical form, as written
//
// The annotation table (datatype IRIs and language tags) is small and
// shared by all literals.

// annot is a datatype IRI (lang false) or a language tag (lang true).
type annot struct {
	lang bool
	s    string
}

func annotKey(lang bool, s string) string {
	if lang {
		return "@" + s
	}
	return "^" + s
}

func appendEntry(dst []byte, kind byte, code uint32, value string) []byte {
	dst = append(dst, kind)
	if kind == byte(rdf.KindLiteral) {
		dst = binary.AppendUvarint(dst, uint64(code))
	}
	dst = binary.AppendUvarint(dst, uint64(len(value)))
	return append(dst, value...)
}

// parseEntry decodes the entry at b; ok is false for a malformed entry.
func parseEntry(b []byte) (kind byte, code uint32, value []byte, ok bool) {
	if len(b) == 0 {
		return 0, 0, nil, false
	}
	kind = b[0]
	b = b[1:]
	if kind == byte(rdf.KindLiteral) {
		c, n := binary.Uvarint(b)
		if n <= 0 || c > 1<<31 {
			return 0, 0, nil, false
		}
		code = uint32(c)
		b = b[n:]
	} else if kind != byte(rdf.KindIRI) && kind != byte(rdf.KindBlank) {
		return 0, 0, nil, false
	}
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return 0, 0, nil, false
	}
	return kind, code, b[n : n+int(l)], true
}

func entryMatches(b []byte, kind byte, code uint32, value string) bool {
	k, c, v, ok := parseEntry(b)
	return ok && k == kind && c == code && string(v) == value
}

// Roles of predicate/class IDs.
const (
	rolePredicate byte = 1 << iota
	roleClass
)

// Dict is the dictionary of a built store: term <-> ID. It is read-only
// and safe for concurrent use. Its tables are flat byte slices (in memory
// or mapped from a snapshot): an arena of entries in ID order, their
// offsets, and an open-addressing hash table of entry indexes.
type Dict struct {
	arena  []byte
	offs   []byte // (n+1) × uint64 LE: start of entry i; offs[n] = len(arena)
	table  []byte // size × uint32 LE: 0 empty, else entry index + 1
	roles  []byte // npc bytes: role bits of ID i+1
	mask   uint64
	n      uint64 // entries
	npc    uint64 // predicate/class IDs: 1..npc
	annots []annot
	annIdx map[string]uint32
	region *rdmakv.Region // the mapped dictionary file, if any
}

func newDictAnnots(annots []annot) ([]annot, map[string]uint32) {
	m := make(map[string]uint32, len(annots))
	for i, a := range annots {
		m[annotKey(a.lang, a.s)] = uint32(i + 1)
	}
	return annots, m
}

// Len returns the number of terms.
func (d *Dict) Len() int { return int(d.n) }

// NumPredicatesAndClasses returns how many IDs lie in the low range: they
// are 1..NumPredicatesAndClasses().
func (d *Dict) NumPredicatesAndClasses() int { return int(d.npc) }

// IsPredicateOrClass reports whether id is in the low range (a predicate,
// a class, or both).
func (d *Dict) IsPredicateOrClass(id ID) bool { return id >= 1 && uint64(id) <= d.npc }

// IsPredicate reports whether id is used as a predicate in the data.
func (d *Dict) IsPredicate(id ID) bool {
	return d.IsPredicateOrClass(id) && d.roles[id-1]&rolePredicate != 0
}

// IsClass reports whether id is an object of rdf:type in the data.
func (d *Dict) IsClass(id ID) bool {
	return d.IsPredicateOrClass(id) && d.roles[id-1]&roleClass != 0
}

// TypeID returns the ID of rdf:type (always TypeID).
func (d *Dict) TypeID() ID { return TypeID }

// MaxID returns the largest ID handed out.
func (d *Dict) MaxID() ID {
	if d.n == d.npc {
		return ID(d.npc)
	}
	return FirstVertexID + ID(d.n-d.npc) - 1
}

func (d *Dict) idOf(idx uint64) ID {
	if idx < d.npc {
		return ID(idx + 1)
	}
	return FirstVertexID + ID(idx-d.npc)
}

func (d *Dict) indexOf(id ID) (uint64, bool) {
	switch {
	case id >= 1 && uint64(id) <= d.npc:
		return uint64(id) - 1, true
	case id >= FirstVertexID && uint64(id-FirstVertexID) < d.n-d.npc:
		return d.npc + uint64(id-FirstVertexID), true
	}
	return 0, false
}

func (d *Dict) entry(idx uint64) []byte {
	a := binary.LittleEndian.Uint64(d.offs[8*idx:])
	b := binary.LittleEndian.Uint64(d.offs[8*idx+8:])
	if a > b || b > uint64(len(d.arena)) {
		return nil
	}
	return d.arena[a:b]
}

// termCode returns the kind and annotation code of t; ok is false when t's
// datatype or language is unknown (so t cannot be in the dictionary).
func termCode(t rdf.Term, annIdx map[string]uint32) (kind byte, code uint32, ok bool) {
	switch t.Kind {
	case rdf.KindIRI, rdf.KindBlank:
		return byte(t.Kind), 0, true
	case rdf.KindLiteral:
		switch {
		case t.Lang != "":
			code, ok = annIdx[annotKey(true, t.Lang)]
		case t.Datatype != "" && t.Datatype != rdf.XSDString:
			code, ok = annIdx[annotKey(false, t.Datatype)]
		default:
			return byte(rdf.KindLiteral), 0, true
		}
		return byte(rdf.KindLiteral), code, ok
	}
	return 0, 0, false
}

// Lookup returns the ID of t. A term not in the data gives ok = false.
func (d *Dict) Lookup(t rdf.Term) (ID, bool) {
	kind, code, ok := termCode(t, d.annIdx)
	if !ok || d.mask == 0 {
		return 0, false
	}
	h := hashTerm(kind, code, t.Value)
	for i, probes := h&d.mask, uint64(0); probes <= d.mask; i, probes = (i+1)&d.mask, probes+1 {
		e := binary.LittleEndian.Uint32(d.table[4*i:])
		if e == 0 {
			return 0, false
		}
		idx := uint64(e - 1)
		if idx < d.n && entryMatches(d.entry(idx), kind, code, t.Value) {
			return d.idOf(idx), true
		}
	}
	return 0, false
}

// Term returns the term of id; ok is false for an ID not handed out. The
// strings are copies (they outlive a mapped snapshot).
func (d *Dict) Term(id ID) (rdf.Term, bool) {
	idx, ok := d.indexOf(id)
	if !ok {
		return rdf.Term{}, false
	}
	kind, code, v, ok := parseEntry(d.entry(idx))
	if !ok {
		return rdf.Term{}, false
	}
	t := rdf.Term{Kind: rdf.Kind(kind), Value: string(v)}
	if code != 0 {
		if int(code) > len(d.annots) {
			return rdf.Term{}, false
		}
		a := d.annots[code-1]
		if a.lang {
			t.Lang = a.s
		} else {
			t.Datatype = a.s
		}
	}
	return t, true
}

// AppendNTriples appends id's term in N-Triples syntax to dst, without
// allocating for terms that need no escaping. An unknown ID appends nothing
// and returns ok = false.
func (d *Dict) AppendNTriples(dst []byte, id ID) ([]byte, bool) {
	idx, ok := d.indexOf(id)
	if !ok {
		return dst, false
	}
	kind, code, v, ok := parseEntry(d.entry(idx))
	if !ok || int(code) > len(d.annots) {
		return dst, false
	}
	switch rdf.Kind(kind) {
	case rdf.KindIRI:
		if !plainIRI(v) {
			t, _ := d.Term(id)
			return rdf.AppendNTriples(dst, t), true
		}
		dst = append(dst, '<')
		dst = append(dst, v...)
		return append(dst, '>'), true
	case rdf.KindBlank:
		dst = append(dst, "_:"...)
		return append(dst, v...), true
	}
	var a annot
	if code != 0 {
		a = d.annots[code-1]
		if !a.lang && !plainIRI([]byte(a.s)) {
			t, _ := d.Term(id)
			return rdf.AppendNTriples(dst, t), true
		}
	}
	dst = append(dst, '"')
	for _, c := range v {
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, c)
		}
	}
	dst = append(dst, '"')
	switch {
	case code == 0:
	case a.lang:
		dst = append(dst, '@')
		dst = append(dst, a.s...)
	default:
		dst = append(dst, "^^<"...)
		dst = append(dst, a.s...)
		dst = append(dst, '>')
	}
	return dst, true
}

// plainIRI reports whether v needs no escaping inside <>.
func plainIRI(v []byte) bool {
	for _, c := range v {
		switch {
		case c <= 0x20, c == '<', c == '>', c == '"', c == '{', c == '}', c == '|', c == '^', c == '`', c == '\\':
			return false
		}
	}
	return true
}

// validate checks the dictionary's structure (after mapping a snapshot).
func (d *Dict) validate() error {
	if uint64(len(d.offs)) != 8*(d.n+1) {
		return fmt.Errorf("dictionary offsets: %d bytes for %d terms", len(d.offs), d.n)
	}
	if d.npc > d.n || uint64(len(d.roles)) != d.npc {
		return fmt.Errorf("dictionary: %d predicate/class IDs of %d terms, %d roles", d.npc, d.n, len(d.roles))
	}
	if size := uint64(len(d.table)) / 4; size == 0 || size&(size-1) != 0 || size <= d.n {
		return fmt.Errorf("dictionary hash table of %d slots for %d terms", size, d.n)
	}
	if end := binary.LittleEndian.Uint64(d.offs[8*d.n:]); end != uint64(len(d.arena)) {
		return fmt.Errorf("dictionary arena ends at %d, offsets say %d", len(d.arena), end)
	}
	return nil
}
