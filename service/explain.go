package service

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/sparql"
	"github.com/wukongd/wukongd/web"
)

// webPlan maps the engine's plan (with the measurements of analyze, when a
// is not nil) to web's Plan: the steps in execution order — for each
// exploration its steps, then the operators and solution modifiers above
// it. An operator with two inputs (hash join, OPTIONAL, UNION, MINUS, …)
// is one step whose children are its inputs, each a step whose children
// are that input's steps; EXISTS and DESCRIBE plans follow the main plan
// the same way.
func webPlan(q *sparql.Query, plan *planner.Plan, a *exec.Analysis, store exec.Store) *web.Plan {
	doc := exec.ExplainPlan(plan, a, store)
	form := q.Form
	short := abbreviator(q.Prefixes)
	p := &web.Plan{Form: strings.ToLower(form.String()), Shards: doc.Shards, Analyzed: a != nil}
	p.Notes = append(p.Notes, "mode "+doc.Mode, "fork threshold "+doc.ForkThreshold,
		"planner passes "+strings.Join(doc.Passes, ", "))
	var total web.FabricStats
	est := 0.0 // the estimated rows of the last step
	var walk func(n *exec.ExplainNode, out *[]web.PlanStep)
	sub := func(op string, n *exec.ExplainNode) web.PlanStep {
		ps := web.PlanStep{Op: op}
		walk(n, &ps.Children)
		ps.EstRows = est
		return ps
	}
	walk = func(n *exec.ExplainNode, out *[]web.PlanStep) {
		if n == nil {
			return
		}
		walk(n.Input, out) // the input runs first
		detail := short(strings.Join(n.Detail, "; "))
		switch n.Op {
		case "explore":
			if n.Coordinator != nil {
				p.Notes = append(p.Notes, fmt.Sprintf("exploration coordinated by node %d", *n.Coordinator))
			}
			est = n.EstRows
			if len(n.Steps) == 0 {
				*out = append(*out, web.PlanStep{Op: "explore", Pattern: "{}", Start: n.Start, EstRows: n.EstRows})
				return
			}
			for i, s := range n.Steps {
				ps := planStep(s)
				ps.Pattern, ps.Start = short(ps.Pattern), short(ps.Start)
				if i == 0 && n.Start != "" {
					ps.Start = ps.Start + " (" + short(n.Start) + ")"
				}
				if s.Actual != nil {
					ps.Fabric = &web.FabricStats{Reads: int64(s.Actual.Reads), ReadBytes: int64(s.Actual.ReadBytes),
						Messages: int64(s.Actual.Messages), MessageBytes: int64(s.Actual.MessageBytes)}
					total = addStats(total, *ps.Fabric)
				}
				*out = append(*out, ps)
			}
		case "project":
			*out = append(*out, web.PlanStep{Op: "project", Pattern: strings.Join(n.Vars, " "), EstRows: est})
		case "distinct":
			*out = append(*out, web.PlanStep{Op: "distinct", Pattern: "DISTINCT", EstRows: est})
		case "order-by":
			*out = append(*out, web.PlanStep{Op: "order-by", Pattern: "ORDER BY " + strings.Join(n.Keys, " "), EstRows: est})
		case "slice":
			pat := fmt.Sprintf("OFFSET %d", n.Offset)
			est = max(est-float64(n.Offset), 0)
			if n.Limit != nil {
				pat += fmt.Sprintf(" LIMIT %d", *n.Limit)
				est = min(est, float64(*n.Limit))
			}
			*out = append(*out, web.PlanStep{Op: "slice", Pattern: pat, EstRows: est})
		case "group":
			pat := detail
			if len(n.Keys) > 0 {
				pat = strings.TrimPrefix(short("GROUP BY "+strings.Join(n.Keys, " "))+"; "+detail, "; ")
			}
			*out = append(*out, web.PlanStep{Op: "group", Pattern: strings.TrimSuffix(pat, "; "), EstRows: est})
		default:
			ps := web.PlanStep{Op: n.Op, Pattern: detail, EstRows: est}
			if len(n.Inputs) == 2 && n.Input == nil {
				ps.Children = []web.PlanStep{sub("left", n.Inputs[0]), sub("right", n.Inputs[1])}
			} else {
				for i, in := range n.Inputs {
					ps.Children = append(ps.Children, sub(fmt.Sprintf("input %d", i+1), in))
				}
			}
			switch {
			case n.EstRows > 0:
				ps.EstRows = n.EstRows
			case n.Op == "union" && len(ps.Children) == 2:
				ps.EstRows = ps.Children[0].EstRows + ps.Children[1].EstRows
			case len(ps.Children) > 0:
				ps.EstRows = ps.Children[0].EstRows // the left input's rows
			}
			est = ps.EstRows
			*out = append(*out, ps)
		}
	}
	walk(doc.Root, &p.Steps)
	if a != nil {
		// The last step's output is the result.
		if k := len(p.Steps) - 1; k >= 0 && p.Steps[k].ActualRows == nil {
			rows := int64(a.TotalRows)
			p.Steps[k].ActualRows = &rows
		}
	}
	if doc.Describe != nil {
		p.Steps = append(p.Steps, sub("describe", doc.Describe))
	}
	for i, e := range doc.Exists {
		p.Steps = append(p.Steps, sub(fmt.Sprintf("exists %d", i+1), e))
	}
	if a != nil {
		p.Rows = int64(a.TotalRows)
		p.Elapsed = web.Duration(a.PlanTime + a.ExecTime)
		p.Fabric = &total
		p.Notes = append(p.Notes, "a step's time is summed over the nodes that ran it")
		p.Notes = append(p.Notes, fmt.Sprintf("planning %.3f ms, execution %.3f ms",
			float64(a.PlanTime)/float64(time.Millisecond), float64(a.ExecTime)/float64(time.Millisecond)))
	}
	return p
}

var iriRef = regexp.MustCompile(`<([^<>"{}|^\x60\\\s]*)>`)

// localName matches the local names printed as prefix:local.
var localName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// abbreviator returns a function that writes the IRIs of s with the
// query's prefixes (the longest namespace that leaves a simple local
// name).
func abbreviator(prefixes []sparql.Prefix) func(s string) string {
	return func(s string) string {
		return iriRef.ReplaceAllStringFunc(s, func(m string) string {
			iri := m[1 : len(m)-1]
			best := ""
			for _, p := range prefixes {
				if strings.HasPrefix(iri, p.IRI) && len(p.IRI) > len(best) && localName.MatchString(iri[len(p.IRI):]) {
					best = p.IRI
					m = p.Name + ":" + iri[len(p.IRI):]
				}
			}
			return m
		})
	}
}

// planStep maps one exploration step.
func planStep(s exec.ExplainStep) web.PlanStep {
	ps := web.PlanStep{Op: s.Kind, Direction: s.Dir, Mode: s.Mode, EstRows: s.EstRows}
	if strings.HasPrefix(s.Kind, "index") {
		ps.Start = "index:" + s.Pred
		switch s.Kind {
		case "index: type index":
			ps.Pattern = s.To + " a " + s.Pred
		case "index: subjects of predicate":
			ps.Pattern = s.To + " " + s.Pred + " []"
		case "index: objects of predicate":
			ps.Pattern = "[] " + s.Pred + " " + s.To
		case "index: every typed vertex":
			ps.Start = "index:rdf:type"
			ps.Pattern = s.To + " a []"
		default:
			ps.Start = "index:all subjects"
			ps.Pattern = s.To + " [] []"
		}
	} else {
		ps.Start = s.From
		if s.Dir == "in" {
			ps.Pattern = s.To + " " + s.Pred + " " + s.From
		} else {
			ps.Pattern = s.From + " " + s.Pred + " " + s.To
		}
		if s.Check != "" {
			// A type check fused into the expansion: both patterns.
			ps.Pattern += " . " + s.Check
		}
		if s.Intersect != "" {
			// A known→known check fused into the expansion: its pattern too.
			ps.Pattern += " . " + s.Intersect
		}
	}
	if s.Actual != nil {
		rows := int64(s.Actual.RowsOut)
		ps.ActualRows = &rows
		ps.Elapsed = web.Duration(s.Actual.TimeMs * float64(time.Millisecond))
		for i, sh := range s.Actual.Shards {
			ps.Shards = append(ps.Shards, web.ShardStepStats{Shard: i, Rows: int64(sh.RowsOut),
				Time:        web.Duration(sh.TimeMs * float64(time.Millisecond)),
				FabricStats: web.FabricStats{Reads: int64(sh.Reads), ReadBytes: int64(sh.ReadBytes), Messages: int64(sh.Messages), MessageBytes: int64(sh.MessageBytes)}})
		}
	}
	return ps
}
