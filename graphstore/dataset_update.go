package graphstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wukongd/wukongd/rdf"
)

// EachTriple calls fn for every distinct triple of the store, shard by
// shard, each triple once (from its subject's owner), grouped by
// predicate within a shard. Every shard must be local. fn's error stops
// the scan and is returned.
func (s *Store) EachTriple(ctx context.Context, fn func(s, p, o ID) error) error {
	var preds, subjects, objs []ID
	for i := 0; i < s.n; i++ {
		v := s.views[i]
		if v == nil {
			return fmt.Errorf("cannot scan the triples of shard %d: it is not local", i)
		}
		preds = v.AppendPredicates(preds[:0], Out)
		for _, p := range preds {
			if err := ctx.Err(); err != nil {
				return err
			}
			subjects = v.AppendIndex(subjects[:0], p, Out)
			for _, sub := range subjects {
				var err error
				objs, err = v.AppendEdges(ctx, objs[:0], sub, p, Out)
				if err != nil {
					return err
				}
				for _, o := range objs {
					if err := fn(sub, p, o); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// GraphChange is a change of one graph of a dataset (Dataset.Apply).
// In order: Drop removes a named graph (it empties the default graph),
// Clear empties the graph (a missing named graph is created empty), then
// the Delete triples are removed and the Insert triples added (a missing
// named graph is created by a non-empty Insert). A Delete of a triple
// that is not there, or mentions a term the dataset does not know, does
// nothing.
type GraphChange struct {
	Graph  rdf.Term // the zero Term: the default graph; else an IRI or a blank node
	Drop   bool
	Clear  bool
	Delete []rdf.Triple
	Insert []rdf.Triple
}

// ReplaceGraph returns a dataset in which graph name (zero: the default
// graph) holds exactly triples (Graph Store Protocol PUT). It creates a
// missing named graph.
func (d *Dataset) ReplaceGraph(ctx context.Context, name rdf.Term, triples []rdf.Triple) (*Dataset, error) {
	return d.Apply(ctx, GraphChange{Graph: name, Clear: true, Insert: triples})
}

// MergeGraph returns a dataset in which graph name also holds triples
// (Graph Store Protocol POST). It creates a missing named graph.
func (d *Dataset) MergeGraph(ctx context.Context, name rdf.Term, triples []rdf.Triple) (*Dataset, error) {
	return d.Apply(ctx, GraphChange{Graph: name, Insert: triples})
}

// DeleteGraph returns a dataset without the named graph name, or with an
// empty default graph for the zero Term (Graph Store Protocol DELETE).
func (d *Dataset) DeleteGraph(ctx context.Context, name rdf.Term) (*Dataset, error) {
	return d.Apply(ctx, GraphChange{Graph: name, Drop: true})
}

// ErrAllShardsNeeded is returned (wrapped) by Apply on a dataset whose
// shards are not all local: changing a graph reads all of it.
var ErrAllShardsNeeded = errors.New("every shard must be local")

// applyGraph is the state of one graph during Apply.
type applyGraph struct {
	name    rdf.Term
	exists  bool
	base    *graphRef  // the current store; nil once dropped or cleared
	set     []idTriple // sorted, distinct: the new contents when touched
	touched bool       // the graph gets a new store (from set)
}

// Apply returns a new dataset with the changes applied in order; d is not
// modified and stays usable (close each dataset when done with it). The
// stores of graphs no change touches are shared: the new dataset's
// Default, Graph and Graphs return the very same *Store pointers for them
// (closing one dataset does not close a store the other still holds).
// Each touched graph gets a new store built from its old triples (read
// only if a change needs them) and the changes.
//
// New terms extend the dictionary: every old term keeps its ID, new
// predicates and classes take the next low IDs, other new terms the next
// vertex IDs. Only if an inserted triple uses a term that is already a
// plain vertex as a predicate or class (it would need a low ID) is the
// whole dataset rebuilt and renumbered; nothing is shared then.
//
// Every shard must be local. On error nothing changes.
func (d *Dataset) Apply(ctx context.Context, changes ...GraphChange) (*Dataset, error) {
	nd, err := d.apply(ctx, changes)
	if err != nil {
		return nil, err
	}
	nd.version = d.version + 1
	return nd, nil
}

// Amend is Apply for the second and later steps of one request: the
// result has the same Version as d, because it is one more state of the
// version d started (a request whose operations read what the earlier
// ones wrote, SPARQL Update's DELETE/INSERT … WHERE after INSERT DATA).
// d must itself come from Apply or Amend and not be published yet; the
// request's record in a log holds the changes of every step in order
// (applying them in one Apply gives the same dataset).
func (d *Dataset) Amend(ctx context.Context, changes ...GraphChange) (*Dataset, error) {
	nd, err := d.apply(ctx, changes)
	if err != nil {
		return nil, err
	}
	nd.version = d.version
	return nd, nil
}

// Discard drops a dataset that Apply or Amend returned and that was never
// published (no reader saw it): the changes of its version (every Amend
// step of it) are undone and it is closed. Datasets built on it must be
// discarded first. The dataset it was built
// on stays as it was, and the next Apply on that one gives the same
// version and the same term IDs as if d had never been built (what a
// write-ahead log whose write failed needs).
func (d *Dataset) Discard() error { return d.Close() }

func (d *Dataset) apply(ctx context.Context, changes []GraphChange) (*Dataset, error) {
	for _, g := range append([]*graphRef{d.def}, d.namedRefs()...) {
		if len(g.st.LocalShards()) != g.st.n {
			return nil, fmt.Errorf("cannot change the dataset: %w", ErrAllShardsNeeded)
		}
	}
	ids := &idAssigner{old: d.dict, idx: map[rdf.Term]int{}, addRoles: map[ID]byte{}}
	states := map[rdf.Term]*applyGraph{}
	var order []*applyGraph // first change first; the default graph first
	state := func(name rdf.Term) *applyGraph {
		if s, ok := states[name]; ok {
			return s
		}
		s := &applyGraph{name: name}
		if name.IsZero() {
			s.exists, s.base = true, d.def
		} else if i, ok := d.byName[name]; ok {
			s.exists, s.base = true, d.named[i].g
		}
		states[name] = s
		order = append(order, s)
		return s
	}
	state(rdf.Term{})
	for ci, c := range changes {
		if !c.Graph.IsZero() {
			if err := checkGraphName(c.Graph); err != nil {
				return nil, fmt.Errorf("cannot change the dataset: change %d: %w", ci, err)
			}
		}
		s := state(c.Graph)
		if c.Drop {
			s.base, s.set, s.touched = nil, nil, true
			s.exists = c.Graph.IsZero() // the default graph always exists
		}
		if c.Clear {
			s.base, s.set, s.touched, s.exists = nil, nil, true, true
		}
		if len(c.Delete) == 0 && len(c.Insert) == 0 {
			continue
		}
		if !s.touched {
			if s.base != nil {
				var err error
				if s.set, err = scanIDs(ctx, s.base.st); err != nil {
					return nil, fmt.Errorf("cannot change the dataset: cannot read graph %v: %w", c.Graph, err)
				}
			}
			s.touched = true
		}
		if len(c.Delete) > 0 && len(s.set) > 0 {
			var del []idTriple
			for _, t := range c.Delete {
				if x, ok := ids.lookup(t); ok {
					del = append(del, x)
				}
			}
			s.set = minusSorted(s.set, sortDistinct(del))
		}
		if len(c.Insert) > 0 {
			add := make([]idTriple, 0, len(c.Insert))
			for i, t := range c.Insert {
				x, err := ids.assign(t)
				if err != nil {
					return nil, fmt.Errorf("cannot change the dataset: change %d, triple %d: %w", ci, i, err)
				}
				add = append(add, x)
			}
			s.set = unionSorted(s.set, sortDistinct(add))
			s.exists = true
		}
	}
	for _, s := range order {
		if !s.name.IsZero() && s.exists {
			if _, err := ids.id(s.name, 0); err != nil {
				return nil, fmt.Errorf("cannot change the dataset: graph name %v: %w", s.name, err)
			}
		}
	}
	if ids.conflict {
		return d.rebuild(ctx, order, ids)
	}

	// The dictionary: the same one if no term is new, else extended.
	dict, dref := d.dict, d.dref.retain()
	var final []ID
	if len(ids.terms) > 0 || len(ids.addRoles) > 0 {
		dref.release()
		var err error
		if dict, final, err = extendDict(d.dict, ids.terms, ids.roles, ids.addRoles); err != nil {
			return nil, fmt.Errorf("cannot change the dataset: %w", err)
		}
		dref = newDictRef(nil)
	}
	realID := func(x ID) ID {
		if x >= tempIDBase {
			return final[x-tempIDBase]
		}
		return x
	}
	var held []*graphRef // every reference the new dataset takes
	fail := func(err error) (*Dataset, error) {
		for _, g := range held {
			g.release()
		}
		dref.release()
		return nil, err
	}
	storeOf := func(s *applyGraph) (*graphRef, error) {
		if !s.touched {
			g := s.base.retain()
			held = append(held, g)
			return g, nil
		}
		for i := range s.set {
			t := &s.set[i]
			t.s, t.p, t.o = realID(t.s), realID(t.p), realID(t.o)
		}
		outs, ins := partitionIDs(s.set, d.shards)
		s.set = nil
		st, _, _, err := buildGraph(d.shards, dict, outs, ins)
		if err != nil {
			return nil, err
		}
		g := newGraphRef(st, dref)
		held = append(held, g)
		return g, nil
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	def, err := storeOf(states[rdf.Term{}])
	if err != nil {
		return fail(fmt.Errorf("cannot change the dataset: default graph: %w", err))
	}
	var named []namedGraph
	for _, n := range d.named {
		if _, ok := states[n.name]; !ok {
			held = append(held, n.g.retain())
			named = append(named, namedGraph{name: n.name, id: n.id, g: n.g})
		}
	}
	for _, s := range order {
		if s.name.IsZero() || !s.exists {
			continue
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		g, err := storeOf(s)
		if err != nil {
			return fail(fmt.Errorf("cannot change the dataset: graph %v: %w", s.name, err))
		}
		id, _ := ids.id(s.name, 0)
		named = append(named, namedGraph{name: s.name, id: realID(id), g: g})
	}
	nd := newDataset(dict, dref, d.shards, def, named)
	if d.inferred != nil && !states[rdf.Term{}].touched {
		// The default graph is unchanged: so is its inferred layer. (A
		// change to it goes through ApplyInferred, which keeps the layer.)
		nd.reasoning, nd.inferred = d.reasoning, d.inferred.retain()
	}
	return nd, nil
}

func (d *Dataset) namedRefs() []*graphRef {
	r := make([]*graphRef, len(d.named))
	for i, n := range d.named {
		r[i] = n.g
	}
	return r
}

// scanIDs returns the triples of st sorted and distinct.
func scanIDs(ctx context.Context, st *Store) ([]idTriple, error) {
	set := make([]idTriple, 0, st.stats.Triples)
	err := st.EachTriple(ctx, func(s, p, o ID) error {
		set = append(set, idTriple{s, p, o})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(set, cmpIDTriple)
	return set, nil
}

func sortDistinct(t []idTriple) []idTriple {
	slices.SortFunc(t, cmpIDTriple)
	return slices.Compact(t)
}

// minusSorted returns a without the elements of b (both sorted, distinct),
// reusing a.
func minusSorted(a, b []idTriple) []idTriple {
	w, j := 0, 0
	for _, x := range a {
		for j < len(b) && cmpIDTriple(b[j], x) < 0 {
			j++
		}
		if j < len(b) && b[j] == x {
			continue
		}
		a[w] = x
		w++
	}
	return a[:w]
}

// unionSorted merges two sorted, distinct lists.
func unionSorted(a, b []idTriple) []idTriple {
	if len(b) == 0 {
		return a
	}
	r := make([]idTriple, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := cmpIDTriple(a[i], b[j]); {
		case c < 0:
			r = append(r, a[i])
			i++
		case c > 0:
			r = append(r, b[j])
			j++
		default:
			r = append(r, a[i])
			i++
			j++
		}
	}
	r = append(r, a[i:]...)
	return append(r, b[j:]...)
}

// tempIDBase is the first provisional ID of a term new to the dataset
// during Apply: far above every real ID (they fit in the key's 40 bits).
const tempIDBase ID = 1 << 62

// idAssigner gives the terms of changes IDs: the old dictionary's, or
// provisional ones (tempIDBase + index into terms) for new terms, whose
// final IDs depend on the roles they end up with.
type idAssigner struct {
	old      *Dict
	terms    []rdf.Term
	roles    []byte
	idx      map[rdf.Term]int
	addRoles map[ID]byte // roles new to old low-range IDs
	conflict bool        // an old vertex ID is needed as a predicate or class
}

// id returns the ID of t (provisional if new), recording role.
func (a *idAssigner) id(t rdf.Term, role byte) (ID, error) {
	if id, ok := a.old.Lookup(t); ok {
		if role != 0 {
			switch {
			case !a.old.IsPredicateOrClass(id):
				a.conflict = true
			case a.old.roles[id-1]&role != role:
				a.addRoles[id] |= role
			}
		}
		return id, nil
	}
	if i, ok := a.idx[t]; ok {
		a.roles[i] |= role
		return tempIDBase + ID(i), nil
	}
	switch t.Kind {
	case rdf.KindIRI, rdf.KindBlank, rdf.KindLiteral:
	default:
		return 0, fmt.Errorf("%v is not an RDF term", t)
	}
	a.idx[t] = len(a.terms)
	a.terms = append(a.terms, t)
	a.roles = append(a.roles, role)
	return tempIDBase + ID(len(a.terms)-1), nil
}

// assign returns the IDs of an inserted triple.
func (a *idAssigner) assign(t rdf.Triple) (idTriple, error) {
	if t.P.Kind != rdf.KindIRI {
		return idTriple{}, fmt.Errorf("the predicate %v is not an IRI", t.P)
	}
	s, err := a.id(t.S, 0)
	if err != nil {
		return idTriple{}, err
	}
	p, err := a.id(t.P, rolePredicate)
	if err != nil {
		return idTriple{}, err
	}
	var orole byte
	if t.P.Value == rdf.RDFType {
		orole = roleClass
	}
	o, err := a.id(t.O, orole)
	if err != nil {
		return idTriple{}, err
	}
	return idTriple{s, p, o}, nil
}

// lookup returns the IDs of a deleted triple; ok is false if a term is
// unknown (the triple cannot be in any graph).
func (a *idAssigner) lookup(t rdf.Triple) (idTriple, bool) {
	var x [3]ID
	for i, term := range [3]rdf.Term{t.S, t.P, t.O} {
		if id, ok := a.old.Lookup(term); ok {
			x[i] = id
		} else if j, ok := a.idx[term]; ok {
			x[i] = tempIDBase + ID(j)
		} else {
			return idTriple{}, false
		}
	}
	return idTriple{x[0], x[1], x[2]}, true
}

// term decodes an ID of an Apply in progress.
func (a *idAssigner) term(id ID) (rdf.Term, error) {
	if id >= tempIDBase {
		return a.terms[id-tempIDBase], nil
	}
	t, ok := a.old.Term(id)
	if !ok {
		return rdf.Term{}, fmt.Errorf("BUG: ID %d is not in the dictionary", id)
	}
	return t, nil
}

// rebuild builds a whole new dataset (new dictionary, every store rebuilt)
// from the graphs after the changes: Apply's way out when a change needs
// renumbering. order holds the graphs the changes named (the default
// graph first); the other named graphs are copied as they are.
func (d *Dataset) rebuild(ctx context.Context, order []*applyGraph, ids *idAssigner) (*Dataset, error) {
	db, err := NewDatasetBuilder(d.shards)
	if err != nil {
		return nil, err
	}
	const batchSize = 4096
	batch := make([]rdf.Triple, 0, batchSize)
	add := func(name rdf.Term, s, p, o ID) error {
		var t rdf.Triple
		var err error
		if t.S, err = ids.term(s); err != nil {
			return err
		}
		if t.P, err = ids.term(p); err != nil {
			return err
		}
		if t.O, err = ids.term(o); err != nil {
			return err
		}
		batch = append(batch, t)
		if len(batch) == batchSize {
			err = db.AddTriples(name, batch)
			batch = batch[:0]
		}
		return err
	}
	copyGraph := func(name rdf.Term, s *applyGraph, st *Store) error {
		if err := db.AddGraph(name); err != nil {
			return err
		}
		if s != nil && s.touched {
			for _, t := range s.set {
				if err := add(name, t.s, t.p, t.o); err != nil {
					return err
				}
			}
		} else if err := st.EachTriple(ctx, func(sub, p, o ID) error { return add(name, sub, p, o) }); err != nil {
			return err
		}
		err := db.AddTriples(name, batch)
		batch = batch[:0]
		return err
	}
	seen := map[rdf.Term]bool{}
	for _, s := range order {
		seen[s.name] = true
		if !s.exists {
			continue
		}
		var st *Store
		if s.base != nil {
			st = s.base.st
		}
		if err := copyGraph(s.name, s, st); err != nil {
			return nil, fmt.Errorf("cannot change the dataset: %w", err)
		}
	}
	for _, n := range d.named {
		if !seen[n.name] {
			if err := copyGraph(n.name, nil, n.g.st); err != nil {
				return nil, fmt.Errorf("cannot change the dataset: %w", err)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return db.Build()
}
