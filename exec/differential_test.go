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
	for shards := 1; shards <= 8; shards++ {
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
	t.Logf("%d random queries (%d with answers) × 8 shard counts × %d variants agree with the reference", nq, nonEmpty, len(variants))
}
