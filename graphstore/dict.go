package graphstore

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

// Dictionary entries. Every term is one entry in a string arena:
//
//	kind  byte (rdf.Kind)
//	code  uvarint        literals: 0 = simple literal, else 1 + the index of
//	                     its datatype or language tag in the annotation
//	                     table; IRIs: 0 = no prefix, else 1 + the index of
//	                     the IRI's namespace (up to its last '/' or '#') in
//	                     the prefix table; absent for blank nodes
//	len   uvarint
//	value [len]byte      the lexical form or blank label as written; for an
//	                     IRI the part after the prefix
//
// A literal whose value ends with a long shared suffix (from its last '@',
// at least minLitSuffix bytes: e-mail domains) is stored as
//
//	kind  byte kindLitSuffix (rdf.KindLiteral | 0x80)
//	code  uvarint        the annotation code, as above
//	sfx   uvarint        1 + the index of the suffix in the prefix table
//	len   uvarint
//	value [len]byte      the lexical form up to the suffix
//
// The annotation and prefix tables are small and shared by all entries;
// splitting IRIs at their namespace roughly halves the arena on typical
// data (LUBM: every IRI of a department shares one prefix).

// iriSplit returns the length of the prefix of an IRI stored in the
// prefix table (0: none): its namespace, up to the last '/' or '#', and,
// when the local name is a word followed by a number
// ("GraduateStudent45"), the word too: such IRIs come in families of one
// word per namespace, so the prefix table stays small and the entry keeps
// only the number. Reading does not depend on where an IRI was split.
func iriSplit(v string) int {
	i := strings.LastIndexAny(v, "/#")
	if i < 8 {
		return 0
	}
	return wordBeforeNumber(v, i+1)
}

// kindLitSuffix is the entry kind of a literal stored with a shared
// suffix; kindLitAffix of one stored with a shared head (and perhaps a
// suffix).
const (
	kindLitSuffix = byte(rdf.KindLiteral) | 0x80
	kindLitAffix  = byte(rdf.KindLiteral) | 0x40
)

// minLitSuffix is the shortest literal suffix worth sharing.
const minLitSuffix = 8

// litSplit returns the parts of a literal's lexical form kept in the
// prefix table: v[:head] and v[tail:]. The suffix starts at the last '@'
// when at least minLitSuffix bytes follow; the head is a word of letters
// before a number that ends the rest (as for IRIs, see iriSplit):
// "UndergraduateStudent7@Department3.University7.edu" keeps "7".
func litSplit(v string) (head, tail int) {
	tail = len(v)
	if i := strings.LastIndexByte(v, '@'); i >= 1 && len(v)-i >= minLitSuffix {
		tail = i
	}
	return wordBeforeNumber(v[:tail], 0), tail
}

// wordBeforeNumber returns the end of the word of letters that starts at
// from and is followed by digits up to the end of v, or from if v[from:]
// is not such a word and number.
func wordBeforeNumber(v string, from int) int {
	j := len(v)
	for j > from && '0' <= v[j-1] && v[j-1] <= '9' {
		j--
	}
	if j == len(v) || j == from {
		return from
	}
	for k := from; k < j; k++ {
		if c := v[k] | 0x20; c < 'a' || c > 'z' {
			return from
		}
	}
	return j
}

// appendLiteralEntry appends a literal entry with annotation code, shared
// head pfx and suffix sfx (0: none) and the stored part value.
func appendLiteralEntry[S string | []byte](dst []byte, code, pfx, sfx uint32, value S) []byte {
	switch {
	case pfx != 0:
		dst = append(dst, kindLitAffix)
		dst = binary.AppendUvarint(dst, uint64(code))
		dst = binary.AppendUvarint(dst, uint64(pfx))
		dst = binary.AppendUvarint(dst, uint64(sfx))
		dst = binary.AppendUvarint(dst, uint64(len(value)))
		return append(dst, value...)
	case sfx != 0:
		return appendLitSuffixEntry(dst, code, sfx, value)
	}
	return appendEntry(dst, byte(rdf.KindLiteral), code, value)
}

func appendLitSuffixEntry[S string | []byte](dst []byte, code, sfx uint32, value S) []byte {
	dst = append(dst, kindLitSuffix)
	dst = binary.AppendUvarint(dst, uint64(code))
	dst = binary.AppendUvarint(dst, uint64(sfx))
	dst = binary.AppendUvarint(dst, uint64(len(value)))
	return append(dst, value...)
}

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

func appendEntry[S string | []byte](dst []byte, kind byte, code uint32, value S) []byte {
	dst = append(dst, kind)
	if kind != byte(rdf.KindBlank) {
		dst = binary.AppendUvarint(dst, uint64(code))
	}
	dst = binary.AppendUvarint(dst, uint64(len(value)))
	return append(dst, value...)
}

// parseEntry decodes the entry at b; ok is false for a malformed entry.
// A literal with a shared head or suffix has kind rdf.KindLiteral and pfx
// or sfx > 0 (their codes in the prefix table); value is then the part
// between them.
func parseEntry(b []byte) (kind byte, code, pfx, sfx uint32, value []byte, ok bool) {
	if len(b) == 0 {
		return 0, 0, 0, 0, nil, false
	}
	kind = b[0]
	b = b[1:]
	uv := func() (uint32, bool) {
		c, n := binary.Uvarint(b)
		if n <= 0 || c > 1<<31 {
			return 0, false
		}
		b = b[n:]
		return uint32(c), true
	}
	switch kind {
	case byte(rdf.KindLiteral), byte(rdf.KindIRI):
		if code, ok = uv(); !ok {
			return 0, 0, 0, 0, nil, false
		}
	case kindLitSuffix, kindLitAffix:
		if code, ok = uv(); !ok {
			return 0, 0, 0, 0, nil, false
		}
		if kind == kindLitAffix {
			if pfx, ok = uv(); !ok || pfx == 0 {
				return 0, 0, 0, 0, nil, false
			}
		}
		if sfx, ok = uv(); !ok || (kind == kindLitSuffix && sfx == 0) {
			return 0, 0, 0, 0, nil, false
		}
		kind = byte(rdf.KindLiteral)
	case byte(rdf.KindBlank):
	default:
		return 0, 0, 0, 0, nil, false
	}
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return 0, 0, 0, 0, nil, false
	}
	return kind, code, pfx, sfx, b[n : n+int(l)], true
}

// affixes returns the shared head and suffix of a literal entry ("" for
// code 0); ok is false for a code outside the table.
func affixes(prefixes *prefixTable, pfx, sfx uint32) (head, suffix string, ok bool) {
	ok = true
	if pfx != 0 {
		head, ok = prefixes.get(int(pfx) - 1)
	}
	if sfx != 0 && ok {
		suffix, ok = prefixes.get(int(sfx) - 1)
	}
	return head, suffix, ok
}

// entryMatches reports whether entry b is the term (kind, code, value);
// for IRIs code is ignored and value is the whole IRI.
func entryMatches(b []byte, kind byte, code uint32, value string, prefixes *prefixTable) bool {
	k, c, pfx, sfx, v, ok := parseEntry(b)
	if !ok || k != kind {
		return false
	}
	if kind == byte(rdf.KindIRI) {
		var p string
		if c > 0 {
			var ok bool
			if p, ok = prefixes.get(int(c) - 1); !ok {
				return false
			}
		}
		return len(value) == len(p)+len(v) && value[:len(p)] == p && value[len(p):] == string(v)
	}
	if c != code {
		return false
	}
	if pfx == 0 && sfx == 0 {
		return string(v) == value
	}
	p, x, ok := affixes(prefixes, pfx, sfx)
	if !ok || len(value) != len(p)+len(v)+len(x) {
		return false
	}
	return value[:len(p)] == p && value[len(p):len(p)+len(v)] == string(v) && value[len(p)+len(v):] == x
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
	arena    []byte
	offs     []byte // (n+1) × offW bytes LE: start of entry i; the last = len(arena)
	offW     uint64 // 3 (arena below 16 MiB), 4 (below 4 GiB) or 8
	table    []byte // slots × slotW bytes LE: 0 empty, else entry index + 1
	slotW    uint64 // 3 (fewer than 2^24-1 terms) or 4
	slots    uint64 // linear probing from hi(hash·slots)
	roles    []byte // npc bytes: role bits of ID i+1
	n        uint64 // entries
	npc      uint64 // predicate/class IDs: 1..npc
	annots   []annot
	annIdx   map[string]uint32
	prefixes prefixTable
	region   *rdmakv.Region // the mapped dictionary file, if any
	fp       *dictFP        // fingerprints of table's slots (dict_fp.go), shared by the copies

	// The terms added by writes since the tables above were laid out
	// (dict_delta.go): shared by every version of a dataset, each
	// version's Dict seeing the first ovPC / ovV / ovRoles / ovAliases
	// entries. nil: none.
	ov                          *dictOverlay
	ovPC, ovV, ovRoles, ovAlias int
}

func newDictAnnots(annots []annot) ([]annot, map[string]uint32) {
	m := make(map[string]uint32, len(annots))
	for i, a := range annots {
		m[annotKey(a.lang, a.s)] = uint32(i + 1)
	}
	return annots, m
}

// Len returns the number of terms (an ID kept only to decode a term that
// became a predicate or class counts as a term).
func (d *Dict) Len() int { return int(d.n) + d.ovPC + d.ovV }

// NumPredicatesAndClasses returns how many IDs lie in the low range: they
// are 1..NumPredicatesAndClasses().
func (d *Dict) NumPredicatesAndClasses() int { return int(d.npc) + d.ovPC }

// RoleChanges counts the low-range IDs and the roles the writes since
// the dictionary's base gave: it differs between two versions of a
// dictionary when a term became a predicate or a class in between.
func (d *Dict) RoleChanges() int { return d.ovPC + d.ovRoles }

// IsPredicateOrClass reports whether id is in the low range (a predicate,
// a class, or both).
func (d *Dict) IsPredicateOrClass(id ID) bool {
	return id >= 1 && uint64(id) <= d.npc+uint64(d.ovPC)
}

// role returns the role bits of a low-range ID.
func (d *Dict) role(id ID) byte {
	var r byte
	if uint64(id) <= d.npc {
		r = d.roles[id-1]
	}
	if d.ov != nil {
		r |= d.ov.role(d, id)
	}
	return r
}

// IsPredicate reports whether id is used as a predicate in the data.
func (d *Dict) IsPredicate(id ID) bool {
	return d.IsPredicateOrClass(id) && d.role(id)&rolePredicate != 0
}

// IsClass reports whether id is an object of rdf:type in the data.
func (d *Dict) IsClass(id ID) bool {
	return d.IsPredicateOrClass(id) && d.role(id)&roleClass != 0
}

// TypeID returns the ID of rdf:type (always TypeID).
func (d *Dict) TypeID() ID { return TypeID }

// MaxID returns the largest ID handed out.
func (d *Dict) MaxID() ID {
	nv := d.n - d.npc + uint64(d.ovV)
	if nv == 0 {
		return ID(d.npc) + ID(d.ovPC)
	}
	return FirstVertexID + ID(nv) - 1
}

// vertexEnd returns the vertex ID the next new vertex gets.
func (d *Dict) vertexEnd() ID { return FirstVertexID + ID(d.n-d.npc+uint64(d.ovV)) }

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

func (d *Dict) off(i uint64) uint64 { return getUint(d.offs, d.offW, i) }

func (d *Dict) slot(i uint64) uint64 { return getUint(d.table, d.slotW, i) }

// offWidth returns the bytes per offset of an arena of n bytes.
func offWidth(n uint64) uint64 {
	switch {
	case n < 1<<24:
		return 3
	case n < 1<<32:
		return 4
	}
	return 8
}

// slotWidth returns the bytes per hash slot of a dictionary of n terms.
func slotWidth(n uint64) uint64 {
	if n+1 < 1<<24 {
		return 3
	}
	return 4
}

// getUint reads element i of a table of w-byte little-endian integers.
func getUint(b []byte, w, i uint64) uint64 {
	switch w {
	case 3:
		p := b[3*i : 3*i+3]
		return uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return binary.LittleEndian.Uint64(b[8*i:])
}

// putUint writes element i of a table of w-byte little-endian integers.
func putUint(b []byte, w, i, v uint64) {
	switch w {
	case 3:
		b[3*i], b[3*i+1], b[3*i+2] = byte(v), byte(v>>8), byte(v>>16)
	case 4:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
}

func (d *Dict) entry(idx uint64) []byte {
	a, b := d.off(idx), d.off(idx+1)
	if a > b || b > uint64(len(d.arena)) {
		return nil
	}
	return d.arena[a:b]
}

func (d *Dict) prefix(code uint32) (string, bool) {
	if code == 0 {
		return "", true
	}
	return d.prefixes.get(int(code) - 1)
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
	id, ok := d.lookupBase(t)
	if d.ov == nil {
		return id, ok
	}
	return d.ov.lookup(d, t, id, ok)
}

func (d *Dict) lookupBase(t rdf.Term) (ID, bool) {
	kind, code, ok := termCode(t, d.annIdx)
	if !ok || d.slots == 0 {
		return 0, false
	}
	h := hashTerm(kind, code, t.Value)
	i, _ := bits.Mul64(h, d.slots)
	fp, want := d.fingerprints(), fpOf(h)
	for probes := uint64(0); probes < d.slots; probes++ {
		if fp != nil {
			if f := fp[i]; f == 0 {
				return 0, false
			} else if f != want {
				if i++; i == d.slots {
					i = 0
				}
				continue
			}
		}
		e := d.slot(i)
		if e == 0 {
			return 0, false
		}
		idx := uint64(e - 1)
		if idx < d.n && entryMatches(d.entry(idx), kind, code, t.Value, &d.prefixes) {
			return d.idOf(idx), true
		}
		if i++; i == d.slots {
			i = 0
		}
	}
	return 0, false
}

// Term returns the term of id; ok is false for an ID not handed out. The
// strings are copies (they outlive a mapped snapshot).
func (d *Dict) Term(id ID) (rdf.Term, bool) {
	idx, ok := d.indexOf(id)
	if !ok {
		if d.ov != nil {
			return d.ov.term(d, id)
		}
		return rdf.Term{}, false
	}
	kind, code, pfx, sfx, v, ok := parseEntry(d.entry(idx))
	if !ok {
		return rdf.Term{}, false
	}
	t := rdf.Term{Kind: rdf.Kind(kind), Value: string(v)}
	if pfx != 0 || sfx != 0 {
		p, x, ok := affixes(&d.prefixes, pfx, sfx)
		if !ok {
			return rdf.Term{}, false
		}
		t.Value = p + string(v) + x
	}
	if kind == byte(rdf.KindIRI) {
		p, ok := d.prefix(code)
		if !ok {
			return rdf.Term{}, false
		}
		t.Value = p + t.Value
		return t, true
	}
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
// allocating. An unknown ID appends nothing and returns ok = false.
func (d *Dict) AppendNTriples(dst []byte, id ID) ([]byte, bool) {
	idx, ok := d.indexOf(id)
	if !ok {
		if d.ov != nil {
			if t, ok := d.ov.term(d, id); ok {
				return rdf.AppendNTriples(dst, t), true
			}
		}
		return dst, false
	}
	kind, code, pfx, sfx, v, ok := parseEntry(d.entry(idx))
	if !ok {
		return dst, false
	}
	switch rdf.Kind(kind) {
	case rdf.KindIRI:
		p, ok := d.prefix(code)
		if !ok {
			return dst, false
		}
		dst = append(dst, '<')
		dst = rdf.AppendEscapedIRI(dst, p)
		dst = rdf.AppendEscapedIRI(dst, v)
		return append(dst, '>'), true
	case rdf.KindBlank:
		dst = append(dst, "_:"...)
		return append(dst, v...), true
	}
	var a annot
	if int(code) > len(d.annots) {
		return dst, false
	}
	if code != 0 {
		a = d.annots[code-1]
	}
	p, x, ok := affixes(&d.prefixes, pfx, sfx)
	if !ok {
		return dst, false
	}
	dst = append(dst, '"')
	dst = rdf.AppendEscapedString(dst, p)
	dst = rdf.AppendEscapedString(dst, v)
	dst = rdf.AppendEscapedString(dst, x)
	dst = append(dst, '"')
	switch {
	case code == 0:
	case a.lang:
		dst = append(dst, '@')
		dst = append(dst, a.s...)
	default:
		dst = append(dst, "^^<"...)
		dst = rdf.AppendEscapedIRI(dst, a.s)
		dst = append(dst, '>')
	}
	return dst, true
}

// validate checks the dictionary's structure (after mapping a snapshot).
func (d *Dict) validate() error {
	if d.offW != 3 && d.offW != 4 && d.offW != 8 {
		return fmt.Errorf("dictionary offsets of %d bytes", d.offW)
	}
	if uint64(len(d.offs)) != d.offW*(d.n+1) {
		return fmt.Errorf("dictionary offsets: %d bytes for %d terms", len(d.offs), d.n)
	}
	if d.npc > d.n || uint64(len(d.roles)) != d.npc {
		return fmt.Errorf("dictionary: %d predicate/class IDs of %d terms, %d roles", d.npc, d.n, len(d.roles))
	}
	if d.slotW != 3 && d.slotW != 4 {
		return fmt.Errorf("dictionary hash slots of %d bytes", d.slotW)
	}
	if d.slots <= d.n || uint64(len(d.table)) != d.slotW*d.slots || (d.slotW == 3 && d.n+1 >= 1<<24) {
		return fmt.Errorf("dictionary hash table of %d slots for %d terms", d.slots, d.n)
	}
	if end := d.off(d.n); end != uint64(len(d.arena)) {
		return fmt.Errorf("dictionary arena ends at %d, offsets say %d", len(d.arena), end)
	}
	return nil
}
