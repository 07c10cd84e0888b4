package graphstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

// The write path (DESIGN.md §9): Apply on the newest version of a dataset
// appends the change to the graphs' deltas under a new stamp and returns
// a version reading at that stamp. It costs what the change touches: the
// lists of the changed triples' keys, the index vertices whose membership
// changes, and the statistics of the touched vertices.

// lineage is what the versions of one dataset share: the writer's lock
// and the newest stamp handed out.
type lineage struct {
	mu    sync.Mutex
	stamp uint64
}

// applyUndo is what Discard needs to drop a version: the state of the
// lineage, the dictionary and every delta before it.
type applyUndo struct {
	stamp  uint64
	ov     *dictOverlay
	dict   dictMark
	tables []*tableUndo
	nets   []netSaved
	added  []netAdded // keys whose count the version added (rolled back after nets)
	prev   *applyUndo // the earlier steps (Apply, Amend…) of the same version
}

// netAdded is keys of a count map that had no entry before the version.
type netAdded struct {
	m    map[Key]int64
	keys []Key
}

type tableUndo struct {
	t *rdmakv.DeltaTable
	u rdmakv.DeltaUndo
}

type netSaved struct {
	m   map[Key]int64
	k   Key
	old int64
	had bool
}

func (u *applyUndo) rollback() {
	for ; u != nil; u = u.prev {
		for i := len(u.nets) - 1; i >= 0; i-- {
			n := u.nets[i]
			if n.had {
				n.m[n.k] = n.old
			} else {
				delete(n.m, n.k)
			}
		}
		for _, a := range u.added {
			for _, k := range a.keys {
				delete(a.m, k)
			}
		}
		for _, t := range u.tables {
			t.t.Rollback(&t.u)
		}
		if u.ov != nil {
			u.ov.truncate(u.dict)
		}
	}
}

func (u *applyUndo) first() *applyUndo {
	for u.prev != nil {
		u = u.prev
	}
	return u
}

// errNotNewest: the dataset is not the newest version of its lineage.
var errNotNewest = errors.New("not the newest version")

// writeGraph is one graph during an Apply.
type writeGraph struct {
	name    rdf.Term
	exists  bool
	st      *Store // the store written (shares its base with the old versions); nil: none yet
	fresh   bool   // st was made by this Apply (an empty base)
	touched bool   // the new dataset gets a new version of st
	sd      *statsDelta
	old     *graphRef // the store before (untouched: kept)
}

// applyRun is one Apply or Amend on the newest version.
type applyRun struct {
	d      *Dataset
	dict   *Dict // the tip: sees every term added so far (refresh)
	undo   *applyUndo
	stamp  uint64
	graphs map[rdf.Term]*writeGraph
	order  []*writeGraph
	made   []*Store // fresh stores, closed if the run fails
	tus    map[*rdmakv.DeltaTable]*tableUndo
	ctx    context.Context // the write's: long loops stop when it ends
	// hosted: the stores hold only some shards (ApplyHosted); lists of
	// other shards are left to the nodes that hold them.
	hosted bool
	// fresh: vertex IDs from fresh on were made by this run after its
	// last write, so none of their lists exists yet (0: not known).
	fresh ID
}

// applyDelta applies changes to d's lineage. amend keeps d's version.
func (d *Dataset) applyDelta(ctx context.Context, changes []GraphChange, amend, hosted bool) (*Dataset, error) {
	changes = withTerms(changes)
	return d.applyWith(ctx, amend, hosted, changes, func(r *applyRun) error {
		for ci, c := range changes {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !c.Graph.IsZero() {
				if err := checkGraphName(c.Graph); err != nil {
					return fmt.Errorf("cannot change the dataset: change %d: %w", ci, err)
				}
			}
			if err := r.change(ctx, ci, c); err != nil {
				return err
			}
		}
		return nil
	})
}

// applyWith runs body on a new version of d's lineage (amend: the same
// version as d; hosted: ApplyHosted of changes) and returns the dataset
// it makes; if body fails, nothing of it is left.
func (d *Dataset) applyWith(ctx context.Context, amend, hosted bool, changes []GraphChange, body func(r *applyRun) error) (*Dataset, error) {
	return d.applyWithSkip(ctx, amend, hosted, 0, changes, body)
}

// applyWithSkip is applyWith whose version's stamp is skip stamps past
// the next one (ApplyHostedAt).
func (d *Dataset) applyWithSkip(ctx context.Context, amend, hosted bool, skip uint64, changes []GraphChange, body func(r *applyRun) error) (*Dataset, error) {
	lin := d.lin
	lin.mu.Lock()
	defer lin.mu.Unlock()
	if lin.stamp != d.stamp {
		return nil, errNotNewest
	}
	if hosted {
		if err := checkHosted(d, changes); err != nil {
			return nil, err
		}
	} else {
		for _, g := range append([]*graphRef{d.def}, d.namedRefs()...) {
			if len(g.st.LocalShards()) != g.st.n {
				return nil, fmt.Errorf("cannot change the dataset: %w", ErrAllShardsNeeded)
			}
		}
	}
	dict := d.dict.withOverlay().tip()
	r := &applyRun{d: d, dict: dict, graphs: map[rdf.Term]*writeGraph{}, tus: map[*rdmakv.DeltaTable]*tableUndo{}, hosted: hosted, ctx: ctx}
	r.undo = &applyUndo{stamp: lin.stamp, ov: dict.ov, dict: dict.ov.mark()}
	r.markWritten()
	if amend {
		r.undo.prev = d.undo
	}
	ok := false
	defer func() {
		if !ok {
			r.undo.prev = nil
			// The delta tables written so far (finish hands them to the
			// undo only on success): a failed run's groups must go, or the
			// next version, which gets the same stamp, reads them as its own.
			r.undo.tables = r.undo.tables[:0]
			for _, tu := range r.tus {
				r.undo.tables = append(r.undo.tables, tu)
			}
			r.undo.rollback()
			lin.stamp = r.undo.stamp
			for _, st := range r.made {
				st.Close()
			}
		}
	}()
	lin.stamp += 1 + skip
	r.stamp = lin.stamp
	r.graph(rdf.Term{})
	if err := body(r); err != nil {
		return nil, err
	}
	nd, err := r.finish()
	if err != nil {
		return nil, err
	}
	ok = true
	return nd, nil
}

// graph returns the state of graph name.
func (r *applyRun) graph(name rdf.Term) *writeGraph {
	if g, ok := r.graphs[name]; ok {
		return g
	}
	g := &writeGraph{name: name}
	if name.IsZero() {
		g.exists, g.old = true, r.d.def
	} else if i, ok := r.d.byName[name]; ok {
		g.exists, g.old = true, r.d.named[i].g
	}
	if g.old != nil {
		g.st = g.old.st
	}
	r.graphs[name] = g
	r.order = append(r.order, g)
	return g
}

// empty gives g a fresh empty store.
func (r *applyRun) empty(g *writeGraph) error {
	st, _, _, err := buildGraph(r.d.shards, r.dict, nil, nil)
	if err != nil {
		return err
	}
	r.made = append(r.made, st)
	g.st, g.fresh, g.touched, g.sd = st, true, true, &statsDelta{}
	return nil
}

func (r *applyRun) change(ctx context.Context, ci int, c GraphChange) error {
	g := r.graph(c.Graph)
	if r.hosted && (c.Clear || c.Drop) {
		// The default graph (checkHosted): its store cannot be replaced
		// on some nodes only, so its lists are emptied in its deltas.
		if err := r.clearHosted(ctx, ci, g); err != nil {
			return err
		}
		c.Clear, c.Drop = false, false
	}
	if c.Drop {
		g.st, g.fresh, g.touched, g.sd = nil, false, true, nil
		g.exists = c.Graph.IsZero()
		if g.exists {
			if err := r.empty(g); err != nil {
				return err
			}
		}
	}
	if c.Clear {
		if err := r.empty(g); err != nil {
			return err
		}
		g.exists = true
	}
	if len(c.Delete) > 0 && g.st != nil {
		del := make([]idTriple, 0, len(c.Delete))
		for i, t := range c.Delete {
			if i%4096 == 4095 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if x, ok := r.lookup(t); ok {
				del = append(del, x)
			}
		}
		if err := r.write(ctx, g, sortDistinct(del), false); err != nil {
			return fmt.Errorf("cannot change the dataset: change %d: %w", ci, err)
		}
	}
	if len(c.Insert) > 0 {
		add := make([]idTriple, len(c.Insert))
		aliases := r.dict.ovAlias
		for i, t := range c.Insert {
			if i%4096 == 4095 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			x, err := r.assign(ctx, t)
			if err != nil {
				return fmt.Errorf("cannot change the dataset: change %d, triple %d: %w", ci, i, err)
			}
			add[i] = x
		}
		// A vertex that became a predicate or class during the loop: the
		// triples assigned before hold its old ID.
		r.realias(aliases, func(sub func(ID) ID) {
			for i, x := range add {
				add[i] = idTriple{sub(x.s), sub(x.p), sub(x.o)}
			}
		})
		if g.st == nil {
			if err := r.empty(g); err != nil {
				return err
			}
		}
		g.exists = true
		if err := r.write(ctx, g, sortDistinct(add), true); err != nil {
			return fmt.Errorf("cannot change the dataset: change %d: %w", ci, err)
		}
	}
	if g.exists && !g.name.IsZero() {
		if _, err := r.id(ctx, g.name, 0); err != nil {
			return fmt.Errorf("cannot change the dataset: graph name %v: %w", g.name, err)
		}
	}
	return nil
}

// clearHosted empties g's lists on the shards this dataset holds
// (ApplyHosted of a CLEAR or DROP of the default graph): every triple a
// local list holds is deleted through the delta, as a DELETE DATA of them
// would — the triples of the local subjects (their Out lists), and those
// of remote subjects with a local object (its In lists, which the hosted
// delete decides on). Each node deletes the triples its own shards know,
// so together they empty every shard, the dictionary is left as it is,
// and the cost is the local part of the graph. The index vertices and the
// statistics follow as for any delete.
func (r *applyRun) clearHosted(ctx context.Context, ci int, g *writeGraph) error {
	st := g.st
	if st == nil {
		return nil
	}
	var all []idTriple
	var preds, verts, vals []ID
	n := 0
	tick := func() error {
		if n++; n%4096 == 0 {
			return ctx.Err()
		}
		return nil
	}
	for _, o := range st.LocalShards() {
		preds = st.tipList(preds[:0], o, MakeKey(IndexVertex, AllPredicates, Out))
		for _, p := range preds {
			verts = st.tipList(verts[:0], o, MakeKey(IndexVertex, p, Out))
			for _, s := range verts {
				if err := tick(); err != nil {
					return err
				}
				vals = st.tipList(vals[:0], o, MakeKey(s, p, Out))
				for _, x := range vals {
					all = append(all, idTriple{s, p, x})
				}
			}
		}
		preds = st.tipList(preds[:0], o, MakeKey(IndexVertex, AllPredicates, In))
		for _, p := range preds {
			if p == TypeID {
				continue // a type triple lives wholly on its subject's shard
			}
			verts = st.tipList(verts[:0], o, MakeKey(IndexVertex, p, In))
			for _, x := range verts {
				if err := tick(); err != nil {
					return err
				}
				vals = st.tipList(vals[:0], o, MakeKey(x, p, In))
				for _, s := range vals {
					if st.tables[st.Owner(s)] == nil {
						all = append(all, idTriple{s, p, x})
					}
				}
			}
		}
	}
	if err := r.write(ctx, g, sortDistinct(all), false); err != nil {
		return fmt.Errorf("cannot change the dataset: change %d (clearing the default graph): %w", ci, err)
	}
	return nil
}

// refresh makes r.dict see everything the overlay holds (only this run
// changes it).
func (r *applyRun) refresh() {
	o := r.dict.ov
	r.dict.ovPC, r.dict.ovV, r.dict.ovRoles, r.dict.ovAlias = len(o.pc), len(o.v), len(o.roleLog), len(o.aliases)
}

// lookup returns the IDs of a deleted triple (ok false: a term is unknown,
// so the triple is in no graph).
func (r *applyRun) lookup(t rdf.Triple) (idTriple, bool) {
	var x [3]ID
	for i, term := range [3]rdf.Term{t.S, t.P, t.O} {
		id, ok := r.dict.Lookup(term)
		if !ok {
			return idTriple{}, false
		}
		x[i] = id
	}
	return idTriple{x[0], x[1], x[2]}, true
}

// assign returns the IDs of an inserted triple, adding its new terms.
func (r *applyRun) assign(ctx context.Context, t rdf.Triple) (idTriple, error) {
	if t.P.Kind != rdf.KindIRI {
		return idTriple{}, fmt.Errorf("the predicate %v is not an IRI", t.P)
	}
	s, err := r.id(ctx, t.S, 0)
	if err != nil {
		return idTriple{}, err
	}
	p, err := r.id(ctx, t.P, rolePredicate)
	if err != nil {
		return idTriple{}, err
	}
	var orole byte
	if t.P.Value == rdf.RDFType {
		orole = roleClass
	}
	o, err := r.id(ctx, t.O, orole)
	if err != nil {
		return idTriple{}, err
	}
	return idTriple{s, p, o}, nil
}

// id returns the ID of term t with role (0: a vertex), adding the term or
// the role. A plain vertex that needs a role is moved to a new low ID
// (dict_delta.go): its edges in every graph move with it.
func (r *applyRun) id(ctx context.Context, t rdf.Term, role byte) (ID, error) {
	switch t.Kind {
	case rdf.KindIRI, rdf.KindBlank, rdf.KindLiteral:
	default:
		return 0, fmt.Errorf("%v is not an RDF term", t)
	}
	id, ok := r.dict.Lookup(t)
	return r.idFound(ctx, t, role, id, ok)
}

// idNew is id for a term the base dictionary does not hold (the caller
// looked it up there already): only the overlay is searched.
func (r *applyRun) idNew(ctx context.Context, t rdf.Term, role byte) (ID, error) {
	id, ok := r.dict.ov.lookup(r.dict, t, 0, false)
	return r.idFound(ctx, t, role, id, ok)
}

// idFound is id once t is looked up (id, ok: what the lookup found).
func (r *applyRun) idFound(ctx context.Context, t rdf.Term, role byte, id ID, ok bool) (ID, error) {
	ov := r.dict.ov
	tip := r.dict
	if !ok {
		id, err := ov.add(t, role)
		r.refresh()
		return id, err
	}
	if role == 0 {
		return id, nil
	}
	if tip.IsPredicateOrClass(id) {
		if tip.role(id)&role != role {
			ov.addRole(id, role)
			r.refresh()
		}
		return id, nil
	}
	// A vertex becomes a predicate or class.
	if r.hosted {
		// Its triples would move to the shards of its new ID, which
		// another node may hold.
		return 0, fmt.Errorf("%w: %v is used as a subject or object and now as a predicate or class (its triples would move between shards)", ErrAllShardsNeeded, t)
	}
	p, err := ov.add(t, role)
	if err != nil {
		return 0, err
	}
	ov.addAlias(id, p)
	r.refresh()
	if err := r.moveVertex(ctx, id, p); err != nil {
		return 0, fmt.Errorf("cannot move %v from ID %d to %d: %w", t, id, p, err)
	}
	return p, nil
}

// realias calls remap, if the overlay has aliases past the first from
// (vertices moved to a low ID since), with a function mapping each moved
// vertex to its new ID.
func (r *applyRun) realias(from int, remap func(sub func(ID) ID)) {
	if r.dict.ovAlias <= from {
		return
	}
	ov := r.dict.ov
	ov.mu.RLock()
	moved := make(map[ID]ID, r.dict.ovAlias-from)
	for _, a := range ov.aliases[from:r.dict.ovAlias] {
		moved[a.from] = a.to
	}
	ov.mu.RUnlock()
	remap(func(id ID) ID {
		if to, ok := moved[id]; ok {
			return to
		}
		return id
	})
}

// moveVertex replaces vertex from by to in every graph: its triples are
// deleted and inserted again with the new ID.
func (r *applyRun) moveVertex(ctx context.Context, from, to ID) error {
	var graphs []*writeGraph
	r.graph(rdf.Term{})
	for _, n := range r.d.named {
		r.graph(n.name)
	}
	graphs = append(graphs, r.order...)
	for _, g := range graphs {
		if g.st == nil {
			continue
		}
		var old []idTriple
		sub := func(x ID) ID {
			if x == from {
				return to
			}
			return x
		}
		for _, d := range []Dir{Out, In} {
			o := g.st.Owner(from)
			preds := g.st.tipList(nil, o, MakeKey(from, AllPredicates, d))
			for _, p := range preds {
				for _, x := range g.st.tipList(nil, o, MakeKey(from, p, d)) {
					if d == Out {
						old = append(old, idTriple{from, p, x})
					} else if x != from {
						old = append(old, idTriple{x, p, from})
					}
				}
			}
		}
		if len(old) == 0 {
			continue
		}
		moved := make([]idTriple, len(old))
		for i, t := range old {
			moved[i] = idTriple{sub(t.s), t.p, sub(t.o)}
		}
		if err := r.write(ctx, g, sortDistinct(old), false); err != nil {
			return err
		}
		if err := r.write(ctx, g, sortDistinct(moved), true); err != nil {
			return err
		}
	}
	return nil
}

// finish makes the new dataset: touched graphs get a version of their
// store at the run's stamp, the others keep theirs.
func (r *applyRun) finish() (*Dataset, error) {
	d := r.d
	dict := r.dict.tip()
	var held []*graphRef
	release := func() {
		for _, g := range held {
			g.release()
		}
	}
	dref := d.dref.retain()
	storeOf := func(g *writeGraph) (*graphRef, error) {
		if !g.touched {
			ref := g.old.retain()
			held = append(held, ref)
			return ref, nil
		}
		stats := g.sd.apply(g.st.stats, uint64(dict.Len()), g.st.n)
		st, err := g.st.version(r.stamp, stats, dict)
		if err != nil {
			return nil, err
		}
		if g.fresh {
			// The fresh store's version holds its base now.
			g.st.Close()
			r.made = slices.DeleteFunc(r.made, func(x *Store) bool { return x == g.st })
		}
		ref := newGraphRef(st, dref)
		held = append(held, ref)
		return ref, nil
	}
	fail := func(err error) (*Dataset, error) {
		release()
		dref.release()
		return nil, err
	}
	def, err := storeOf(r.graphs[rdf.Term{}])
	if err != nil {
		return fail(err)
	}
	var named []namedGraph
	for _, n := range d.named {
		if _, ok := r.graphs[n.name]; !ok {
			held = append(held, n.g.retain())
			id, _ := dict.Lookup(n.name) // moved if the name became a predicate or class
			named = append(named, namedGraph{name: n.name, id: id, g: n.g})
		}
	}
	for _, g := range r.order {
		if g.name.IsZero() || !g.exists {
			continue
		}
		id, ok := dict.Lookup(g.name)
		if !ok {
			return fail(fmt.Errorf("BUG: graph name %v has no ID", g.name))
		}
		ref, err := storeOf(g)
		if err != nil {
			return fail(err)
		}
		named = append(named, namedGraph{name: g.name, id: id, g: ref})
	}
	for _, st := range r.made {
		st.Close() // fresh stores the run replaced or dropped again
	}
	r.made = nil
	for _, tu := range r.tus {
		r.undo.tables = append(r.undo.tables, tu)
	}
	nd := newDataset(dict, dref, d.shards, def, named)
	nd.lin, nd.stamp, nd.undo = d.lin, r.stamp, r.undo
	if d.inferred != nil {
		// The inferred layer stays: right if the default graph is
		// untouched, else until the reasoner's ApplyInferred brings it up
		// to date (the service does both in one write).
		nd.reasoning, nd.inferred = d.reasoning, d.inferred.retain()
	}
	return nd, nil
}

// tipList appends the newest list of key k of local shard o (everything
// the writer appended, published or not).
func (s *Store) tipList(dst []ID, o int, k Key) []ID {
	start := len(dst)
	if s.sh.inBase(k) {
		dst = asIDs(s.tables[o].AppendValues(asU64(dst), uint64(k)))
	}
	if w := s.sh.w; w != nil && w.deltas[o] != nil {
		if recs := w.deltas[o].Records(uint64(k)); len(recs) > 0 {
			if len(dst) == start {
				// No base list (a key the write made): the list is the
				// IDs toggled an odd number of times, sorted in place.
				tg := rdmakv.AppendVisible(asU64(dst), recs, 1<<62)
				return asIDs(tg[:start+len(rdmakv.OddOnes(tg[start:]))])
			}
			dst = mergeToggles(dst, start, rdmakv.AppendVisible(nil, recs, 1<<62))
		}
	}
	return dst
}

// tipHas reports whether v is in key k's newest list of local shard o
// (tipList's answer, without making the list).
func (s *Store) tipHas(o int, k Key, v ID) bool {
	has := s.sh.inBase(k) && s.tables[o].Contains(uint64(k), uint64(v))
	if w := s.sh.w; w != nil && w.deltas[o] != nil {
		if recs := w.deltas[o].Records(uint64(k)); len(recs) > 0 && rdmakv.Toggled(recs, uint64(v), 1<<62) {
			has = !has
		}
	}
	return has
}

// tipCount returns the newest length of key k's list of local shard o.
func (s *Store) tipCount(o int, k Key) int64 {
	var n int
	if s.sh.inBase(k) {
		n, _ = s.tables[o].Lookup(uint64(k))
	}
	if w := s.sh.w; w != nil {
		return int64(n) + w.net[o][k]
	}
	return int64(n)
}

// statsDelta accumulates the change of a store's statistics.
type statsDelta struct {
	triples, subjects, objects, outPreds, inPreds, untyped int64
	preds                                                  map[ID]*[3]int64 // triples, subjects, objects
	classes                                                map[ID]int64
	cp                                                     map[cpKey]*[2]int64
	shards                                                 map[int]int64
	pout, types, pin                                       []ID // vertex's lists, reused
}

func (sd *statsDelta) pred(p ID) *[3]int64 {
	if sd.preds == nil {
		sd.preds = map[ID]*[3]int64{}
	}
	x := sd.preds[p]
	if x == nil {
		x = new([3]int64)
		sd.preds[p] = x
	}
	return x
}

func (sd *statsDelta) classPred(c, p ID, d Dir) *[2]int64 {
	if sd.cp == nil {
		sd.cp = map[cpKey]*[2]int64{}
	}
	k := cpKey{c, p, d}
	x := sd.cp[k]
	if x == nil {
		x = new([2]int64)
		sd.cp[k] = x
	}
	return x
}

// vertex adds sign times vertex v's share of the statistics (what
// buildShard counts for it).
func (sd *statsDelta) vertex(st *Store, v ID, sign int64) {
	o := st.Owner(v)
	if st.tables[o] == nil {
		return // another node's vertex (ApplyHosted): its share is counted there
	}
	sd.pout = st.tipList(sd.pout[:0], o, MakeKey(v, AllPredicates, Out))
	pout := sd.pout
	var types []ID
	if len(pout) > 0 {
		sd.subjects += sign
		sd.outPreds += sign * int64(len(pout))
		if _, ok := slices.BinarySearch(pout, TypeID); ok {
			sd.types = st.tipList(sd.types[:0], o, MakeKey(v, TypeID, Out))
			types = sd.types
		} else {
			sd.untyped += sign
		}
		for _, q := range pout {
			n := st.tipCount(o, MakeKey(v, q, Out))
			x := sd.pred(q)
			x[0] += sign * n
			x[1] += sign
			sd.triples += sign * n
			if sd.shards == nil {
				sd.shards = map[int]int64{}
			}
			sd.shards[o] += sign * n
			if q != TypeID {
				for _, c := range types {
					y := sd.classPred(c, q, Out)
					y[0] += sign
					y[1] += sign * n
				}
			}
		}
		for _, c := range types {
			if sd.classes == nil {
				sd.classes = map[ID]int64{}
			}
			sd.classes[c] += sign
		}
	}
	sd.pin = st.tipList(sd.pin[:0], o, MakeKey(v, AllPredicates, In))
	pin := sd.pin
	if len(pin) > 0 {
		sd.objects += sign
		sd.inPreds += sign * int64(len(pin))
		for _, q := range pin {
			sd.pred(q)[2] += sign
			if len(types) > 0 {
				n := st.tipCount(o, MakeKey(v, q, In))
				for _, c := range types {
					y := sd.classPred(c, q, In)
					y[0] += sign
					y[1] += sign * n
				}
			}
		}
	}
}

func addU(x uint64, d int64) uint64 { return uint64(int64(x) + d) }

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[ID]V) []ID {
	r := make([]ID, 0, len(m))
	for k := range m {
		r = append(r, k)
	}
	slices.Sort(r)
	return r
}

// apply returns old's statistics with the change (old is not modified).
// Entries that drop to zero are removed, so the result equals what a
// build of the same triples collects.
func (sd *statsDelta) apply(old *Stats, terms uint64, shards int) *Stats {
	st := &Stats{Triples: addU(old.Triples, sd.triples), Terms: terms,
		Subjects: addU(old.Subjects, sd.subjects), Objects: addU(old.Objects, sd.objects),
		OutPredicates: addU(old.OutPredicates, sd.outPreds), InPredicates: addU(old.InPredicates, sd.inPreds),
		Untyped: addU(old.Untyped, sd.untyped)}
	st.ShardTriples = make([]uint64, shards)
	copy(st.ShardTriples, old.ShardTriples)
	for o, n := range sd.shards {
		st.ShardTriples[o] = addU(st.ShardTriples[o], n)
	}
	// Copies of the sorted slices, touched entries updated in place or
	// inserted, zeros dropped: the cost is the slices' copy, not a map.
	st.Predicates = slices.Clone(old.Predicates)
	for _, p := range sortedKeys(sd.preds) {
		x := sd.preds[p]
		i, ok := slices.BinarySearchFunc(st.Predicates, p, func(a PredicateStats, p ID) int { return cmp.Compare(a.Pred, p) })
		if !ok {
			st.Predicates = slices.Insert(st.Predicates, i, PredicateStats{Pred: p})
		}
		ps := &st.Predicates[i]
		ps.Triples, ps.Subjects, ps.Objects = addU(ps.Triples, x[0]), addU(ps.Subjects, x[1]), addU(ps.Objects, x[2])
	}
	st.Classes = slices.Clone(old.Classes)
	for _, c := range sortedKeys(sd.classes) {
		i, ok := slices.BinarySearchFunc(st.Classes, c, func(a ClassStats, c ID) int { return cmp.Compare(a.Class, c) })
		if !ok {
			st.Classes = slices.Insert(st.Classes, i, ClassStats{Class: c})
		}
		st.Classes[i].Instances = addU(st.Classes[i].Instances, sd.classes[c])
	}
	st.Classes = slices.DeleteFunc(st.Classes, func(c ClassStats) bool { return c.Instances == 0 })
	if i, ok := slices.BinarySearchFunc(st.Predicates, TypeID, func(a PredicateStats, p ID) int { return cmp.Compare(a.Pred, p) }); ok {
		st.Predicates[i].Objects = uint64(len(st.Classes))
	}
	st.Predicates = slices.DeleteFunc(st.Predicates, func(p PredicateStats) bool { return p.Triples == 0 && p.Subjects == 0 && p.Objects == 0 })
	st.ClassPredicates = slices.Clone(old.ClassPredicates)
	cpCmp := func(a ClassPredicateStats, k cpKey) int {
		if c := cmp.Compare(a.Class, k.c); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Pred, k.p); c != 0 {
			return c
		}
		return cmp.Compare(a.Dir, k.d)
	}
	keys := make([]cpKey, 0, len(sd.cp))
	for k := range sd.cp {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b cpKey) int {
		return cpCmp(ClassPredicateStats{Class: a.c, Pred: a.p, Dir: a.d}, b)
	})
	for _, k := range keys {
		x := sd.cp[k]
		i, ok := slices.BinarySearchFunc(st.ClassPredicates, k, cpCmp)
		if !ok {
			st.ClassPredicates = slices.Insert(st.ClassPredicates, i, ClassPredicateStats{Class: k.c, Pred: k.p, Dir: k.d})
		}
		c := &st.ClassPredicates[i]
		c.Vertices, c.Edges = addU(c.Vertices, x[0]), addU(c.Edges, x[1])
	}
	st.ClassPredicates = slices.DeleteFunc(st.ClassPredicates, func(x ClassPredicateStats) bool { return x.Vertices == 0 && x.Edges == 0 })
	return st
}
