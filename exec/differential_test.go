package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/datasets"
	"github.com/wukongd/wukongd/exec/refeval"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// diffData is a slice of a generated LUBM university plus triples for the
// corner cases: a self-loop, a vertex whose only triple is rdf:type, typed
// numeric literals, a class that is also a subject.
func diffData(t testing.TB, n int) []rdf.Triple {
	t.Helper()
	var triples []rdf.Triple
	_, err := datasets.GenerateLUBMTriples(datasets.LUBMConfig{Universities: 1, Seed: 11, Workers: 1}, func(tr rdf.Triple) error {
		if len(triples) < n {
			triples = append(triples, tr)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ex := func(s string) rdf.Term { return rdf.NewIRI("http://example.org/" + s) }
	typ := rdf.NewIRI(rdf.RDFType)
	triples = append(triples,
		rdf.Triple{S: ex("a"), P: ex("knows"), O: ex("a")},
		rdf.Triple{S: ex("a"), P: ex("knows"), O: ex("b")},
		rdf.Triple{S: ex("b"), P: ex("knows"), O: ex("a")},
		rdf.Triple{S: ex("lonely"), P: typ, O: ex("Thing")},
		rdf.Triple{S: ex("a"), P: typ, O: ex("Thing")},
		rdf.Triple{S: ex("a"), P: ex("age"), O: rdf.NewLiteral("10", rdf.XSDInteger)},
		rdf.Triple{S: ex("b"), P: ex("age"), O: rdf.NewLiteral("9", rdf.XSDInteger)},
		rdf.Triple{S: ex("b"), P: ex("name"), O: rdf.NewLangLiteral("Bee", "en")},
		rdf.Triple{S: ex("Thing"), P: ex("label"), O: rdf.NewLiteral("thing", "")},
		rdf.Triple{S: ex("knows"), P: ex("label"), O: rdf.NewLiteral("knows", "")},
	)
	return triples
}

// randomQuery makes a connected BGP by a random walk over the data, turns
// most vertices (and some predicates) into variables, and adds random
// projection, DISTINCT, ORDER BY and LIMIT/OFFSET.
func randomQuery(rng *rand.Rand, triples []rdf.Triple, incident map[rdf.Term][]int) string {
	n := 1 + rng.IntN(5)
	picked := []int{rng.IntN(len(triples))}
	nodes := []rdf.Term{triples[picked[0]].S, triples[picked[0]].O}
	for len(picked) < n {
		v := nodes[rng.IntN(len(nodes))]
		inc := incident[v]
		if len(inc) == 0 {
			break
		}
		i := inc[rng.IntN(len(inc))]
		picked = append(picked, i)
		nodes = append(nodes, triples[i].S, triples[i].O)
	}
	names := map[rdf.Term]string{}
	nv := 0
	term := func(x rdf.Term, varProb float64) string {
		if name, ok := names[x]; ok {
			return name
		}
		if rng.Float64() < varProb {
			name := fmt.Sprintf("?v%d", nv)
			nv++
			names[x] = name
			return name
		}
		if rng.IntN(40) == 0 {
			return "<http://example.org/not-in-the-data>"
		}
		names[x] = x.String()
		return names[x]
	}
	var pats []string
	for _, i := range picked {
		tr := triples[i]
		s := term(tr.S, 0.8)
		p := term(tr.P, 0.12)
		o := term(tr.O, 0.7)
		pats = append(pats, s+" "+p+" "+o+" .")
	}
	var vars []string
	for _, name := range names {
		if strings.HasPrefix(name, "?") {
			vars = append(vars, name)
		}
	}
	sort.Strings(vars)
	proj := "*"
	if len(vars) > 0 && rng.IntN(2) == 0 {
		rng.Shuffle(len(vars), func(i, j int) { vars[i], vars[j] = vars[j], vars[i] })
		vars = vars[:1+rng.IntN(len(vars))]
		proj = strings.Join(vars, " ")
	}
	if len(vars) == 0 {
		proj = "*"
	}
	dist := ""
	if rng.IntN(4) == 0 {
		dist = "DISTINCT "
	}
	q := "SELECT " + dist + proj + " WHERE { " + strings.Join(pats, " ") + " }"
	if proj != "*" && rng.IntN(4) == 0 {
		var keys []string
		for _, v := range vars {
			if rng.IntN(2) == 0 {
				keys = append(keys, "DESC("+v+")")
			} else {
				keys = append(keys, v)
			}
		}
		q += " ORDER BY " + strings.Join(keys, " ")
		if rng.IntN(2) == 0 {
			q += fmt.Sprintf(" LIMIT %d", rng.IntN(20))
		}
		if rng.IntN(3) == 0 {
			q += fmt.Sprintf(" OFFSET %d", rng.IntN(5))
		}
	}
	return q
}

func rowStrings(rows [][]rdf.Term) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		f := make([]string, len(r))
		for j, x := range r {
			f[j] = x.String()
		}
		out[i] = strings.Join(f, "\t")
	}
	return out
}

func TestDifferential(t *testing.T) {
	triples := diffData(t, 6000)
	incident := map[rdf.Term][]int{}
	for i, tr := range triples {
		incident[tr.S] = append(incident[tr.S], i)
		incident[tr.O] = append(incident[tr.O], i)
	}
	ref := refeval.NewGraph(triples)
	ref.Limit = 20000
	rng := rand.New(rand.NewPCG(1, 2))
	nq := 120
	if testing.Short() {
		nq = 30
	}
	type testQuery struct {
		text    string
		q       *sparql.Query
		want    []string
		ordered bool
	}
	var queries []testQuery
	for len(queries) < nq {
		text := randomQuery(rng, triples, incident)
		q, err := sparql.ParseQuery(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		_, rows, err := ref.Eval(q)
		if errors.Is(err, refeval.ErrTooLarge) {
			continue // keep the test fast
		}
		if err != nil {
			t.Fatalf("reference on %s: %v", text, err)
		}
		want := rowStrings(rows)
		ordered := strings.Contains(text, "ORDER BY")
		if !ordered {
			sort.Strings(want)
		}
		queries = append(queries, testQuery{text, q, want, ordered})
	}
	nonEmpty := 0
	for _, q := range queries {
		if len(q.want) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < nq/2 {
		t.Fatalf("only %d of %d random queries have answers: the generator is too weak", nonEmpty, nq)
	}
	variants := []Options{
		{}, {Mode: modes[1]}, {Mode: modes[2]},
		{ForkThreshold: 1}, // auto, forking whenever remote data is needed
	}
	fused := 0 // plans with a fused intersection (Step.Intersect)
	for shards := 1; shards <= 8; shards++ {
		e := newTestEngine(t, triples, shards)
		for _, opts := range variants {
			for _, q := range queries {
				res, err := e.Run(context.Background(), q.q, opts)
				if err != nil {
					t.Fatalf("%d shards %+v: %s: %v", shards, opts, q.text, err)
				}
				for _, ex := range res.Plan.Explores() {
					for _, s := range ex.Steps {
						if s.Intersect {
							fused++
						}
					}
				}
				var rows [][]rdf.Term
				for i := 0; i < res.Len(); i++ {
					rows = append(rows, res.Row(i, nil))
				}
				got := rowStrings(rows)
				if !q.ordered {
					sort.Strings(got)
				}
				if strings.Join(got, "\n") != strings.Join(q.want, "\n") {
					t.Errorf("%d shards, mode %s threshold %v: %s\ngot %d rows, want %d\n%s", shards, opts.Mode, opts.ForkThreshold,
						q.text, len(got), len(q.want), Explain(res.Plan, nil, e.Store()))
				}
			}
		}
	}
	if fused == 0 {
		t.Error("no plan fused a check into an expansion (Step.Intersect): that path is not tested")
	}
	t.Logf("%d random queries (%d with answers) × 8 shard counts × %d variants agree with the reference (%d fused intersections)", nq, nonEmpty, len(variants), fused)
}

// randomOptionalQuery makes a query of OPTIONAL, nested groups, MINUS,
// UNION and FILTER over a random walk of 3–5 triples (turned into
// patterns as randomQuery does). The shapes nest the later patterns inside
// the earlier ones, and because the walk may attach a later triple to any
// earlier vertex, many of them are not well designed: a nested OPTIONAL
// or group reads a variable of the outer rows that its own left side does
// not bind.
func randomOptionalQuery(rng *rand.Rand, triples []rdf.Triple, incident map[rdf.Term][]int) string {
	n := 3 + rng.IntN(3)
	picked := []int{rng.IntN(len(triples))}
	nodes := []rdf.Term{triples[picked[0]].S, triples[picked[0]].O}
	for len(picked) < n {
		v := nodes[rng.IntN(len(nodes))]
		inc := incident[v]
		i := inc[rng.IntN(len(inc))]
		picked = append(picked, i)
		nodes = append(nodes, triples[i].S, triples[i].O)
	}
	names := map[rdf.Term]string{}
	var vars []string
	term := func(x rdf.Term, varProb float64) string {
		if name, ok := names[x]; ok {
			return name
		}
		if rng.Float64() < varProb {
			name := fmt.Sprintf("?v%d", len(vars))
			vars = append(vars, name)
			names[x] = name
			return name
		}
		names[x] = x.String()
		return names[x]
	}
	p := make([]string, len(picked))
	for k, i := range picked {
		tr := triples[i]
		p[k] = term(tr.S, 0.85) + " " + term(tr.P, 0.05) + " " + term(tr.O, 0.75) + " ."
	}
	rest := strings.Join(p[3:], " ")
	v := func() string {
		if len(vars) == 0 {
			return "?none"
		}
		return vars[rng.IntN(len(vars))]
	}
	var body string
	switch rng.IntN(8) {
	case 0:
		body = fmt.Sprintf("%s OPTIONAL { %s %s } OPTIONAL { %s }", p[0], p[1], rest, p[2])
	case 1:
		body = fmt.Sprintf("%s OPTIONAL { %s OPTIONAL { %s %s } }", p[0], p[1], p[2], rest)
	case 2:
		body = fmt.Sprintf("%s { %s OPTIONAL { %s } } %s", p[0], p[1], p[2], rest)
	case 3:
		body = fmt.Sprintf("%s OPTIONAL { %s { %s FILTER(BOUND(%s)) } } %s", p[0], p[1], p[2], v(), rest)
	case 4:
		body = fmt.Sprintf("%s OPTIONAL { %s %s FILTER(!BOUND(%s) || %s = %s) } OPTIONAL { %s }", p[0], p[1], rest, v(), v(), v(), p[2])
	case 5:
		body = fmt.Sprintf("%s { %s MINUS { %s } } %s", p[0], p[1], p[2], rest)
	case 6:
		body = fmt.Sprintf("{ %s } UNION { %s } OPTIONAL { %s %s }", p[0], p[1], p[2], rest)
	default:
		body = fmt.Sprintf("%s OPTIONAL { %s OPTIONAL { %s } } { %s FILTER(BOUND(%s)) }", p[0], p[1], p[2], rest, v())
	}
	return "SELECT * WHERE { " + body + " }"
}

// TestDifferentialOptional checks OPTIONAL, nested groups, MINUS and
// FILTER — well designed or not — against the reference evaluator, which
// evaluates every operand on its own (bottom up), on 1, 2 and 4 shards in
// every execution mode.
func TestDifferentialOptional(t *testing.T) {
	triples := diffData(t, 1500)
	incident := map[rdf.Term][]int{}
	for i, tr := range triples {
		incident[tr.S] = append(incident[tr.S], i)
		incident[tr.O] = append(incident[tr.O], i)
	}
	ref := refeval.NewGraph(triples)
	ref.Limit = 1000
	rng := rand.New(rand.NewPCG(3, 4))
	nq := 80
	if testing.Short() {
		nq = 30
	}
	type testQuery struct {
		text string
		q    *sparql.Query
		want []string
	}
	var queries []testQuery
	nonEmpty, partial := 0, 0
	for tries := 0; len(queries) < nq && tries < 50*nq; tries++ {
		text := randomOptionalQuery(rng, triples, incident)
		q, err := sparql.ParseQuery(text)
		if err != nil {
			continue // e.g. a blank node shared across groups
		}
		_, rows, err := ref.Eval(q)
		if errors.Is(err, refeval.ErrTooLarge) || errors.Is(err, refeval.ErrUnsupported) {
			continue
		}
		if err != nil {
			t.Fatalf("reference on %s: %v", text, err)
		}
		want := rowStrings(rows)
		sort.Strings(want)
		if len(want) > 0 {
			nonEmpty++
		}
		for _, r := range rows {
			for _, x := range r {
				if x.IsZero() {
					partial++ // an unbound column: some OPTIONAL did not match
					break
				}
			}
		}
		queries = append(queries, testQuery{text, q, want})
	}
	if len(queries) < nq || nonEmpty < nq/2 || partial == 0 {
		t.Fatalf("%d queries, %d with answers, %d rows with unbound columns: the generator is too weak", len(queries), nonEmpty, partial)
	}
	variants := []Options{{}, {Mode: modes[1]}, {Mode: modes[2]}, {ForkThreshold: 1}}
	for _, shards := range []int{1, 2, 4} {
		e := newTestEngine(t, triples, shards)
		for _, opts := range variants {
			for _, q := range queries {
				res, err := e.Run(context.Background(), q.q, opts)
				if err != nil {
					t.Fatalf("%d shards %+v: %s: %v", shards, opts, q.text, err)
				}
				var rows [][]rdf.Term
				for i := 0; i < res.Len(); i++ {
					rows = append(rows, res.Row(i, nil))
				}
				got := rowStrings(rows)
				sort.Strings(got)
				if strings.Join(got, "\n") != strings.Join(q.want, "\n") {
					t.Errorf("%d shards, mode %s threshold %v: %s\ngot %d rows, want %d\n%s", shards, opts.Mode, opts.ForkThreshold,
						q.text, len(got), len(q.want), Explain(res.Plan, nil, e.Store()))
				}
			}
		}
	}
	t.Logf("%d random OPTIONAL/group/MINUS queries (%d with answers, %d rows with unbound columns) × 3 shard counts × %d variants agree with the reference",
		len(queries), nonEmpty, partial, len(variants))
}
