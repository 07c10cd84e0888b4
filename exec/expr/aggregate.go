package expr

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// Accumulator computes one aggregate over the rows of one group.
type Accumulator interface {
	// Add feeds one row of the group.
	Add(row Binding)
	// Result returns the aggregate's value; ok is false when it is an
	// error (the aggregate's variable stays unbound).
	Result() (t rdf.Term, ok bool)
}

// SolutionKeyer is implemented by rows fed to COUNT(DISTINCT *): equal
// solutions (the same terms for the same variables) must have equal keys.
// Rows without it make COUNT(DISTINCT *) an error.
type SolutionKeyer interface {
	SolutionKey() string
}

// AggregateProgram is a compiled aggregate (§18.5): compile once per query,
// then call New for every group.
type AggregateProgram struct {
	name      string
	distinct  bool
	separator string
	arg       *Program // nil for COUNT(*)
	env       *Env
	// held is what its accumulators hold beyond their fixed size, summed:
	// DISTINCT's sets, GROUP_CONCAT's strings (Held).
	held atomic.Int64
}

// Held returns the bytes the accumulators of p hold beyond their fixed
// size — the values DISTINCT has seen, the strings GROUP_CONCAT builds —
// summed over every accumulator p made, as they grow: an operator charges
// its memory budget with the change over its run.
func (p *AggregateProgram) Held() int64 { return p.held.Load() }

// seenBytes is what a term costs in a DISTINCT set (its strings, the
// map's key and slot).
func seenBytes(t rdf.Term) int64 { return int64(len(t.Value)+len(t.Datatype)+len(t.Lang)) + 64 }

// CompileAggregate compiles a. The semantics, per aggregate, over the
// values of the argument in the group (after DISTINCT, which compares
// terms):
//   - COUNT counts the rows where the argument is bound and not an error
//     (COUNT(*) counts rows); 0 for an empty group.
//   - SUM adds with numeric type promotion; 0 for an empty group; an
//     unbound, non-numeric or error value makes the result an error.
//   - AVG is SUM divided by COUNT (so over integers it is a decimal); 0 for
//     an empty group; errors as for SUM.
//   - MIN and MAX use the ORDER BY order (Compare) and skip unbound and
//     error values; unbound for an empty group.
//   - SAMPLE returns the first bound value; unbound for an empty group.
//   - GROUP_CONCAT joins the lexical forms of the values with the
//     separator into a simple literal, skipping unbound and error values;
//     "" for an empty group; an IRI or blank node makes it an error.
func CompileAggregate(a *sparql.Aggregate, env *Env) (*AggregateProgram, error) {
	p := &AggregateProgram{name: a.Name, distinct: a.Distinct, separator: a.Separator, env: env}
	switch a.Name {
	case "COUNT", "SUM", "AVG", "MIN", "MAX", "SAMPLE", "GROUP_CONCAT":
	default:
		return nil, fmt.Errorf("unknown aggregate %s at %d:%d", a.Name, a.Line, a.Col)
	}
	if a.Arg == nil {
		if a.Name != "COUNT" {
			return nil, fmt.Errorf("%s at %d:%d needs an argument", a.Name, a.Line, a.Col)
		}
		return p, nil
	}
	arg, err := Compile(a.Arg, env)
	if err != nil {
		return nil, fmt.Errorf("cannot compile the argument of %s: %w", a.Name, err)
	}
	p.arg = arg
	return p, nil
}

// NewAggregate compiles a and returns an accumulator for one group; use
// CompileAggregate and New when there are many groups.
func NewAggregate(a *sparql.Aggregate, env *Env) (Accumulator, error) {
	p, err := CompileAggregate(a, env)
	if err != nil {
		return nil, err
	}
	return p.New(), nil
}

// New returns an empty accumulator for one group.
func (p *AggregateProgram) New() Accumulator {
	base := aggBase{p: p}
	if p.distinct {
		base.seen = make(map[rdf.Term]struct{})
	}
	switch p.name {
	case "COUNT":
		if p.arg == nil {
			if p.distinct {
				return &countStar{keys: make(map[string]struct{}), p: p}
			}
			return &countStar{}
		}
		return &countAgg{aggBase: base}
	case "SUM":
		return &sumAgg{aggBase: base, sum: Int(0)}
	case "AVG":
		return &sumAgg{aggBase: base, sum: Int(0), avg: true}
	case "MIN", "MAX":
		return &minMaxAgg{aggBase: base, max: p.name == "MAX"}
	case "SAMPLE":
		return &sampleAgg{aggBase: base}
	}
	return &groupConcatAgg{aggBase: base}
}

// aggBase evaluates the argument and applies DISTINCT.
type aggBase struct {
	p    *AggregateProgram
	seen map[rdf.Term]struct{}
}

// next evaluates the argument on row. fresh is false for a value DISTINCT
// has already seen; err is set for an unbound or error value.
func (a *aggBase) next(row Binding) (v Value, fresh bool, err error) {
	v, err = a.p.arg.EvalValue(row)
	if err == nil && !v.IsBound() {
		err = errUnbound
	}
	if err != nil {
		return Value{}, true, err
	}
	if a.seen != nil {
		t := v.Term()
		if _, dup := a.seen[t]; dup {
			return v, false, nil
		}
		a.seen[t] = struct{}{}
		a.p.held.Add(seenBytes(t))
	}
	return v, true, nil
}

type countStar struct {
	n      int64
	keys   map[string]struct{}
	p      *AggregateProgram // with keys: where they are counted (Held)
	failed bool
}

func (c *countStar) Add(row Binding) {
	if c.keys == nil {
		c.n++
		return
	}
	k, ok := row.(SolutionKeyer)
	if !ok {
		c.failed = true
		return
	}
	key := k.SolutionKey()
	if _, dup := c.keys[key]; !dup {
		c.keys[key] = struct{}{}
		c.p.held.Add(int64(len(key)) + 48)
	}
}

func (c *countStar) Result() (rdf.Term, bool) {
	if c.failed {
		return rdf.Term{}, false
	}
	if c.keys != nil {
		return Int(int64(len(c.keys))).Term(), true
	}
	return Int(c.n).Term(), true
}

type countAgg struct {
	aggBase
	n int64
}

func (c *countAgg) Add(row Binding) {
	if _, fresh, err := c.next(row); err == nil && fresh {
		c.n++
	}
}

func (c *countAgg) Result() (rdf.Term, bool) { return Int(c.n).Term(), true }

type sumAgg struct {
	aggBase
	sum    Value
	n      int64
	avg    bool
	failed bool
}

func (s *sumAgg) Add(row Binding) {
	if s.failed {
		return
	}
	v, fresh, err := s.next(row)
	if err != nil {
		s.failed = true
		return
	}
	if !fresh {
		return
	}
	if s.sum, err = arith('+', s.sum, v); err != nil {
		s.failed = true
		return
	}
	s.n++
}

func (s *sumAgg) Result() (rdf.Term, bool) {
	if s.failed {
		return rdf.Term{}, false
	}
	if !s.avg {
		return s.sum.Term(), true
	}
	if s.n == 0 {
		return Int(0).Term(), true
	}
	avg, err := arith('/', s.sum, Int(s.n))
	if err != nil {
		return rdf.Term{}, false
	}
	return avg.Term(), true
}

type minMaxAgg struct {
	aggBase
	best Value
	max  bool
}

func (m *minMaxAgg) Add(row Binding) {
	v, fresh, err := m.next(row)
	if err != nil || !fresh {
		return
	}
	if !m.best.IsBound() {
		m.best = v
		return
	}
	c := CompareValues(v, m.best)
	if (m.max && c > 0) || (!m.max && c < 0) {
		m.best = v
	}
}

func (m *minMaxAgg) Result() (rdf.Term, bool) {
	if !m.best.IsBound() {
		return rdf.Term{}, false
	}
	return m.best.Term(), true
}

type sampleAgg struct {
	aggBase
	v Value
}

func (s *sampleAgg) Add(row Binding) {
	if s.v.IsBound() {
		return
	}
	if v, _, err := s.next(row); err == nil {
		s.v = v
	}
}

func (s *sampleAgg) Result() (rdf.Term, bool) {
	if !s.v.IsBound() {
		return rdf.Term{}, false
	}
	return s.v.Term(), true
}

type groupConcatAgg struct {
	aggBase
	b      strings.Builder
	any    bool
	failed bool
}

func (g *groupConcatAgg) Add(row Binding) {
	if g.failed {
		return
	}
	v, fresh, err := g.next(row)
	if err != nil || !fresh {
		return
	}
	if !v.kind.isLiteral() {
		g.failed = true
		return
	}
	if g.p.env.checkSize("GROUP_CONCAT", g.b.Len()+len(g.p.separator)+len(v.Term().Value)) != nil {
		g.failed = true // and the query ends (Env.Abort)
		return
	}
	before := g.b.Cap()
	if g.any {
		g.b.WriteString(g.p.separator)
	}
	g.any = true
	g.b.WriteString(v.Term().Value)
	if grown := g.b.Cap() - before; grown > 0 {
		g.p.held.Add(int64(grown))
	}
}

func (g *groupConcatAgg) Result() (rdf.Term, bool) {
	if g.failed {
		return rdf.Term{}, false
	}
	return String(g.b.String()).Term(), true
}
