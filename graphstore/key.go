package graphstore

import (
	"encoding/binary"
	"fmt"
)

// ID is the integer name of an RDF term. IDs of predicates and classes
// (objects of rdf:type) lie in [1, FirstVertexID); IDs of all other terms in
// [FirstVertexID, MaxID]. 0 is never a term: it is the index vertex in the
// vertex field of a key and "all predicates" in the predicate field.
type ID uint64

// Dir is the direction of an edge list: Out lists objects of a subject, In
// lists subjects of an object.
type Dir uint8

const (
	In  Dir = 0
	Out Dir = 1
)

// String returns "in" or "out".
func (d Dir) String() string {
	if d == Out {
		return "out"
	}
	return "in"
}

// Reverse returns the other direction.
func (d Dir) Reverse() Dir { return d ^ 1 }

// Key is the 64-bit key of an edge list in the KV: (vertex, predicate,
// direction). Bit layout, most significant first:
//
//	63                      24 23                     1  0
//	+-------------------------+------------------------+---+
//	|  vertex (40 bits)       |  predicate (23 bits)   |dir|
//	+-------------------------+------------------------+---+
//
//	vertex    bits 63..24: an ID below 2^40; 0 = the index vertex
//	predicate bits 23..1:  a predicate or class ID below 2^23 (8,388,607
//	                       predicates+classes, Wukong has 17 bits);
//	                       0 = AllPredicates, 1 = rdf:type (TypeID)
//	dir       bit 0:       1 = Out, 0 = In
//
// Keys sort by vertex, then predicate, then direction.
type Key uint64

// Field widths and limits.
const (
	DirBits    = 1
	PredBits   = 23
	VertexBits = 40

	predShift   = DirBits
	vertexShift = DirBits + PredBits
	predMask    = 1<<PredBits - 1

	// IndexVertex in the vertex field of a key names the shard's index:
	// (IndexVertex, p, Out) the local subjects having p, (IndexVertex, p,
	// In) the local objects of p, (IndexVertex, class, In) the local
	// instances of class.
	IndexVertex ID = 0
	// AllPredicates in the predicate field of a key names the predicates
	// of the vertex: (v, AllPredicates, d) lists the predicates of v's
	// d-edges (rdf:type included on Out); (IndexVertex, AllPredicates, d)
	// lists every predicate with a local d-edge.
	AllPredicates ID = 0
	// TypeID is the fixed ID of rdf:type.
	TypeID ID = 1
	// MaxPredicate is the largest predicate or class ID.
	MaxPredicate ID = predMask
	// FirstVertexID is the first ID of a term that is neither a
	// predicate nor a class.
	FirstVertexID ID = 1 << PredBits
	// MaxID is the largest ID that fits the vertex field.
	MaxID ID = 1<<VertexBits - 1
)

// MakeKey packs (v, p, d). It panics if v or p does not fit its field: IDs
// come from the dictionary, which never hands out such IDs.
func MakeKey(v, p ID, d Dir) Key {
	if v > MaxID || p > MaxPredicate || d > Out {
		panic(fmt.Sprintf("BUG: key (%d, %d, %d) out of range", v, p, d))
	}
	return Key(uint64(v)<<vertexShift | uint64(p)<<predShift | uint64(d))
}

// Vertex returns the vertex field.
func (k Key) Vertex() ID { return ID(uint64(k) >> vertexShift) }

// Pred returns the predicate field.
func (k Key) Pred() ID { return ID(uint64(k) >> predShift & predMask) }

// Dir returns the direction bit.
func (k Key) Dir() Dir { return Dir(k & 1) }

// String returns "(v,p,dir)".
func (k Key) String() string { return fmt.Sprintf("(%d,%d,%s)", k.Vertex(), k.Pred(), k.Dir()) }

// AppendKey appends k as 8 big-endian bytes (so byte order is key order).
func AppendKey(dst []byte, k Key) []byte { return binary.BigEndian.AppendUint64(dst, uint64(k)) }

// DecodeKey decodes 8 bytes written by AppendKey.
func DecodeKey(b []byte) (Key, error) {
	if len(b) < 8 {
		return 0, fmt.Errorf("key of %d bytes, want 8", len(b))
	}
	return Key(binary.BigEndian.Uint64(b)), nil
}
