package reason

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Options tune a materialization.
type Options struct {
	// Workers is the number of goroutines (default GOMAXPROCS).
	Workers int
	// IsLiteral reports whether an ID is a literal (which cannot be a
	// subject); nil: no ID is.
	IsLiteral func(ID) bool
	// Maintainable indexes every fact by subject and object, which
	// Maintain needs to rederive (about 50 bytes more per fact).
	Maintainable bool
}

// Stats describe a materialization.
type Stats struct {
	Explicit uint64 // distinct explicit triples
	Inferred uint64 // triples derived that are not explicit
	Rounds   int    // semi-naive rounds until nothing was new
}

// Closure is the set of facts of a materialization (explicit and
// inferred) with the join indexes its ontology needs. It implements Facts.
// Its methods are not safe for concurrent use; its Facts reads are while
// nothing changes it.
type Closure struct {
	o       *Ontology
	opts    Options
	parts   []*tripleSet
	idx     []*joinIndex
	workers int
}

type idxKey struct{ p, x ID }

// joinIndex is one partition (by vertex) of the join indexes.
type joinIndex struct {
	out map[idxKey][]ID // (p, s) → o, for o.outIdx[p]
	in  map[idxKey][]ID // (p, o) → s, for o.inIdx[p]
	inc map[ID][]Triple // x → facts with x as subject or object (sameAs only)
}

const partBits = 6 // 64 partitions of the fact set

// NewClosure returns an empty closure for ontology o.
func NewClosure(o *Ontology, opts Options) *Closure {
	w := opts.Workers
	if w < 1 {
		w = runtime.GOMAXPROCS(0)
	}
	c := &Closure{o: o, opts: opts, workers: w, parts: make([]*tripleSet, 1<<partBits), idx: make([]*joinIndex, w)}
	for i := range c.parts {
		c.parts[i] = newTripleSet(1024)
	}
	for i := range c.idx {
		c.idx[i] = &joinIndex{out: map[idxKey][]ID{}, in: map[idxKey][]ID{}, inc: map[ID][]Triple{}}
	}
	return c
}

// Materialize computes the closure of explicit under o. It returns the
// closure (explicit and inferred facts) and the inferred triples (those
// not explicit), in no particular order.
func Materialize(ctx context.Context, o *Ontology, explicit []Triple, opts Options) (*Closure, []Triple, Stats, error) {
	c := NewClosure(o, opts)
	for i := range c.parts { // explicit and about half again inferred, without regrowing
		c.parts[i] = newTripleSet(3 * len(explicit) / (2 * len(c.parts)))
	}
	delta := c.insert(explicit)
	st := Stats{Explicit: uint64(len(delta))}
	inferred, rounds, err := c.run(ctx, delta)
	if err != nil {
		return nil, nil, Stats{}, err
	}
	st.Inferred, st.Rounds = uint64(len(inferred)), rounds
	return c, inferred, st, nil
}

// Len returns the number of facts.
func (c *Closure) Len() int {
	n := 0
	for _, p := range c.parts {
		n += p.n
	}
	return n
}

// Each calls fn with every fact.
func (c *Closure) Each(fn func(Triple)) {
	for _, p := range c.parts {
		p.each(fn)
	}
}

func partOf(h uint64) int { return int(h >> (64 - partBits)) }

func (c *Closure) idxOf(x ID) *joinIndex {
	return c.idx[int((uint64(x)*0x9e3779b97f4a7c15)>>32)%len(c.idx)]
}

// Has reports whether t is a fact.
func (c *Closure) Has(t Triple) bool {
	h := hashTriple(t)
	return c.parts[partOf(h)].has(t, h)
}

// Objects implements Facts.
func (c *Closure) Objects(s, p ID) []ID { return c.idxOf(s).out[idxKey{p, s}] }

// Subjects implements Facts.
func (c *Closure) Subjects(p, o ID) []ID { return c.idxOf(o).in[idxKey{p, o}] }

// Incident implements Facts.
func (c *Closure) Incident(x ID, fn func(Triple)) {
	for _, t := range c.idxOf(x).inc[x] {
		fn(t)
	}
}

// forWorkers runs fn(w, i) for i in 0..n-1 on the workers (w is the
// worker's number).
func (c *Closure) forWorkers(n int, fn func(w, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(c.workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(w, i)
			}
		}()
	}
	wg.Wait()
}

// insert adds ts to the facts and returns those that were new (indexed).
func (c *Closure) insert(ts []Triple) []Triple {
	routed := make([][][]Triple, 1) // one "worker"
	routed[0] = make([][]Triple, len(c.parts))
	for _, t := range ts {
		if t.S == 0 {
			continue
		}
		p := partOf(hashTriple(t))
		routed[0][p] = append(routed[0][p], t)
	}
	fresh := c.addRouted(routed)
	c.index(fresh)
	return fresh
}

// addRouted inserts every worker's conclusions into their partitions (in
// parallel over partitions) and returns the new ones.
func (c *Closure) addRouted(routed [][][]Triple) []Triple {
	news := make([][]Triple, len(c.parts))
	c.forWorkers(len(c.parts), func(_, p int) {
		set := c.parts[p]
		var fresh []Triple
		for _, buf := range routed {
			for _, t := range buf[p] {
				if set.add(t, hashTriple(t)) {
					fresh = append(fresh, t)
				}
			}
		}
		news[p] = fresh
	})
	return slices.Concat(news...)
}

// index adds fresh facts to the join indexes (in parallel over index
// partitions).
func (c *Closure) index(fresh []Triple) {
	o := c.o
	full := o.sameAs || c.opts.Maintainable
	if len(o.outIdx) == 0 && len(o.inIdx) == 0 && !full {
		return
	}
	c.forWorkers(len(c.idx), func(_, i int) {
		ix := c.idx[i]
		for _, t := range fresh {
			if o.outIdx[t.P] && c.idxOf(t.S) == ix {
				k := idxKey{t.P, t.S}
				ix.out[k] = append(ix.out[k], t.O)
			}
			if o.inIdx[t.P] && c.idxOf(t.O) == ix {
				k := idxKey{t.P, t.O}
				ix.in[k] = append(ix.in[k], t.S)
			}
			if full {
				if c.idxOf(t.S) == ix {
					ix.inc[t.S] = append(ix.inc[t.S], t)
				}
				if t.O != t.S && c.idxOf(t.O) == ix {
					ix.inc[t.O] = append(ix.inc[t.O], t)
				}
			}
		}
	})
}

// unindex removes gone facts from the join indexes.
func (c *Closure) unindex(gone []Triple) {
	o := c.o
	del := func(l []ID, x ID) []ID {
		if i := slices.Index(l, x); i >= 0 {
			l[i] = l[len(l)-1]
			return l[:len(l)-1]
		}
		return l
	}
	for _, t := range gone {
		if o.outIdx[t.P] {
			ix, k := c.idxOf(t.S), idxKey{t.P, t.S}
			ix.out[k] = del(ix.out[k], t.O)
		}
		if o.inIdx[t.P] {
			ix, k := c.idxOf(t.O), idxKey{t.P, t.O}
			ix.in[k] = del(ix.in[k], t.S)
		}
		if o.sameAs || c.opts.Maintainable {
			for _, x := range []ID{t.S, t.O} {
				ix := c.idxOf(x)
				l := ix.inc[x]
				if i := slices.Index(l, t); i >= 0 {
					l[i] = l[len(l)-1]
					ix.inc[x] = l[:len(l)-1]
				}
			}
		}
	}
}

// remove deletes ts from the facts (and the indexes).
func (c *Closure) remove(ts []Triple) {
	var gone []Triple
	for _, t := range ts {
		h := hashTriple(t)
		if c.parts[partOf(h)].remove(t, h) {
			gone = append(gone, t)
		}
	}
	c.unindex(gone)
}

const fireChunk = 4096

// fireRouted fires the rules for every fact of delta against facts, on
// the workers, and returns the conclusions routed by partition
// ([worker][partition]).
func (c *Closure) fireRouted(delta []Triple, facts Facts) [][][]Triple {
	routed := make([][][]Triple, c.workers)
	firers := make([]firer, c.workers)
	// Room for about two conclusions per delta fact, so that few
	// buffers grow by copying (measured: the copies were a fifth of the
	// time on LUBM-10).
	per := 2 * len(delta) / (c.workers * len(c.parts))
	for w := range routed {
		bufs := make([][]Triple, len(c.parts))
		for p := range bufs {
			bufs[p] = make([]Triple, 0, per)
		}
		routed[w] = bufs
		firers[w] = firer{o: c.o, isLiteral: c.opts.IsLiteral, emit: func(t Triple) {
			p := partOf(hashTriple(t))
			bufs[p] = append(bufs[p], t)
		}}
	}
	chunks := (len(delta) + fireChunk - 1) / fireChunk
	c.forWorkers(chunks, func(w, i int) {
		f := &firers[w]
		for _, t := range delta[i*fireChunk : min(len(delta), (i+1)*fireChunk)] {
			f.fire(t, facts)
		}
	})
	// The emit closures appended to routed[w]'s slices through bufs.
	return routed
}

// run fires semi-naive rounds from delta (facts already in c) until
// nothing is new; it returns every new fact and the number of rounds.
func (c *Closure) run(ctx context.Context, delta []Triple) ([]Triple, int, error) {
	var derived []Triple
	rounds := 0
	for len(delta) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, rounds, err
		}
		rounds++
		fresh := c.addRouted(c.fireRouted(delta, c))
		c.index(fresh)
		derived = append(derived, fresh...)
		delta = fresh
	}
	return derived, rounds, nil
}
