package reason

import (
	"context"
	"fmt"
)

// Maintainer keeps a materialization right as the explicit triples
// change, by delete-and-rederive (DRed), without materializing again:
//
//  1. Overdelete: starting from the deleted explicit triples, every fact
//     that has a derivation through a deleted or overdeleted fact (the
//     rules fired with it as a premise, against the old closure) and is
//     not explicit is marked, round by round; then all marked facts are
//     removed.
//  2. Rederive: a marked fact that still follows in one step from what
//     is left is put back. Every rule has a premise whose subject or
//     object is the conclusion's subject, so firing the rules for the
//     facts incident to each marked fact's subject finds every such
//     derivation.
//  3. Insert: the semi-naive rounds run from the rederived and the
//     inserted triples.
//
// The work follows the change and what depends on it, not the size of the
// graph. A change to the TBox changes the rules themselves: Maintain
// refuses it (ErrTBoxChange) and the caller materializes again.
type Maintainer struct {
	c        *Closure
	explicit *tripleSet
}

// ErrTBoxChange is returned by Maintain for a change that inserts or
// deletes a TBox triple.
var ErrTBoxChange = fmt.Errorf("the change touches the ontology (TBox)")

// NewMaintainer returns a maintainer of the closure of explicit under o,
// materializing it (with Options.Maintainable set).
func NewMaintainer(ctx context.Context, o *Ontology, explicit []Triple, opts Options) (*Maintainer, error) {
	opts.Maintainable = true
	c, _, _, err := Materialize(ctx, o, explicit, opts)
	if err != nil {
		return nil, err
	}
	m := &Maintainer{c: c, explicit: newTripleSet(len(explicit))}
	for _, t := range explicit {
		m.explicit.add(t, hashTriple(t))
	}
	return m, nil
}

// NewMaintainerOf returns a maintainer of a closure already materialized:
// explicit and inferred (disjoint), as a store holds them. Nothing is
// derived.
func NewMaintainerOf(o *Ontology, explicit, inferred []Triple, opts Options) *Maintainer {
	opts.Maintainable = true
	c := newClosure(o, opts, explicit, inferred)
	c.insert(explicit)
	c.insert(inferred)
	m := &Maintainer{c: c, explicit: newTripleSet(len(explicit))}
	for _, t := range explicit {
		m.explicit.add(t, hashTriple(t))
	}
	return m
}

// Closure returns the maintained closure (do not change it).
func (m *Maintainer) Closure() *Closure { return m.c }

// IsExplicit reports whether t is an explicit triple.
func (m *Maintainer) IsExplicit(t Triple) bool { return m.explicit.has(t, hashTriple(t)) }

// Change is what a Maintain did to the closure.
type Change struct {
	// Delete and Insert are the explicit triples actually deleted (they
	// were explicit) and inserted (they were not).
	Delete, Insert []Triple
	// Removed are the facts gone from the closure, Added the facts new in
	// it (both include explicit triples).
	Removed, Added []Triple
	// StillInferred are deleted explicit triples that still follow: they
	// stay in the closure, now as inferred triples.
	StillInferred []Triple
	// Overdeleted and Rederived count DRed's work.
	Overdeleted, Rederived int
}

// Maintain deletes del and inserts ins (explicit triples; deletes first)
// and brings the closure up to date. On ErrTBoxChange nothing changed.
func (m *Maintainer) Maintain(ctx context.Context, del, ins []Triple) (Change, error) {
	voc := m.c.o.voc
	for _, ts := range [][]Triple{del, ins} {
		for _, t := range ts {
			if voc.IsTBox(t) {
				return Change{}, ErrTBoxChange
			}
		}
	}
	var ch Change
	c := m.c
	// The explicit changes.
	seen := newTripleSet(len(del))
	for _, t := range del {
		h := hashTriple(t)
		if m.explicit.has(t, h) && seen.add(t, h) {
			ch.Delete = append(ch.Delete, t)
		}
	}
	for _, t := range ch.Delete {
		m.explicit.remove(t, hashTriple(t))
	}
	// 1. Overdelete, against the old closure.
	over := newTripleSet(len(ch.Delete))
	var marked []Triple
	for _, t := range ch.Delete {
		over.add(t, hashTriple(t))
		marked = append(marked, t)
	}
	for delta := marked; len(delta) > 0; {
		if err := ctx.Err(); err != nil {
			return Change{}, m.undo(ctx, ch.Delete, marked, err)
		}
		var next []Triple
		eachRouted(c.fireRouted(keys{keysOf(delta)}, c, false, false), func(k packed) {
			h := hashPacked(k)
			if !c.hasKey(k) || m.explicit.hasKey(k, h) || !over.addKey(k, h) {
				return
			}
			next = append(next, k.triple())
		})
		marked = append(marked, next...)
		delta = next
	}
	ch.Overdeleted = len(marked)
	c.remove(marked)
	// 2. Rederive: fire the facts incident to each marked subject.
	subjects := map[ID]bool{}
	var premises []Triple
	for _, u := range marked {
		if subjects[u.S] {
			continue
		}
		subjects[u.S] = true
		c.Incident(u.S, func(t Triple) { premises = append(premises, t) })
	}
	back := newTripleSet(16)
	var rederived []Triple
	eachRouted(c.fireRouted(keys{keysOf(premises)}, c, false, false), func(k packed) {
		h := hashPacked(k)
		if over.hasKey(k, h) && back.addKey(k, h) {
			rederived = append(rederived, k.triple())
		}
	})
	ch.Rederived = len(rederived)
	// 3. Insert: the rederived and inserted triples, then the rounds.
	for _, t := range ins {
		h := hashTriple(t)
		if t.S != 0 && !m.explicit.has(t, h) {
			m.explicit.add(t, h)
			ch.Insert = append(ch.Insert, t)
		}
	}
	start := c.insertKeys(append(rederived, ch.Insert...))
	derived, _, err := c.run(ctx, start)
	if err != nil {
		return Change{}, err // the closure is incomplete: the caller must rebuild
	}
	for _, b := range append(start, derived...) {
		for _, k := range b {
			if k = k.open(); !over.hasKey(k, hashPacked(k)) {
				ch.Added = append(ch.Added, k.triple())
			}
		}
	}
	for _, u := range marked {
		if !c.Has(u) {
			ch.Removed = append(ch.Removed, u)
		}
	}
	for _, t := range ch.Delete {
		if c.Has(t) {
			ch.StillInferred = append(ch.StillInferred, t)
		}
	}
	return ch, nil
}

// undo restores the state before an interrupted overdeletion (nothing was
// removed from the closure yet).
func (m *Maintainer) undo(_ context.Context, deleted, _ []Triple, err error) error {
	for _, t := range deleted {
		m.explicit.add(t, hashTriple(t))
	}
	return err
}

// Explicit returns the explicit triples (in no particular order).
func (m *Maintainer) Explicit() []Triple {
	r := make([]Triple, 0, m.explicit.n)
	m.explicit.each(func(t Triple) { r = append(r, t) })
	return r
}
