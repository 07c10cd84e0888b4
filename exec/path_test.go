package exec

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// Property paths: evalPathPattern against a reference that follows §18.4
// literally over the triples in memory (all pairs of a path as a bag,
// ALP per start for the repetitions), on hand-picked and random paths, 1
// and 4 shards.

const px = "http://ex/"

func iri(s string) rdf.Term { return rdf.NewIRI(px + s) }

// pathGraph: a p-cycle a→b→c→a, a p-chain d→e→f, q edges (a→d, f→a,
// e→e), a self-loop g p g, types, and a literal object.
func pathGraph() []rdf.Triple {
	t := func(s, p, o string) rdf.Triple { return rdf.Triple{S: iri(s), P: iri(p), O: iri(o)} }
	typ := rdf.NewIRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
	return []rdf.Triple{
		t("a", "p", "b"), t("b", "p", "c"), t("c", "p", "a"),
		t("d", "p", "e"), t("e", "p", "f"),
		t("a", "q", "d"), t("f", "q", "a"), t("e", "q", "e"), t("a", "r", "b"),
		t("g", "p", "g"),
		{S: iri("a"), P: typ, O: iri("C")}, {S: iri("d"), P: typ, O: iri("C")}, {S: iri("C"), P: iri("r"), O: iri("D")},
		{S: iri("f"), P: iri("label"), O: rdf.NewLiteral("f", "")},
	}
}

// refPairs is the bag of (x, y) pairs of path over triples, zero-length
// pairs over nodes.
func refPairs(triples []rdf.Triple, nodes []rdf.Term, p sparql.Path) [][2]rdf.Term {
	switch p := p.(type) {
	case *sparql.LinkPath:
		var out [][2]rdf.Term
		for _, t := range triples {
			if t.P.Value == p.IRI {
				out = append(out, [2]rdf.Term{t.S, t.O})
			}
		}
		return out
	case *sparql.InversePath:
		var out [][2]rdf.Term
		for _, x := range refPairs(triples, nodes, p.Path) {
			out = append(out, [2]rdf.Term{x[1], x[0]})
		}
		return out
	case *sparql.SequencePath:
		var out [][2]rdf.Term
		r := refPairs(triples, nodes, p.Right)
		for _, a := range refPairs(triples, nodes, p.Left) {
			for _, b := range r {
				if a[1] == b[0] {
					out = append(out, [2]rdf.Term{a[0], b[1]})
				}
			}
		}
		return out
	case *sparql.AlternativePath:
		return append(refPairs(triples, nodes, p.Left), refPairs(triples, nodes, p.Right)...)
	case *sparql.NegatedPropertySet:
		var out [][2]rdf.Term
		for _, t := range triples {
			if len(p.Forward) > 0 && !slices.Contains(p.Forward, t.P.Value) {
				out = append(out, [2]rdf.Term{t.S, t.O})
			}
			if len(p.Inverse) > 0 && !slices.Contains(p.Inverse, t.P.Value) {
				out = append(out, [2]rdf.Term{t.O, t.S})
			}
		}
		return out
	case *sparql.ZeroOrOnePath, *sparql.ZeroOrMorePath, *sparql.OneOrMorePath:
		var inner sparql.Path
		zero, more := false, false
		switch p := p.(type) {
		case *sparql.ZeroOrOnePath:
			inner, zero = p.Path, true
		case *sparql.ZeroOrMorePath:
			inner, zero, more = p.Path, true, true
		case *sparql.OneOrMorePath:
			inner, more = p.Path, true
		}
		adj := map[rdf.Term][]rdf.Term{}
		for _, x := range refPairs(triples, nodes, inner) {
			adj[x[0]] = append(adj[x[0]], x[1])
		}
		var out [][2]rdf.Term
		for _, x := range nodes {
			seen := map[rdf.Term]bool{}
			if zero {
				seen[x] = true
			}
			if more {
				// ALP (§18.5): depth first, each node once.
				var alp func(y rdf.Term)
				alp = func(y rdf.Term) {
					if seen[y] {
						return
					}
					seen[y] = true
					for _, z := range adj[y] {
						alp(z)
					}
				}
				for _, y := range adj[x] {
					alp(y)
				}
			} else {
				for _, y := range adj[x] {
					seen[y] = true
				}
			}
			for y := range seen {
				out = append(out, [2]rdf.Term{x, y})
			}
		}
		return out
	}
	panic(fmt.Sprintf("path %T", p))
}

// refPath is the reference answer of pp as sorted "s o" lines.
func refPath(triples []rdf.Triple, pp *sparql.PathPattern) []string {
	set := map[rdf.Term]bool{}
	for _, t := range triples {
		set[t.S], set[t.O] = true, true
	}
	for _, x := range []sparql.TermOrVar{pp.S, pp.O} {
		if x.Var == "" {
			set[x.Term] = true
		}
	}
	var nodes []rdf.Term
	for n := range set {
		nodes = append(nodes, n)
	}
	var out []string
	for _, x := range refPairs(triples, nodes, pp.Path) {
		if pp.S.Var == "" && x[0] != pp.S.Term || pp.O.Var == "" && x[1] != pp.O.Term {
			continue
		}
		if pp.S.Var != "" && pp.S.Var == pp.O.Var && x[0] != x[1] {
			continue
		}
		// A pair with a zero-length end on a constant-only node counts only
		// when that node is an end of the pattern (checked above).
		out = append(out, x[0].String()+" "+x[1].String())
	}
	slices.Sort(out)
	return out
}

// parsePath returns the path pattern of a one-pattern query.
func parsePath(t testing.TB, where string) *sparql.PathPattern {
	t.Helper()
	q, err := sparql.ParseQuery("PREFIX : <" + px + "> SELECT * WHERE { " + where + " }")
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	var pp *sparql.PathPattern
	sparql.Walk(q.Pattern, func(p sparql.Pattern) bool {
		if x, ok := p.(*sparql.PathPattern); ok {
			pp = x
		}
		return true
	})
	if pp == nil {
		t.Fatalf("%s: no path pattern in %s", where, q.Pattern)
	}
	return pp
}

// runPath evaluates pp from one empty row and renders "s o" lines.
func runPath(t testing.TB, e *Engine, pp *sparql.PathPattern) []string {
	t.Helper()
	locals := &TermTable{}
	out, _, err := evalPathPattern(context.Background(), e.Store(), 0, pp, unitTable(0), locals, nil)
	if err != nil {
		t.Fatalf("%s: %v", pp.Path, err)
	}
	term := func(id ID) rdf.Term {
		if id >= LocalIDBase {
			x, _ := locals.Term(id)
			return x
		}
		x, _ := e.Store().Term(id)
		return x
	}
	end := func(x sparql.TermOrVar, row int) rdf.Term {
		if x.Var == "" {
			return x.Term
		}
		return term(out.At(out.Col(x.Var), row))
	}
	var lines []string
	for r := 0; r < out.N; r++ {
		lines = append(lines, end(pp.S, r).String()+" "+end(pp.O, r).String())
	}
	slices.Sort(lines)
	return lines
}

func TestPathCases(t *testing.T) {
	triples := pathGraph()
	cases := []struct {
		where string
		n     int // expected solutions (counted by hand)
	}{
		{":a :p* ?y", 3},       // a, b, c: the cycle ends
		{":a :p+ ?y", 3},       // b, c, a (back to itself)
		{":d :p+ ?y", 2},       // e, f
		{":d :p* ?y", 3},       // d, e, f
		{"?x :p* :a", 3},       // a, c, b
		{":a :p? ?y", 2},       // a, b
		{":g :p* ?y", 1},       // g (self-loop: once)
		{":g :p+ ?y", 1},       // g
		{":a :p* :a", 1},       // zero length and cycle: one solution
		{":nowhere :p* ?y", 1}, // a constant outside the data: itself
		{"?x :p* :nowhere", 1}, // and backwards
		{":nowhere :p? :nowhere", 1},
		{":nowhere :p+ ?y", 0},
		{":a (:p|:r) ?y", 2},        // a p b, a r b: a bag of two
		{":a (:p|:p) ?y", 2},        // the same edge twice
		{":a (:p|:r)* ?y", 3},       // a set
		{":a !:p ?y", 3},            // q d, r b, type C
		{":a !(:p|:q) ?y", 2},       // r b, type C
		{":a !^:p ?y", 1},           // f (f q a): the inverse part only
		{":a !(:q|^:q) ?y", 4},      // p b, r b, type C; backwards c (c p a), not f (f q a)
		{":C !^:r ?y", 2},           // instances a, d via rdf:type backwards
		{"?x (:p/:q|:zz) ?y", 3},    // c→a→d, d→e→e, e→f→a
		{"?x (^(:p/:q)|:zz) ?y", 3}, // inverted
		{"?x (:q/:p)* :a", 1},       // a (zero length); nothing reaches a
		{":a (:q/:p)* ?y", 4},       // a, e (a q d p e), f (e q e p f), b (f q a p b)
		{"?x :q+ ?x", 1},            // e q e
		{"?x :p+ ?x", 4},            // a, b, c, g
		{"?x :p* ?x", 10},           // every node: a–g, C, D, "f"
	}
	for _, shards := range []int{1, 4} {
		e := newTestEngine(t, triples, shards)
		for _, c := range cases {
			pp := parsePath(t, c.where)
			got := runPath(t, e, pp)
			want := refPath(triples, pp)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%d shards: %s:\ngot  %q\nwant %q", shards, c.where, got, want)
			}
			if c.n >= 0 && len(want) != c.n {
				t.Errorf("%s: the reference gives %d solutions, the case says %d: %q", c.where, len(want), c.n, want)
			}
		}
	}
}

// randomPath returns a random path over predicates p, q, r (and one the
// data does not have) of depth at most d.
func randomPath(rng *rand.Rand, d int) string {
	preds := []string{":p", ":q", ":r", ":p", ":zz"}
	if d == 0 || rng.Intn(3) == 0 {
		switch rng.Intn(6) {
		case 0:
			return "^" + preds[rng.Intn(len(preds))]
		case 1:
			switch rng.Intn(3) {
			case 0:
				return "!" + preds[rng.Intn(len(preds))]
			case 1:
				return "!^" + preds[rng.Intn(len(preds))]
			}
			return "!(" + preds[rng.Intn(len(preds))] + "|^" + preds[rng.Intn(len(preds))] + ")"
		}
		return preds[rng.Intn(len(preds))]
	}
	a := randomPath(rng, d-1)
	switch rng.Intn(7) {
	case 0:
		return "(" + a + ")*"
	case 1:
		return "(" + a + ")+"
	case 2:
		return "(" + a + ")?"
	case 3:
		return "^(" + a + ")"
	case 4:
		return "(" + a + "/" + randomPath(rng, d-1) + ")"
	}
	return "(" + a + "|" + randomPath(rng, d-1) + ")"
}

func TestPathRandom(t *testing.T) {
	triples := pathGraph()
	rng := rand.New(rand.NewSource(7))
	ends := []string{"?x", "?y", ":a", ":d", ":f", ":C", ":nowhere", "?x"}
	var es [2]*Engine
	es[0] = newTestEngine(t, triples, 1)
	es[1] = newTestEngine(t, triples, 4)
	for i := 0; i < 400; i++ {
		s := ends[rng.Intn(len(ends))]
		o := ends[1+rng.Intn(len(ends)-1)]
		where := s + " " + randomPath(rng, 3) + " " + o
		q, err := sparql.ParseQuery("PREFIX : <" + px + "> SELECT * WHERE { " + where + " }")
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		var pp *sparql.PathPattern
		sparql.Walk(q.Pattern, func(p sparql.Pattern) bool {
			if x, ok := p.(*sparql.PathPattern); ok && pp == nil {
				pp = x
			}
			return true
		})
		if pp == nil {
			continue // rewritten into triple patterns
		}
		want := refPath(triples, pp)
		for _, e := range es {
			got := runPath(t, e, pp)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%d shards: %s:\ngot  %q\nwant %q", e.Store().Shards(), where, got, want)
			}
		}
	}
}

// TestPathSeeded joins a path with bound, unbound and mixed rows.
func TestPathSeeded(t *testing.T) {
	triples := pathGraph()
	for _, shards := range []int{1, 4} {
		e := newTestEngine(t, triples, shards)
		st := e.Store()
		id := func(s string) ID {
			v, ok := st.LookupTerm(iri(s))
			if !ok {
				t.Fatalf("no %s", s)
			}
			return v
		}
		pp := parsePath(t, "?x :p+ ?y")
		// Rows: x=a; x=d, y=f; y=a only; nothing bound; x=f (no p edge).
		in := &Table{Vars: []sparql.Var{"x", "y", "z"}, N: 5, Cols: [][]ID{
			{id("a"), id("d"), 0, 0, id("f")},
			{0, id("f"), id("a"), 0, 0},
			{1, 2, 3, 4, 5},
		}}
		out, _, err := evalPathPattern(context.Background(), st, 0, pp, in, &TermTable{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		name := func(v ID) string {
			x, _ := st.Term(v)
			return strings.TrimPrefix(x.Value, px)
		}
		for r := 0; r < out.N; r++ {
			got = append(got, fmt.Sprintf("%d:%s>%s", out.At(2, r), name(out.At(0, r)), name(out.At(1, r))))
		}
		slices.Sort(got)
		// Row 4 (nothing bound) gets every p+ pair: from the cycle 9, d→e,
		// d→f, e→f, g→g.
		want := []string{"1:a>a", "1:a>b", "1:a>c", "2:d>f", "3:a>a", "3:b>a", "3:c>a"}
		for _, x := range []string{"a>a", "a>b", "a>c", "b>a", "b>b", "b>c", "c>a", "c>b", "c>c", "d>e", "d>f", "e>f", "g>g"} {
			want = append(want, "4:"+x)
		}
		slices.Sort(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%d shards:\ngot  %v\nwant %v", shards, got, want)
		}
	}
}

// TestPathBoundNonNodes: a value bound by an earlier step is a node for a
// path between two variables only if the graph has it (§18.5; W3C
// values_and_path), while a constant end is always its own zero-length
// match.
func TestPathBoundNonNodes(t *testing.T) {
	for _, shards := range []int{1, 4} {
		e := newTestEngine(t, pathGraph(), shards)
		st := e.Store()
		locals := &TermTable{}
		lit, _ := st.LookupTerm(rdf.NewLiteral("f", ""))
		pred, _ := st.LookupTerm(iri("p"))  // a predicate, not a node
		class, _ := st.LookupTerm(iri("C")) // a class: object of rdf:type
		outside := locals.Intern(iri("nowhere"))
		in := &Table{Vars: []sparql.Var{"x"}, N: 4, Cols: [][]ID{{outside, pred, lit, class}}}
		for _, c := range []struct {
			where string
			want  []ID // the x of each output row
		}{
			{"?x :p? ?y", []ID{lit, class}},
			{"?x :p* ?x", []ID{lit, class}},
			{"?x :p* :nowhere", []ID{outside}}, // constant end: its own match
			{"?x :p? :p", []ID{pred}},
		} {
			pp := parsePath(t, c.where)
			out, _, err := evalPathPattern(context.Background(), st, 0, pp, in, locals, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []ID
			for r := 0; r < out.N; r++ {
				got = append(got, out.At(0, r))
			}
			slices.Sort(got)
			want := slices.Clone(c.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%d shards: %s: x = %v, want %v", shards, c.where, got, want)
			}
		}
	}
}

// TestPathLUBM compares paths over the real LUBM-1 with the reference.
func TestPathLUBM(t *testing.T) {
	if testing.Short() {
		t.Skip("the reference takes seconds on LUBM-1")
	}
	triples := lubm1(t)
	const ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
	for _, shards := range []int{1, 4} {
		e := newTestEngine(t, triples, shards)
		for _, where := range []string{
			"?x ub:subOrganizationOf+ ?y",
			"?x ub:subOrganizationOf* ?y",
			"?x (ub:advisor|ub:headOf) ?y",
			"?x ^(ub:worksFor|ub:memberOf)+ ?y",
			"<http://www.Department0.University0.edu/GraduateStudent1> (ub:advisor/ub:worksFor/ub:subOrganizationOf?)|!ub:advisor ?y",
			"?x !(ub:advisor|^ub:takesCourse|ub:takesCourse|ub:publicationAuthor) ?y",
		} {
			q, err := sparql.ParseQuery("PREFIX ub: <" + ub + "> SELECT * WHERE { " + where + " }")
			if err != nil {
				t.Fatal(err)
			}
			var pp *sparql.PathPattern
			sparql.Walk(q.Pattern, func(p sparql.Pattern) bool {
				if x, ok := p.(*sparql.PathPattern); ok {
					pp = x
				}
				return true
			})
			got := runPath(t, e, pp)
			want := refPath(triples, pp)
			if len(want) == 0 {
				t.Fatalf("%s: the reference finds nothing", where)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%d shards: %s: %d solutions, want %d", shards, where, len(got), len(want))
			}
		}
	}
}

// TestPathAfterExploration: a path seeded by an exploration's rows
// (?x :q ?m . ?m PATH ?y) against the reference join, random paths, 1 and
// 4 shards, every mode.
func TestPathAfterExploration(t *testing.T) {
	triples := pathGraph()
	engines := []*Engine{newTestEngine(t, triples, 1), newTestEngine(t, triples, 4)}
	rng := rand.New(rand.NewSource(11))
	nonEmpty := 0
	defer func() {
		if nonEmpty < 20 {
			t.Errorf("only %d of 60 random paths have solutions", nonEmpty)
		}
	}()
	for i := 0; i < 60; i++ {
		// |:zz (no such edge) keeps a top-level sequence from being
		// rewritten into several patterns.
		path := "(" + randomPath(rng, 2) + "|:zz)"
		q, err := sparql.ParseQuery("PREFIX : <" + px + "> SELECT ?x ?m ?y WHERE { ?x :q ?m . ?m " + path + " ?y }")
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var pp *sparql.PathPattern
		sparql.Walk(q.Pattern, func(p sparql.Pattern) bool {
			if x, ok := p.(*sparql.PathPattern); ok {
				pp = x
			}
			return true
		})
		var want []string
		for _, line := range refPath(triples, pp) {
			f := strings.Fields(line)
			for _, tr := range triples {
				if tr.P == iri("q") && tr.O.String() == f[0] {
					want = append(want, tr.S.String()+" "+f[0]+" "+f[1])
				}
			}
		}
		slices.Sort(want)
		if len(want) > 0 {
			nonEmpty++
		}
		for _, e := range engines {
			for _, mode := range []planner.Mode{planner.ModeAuto, planner.ModeInPlace, planner.ModeForkJoin} {
				res, err := e.Run(context.Background(), q, Options{Mode: mode})
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				var got []string
				var row []rdf.Term
				for r := 0; r < res.Len(); r++ {
					row = res.Row(r, row)
					got = append(got, row[0].String()+" "+row[1].String()+" "+row[2].String())
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("%d shards, %s: %s:\ngot  %q\nwant %q", e.Store().Shards(), mode, path, got, want)
				}
			}
		}
	}
}
