package graphstore

import (
	"fmt"
	"math/bits"

	"github.com/wukongd/wukongd/rdf"
)

// extendDict returns a new dictionary holding every term of old with the
// same ID, plus terms (none of them in old). Terms with a non-zero role in
// roles (rolePredicate, roleClass) get the next IDs of the low range
// (old.NumPredicatesAndClasses()+1, …), the others the next vertex IDs,
// each in the order given. addRoles adds role bits to IDs of old's low
// range. ids[i] is the ID of terms[i]. The result lives in memory; old is
// not modified and may be a mapped snapshot.
//
// Keeping old IDs is what lets a changed dataset reuse the stores of the
// graphs it did not change: their IDs mean the same terms in the new
// dictionary.
//
// IDs in omit keep their entries (Term decodes them) but are left out of
// the hash table (Lookup does not find them): vertices whose term became a
// predicate or class under a new ID (dict_delta.go).
func extendDict(old *Dict, terms []rdf.Term, roles []byte, addRoles map[ID]byte, omit map[ID]bool) (*Dict, []ID, error) {
	var kpc uint64
	for _, r := range roles {
		if r != 0 {
			kpc++
		}
	}
	k := uint64(len(terms))
	npc, n := old.npc+kpc, old.n+k
	switch {
	case npc > uint64(MaxPredicate):
		return nil, nil, fmt.Errorf("%d predicates and classes: more than the key's %d", npc, MaxPredicate)
	case n-npc > uint64(MaxID-FirstVertexID+1):
		return nil, nil, fmt.Errorf("%d terms: more than the key's vertex field holds", n)
	case n >= 1<<32-1:
		return nil, nil, fmt.Errorf("%d terms: the dictionary holds at most 2^32-2", n)
	}
	for id := range addRoles {
		if !old.IsPredicateOrClass(id) {
			return nil, nil, fmt.Errorf("BUG: role added to ID %d outside the low range", id)
		}
	}

	// Annotations and IRI prefixes: old codes stay, new ones are appended.
	annots := append([]annot(nil), old.annots...)
	annIdx := make(map[string]uint32, len(annots)+4)
	for key, c := range old.annIdx {
		annIdx[key] = c
	}
	prefixes := old.prefixes.all()
	preIdx := make(map[string]uint32, len(prefixes))
	for i, p := range prefixes {
		preIdx[p] = uint32(i + 1)
	}
	appendTerm := func(dst []byte, t rdf.Term) ([]byte, error) {
		switch t.Kind {
		case rdf.KindIRI:
			sp := iriSplit(t.Value)
			var code uint32
			if sp > 0 {
				p := t.Value[:sp]
				c, ok := preIdx[p]
				if !ok {
					prefixes = append(prefixes, p)
					c = uint32(len(prefixes))
					preIdx[p] = c
				}
				code = c
			}
			return appendEntry(dst, byte(rdf.KindIRI), code, t.Value[sp:]), nil
		case rdf.KindBlank:
			return appendEntry(dst, byte(rdf.KindBlank), 0, t.Value), nil
		case rdf.KindLiteral:
			var code uint32
			if t.Lang != "" || (t.Datatype != "" && t.Datatype != rdf.XSDString) {
				isLang, s := t.Lang != "", t.Lang
				if !isLang {
					s = t.Datatype
				}
				key := annotKey(isLang, s)
				c, ok := annIdx[key]
				if !ok {
					annots = append(annots, annot{lang: isLang, s: s})
					c = uint32(len(annots))
					annIdx[key] = c
				}
				code = c
			}
			return appendEntry(dst, byte(rdf.KindLiteral), code, t.Value), nil
		}
		return dst, fmt.Errorf("%v is not an RDF term", t)
	}

	// Arena in index order: old low range, new low range, old vertices,
	// new vertices. Old entries are copied as they are.
	ids := make([]ID, k)
	offs := make([]uint64, n+1)
	pcEnd, vEnd := old.off(old.npc), old.off(old.n)
	arena := make([]byte, 0, vEnd+16*k)
	for i := uint64(0); i < old.npc; i++ {
		offs[i] = old.off(i)
	}
	arena = append(arena, old.arena[:pcEnd]...)
	idx := old.npc
	var err error
	for i, t := range terms {
		if roles[i] == 0 {
			continue
		}
		offs[idx] = uint64(len(arena))
		if arena, err = appendTerm(arena, t); err != nil {
			return nil, nil, err
		}
		ids[i] = ID(idx + 1)
		idx++
	}
	shift := uint64(len(arena)) - pcEnd
	for i := old.npc; i < old.n; i++ {
		offs[i+kpc] = old.off(i) + shift
	}
	arena = append(arena, old.arena[pcEnd:vEnd]...)
	idx = old.n + kpc
	for i, t := range terms {
		if roles[i] != 0 {
			continue
		}
		offs[idx] = uint64(len(arena))
		if arena, err = appendTerm(arena, t); err != nil {
			return nil, nil, err
		}
		ids[i] = FirstVertexID + ID(idx-npc)
		idx++
	}
	offs[n] = uint64(len(arena))

	d := &Dict{arena: arena, n: n, npc: npc, prefixes: stringPrefixes(prefixes), offW: offWidth(uint64(len(arena))), fp: &dictFP{}}
	d.annots, d.annIdx = newDictAnnots(annots)
	d.offs = make([]byte, d.offW*(n+1))
	for i, o := range offs {
		putUint(d.offs, d.offW, uint64(i), o)
	}
	d.roles = make([]byte, npc)
	copy(d.roles, old.roles)
	for id, r := range addRoles {
		d.roles[id-1] |= r
	}
	for i, r := range roles {
		if r != 0 {
			d.roles[ids[i]-1] = r
		}
	}

	// Hash table at load 0.7 over every entry (a bigger table moves every
	// slot, so it is rebuilt rather than copied).
	d.slots = n + n*3/7 + 1
	d.slotW = slotWidth(n)
	d.table = make([]byte, d.slotW*d.slots)
	var buf []byte
	for i := uint64(0); i < n; i++ {
		if omit[d.idOf(i)] {
			continue
		}
		h, b, err := d.entryHash(i, buf)
		if err != nil {
			return nil, nil, fmt.Errorf("extending the dictionary: %w", err)
		}
		buf = b
		s, _ := bits.Mul64(h, d.slots)
		for d.slot(s) != 0 {
			if s++; s == d.slots {
				s = 0
			}
		}
		putUint(d.table, d.slotW, s, i+1)
	}
	if err := d.validate(); err != nil {
		return nil, nil, fmt.Errorf("BUG: extended dictionary: %w", err)
	}
	return d, ids, nil
}
