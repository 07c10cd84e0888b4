package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/reason"
	"github.com/wukongd/wukongd/web"
)

// reasoner keeps the materialization of a dataset with reasoning
// (graphstore.Dataset.Inferred) right as updates change its default
// graph: an insert derives its consequences, a delete retracts what no
// longer follows (reason.Maintainer, delete-and-rederive), never by
// materializing the store again — except when a change touches the
// ontology (TBox) or clears the default graph, which changes the rules.
//
// The maintainer holds the closure in memory, in step with one dataset
// (ds). It is built on the first update from that dataset's stores (read,
// not materialized); an update built on another dataset (a request that
// failed after maintaining, say) builds it again. Writes are serialized
// (Service.writeMu), so it needs no lock of its own.
type reasoner struct {
	ds *graphstore.Dataset // the dataset m is in step with (not ours)
	m  *reason.Maintainer
}

// applyReasoned is ds.Apply(changes) with the reasoner's maintenance
// (reasoner.apply): every path that applies changes (a request, the log's
// replay, a compaction's catch-up) goes through it, so that replaying a
// record gives the same closure as the write did. The caller holds
// writeMu.
func (s *Service) applyReasoned(ctx context.Context, ds *graphstore.Dataset, changes []graphstore.GraphChange) (*graphstore.Dataset, error) {
	return s.reasoner.apply(ctx, ds, changes, false)
}

// apply is ds.Apply(changes) (Amend with amend) followed by maintain,
// with the same result. The common case — one change of the default
// graph, not clearing it, not touching the ontology — writes the store
// once (graphstore.Dataset.ApplyDerived: the maintainer derives the
// consequences as soon as the change's terms have IDs, and the explicit
// and inferred changes go in together) instead of twice (Apply, then
// ApplyMaintained).
func (r *reasoner) apply(ctx context.Context, ds *graphstore.Dataset, changes []graphstore.GraphChange, amend bool) (*graphstore.Dataset, error) {
	if ds.Inferred() != nil {
		if t, ok := newRole(ds.Dict(), changes); ok {
			return nil, fmt.Errorf("%w: %w (%v); with reasoning that is not supported: reload with the change", web.ErrBadRequest, graphstore.ErrNewRole, t)
		}
	}
	if ds.Inferred() != nil && r.deriveOnce(changes) {
		nds, err := r.applyDerived(ctx, ds, changes, amend)
		if !errors.Is(err, reason.ErrTBoxChange) {
			return nds, err
		}
		// The ontology changes: nothing was written, the rules change.
	}
	var nds *graphstore.Dataset
	var err error
	if amend {
		nds, err = ds.Amend(ctx, changes...)
	} else {
		nds, err = ds.Apply(ctx, changes...)
	}
	if err != nil {
		return nil, err
	}
	return r.maintain(ctx, ds, nds, changes)
}

// deriveOnce reports whether changes are for applyDerived: exactly one
// change of the default graph, without CLEAR or DROP.
func (r *reasoner) deriveOnce(changes []graphstore.GraphChange) bool {
	n := 0
	for _, c := range changes {
		if c.Graph.IsZero() {
			if c.Clear || c.Drop {
				return false
			}
			n++
		}
	}
	return n == 1
}

// applyDerived is apply through graphstore.Dataset.ApplyDerived; it
// returns reason.ErrTBoxChange (nothing changed) for a change of the
// ontology.
func (r *reasoner) applyDerived(ctx context.Context, ds *graphstore.Dataset, changes []graphstore.GraphChange, amend bool) (*graphstore.Dataset, error) {
	profile, err := reason.ParseProfile(ds.Reasoning())
	if err != nil {
		return nil, err
	}
	if r.ds != ds || r.m == nil {
		if r.m, err = maintainerOf(ctx, ds, profile); err != nil {
			r.ds, r.m = nil, nil
			return nil, err
		}
		r.ds = ds
	}
	maintained := false
	nds, err := ds.ApplyDerived(ctx, amend, changes, func(_ *graphstore.Dict, del, ins []graphstore.IDTriple) (graphstore.MaintainedChange, error) {
		mc, err := r.m.Maintain(ctx, fromIDs(del), fromIDs(ins))
		if err != nil {
			return graphstore.MaintainedChange{}, err
		}
		maintained = true
		return graphstore.MaintainedChange{Delete: toIDs(mc.Delete), Insert: toIDs(mc.Insert),
			Removed: toIDs(mc.Removed), Added: toIDs(mc.Added), StillInferred: toIDs(mc.StillInferred)}, nil
	})
	switch {
	case err == nil:
		r.ds = nds
		return nds, nil
	case maintained || !errors.Is(err, reason.ErrTBoxChange):
		r.ds, r.m = nil, nil // the maintainer may be ahead of the store: rebuild it next time
	}
	if errors.Is(err, graphstore.ErrNewRole) {
		return nil, fmt.Errorf("%w: %w", web.ErrBadRequest, err)
	}
	return nil, err
}

func fromIDs(ts []graphstore.IDTriple) []reason.Triple {
	out := make([]reason.Triple, len(ts))
	for i, t := range ts {
		out[i] = reason.Triple{S: t.S, P: t.P, O: t.O}
	}
	return out
}

func toIDs(ts []reason.Triple) []graphstore.IDTriple {
	out := make([]graphstore.IDTriple, len(ts))
	for i, t := range ts {
		out[i] = graphstore.IDTriple{S: t.S, P: t.P, O: t.O}
	}
	return out
}

// maintain brings the inferred layer of after (before with changes
// applied by graphstore.Dataset.Apply or Amend, which keep before's
// layer) up to date and returns the dataset to use instead of after
// (after itself when before has no reasoning; after is closed otherwise).
func (r *reasoner) maintain(ctx context.Context, before, after *graphstore.Dataset, changes []graphstore.GraphChange) (*graphstore.Dataset, error) {
	defaults := 0
	for _, c := range changes {
		if c.Graph.IsZero() {
			defaults++
		}
	}
	if before.Inferred() == nil || defaults == 0 {
		return after, nil // no reasoning, or the default graph unchanged (its layer with it)
	}
	fail := func(err error) (*graphstore.Dataset, error) {
		after.Discard()
		r.ds, r.m = nil, nil
		return nil, err
	}
	if t, ok := movedTerm(before.Dict(), after.Dict(), changes); ok {
		return fail(fmt.Errorf("%w: %w (%v); with reasoning that is not supported: reload with the change", web.ErrBadRequest, graphstore.ErrNewRole, t))
	}
	profile, err := reason.ParseProfile(before.Reasoning())
	if err != nil {
		return fail(err)
	}
	if r.ds != before || r.m == nil {
		if r.m, err = maintainerOf(ctx, before, profile); err != nil {
			return fail(err)
		}
		r.ds = before
	}
	dict := after.Dict()
	ids := func(ts []rdf.Triple) []reason.Triple {
		out := make([]reason.Triple, 0, len(ts))
		for _, t := range ts {
			s, ok1 := dict.Lookup(t.S)
			p, ok2 := dict.Lookup(t.P)
			o, ok3 := dict.Lookup(t.O)
			if ok1 && ok2 && ok3 {
				out = append(out, reason.Triple{S: s, P: p, O: o})
			}
		}
		return out
	}
	var ch graphstore.InferredChange
	var mch graphstore.MaintainedChange
	conv := func(ts []reason.Triple) []graphstore.IDTriple {
		out := make([]graphstore.IDTriple, len(ts))
		for i, t := range ts {
			out[i] = graphstore.IDTriple{S: t.S, P: t.P, O: t.O}
		}
		return out
	}
	rematerialize := false
	for _, c := range changes {
		if !c.Graph.IsZero() {
			continue
		}
		var del []reason.Triple
		if c.Drop || c.Clear {
			del = r.m.Explicit()
		}
		del = append(del, ids(c.Delete)...)
		ins := ids(c.Insert)
		if !rematerialize {
			mc, err := r.m.Maintain(ctx, del, ins)
			switch {
			case errors.Is(err, reason.ErrTBoxChange) || c.Drop || c.Clear:
				rematerialize = true
			case err != nil:
				return fail(err)
			default:
				if defaults == 1 {
					mch = graphstore.MaintainedChange{Delete: conv(mc.Delete), Insert: conv(mc.Insert),
						Removed: conv(mc.Removed), Added: conv(mc.Added), StillInferred: conv(mc.StillInferred)}
				}
				ch.Delete = append(ch.Delete, conv(mc.Delete)...)
				ch.Insert = append(ch.Insert, conv(mc.Insert)...)
				ch.RetractInferred = append(ch.RetractInferred, conv(mc.Removed)...)
				ch.AddInferred = append(ch.AddInferred, conv(mc.Added)...)
				ch.AddInferred = append(ch.AddInferred, conv(mc.StillInferred)...)
				continue
			}
		}
		// The rules change (or everything goes): the explicit triples
		// after the change, materialized again.
		explicit := map[reason.Triple]bool{}
		for _, t := range r.m.Explicit() {
			explicit[t] = true
		}
		for _, t := range del {
			if explicit[t] {
				delete(explicit, t)
				ch.Delete = append(ch.Delete, graphstore.IDTriple{S: t.S, P: t.P, O: t.O})
			}
		}
		for _, t := range ins {
			explicit[t] = true
			ch.Insert = append(ch.Insert, graphstore.IDTriple{S: t.S, P: t.P, O: t.O})
		}
		var ts []reason.Triple
		for t := range explicit {
			ts = append(ts, t)
		}
		o := compileOf(dict, profile, ts)
		if r.m, err = reason.NewMaintainer(ctx, o, ts, reason.Options{IsLiteral: dict.IsLiteral}); err != nil {
			return fail(err)
		}
	}
	if rematerialize {
		ch.ReplaceInferred = true
		ch.RetractInferred = nil
		ch.AddInferred = ch.AddInferred[:0]
		r.m.Closure().Each(func(t reason.Triple) {
			if !r.m.IsExplicit(t) {
				ch.AddInferred = append(ch.AddInferred, graphstore.IDTriple{S: t.S, P: t.P, O: t.O})
			}
		})
	}
	var nd *graphstore.Dataset
	if defaults == 1 && !rematerialize {
		// One change of the default graph: through the delta, costing
		// what it touches.
		nd, err = after.ApplyMaintained(ctx, mch)
	} else {
		// Several changes in one step (their net effect is not a simple
		// sum), or new rules: rebuild the default graph and the layer.
		nd, err = after.ApplyInferred(ctx, ch)
	}
	if err != nil {
		return fail(fmt.Errorf("%w: %w", web.ErrBadRequest, err))
	}
	after.Close() // superseded before anyone saw it (nd holds its stores' changes)
	r.ds = nd
	return nd, nil
}

// newRole returns a term of dict that an insert of changes (of any
// graph: a move renumbers the term in all of them) uses as a predicate
// or as a class (the object of rdf:type) where dict has it as a vertex
// (outside the low range of predicates and classes): Apply would move it
// to a new ID. (A term already in the low range only gains a role bit.) Refusing such a change before
// anything is written keeps every path (one write or two) from having
// to undo a move.
func newRole(dict *graphstore.Dict, changes []graphstore.GraphChange) (rdf.Term, bool) {
	for _, c := range changes {
		for _, t := range c.Insert {
			p, ok := dict.Lookup(t.P)
			if ok && !dict.IsPredicateOrClass(p) {
				return t.P, true
			}
			if ok && p == graphstore.TypeID {
				if o, ok := dict.Lookup(t.O); ok && !dict.IsPredicateOrClass(o) {
					return t.O, true
				}
			}
		}
	}
	return rdf.Term{}, false
}

// movedTerm returns a term of the inserts of changes that before's
// dictionary knows under another ID than after's: Apply moved it (a
// vertex of the data that became a predicate or class, and its triples
// with it, in every graph but the inferred layer), which the layer and
// the maintainer's closure, both in before's IDs, cannot follow. Only an
// inserted triple gives a term a role, so looking at the inserts' terms
// finds every move; the cost is the change's, not the dataset's.
func movedTerm(before, after *graphstore.Dict, changes []graphstore.GraphChange) (rdf.Term, bool) {
	for _, c := range changes {
		for _, t := range c.Insert {
			for _, term := range [3]rdf.Term{t.S, t.P, t.O} {
				old, ok := before.Lookup(term)
				if !ok {
					continue // new in this request: nothing of the data moved
				}
				if id, ok := after.Lookup(term); !ok || id != old {
					return term, true
				}
			}
		}
	}
	return rdf.Term{}, false
}

// maintainerOf reads the closure of ds (explicit and inferred) into a
// maintainer.
func maintainerOf(ctx context.Context, ds *graphstore.Dataset, profile reason.Profile) (*reason.Maintainer, error) {
	o, explicit, err := reason.LoadOntology(ctx, ds, profile)
	if err != nil {
		return nil, err
	}
	var inferred []reason.Triple
	if err := ds.Inferred().EachTriple(ctx, func(s, p, o graphstore.ID) error {
		inferred = append(inferred, reason.Triple{S: s, P: p, O: o})
		return nil
	}); err != nil {
		return nil, err
	}
	return reason.NewMaintainerOf(o, explicit, inferred, reason.Options{IsLiteral: ds.Dict().IsLiteral}), nil
}

// compileOf compiles the ontology of the explicit triples ts.
func compileOf(dict *graphstore.Dict, profile reason.Profile, ts []reason.Triple) *reason.Ontology {
	voc := reason.NewVocab(func(iri string) (graphstore.ID, bool) { return dict.Lookup(rdf.NewIRI(iri)) })
	var tbox []reason.Triple
	sameAs := false
	for _, t := range ts {
		if voc.IsTBox(t) {
			tbox = append(tbox, t)
		}
		sameAs = sameAs || (voc.SameAs != 0 && t.P == voc.SameAs)
	}
	return reason.Compile(profile, voc, tbox, sameAs)
}
