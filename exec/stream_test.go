package exec

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// resultRows returns the rows of a result as sorted strings (or, ordered, in
// their order).
func resultRows(res *Result, ordered bool) []string {
	var rows [][]rdf.Term
	for i := 0; i < res.Len(); i++ {
		rows = append(rows, res.Row(i, nil))
	}
	out := rowStrings(rows)
	if !ordered {
		sort.Strings(out)
	}
	return out
}

// stepRows sums the rows every step made, over every node (the engine's
// own accounting of the work).
func stepRows(res *Result) uint64 {
	var n uint64
	for _, ea := range res.Analysis.Explores {
		for _, s := range ea.Steps {
			n += s.RowsOut
		}
	}
	return n
}

var earlyStopVariants = []Options{{}, {Mode: planner.ModeInPlace}, {Mode: planner.ModeForkJoin}, {ForkThreshold: 1}}

// TestEarlyStop: a LIMIT without ORDER BY, and ASK, give rows of the full
// answer (as many as asked, or all there are), and make a bounded number
// of rows on every shard, in place and forked: the cross product of every
// triple with every triple (36 million rows) stops after a few thousand.
func TestEarlyStop(t *testing.T) {
	triples := diffData(t, 6000)
	queries := []struct {
		limited, full string
		limit         int
	}{
		{`SELECT * { ?s ?p ?o } LIMIT 10`, `SELECT * { ?s ?p ?o }`, 10},
		{`SELECT * { ?s ?p ?o } LIMIT 5 OFFSET 7`, `SELECT * { ?s ?p ?o }`, 5},
		{`SELECT ?s ?n { ?s <http://example.org/knows> ?o BIND(STR(?o) AS ?n) } LIMIT 2`, `SELECT ?s ?n { ?s <http://example.org/knows> ?o BIND(STR(?o) AS ?n) }`, 2},
		{`SELECT * { ?s <http://example.org/knows> ?o } LIMIT 100`, `SELECT * { ?s <http://example.org/knows> ?o }`, 100},
		{`SELECT ?s { { ?s <http://example.org/age> ?o } UNION { ?s <http://example.org/knows> ?o } } LIMIT 3`,
			`SELECT ?s { { ?s <http://example.org/age> ?o } UNION { ?s <http://example.org/knows> ?o } }`, 3},
		{`SELECT ?x { ?x a <http://swat.cse.lehigh.edu/onto/univ-bench.owl#UndergraduateStudent> ; ?p ?o } LIMIT 50`,
			`SELECT ?x { ?x a <http://swat.cse.lehigh.edu/onto/univ-bench.owl#UndergraduateStudent> ; ?p ?o }`, 50},
	}
	for _, shards := range []int{1, 4} {
		e := newTestEngine(t, triples, shards)
		for _, opts := range earlyStopVariants {
			name := fmt.Sprintf("%d shards %s threshold %v", shards, opts.Mode, opts.ForkThreshold)
			for _, q := range queries {
				full, err := e.Query(context.Background(), q.full, opts)
				if err != nil {
					t.Fatalf("%s: %s: %v", name, q.full, err)
				}
				all := map[string]int{}
				for _, r := range resultRows(full, false) {
					all[r]++
				}
				res, err := e.Query(context.Background(), q.limited, opts)
				if err != nil {
					t.Fatalf("%s: %s: %v", name, q.limited, err)
				}
				want := min(q.limit, max(full.Len()-offsetOf(q.limited), 0))
				if res.Len() != want {
					t.Errorf("%s: %s: %d rows, want %d", name, q.limited, res.Len(), want)
				}
				for _, r := range resultRows(res, false) {
					if all[r] == 0 {
						t.Errorf("%s: %s: row %q is not in the full answer", name, q.limited, r)
					}
					all[r]--
				}
			}
			for _, q := range []string{`SELECT * { ?a ?b ?c . ?d ?e ?f } LIMIT 10`, `ASK { ?a ?b ?c . ?d ?e ?f }`} {
				o := opts
				o.Analyze = true
				res, err := e.Query(context.Background(), q, o)
				if err != nil {
					t.Fatalf("%s: %s: %v", name, q, err)
				}
				if strings.HasPrefix(q, "ASK") {
					if !res.Boolean {
						t.Errorf("%s: %s is false", name, q)
					}
				} else if res.Len() != 10 {
					t.Errorf("%s: %s: %d rows, want 10", name, q, res.Len())
				}
				if n := stepRows(res); n > 100_000 {
					t.Errorf("%s: %s made %d rows (the full product has %d)", name, q, n, len(triples)*len(triples))
				}
			}
			res, err := e.Query(context.Background(), `ASK { ?s <http://example.org/not-in-the-data> ?o }`, opts)
			if err != nil || res.Boolean {
				t.Errorf("%s: ASK of a missing predicate: %v, %v", name, res.Boolean, err)
			}
		}
	}
}

func offsetOf(q string) int {
	var n int
	if i := strings.Index(q, "OFFSET "); i >= 0 {
		fmt.Sscan(q[i+len("OFFSET "):], &n)
	}
	return n
}

// TestTopK: ORDER BY … LIMIT k gives the first k rows of the full sort,
// streamed or not, in every mode.
func TestTopK(t *testing.T) {
	triples := diffData(t, 6000)
	ub := "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
	for _, shards := range []int{1, 4} {
		e := newTestEngine(t, triples, shards)
		for _, opts := range earlyStopVariants {
			for _, order := range []string{"?x", "DESC(?x)", "?s ?p ?o", "DESC(?o) ?s ?p", "STR(?o) ?s ?p"} {
				var pattern string
				if strings.Contains(order, "?x") {
					pattern = "?x a <" + ub + "UndergraduateStudent>"
				} else {
					pattern = "?s ?p ?o"
				}
				full, err := e.Query(context.Background(), "SELECT * { "+pattern+" } ORDER BY "+order, opts)
				if err != nil {
					t.Fatal(err)
				}
				all := resultRows(full, true)
				for _, k := range []int{0, 1, 10, 1000, 100000} {
					q := fmt.Sprintf("SELECT * { %s } ORDER BY %s LIMIT %d", pattern, order, k)
					res, err := e.Query(context.Background(), q, opts)
					if err != nil {
						t.Fatal(err)
					}
					got, want := resultRows(res, true), all[:min(k, len(all))]
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("%d shards %+v: %s: got %d rows, want %d (first %q, want %q)", shards, opts, q, len(got), len(want), first(got), first(want))
					}
				}
			}
		}
	}
}

// TestTopKPartsSendK: an ORDER BY … LIMIT k over plain variables asks
// each forked part for its own k least rows, so the replies carry about
// shards × k rows, not the class; the answer is still the full sort's
// first k. A key already bound by the seed to query-local terms (VALUES)
// is not pushed, and answers as the full sort too.
func TestTopKPartsSendK(t *testing.T) {
	triples := diffData(t, 6000)
	ub := "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
	e := newTestEngine(t, triples, 4)
	ctx := context.Background()
	opts := Options{Mode: planner.ModeForkJoin, Analyze: true}
	order := "DESC(?o) ?s ?p"
	full, err := e.Query(ctx, "SELECT * { ?s ?p ?o } ORDER BY "+order, opts)
	if err != nil {
		t.Fatal(err)
	}
	n := full.Len()
	if n < 5000 {
		t.Fatalf("only %d triples: the test needs many more rows than k", n)
	}
	for _, k := range []int{1, 7} {
		res, err := e.Query(ctx, fmt.Sprintf("SELECT * { ?s ?p ?o } ORDER BY %s LIMIT %d", order, k), opts)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := resultRows(res, true), resultRows(full, true)[:k]; strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("LIMIT %d: got %q, want %q", k, got, want)
		}
		var msg uint64
		for _, ea := range res.Analysis.Explores {
			for _, s := range ea.Steps {
				msg += s.MessageBytes
			}
		}
		// Three children's replies of all their rows would carry about
		// 3/4 × n rows × 3 columns × 8 bytes; k rows each and the
		// sub-queries are far less.
		if limit := uint64(n); msg > limit {
			t.Errorf("LIMIT %d: %d bytes of fork messages for %d rows (want ≤ %d)", k, msg, n, limit)
		}
		t.Logf("LIMIT %d: %d bytes of fork messages for %d rows", k, msg, n)
	}
	// A seed's local terms in a key column: not pushed, still exact.
	q := "SELECT ?x ?s { VALUES ?x { \"b\" \"a\" \"c\" } ?s a <" + ub + "UndergraduateStudent> } ORDER BY ?x DESC(?s) LIMIT 4"
	fq := strings.TrimSuffix(q, " LIMIT 4")
	for _, o := range earlyStopVariants {
		a, err := e.Query(ctx, q, o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.Query(ctx, fq, o)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := resultRows(a, true), resultRows(b, true)[:4]; strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%+v: seed keys: got %q, want %q", o, got, want)
		}
	}
}

// TestLocalFirst: a fork-join index step under a small LIMIT or an ASK
// runs the coordinator's part first and forks nothing when that part has
// the rows; when it has not (rows of one subject only, wherever it
// lives), the other shards still give them.
func TestLocalFirst(t *testing.T) {
	triples := diffData(t, 6000)
	e := newTestEngine(t, triples, 4)
	ctx := context.Background()
	opts := Options{Mode: planner.ModeForkJoin, Analyze: true}
	forks := func(res *Result) (n uint64) {
		for _, ea := range res.Analysis.Explores {
			for _, s := range ea.Steps {
				n += s.Forks
			}
		}
		return n
	}
	for _, q := range []string{`ASK { ?s ?p ?o }`, `SELECT * { ?s ?p ?o } LIMIT 10`} {
		res, err := e.Query(ctx, q, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Form == sparql.FormAsk && !res.Boolean || res.Form != sparql.FormAsk && res.Len() != 10 {
			t.Fatalf("%s: %v, %d rows", q, res.Boolean, res.Len())
		}
		if n := forks(res); n != 0 {
			t.Errorf("%s: %d forks, want none (the coordinator's shard has the rows)", q, n)
		}
	}
	// A hub subject with 40,000 triples on one shard: the average shard
	// (the estimate's) has far more rows than the others, so a LIMIT of
	// 2,500 is taken locally first and, on a shard without the hub (about
	// 1,500 rows), falls short: the others give the rest. The
	// coordinator rotates, so the runs fall short on most shards.
	hub := rdf.NewIRI("http://example.org/hub")
	skewed := append([]rdf.Triple(nil), triples...)
	for i := 0; i < 40000; i++ {
		skewed = append(skewed, rdf.Triple{S: hub, P: rdf.NewIRI("http://example.org/n"), O: rdf.NewLiteral(fmt.Sprint(i), rdf.XSDInteger)})
	}
	es := newTestEngine(t, skewed, 4)
	full, err := es.Query(ctx, `SELECT * { ?s ?p ?o }`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]bool{}
	for _, r := range resultRows(full, false) {
		all[r] = true
	}
	for run := 0; run < 8; run++ {
		res, err := es.Query(ctx, `SELECT * { ?s ?p ?o } LIMIT 2500`, opts)
		if err != nil {
			t.Fatal(err)
		}
		rows := resultRows(res, false)
		if len(rows) != 2500 {
			t.Fatalf("run %d: %d rows, want 2500", run, len(rows))
		}
		for i, r := range rows {
			if !all[r] || i > 0 && rows[i-1] == r {
				t.Fatalf("run %d: row %q not in the answer or repeated", run, r)
			}
		}
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// TestTopKHeapHoldsK: fed batch after batch, the heap never holds more
// than k rows and ends with the k least in order, ties in arrival order.
func TestTopKHeapHoldsK(t *testing.T) {
	e := newTestEngine(t, diffData(t, 10), 1)
	res := &Result{locals: &TermTable{}}
	q := newQueryRun(context.Background(), e, &planner.Plan{}, Options{}, res)
	keys := []planner.OrderKey{{Var: "x"}}
	h := &topKHeap{k: 3, keys: keys}
	// Values: integers interned as local terms; y numbers the rows.
	var all [][2]int
	sc := stopCheck{}
	for b := 0; b < 5; b++ {
		tb := &Table{Vars: []sparql.Var{"x", "y"}, Cols: make([][]ID, 2)}
		for i := 0; i < 7; i++ {
			x := (b*7 + i*5) % 4
			y := len(all)
			all = append(all, [2]int{x, y})
			tb.Cols[0] = append(tb.Cols[0], q.intern(rdf.NewLiteral(fmt.Sprint(x), rdf.XSDInteger)))
			tb.Cols[1] = append(tb.Cols[1], q.intern(rdf.NewLiteral(fmt.Sprint(y), rdf.XSDInteger)))
			tb.N++
		}
		if err := h.add(q, tb, &sc); err != nil {
			t.Fatal(err)
		}
		if h.held.N > 3 {
			t.Fatalf("after batch %d the heap holds %d rows", b, h.held.N)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i][0] < all[j][0] })
	out := h.result()
	for i := 0; i < 3; i++ {
		got := q.term(out.Cols[1][i]).Value
		if got != fmt.Sprint(all[i][1]) {
			t.Errorf("row %d: y = %s, want %d", i, got, all[i][1])
		}
	}
}

// TestSemiJoinEarlyStop: EXISTS, NOT EXISTS and MINUS from numbered rows
// stop each row's exploration at its first solution: over a pattern that
// is a cross product per row (every triple for each of the rows) they
// answer as the full evaluation does while making a bounded number of
// rows, on 1 and 4 shards, in every mode.
func TestSemiJoinEarlyStop(t *testing.T) {
	triples := diffData(t, 6000)
	const knows = `<http://example.org/knows>`
	queries := []struct{ q, full string }{
		// ?d ?e ?f is every triple: each row's pattern has 6,000 solutions.
		{`SELECT * { ?s ` + knows + ` ?o FILTER EXISTS { ?o ?x ?y . ?d ?e ?f } }`,
			`SELECT DISTINCT ?s ?o { ?s ` + knows + ` ?o . ?o ?x ?y . ?d ?e ?f }`},
		{`SELECT * { ?s ` + knows + ` ?o FILTER NOT EXISTS { ?o ?x ?y . ?d ?e ?f } }`, ``},
		{`SELECT * { ?s ` + knows + ` ?o MINUS { ?o ?x ?y . ?d ?e ?f } }`, ``},
		{`SELECT * { ?s ?p ?o FILTER EXISTS { ?s a ?c . ?d ?e ?f } }`,
			`SELECT DISTINCT ?s ?p ?o { ?s ?p ?o . ?s a ?c }`},
	}
	for _, shards := range []int{1, 4} {
		e := newTestEngine(t, triples, shards)
		for _, opts := range earlyStopVariants {
			name := fmt.Sprintf("%d shards %s threshold %v", shards, opts.Mode, opts.ForkThreshold)
			for _, q := range queries {
				o := opts
				o.Analyze = true
				res, err := e.Query(context.Background(), q.q, o)
				if err != nil {
					t.Fatalf("%s: %s: %v", name, q.q, err)
				}
				if q.full != "" {
					full, err := e.Query(context.Background(), q.full, opts)
					if err != nil {
						t.Fatalf("%s: %s: %v", name, q.full, err)
					}
					if got, want := resultRows(res, false), resultRows(full, false); strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("%s: %s: %d rows, want the %d of %s", name, q.q, len(got), len(want), q.full)
					}
					if res.Len() == 0 {
						t.Errorf("%s: %s: no rows", name, q.q)
					}
				} else if res.Len() != 0 {
					t.Errorf("%s: %s: %d rows, want none", name, q.q, res.Len())
				}
				// Without the early stop: about 6,000 rows per row tested.
				if n := stepRows(res); n > 2_000_000 {
					t.Errorf("%s: %s made %d rows", name, q.q, n)
				}
			}
		}
	}
}

// TestDistinctLimitEarlyStop: DISTINCT … LIMIT n over an exploration
// stops once it has n distinct rows: on a cross product of every triple
// with every triple (36 million rows, 6,000 distinct values of ?a) it
// answers n distinct rows of the full answer after a bounded number of
// rows, on 1 and 4 shards, in every mode; asking for more distinct rows
// than there are gives all of them.
func TestDistinctLimitEarlyStop(t *testing.T) {
	triples := diffData(t, 6000)
	for _, shards := range []int{1, 4} {
		e := newTestEngine(t, triples, shards)
		for _, opts := range earlyStopVariants {
			name := fmt.Sprintf("%d shards %s threshold %v", shards, opts.Mode, opts.ForkThreshold)
			full, err := e.Query(context.Background(), `SELECT DISTINCT ?p { ?s ?p ?o }`, opts)
			if err != nil {
				t.Fatal(err)
			}
			all := map[string]bool{}
			for _, r := range resultRows(full, false) {
				all[r] = true
			}
			for _, q := range []struct {
				text string
				want int
			}{
				{`SELECT DISTINCT ?p { ?s ?p ?o } LIMIT 3`, 3},
				{`SELECT DISTINCT ?p { ?s ?p ?o } LIMIT 3 OFFSET 2`, 3},
				{`SELECT DISTINCT ?p { ?s ?p ?o } LIMIT 100000`, full.Len()},
				{`SELECT DISTINCT ?p { ?a ?b ?c . ?s ?p ?o } LIMIT 5`, 5},
			} {
				o := opts
				o.Analyze = true
				res, err := e.Query(context.Background(), q.text, o)
				if err != nil {
					t.Fatalf("%s: %s: %v", name, q.text, err)
				}
				rows := resultRows(res, false)
				if len(rows) != q.want {
					t.Errorf("%s: %s: %d rows, want %d", name, q.text, len(rows), q.want)
				}
				for i, r := range rows {
					if !all[r] || (i > 0 && rows[i-1] == r) {
						t.Errorf("%s: %s: row %q is not a distinct row of the full answer", name, q.text, r)
					}
				}
				if strings.Contains(q.text, "?a ?b ?c") {
					if n := stepRows(res); n > 1_000_000 {
						t.Errorf("%s: %s made %d rows (the full product has %d)", name, q.text, n, len(triples)*len(triples))
					}
				}
			}
		}
	}
}
