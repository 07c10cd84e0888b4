package planner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// ErrUnsupported is returned (wrapped, with the construct and its position)
// for algebra the engine does not run yet.
var ErrUnsupported = errors.New("not supported by the engine")

// Catalog resolves query constants to dictionary IDs.
type Catalog interface {
	// LookupTerm returns the ID of t, or false when the dictionary does not
	// know it (the constant then matches nothing).
	LookupTerm(t rdf.Term) (ID, bool)
}

// Options are the planner's knobs.
type Options struct {
	// Mode forces every step that needs remote data to one mode
	// (ModeInPlace or ModeForkJoin); ModeAuto chooses per step.
	Mode Mode
	// ForkThreshold overrides the row count from which a step forks in
	// ModeAuto (0: derived from Cost per step).
	ForkThreshold float64
	// Cost is the fabric cost model (zero: DefaultCost).
	Cost Cost
	// ConstEval evaluates an expression without variables (foldConstants);
	// nil: no folding. exec passes exec/expr's evaluator.
	ConstEval func(sparql.Expr) (rdf.Term, error)
	// SearchBudget caps the number of partial orders the pattern-order
	// search visits per BGP before it finishes greedily (0: 200000).
	SearchBudget int
	// Ctx bounds planning in time: the pattern-order search checks it every
	// ctxCheckEvery partial orders and, once it is done (the query's
	// deadline passed or it was cancelled), Build stops and returns its
	// error (wrapped: errors.Is(err, context.DeadlineExceeded) holds)
	// rather than a plan, since the query could no longer run anyway.
	// nil: planning is bounded by SearchBudget only.
	Ctx context.Context
}

// ctxCheckEvery is how many partial orders the pattern-order search visits
// between two checks of Options.Ctx (a state costs about a microsecond or
// less, so a check is due well within a millisecond).
const ctxCheckEvery = 256

// pass is one named, pure step of the planner: it reads the state built by
// the passes before it and returns the state for the passes after it.
type pass struct {
	name string
	run  func(st *state) error
}

// passes is the planner, in order.
var passes = []pass{
	{"lowerQuery", lowerQuery},
	{"foldConstants", foldConstants},
	{"resolveConstants", resolveConstants},
	{"orderPatterns", orderPatterns},
	{"chooseJoins", chooseJoins},
	{"pushFilters", pushFilters},
	{"chooseExecMode", chooseExecMode},
}

// PassNames returns the names of the planner passes in order (for EXPLAIN
// and tests).
func PassNames() []string {
	out := make([]string, len(passes))
	for i, p := range passes {
		out[i] = p.name
	}
	return out
}

// state is what flows through the passes.
type state struct {
	query *sparql.Query
	cat   Catalog
	stats *Stats
	opts  Options
	root  Node
	bgps  []*bgpWork

	template []sparql.TriplePattern
	describe *DescribePlan
	exists   map[sparql.Pattern]*ExistsPlan
	// join candidates (BGPs lowered from a seed), in lowering order
	cands     map[*Join]*joinCand
	candOrder []*Join
	slotRows  map[int]Node // what fills each slot (nil: rows given at run time)
	slots     int
	rowVars   int
}

// bgpWork is a BGP between resolveConstants and orderPatterns.
type bgpWork struct {
	node     *Explore
	patterns []sparql.TriplePattern
	res      []rpattern
	// A seeded exploration: seed gives the rows, binding seedVars in every
	// row; seedRows is their estimate (set by orderPatterns).
	seed     Node
	seedVars []sparql.Var
	seedRows float64
}

// rterm is a resolved position of a triple pattern.
type rterm struct {
	isVar bool
	col   int
	id    ID
}

type rpattern struct{ s, p, o rterm }

// Build plans q. stats describe the store (and the cluster's shard count).
func Build(q *sparql.Query, cat Catalog, stats *Stats, opts Options) (*Plan, error) {
	if stats == nil {
		stats = &Stats{Shards: 1}
	}
	if opts.Cost == (Cost{}) {
		opts.Cost = DefaultCost()
	}
	if opts.SearchBudget <= 0 {
		opts.SearchBudget = 200000
	}
	st := &state{query: q, cat: cat, stats: stats, opts: opts}
	for _, p := range passes {
		if err := p.run(st); err != nil {
			return nil, fmt.Errorf("planner pass %s: %w", p.name, err)
		}
	}
	p := &Plan{
		Form: q.Form, Base: q.Base, Root: st.root, Template: st.template, Describe: st.describe, Exists: st.exists,
		Mode: opts.Mode, ForkThreshold: opts.ForkThreshold, Shards: max(1, stats.Shards),
	}
	if q.Form == sparql.FormSelect {
		p.Vars = append([]sparql.Var(nil), q.Vars...)
	}
	return p, nil
}

// ---------------------------------------------------------------------------
// resolveConstants: terms → IDs, variables → columns.

func resolveConstants(st *state) error {
	for _, w := range st.bgps {
		cols := map[sparql.Var]int{}
		res := func(x sparql.TermOrVar) rterm {
			if x.IsVar() {
				c, ok := cols[x.Var]
				if !ok {
					c = len(w.node.Vars)
					cols[x.Var] = c
					w.node.Vars = append(w.node.Vars, x.Var)
				}
				return rterm{isVar: true, col: c}
			}
			id, ok := st.cat.LookupTerm(x.Term)
			if !ok || id == 0 {
				w.node.Empty = true
				return rterm{}
			}
			return rterm{id: id}
		}
		for _, tp := range w.patterns {
			w.res = append(w.res, rpattern{s: res(tp.S), p: res(tp.P), o: res(tp.O)})
		}
		if len(w.node.Vars) > 64 {
			return fmt.Errorf("%w: a basic graph pattern with %d variables (at most 64)", ErrUnsupported, len(w.node.Vars))
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// orderPatterns: the start, order and direction of the steps, searched
// depth-first with branch-and-bound over the cost model.

type searchState struct {
	bound  uint64 // bound columns
	done   uint64 // patterns consumed
	rows   float64
	cost   float64
	domain []float64 // estimated distinct values per bound column
	origin []origin  // what is known of each bound column's values
}

// origin is what the estimates know of a column's values: instances of a
// class, or vertices having an edge (pred, dir).
type origin struct {
	class ID
	pred  ID
	dir   Dir
	ok    bool
}

func (st searchState) clone() searchState {
	st.domain = append([]float64(nil), st.domain...)
	st.origin = append([]origin(nil), st.origin...)
	return st
}

type orderSearch struct {
	stats    *Stats
	pats     []rpattern
	nvars    int
	best     []Step
	bestCost float64
	visited  int
	budget   int
	ctx      context.Context // nil: never checked
	err      error           // the context's error, once it is done
}

func orderPatterns(st *state) error {
	for _, w := range st.bgps {
		n := w.node
		init := searchState{rows: 1, domain: make([]float64, len(n.Vars)), origin: make([]origin, len(n.Vars))}
		if w.seed != nil {
			// Seeded: the seed's rows, with the shared variables bound.
			w.seedRows = math.Max(1, st.estimate(w.seed))
			init.rows = w.seedRows
			for _, v := range w.seedVars {
				for c, x := range n.Vars {
					if x == v {
						init.bound |= 1 << uint(c)
						init.domain[c] = w.seedRows
					}
				}
			}
		}
		if n.Empty || len(w.res) == 0 {
			n.EstRows = 0
			if len(w.res) == 0 {
				n.EstRows = 1
			}
			continue
		}
		if len(w.res) > 64 {
			return fmt.Errorf("%w: a basic graph pattern of %d triple patterns (at most 64)", ErrUnsupported, len(w.res))
		}
		s := &orderSearch{stats: st.stats, pats: w.res, nvars: len(n.Vars), bestCost: math.Inf(1), budget: st.opts.SearchBudget, ctx: st.opts.Ctx}
		s.dfs(init, nil)
		if s.err != nil {
			return fmt.Errorf("join-order search stopped after %d partial orders: %w", s.visited, s.err)
		}
		if s.best == nil {
			return fmt.Errorf("BUG: no order found for a BGP of %d patterns", len(w.res))
		}
		n.Steps = s.best
		if st.opts.Mode != ModeForkJoin {
			// Forced fork-join keeps the check a step of its own: it forks
			// to the owners of the checked values (reads nothing remote).
			n.Steps = fuseTypeChecks(n.Steps, st.stats.TypeID)
			n.Steps = fuseIntersections(n.Steps, st.stats, init.rows)
		}
		n.EstCost = s.bestCost
		n.EstRows = n.Steps[len(n.Steps)-1].EstRows
		if first := n.Steps[0]; first.Kind != StepIndex && first.From.Kind == OpConst {
			n.StartConst = first.From.ID
		}
	}
	return nil
}

// fuseTypeChecks folds a type check (?x rdf:type C, C a constant) that
// directly follows the expansion binding ?x into that expansion
// (Step.TypeCheck): the expansion then keeps only the neighbours of class
// C, instead of building every row and dropping most of them in the next
// step (LUBM L7: ?Y ub:advisor ?X makes ~81K rows of which ~31K are
// undergraduates). The order and the costs are unchanged; EXPLAIN shows
// the check on the expansion's line and ANALYZE counts the expansion's
// rows after it.
func fuseTypeChecks(steps []Step, typeID ID) []Step {
	if typeID == 0 {
		return steps
	}
	out := steps[:0:0]
	for k := 0; k < len(steps); k++ {
		s := steps[k]
		if k+1 < len(steps) && s.Kind == StepExpand && s.ToNew && !s.PredNew && s.Pred.Kind == OpConst &&
			s.To.Kind == OpVar && s.TypeCheck == 0 {
			c := steps[k+1]
			if c.Kind == StepCheck && !c.PredNew && c.From.Kind == OpVar && c.From.Col == s.To.Col &&
				c.Pred.Kind == OpConst && c.Pred.ID == typeID && c.Dir == Out && c.To.Kind == OpConst && c.To.ID != 0 {
				s.TypeCheck = c.To.ID
				s.CheckPattern = c.Pattern
				s.EstRows = c.EstRows
				k++
			}
		}
		out = append(out, s)
	}
	return out
}

// fuseIntersections folds a known→known check (?x p ?w or ?w p ?x, p a
// constant other than rdf:type, ?w bound) that directly follows the
// expansion binding ?x into that expansion (Step.Intersect): each row's
// neighbours are intersected with the sorted list of its ?w value instead
// of making a row per neighbour and checking each (LUBM L1: 103,683 rows
// of which 106 pass; L7: 31,365 of which 1,763). It fuses when reading the
// lists of ?w, one per row before the expansion at most, costs less than
// what the check would: a row per neighbour and a lookup per distinct
// neighbour (each list costed as a lookup, 64, plus its entries). The
// order and the other costs are unchanged.
func fuseIntersections(steps []Step, stats *Stats, rows float64) []Step {
	out := steps[:0:0]
	for k := 0; k < len(steps); k++ {
		s := steps[k]
		in := rows
		rows = s.EstRows
		if k+1 >= len(steps) || s.Kind != StepExpand || !s.ToNew || s.PredNew || s.Pred.Kind != OpConst ||
			s.Pred.ID == 0 || (s.Pred.ID == stats.TypeID && s.Dir == In) || s.To.Kind != OpVar || s.Intersect {
			// (class, rdf:type, In) is the type index, not a list.
			out = append(out, s)
			continue
		}
		c := steps[k+1]
		if c.Kind != StepCheck || c.PredNew || c.Pred.Kind != OpConst || c.Pred.ID == 0 || c.Pred.ID == stats.TypeID ||
			c.From.Kind != OpVar || c.To.Kind != OpVar {
			out = append(out, s)
			continue
		}
		var w int
		var d Dir
		switch x := s.To.Col; {
		case c.From.Col == x && c.To.Col != x:
			w, d = c.To.Col, 1-c.Dir // ?x p ?w: x is in (w, p, reverse)
		case c.To.Col == x && c.From.Col != x:
			w, d = c.From.Col, c.Dir // ?w p ?x: x is in (w, p, dir)
		default:
			out = append(out, s)
			continue
		}
		made := math.Max(1, s.EstRows)
		fused := math.Max(1, in) * (64 + 2*stats.avgDegree(c.Pred.ID, d))
		check := made * (8 + 64 + stats.avgDegree(c.Pred.ID, 1-d))
		if fused >= check {
			out = append(out, s)
			continue
		}
		s.Intersect, s.IntersectCol, s.IntersectPred, s.IntersectDir, s.IntersectPattern = true, w, c.Pred.ID, d, c.Pattern
		s.EstRows = c.EstRows
		rows = c.EstRows
		k++
		out = append(out, s)
	}
	return out
}

func (s *orderSearch) dfs(cur searchState, steps []Step) {
	if s.err != nil {
		return
	}
	s.visited++
	if s.ctx != nil && s.visited%ctxCheckEvery == 1 {
		if err := s.ctx.Err(); err != nil {
			s.err = err
			return
		}
	}
	if cur.done == uint64(1)<<len(s.pats)-1 || (len(s.pats) == 64 && cur.done == math.MaxUint64) {
		if cur.cost < s.bestCost {
			s.bestCost = cur.cost
			s.best = append([]Step(nil), steps...)
		}
		return
	}
	cands := s.candidates(cur)
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].st.cost < cands[j].st.cost })
	for i, c := range cands {
		if c.st.cost >= s.bestCost {
			continue // bound: costs only grow
		}
		if i > 0 && s.visited > s.budget && s.best != nil {
			break // over budget: finish greedily
		}
		s.dfs(c.st, append(steps, c.steps...))
		if s.err != nil {
			return // the context is done: abandon the search
		}
	}
}

type candidate struct {
	st    searchState
	steps []Step
}

func (s *orderSearch) isBound(cur searchState, t rterm) bool {
	return !t.isVar || cur.bound&(1<<uint(t.col)) != 0
}

// candidates lists the possible next steps: a step from a bound end of a
// remaining pattern, or, when no remaining pattern touches a bound value, a
// start (index or constant).
func (s *orderSearch) candidates(cur searchState) []candidate {
	var out []candidate
	for i, p := range s.pats {
		if cur.done&(1<<uint(i)) != 0 {
			continue
		}
		sb, ob := s.isBound(cur, p.s), s.isBound(cur, p.o)
		sVar, oVar := p.s.isVar && sb, p.o.isVar && ob // bound through a column
		switch {
		case sb && ob:
			// A check; start from a column when there is one, else from a
			// constant; among columns, the side with the smaller fan-out.
			d := Out
			switch {
			case sVar && oVar:
				if s.stats.avgDegree(s.predID(p), In) < s.stats.avgDegree(s.predID(p), Out) {
					d = In
				}
			case oVar:
				d = In
			case !sVar && !oVar && s.isType(p):
				d = Out
			}
			out = append(out, s.step(cur, i, StepCheck, d))
		case sb:
			out = append(out, s.step(cur, i, StepExpand, Out))
		case ob:
			if s.isType(p) && !p.o.isVar {
				// ?x rdf:type C with ?x unbound: the type index.
				out = append(out, s.indexStep(cur, i, p.o.id, In, p.s.col, true))
				continue
			}
			out = append(out, s.step(cur, i, StepExpand, In))
		}
	}
	if len(out) > 0 && cur.bound != 0 {
		// Patterns connected to bound values exist: a type-index scan is
		// then a cross product, considered only when nothing connects.
		conn := out[:0:0]
		for _, c := range out {
			if c.steps[0].Kind != StepIndex {
				conn = append(conn, c)
			}
		}
		if len(conn) > 0 {
			return conn
		}
		return out
	}
	if len(out) > 0 {
		return out
	}
	// Nothing bound touches a remaining pattern: index starts.
	for i, p := range s.pats {
		if cur.done&(1<<uint(i)) != 0 {
			continue
		}
		switch {
		case !p.p.isVar && s.isType(p):
			// ?x rdf:type ?c: the subjects of rdf:type are every typed vertex.
			out = append(out, s.indexThen(cur, i, p.p.id, Out, p.s.col))
		case !p.p.isVar:
			out = append(out, s.indexThen(cur, i, p.p.id, Out, p.s.col))
			if p.o.isVar && p.o.col != p.s.col {
				out = append(out, s.indexThen(cur, i, p.p.id, In, p.o.col))
			}
		default:
			out = append(out, s.indexThen(cur, i, 0, Out, p.s.col))
		}
	}
	return out
}

func (s *orderSearch) isType(p rpattern) bool {
	return !p.p.isVar && s.stats.TypeID != 0 && p.p.id == s.stats.TypeID
}

func (s *orderSearch) predID(p rpattern) ID {
	if p.p.isVar {
		return 0
	}
	return p.p.id
}

func operand(t rterm) Operand {
	if t.isVar {
		return Column(t.col)
	}
	return Const(t.id)
}

// indexStep binds col from an index: the type index of class (Dir In), or
// the subjects (Out) / objects (In) of predicate pred (0: every subject).
// consume says the index fully answers pattern i (?x rdf:type C).
func (s *orderSearch) indexStep(cur searchState, i int, id ID, d Dir, col int, consume bool) candidate {
	var rows float64
	var pred Operand
	switch {
	case consume:
		rows = float64(s.stats.Classes[id])
		pred = Const(id)
	case id == 0:
		rows = s.stats.vertices()
		pred = Operand{Kind: OpAny}
	default:
		rows = s.stats.starts(id, d)
		pred = Const(id)
	}
	next := cur.clone()
	next.domain[col] = math.Max(1, rows)
	if consume {
		next.origin[col] = origin{class: id, ok: true}
	} else if id != 0 {
		next.origin[col] = origin{pred: id, dir: d, ok: true}
	}
	next.rows = cur.rows * rows
	next.cost = cur.cost + next.rows
	next.bound |= 1 << uint(col)
	pat := -1
	if consume {
		next.done |= 1 << uint(i)
		pat = i
	}
	return candidate{st: next, steps: []Step{{
		Kind: StepIndex, Pattern: pat, Pred: pred, Dir: d, To: Column(col), ToNew: true,
		EstRows: next.rows, Partitioned: -1,
	}}}
}

// indexThen is an index start followed by the expansion of pattern i from
// the column the index bound.
func (s *orderSearch) indexThen(cur searchState, i int, pred ID, d Dir, col int) candidate {
	c := s.indexStep(cur, i, pred, d, col, false)
	if pred == s.stats.TypeID && pred != 0 && d == Out {
		// Every typed vertex: the union of the type index over classes.
		c.steps[0].Pred = Const(pred)
	}
	next := s.step(c.st, i, StepExpand, d)
	if s.isBound(c.st, s.pats[i].s) && s.isBound(c.st, s.pats[i].o) {
		next = s.step(c.st, i, StepCheck, d)
	}
	return candidate{st: next.st, steps: append(c.steps, next.steps...)}
}

// step is the step of pattern i from its subject (Out) or object (In).
func (s *orderSearch) step(cur searchState, i int, kind StepKind, d Dir) candidate {
	p := s.pats[i]
	from, to := p.s, p.o
	if d == In {
		from, to = p.o, p.s
	}
	pred := s.predID(p)
	st := Step{
		Kind: kind, Pattern: i, From: operand(from), Pred: operand(p.p), Dir: d, To: operand(to),
		Partitioned: -1,
	}
	next := cur.clone()
	next.done |= 1 << uint(i)
	deg := s.stats.avgDegree(pred, d)
	// The fraction of the rows whose From vertex has the edge at all.
	cover := 1.0
	if from.isVar {
		cover = math.Min(1, s.stats.starts(pred, d)/math.Max(1, cur.domain[from.col]))
		if o := cur.origin[from.col]; o.ok && o.class != 0 && pred != 0 {
			// Instances of a class: the class's own fan-out.
			if cp, ok := s.stats.classPred(o.class, pred, d); ok && s.stats.Classes[o.class] > 0 {
				cover = math.Min(1, float64(cp.Vertices)/float64(s.stats.Classes[o.class]))
				if cp.Vertices > 0 {
					deg = float64(cp.Edges) / float64(cp.Vertices)
				}
			} else if s.stats.ClassPreds != nil {
				cover = 0 // no instance of the class has the edge
			}
		}
	}
	if p.p.isVar && !s.isBound(cur, p.p) {
		st.PredNew = true
		next.bound |= 1 << uint(p.p.col)
		next.domain[p.p.col] = math.Max(1, float64(len(s.stats.Preds)))
	}
	in := cur.rows
	switch kind {
	case StepExpand:
		st.ToNew = true
		if s.isType(p) && d == Out {
			deg = math.Max(1, deg)
		}
		next.rows = in * cover * deg
		next.bound |= 1 << uint(to.col)
		next.domain[to.col] = math.Max(1, math.Min(next.rows, s.stats.ends(pred, d)))
		if pred != 0 && !(s.isType(p) && d == Out) {
			next.origin[to.col] = origin{pred: pred, dir: 1 - d, ok: true}
		}
	case StepCheck:
		sel := 0.0
		switch {
		case s.isType(p) && d == Out && !to.isVar && from.isVar:
			sel = math.Min(1, float64(s.stats.Classes[to.id])/math.Max(1, cur.domain[from.col]))
			cover = 1
			switch o := cur.origin[from.col]; {
			case o.ok && o.class != 0 && o.class == to.id:
				sel = 1
			case o.ok && o.pred != 0 && s.stats.ClassPreds != nil:
				// The share of the vertices having the edge that are
				// instances of the class.
				cp, _ := s.stats.classPred(to.id, o.pred, o.dir)
				sel = math.Min(1, float64(cp.Vertices)/s.stats.starts(o.pred, o.dir))
			}
			next.origin[from.col] = origin{class: to.id, ok: true}
		case to.isVar:
			sel = math.Min(1, deg/math.Max(1, math.Max(s.stats.ends(pred, d), cur.domain[to.col])))
		default:
			sel = math.Min(1, deg/s.stats.ends(pred, d))
		}
		if !from.isVar && !to.isVar {
			next.rows = in // a constant check: all or nothing
		} else {
			next.rows = in * cover * sel
		}
	}
	st.EstRows = next.rows
	// Cost: every input row is looked up once, every output row is made.
	// A type check tests a cached bitmap of the class (exec), a fraction of
	// a lookup.
	lookup := 1.0
	if kind == StepCheck && s.isType(p) && d == Out && !to.isVar {
		lookup = 0.2
	}
	next.cost = cur.cost + lookup*in + next.rows
	return candidate{st: next, steps: []Step{st}}
}

// ---------------------------------------------------------------------------
// chooseExecMode: per step, local / in place / fork-join.

func chooseExecMode(st *state) error {
	shards := max(1, st.stats.Shards)
	for _, w := range st.bgps {
		part := -1 // the column the rows are partitioned on
		rows := math.Max(1, w.seedRows)
		for k := range w.node.Steps {
			step := &w.node.Steps[k]
			step.Partitioned = part
			switch {
			case shards == 1:
				step.Mode = ModeLocal
			case step.Kind == StepIndex:
				step.Mode = st.pickIndex(rows*math.Max(1, step.EstRows), shards, len(w.node.Vars))
				// Forked, every shard scans its own part of the index: the
				// rows are then partitioned on the new column. Read in
				// place, the rows stay with the node running the step.
				part = -1
				if step.Mode == ModeForkJoin {
					part = step.To.Col
				}
			case k == 0 && step.From.Kind == OpConst:
				// The exploration starts on the constant's owner.
				step.Mode = ModeLocal
			case step.From.Kind == OpConst:
				// One list, the same for every row: read it (or move the
				// rows to its owner only when forced).
				if st.opts.Mode == ModeForkJoin {
					step.Mode = ModeForkJoin
					part = -1
				} else {
					step.Mode = ModeInPlace
				}
			case step.From.Col == part && step.Intersect && step.IntersectCol != part:
				// The rows are on their From values' owners, the lists
				// intersected with are read where they are.
				step.Mode = ModeInPlace
			case step.From.Col == part:
				step.Mode = ModeLocal
			case st.opts.Mode == ModeAuto && step.Kind == StepCheck && step.Pred.Kind == OpConst &&
				step.Pred.ID == st.stats.TypeID && step.Dir == Out && step.To.Kind == OpConst:
				// A type check tests a cached bitmap of the owner shard's
				// instances (exec): no remote read per row to save.
				step.Mode = ModeInPlace
			default:
				deg := st.stats.avgDegree(constOr0(step.Pred), step.Dir)
				// Rows already forked are on every node, and each forks.
				nodes := 1
				if part >= 0 {
					nodes = shards
				}
				step.Mode = st.pick(rows, shards, nodes, len(w.node.Vars), deg)
				if step.Mode == ModeForkJoin {
					part = step.From.Col
				}
			}
			rows = step.EstRows
		}
	}
	return nil
}

func constOr0(o Operand) ID {
	if o.Kind == OpConst {
		return o.ID
	}
	return 0
}

// pick chooses between in place and fork-join for a step over rows rows
// held by nodes nodes.
func (st *state) pick(rows float64, shards, nodes, cols int, deg float64) Mode {
	t := st.opts.Cost.Threshold(shards, cols, deg) * float64(nodes)
	return st.choose(rows, t)
}

// pickIndex chooses for an index step making rows rows.
func (st *state) pickIndex(rows float64, shards, cols int) Mode {
	return st.choose(rows, st.opts.Cost.IndexThreshold(shards, cols))
}

// choose forks from threshold rows on, unless a mode is forced or the
// threshold overridden.
func (st *state) choose(rows, threshold float64) Mode {
	switch st.opts.Mode {
	case ModeInPlace, ModeForkJoin:
		return st.opts.Mode
	}
	if st.opts.ForkThreshold > 0 {
		threshold = st.opts.ForkThreshold
	}
	if rows >= threshold {
		return ModeForkJoin
	}
	return ModeInPlace
}
