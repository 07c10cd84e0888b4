package exec

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

func tab(vars string, rows ...[]ID) *Table {
	t := &Table{N: len(rows)}
	for i, v := range strings.Fields(vars) {
		t.Vars = append(t.Vars, sparql.Var(v))
		col := make([]ID, len(rows))
		for r, row := range rows {
			col[r] = row[i]
		}
		t.Cols = append(t.Cols, col)
	}
	return t
}

// rowsOf renders t's rows over vars (sorted), 0 as "-".
func rowsOf(t *Table, vars string) string {
	var lines []string
	for r := 0; r < t.N; r++ {
		var f []string
		for _, v := range strings.Fields(vars) {
			c := t.Col(sparql.Var(v))
			x := ID(0)
			if c >= 0 {
				x = t.At(c, r)
			}
			if x == 0 {
				f = append(f, "-")
			} else {
				f = append(f, itoa(x))
			}
		}
		lines = append(lines, strings.Join(f, " "))
	}
	sortStrings(lines)
	return strings.Join(lines, "|")
}

func itoa(x ID) string {
	const digits = "0123456789"
	if x == 0 {
		return "0"
	}
	var b []byte
	for ; x > 0; x /= 10 {
		b = append([]byte{digits[x%10]}, b...)
	}
	return string(b)
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Joins treat an unbound value (0) as compatible with anything, and merge
// the bound one.
func TestHashJoinUnbound(t *testing.T) {
	l := tab("x y", []ID{1, 0}, []ID{2, 5}, []ID{0, 6})
	r := tab("x z", []ID{1, 10}, []ID{2, 20}, []ID{0, 30})
	got := rowsOf(joinAll(l, r), "x y z")
	// (1,-) joins (1,10) and (-,30); (2,5) joins (2,20) and (-,30);
	// (-,6) joins every right row, taking its x.
	want := "- 6 30|1 - 10|1 - 30|1 6 10|2 5 20|2 5 30|2 6 20"
	if got != want {
		t.Errorf("join:\n got %s\nwant %s", got, want)
	}
	// No shared variable: the cross product.
	if n := joinAll(tab("a", []ID{1}, []ID{2}), tab("b", []ID{3}, []ID{4}, []ID{5})).N; n != 6 {
		t.Errorf("cross product of 2 and 3 rows: %d rows", n)
	}
	// An empty side gives no rows, but every variable.
	e := joinAll(tab("a"), tab("b", []ID{3}))
	if e.N != 0 || e.Col("b") < 0 {
		t.Errorf("join with an empty side: %d rows, vars %v", e.N, e.Vars)
	}
}

// MINUS removes a left row only when a compatible right row shares a
// variable bound in both.
func TestMinusSemantics(t *testing.T) {
	l := tab("x y", []ID{1, 2}, []ID{3, 0}, []ID{5, 6})
	cases := []struct {
		r    *Table
		want string
	}{
		{tab("z", []ID{1}), "1 2|3 -|5 6"},                      // nothing shared: nothing removed
		{tab("x", []ID{1}), "3 -|5 6"},                          // shares x
		{tab("y", []ID{9}), "1 2|3 -|5 6"},                      // (3,-) is compatible but shares nothing bound
		{tab("y", []ID{0}), "1 2|3 -|5 6"},                      // shared only through unbound values
		{tab("x y", []ID{5, 7}), "1 2|3 -|5 6"},                 // incompatible on y
		{tab("x y", []ID{3, 7}), "1 2|5 6"},                     // compatible (y unbound on the left), shares x
		{tab("x y", []ID{0, 6}, []ID{1, 0}), "3 -"},             // unbound on the right
		{tab("x y"), "1 2|3 -|5 6"},                             // empty right
		{tab("x w", []ID{1, 1}, []ID{1, 2}, []ID{3, 3}), "5 6"}, // several matches, extra variable
		{tab("y x", []ID{6, 5}), "1 2|3 -"},                     // column order does not matter
		{tab("x y", []ID{0, 7}), "1 2|3 -|5 6"},                 // compatible with (3,-) but nothing bound in both
		{tab("x y", []ID{1, 2}, []ID{5, 6}), "3 -"},             // exact rows
		{tab("y", []ID{2}, []ID{6}), "3 -"},                     // by y only
	}
	for i, c := range cases {
		if got := rowsOf(minusAll(l, c.r), "x y"); got != c.want {
			t.Errorf("case %d: MINUS %v %s:\n got %q\nwant %q", i, c.r.Vars, rowsOf(c.r, strings.Join(varStrings(c.r.Vars), " ")), got, c.want)
		}
	}
}

func varStrings(vs []sparql.Var) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func TestUnionAligns(t *testing.T) {
	u, err := unionTables(context.Background(), nil, tab("x y", []ID{1, 2}), tab("z x", []ID{3, 4}))
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsOf(u, "x y z"); got != "1 2 -|4 - 3" {
		t.Errorf("union: %s", got)
	}
}

// operatorQueries exercise every operator on the differential data (a
// LUBM slice and a few corner-case triples, diffData).
var operatorQueries = []string{
	`SELECT ?x ?a WHERE { ?x ex:age ?a FILTER(?a > 9) }`,
	`SELECT ?x ?n WHERE { ?x ex:knows ?y OPTIONAL { ?x ex:name ?n } }`,
	`SELECT ?x ?n WHERE { ?x ex:knows ?y OPTIONAL { ?x ex:name ?n FILTER(LANG(?n) = "fr") } }`,
	`SELECT ?x ?o WHERE { ?x ex:age ?a OPTIONAL { ?x ex:knows ?o FILTER(?o != ?x && ?a > 9) } }`,
	`SELECT ?s ?e WHERE { ?s ub:advisor ?a OPTIONAL { ?s ub:emailAddress ?e FILTER(CONTAINS(STR(?a), "Full") && CONTAINS(?e, "0")) } }`,
	`SELECT ?x WHERE { { ?x ex:age ?a } UNION { ?x ex:label ?l } }`,
	`SELECT ?x WHERE { ?x ex:knows ?y MINUS { ?x ex:age 10 } }`,
	`SELECT ?x ?a WHERE { ?x ex:knows ?y OPTIONAL { ?y ex:age ?a } MINUS { ?z ex:age ?a FILTER(?a > 9) } }`,
	`SELECT ?s ?c WHERE { ?s ub:takesCourse ?c MINUS { ?s ub:advisor ?a . ?a ub:teacherOf ?c } }`,
	`SELECT ?x ?z WHERE { ?x ex:age ?a BIND(?a * 2 AS ?z) FILTER(?z > 18) }`,
	`SELECT ?x ?v WHERE { VALUES (?x ?v) { (ex:a 1) (ex:b UNDEF) (ex:zzz 3) } ?x ex:knows ?y }`,
	`SELECT ?x ?y WHERE { ?x ex:knows ?y } VALUES ?y { ex:a ex:zzz }`,
	`SELECT ?y (COUNT(*) AS ?c) (SUM(?a) AS ?s) WHERE { ?x ex:knows ?y OPTIONAL { ?x ex:age ?a } } GROUP BY ?y HAVING (COUNT(*) > 0)`,
	`SELECT (COUNT(?x) AS ?c) (AVG(?a) AS ?avg) (MIN(?a) AS ?min) WHERE { ?x ex:nothing ?a }`,
	`SELECT ?x WHERE { ?x ex:knows ?y FILTER EXISTS { ?y ex:age ?a FILTER(?a < 10) } }`,
	`SELECT ?x WHERE { ?x ex:knows ?y FILTER NOT EXISTS { ?y ex:age 9 } }`,
	`SELECT ?x ?m WHERE { ?x ex:age ?a { SELECT (MAX(?b) AS ?m) WHERE { ?z ex:age ?b } } FILTER(?a = ?m) }`,
	`SELECT ?s ?a WHERE { ?s ub:advisor ?a . ?s a ub:GraduateStudent FILTER(STRENDS(STR(?a), "2")) }`,
	`SELECT ?s ?c WHERE { ?s ub:takesCourse ?c . ?s ub:advisor ?a . ?a ub:teacherOf ?c }`,
	`SELECT ?s ?e WHERE { ?s a ub:GraduateStudent OPTIONAL { ?s ub:emailAddress ?e FILTER(CONTAINS(?e, "1")) } }`,
	`SELECT DISTINCT ?c WHERE { ?s ub:takesCourse ?c } ORDER BY DESC(STR(?c)) LIMIT 5`,
	`SELECT ?s (COUNT(DISTINCT ?c) AS ?n) WHERE { ?s ub:takesCourse ?c } GROUP BY ?s ORDER BY DESC(?n) ?s LIMIT 10`,
	`SELECT ?s ?t WHERE { ?s ub:advisor ?a { ?a ub:teacherOf ?t } UNION { ?a ub:researchInterest ?t } }`,
	`ASK { ?s ub:advisor ?a FILTER(?s = ?a) }`,
	`CONSTRUCT { ?a ex:advises ?s . ?s ex:tag [ ex:of ?a ] } WHERE { ?s ub:advisor ?a } ORDER BY ?s ?a LIMIT 20`,
	`DESCRIBE ex:a ex:b`,
}

// The operators give the same answers on 1 and 4 shards, in every mode
// and with a fork threshold of one row (every step forks).
func TestOperatorsAcrossModes(t *testing.T) {
	triples := diffData(t, 6000)
	one := newTestEngine(t, triples, 1)
	four := newTestEngine(t, triples, 4)
	ctx := context.Background()
	prefix := "PREFIX ex: <http://example.org/> PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
	type config struct {
		name string
		e    *Engine
		opts Options
	}
	configs := []config{
		{"4/in-place", four, Options{Mode: planner.ModeInPlace}},
		{"4/fork-join", four, Options{Mode: planner.ModeForkJoin}},
		{"4/threshold-1", four, Options{ForkThreshold: 1}},
		{"1/auto", one, Options{}},
	}
	for _, text := range operatorQueries {
		q, err := sparql.ParseQuery(prefix + text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		want, err := one.Run(ctx, q, Options{ForkThreshold: 1})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		ws := answerString(want)
		if strings.Count(ws, "\n") < 2 && !strings.Contains(text, "nothing") && !strings.HasPrefix(text, "ASK") {
			t.Errorf("%s: a test query should have answers:\n%s", text, ws)
		}
		for _, c := range configs {
			res, err := c.e.Run(ctx, q, c.opts)
			if err != nil {
				t.Errorf("%s [%s]: %v", text, c.name, err)
				continue
			}
			if got := answerString(res); got != ws {
				t.Errorf("%s [%s]:\n got %s\nwant %s\n%s", text, c.name, got, ws, Explain(res.Plan, nil, c.e.Store()))
			}
		}
	}
}

// answerString renders any answer sorted, blank nodes of CONSTRUCT
// numbered by first appearance after sorting by the other positions.
func answerString(res *Result) string {
	switch res.Form {
	case sparql.FormAsk:
		if res.Boolean {
			return "true\n"
		}
		return "false\n"
	case sparql.FormConstruct, sparql.FormDescribe:
		var lines []string
		for i := 0; i < res.NumTriples(); i++ {
			tr := res.Triple(i)
			f := []string{}
			for _, x := range []rdf.Term{tr.S, tr.P, tr.O} {
				if x.IsBlank() {
					f = append(f, "_:b")
				} else {
					f = append(f, x.String())
				}
			}
			lines = append(lines, strings.Join(f, " "))
		}
		sortStrings(lines)
		return strings.Join(lines, "\n") + "\n"
	}
	return tsv(res)
}

// The plan states the join algorithm, the pushed filters and the seeds,
// and EXPLAIN prints them.
func TestPlanStatesChoices(t *testing.T) {
	triples := diffData(t, 6000)
	e := newTestEngine(t, triples, 4)
	prefix := "PREFIX ex: <http://example.org/> PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
	q, err := sparql.ParseQuery(prefix + `SELECT ?s ?e WHERE {
		?s a ub:GraduateStudent ; ub:advisor ?a FILTER(STRLEN(STR(?a)) > 5)
		OPTIONAL { ?s ub:emailAddress ?e }
		FILTER NOT EXISTS { ?a ub:worksFor ex:nowhere }
	}`)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := e.Plan(q, Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := Explain(plan, nil, e.Store())
	for _, want := range []string{"optional", "filter", "after step", "EXISTS pattern 1", "seed"} {
		if !strings.Contains(text, want) {
			t.Errorf("EXPLAIN lacks %q:\n%s", want, text)
		}
	}
	var pushed, seeded int
	for _, ex := range plan.Explores() {
		pushed += len(ex.Filters)
		if ex.Seed != nil {
			seeded++
		}
	}
	if pushed != 1 || seeded < 1 {
		t.Errorf("%d pushed filters, %d seeded explorations; want 1 and ≥ 1:\n%s", pushed, seeded, text)
	}
	res, err := e.Execute(context.Background(), plan, Options{Analyze: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Len() == 0 {
		t.Fatal("no answers")
	}
	if a := Explain(plan, res.Analysis, e.Store()); !strings.Contains(a, "rows ") {
		t.Errorf("EXPLAIN ANALYZE without measurements:\n%s", a)
	}
}

// A bind join is chosen when the left side is small and the right side's
// own exploration is large; a hash join when the left side is large and
// the right side small.
func TestBindOrHashJoin(t *testing.T) {
	triples := diffData(t, 6000)
	e := newTestEngine(t, triples, 1)
	prefix := "PREFIX ex: <http://example.org/> PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
	algo := func(text string) planner.JoinAlgo {
		q, err := sparql.ParseQuery(prefix + text)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.Plan(q, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var found planner.JoinAlgo
		var walk func(n planner.Node)
		walk = func(n planner.Node) {
			if j, ok := n.(*planner.Join); ok && found == 0 {
				found = j.Algo
			}
			for _, c := range planner.Children(n) {
				walk(c)
			}
		}
		walk(p.Root)
		return found
	}
	// VALUES of two rows, then every course they take: explore from them.
	if a := algo(`SELECT * WHERE { VALUES ?s { ex:a ex:b } ?s ub:takesCourse ?c }`); a != planner.BindJoin {
		t.Errorf("small left side: %v, want a bind join", a)
	}
	// A trailing VALUES is joined first, too.
	if a := algo(`SELECT * WHERE { ?s ub:takesCourse ?c } VALUES ?s { ex:a ex:b }`); a != planner.BindJoin {
		t.Errorf("trailing VALUES: %v, want a bind join", a)
	}
	// Every takesCourse or advisor edge (left), then the advisors of the
	// two vertices a constant knows: exploring from every left row (back
	// along advisor) costs more than exploring from the constant once and
	// hashing.
	if a := algo(`SELECT * WHERE { { ?s ub:takesCourse ?c } UNION { ?s ub:advisor ?c } ex:a ex:knows ?m . ?m ub:advisor ?s }`); a != planner.HashJoin {
		t.Errorf("large left side, small right side: %v, want a hash join", a)
	}
}

// panicStore panics on every lookup after the first n.
type panicStore struct {
	*GraphStore
	left atomic.Int64
}

func (p *panicStore) Lookup(ctx context.Context, self, shard int, keys []Key, out [][]ID) (ReadCost, error) {
	if p.left.Add(-1) < 0 {
		panic("store lookup exploded")
	}
	return p.GraphStore.Lookup(ctx, self, shard, keys, out)
}

// A panic on a worker (the coordinator's or a forked child's) becomes the
// query's error, and the engine keeps answering.
func TestWorkerPanicIsAnError(t *testing.T) {
	triples := diffData(t, 3000)
	for _, shards := range []int{1, 4} {
		gs, err := NewGraphStore(buildGraph(t, triples, shards))
		if err != nil {
			t.Fatal(err)
		}
		ps := &panicStore{GraphStore: gs}
		e := New(ps, gs.Port(), Config{Workers: 2})
		q, err := sparql.ParseQuery(`PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>
			SELECT ?s ?c WHERE { ?s ub:takesCourse ?c . ?s ub:advisor ?a }`)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []planner.Mode{planner.ModeInPlace, planner.ModeForkJoin} {
			ps.left.Store(2)
			_, err := e.Run(context.Background(), q, Options{Mode: mode})
			if err == nil || !strings.Contains(err.Error(), "store lookup exploded") {
				t.Errorf("%d shards, %v: error %v, want the panic", shards, mode, err)
			}
			ps.left.Store(1 << 40)
			if res, err := e.Run(context.Background(), q, Options{Mode: mode}); err != nil || res.Len() == 0 {
				t.Errorf("%d shards, %v: after a panic: %v, %v rows", shards, mode, err, res)
			}
		}
		e.Close()
	}
}

// Forked children apply the filters pushed into the exploration: the rows
// a filtered step gives, summed over the nodes, are the answers.
func TestForkedChildrenFilter(t *testing.T) {
	e := newTestEngine(t, diffData(t, 6000), 4)
	q, err := sparql.ParseQuery(`PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>
		SELECT ?s ?c WHERE { ?s ub:takesCourse ?c . ?s ub:advisor ?a FILTER(STRENDS(STR(?c), "1") && ?a != ?c) }`)
	if err != nil {
		t.Fatal(err)
	}
	all, err := e.Run(context.Background(), readQueryText(t, `PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>
		SELECT ?s ?c WHERE { ?s ub:takesCourse ?c . ?s ub:advisor ?a }`), Options{Mode: planner.ModeForkJoin})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background(), q, Options{Mode: planner.ModeForkJoin, Analyze: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Len() == 0 || res.Len() >= all.Len() {
		t.Fatalf("%d answers of %d: the filter should keep some", res.Len(), all.Len())
	}
	ex := res.Plan.Explores()[0]
	if len(ex.Filters) != 2 {
		t.Fatalf("filters %v, want both conjuncts pushed", ex.Filters)
	}
	last := max(ex.Filters[0].After, ex.Filters[1].After)
	if last != len(ex.Steps)-1 {
		t.Fatalf("filters %v, want the last after the last step", ex.Filters)
	}
	st := res.Analysis.Of(ex).Steps[last]
	if st.Forks == 0 && res.Analysis.Of(ex).Steps[0].Forks == 0 {
		t.Fatalf("nothing forked:\n%s", Explain(res.Plan, res.Analysis, e.Store()))
	}
	if int(st.RowsOut) != res.Len() {
		t.Errorf("the filtered step gave %d rows over the nodes, %d answers:\n%s", st.RowsOut, res.Len(), Explain(res.Plan, res.Analysis, e.Store()))
	}
}

// joinAll and minusAll run hashJoin and minus without a deadline.
func joinAll(l, r *Table) *Table {
	t, err := hashJoin(context.Background(), nil, l, r)
	if err != nil {
		panic(err)
	}
	return t
}

func minusAll(l, r *Table) *Table {
	t, err := minus(context.Background(), nil, l, r)
	if err != nil {
		panic(err)
	}
	return t
}

// TestSortStopping: a sort whose context is done stops at its next look
// (after at most checkEvery comparisons), not after its n log n; with a
// live context it sorts stably.
func TestSortStopping(t *testing.T) {
	src := make([]int32, 1<<20)
	for i := range src {
		src[i] = int32((i * 7919) % 1000)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	sc := stopCheck{ctx: ctx}
	err := sortStopping(src, &sc, func(a, b int32) int { calls++; return int(a - b) })
	if !errors.Is(err, context.Canceled) || calls >= checkEvery {
		t.Errorf("cancelled sort: %v after %d comparisons", err, calls)
	}
	idx := []int32{3, 1, 2, 0, 4}
	keys := []int{1, 0, 1, 0, 1}
	if err := sortStopping(idx, &stopCheck{ctx: context.Background()}, func(a, b int32) int { return keys[a] - keys[b] }); err != nil {
		t.Fatal(err)
	}
	if want := []int32{3, 1, 2, 0, 4}; !slices.Equal(idx, want) {
		t.Errorf("sorted %v, want %v (stable)", idx, want)
	}
}
