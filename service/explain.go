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
// exploration its steps, then the solution modifiers above it.
func webPlan(q *sparql.Query, plan *planner.Plan, a *exec.Analysis, store exec.Store) *web.Plan {
	doc := exec.ExplainPlan(plan, a, store)
	form := q.Form
	short := abbreviator(q.Prefixes)
	p := &web.Plan{Form: strings.ToLower(form.String()), Shards: doc.Shards, Analyzed: a != nil}
	p.Notes = append(p.Notes, "mode "+doc.Mode, "fork threshold "+doc.ForkThreshold,
		"planner passes "+strings.Join(doc.Passes, ", "))
	var total web.FabricStats
	est := 0.0 // the estimated rows of the last step
	var walk func(n *exec.ExplainNode)
	walk = func(n *exec.ExplainNode) {
		if n == nil {
			return
		}
		walk(n.Input) // the input runs first
		switch n.Op {
		case "explore":
			if n.Coordinator != nil {
				p.Notes = append(p.Notes, fmt.Sprintf("exploration coordinated by node %d", *n.Coordinator))
			}
			est = n.EstRows
			if len(n.Steps) == 0 {
				p.Steps = append(p.Steps, web.PlanStep{Op: "explore", Pattern: "{}", Start: n.Start, EstRows: n.EstRows})
				return
			}
			for i, s := range n.Steps {
				ps := planStep(s)
				ps.Pattern, ps.Start = short(ps.Pattern), short(ps.Start)
				if i == 0 && n.Start != "" {
					ps.Start = ps.Start + " (" + n.Start + ")"
				}
				if s.Actual != nil {
					ps.Fabric = &web.FabricStats{Reads: int64(s.Actual.Reads), ReadBytes: int64(s.Actual.ReadBytes),
						Messages: int64(s.Actual.Messages), MessageBytes: int64(s.Actual.MessageBytes)}
					total = addStats(total, *ps.Fabric)
				}
				p.Steps = append(p.Steps, ps)
			}
		case "project":
			p.Steps = append(p.Steps, web.PlanStep{Op: "project", Pattern: strings.Join(n.Vars, " "), EstRows: est})
		case "distinct":
			p.Steps = append(p.Steps, web.PlanStep{Op: "distinct", Pattern: "DISTINCT", EstRows: est})
		case "order-by":
			p.Steps = append(p.Steps, web.PlanStep{Op: "order-by", Pattern: "ORDER BY " + strings.Join(n.Keys, " "), EstRows: est})
		case "slice":
			pat := fmt.Sprintf("OFFSET %d", n.Offset)
			est = max(est-float64(n.Offset), 0)
			if n.Limit != nil {
				pat += fmt.Sprintf(" LIMIT %d", *n.Limit)
				est = min(est, float64(*n.Limit))
			}
			p.Steps = append(p.Steps, web.PlanStep{Op: "slice", Pattern: pat, EstRows: est})
		default:
			p.Steps = append(p.Steps, web.PlanStep{Op: n.Op, EstRows: est})
		}
	}
	walk(doc.Root)
	if a != nil {
		// The last step's output is the result.
		if k := len(p.Steps) - 1; k >= 0 && p.Steps[k].ActualRows == nil {
			rows := int64(a.TotalRows)
			p.Steps[k].ActualRows = &rows
		}
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
	}
	if s.Actual != nil {
		rows := int64(s.Actual.RowsOut)
		ps.ActualRows = &rows
		ps.Elapsed = web.Duration(s.Actual.TimeMs * float64(time.Millisecond))
	}
	return ps
}
