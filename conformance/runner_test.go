package conformance

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

func iri(s string) rdf.Term     { return rdf.NewIRI("http://example/" + s) }
func bn(s string) rdf.Term      { return rdf.NewBlank(s) }
func lit(s string) rdf.Term     { return rdf.NewLiteral(s, "") }
func integer(s string) rdf.Term { return rdf.NewLiteral(s, rdf.XSDInteger) }

func sols(vars string, rows ...[]rdf.Term) *Answer {
	return &Answer{Kind: Solutions, Vars: strings.Fields(vars), Rows: rows}
}

func row(ts ...rdf.Term) []rdf.Term { return ts }

func TestCompare(t *testing.T) {
	u := rdf.Term{}
	tests := []struct {
		name       string
		want, got  *Answer
		orderBy    []string
		ok         bool
		diffPrefix string
	}{
		{"equal bags", sols("x y", row(iri("a"), lit("1")), row(iri("a"), lit("1")), row(iri("b"), u)),
			sols("x y", row(iri("b"), u), row(iri("a"), lit("1")), row(iri("a"), lit("1"))), nil, true, ""},
		{"multiplicity matters", sols("x", row(iri("a")), row(iri("a"))), sols("x", row(iri("a"))), nil, false, "solutions differ"},
		{"unbound is not a value", sols("x", row(u)), sols("x", row(lit(""))), nil, false, "solutions differ"},
		{"variable order is free", sols("x y", row(iri("a"), iri("b"))), sols("y x", row(iri("b"), iri("a"))), nil, true, ""},
		{"variable sets must match", sols("x y", row(iri("a"), iri("b"))), sols("x", row(iri("a"))), nil, false, "variables"},
		{"literals compare as terms", sols("n", row(integer("1"))), sols("n", row(integer("01"))), nil, false, "solutions differ"},
		{"datatype matters", sols("n", row(integer("1"))), sols("n", row(lit("1"))), nil, false, "solutions differ"},
		{"language matters", sols("n", row(rdf.NewLangLiteral("a", "en"))), sols("n", row(rdf.NewLangLiteral("a", "fr"))), nil, false, "solutions differ"},
		{"blank nodes renamed", sols("x y", row(bn("a"), bn("b")), row(bn("b"), bn("a"))),
			sols("x y", row(bn("q"), bn("p")), row(bn("p"), bn("q"))), nil, true, ""},
		{"blank renaming must be consistent", sols("x y", row(bn("a"), bn("a"))),
			sols("x y", row(bn("p"), bn("q"))), nil, false, ""},
		{"blank renaming must be one-to-one", sols("x", row(bn("a")), row(bn("b"))),
			sols("x", row(bn("p")), row(bn("p"))), nil, false, ""},
		{"blank nodes across rows", sols("x y", row(bn("a"), iri("1")), row(bn("a"), iri("2")), row(bn("b"), iri("3"))),
			sols("x y", row(bn("q"), iri("1")), row(bn("p"), iri("2")), row(bn("p"), iri("3"))), nil, false, ""},
		{"ordered equal", sols("x", row(integer("1")), row(integer("2"))), sols("x", row(integer("1")), row(integer("2"))), []string{"x"}, true, ""},
		{"ordered wrong", sols("x", row(integer("1")), row(integer("2"))), sols("x", row(integer("2")), row(integer("1"))), []string{"x"}, false, "order differs"},
		{"ties may permute", sols("k v", row(integer("1"), iri("a")), row(integer("1"), iri("b")), row(integer("2"), iri("c"))),
			sols("k v", row(integer("1"), iri("b")), row(integer("1"), iri("a")), row(integer("2"), iri("c"))), []string{"k"}, true, ""},
		{"ties may not cross keys", sols("k v", row(integer("1"), iri("a")), row(integer("2"), iri("b"))),
			sols("k v", row(integer("2"), iri("b")), row(integer("1"), iri("a"))), []string{"k"}, false, "order differs"},
		{"boolean", &Answer{Kind: Boolean, Boolean: true}, &Answer{Kind: Boolean, Boolean: false}, nil, false, "answer is false"},
		{"kind", &Answer{Kind: Boolean, Boolean: true}, sols("x"), nil, false, "answer is solutions"},
		{"graph isomorphic", &Answer{Kind: Graph, Graph: []rdf.Triple{{S: bn("a"), P: iri("p"), O: bn("b")}, {S: bn("b"), P: iri("p"), O: lit("x")}}},
			&Answer{Kind: Graph, Graph: []rdf.Triple{{S: bn("n2"), P: iri("p"), O: lit("x")}, {S: bn("n1"), P: iri("p"), O: bn("n2")}, {S: bn("n1"), P: iri("p"), O: bn("n2")}}}, nil, true, ""},
		// A 6-cycle and two 3-cycles of blank nodes look alike locally
		// (every node has one edge in, one out): only the search tells.
		{"graph cycles", &Answer{Kind: Graph, Graph: cycle("a", 6)},
			&Answer{Kind: Graph, Graph: append(cycle("b", 3), cycle("c", 3)...)}, nil, false, "graph differs"},
		{"graph cycles equal", &Answer{Kind: Graph, Graph: cycle("a", 6)}, &Answer{Kind: Graph, Graph: cycle("z", 6)}, nil, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			diff := Compare(tc.want, tc.got, tc.orderBy)
			if tc.ok && diff != "" {
				t.Fatalf("want equal, got %q", diff)
			}
			if !tc.ok && diff == "" {
				t.Fatal("want a difference, got none")
			}
			if !strings.HasPrefix(diff, tc.diffPrefix) {
				t.Fatalf("difference %q, want it to start with %q", diff, tc.diffPrefix)
			}
		})
	}
}

func cycle(prefix string, n int) []rdf.Triple {
	var out []rdf.Triple
	for i := 0; i < n; i++ {
		out = append(out, rdf.Triple{S: bn(prefix + string(rune('0'+i))), P: iri("next"), O: bn(prefix + string(rune('0'+(i+1)%n)))})
	}
	return out
}

func TestOrderKeys(t *testing.T) {
	tests := []struct {
		query   string
		keys    string
		checked bool
	}{
		{"SELECT ?x WHERE { ?x ?p ?o }", "", true},
		{"SELECT ?x ?o WHERE { ?x ?p ?o } ORDER BY ?o DESC(?x) LIMIT 3", "o x", true},
		{"SELECT DISTINCT ?x WHERE { ?x ?p ?o } ORDER BY ?o", "", false},
		{"SELECT ?x WHERE { ?x ?p ?o } ORDER BY STR(?x)", "", false},
		{"SELECT ?x WHERE { { SELECT ?x WHERE { ?x ?p ?o } ORDER BY ?x } }", "", true},
	}
	for _, tc := range tests {
		q, err := sparql.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		keys, checked := OrderKeys(q)
		if strings.Join(keys, " ") != tc.keys || checked != tc.checked {
			t.Errorf("%s: keys %v checked %v, want %q %v", tc.query, keys, checked, tc.keys, tc.checked)
		}
	}
}

func TestRunGuarded(t *testing.T) {
	q, err := sparql.ParseQuery("SELECT * WHERE { ?s ?p ?o }")
	if err != nil {
		t.Fatal(err)
	}
	ds := &Dataset{}
	panicky := func(context.Context, *Dataset, *sparql.Query, int) (*Answer, error) {
		var m map[string]int
		m["boom"]++ // a nil-map write: a runtime panic
		return nil, nil
	}
	_, err = RunGuarded(context.Background(), time.Second, panicky, ds, q, 1)
	var pe *PanicError
	if !errors.As(err, &pe) || !strings.Contains(pe.Stack, "TestRunGuarded") {
		t.Fatalf("panic: got %v, want a *PanicError with the stack", err)
	}
	stuck := make(chan struct{})
	defer close(stuck)
	hang := func(context.Context, *Dataset, *sparql.Query, int) (*Answer, error) {
		<-stuck // ignores the context
		return nil, nil
	}
	start := time.Now()
	_, err = RunGuarded(context.Background(), 50*time.Millisecond, hang, ds, q, 1)
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("hang: got %v, want a *TimeoutError", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("hang: RunGuarded returned after %v", d)
	}
	polite := func(ctx context.Context, _ *Dataset, _ *sparql.Query, _ int) (*Answer, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if _, err = RunGuarded(context.Background(), 50*time.Millisecond, polite, ds, q, 1); !errors.As(err, &te) {
		t.Fatalf("cancelled: got %v, want a *TimeoutError", err)
	}
}

func TestJudge(t *testing.T) {
	o := func(id string, s Status, reason string) Outcome { return Outcome{ID: id, Status: s, Reason: reason} }
	runs := [][]Outcome{
		{o("a", Fail, "A1"), o("b", Pass, ""), o("c", Pass, ""), o("d", Fail, "D1"), o("e", Skip, "why"), o("f", Pass, "")},
		{o("a", Fail, "A4"), o("b", Fail, "B4"), o("c", Pass, ""), o("d", Fail, "D4"), o("e", Skip, "why"), o("f", Pass, "")},
	}
	known := List{"a": "old", "c": "old", "f": "old"}
	v := Judge([]int{1, 4}, runs, known)
	var reg []string
	for _, r := range v.Regressions {
		reg = append(reg, r.ID+":"+r.Reason)
	}
	if got := strings.Join(reg, " "); got != "b:B4 d:D1" {
		t.Errorf("regressions %q, want b:B4 d:D1", got)
	}
	if got := strings.Join(v.Fixed, " "); got != "c f" {
		t.Errorf("fixed %q, want c f", got)
	}
	want := List{"a": "A1", "b": "B4 [fails only with 4 shards]", "d": "D1"}
	if len(v.Failures) != len(want) {
		t.Errorf("failures %v, want %v", v.Failures, want)
	}
	for id, r := range want {
		if v.Failures[id] != r {
			t.Errorf("failure %s: %q, want %q", id, v.Failures[id], r)
		}
	}
	merged := Merge(List{"a": "old", "c": "old", "z": "not run"}, map[string]bool{"a": true, "b": true, "c": true, "d": true}, v.Failures)
	if len(merged) != 4 || merged["z"] != "not run" || merged["a"] != "A1" || merged["c"] != "" && len(merged) != 4 {
		t.Errorf("merge: %v", merged)
	}
	if _, ok := merged["c"]; ok {
		t.Errorf("merge kept the fixed test c: %v", merged)
	}

	path := t.TempDir() + "/known.txt"
	if err := WriteKnownFailures(path, merged); err != nil {
		t.Fatal(err)
	}
	back, err := ReadList(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(merged) {
		t.Fatalf("read back %v, wrote %v", back, merged)
	}
	for id, r := range merged {
		if back[id] != r {
			t.Errorf("read back %s: %q, want %q", id, back[id], r)
		}
	}
}

// oracle is an Evaluator that answers with a (possibly mutated) copy of
// the expected answer: running the suite with it checks the runner itself
// (manifests, data, expected results, comparison) on every W3C test.
func oracle(want *Answer, mutate func(*Answer)) Evaluator {
	return func(context.Context, *Dataset, *sparql.Query, int) (*Answer, error) {
		a := &Answer{Kind: want.Kind, Vars: want.Vars, Boolean: want.Boolean}
		for _, r := range want.Rows {
			a.Rows = append(a.Rows, append([]rdf.Term(nil), r...))
		}
		a.Graph = append(a.Graph, want.Graph...)
		if mutate != nil {
			mutate(a)
		}
		return a, nil
	}
}

// renameBlanks gives every blank node a fresh label, consistently.
func renameBlanks(a *Answer) {
	m := map[rdf.Term]rdf.Term{}
	ren := func(t rdf.Term) rdf.Term {
		if !t.IsBlank() {
			return t
		}
		if _, ok := m[t]; !ok {
			m[t] = rdf.NewBlank("renamed" + string(rune('a'+len(m)%26)) + strings.Repeat("x", len(m)/26))
		}
		return m[t]
	}
	for _, r := range a.Rows {
		for i := range r {
			r[i] = ren(r[i])
		}
	}
	for i, tr := range a.Graph {
		a.Graph[i] = rdf.Triple{S: ren(tr.S), P: tr.P, O: ren(tr.O)}
	}
}

// breakAnswer changes the answer so that it must not compare equal:
// a flipped boolean, a dropped triple, or a literal's lexical form changed
// (or a row added when there is nothing to change).
func breakAnswer(a *Answer) {
	switch a.Kind {
	case Boolean:
		a.Boolean = !a.Boolean
		return
	case Graph:
		if len(a.Graph) > 0 {
			a.Graph = a.Graph[1:]
		} else {
			a.Graph = append(a.Graph, rdf.Triple{S: iri("s"), P: iri("p"), O: iri("o")})
		}
		return
	}
	for _, r := range a.Rows {
		for i, t := range r {
			if t.IsLiteral() {
				r[i] = rdf.Term{Kind: rdf.KindLiteral, Value: t.Value + "0", Datatype: t.Datatype, Lang: t.Lang}
				return
			}
		}
	}
	if len(a.Rows) > 0 {
		a.Rows = a.Rows[1:]
		return
	}
	a.Rows = append(a.Rows, make([]rdf.Term, len(a.Vars)))
}

func TestRunnerOracle(t *testing.T) {
	suite, _ := loadSuite(t)
	skip, err := ReadList(skipFile)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	ran := 0
	for _, tc := range suite.Tests {
		if _, ok := skip[tc.ID]; ok {
			continue
		}
		want, err := ReadExpected(tc.Result)
		if err != nil {
			t.Errorf("%s: cannot read the expected result: %v", tc.ID, err)
			continue
		}
		ran++
		text, err := os.ReadFile(tc.Query.Path)
		if err != nil {
			t.Fatal(err)
		}
		q, err := ParseQuery(string(text), tc.Query.IRI)
		if err != nil {
			t.Errorf("%s: %v", tc.ID, err)
			continue
		}
		keys, _ := OrderKeys(q)
		shuffle := func(a *Answer) {
			renameBlanks(a)
			if len(keys) == 0 {
				rng.Shuffle(len(a.Rows), func(i, j int) { a.Rows[i], a.Rows[j] = a.Rows[j], a.Rows[i] })
				rng.Shuffle(len(a.Graph), func(i, j int) { a.Graph[i], a.Graph[j] = a.Graph[j], a.Graph[i] })
			}
		}
		if o := suite.Run(ctx, tc, RunOptions{Eval: oracle(want, shuffle)}); o.Status != Pass {
			t.Errorf("%s with the expected answer (blank nodes renamed, rows shuffled): %s: %s\n%s", tc.ID, o.Status, o.Reason, o.Detail)
		}
		if o := suite.Run(ctx, tc, RunOptions{Eval: oracle(want, breakAnswer)}); o.Status != Fail {
			t.Errorf("%s with a wrong answer: %s, want a failure", tc.ID, o.Status)
		}
	}
	if ran < 200 {
		t.Errorf("only %d tests ran", ran)
	}
}
