package expr

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

const testPrologue = `PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX : <http://example.org/>
`

// parseExpr parses src as a SPARQL expression through the real parser.
func parseExpr(t testing.TB, src string) sparql.Expr {
	t.Helper()
	q, err := sparql.ParseQuery(testPrologue + "SELECT * WHERE { BIND((" + src + ") AS ?__r) }")
	if err != nil {
		t.Fatalf("parse %s: %v", src, err)
	}
	var found sparql.Expr
	var walk func(p sparql.Pattern)
	walk = func(p sparql.Pattern) {
		switch p := p.(type) {
		case *sparql.Extend:
			if p.Var == "__r" {
				found = p.Expr
				return
			}
			walk(p.Input)
		case *sparql.Project:
			walk(p.Input)
		case *sparql.Join:
			walk(p.Left)
			walk(p.Right)
		}
	}
	walk(q.Pattern)
	if found == nil {
		t.Fatalf("parse %s: no BIND in %s", src, sparql.FormatAlgebra(q))
	}
	return found
}

// parseAggregate parses src as an aggregate of a SELECT.
func parseAggregate(t testing.TB, src string) *sparql.Aggregate {
	t.Helper()
	q, err := sparql.ParseQuery(testPrologue + "SELECT (" + src + " AS ?__r) WHERE {}")
	if err != nil {
		t.Fatalf("parse %s: %v", src, err)
	}
	var agg *sparql.Aggregate
	var walk func(p sparql.Pattern)
	walk = func(p sparql.Pattern) {
		switch p := p.(type) {
		case *sparql.Group:
			agg = p.Aggregates[0].Agg
		case *sparql.Extend:
			walk(p.Input)
		case *sparql.Project:
			walk(p.Input)
		}
	}
	walk(q.Pattern)
	if agg == nil {
		t.Fatalf("parse %s: no aggregate", src)
	}
	return agg
}

// short prints a term compactly: "1"^^xsd:integer, "a"@en, "s", <iri>, _:b.
func short(t rdf.Term) string {
	switch t.Kind {
	case rdf.KindIRI:
		return "<" + t.Value + ">"
	case rdf.KindBlank:
		return "_:" + t.Value
	case rdf.KindLiteral:
		s := `"` + t.Value + `"`
		switch {
		case t.Lang != "":
			return s + "@" + t.Lang
		case t.Datatype == "":
			return s
		case strings.HasPrefix(t.Datatype, rdf.XSD):
			return s + "^^xsd:" + t.Datatype[len(rdf.XSD):]
		}
		return s + "^^<" + t.Datatype + ">"
	}
	return "unbound"
}

func lit(lex, local string) rdf.Term { return rdf.NewLiteral(lex, rdf.XSD+local) }

// testRow is the row every expression test runs on.
var testRow = MapBinding{
	"i1":   lit("1", "integer"),
	"i2":   lit("2", "integer"),
	"i01":  lit("01", "integer"),
	"byte": lit("7", "byte"),
	"dec":  lit("1.5", "decimal"),
	"dbl":  lit("1.0E0", "double"),
	"flt":  lit("1.25", "float"),
	"nan":  lit("NaN", "double"),
	"str":  rdf.NewLiteral("abc", ""),
	"xstr": rdf.NewLiteral("abc", rdf.XSDString),
	"en":   rdf.NewLangLiteral("abc", "en"),
	"fr":   rdf.NewLangLiteral("abc", "fr"),
	"iri":  rdf.NewIRI("http://example.org/a"),
	"bn":   rdf.NewBlank("b0"),
	"bad":  lit("abc", "integer"),
	"badb": lit("maybe", "boolean"),
	"unk":  rdf.NewLiteral("x", "http://example.org/dt"),
	"unk2": rdf.NewLiteral("y", "http://example.org/dt"),
	"t":    lit("true", "boolean"),
	"f":    lit("false", "boolean"),
	"zero": lit("0", "integer"),
	"dt":   lit("2010-12-21T15:38:02-08:00", "dateTime"),
	"dtz":  lit("2010-06-21T11:28:01Z", "dateTime"),
	"dtl":  lit("2011-02-01T01:02:03", "dateTime"),
	"dtf":  lit("2011-02-01T01:02:03.25", "dateTime"),
	"date": lit("2011-02-01", "date"),
	"empt": rdf.NewLiteral("", ""),
}

func testEnv() *Env {
	return &Env{
		Base:        "http://example.org/base/",
		Now:         time.Date(2024, 3, 4, 5, 6, 7, 0, time.FixedZone("", -5*3600)),
		BlankPrefix: "t",
		Rand:        func() float64 { return 0.25 },
	}
}

type exprCase struct {
	src  string
	want string // short() of the result, or "error"
}

func runExprCases(t *testing.T, cases []exprCase) {
	t.Helper()
	for _, c := range cases {
		p, err := Compile(parseExpr(t, c.src), testEnv())
		if err != nil {
			t.Errorf("Compile(%s): %v", c.src, err)
			continue
		}
		got, err := p.Eval(testRow)
		gs := short(got)
		if err != nil {
			if !errors.Is(err, ErrEval) {
				t.Errorf("%s: error %v does not wrap ErrEval", c.src, err)
			}
			gs = "error"
		}
		if gs != c.want {
			t.Errorf("%s = %s, want %s", c.src, gs, c.want)
		}
	}
}
