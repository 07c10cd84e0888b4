package exec

import (
	"fmt"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// Query forms other than SELECT: the answers of ASK (Result.Boolean), and
// of CONSTRUCT and DESCRIBE (Result.Triples: an RDF graph, so a set of
// triples of IDs, decoded by Result.Triple).

// construct instantiates the template with every row (§16.2): a blank
// node of the template is a fresh blank node per row; a triple with an
// unbound position, or that is not RDF (a literal or blank predicate, a
// literal subject), is left out. Duplicates are removed. The triples and
// their set are charged to the query's memory as they grow, and the loop
// looks at the query's context.
func (q *queryRun) construct(t *Table, tmpl []sparql.TriplePattern) ([][3]ID, error) {
	cols := map[sparql.Var]int{}
	for c, v := range t.Vars {
		cols[v] = c
	}
	consts := map[rdf.Term]ID{}
	kinds := map[ID]rdf.Kind{}
	kind := func(id ID) rdf.Kind {
		if k, ok := kinds[id]; ok {
			return k
		}
		k := q.term(id).Kind
		kinds[id] = k
		return k
	}
	prefix := q.blankPrefix()
	seen := map[[3]ID]bool{}
	var out [][3]ID
	g := growth{m: q.mem}
	defer g.done()
	sc := stopCheck{ctx: q.ctx, grow: func() { g.to(tripleSetBytes(len(seen), cap(out))) }}
	for r := 0; r < t.N; r++ {
		if err := sc.add(len(tmpl)); err != nil {
			return nil, err
		}
		var fresh map[string]ID
		pos := func(x sparql.TermOrVar) ID {
			switch {
			case x.IsVar():
				c, ok := cols[x.Var]
				if !ok {
					return 0
				}
				return t.At(c, r)
			case x.Term.IsBlank():
				if fresh == nil {
					fresh = map[string]ID{}
				}
				id, ok := fresh[x.Term.Value]
				if !ok {
					id = q.locals.Intern(rdf.NewBlank(fmt.Sprintf("%s%d_%s", prefix, r, x.Term.Value)))
					fresh[x.Term.Value] = id
				}
				return id
			}
			id, ok := consts[x.Term]
			if !ok {
				id = q.intern(x.Term)
				consts[x.Term] = id
			}
			return id
		}
		for _, tp := range tmpl {
			s, p, o := pos(tp.S), pos(tp.P), pos(tp.O)
			if s == 0 || p == 0 || o == 0 {
				continue
			}
			if k := kind(s); k != rdf.KindIRI && k != rdf.KindBlank {
				continue
			}
			if kind(p) != rdf.KindIRI {
				continue
			}
			tr := [3]ID{s, p, o}
			if !seen[tr] {
				seen[tr] = true
				out = append(out, tr)
			}
		}
	}
	return out, nil
}

// tripleSetBytes is what CONSTRUCT and DESCRIBE hold for their answer: n
// triples in the set that removes duplicates (key, value and the map's
// share of a bucket) and a list of capacity c.
func tripleSetBytes(n, c int) int64 { return 56*int64(n) + 24*int64(c) }

// blankPrefix starts the labels of the blank nodes a query makes; it is
// not the prefix of any label in the data (the expression environment
// chose it at random).
func (q *queryRun) blankPrefix() string {
	if q.env.BlankPrefix == "" {
		// Compile initialises the environment.
		_, _ = q.program(&sparql.TermExpr{Term: rdf.NewLiteral("", rdf.XSD+"string")})
	}
	return q.env.BlankPrefix + "c"
}

// describe answers DESCRIBE with the concise bounded description of each
// resource (the targets: IRIs of the query, and the IRIs and blank nodes
// the variables take in the solutions): every triple with the resource as
// subject, and, for each blank node object of those, its description in
// turn (without the reification part of CBD). Literals describe nothing.
func (q *queryRun) describe(t *Table, d *planner.DescribePlan) ([][3]ID, error) {
	var todo []ID
	done := map[ID]bool{}
	want := func(id ID) {
		if id == 0 || done[id] || id >= LocalIDBase {
			return
		}
		if k := q.term(id).Kind; k != rdf.KindIRI && k != rdf.KindBlank {
			return
		}
		done[id] = true
		todo = append(todo, id)
	}
	for _, x := range d.Targets {
		if !x.IsVar() {
			if id, ok := q.e.store.LookupTerm(x.Term); ok {
				want(id)
			}
			continue
		}
		if t == nil {
			continue
		}
		if c := t.Col(x.Var); c >= 0 {
			for r := 0; r < t.N; r++ {
				want(t.At(c, r))
			}
		}
	}
	ex := d.Explore
	seen := map[[3]ID]bool{}
	var out [][3]ID
	g := growth{m: q.mem}
	defer g.done()
	stop := stopCheck{ctx: q.ctx, grow: func() { g.to(tripleSetBytes(len(seen), cap(out)) + 24*int64(len(done))) }}
	base := q.mem.tablesNow()
	for len(todo) > 0 {
		seed := &Table{Vars: []sparql.Var{ex.Vars[0]}, Cols: [][]ID{todo}, N: len(todo)}
		todo = nil
		q.seeds[d.Slot] = seed
		res, err := q.explore(ex, seed, nil)
		if err != nil {
			return nil, err
		}
		sc, pc, oc := res.Col(ex.Vars[0]), res.Col(ex.Vars[1]), res.Col(ex.Vars[2])
		for r := 0; r < res.N; r++ {
			if err := stop.add(1); err != nil {
				return nil, err
			}
			tr := [3]ID{res.At(sc, r), res.At(pc, r), res.At(oc, r)}
			if seen[tr] {
				continue
			}
			seen[tr] = true
			out = append(out, tr)
			if q.term(tr[2]).Kind == rdf.KindBlank {
				want(tr[2])
			}
		}
		q.mem.settle(base, g.charged) // the round's exploration is garbage now
	}
	return out, nil
}
