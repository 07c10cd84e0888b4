package exec

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/sparql"
)

// ExplainStep is one step of an exploration as EXPLAIN shows it.
type ExplainStep struct {
	N           int      `json:"n"`
	Kind        string   `json:"kind"`
	Pattern     int      `json:"pattern"` // index in the BGP, -1 for an index start
	From        string   `json:"from,omitempty"`
	Pred        string   `json:"pred"`
	Dir         string   `json:"dir"`
	To          string   `json:"to"`
	Binds       []string `json:"binds,omitempty"`
	Mode        string   `json:"mode"`
	Partitioned string   `json:"partitioned_on,omitempty"`
	EstRows     float64  `json:"est_rows"`
	// Check is a type check fused into this expansion ("?x rdf:type C",
	// pattern CheckPattern): only neighbours of class C make rows, and
	// est_rows and the actual rows are after it.
	Check        string `json:"fused_check,omitempty"`
	CheckPattern *int   `json:"fused_check_pattern,omitempty"`
	// Intersect is a known→known check fused into this expansion (pattern
	// IntersectPattern): each row's neighbours are intersected with the
	// list of the other, bound end, and est_rows and the actual rows are
	// after it.
	Intersect        string `json:"fused_intersect,omitempty"`
	IntersectPattern *int   `json:"fused_intersect_pattern,omitempty"`
	// EXPLAIN ANALYZE
	Actual *StepStatsJSON `json:"actual,omitempty"`
}

// StepStatsJSON is StepStats for JSON.
type StepStatsJSON struct {
	RowsIn       uint64  `json:"rows_in"`
	RowsOut      uint64  `json:"rows_out"`
	TimeMs       float64 `json:"time_ms"`
	Reads        uint64  `json:"fabric_reads"`
	ReadBytes    uint64  `json:"fabric_read_bytes"`
	RoundTrips   uint64  `json:"fabric_round_trips"`
	Messages     uint64  `json:"fabric_messages"`
	MessageBytes uint64  `json:"fabric_message_bytes"`
	Forks        uint64  `json:"forks"`
	// Shards are the step's figures on each shard (by shard; their sum
	// is the above).
	Shards []StepStatsJSON `json:"shards,omitempty"`
}

// ExplainNode is a node of the plan tree as EXPLAIN shows it.
type ExplainNode struct {
	Op          string        `json:"op"`
	Vars        []string      `json:"vars,omitempty"`
	Keys        []string      `json:"keys,omitempty"`
	Offset      int64         `json:"offset,omitempty"`
	Limit       *int64        `json:"limit,omitempty"`
	Empty       bool          `json:"empty,omitempty"`
	Start       string        `json:"start,omitempty"`
	Coordinator *int          `json:"coordinator,omitempty"`
	EstRows     float64       `json:"est_rows,omitempty"`
	EstCost     float64       `json:"est_cost,omitempty"`
	Steps       []ExplainStep `json:"steps,omitempty"`
	// Detail says what an operator does: the join algorithm and why, the
	// filter or bind expressions, the seed of an exploration.
	Detail []string       `json:"detail,omitempty"`
	Input  *ExplainNode   `json:"input,omitempty"`
	Inputs []*ExplainNode `json:"inputs,omitempty"` // operators with two inputs (left, right)
}

// ExplainDoc is the whole EXPLAIN output.
type ExplainDoc struct {
	Vars          []string       `json:"vars"`
	Mode          string         `json:"mode"`
	ForkThreshold string         `json:"fork_threshold"`
	Shards        int            `json:"shards"`
	Passes        []string       `json:"planner_passes"`
	Form          string         `json:"form"`
	Root          *ExplainNode   `json:"plan"`
	Exists        []*ExplainNode `json:"exists,omitempty"`   // the plans of EXISTS patterns
	Describe      *ExplainNode   `json:"describe,omitempty"` // DESCRIBE's exploration
	PlanMs        *float64       `json:"plan_ms,omitempty"`
	ExecMs        *float64       `json:"exec_ms,omitempty"`
	Rows          *int           `json:"rows,omitempty"`
}

// ExplainPlan builds the EXPLAIN document of plan; with a (nil when not
// analyzed) it also carries the measurements.
func ExplainPlan(plan *planner.Plan, a *Analysis, store Store) *ExplainDoc {
	doc := &ExplainDoc{Mode: plan.Mode.String(), Shards: plan.Shards, Passes: planner.PassNames()}
	doc.ForkThreshold = "derived from the cost model"
	if plan.ForkThreshold > 0 {
		doc.ForkThreshold = fmt.Sprint(plan.ForkThreshold)
	}
	for _, v := range plan.Vars {
		doc.Vars = append(doc.Vars, "?"+string(v))
	}
	ex := 0
	var build func(n planner.Node) *ExplainNode
	two := func(op string, l, r planner.Node, detail ...string) *ExplainNode {
		return &ExplainNode{Op: op, Detail: detail, Inputs: []*ExplainNode{build(l), build(r)}}
	}
	build = func(n planner.Node) *ExplainNode {
		switch n := n.(type) {
		case *planner.Join:
			if n.Algo == planner.BindJoin {
				en := &ExplainNode{Op: "bind join", Detail: []string{n.Why, "the exploration starts from the left rows"}}
				en.Input = build(n.Right)
				return en
			}
			return two("hash join", n.Left, n.Right, n.Why)
		case *planner.LeftJoin:
			d := []string{fmt.Sprintf("right side seeded with the numbered left rows (?%s)", n.RowVar)}
			if n.Expr != nil {
				d = append(d, "filter "+n.Expr.String())
			}
			return two("optional", n.Left, n.Right, d...)
		case *planner.Union:
			return two("union", n.Left, n.Right)
		case *planner.Minus:
			if n.RowVar != "" {
				return two("minus", n.Left, n.Right, fmt.Sprintf("anti bind join: the right side is seeded with the numbered left rows (?%s)", n.RowVar))
			}
			return two("minus", n.Left, n.Right, "hash: the sides share no variable bound in every row of both")
		case *planner.Filter:
			en := &ExplainNode{Op: "filter", Input: build(n.Input)}
			for _, e := range n.Exprs {
				en.Detail = append(en.Detail, e.String())
			}
			if len(n.Exprs) == 0 {
				return en.Input // every expression was pushed into the exploration
			}
			return en
		case *planner.Extend:
			en := &ExplainNode{Op: "extend", Input: build(n.Input)}
			for _, b := range n.Binds {
				en.Detail = append(en.Detail, fmt.Sprintf("?%s := %s", b.Var, b.Expr))
			}
			return en
		case *planner.Group:
			en := &ExplainNode{Op: "group", Input: build(n.Input)}
			for _, k := range n.Keys {
				en.Keys = append(en.Keys, k.String())
			}
			for _, a := range n.Aggs {
				en.Detail = append(en.Detail, fmt.Sprintf("?%s := %s", a.Var, a.Agg))
			}
			return en
		case *planner.Values:
			return &ExplainNode{Op: "values", Vars: varNames(n.Vars), Detail: []string{fmt.Sprintf("%d rows", len(n.Rows))}}
		case *planner.SeedRef:
			return &ExplainNode{Op: "seed", Detail: []string{fmt.Sprintf("the rows of slot %d", n.Slot)}}
		case *planner.Let:
			return two("let", n.Value, n.Body, fmt.Sprintf("slot %d holds the first input's rows", n.Slot))
		case *planner.PathScan:
			en := &ExplainNode{Op: "path", Detail: []string{tovString(n.Pattern.S) + " " + n.Pattern.Path.String() + " " + tovString(n.Pattern.O)}}
			if n.Seed != nil {
				en.Detail = append(en.Detail, "from the seed's rows")
				en.Input = build(n.Seed)
			}
			return en
		case *planner.GraphScan:
			en := &ExplainNode{Op: "graph", Detail: []string{"GRAPH " + tovString(n.Graph.Name)}, Input: build(n.Input)}
			if n.Seed != nil {
				en.Detail = append(en.Detail, "from the seed's rows")
				en.Inputs = []*ExplainNode{build(n.Seed)}
			}
			return en
		case *planner.Project:
			return &ExplainNode{Op: "project", Vars: varNames(n.Vars), Input: build(n.Input)}
		case *planner.Distinct:
			return &ExplainNode{Op: "distinct", Input: build(n.Input)}
		case *planner.OrderBy:
			en := &ExplainNode{Op: "order-by"}
			for _, k := range n.Keys {
				s := "?" + string(k.Var)
				if k.Desc {
					s = "DESC(" + s + ")"
				}
				en.Keys = append(en.Keys, s)
			}
			en.Input = build(n.Input)
			return en
		case *planner.Slice:
			en := &ExplainNode{Op: "slice", Offset: n.Offset, Input: build(n.Input)}
			if n.Limit >= 0 {
				l := n.Limit
				en.Limit = &l
			}
			return en
		case *planner.Explore:
			en := &ExplainNode{Op: "explore", Empty: n.Empty, EstRows: round2(n.EstRows), EstCost: round2(n.EstCost)}
			var ea *ExploreAnalysis
			if x := a.Of(n); x != nil {
				ea = x
				c := ea.Coordinator
				en.Coordinator = &c
			} else if a != nil && a.byExplore == nil && ex < len(a.Explores) {
				ea = &a.Explores[ex]
				c := ea.Coordinator
				en.Coordinator = &c
			}
			ex++
			switch {
			case n.Empty:
				en.Start = "nothing: a constant is not in the data"
			case len(n.Steps) == 0:
				en.Start = "one empty row"
			case n.StartConst != 0:
				en.Start = "constant " + termString(store, n.StartConst) + " (on its owner shard)"
			case n.Steps[0].Kind == planner.StepIndex:
				en.Start = "index on every shard"
			}
			if n.Seed != nil {
				en.Start = "the seed's rows (" + strings.Join(varNames(n.SeedVars), " ") + " bound), then " + en.Start
				if len(n.Steps) > 0 && n.Steps[0].Kind != planner.StepIndex && n.StartConst == 0 {
					en.Start = "the seed's rows (" + strings.Join(varNames(n.SeedVars), " ") + " bound)"
				}
			}
			for _, f := range n.Filters {
				at := fmt.Sprintf("after step %d", f.After+1)
				if f.After < 0 {
					at = "on the seed rows"
				}
				en.Detail = append(en.Detail, "filter "+f.Expr.String()+" "+at)
			}
			for k, s := range n.Steps {
				es := explainStep(k, s, n.Vars, store)
				if ea != nil && k < len(ea.Steps) {
					a := stepJSON(&ea.Steps[k])
					if k < len(ea.Shards) {
						for i := range ea.Shards[k] {
							a.Shards = append(a.Shards, *stepJSON(&ea.Shards[k][i]))
						}
					}
					es.Actual = a
				}
				en.Steps = append(en.Steps, es)
			}
			return en
		}
		return &ExplainNode{Op: fmt.Sprintf("%T", n)}
	}
	if plan.Root != nil {
		doc.Root = build(plan.Root)
	}
	doc.Form = plan.Form.String()
	if plan.Form == 0 {
		doc.Form = "SELECT"
	}
	for _, e := range plan.ExistsPlans() {
		doc.Exists = append(doc.Exists, build(e.Node))
	}
	if plan.Describe != nil {
		doc.Describe = build(plan.Describe.Explore)
	}
	if a != nil {
		p, e := ms(a.PlanTime.Seconds()), ms(a.ExecTime.Seconds())
		doc.PlanMs, doc.ExecMs, doc.Rows = &p, &e, &a.TotalRows
	}
	return doc
}

func stepJSON(st *StepStats) *StepStatsJSON {
	return &StepStatsJSON{RowsIn: st.RowsIn, RowsOut: st.RowsOut, TimeMs: ms(st.Time.Seconds()),
		Reads: st.Reads, ReadBytes: st.ReadBytes, RoundTrips: st.RoundTrips,
		Messages: st.Messages, MessageBytes: st.MessageBytes, Forks: st.Forks}
}

func ms(sec float64) float64 { return math.Round(sec*1e6) / 1e3 }

func round2(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return -1
	}
	return math.Round(x*100) / 100
}

func varNames(vs []sparql.Var) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = "?" + string(v)
	}
	return out
}

func termString(store Store, id ID) string {
	if id == 0 {
		return "(unknown)"
	}
	if store != nil {
		if t, ok := store.Term(id); ok {
			return t.String()
		}
	}
	return fmt.Sprintf("#%d", id)
}

func operandString(o planner.Operand, vars []sparql.Var, store Store) string {
	switch o.Kind {
	case planner.OpConst:
		return termString(store, o.ID)
	case planner.OpVar:
		if o.Col < len(vars) {
			return "?" + string(vars[o.Col])
		}
		return fmt.Sprintf("$%d", o.Col)
	}
	return "*"
}

func explainStep(k int, s planner.Step, vars []sparql.Var, store Store) ExplainStep {
	es := ExplainStep{N: k + 1, Kind: s.Kind.String(), Pattern: s.Pattern, Dir: s.Dir.String(),
		Pred: operandString(s.Pred, vars, store), To: operandString(s.To, vars, store),
		Mode: s.Mode.String(), EstRows: round2(s.EstRows)}
	if s.Kind == planner.StepIndex {
		switch {
		case s.Pred.Kind == planner.OpAny:
			es.Kind = "index: every subject"
		case s.Pred.ID == graphstore.TypeID && s.Dir == planner.Out:
			es.Kind = "index: every typed vertex"
		case s.Pattern >= 0:
			es.Kind = "index: type index"
		case s.Dir == planner.Out:
			es.Kind = "index: subjects of predicate"
		default:
			es.Kind = "index: objects of predicate"
		}
	} else {
		es.From = operandString(s.From, vars, store)
		switch {
		case s.Kind == planner.StepExpand && s.From.Kind == planner.OpConst:
			es.Kind = "expand const→var"
		case s.Kind == planner.StepExpand:
			es.Kind = "expand known→var"
		case s.To.Kind == planner.OpConst:
			es.Kind = "check known→const"
		case s.From.Kind == planner.OpConst:
			es.Kind = "check const→known"
		default:
			es.Kind = "check known→known"
		}
	}
	if s.TypeCheck != 0 {
		es.Check = es.To + " " + operandString(planner.Const(graphstore.TypeID), vars, store) + " " +
			operandString(planner.Const(s.TypeCheck), vars, store)
		cp := s.CheckPattern
		es.CheckPattern = &cp
	}
	if s.Intersect {
		pat := planner.Column(s.IntersectCol)
		// The fused pattern as written: ?To p ?W (read backwards) or ?W p ?To.
		if s.IntersectDir == planner.In {
			es.Intersect = es.To + " " + operandString(planner.Const(s.IntersectPred), vars, store) + " " + operandString(pat, vars, store)
		} else {
			es.Intersect = operandString(pat, vars, store) + " " + operandString(planner.Const(s.IntersectPred), vars, store) + " " + es.To
		}
		ip := s.IntersectPattern
		es.IntersectPattern = &ip
	}
	if s.PredNew {
		es.Binds = append(es.Binds, es.Pred)
	}
	if s.ToNew {
		es.Binds = append(es.Binds, es.To)
	}
	if s.Partitioned >= 0 && s.Partitioned < len(vars) {
		es.Partitioned = "?" + string(vars[s.Partitioned])
	}
	return es
}

// Explain returns the plan (and, with a, the measurements) as text.
func Explain(plan *planner.Plan, a *Analysis, store Store) string {
	doc := ExplainPlan(plan, a, store)
	var b strings.Builder
	head := "SELECT " + strings.Join(doc.Vars, " ")
	if doc.Form != "SELECT" {
		head = doc.Form
	}
	fmt.Fprintf(&b, "%s  [%d shard(s), mode %s, fork threshold %s]\n", head, doc.Shards, doc.Mode, doc.ForkThreshold)
	var walk func(n *ExplainNode, depth int)
	walk = func(n *ExplainNode, depth int) {
		ind := strings.Repeat("  ", depth)
		switch n.Op {
		case "project":
			fmt.Fprintf(&b, "%sproject %s\n", ind, strings.Join(n.Vars, " "))
		case "distinct":
			fmt.Fprintf(&b, "%sdistinct\n", ind)
		case "order-by":
			fmt.Fprintf(&b, "%sorder by %s\n", ind, strings.Join(n.Keys, " "))
		case "slice":
			lim := "all"
			if n.Limit != nil {
				lim = fmt.Sprint(*n.Limit)
			}
			fmt.Fprintf(&b, "%sslice offset %d limit %s\n", ind, n.Offset, lim)
		case "explore":
			fmt.Fprintf(&b, "%sexplore from %s  (est rows %s, est cost %s", ind, n.Start, num(n.EstRows), num(n.EstCost))
			if n.Coordinator != nil {
				fmt.Fprintf(&b, ", coordinator node %d", *n.Coordinator)
			}
			b.WriteString(")\n")
			for _, s := range n.Steps {
				fmt.Fprintf(&b, "%s  %d. %-24s", ind, s.N, s.Kind)
				if s.From != "" {
					fmt.Fprintf(&b, " %s", s.From)
				}
				fmt.Fprintf(&b, " %s %s → %s", s.Pred, s.Dir, s.To)
				if s.Check != "" {
					fmt.Fprintf(&b, " + fused check %s", s.Check)
				}
				if s.Intersect != "" {
					fmt.Fprintf(&b, " + intersect %s", s.Intersect)
				}
				fmt.Fprintf(&b, "  mode=%s", s.Mode)
				if s.Partitioned != "" {
					fmt.Fprintf(&b, " (rows on owners of %s)", s.Partitioned)
				}
				fmt.Fprintf(&b, " est=%s", num(s.EstRows))
				if a := s.Actual; a != nil {
					fmt.Fprintf(&b, "  | rows %d→%d time %.3fms reads %d (%d B, %d trips) msgs %d (%d B) forks %d",
						a.RowsIn, a.RowsOut, a.TimeMs, a.Reads, a.ReadBytes, a.RoundTrips, a.Messages, a.MessageBytes, a.Forks)
				}
				b.WriteByte('\n')
			}
		default:
			fmt.Fprintf(&b, "%s%s", ind, n.Op)
			if len(n.Vars) > 0 {
				fmt.Fprintf(&b, " %s", strings.Join(n.Vars, " "))
			}
			if len(n.Keys) > 0 {
				fmt.Fprintf(&b, " by %s", strings.Join(n.Keys, " "))
			}
			b.WriteByte('\n')
			for _, d := range n.Detail {
				fmt.Fprintf(&b, "%s  · %s\n", ind, d)
			}
		}
		if n.Op == "explore" {
			for _, d := range n.Detail {
				fmt.Fprintf(&b, "%s  · %s\n", ind, d)
			}
		}
		if n.Input != nil {
			walk(n.Input, depth+1)
		}
		for _, in := range n.Inputs {
			walk(in, depth+1)
		}
	}
	if doc.Root != nil {
		walk(doc.Root, 0)
	}
	for i, e := range doc.Exists {
		fmt.Fprintf(&b, "EXISTS pattern %d, seeded with the rows it tests:\n", i+1)
		walk(e, 1)
	}
	if doc.Describe != nil {
		fmt.Fprintf(&b, "DESCRIBE, from the resources:\n")
		walk(doc.Describe, 1)
	}
	if doc.PlanMs != nil {
		fmt.Fprintf(&b, "rows %d, plan %.3fms, execution %.3fms\n", *doc.Rows, *doc.PlanMs, *doc.ExecMs)
	}
	return b.String()
}

func num(x float64) string {
	if x < 0 {
		return "?"
	}
	if x == math.Trunc(x) && x < 1e15 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// ExplainJSON returns the EXPLAIN document as indented JSON.
func ExplainJSON(plan *planner.Plan, a *Analysis, store Store) ([]byte, error) {
	return json.MarshalIndent(ExplainPlan(plan, a, store), "", "  ")
}

func tovString(x sparql.TermOrVar) string {
	if x.IsVar() {
		return "?" + string(x.Var)
	}
	return x.Term.String()
}
