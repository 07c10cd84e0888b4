package graphstore

import (
	"fmt"
	"slices"
	"sync"

	"github.com/wukongd/wukongd/rdf"
)

// The dictionary grows with the data without renumbering (DESIGN.md §9).
//
// A Dict's tables (arena, offsets, hash table) are laid out once, by the
// builder or by compaction. Terms that writes add later live in a
// dictOverlay shared by every version of the dataset: new predicates and
// classes take the next low IDs (base NumPredicatesAndClasses()+1, …),
// other new terms the next vertex IDs, in the order the changes name them.
// Each version's Dict is a copy of the struct that sees a prefix of the
// overlay (ovPC, ovV, ovRoles, ovAlias), so an older version never sees
// a newer term, and dropping an unpublished version truncates the
// overlay back.
//
// A term that is already a plain vertex (ID V ≥ FirstVertexID) and is
// then used as a predicate or class needs a low ID, because keys hold
// predicates in 23 bits. The rule: it gets the next low ID P like a new
// term, and an alias V → P. From that version on Lookup returns P; the
// writer moves V's edges to P in the same version (a delete and an insert
// of each of V's triples, costing V's degree, not the store's); Term(V)
// still decodes, for the older versions that hold V. Compaction lays out
// the tables with V's entry left out of the hash table, so the alias is
// not needed any more.
type dictOverlay struct {
	mu      sync.RWMutex
	npc0    uint64 // the base's low IDs and vertex count
	nv0     uint64
	pc      []rdf.Term // low IDs npc0+1, …
	pcRoles []byte
	v       []rdf.Term // vertex IDs FirstVertexID+nv0, …
	ids     map[rdf.Term]ID
	roleLog []roleAdd // roles added to low IDs (base or overlay), in order
	roleOf  map[ID][]int
	aliases []alias
	aliasOf map[ID]int
}

type roleAdd struct {
	id   ID
	role byte
}

type alias struct{ from, to ID }

// termKey normalises a term for the overlay's map (what the base's hash
// table treats as one term).
func termKey(t rdf.Term) rdf.Term {
	if t.Kind == rdf.KindLiteral && t.Datatype == rdf.XSDString {
		t.Datatype = ""
	}
	return t
}

// withOverlay returns d with an (empty) overlay attached, so that writes
// can grow it; d itself is not changed.
func (d *Dict) withOverlay() *Dict {
	if d.ov != nil {
		return d
	}
	nd := *d
	nd.ov = &dictOverlay{npc0: d.npc, nv0: d.n - d.npc, ids: map[rdf.Term]ID{}, roleOf: map[ID][]int{}, aliasOf: map[ID]int{}}
	return &nd
}

// tip returns a Dict seeing everything the overlay holds now.
func (d *Dict) tip() *Dict {
	nd := *d
	if o := d.ov; o != nil {
		o.mu.RLock()
		nd.ovPC, nd.ovV, nd.ovRoles, nd.ovAlias = len(o.pc), len(o.v), len(o.roleLog), len(o.aliases)
		o.mu.RUnlock()
	}
	return &nd
}

func (o *dictOverlay) visible(d *Dict, id ID) bool {
	switch {
	case id >= 1 && uint64(id) <= o.npc0+uint64(d.ovPC):
		return true
	case id >= FirstVertexID && uint64(id-FirstVertexID) < o.nv0+uint64(d.ovV):
		return true
	}
	return false
}

func (o *dictOverlay) lookup(d *Dict, t rdf.Term, id ID, ok bool) (ID, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if !ok {
		id, ok = o.ids[termKey(t)]
		if !ok || !o.visible(d, id) {
			return 0, false
		}
	}
	if i, ok := o.aliasOf[id]; ok && i < d.ovAlias {
		return o.aliases[i].to, true
	}
	return id, true
}

func (o *dictOverlay) term(d *Dict, id ID) (rdf.Term, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	switch {
	case id > ID(o.npc0) && uint64(id) <= o.npc0+uint64(d.ovPC):
		return o.pc[uint64(id)-o.npc0-1], true
	case id >= FirstVertexID && uint64(id-FirstVertexID) >= o.nv0 && uint64(id-FirstVertexID) < o.nv0+uint64(d.ovV):
		return o.v[uint64(id-FirstVertexID)-o.nv0], true
	}
	return rdf.Term{}, false
}

func (o *dictOverlay) role(d *Dict, id ID) byte {
	o.mu.RLock()
	defer o.mu.RUnlock()
	var r byte
	if id > ID(o.npc0) && uint64(id) <= o.npc0+uint64(d.ovPC) {
		r = o.pcRoles[uint64(id)-o.npc0-1]
	}
	for _, i := range o.roleOf[id] {
		if i < d.ovRoles {
			r |= o.roleLog[i].role
		}
	}
	return r
}

// dictMark is the size of an overlay, to truncate it back to.
type dictMark struct{ pc, v, roles, aliases int }

func (o *dictOverlay) mark() dictMark {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return dictMark{len(o.pc), len(o.v), len(o.roleLog), len(o.aliases)}
}

// truncate drops everything added after m (a dropped, unpublished
// version: no reader's Dict sees past m).
func (o *dictOverlay) truncate(m dictMark) {
	o.mu.Lock()
	defer o.mu.Unlock()
	// Only the entries naming a dropped ID: a term moved to a low ID
	// keeps its entry (its earlier vertex ID, which add left in place).
	for i, t := range o.pc[m.pc:] {
		if k := termKey(t); o.ids[k] == ID(o.npc0)+ID(m.pc+i)+1 {
			delete(o.ids, k)
		}
	}
	for i, t := range o.v[m.v:] {
		if k := termKey(t); o.ids[k] == FirstVertexID+ID(o.nv0)+ID(m.v+i) {
			delete(o.ids, k)
		}
	}
	o.pc, o.pcRoles, o.v = o.pc[:m.pc], o.pcRoles[:m.pc], o.v[:m.v]
	for i := len(o.roleLog) - 1; i >= m.roles; i-- {
		id := o.roleLog[i].id
		if l := o.roleOf[id]; len(l) > 0 {
			if l = l[:len(l)-1]; len(l) == 0 {
				delete(o.roleOf, id)
			} else {
				o.roleOf[id] = l
			}
		}
	}
	o.roleLog = o.roleLog[:m.roles]
	for _, a := range o.aliases[m.aliases:] {
		delete(o.aliasOf, a.from)
	}
	o.aliases = o.aliases[:m.aliases]
}

// add appends a new term with role (0: a vertex) and returns its ID.
// The caller has checked that t is not known.
func (o *dictOverlay) add(t rdf.Term, role byte) (ID, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var id ID
	if role != 0 {
		if o.npc0+uint64(len(o.pc))+1 > uint64(MaxPredicate) {
			return 0, fmt.Errorf("more than the key's %d predicates and classes", MaxPredicate)
		}
		o.pc = append(o.pc, t)
		o.pcRoles = append(o.pcRoles, role)
		id = ID(o.npc0 + uint64(len(o.pc)))
	} else {
		if o.nv0+uint64(len(o.v)) >= uint64(MaxID-FirstVertexID) {
			return 0, fmt.Errorf("more terms than the key's vertex field holds")
		}
		o.v = append(o.v, t)
		id = FirstVertexID + ID(o.nv0+uint64(len(o.v))-1)
	}
	if _, ok := o.ids[termKey(t)]; !ok {
		o.ids[termKey(t)] = id
	}
	return id, nil
}

// reserve makes room for n more vertex terms (a bulk insertion about to
// intern that many at most), so the overlay's list and map do not grow
// by doubling — each doubling of the map rehashes every term in it.
func (o *dictOverlay) reserve(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.v = slices.Grow(o.v, n)
	if n > len(o.ids) {
		ids := make(map[rdf.Term]ID, len(o.ids)+n)
		for t, id := range o.ids {
			ids[t] = id
		}
		o.ids = ids
	}
}

// addRole records role bits gained by low-range ID id.
func (o *dictOverlay) addRole(id ID, role byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.roleOf[id] = append(o.roleOf[id], len(o.roleLog))
	o.roleLog = append(o.roleLog, roleAdd{id, role})
}

// addAlias records that vertex from is now the low ID to.
func (o *dictOverlay) addAlias(from, to ID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.aliasOf[from] = len(o.aliases)
	o.aliases = append(o.aliases, alias{from, to})
}

// materialize lays out a Dict with every term d sees, with the same IDs
// (compaction): the overlay's terms are appended to the base's tables,
// their roles merged, and aliased vertices left out of the hash table.
func (d *Dict) materialize() (*Dict, error) {
	o := d.ov
	if o == nil {
		return d, nil
	}
	o.mu.RLock()
	var terms []rdf.Term
	var roles []byte
	terms = append(terms, o.pc[:d.ovPC]...)
	roles = append(roles, o.pcRoles[:d.ovPC]...)
	terms = append(terms, o.v[:d.ovV]...)
	roles = append(roles, make([]byte, d.ovV)...)
	addRoles := map[ID]byte{}
	for _, ra := range o.roleLog[:d.ovRoles] {
		if uint64(ra.id) <= o.npc0 {
			addRoles[ra.id] |= ra.role
		} else {
			roles[uint64(ra.id)-o.npc0-1] |= ra.role
		}
	}
	omit := map[ID]bool{}
	for _, a := range o.aliases[:d.ovAlias] {
		omit[a.from] = true
	}
	o.mu.RUnlock()
	base := *d
	base.ov, base.ovPC, base.ovV, base.ovRoles, base.ovAlias = nil, 0, 0, 0, 0
	nd, ids, err := extendDict(&base, terms, roles, addRoles, omit)
	if err != nil {
		return nil, err
	}
	// The overlay's IDs were given in the same order extendDict gives
	// them: check, since every stored edge depends on it.
	for i, t := range terms {
		want := ID(o.npc0) + ID(i) + 1
		if i >= d.ovPC {
			want = FirstVertexID + ID(o.nv0) + ID(i-d.ovPC)
		}
		if ids[i] != want {
			return nil, fmt.Errorf("BUG: compacting the dictionary moved %v from ID %d to %d", t, want, ids[i])
		}
	}
	return nd, nil
}
