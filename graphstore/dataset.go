package graphstore

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

// Dataset is an RDF dataset: the default graph and named graphs, each its
// own *Store with the same number of shards and the same layout, all over
// one dictionary, so a term has the same ID in every graph. A Dataset is
// immutable and safe for concurrent use; a change (Apply) returns a new
// Dataset that shares the stores of the graphs it did not change.
type Dataset struct {
	dict   *Dict
	dref   *dictRef
	shards int
	def    *graphRef
	named  []namedGraph // sorted by name (compareGraphNames)
	byName map[rdf.Term]int
	byID   map[ID]int
	// version counts the requests applied since the store was loaded
	// (Version).
	version uint64
	// lin is shared by the versions Apply derives; stamp is the delta
	// stamp this version reads; undo drops its version (Discard).
	lin   *lineage
	stamp uint64
	undo  *applyUndo

	reasoning string    // the profile materialized ("" for none): dataset_reason.go
	inferred  *graphRef // the default graph's inferred triples (nil without reasoning)

	closeOnce sync.Once
	closeErr  error
}

// NamedGraph is a named graph of a dataset: its name (an IRI or a blank
// node), the name's ID in the dataset's dictionary, and its store.
type NamedGraph struct {
	Name  rdf.Term
	ID    ID
	Store *Store
}

type namedGraph struct {
	name rdf.Term
	id   ID
	g    *graphRef
}

// graphRef counts the datasets holding a store. Datasets derived by Apply
// share the stores of untouched graphs; the store is closed when the last
// dataset holding it is closed. It also holds the dictionary the store was
// built on (a store's Dict may be an older, smaller dictionary than its
// dataset's: see Dataset.Dict).
type graphRef struct {
	st   *Store
	dict *dictRef
	refs atomic.Int64
}

// dictRef owns the mapping of a dictionary opened from a snapshot (nil
// for one in memory). Stores inside a dataset never own their
// dictionary's region (Store.Close would unmap it under the other graphs).
type dictRef struct {
	region *rdmakv.Region
	refs   atomic.Int64
}

func newDictRef(region *rdmakv.Region) *dictRef {
	r := &dictRef{region: region}
	r.refs.Store(1)
	return r
}

func (r *dictRef) retain() *dictRef { r.refs.Add(1); return r }

func (r *dictRef) release() error {
	switch n := r.refs.Add(-1); {
	case n == 0 && r.region != nil:
		return r.region.Close()
	case n < 0:
		panic("BUG: dictionary released more often than retained")
	}
	return nil
}

// newGraphRef takes ownership of st (one reference) and retains d.
func newGraphRef(st *Store, d *dictRef) *graphRef {
	g := &graphRef{st: st, dict: d.retain()}
	g.refs.Store(1)
	return g
}

func (g *graphRef) retain() *graphRef { g.refs.Add(1); return g }

func (g *graphRef) release() error {
	switch n := g.refs.Add(-1); {
	case n == 0:
		return errors.Join(g.st.Close(), g.dict.release())
	case n < 0:
		panic("BUG: graph store released more often than retained")
	}
	return nil
}

// compareGraphNames orders graph names: IRIs before blank nodes, then by
// value (byte order). It is the order of Dataset.Graphs.
func compareGraphNames(a, b rdf.Term) int {
	if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	return cmp.Compare(a.Value, b.Value)
}

// checkGraphName reports whether t can name a graph: an IRI or a blank node.
func checkGraphName(t rdf.Term) error {
	if t.Kind != rdf.KindIRI && t.Kind != rdf.KindBlank {
		return fmt.Errorf("graph name %v is not an IRI or a blank node", t)
	}
	return nil
}

// newDataset assembles a dataset; it takes over the references passed in
// (def, every named[i].g, and one reference of dref).
func newDataset(dict *Dict, dref *dictRef, shards int, def *graphRef, named []namedGraph) *Dataset {
	slices.SortFunc(named, func(a, b namedGraph) int { return compareGraphNames(a.name, b.name) })
	d := &Dataset{dict: dict, dref: dref, shards: shards, def: def, named: named,
		byName: make(map[rdf.Term]int, len(named)), byID: make(map[ID]int, len(named)), lin: &lineage{}}
	for i, n := range named {
		d.byName[n.name] = i
		d.byID[n.id] = i
	}
	return d
}

// NewDataset returns a dataset whose default graph is st and which has no
// named graphs. The dataset takes ownership of st: close the dataset, not
// the store.
func NewDataset(st *Store) *Dataset {
	// The dataset, not the store, owns a mapped dictionary from now on:
	// stores built later over the same dictionary (Apply) must not see it
	// unmapped when st is closed.
	dref := newDictRef(st.dict.region)
	st.dict.region = nil
	def := newGraphRef(st, dref)
	return newDataset(st.dict, dref, st.n, def, nil)
}

// Version returns the dataset's version: 0 for a dataset built or loaded
// from files, the version recorded in a snapshot written by WriteDataset,
// and one more than its receiver's for a dataset returned by Apply (Amend
// keeps it). A write-ahead log numbers its records with it: the record
// that produces version v is record v.
func (d *Dataset) Version() uint64 { return d.version }

// Default returns the store of the default graph (never nil).
func (d *Dataset) Default() *Store { return d.def.st }

// Graph returns the store of the named graph name (an IRI or a blank
// node); ok is false if the dataset has no such graph. The zero Term
// names no graph: use Default for the default graph.
func (d *Dataset) Graph(name rdf.Term) (*Store, bool) {
	i, ok := d.byName[name]
	if !ok {
		return nil, false
	}
	return d.named[i].g.st, true
}

// GraphByID returns the named graph whose name has ID id in Dict() (what a
// GRAPH ?g variable is bound to); ok is false if id names no graph.
func (d *Dataset) GraphByID(id ID) (NamedGraph, bool) {
	i, ok := d.byID[id]
	if !ok {
		return NamedGraph{}, false
	}
	n := d.named[i]
	return NamedGraph{Name: n.name, ID: n.id, Store: n.g.st}, true
}

// Graphs returns the named graphs ordered by name: IRIs before blank
// nodes, then by value in byte order. The order is the same every time
// and across snapshots. The slice is the caller's.
func (d *Dataset) Graphs() []NamedGraph {
	r := make([]NamedGraph, len(d.named))
	for i, n := range d.named {
		r[i] = NamedGraph{Name: n.name, ID: n.id, Store: n.g.st}
	}
	return r
}

// NumGraphs returns the number of named graphs.
func (d *Dataset) NumGraphs() int { return len(d.named) }

// Dict returns the dictionary of the dataset: it knows every term of every
// graph, and every graph name. Use it, not a graph store's Dict, to look
// up query constants and decode results: a store shared from an older
// dataset (Apply) keeps the older dictionary it was built on, which gives
// the same IDs for the terms it knows but does not know newer ones.
func (d *Dataset) Dict() *Dict { return d.dict }

// NumShards returns the number of shards of every graph.
func (d *Dataset) NumShards() int { return d.shards }

// Triples returns the distinct triples of all graphs together (a triple in
// two graphs counts twice: these are distinct quads).
func (d *Dataset) Triples() uint64 {
	n := d.def.st.stats.Triples
	for _, g := range d.named {
		n += g.g.st.stats.Triples
	}
	return n
}

// Terms returns the number of terms of the dictionary (graph names
// included).
func (d *Dataset) Terms() uint64 { return uint64(d.dict.Len()) }

// Close releases the dataset's stores, except those still held by another
// dataset (derived with Apply, or the one this one was derived from), and
// unmaps a snapshot's dictionary when no store needs it any more. Stores
// and views of the dataset must not be used afterwards.
func (d *Dataset) Close() error {
	d.closeOnce.Do(func() {
		errs := []error{d.def.release()}
		if d.inferred != nil {
			errs = append(errs, d.inferred.release())
		}
		for _, n := range d.named {
			errs = append(errs, n.g.release())
		}
		errs = append(errs, d.dref.release())
		d.closeErr = errors.Join(errs...)
	})
	return d.closeErr
}
