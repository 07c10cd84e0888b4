package sparql

import (
	"strconv"
	"strings"
)

// FormatAlgebra prints the algebra of q as an indented S-expression in the
// style of the specification's examples (and of Jena's SSE), one operator
// per line: (project (?x) (bgp (triple ?x <p> ?o))). Expressions are shown
// in SPARQL syntax; aggregate results as their hidden variables (?.agg0).
func FormatAlgebra(q *Query) string {
	var f formatter
	f.line(0, "("+strings.ToLower(q.Form.String()))
	if q.Dataset != nil {
		f.dataset(1, "dataset", q.Dataset)
	}
	switch q.Form {
	case FormConstruct:
		f.line(1, "(template")
		for _, t := range q.Template {
			f.line(2, "(triple "+tvString(t.S)+" "+tvString(t.P)+" "+tvString(t.O)+")")
		}
		f.close()
	case FormDescribe:
		var parts []string
		for _, d := range q.Describe {
			parts = append(parts, tvString(d))
		}
		f.line(1, "(describe "+strings.Join(parts, " ")+")")
	}
	if q.Pattern != nil {
		f.pattern(1, q.Pattern)
	}
	f.close()
	f.b.WriteByte('\n')
	return f.b.String()
}

// FormatUpdateAlgebra prints the operations of u like FormatAlgebra.
func FormatUpdateAlgebra(u *Update) string {
	var f formatter
	f.line(0, "(update")
	for _, op := range u.Operations {
		switch x := op.(type) {
		case *Modify:
			f.line(1, "(modify")
			if x.With != "" {
				f.line(2, "(with "+iriString(x.With)+")")
			}
			if x.Using != nil {
				f.dataset(2, "using", x.Using)
			}
			if x.Delete != nil {
				f.quads(2, "delete", x.Delete)
			}
			if x.Insert != nil {
				f.quads(2, "insert", x.Insert)
			}
			f.pattern(2, x.Pattern)
			f.close()
		case *InsertData:
			f.quads(1, "insertData", groundQuads(x.Quads))
		case *DeleteData:
			f.quads(1, "deleteData", groundQuads(x.Quads))
		default:
			f.line(1, "("+op.String()+")")
		}
	}
	f.close()
	f.b.WriteByte('\n')
	return f.b.String()
}

type formatter struct {
	b strings.Builder
}

func (f *formatter) line(depth int, s string) {
	if f.b.Len() > 0 {
		f.b.WriteByte('\n')
	}
	f.b.WriteString(strings.Repeat("  ", depth))
	f.b.WriteString(s)
}

func (f *formatter) close() { f.b.WriteByte(')') }

func tvString(x TermOrVar) string {
	var p printer
	p.tv(x)
	return p.b.String()
}

func iriString(s string) string {
	var p printer
	p.iri(s)
	return p.b.String()
}

func (f *formatter) dataset(depth int, name string, d *Dataset) {
	var parts []string
	for _, g := range d.Default {
		parts = append(parts, iriString(g))
	}
	for _, g := range d.Named {
		parts = append(parts, "(named "+iriString(g)+")")
	}
	f.line(depth, "("+name+" "+strings.Join(parts, " ")+")")
}

func (f *formatter) quads(depth int, name string, qs []QuadPattern) {
	f.line(depth, "("+name)
	for _, q := range qs {
		g := "default"
		if !q.G.IsZero() {
			g = tvString(q.G)
		}
		f.line(depth+1, "(quad "+g+" "+tvString(q.S)+" "+tvString(q.P)+" "+tvString(q.O)+")")
	}
	f.close()
}

func varList(vs []Var) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = "?" + string(v)
		if v.IsBlank() {
			parts[i] = string(v)
		}
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func (f *formatter) pattern(d int, p Pattern) {
	switch x := p.(type) {
	case *BGP:
		if len(x.Triples) == 0 {
			f.line(d, "(bgp)")
			return
		}
		f.line(d, "(bgp")
		for _, t := range x.Triples {
			f.line(d+1, "(triple "+tvString(t.S)+" "+tvString(t.P)+" "+tvString(t.O)+")")
		}
		f.close()
	case *PathPattern:
		f.line(d, "(path "+tvString(x.S)+" "+x.Path.String()+" "+tvString(x.O)+")")
	case *Join:
		f.two(d, "join", "", x.Left, x.Right)
	case *LeftJoin:
		extra := ""
		if x.Expr != nil {
			extra = " " + x.Expr.String()
		}
		f.two(d, "leftjoin", extra, x.Left, x.Right)
	case *Union:
		f.two(d, "union", "", x.Left, x.Right)
	case *Minus:
		f.two(d, "minus", "", x.Left, x.Right)
	case *Filter:
		parts := make([]string, len(x.Exprs))
		for i, e := range x.Exprs {
			parts[i] = e.String()
		}
		f.one(d, "filter "+strings.Join(parts, " "), x.Input)
	case *Graph:
		f.one(d, "graph "+tvString(x.Name), x.Input)
	case *Service:
		s := "service "
		if x.Silent {
			s += "silent "
		}
		f.one(d, s+tvString(x.Name), x.Input)
	case *Extend:
		f.one(d, "extend (?"+string(x.Var)+" "+x.Expr.String()+")", x.Input)
	case *Group:
		keys := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			keys[i] = k.String()
		}
		aggs := make([]string, len(x.Aggregates))
		for i, a := range x.Aggregates {
			aggs[i] = "(?" + string(a.Var) + " " + a.Agg.String() + ")"
		}
		f.one(d, "group ("+strings.Join(keys, " ")+") ("+strings.Join(aggs, " ")+")", x.Input)
	case *Values:
		f.line(d, "(table "+varList(x.Vars))
		for _, row := range x.Rows {
			var p printer
			p.w("(row")
			for i, t := range row {
				if t.IsZero() {
					continue
				}
				p.w(" [?" + string(x.Vars[i]) + " ")
				p.term(t)
				p.w("]")
			}
			p.w(")")
			f.line(d+1, p.b.String())
		}
		f.close()
	case *OrderBy:
		parts := make([]string, len(x.Conds))
		for i, c := range x.Conds {
			if c.Desc {
				parts[i] = "(desc " + c.Expr.String() + ")"
			} else {
				parts[i] = "(asc " + c.Expr.String() + ")"
			}
		}
		f.one(d, "order ("+strings.Join(parts, " ")+")", x.Input)
	case *Project:
		f.one(d, "project "+varList(x.Vars), x.Input)
	case *Distinct:
		f.one(d, "distinct", x.Input)
	case *Reduced:
		f.one(d, "reduced", x.Input)
	case *Slice:
		f.one(d, "slice "+strconv.FormatInt(x.Offset, 10)+" "+strconv.FormatInt(x.Limit, 10), x.Input)
	}
}

func (f *formatter) one(d int, head string, in Pattern) {
	f.line(d, "("+head)
	f.pattern(d+1, in)
	f.close()
}

func (f *formatter) two(d int, head, extra string, l, r Pattern) {
	f.line(d, "("+head+extra)
	f.pattern(d+1, l)
	f.pattern(d+1, r)
	f.close()
}
