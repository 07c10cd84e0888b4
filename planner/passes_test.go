package planner

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

func mustParse(t *testing.T, text string) *sparql.Query {
	t.Helper()
	q, err := sparql.ParseQuery("PREFIX : <http://ex/>\n" + text)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// findNodes returns the nodes of type T under n, in pre-order.
func findNodes[T Node](n Node) []T {
	var out []T
	walkNodes(n, func(n Node) {
		if x, ok := n.(T); ok {
			out = append(out, x)
		}
	})
	return out
}

// fakeEval folds only additions of integers (enough to see the pass
// replace what it may and keep what it must).
func fakeEval(e sparql.Expr) (rdf.Term, error) {
	b, ok := e.(*sparql.BinaryExpr)
	if !ok {
		if c, ok := e.(*sparql.CallExpr); ok && c.Name == "STR" {
			return rdf.NewLiteral(c.Args[0].(*sparql.TermExpr).Term.Value, ""), nil
		}
		return rdf.Term{}, errors.New("not folded")
	}
	l, r := b.L.(*sparql.TermExpr).Term.Value, b.R.(*sparql.TermExpr).Term.Value
	switch b.Op {
	case "+":
		if l == "1" && r == "1" {
			return rdf.NewLiteral("2", rdf.XSDInteger), nil
		}
	case "=":
		if l == r {
			return rdf.NewLiteral("true", rdf.XSD+"boolean"), nil
		}
	}
	return rdf.Term{}, errors.New("not folded")
}

func TestFoldConstants(t *testing.T) {
	q := mustParse(t, `SELECT ?x ?y ?z WHERE { ?x :takes ?c FILTER(1 + 1 = 2) BIND(STR(1 + 1) AS ?y) BIND(RAND() + 1 AS ?z) }`)
	p, err := Build(q, testCatalog(), testStats(1), Options{ConstEval: fakeEval})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findNodes[*Filter](p.Root) {
		if len(f.Exprs) != 0 {
			t.Errorf("FILTER(1 + 1 = 2) folds to true and goes, kept %v", f.Exprs)
		}
	}
	ext := findNodes[*Extend](p.Root)
	if len(ext) != 1 || len(ext[0].Binds) != 2 {
		t.Fatalf("extends %v, want one with two binds", ext)
	}
	if te, ok := ext[0].Binds[0].Expr.(*sparql.TermExpr); !ok || te.Term.Value != "2" {
		t.Errorf("STR(1 + 1) folded to %v, want \"2\"", ext[0].Binds[0].Expr)
	}
	if _, ok := ext[0].Binds[1].Expr.(*sparql.BinaryExpr); !ok {
		t.Errorf("RAND() + 1 must not fold: %v", ext[0].Binds[1].Expr)
	}
	// The algebra is shared: folding does not change the query.
	if !strings.Contains(q.String(), "1 + 1") {
		t.Errorf("the query was rewritten: %s", q)
	}
}

func TestPushFilters(t *testing.T) {
	q := mustParse(t, `SELECT * WHERE {
		?x a :Student ; :takes ?c . ?c :name ?n
		FILTER(?c != :nothing) FILTER(STRLEN(?n) > 3) FILTER(?x != ?zz) FILTER EXISTS { ?x :name ?m } }`)
	cat := testCatalog()
	cat[iri("Student")] = 2
	p, err := Build(q, cat, testStats(4), Options{})
	if err != nil {
		t.Fatal(err)
	}
	exs := findNodes[*Explore](p.Root)
	if len(exs) != 1 {
		t.Fatalf("%d explorations under the root, want 1", len(exs))
	}
	ex := exs[0]
	if len(p.Exists) != 1 {
		t.Errorf("%d EXISTS plans, want 1", len(p.Exists))
	}
	if len(ex.Filters) != 2 {
		t.Fatalf("pushed %v, want the two filters on ?c and ?n", ex.Filters)
	}
	for _, f := range ex.Filters {
		want := -1
		for k, s := range ex.Steps {
			for v := range exprVars(f.Expr) {
				col := slices.Index(ex.Vars, v)
				if (s.ToNew && s.To.Col == col) && k > want {
					want = k
				}
			}
		}
		if f.After != want {
			t.Errorf("filter %s after step %d, want %d (the step binding its last variable)", f.Expr, f.After, want)
		}
	}
	fs := findNodes[*Filter](p.Root)
	if len(fs) != 1 || len(fs[0].Exprs) != 2 {
		t.Fatalf("filters left on the table: %v, want ?zz's and the EXISTS", fs)
	}
}

// The filter of an OPTIONAL runs inside its right side's exploration, also
// where it reads a left variable the right pattern does not mention (a
// carried seed column); conjuncts split.
func TestPushOptionalFilter(t *testing.T) {
	q := mustParse(t, `SELECT * WHERE { ?x :memberOf :dept0 ; :name ?n OPTIONAL { ?x :takes ?c FILTER(?c != ?n && BOUND(?zz)) } }`)
	p, err := Build(q, testCatalog(), testStats(4), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lj := findNodes[*LeftJoin](p.Root)[0]
	if lj.Expr == nil || !strings.Contains(lj.Expr.String(), "zz") || strings.Contains(lj.Expr.String(), "?n") {
		t.Errorf("OPTIONAL's filter left %v, want only BOUND(?zz)", lj.Expr)
	}
	ex := findNodes[*Join](lj.Right)[0].Right.(*Explore)
	if len(ex.Filters) != 1 || ex.Filters[0].After != 0 || !slices.Contains(ex.Carried, "n") {
		t.Errorf("right exploration: filters %v, carried %v; want ?c != ?n after its one step, ?n carried", ex.Filters, ex.Carried)
	}
}

func TestJoinChoiceAndSeeds(t *testing.T) {
	// OPTIONAL: the right side is seeded with the left rows; its BGP
	// shares ?x, bound in every left row: a join candidate.
	q := mustParse(t, `SELECT * WHERE { ?x :memberOf :dept0 OPTIONAL { ?x :takes ?c } }`)
	p, err := Build(q, testCatalog(), testStats(4), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lj := findNodes[*LeftJoin](p.Root)
	if len(lj) != 1 {
		t.Fatalf("no LeftJoin in %T", p.Root)
	}
	js := findNodes[*Join](lj[0].Right)
	if len(js) != 1 || js[0].Algo != BindJoin || !strings.Contains(js[0].Why, "bind") {
		t.Fatalf("OPTIONAL's right side: %+v, want a bind join from the few left rows", js)
	}
	if ex := js[0].Right.(*Explore); ex.Seed == nil || len(ex.SeedVars) != 1 || ex.SeedVars[0] != "x" {
		t.Errorf("the seeded exploration: seed %v, seed vars %v", ex.Seed, ex.SeedVars)
	}
	// A shared variable that may be unbound on the left forbids seeding.
	q = mustParse(t, `SELECT * WHERE { ?x :memberOf :dept0 OPTIONAL { ?x :name ?n } ?n :takes ?c }`)
	if p, err = Build(q, testCatalog(), testStats(4), Options{}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, j := range findNodes[*Join](p.Root) {
		if j.Algo == HashJoin && strings.Contains(j.Why, "unbound") {
			found = true
		}
	}
	if !found {
		t.Errorf("joining on ?n (unbound where OPTIONAL failed) must hash")
	}
	// A FILTER that reads a variable of the left side the filtered group
	// does not bind keeps its scope: no seeding.
	q = mustParse(t, `SELECT * WHERE { ?x :memberOf :dept0 . ?x :name ?n { ?y :takes ?c FILTER(?n != ?c) } }`)
	if p, err = Build(q, testCatalog(), testStats(4), Options{}); err != nil {
		t.Fatal(err)
	}
	found = false
	for _, j := range findNodes[*Join](p.Root) {
		if j.Algo == HashJoin && strings.Contains(j.Why, "FILTER reads ?n") {
			found = true
		}
	}
	if !found {
		t.Errorf("a filter of a nested group reading an outer variable: not hash-joined")
	}
}

func TestForms(t *testing.T) {
	for _, c := range []struct {
		text string
		form sparql.Form
	}{
		{`ASK { ?x :takes ?c }`, sparql.FormAsk},
		{`CONSTRUCT { ?x :t ?c } WHERE { ?x :takes ?c }`, sparql.FormConstruct},
		{`DESCRIBE ?x WHERE { ?x :takes ?c }`, sparql.FormDescribe},
		{`DESCRIBE :dept0`, sparql.FormDescribe},
	} {
		p, err := Build(mustParse(t, c.text), testCatalog(), testStats(2), Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		if p.Form != c.form {
			t.Errorf("%s: form %v", c.text, p.Form)
		}
		switch c.form {
		case sparql.FormAsk:
			if s, ok := p.Root.(*Slice); !ok || s.Limit != 1 {
				t.Errorf("ASK: root %T, want LIMIT 1", p.Root)
			}
		case sparql.FormConstruct:
			if len(p.Template) != 1 {
				t.Errorf("CONSTRUCT: template %v", p.Template)
			}
		case sparql.FormDescribe:
			d := p.Describe
			if d == nil || len(d.Explore.Steps) != 1 || !d.Explore.Steps[0].PredNew || d.Explore.Steps[0].From != Column(0) {
				t.Errorf("DESCRIBE: %+v, want one expansion over every predicate of the seeded resource", d)
			}
		}
	}
}

// TestWellDesignedSeeding: a nested OPTIONAL (or MINUS) whose right side
// reads a variable of the outer rows that its own left side may leave
// unbound is not well designed; it runs on its own and is hash-joined
// with the outer rows. A well-designed nesting keeps the seeded plan.
func TestWellDesignedSeeding(t *testing.T) {
	hashes := func(text, why string) bool {
		t.Helper()
		p, err := Build(mustParse(t, text), testCatalog(), testStats(4), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range findNodes[*Join](p.Root) {
			if j.Algo == HashJoin && strings.Contains(j.Why, why) {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		text, why string
		hash      bool
	}{
		// ?n: bound by the outer rows, read by the nested OPTIONAL's
		// right side, not bound by its left side.
		{`SELECT * WHERE { ?x :name ?n OPTIONAL { ?y :takes ?c OPTIONAL { ?y :name ?n } } }`, "the OPTIONAL reads ?n", true},
		{`SELECT * WHERE { ?x :name ?n { ?y :takes ?c OPTIONAL { ?y :name ?n } } }`, "the OPTIONAL reads ?n", true},
		{`SELECT * WHERE { ?x :name ?n { ?y :takes ?c MINUS { ?y :name ?n } } }`, "MINUS reads ?n", true},
		// The condition of the nested OPTIONAL reads the outer ?n.
		{`SELECT * WHERE { ?x :name ?n { ?y :takes ?c OPTIONAL { ?y :name ?m FILTER(?m = ?n) } } }`, "the OPTIONAL reads ?n", true},
		// Well designed: the nested OPTIONAL's left side binds ?n (or the
		// right side does not read it).
		{`SELECT * WHERE { ?x :name ?n OPTIONAL { ?y :name ?n OPTIONAL { ?y :takes ?c } } }`, "reads", false},
		{`SELECT * WHERE { ?x :name ?n OPTIONAL { ?x :takes ?c OPTIONAL { ?c :name ?m } } }`, "reads", false},
	} {
		if got := hashes(c.text, c.why); got != c.hash {
			t.Errorf("%s: hash join %q = %v, want %v", c.text, c.why, got, c.hash)
		}
	}
}
