package graphstore

import (
	"context"
	"fmt"
)

// Compaction (DESIGN.md §9): the base and delta of every graph, as one
// version sees them, are merged into new tables (the builder's
// buildGraph), and the dictionary's overlay into new dictionary tables,
// with every ID kept. The result is a dataset of the same version with
// empty deltas, whose size per triple is a fresh load's.

// Compact returns d merged into new tables: the same version, the same
// term IDs and triples, no delta. d is not changed and stays readable.
// It costs the whole dataset (it reads every triple); queries and writes
// on d's lineage go on meanwhile.
func (d *Dataset) Compact(ctx context.Context) (*Dataset, error) {
	return d.compact(ctx)
}

func (d *Dataset) compact(ctx context.Context) (*Dataset, error) {
	dict, err := d.dict.materialize()
	if err != nil {
		return nil, fmt.Errorf("cannot compact the dictionary: %w", err)
	}
	var dref *dictRef
	if dict == d.dict {
		dref = d.dref.retain()
	} else {
		dref = newDictRef(nil)
	}
	var held []*graphRef
	fail := func(err error) (*Dataset, error) {
		for _, g := range held {
			g.release()
		}
		dref.release()
		return nil, err
	}
	build := func(st *Store) (*graphRef, error) {
		set, err := scanIDs(ctx, st)
		if err != nil {
			return nil, err
		}
		outs, ins := partitionIDs(set, d.shards)
		set = nil
		ns, _, _, err := buildGraph(d.shards, dict, outs, ins)
		if err != nil {
			return nil, err
		}
		g := newGraphRef(ns, dref)
		held = append(held, g)
		return g, nil
	}
	def, err := build(d.def.st)
	if err != nil {
		return fail(fmt.Errorf("cannot compact the default graph: %w", err))
	}
	var named []namedGraph
	for _, n := range d.named {
		g, err := build(n.g.st)
		if err != nil {
			return fail(fmt.Errorf("cannot compact graph %v: %w", n.name, err))
		}
		named = append(named, namedGraph{name: n.name, id: n.id, g: g})
	}
	var layer *graphRef
	if d.inferred != nil {
		if layer, err = build(d.inferred.st); err != nil {
			return fail(fmt.Errorf("cannot compact the inferred layer: %w", err))
		}
	}
	nd := newDataset(dict, dref, d.shards, def, named)
	nd.version = d.version
	nd.reasoning, nd.inferred = d.reasoning, layer
	return nd, nil
}

// needsCompaction reports whether d has a delta or new terms (a snapshot
// of it must be compacted first).
func (d *Dataset) needsCompaction() bool {
	if d.dict.ov != nil && (d.dict.ovPC > 0 || d.dict.ovV > 0 || d.dict.ovRoles > 0 || d.dict.ovAlias > 0) {
		return true
	}
	if d.def.st.hasDelta() {
		return true
	}
	for _, n := range d.named {
		if n.g.st.hasDelta() {
			return true
		}
	}
	return false
}

// DeltaBytes returns the bytes the deltas of d's graphs use (shared with
// the other versions of its lineage).
func (d *Dataset) DeltaBytes() uint64 {
	n := d.def.st.DeltaBytes()
	for _, g := range d.named {
		n += g.g.st.DeltaBytes()
	}
	return n
}
