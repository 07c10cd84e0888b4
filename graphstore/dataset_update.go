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
//
// A change ApplyBulk made holds its inserts as IDs only: InsertIDs, the
// IDs of the dataset the change made, with Insert nil (a body of millions
// of new triples would be held once more as terms, 200 bytes a triple,
// only to be written to the log). InsertLen counts them, InsertTerm
// decodes an ID of them, WithTerms fills Insert; every Apply fills it
// itself. Code that builds or edits a change leaves InsertIDs nil.
type GraphChange struct {
	Graph     rdf.Term // the zero Term: the default graph; else an IRI or a blank node
	Drop      bool
	Clear     bool
	Delete    []rdf.Triple
	Insert    []rdf.Triple
	InsertIDs []IDTriple
	terms     *insertTerms // the terms of InsertIDs
}

// insertTerms decodes the IDs of a change ApplyBulk made: the vertices
// it made are the overlay's terms (shared, by index), the others were
// decoded when the change was made (its IDs stay decodable after the
// dataset is closed).
type insertTerms struct {
	first ID
	made  []rdf.Term // the terms of IDs first, first+1, …
	other map[ID]rdf.Term
}

func (it *insertTerms) term(id ID) (rdf.Term, bool) {
	if id >= it.first && id-it.first < ID(len(it.made)) {
		return it.made[id-it.first], true
	}
	t, ok := it.other[id]
	return t, ok
}

// InsertLen returns the number of triples c inserts.
func (c *GraphChange) InsertLen() int { return max(len(c.Insert), len(c.InsertIDs)) }

// MadeIDs returns the range of vertex IDs [first, first+n) that the
// change's ApplyBulk made (most IDs of a body of new data; n is 0 for
// other changes): a log encoder can index them instead of hashing.
func (c *GraphChange) MadeIDs() (first ID, n int) {
	if c.terms == nil {
		return 0, 0
	}
	return c.terms.first, len(c.terms.made)
}

// InsertTerm returns the term of an ID of c.InsertIDs (ok false: not one
// of them, or c was not made by ApplyBulk).
func (c *GraphChange) InsertTerm(id ID) (rdf.Term, bool) {
	if c.terms == nil {
		return rdf.Term{}, false
	}
	return c.terms.term(id)
}

// WithTerms returns c with Insert filled from InsertIDs if c holds its
// inserts as IDs only (a change ApplyBulk made); else c.
func (c GraphChange) WithTerms() GraphChange {
	if c.Insert != nil || c.terms == nil {
		return c
	}
	c.Insert = make([]rdf.Triple, len(c.InsertIDs))
	for i, x := range c.InsertIDs {
		s, _ := c.terms.term(x.S)
		p, _ := c.terms.term(x.P)
		o, _ := c.terms.term(x.O)
		c.Insert[i] = rdf.Triple{S: s, P: p, O: o}
	}
	return c
}

// withTerms returns changes with every change's Insert filled (a copy if
// one had to be).
func withTerms(changes []GraphChange) []GraphChange {
	for i, c := range changes {
		if c.Insert == nil && c.terms != nil {
			out := slices.Clone(changes)
			for j := i; j < len(out); j++ {
				out[j] = out[j].WithTerms()
			}
			return out
		}
	}
	return changes
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

// Apply returns a new dataset with the changes applied in order, whose
// Version is d's + 1; d is not modified and stays usable (close each
// dataset when done with it). The stores of graphs no change touches are
// shared: the new dataset's Default, Graph and Graphs return the very
// same *Store pointers for them (closing one dataset does not close a
// store the other still holds).
//
// On the newest version of a dataset a change costs what it touches
// (dataset_write.go): it is appended to the touched graphs' deltas, and
// the new version reads them; Clear and Drop give a graph a new empty
// store. On an older version (a branch) Apply first compacts it, which
// costs the whole dataset.
//
// New terms extend the dictionary without renumbering (dict_delta.go):
// every old term keeps its ID, new predicates and classes take the next
// low IDs, other new terms the next vertex IDs. A plain vertex used as a
// predicate or class moves to a new low ID, with its triples. The same
// prior state and changes give the same IDs and the same result.
//
// Every shard must be local. On error nothing changes.
func (d *Dataset) Apply(ctx context.Context, changes ...GraphChange) (*Dataset, error) {
	nd, err := d.applyChanges(ctx, changes, false)
	if err != nil {
		return nil, err
	}
	nd.version = d.version + 1
	return nd, nil
}

// ApplyRecords applies the changes of k consecutive requests (log
// records) in one step: the result is version d.Version()+k, the same
// dataset — the same IDs, lists and statistics — as k Applies, one per
// record (Apply of c1..cn equals applying them one after another), but
// the k-1 versions in between are never built, so a replay pays the
// per-version costs once and touches a vertex shared by many records
// once. Only for replay, where no reader could see the versions in
// between.
func (d *Dataset) ApplyRecords(ctx context.Context, records [][]GraphChange) (*Dataset, error) {
	n := 0
	for _, r := range records {
		n += len(r)
	}
	all := make([]GraphChange, 0, n)
	for _, r := range records {
		all = append(all, r...)
	}
	nd, err := d.applyChanges(ctx, all, false)
	if err != nil {
		return nil, err
	}
	nd.version = d.version + uint64(len(records))
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
	nd, err := d.applyChanges(ctx, changes, true)
	if err != nil {
		return nil, err
	}
	nd.version = d.version
	return nd, nil
}

// Discard drops a dataset that Apply or Amend returned and that was never
// published (no reader saw it): the changes of its version (every Amend
// step of it) are undone and it is closed. Datasets built on it must be
// discarded first. The dataset it was built on stays as it was, and the
// next Apply on that one gives the same version and the same term IDs as
// if d had never been built (what a write-ahead log whose write failed
// needs).
func (d *Dataset) Discard() error {
	if d.undo != nil {
		lin := d.lin
		lin.mu.Lock()
		if lin.stamp != d.stamp {
			lin.mu.Unlock()
			return fmt.Errorf("cannot discard version %d: a newer one was built on it (discard that first)", d.version)
		}
		first := d.undo.first()
		d.undo.rollback()
		lin.stamp = first.stamp
		d.undo = nil
		lin.mu.Unlock()
	}
	return d.Close()
}

// applyChanges applies changes through the delta of d's lineage; on a
// dataset that is not the newest of its lineage (an older version, or a
// sibling of a newer one) it first compacts d into a lineage of its own,
// which costs the whole dataset.
func (d *Dataset) applyChanges(ctx context.Context, changes []GraphChange, amend bool) (*Dataset, error) {
	nd, err := d.applyDelta(ctx, changes, amend, false)
	if !errors.Is(err, errNotNewest) {
		return nd, err
	}
	c, err := d.compact(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot change an older version of the dataset: %w", err)
	}
	defer c.Close()
	return c.applyDelta(ctx, changes, false, false)
}

// ApplyHosted is Apply on a dataset whose store holds only some of the
// shards: a node of a cluster (package cluster), where every node applies
// the same changes in the same order. The dictionary changes whole, so
// every node gives new terms the same IDs; a shard's lists change only on
// the node that holds it (a triple is decided on its subject's Out list,
// or, on the node that holds only its object, on the object's In list,
// which holds the subject iff the triple exists); the statistics follow
// the local vertices only (each node counts its own share). d must be the
// newest version of its lineage. Refused (wrapping ErrAllShardsNeeded,
// with nothing changed, the same way on every node): named graphs, a
// dataset with reasoning, and a plain vertex newly used as a
// predicate or class (its triples would move between shards). A CLEAR or
// DROP of the default graph empties the lists of the local shards in
// their deltas (each node the triples its shards know; clearHosted).
func (d *Dataset) ApplyHosted(ctx context.Context, changes ...GraphChange) (*Dataset, error) {
	nd, err := d.applyDelta(ctx, changes, false, true)
	if err != nil {
		return nil, err
	}
	nd.version = d.version + 1
	return nd, nil
}

// ApplyHostedAt is ApplyHosted making version v (> d.Version()) at once:
// its changes are stamped v-d.Version() stamps past d's, as if the
// versions in between had each taken a stamp, so the stamps keep
// following the versions of the other nodes of a cluster (a node that
// installs a snapshot of the replicated log jumps from its version to the
// snapshot's). A reader at a stamp in between reads d's state: the
// versions in between are not on this node (the caller refuses them).
func (d *Dataset) ApplyHostedAt(ctx context.Context, v uint64, changes ...GraphChange) (*Dataset, error) {
	if v <= d.version {
		return nil, fmt.Errorf("cannot make version %d on version %d", v, d.version)
	}
	changes = withTerms(changes)
	nd, err := d.applyWithSkip(ctx, false, true, v-d.version-1, changes, func(r *applyRun) error {
		for ci, c := range changes {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := r.change(ctx, ci, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	nd.version = v
	return nd, nil
}

// checkHosted refuses what ApplyHosted cannot do.
func checkHosted(d *Dataset, changes []GraphChange) error {
	if d.inferred != nil {
		return fmt.Errorf("%w: changing a dataset with reasoning on some shards only", ErrAllShardsNeeded)
	}
	if len(d.named) > 0 {
		return fmt.Errorf("%w: a dataset with named graphs on some shards only", ErrAllShardsNeeded)
	}
	for i, c := range changes {
		switch {
		case !c.Graph.IsZero():
			return fmt.Errorf("%w: change %d names graph %v (named graphs need every shard)", ErrAllShardsNeeded, i, c.Graph)
		}
	}
	return nil
}

// Stamp returns the delta stamp the dataset reads: its lineage's count
// of Apply and Amend steps (a reader of another node's delta regions
// reads at it).
func (d *Dataset) Stamp() uint64 { return d.stamp }

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
