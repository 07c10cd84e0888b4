package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
)

// TestCheckFromTo runs a known→known check over rows shaped like LUBM
// L7's (runs of one course, many distinct students) forwards (apply looks
// up each student) and backwards (checkFromTo looks up each course), on 1
// and 3 shards, and compares both with the triples.
func TestCheckFromTo(t *testing.T) {
	ex := func(s string) rdf.Term { return rdf.NewIRI("http://example.org/" + s) }
	rng := rand.New(rand.NewPCG(3, 4))
	takes := map[[2]int]bool{}
	var triples []rdf.Triple
	for s := 0; s < 3000; s++ {
		for k := 0; k < 3; k++ {
			c := rng.IntN(40)
			if !takes[[2]int{s, c}] {
				takes[[2]int{s, c}] = true
				triples = append(triples, rdf.Triple{S: ex(fmt.Sprintf("s%d", s)), P: ex("takes"), O: ex(fmt.Sprintf("c%d", c))})
			}
		}
	}
	for _, shards := range []int{1, 3} {
		st := buildGraph(t, triples, shards)
		e, err := NewGraphEngine(st, Config{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		id := func(s string) ID {
			v, ok := e.store.LookupTerm(ex(s))
			if !ok {
				t.Fatalf("no %s", s)
			}
			return v
		}
		// Rows: for each course, a run of 300 random students (ascending).
		tab := &Table{Cols: make([][]ID, 2)}
		var want []bool
		for c := 0; c < 40; c++ {
			for s := 0; s < 3000; s += 1 + rng.IntN(19) {
				tab.Cols[0] = append(tab.Cols[0], id(fmt.Sprintf("s%d", s)))
				tab.Cols[1] = append(tab.Cols[1], id(fmt.Sprintf("c%d", c)))
				want = append(want, takes[[2]int{s, c}])
			}
		}
		tab.N = len(want)
		step := planner.Step{Kind: planner.StepCheck, From: planner.Operand{Kind: planner.OpVar, Col: 0},
			Pred: planner.Const(id("takes")), Dir: graphstore.Out, To: planner.Operand{Kind: planner.OpVar, Col: 1}}
		r := &task{eng: e, node: 0, ctx: context.Background(), steps: []planner.Step{step}, ncols: 2}
		back, ok, err := r.checkFromTo(&step, tab, nil)
		if err != nil || !ok {
			t.Fatalf("shards=%d: checkFromTo: %v, %v (want it to run)", shards, ok, err)
		}
		// Forwards, as apply does without the To side.
		f := newFetch(r, tab.N)
		h := make([]int32, tab.N)
		for row := range h {
			h[row] = f.want(tab.Cols[0][row], step.Pred.ID, step.Dir)
		}
		if err := f.run(nil); err != nil {
			t.Fatal(err)
		}
		var fwd, exp []string
		for row, w := range want {
			key := fmt.Sprint(tab.Cols[0][row], tab.Cols[1][row])
			if contains(f.list(h[row]), tab.Cols[1][row]) {
				fwd = append(fwd, key)
			}
			if w {
				exp = append(exp, key)
			}
		}
		var got []string
		for row := 0; row < back.N; row++ {
			got = append(got, fmt.Sprint(back.Cols[0][row], back.Cols[1][row]))
		}
		if fmt.Sprint(got) != fmt.Sprint(exp) || fmt.Sprint(fwd) != fmt.Sprint(exp) {
			t.Errorf("shards=%d: backwards %d rows, forwards %d, want %d", shards, len(got), len(fwd), len(exp))
		}
		e.Close()
	}
}

func TestDistinctEstimate(t *testing.T) {
	for _, n := range []int{1, 100, 5194, 20977, 100000} {
		col := make([]ID, 0, 4*n)
		for len(col) < 4*n {
			for i := 0; i < n; i++ {
				col = append(col, ID(1000+7*i))
			}
		}
		got := distinctEstimate(col)
		if got < 0.9*float64(n) || got > 1.1*float64(n) {
			t.Errorf("%d distinct values: estimated %.0f", n, got)
		}
	}
}
