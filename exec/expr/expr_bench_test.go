package expr

import (
	"strconv"
	"testing"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// sliceRow is a row as an engine might present it: a few columns looked up
// by a linear scan of the variable names.
type sliceRow struct {
	vars  []sparql.Var
	terms []rdf.Term
}

func (r *sliceRow) Lookup(v sparql.Var) (rdf.Term, bool) {
	for i, name := range r.vars {
		if name == v {
			return r.terms[i], !r.terms[i].IsZero()
		}
	}
	return rdf.Term{}, false
}

func benchRows(n int) []*sliceRow {
	rows := make([]*sliceRow, n)
	for i := range rows {
		rows[i] = &sliceRow{
			vars: []sparql.Var{"age", "name", "price"},
			terms: []rdf.Term{
				lit(strconv.Itoa(i%90), "integer"),
				rdf.NewLiteral("GraduateStudent"+strconv.Itoa(i), ""),
				lit(strconv.Itoa(i%100)+".25", "decimal"),
			},
		}
	}
	return rows
}

func benchFilter(b *testing.B, src string) {
	p, err := Compile(parseExpr(b, src), testEnv())
	if err != nil {
		b.Fatal(err)
	}
	rows := benchRows(1024)
	b.ReportAllocs()
	b.ResetTimer()
	kept := 0
	for i := 0; i < b.N; i++ {
		if p.EvalBool(rows[i&1023]) {
			kept++
		}
	}
	if b.N >= 1024 && kept == 0 {
		b.Fatal("filter kept nothing")
	}
}

// BenchmarkFilterNumeric: FILTER(?age > 30 && ?age <= 60) on integer literals.
func BenchmarkFilterNumeric(b *testing.B) { benchFilter(b, `?age > 30 && ?age <= 60`) }

// BenchmarkFilterRegex: FILTER(REGEX(?name, "student1", "i")) with a constant pattern.
func BenchmarkFilterRegex(b *testing.B) { benchFilter(b, `REGEX(?name, "student1", "i")`) }

// BenchmarkFilterTypical: a numeric comparison and a regex together.
func BenchmarkFilterTypical(b *testing.B) {
	benchFilter(b, `?age > 30 && REGEX(?name, "^Graduate", "i")`)
}

// BenchmarkFilterDecimal: decimals go through big.Rat.
func BenchmarkFilterDecimal(b *testing.B) { benchFilter(b, `?price < 50.5`) }

// BenchmarkBindArithmetic: BIND(?age * 2 + 1 AS ?x), result as a term.
func BenchmarkBindArithmetic(b *testing.B) {
	p, err := Compile(parseExpr(b, `?age * 2 + 1`), testEnv())
	if err != nil {
		b.Fatal(err)
	}
	rows := benchRows(1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Eval(rows[i&1023]); err != nil {
			b.Fatal(err)
		}
	}
}
