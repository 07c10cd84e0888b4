package graphstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

// Reasoning: a dataset whose default graph was materialized (package
// reason) keeps, beside the default graph's store, an inferred layer: a
// store (same shards, same layout, same dictionary) of the triples of the
// default graph that are inferred, not explicit. The default graph's
// store holds the whole closure, explicit and inferred, so queries read
// it exactly as a graph without reasoning (same bytes per triple, same
// lookups); a query for explicit triples only reads the default graph
// minus the layer (exec). The layer is the smaller of the two ways to
// tell them apart (LUBM: ~0.7 inferred per explicit triple).

// IDTriple is a triple of IDs of a dataset's dictionary.
type IDTriple struct{ S, P, O ID }

// Reasoning returns the profile the default graph was materialized with
// ("" when it was not).
func (d *Dataset) Reasoning() string { return d.reasoning }

// Inferred returns the store of the default graph's inferred triples
// (nil when the dataset has no reasoning). Every triple in it is also in
// Default.
func (d *Dataset) Inferred() *Store {
	if d.inferred == nil {
		return nil
	}
	return d.inferred.st
}

// InferredTriples returns the number of inferred triples of the default
// graph (0 without reasoning).
func (d *Dataset) InferredTriples() uint64 {
	if d.inferred == nil {
		return 0
	}
	return d.inferred.st.stats.Triples
}

// ExplicitTriples returns Triples less the inferred ones.
func (d *Dataset) ExplicitTriples() uint64 { return d.Triples() - d.InferredTriples() }

// IsLiteral reports whether id is a literal's ID.
func (d *Dict) IsLiteral(id ID) bool {
	idx, ok := d.indexOf(id)
	if !ok {
		if d.ov != nil {
			t, ok := d.ov.term(d, id)
			return ok && t.Kind == rdf.KindLiteral
		}
		return false
	}
	e := d.entry(idx)
	if len(e) == 0 {
		return false
	}
	switch e[0] {
	case byte(rdf.KindLiteral), kindLitSuffix, kindLitAffix:
		return true
	}
	return false
}

// DeclareRoles makes every term of classes a class (as if it were the
// object of an rdf:type triple) and every term of predicates a predicate,
// whether or not the data uses them so: a reasoner about to derive
// triples with them needs their IDs in the low range. Safe for concurrent
// use with Add*.
func (db *DatasetBuilder) DeclareRoles(classes, predicates []rdf.Term) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.built {
		return errors.New("cannot declare roles: the dataset was already built")
	}
	for _, set := range []struct {
		terms []rdf.Term
		role  byte
	}{{classes, roleClass}, {predicates, rolePredicate}} {
		for _, t := range set.terms {
			if _, err := db.b.internTerm(t, set.role); err != nil {
				return fmt.Errorf("cannot declare %v: %w", t, err)
			}
		}
	}
	return nil
}

// AddInferredTriples interns a batch of triples the reasoner (profile
// reasoning) inferred for the default graph and adds each both to the
// default graph and to its inferred layer, which WriteSnapshot writes as
// the snapshot's inferred layer (Dataset.Inferred once opened). None may
// be an explicit triple of the default graph (the layer is the closure
// less those); repeats are dropped as in any graph. Build refuses a
// builder with a layer: out of core only. Safe for concurrent use.
func (db *DatasetBuilder) AddInferredTriples(reasoning string, batch []rdf.Triple) error {
	if len(batch) == 0 {
		return nil
	}
	if reasoning == "" {
		return errors.New("cannot add inferred triples: no reasoning profile")
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.built {
		return errors.New("cannot add inferred triples: the dataset was already built")
	}
	db.namedMu.Lock()
	switch {
	case db.layer == nil:
		db.layer, db.reasoning = &graphChunks{}, reasoning
	case db.reasoning != reasoning:
		db.namedMu.Unlock()
		return fmt.Errorf("cannot add inferred triples of %s to a layer of %s", reasoning, db.reasoning)
	}
	layer := db.layer
	db.namedMu.Unlock()
	tns, err := db.b.internTriples(len(batch), func(views []termView) { viewTriples(views, batch) })
	if err != nil {
		return fmt.Errorf("cannot add inferred triples: %w", err)
	}
	cp := slices.Clone(tns) // each graph's chunks are freed on their own
	db.def.add(tns, len(batch))
	if err := db.maybeSpill(db.def, len(tns)); err != nil {
		return err
	}
	layer.add(cp, len(batch))
	return db.maybeSpill(layer, len(cp))
}

// CheckInferred returns an error if t cannot be stored in a graph over
// d: its predicate must be a predicate, the object of rdf:type a class,
// the subject not a literal, every ID known.
func (d *Dict) CheckInferred(t IDTriple) error {
	switch {
	case t.S == 0 || t.S > d.MaxID() || t.O == 0 || t.O > d.MaxID():
		return fmt.Errorf("triple (%d %d %d) has an unknown ID", t.S, t.P, t.O)
	case !d.IsPredicate(t.P):
		return fmt.Errorf("triple (%d %d %d): %d is not a predicate of the dictionary", t.S, t.P, t.O, t.P)
	case t.P == TypeID && !d.IsClass(t.O):
		return fmt.Errorf("triple (%d %d %d): %d is not a class of the dictionary", t.S, t.P, t.O, t.O)
	case d.IsLiteral(t.S):
		return fmt.Errorf("triple (%d %d %d): the subject is a literal", t.S, t.P, t.O)
	}
	return nil
}

// WithInferred returns a dataset whose default graph is d's plus the
// triples inferred (each checked with Dict.CheckInferred; those already
// in d's default graph are not inferred), with them as its inferred
// layer and reasoning as its profile. d's inferred layer, if any, is
// replaced: inferred is the whole set. Named graphs are shared.
func (d *Dataset) WithInferred(ctx context.Context, reasoning string, inferred []IDTriple) (*Dataset, error) {
	for _, g := range append([]*graphRef{d.def}, d.namedRefs()...) {
		if len(g.st.LocalShards()) != g.st.n {
			return nil, fmt.Errorf("cannot add inferred triples: %w", ErrAllShardsNeeded)
		}
	}
	base, err := scanIDs(ctx, d.def.st)
	if err != nil {
		return nil, fmt.Errorf("cannot add inferred triples: %w", err)
	}
	if d.inferred != nil { // the explicit triples only
		old, err := scanIDs(ctx, d.inferred.st)
		if err != nil {
			return nil, fmt.Errorf("cannot add inferred triples: %w", err)
		}
		base = minusSorted(base, old)
	}
	inf := make([]idTriple, 0, len(inferred))
	for _, t := range inferred {
		if err := d.dict.CheckInferred(t); err != nil {
			return nil, fmt.Errorf("cannot add inferred triples: %w", err)
		}
		inf = append(inf, idTriple{t.S, t.P, t.O})
	}
	inf = minusSorted(sortDistinct(inf), base)
	return d.withLayers(ctx, reasoning, unionSorted(base, inf), inf)
}

// withLayers returns a dataset over d's dictionary and named graphs with
// the default graph closure and the inferred layer inf (both sorted,
// distinct; inf ⊆ closure). reasoning "" drops the layer.
func (d *Dataset) withLayers(ctx context.Context, reasoning string, closure, inf []idTriple) (*Dataset, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	build := func(ts []idTriple) (*graphRef, error) {
		outs, ins := partitionIDs(ts, d.shards)
		st, _, _, err := buildGraph(d.shards, d.dict, outs, ins)
		if err != nil {
			return nil, fmt.Errorf("cannot add inferred triples: %w", err)
		}
		return newGraphRef(st, d.dref), nil
	}
	def, err := build(closure)
	if err != nil {
		return nil, err
	}
	var layer *graphRef
	if reasoning != "" {
		if layer, err = build(inf); err != nil {
			def.release()
			return nil, err
		}
	}
	named := make([]namedGraph, len(d.named))
	for i, n := range d.named {
		named[i] = namedGraph{name: n.name, id: n.id, g: n.g.retain()}
	}
	nd := newDataset(d.dict, d.dref.retain(), d.shards, def, named)
	nd.reasoning, nd.inferred = reasoning, layer
	nd.version = d.version // part of the change that made d (Amend's rule)
	return nd, nil
}

// InferredChange is a change to a materialized default graph: explicit
// triples deleted and inserted, and inferred triples retracted and added
// (a reasoner's maintenance computes them). A triple may move between
// the two kinds (an explicit triple deleted that still follows becomes
// inferred: in Delete and in AddInferred).
type InferredChange struct {
	Delete, Insert               []IDTriple // explicit
	RetractInferred, AddInferred []IDTriple
	// ReplaceInferred makes AddInferred the whole inferred layer (after
	// materializing again).
	ReplaceInferred bool
}

// ApplyInferred returns a dataset with ch applied to the default graph and
// its inferred layer. The dataset must have reasoning. IDs must be of d's
// dictionary (new terms go through Apply first). The explicit triples are
// the default graph's less the layer's, less Delete, plus Insert: so d
// may be the result of an Apply that already deleted and inserted them
// (Apply keeps the old layer for this step).
func (d *Dataset) ApplyInferred(ctx context.Context, ch InferredChange) (*Dataset, error) {
	if d.inferred == nil {
		return nil, errors.New("cannot change inferred triples: the dataset has no reasoning")
	}
	conv := func(ts []IDTriple, check bool) ([]idTriple, error) {
		r := make([]idTriple, 0, len(ts))
		for _, t := range ts {
			if check {
				if err := d.dict.CheckInferred(t); err != nil {
					return nil, fmt.Errorf("cannot change inferred triples: %w", err)
				}
			}
			r = append(r, idTriple{t.S, t.P, t.O})
		}
		return sortDistinct(r), nil
	}
	del, err := conv(ch.Delete, false)
	if err != nil {
		return nil, err
	}
	ins, err := conv(ch.Insert, true)
	if err != nil {
		return nil, err
	}
	retract, err := conv(ch.RetractInferred, false)
	if err != nil {
		return nil, err
	}
	add, err := conv(ch.AddInferred, true)
	if err != nil {
		return nil, err
	}
	closure, err := scanIDs(ctx, d.def.st)
	if err != nil {
		return nil, err
	}
	inf, err := scanIDs(ctx, d.inferred.st)
	if err != nil {
		return nil, err
	}
	explicit := minusSorted(slices.Clone(closure), inf)
	explicit = unionSorted(minusSorted(explicit, del), ins)
	if ch.ReplaceInferred {
		inf = add
	} else {
		inf = unionSorted(minusSorted(inf, retract), add)
	}
	inf = minusSorted(inf, explicit)
	return d.withLayers(ctx, d.reasoning, unionSorted(explicit, inf), inf)
}

// WithRoles returns a copy of d (every graph, rebuilt with a new
// dictionary: IDs change) in which the terms of classes are classes and
// those of predicates predicates (DatasetBuilder.DeclareRoles). d must
// have no reasoning.
func (d *Dataset) WithRoles(ctx context.Context, classes, predicates []rdf.Term) (*Dataset, error) {
	if d.inferred != nil {
		return nil, errors.New("cannot rebuild a dataset with reasoning")
	}
	db, err := NewDatasetBuilder(d.shards)
	if err != nil {
		return nil, err
	}
	if err := db.DeclareRoles(classes, predicates); err != nil {
		return nil, err
	}
	const batchSize = 4096
	batch := make([]rdf.Triple, 0, batchSize)
	copyGraph := func(name rdf.Term, st *Store) error {
		if err := db.AddGraph(name); err != nil {
			return err
		}
		err := st.EachTriple(ctx, func(s, p, o ID) error {
			var t rdf.Triple
			var ok [3]bool
			t.S, ok[0] = d.dict.Term(s)
			t.P, ok[1] = d.dict.Term(p)
			t.O, ok[2] = d.dict.Term(o)
			if !ok[0] || !ok[1] || !ok[2] {
				return fmt.Errorf("BUG: triple (%d %d %d) has an ID the dictionary lacks", s, p, o)
			}
			batch = append(batch, t)
			if len(batch) < batchSize {
				return nil
			}
			err := db.AddTriples(name, batch)
			batch = batch[:0]
			return err
		})
		if err != nil {
			return err
		}
		err = db.AddTriples(name, batch)
		batch = batch[:0]
		return err
	}
	if err := copyGraph(rdf.Term{}, d.def.st); err != nil {
		return nil, fmt.Errorf("cannot rebuild the dataset: %w", err)
	}
	for _, n := range d.named {
		if err := copyGraph(n.name, n.g.st); err != nil {
			return nil, fmt.Errorf("cannot rebuild the dataset: %w", err)
		}
	}
	return db.Build()
}

// MaintainedChange is a reasoner's incremental change to a materialized
// default graph, relative to the dataset an Apply (or Amend) of the
// explicit Delete and Insert produced: the closure lost Removed and gained
// Added (both relative to before that Apply, explicit triples included),
// and the deleted explicit triples StillInferred still follow.
type MaintainedChange struct {
	Delete, Insert []IDTriple // explicit, already applied
	Removed, Added []IDTriple
	StillInferred  []IDTriple
}

// ApplyMaintained writes ch into d's default graph and inferred layer
// through the delta, as part of d's version (like Amend): it costs what
// the change touches. d must be the newest version of its lineage and
// have reasoning.
func (d *Dataset) ApplyMaintained(ctx context.Context, ch MaintainedChange) (*Dataset, error) {
	if d.inferred == nil {
		return nil, errors.New("cannot change inferred triples: the dataset has no reasoning")
	}
	set := func(ts []IDTriple) map[idTriple]bool {
		m := make(map[idTriple]bool, len(ts))
		for _, t := range ts {
			m[idTriple{t.S, t.P, t.O}] = true
		}
		return m
	}
	del, ins, added := set(ch.Delete), set(ch.Insert), set(ch.Added)
	var closureDel, closureIns, layerDel, layerIns []idTriple
	for _, t := range ch.Removed {
		x := idTriple{t.S, t.P, t.O}
		if !del[x] { // an inferred triple gone (deleted explicit ones are gone already)
			closureDel = append(closureDel, x)
			layerDel = append(layerDel, x)
		}
	}
	for _, t := range ch.Added {
		x := idTriple{t.S, t.P, t.O}
		if !ins[x] { // a new inferred triple
			closureIns = append(closureIns, x)
			layerIns = append(layerIns, x)
		}
	}
	for _, t := range ch.StillInferred { // explicit no more, still in the closure
		x := idTriple{t.S, t.P, t.O}
		closureIns = append(closureIns, x)
		layerIns = append(layerIns, x)
	}
	for _, t := range ch.Insert { // inferred before, explicit now
		if x := (idTriple{t.S, t.P, t.O}); !added[x] {
			layerDel = append(layerDel, x)
		}
	}
	for _, ts := range [][]idTriple{closureIns, layerIns} {
		for _, x := range ts {
			if err := d.dict.CheckInferred(IDTriple{x.s, x.p, x.o}); err != nil {
				return nil, fmt.Errorf("cannot change inferred triples: %w", err)
			}
		}
	}
	lin := d.lin
	lin.mu.Lock()
	defer lin.mu.Unlock()
	if lin.stamp != d.stamp {
		return nil, fmt.Errorf("cannot change inferred triples: %w", errNotNewest)
	}
	dict := d.dict.withOverlay().tip()
	r := &applyRun{d: d, dict: dict, graphs: map[rdf.Term]*writeGraph{}, tus: map[*rdmakv.DeltaTable]*tableUndo{}}
	r.undo = &applyUndo{stamp: lin.stamp, ov: dict.ov, dict: dict.ov.mark(), prev: d.undo}
	ok := false
	defer func() {
		if !ok {
			r.undo.prev = nil
			r.undo.rollback()
			lin.stamp = r.undo.stamp
		}
	}()
	lin.stamp++
	r.stamp = lin.stamp
	layer, err := r.writeLayers(ctx, d, closureDel, closureIns, layerDel, layerIns)
	if err != nil {
		return nil, fmt.Errorf("cannot change inferred triples: %w", err)
	}
	var lref *graphRef
	if layer.touched {
		stats := layer.sd.apply(layer.st.stats, uint64(r.dict.tip().Len()), layer.st.n)
		st, err := layer.st.version(r.stamp, stats, r.dict.tip())
		if err != nil {
			return nil, fmt.Errorf("cannot change inferred triples: %w", err)
		}
		lref = newGraphRef(st, d.dref)
	} else {
		lref = d.inferred.retain()
	}
	nd, err := r.finish()
	if err != nil {
		lref.release()
		return nil, err
	}
	nd.inferred.release() // finish carried d's layer over; ours replaces it
	nd.inferred = lref
	nd.version = d.version
	ok = true
	return nd, nil
}

// ErrNewRole is returned (wrapped) by ApplyDerived for a change that
// makes a term of the data a predicate or class it was not (which moves
// it to a new ID, its triples with it): a materialized closure cannot
// follow that move.
var ErrNewRole = errors.New("the change gives a term of the data a new role (a predicate or class), which renumbers the dataset")

// DeriveFunc turns the explicit change of a materialized default graph
// (as IDs of dict, which knows every term of the change) into the
// reasoner's MaintainedChange (relative to the dataset before the change).
type DeriveFunc func(dict *Dict, del, ins []IDTriple) (MaintainedChange, error)

// ApplyDerived is Apply (Amend with amend) of changes on a dataset with
// reasoning, writing the default graph once: its change (exactly one,
// without Clear or Drop; named graphs' changes are applied as Apply
// does) is not written as given but handed, once its terms have IDs, to
// derive, and the closure's and the inferred layer's net changes are
// written in the same version — where Apply followed by ApplyMaintained
// writes the explicit triples, then the closure and layer again. On any
// error, derive's included (returned as it is), nothing changes.
func (d *Dataset) ApplyDerived(ctx context.Context, amend bool, changes []GraphChange, derive DeriveFunc) (*Dataset, error) {
	if d.inferred == nil {
		return nil, errors.New("cannot derive inferred triples: the dataset has no reasoning")
	}
	defaults := 0
	for _, c := range changes {
		if c.Graph.IsZero() {
			defaults++
			if c.Clear || c.Drop {
				return nil, errors.New("cannot derive inferred triples: the change clears the default graph")
			}
		}
	}
	if defaults != 1 {
		return nil, fmt.Errorf("cannot derive inferred triples: %d changes of the default graph (want 1)", defaults)
	}
	nd, err := d.applyDerived(ctx, amend, changes, derive)
	if !errors.Is(err, errNotNewest) {
		return nd, err
	}
	c, err := d.compact(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot change an older version of the dataset: %w", err)
	}
	defer c.Close()
	return c.applyDerived(ctx, false, changes, derive)
}

func (d *Dataset) applyDerived(ctx context.Context, amend bool, changes []GraphChange, derive DeriveFunc) (*Dataset, error) {
	changes = withTerms(changes)
	var lref *graphRef // the layer's new version, made inside the run
	nd, err := d.applyWith(ctx, amend, false, changes, func(r *applyRun) error {
		for ci, c := range changes {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !c.Graph.IsZero() {
				if err := checkGraphName(c.Graph); err != nil {
					return fmt.Errorf("cannot change the dataset: change %d: %w", ci, err)
				}
				if err := r.change(ctx, ci, c); err != nil {
					return err
				}
				continue
			}
			var err error
			if lref, err = r.derived(ctx, ci, c, derive); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if lref != nil {
			lref.release()
		}
		return nil, err
	}
	nd.inferred.release() // finish carried d's layer over; ours replaces it
	nd.inferred = lref
	if amend {
		nd.version = d.version
	} else {
		nd.version = d.version + 1
	}
	return nd, nil
}

// derived writes the default graph's change c through derive (see
// ApplyDerived) and returns the layer's new version.
func (r *applyRun) derived(ctx context.Context, ci int, c GraphChange, derive DeriveFunc) (*graphRef, error) {
	d := r.d
	var del, ins []IDTriple
	for _, t := range c.Delete {
		if x, ok := r.lookup(t); ok {
			del = append(del, IDTriple{x.s, x.p, x.o})
		}
	}
	aliases := r.dict.ovAlias
	for i, t := range c.Insert {
		x, err := r.assign(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("cannot change the dataset: change %d, triple %d: %w", ci, i, err)
		}
		ins = append(ins, IDTriple{x.s, x.p, x.o})
	}
	// A term new in this change that was first a vertex and then became
	// a predicate or class moved before any of its triples were written:
	// remap the inserts. A term of the data that moved cannot be followed
	// by the closure.
	if r.dict.ovAlias > aliases {
		ov := r.dict.ov
		ov.mu.RLock()
		old := false
		for _, a := range ov.aliases[aliases:r.dict.ovAlias] {
			_, known := d.dict.Term(a.from)
			old = old || known
		}
		ov.mu.RUnlock()
		if old {
			return nil, fmt.Errorf("cannot change the dataset: %w; with reasoning that is not supported: reload with the change", ErrNewRole)
		}
		r.realias(aliases, func(sub func(ID) ID) {
			for i, x := range ins {
				ins[i] = IDTriple{sub(x.S), sub(x.P), sub(x.O)}
			}
		})
	}
	ch, err := derive(r.dict, del, ins)
	if err != nil {
		return nil, err
	}
	// Net changes against the old closure and layer: the closure loses
	// Removed (deleted explicit triples that no longer follow among them)
	// and gains Added (new explicit triples among them); the layer loses
	// the inferred triples removed and those now explicit, and gains the
	// inferred triples added and the deleted explicit ones that still
	// follow.
	set := func(ts []IDTriple) map[IDTriple]bool {
		m := make(map[IDTriple]bool, len(ts))
		for _, t := range ts {
			m[t] = true
		}
		return m
	}
	delSet, insSet, added := set(ch.Delete), set(ch.Insert), set(ch.Added)
	var closureDel, closureIns, layerDel, layerIns []idTriple
	for _, t := range ch.Removed {
		closureDel = append(closureDel, idTriple{t.S, t.P, t.O})
		if !delSet[t] {
			layerDel = append(layerDel, idTriple{t.S, t.P, t.O})
		}
	}
	for _, t := range ch.Insert {
		if !added[t] { // inferred before, explicit now
			layerDel = append(layerDel, idTriple{t.S, t.P, t.O})
		}
	}
	for _, t := range ch.Added {
		closureIns = append(closureIns, idTriple{t.S, t.P, t.O})
		if !insSet[t] {
			if err := r.dict.CheckInferred(t); err != nil {
				return nil, fmt.Errorf("cannot change inferred triples: %w", err)
			}
			layerIns = append(layerIns, idTriple{t.S, t.P, t.O})
		}
	}
	for _, t := range ch.StillInferred {
		layerIns = append(layerIns, idTriple{t.S, t.P, t.O})
	}
	layer, err := r.writeLayers(ctx, d, closureDel, closureIns, layerDel, layerIns)
	if err != nil {
		return nil, fmt.Errorf("cannot change the dataset: change %d: %w", ci, err)
	}
	if !layer.touched {
		return d.inferred.retain(), nil
	}
	stats := layer.sd.apply(layer.st.stats, uint64(r.dict.tip().Len()), layer.st.n)
	st, err := layer.st.version(r.stamp, stats, r.dict.tip())
	if err != nil {
		return nil, fmt.Errorf("cannot change inferred triples: %w", err)
	}
	return newGraphRef(st, d.dref), nil
}

// writeLayers writes the net changes of a reasoned write: the closure's
// (the default graph) and the inferred layer's, deletions first. It
// returns the layer's graph.
func (r *applyRun) writeLayers(ctx context.Context, d *Dataset, closureDel, closureIns, layerDel, layerIns []idTriple) (*writeGraph, error) {
	def := r.graph(rdf.Term{})
	layer := &writeGraph{exists: true, st: d.inferred.st, old: d.inferred}
	for _, w := range []struct {
		g      *writeGraph
		ts     []idTriple
		insert bool
	}{{def, closureDel, false}, {def, closureIns, true}, {layer, layerDel, false}, {layer, layerIns, true}} {
		if err := r.write(ctx, w.g, sortDistinct(w.ts), w.insert); err != nil {
			return nil, err
		}
	}
	return layer, nil
}
