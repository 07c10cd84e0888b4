package planner

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

type mapCatalog map[rdf.Term]ID

func (m mapCatalog) LookupTerm(t rdf.Term) (ID, bool) {
	id, ok := m[t]
	return id, ok
}

func iri(s string) rdf.Term { return rdf.NewIRI("http://ex/" + s) }

var (
	typ      = rdf.NewIRI(rdf.RDFType)
	student  = iri("Student")
	course   = iri("Course")
	takes    = iri("takes")
	teaches  = iri("teaches")
	name     = iri("name")
	dept0    = iri("dept0")
	memberOf = iri("memberOf")
)

func testCatalog() mapCatalog {
	return mapCatalog{typ: 1, student: 2, course: 3, takes: 4, teaches: 5, name: 6, memberOf: 7, dept0: 1 << 23}
}

func testStats(shards int) *Stats {
	return &Stats{
		Shards: shards, TypeID: 1, Triples: 1_000_000, Vertices: 200_000,
		Preds: map[ID]PredStats{
			1: {Triples: 200_000, Subjects: 200_000, Objects: 10},
			4: {Triples: 300_000, Subjects: 100_000, Objects: 5_000}, // takes
			5: {Triples: 10_000, Subjects: 3_000, Objects: 5_000},    // teaches
			6: {Triples: 200_000, Subjects: 200_000, Objects: 150_000},
			7: {Triples: 100_000, Subjects: 100_000, Objects: 20}, // memberOf
		},
		Classes: map[ID]uint64{2: 100_000, 3: 5_000},
	}
}

func v(name string) sparql.TermOrVar                   { return sparql.NewVarRef(sparql.Var(name)) }
func c(t rdf.Term) sparql.TermOrVar                    { return sparql.NewTermRef(t) }
func tp(s, p, o sparql.TermOrVar) sparql.TriplePattern { return sparql.TriplePattern{S: s, P: p, O: o} }

func selectQuery(vars []sparql.Var, pats ...sparql.TriplePattern) *sparql.Query {
	return &sparql.Query{Form: sparql.FormSelect, Vars: vars,
		Pattern: &sparql.Project{Vars: vars, Input: &sparql.BGP{Triples: pats}}}
}

func explore(t *testing.T, p *Plan) *Explore {
	t.Helper()
	ex := p.Explores()
	if len(ex) != 1 {
		t.Fatalf("%d explorations, want 1", len(ex))
	}
	return ex[0]
}

func TestStartsFromASelectiveConstant(t *testing.T) {
	q := selectQuery([]sparql.Var{"x", "n"},
		tp(v("x"), c(typ), c(student)),
		tp(v("x"), c(name), v("n")),
		tp(v("x"), c(memberOf), c(dept0)))
	p, err := Build(q, testCatalog(), testStats(4), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex := explore(t, p)
	first := ex.Steps[0]
	if first.Kind != StepExpand || first.From != Const(1<<23) || first.Dir != In {
		t.Fatalf("first step %+v, want an expansion from dept0 backwards along memberOf", first)
	}
	if ex.StartConst != 1<<23 || first.Mode != ModeLocal {
		t.Errorf("start const %d, mode %s: the query should start on dept0's owner", ex.StartConst, first.Mode)
	}
	// The type check comes before the expansion to names (it prunes): fused
	// into the first expansion (Step.TypeCheck).
	if len(ex.Steps) != 2 || first.TypeCheck != 2 || first.CheckPattern != 0 || ex.Steps[1].Kind != StepExpand {
		t.Errorf("steps %v (first %+v), want the type check fused into the first expansion, then expand", kinds(ex.Steps), first)
	}
	// Forced fork-join: the check stays a step of its own (it forks to the
	// owners of ?x; a fused check would read their type indexes remotely).
	p, err = Build(q, testCatalog(), testStats(4), Options{Mode: ModeForkJoin})
	if err != nil {
		t.Fatal(err)
	}
	ex = explore(t, p)
	if len(ex.Steps) != 3 || ex.Steps[0].TypeCheck != 0 || ex.Steps[1].Kind != StepCheck || ex.Steps[2].Kind != StepExpand {
		t.Errorf("fork-join: steps %v, want expand, check, expand", kinds(ex.Steps))
	}
}

func kinds(steps []Step) []StepKind {
	var k []StepKind
	for _, s := range steps {
		k = append(k, s.Kind)
	}
	return k
}

func TestTypeIndexStart(t *testing.T) {
	q := selectQuery([]sparql.Var{"c", "t"},
		tp(v("c"), c(typ), c(course)),
		tp(v("t"), c(teaches), v("c")))
	p, err := Build(q, testCatalog(), testStats(1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex := explore(t, p)
	if s := ex.Steps[0]; s.Kind != StepIndex || s.Pred != Const(3) || s.Dir != In || s.Pattern != 0 {
		t.Fatalf("first step %+v, want the type index of Course", s)
	}
	if s := ex.Steps[1]; s.Kind != StepExpand || s.Dir != In || s.From != Column(0) {
		t.Fatalf("second step %+v, want ?c teaches⁻¹ → ?t", s)
	}
	for _, s := range ex.Steps {
		if s.Mode != ModeLocal {
			t.Errorf("1 shard: step mode %s, want local", s.Mode)
		}
	}
}

func TestUnknownConstantMatchesNothing(t *testing.T) {
	q := selectQuery([]sparql.Var{"x"}, tp(v("x"), c(takes), c(iri("nope"))))
	p, err := Build(q, testCatalog(), testStats(2), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ex := explore(t, p); !ex.Empty || ex.EstRows != 0 {
		t.Fatalf("explore %+v, want Empty", ex)
	}
}

func TestUnsupported(t *testing.T) {
	q := &sparql.Query{Form: sparql.FormSelect, Vars: []sparql.Var{"x"}, Pattern: &sparql.Service{
		Name: sparql.NewTermRef(iri("endpoint")), Input: &sparql.BGP{Triples: []sparql.TriplePattern{tp(v("x"), c(takes), v("y"))}}}}
	if _, err := Build(q, testCatalog(), testStats(1), Options{}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("SERVICE: %v, want ErrUnsupported", err)
	}
}

func TestModes(t *testing.T) {
	q := selectQuery([]sparql.Var{"s", "c", "t"},
		tp(v("s"), c(typ), c(student)),
		tp(v("s"), c(takes), v("c")),
		tp(v("t"), c(teaches), v("c")))
	count := func(p *Plan) map[Mode]int {
		m := map[Mode]int{}
		for _, s := range explore(t, p).Steps {
			m[s.Mode]++
		}
		return m
	}
	for _, tc := range []struct {
		opts Options
		want func(map[Mode]int) bool
	}{
		{Options{Mode: ModeInPlace}, func(m map[Mode]int) bool { return m[ModeForkJoin] == 0 && m[ModeInPlace] > 0 }},
		{Options{Mode: ModeForkJoin}, func(m map[Mode]int) bool { return m[ModeInPlace] == 0 && m[ModeForkJoin] > 0 }},
		{Options{ForkThreshold: math.MaxFloat64}, func(m map[Mode]int) bool { return m[ModeForkJoin] == 0 }},
		{Options{ForkThreshold: 1}, func(m map[Mode]int) bool { return m[ModeInPlace] == 0 && m[ModeForkJoin] > 0 }},
	} {
		p, err := Build(q, testCatalog(), testStats(4), tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := count(p); !tc.want(got) {
			t.Errorf("options %+v: modes %v", tc.opts, got)
		}
		// After a fork on a column, steps from that column are local.
		part := -1
		for _, s := range explore(t, p).Steps {
			if s.Kind != StepIndex && s.From.Kind == OpVar && s.From.Col == part && s.Mode != ModeLocal {
				t.Errorf("options %+v: step from the partition column is %s, want local", tc.opts, s.Mode)
			}
			if s.Mode == ModeForkJoin {
				part = s.From.Col
				if s.Kind == StepIndex {
					part = s.To.Col
				}
			}
		}
	}
	// The derived threshold: in one process (DefaultCost) forking does not
	// pay; over a network whose READs cost microseconds it does from some
	// number of rows on; never on one node.
	if th := DefaultCost().Threshold(4, 3, 3); !math.IsInf(th, 1) {
		t.Errorf("in-process threshold for 4 shards: %v, want +Inf", th)
	}
	tcp := NetworkCost(20*time.Microsecond, 20*time.Microsecond, 1.25e9)
	if th := tcp.Threshold(4, 3, 3); math.IsInf(th, 0) || th < 1 {
		t.Errorf("network threshold for 4 shards: %v", th)
	}
	if th := DefaultCost().Threshold(1, 3, 3); !math.IsInf(th, 1) {
		t.Errorf("threshold for 1 shard: %v, want +Inf", th)
	}
	// An index step ships only rows back: in process it forks from some
	// thousands of rows of few columns (LUBM L2's 43,291 Course rows),
	// later for wider rows, never on one node.
	if th := DefaultCost().IndexThreshold(4, 2); math.IsInf(th, 0) || th < 1000 || th > 43291 {
		t.Errorf("in-process index threshold for 4 shards, 2 columns: %v", th)
	}
	if th2, th3 := DefaultCost().IndexThreshold(4, 2), DefaultCost().IndexThreshold(4, 3); th3 <= th2 {
		t.Errorf("index threshold for 3 columns %v, not above 2 columns' %v", th3, th2)
	}
	if th := DefaultCost().IndexThreshold(1, 2); !math.IsInf(th, 1) {
		t.Errorf("index threshold for 1 shard: %v, want +Inf", th)
	}
}

// TestRandomBGPsAreWellFormed checks structural invariants on random BGPs:
// every pattern becomes exactly one step (or is answered by the type
// index), every step starts from a bound value and binds only new columns.
func TestRandomBGPsAreWellFormed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	preds := []rdf.Term{typ, takes, teaches, name, memberOf}
	consts := []rdf.Term{student, course, dept0}
	for n := 0; n < 500; n++ {
		var pats []sparql.TriplePattern
		pos := func(consts []rdf.Term, pv float64) sparql.TermOrVar {
			if rng.Float64() < pv {
				return v(string(rune('a' + rng.IntN(4))))
			}
			return c(consts[rng.IntN(len(consts))])
		}
		for i := 0; i < 1+rng.IntN(6); i++ {
			pats = append(pats, tp(pos(consts, 0.8), pos(preds, 0.1), pos(consts, 0.6)))
		}
		q := selectQuery(nil, pats...)
		p, err := Build(q, testCatalog(), testStats(1+rng.IntN(4)), Options{Mode: Mode(rng.IntN(4))})
		if err != nil {
			t.Fatal(err)
		}
		ex := explore(t, p)
		if ex.Empty {
			continue
		}
		seen := make([]int, len(pats))
		bound := map[int]bool{}
		for _, s := range ex.Steps {
			if s.Pattern >= 0 {
				seen[s.Pattern]++
			}
			if s.TypeCheck != 0 {
				seen[s.CheckPattern]++
			}
			if s.Intersect {
				seen[s.IntersectPattern]++
				if !bound[s.IntersectCol] || s.IntersectCol == s.To.Col {
					t.Fatalf("%v: step %+v intersects with an unbound column", pats, s)
				}
			}
			if s.Kind != StepIndex && s.From.Kind == OpVar && !bound[s.From.Col] {
				t.Fatalf("%v: step %+v starts from an unbound column", pats, s)
			}
			if s.Pred.Kind == OpVar && !s.PredNew && !bound[s.Pred.Col] {
				t.Fatalf("%v: step %+v reads an unbound predicate column", pats, s)
			}
			if s.To.Kind == OpVar && s.ToNew == bound[s.To.Col] && !(s.PredNew && s.Pred.Col == s.To.Col) {
				t.Fatalf("%v: step %+v: ToNew=%v but bound=%v", pats, s, s.ToNew, bound[s.To.Col])
			}
			if s.PredNew {
				bound[s.Pred.Col] = true
			}
			if s.ToNew {
				bound[s.To.Col] = true
			}
		}
		if !reflect.DeepEqual(seen, ones(len(pats))) {
			t.Fatalf("%v: patterns covered %v times", pats, seen)
		}
	}
}

func ones(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = 1
	}
	return o
}

func TestPassNames(t *testing.T) {
	want := []string{"lowerQuery", "foldConstants", "resolveConstants", "orderPatterns", "chooseJoins", "pushFilters", "chooseExecMode"}
	if got := PassNames(); !reflect.DeepEqual(got, want) {
		t.Errorf("passes %v, want %v", got, want)
	}
}

// TestSearchRespectsContext: the join-order search checks Options.Ctx, so a
// BGP whose search would run for a long time (a 30-pattern cycle with chords
// and an unbounded SearchBudget) stops soon after the deadline, with the
// context's error.
func TestSearchRespectsContext(t *testing.T) {
	var pats []sparql.TriplePattern
	const n = 30
	vn := func(i int) sparql.TermOrVar { return v(string(rune('a'+i%26)) + string(rune('0'+i/26))) }
	for i := 0; i < n; i++ {
		pats = append(pats, tp(vn(i), c(takes), vn((i+1)%n)))
		if i%3 == 0 {
			pats = append(pats, tp(vn(i), c(teaches), vn((i+7)%n)))
		}
	}
	q := selectQuery([]sparql.Var{"a0"}, pats...)
	opts := Options{SearchBudget: math.MaxInt}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	opts.Ctx = ctx
	t0 := time.Now()
	_, err := Build(q, testCatalog(), testStats(4), opts)
	took := time.Since(t0)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Build with a 30 ms deadline: err %v after %v, want context.DeadlineExceeded", err, took)
	}
	if took > time.Second {
		t.Errorf("Build returned %v after a 30 ms deadline", took)
	}
	t.Logf("Build with a 30 ms deadline returned after %v", took)

	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	opts.Ctx = cctx
	if _, err := Build(q, testCatalog(), testStats(4), opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("Build with a cancelled context: err %v, want context.Canceled", err)
	}

	// Without a context (default budget) the same query plans.
	if _, err := Build(q, testCatalog(), testStats(4), Options{}); err != nil {
		t.Fatal(err)
	}
}

// fuseIntersections folds a known→known check into the expansion before
// it when reading the other end's lists costs less than the rows and
// lookups of the check, with the direction of the list read from that
// end, and leaves it alone otherwise.
func TestFuseIntersections(t *testing.T) {
	st := testStats(1)
	// ?c (col 0) from an index; ?s (col 1) takes ?c expanded from ?c; then
	// the check ?s memberOf ?d with ?d (col 2) bound.
	expand := Step{Kind: StepExpand, Pattern: 0, From: Column(0), Pred: Const(4), Dir: In, To: Column(1), ToNew: true, EstRows: 60_000}
	check := func(from, to int, d Dir) Step {
		return Step{Kind: StepCheck, Pattern: 1, From: Column(from), Pred: Const(7), Dir: d, To: Column(to), EstRows: 30}
	}
	for _, tc := range []struct {
		name    string
		chk     Step
		rows    float64
		fuse    bool
		wantDir Dir
	}{
		// ?s memberOf ?d: ?s is in (?d, memberOf, In).
		{"x p w", check(1, 2, Out), 100, true, In},
		// ?d memberOf⁻¹ ?s written from ?d: ?s is in (?d, memberOf, In) too.
		{"w p x", check(2, 1, In), 100, true, In},
		// Lists of ?d of 5,000 entries read for each of 1,000 rows cost
		// more than checking 60,000 rows.
		{"too many rows", check(1, 2, Out), 1_000, false, 0},
	} {
		steps := fuseIntersections([]Step{expand, tc.chk}, st, tc.rows)
		if !tc.fuse {
			if len(steps) != 2 || steps[0].Intersect {
				t.Errorf("%s: fused %+v", tc.name, steps)
			}
			continue
		}
		if len(steps) != 1 {
			t.Fatalf("%s: %d steps, want the check fused", tc.name, len(steps))
		}
		s := steps[0]
		if !s.Intersect || s.IntersectCol != 2 || s.IntersectPred != 7 || s.IntersectDir != tc.wantDir ||
			s.IntersectPattern != 1 || s.EstRows != 30 {
			t.Errorf("%s: step %+v, want an intersection with (?d, memberOf, %s), pattern 1, 30 rows", tc.name, s, tc.wantDir)
		}
	}
	// rdf:type checks and checks of a variable the expansion did not bind
	// are not intersections.
	for _, chk := range []Step{
		{Kind: StepCheck, From: Column(1), Pred: Const(1), Dir: Out, To: Column(2)},
		{Kind: StepCheck, From: Column(0), Pred: Const(7), Dir: Out, To: Column(2)},
	} {
		if steps := fuseIntersections([]Step{expand, chk}, st, 10); len(steps) != 2 {
			t.Errorf("check %+v fused", chk)
		}
	}
}
