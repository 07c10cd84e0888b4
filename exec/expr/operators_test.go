package expr

import (
	"cmp"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

func TestLogic(t *testing.T) {
	// ?bad is an ill-typed integer: comparing it is an error. ?str has EBV
	// true, ?empt false, ?iri has no EBV (error).
	runExprCases(t, []exprCase{
		{`true || false`, `"true"^^xsd:boolean`},
		{`false || false`, `"false"^^xsd:boolean`},
		{`(?bad > 1) || true`, `"true"^^xsd:boolean`},
		{`true || (?bad > 1)`, `"true"^^xsd:boolean`},
		{`(?bad > 1) || false`, `error`},
		{`false || (?bad > 1)`, `error`},
		{`(?bad > 1) || (?bad > 1)`, `error`},
		{`(?bad > 1) && false`, `"false"^^xsd:boolean`},
		{`false && (?bad > 1)`, `"false"^^xsd:boolean`},
		{`(?bad > 1) && true`, `error`},
		{`true && (?bad > 1)`, `error`},
		{`true && true`, `"true"^^xsd:boolean`},
		{`?unbound || true`, `"true"^^xsd:boolean`},
		{`?unbound && true`, `error`},
		{`!true`, `"false"^^xsd:boolean`},
		{`!?str`, `"false"^^xsd:boolean`},
		{`!?empt`, `"true"^^xsd:boolean`},
		{`!?iri`, `error`},
		{`!?zero`, `"true"^^xsd:boolean`},
		{`!?nan`, `"true"^^xsd:boolean`},
		{`!?bad`, `"true"^^xsd:boolean`},  // ill-typed numeric: EBV false
		{`!?badb`, `"true"^^xsd:boolean`}, // ill-typed boolean: EBV false
		{`!?dt`, `error`},
		{`!?unk`, `error`},
		{`!?en`, `"false"^^xsd:boolean`},
	})
}

func TestArithmetic(t *testing.T) {
	runExprCases(t, []exprCase{
		{`1 + 2`, `"3"^^xsd:integer`},
		{`?i01 + 0`, `"1"^^xsd:integer`},
		{`?byte + 1`, `"8"^^xsd:integer`},
		{`1 + 1.5`, `"2.5"^^xsd:decimal`},
		{`1.5 + 0.5`, `"2.0"^^xsd:decimal`},
		{`1 + 1.0e0`, `"2.0E0"^^xsd:double`},
		{`?flt + 1`, `"2.25E0"^^xsd:float`},
		{`?flt + 1.0e0`, `"2.25E0"^^xsd:double`},
		{`?flt * ?dec`, `"1.875E0"^^xsd:float`},
		{`1 / 2`, `"0.5"^^xsd:decimal`},
		{`4 / 2`, `"2.0"^^xsd:decimal`},
		{`1 / 3`, `"0.333333333333333333333333"^^xsd:decimal`},
		{`2 / 3`, `"0.666666666666666666666667"^^xsd:decimal`},
		{`1 / 0`, `error`},
		{`1.0 / 0`, `error`},
		{`1.0e0 / 0`, `"INF"^^xsd:double`},
		{`-1 / 0.0e0`, `"-INF"^^xsd:double`},
		{`0.0e0 / 0`, `"NaN"^^xsd:double`},
		{`7 - 10`, `"-3"^^xsd:integer`},
		{`6 * 7`, `"42"^^xsd:integer`},
		{`9223372036854775807 + 1`, `"9223372036854775808"^^xsd:integer`},
		{`-9223372036854775807 - 2`, `"-9223372036854775809"^^xsd:integer`},
		{`4294967296 * 4294967296`, `"18446744073709551616"^^xsd:integer`},
		{`99999999999999999999 - 99999999999999999998`, `"1"^^xsd:integer`},
		{`0.1 + 0.2`, `"0.3"^^xsd:decimal`},
		{`1.10 - 0.1`, `"1.0"^^xsd:decimal`},
		{`0.5 * 0.5`, `"0.25"^^xsd:decimal`},
		{`-0.5 * 3`, `"-1.5"^^xsd:decimal`},
		{`999999999999999999.5 + 0.5`, `"1000000000000000000.0"^^xsd:decimal`},
		{`123456789012345678901234567890.5 - 123456789012345678901234567890`, `"0.5"^^xsd:decimal`},
		{`0.000000001 * 0.000000001 * 0.01`, `"0.00000000000000000001"^^xsd:decimal`},
		{`9223372036854775807 * 1.5`, `"13835058055282163710.5"^^xsd:decimal`},
		{`1.5 / 0.5`, `"3.0"^^xsd:decimal`},
		{`-1.5 / 4`, `"-0.375"^^xsd:decimal`},
		{`0.1 * 3`, `"0.3"^^xsd:decimal`},
		{`-?i1`, `"-1"^^xsd:integer`},
		{`-?dec`, `"-1.5"^^xsd:decimal`},
		{`+?i01`, `"1"^^xsd:integer`},
		{`-?str`, `error`},
		{`?str + 1`, `error`},
		{`?bad + 1`, `error`},
		{`?unbound + 1`, `error`},
		{`"1" + 1`, `error`},
		{`?t + 1`, `error`},
		{`?dbl * 2`, `"2.0E0"^^xsd:double`},
		{`1.0e7 * 1`, `"1.0E7"^^xsd:double`},
		{`1.0e-7 * 1`, `"1.0E-7"^^xsd:double`},
	})
}

func TestComparison(t *testing.T) {
	runExprCases(t, []exprCase{
		{`1 = 1.0`, `"true"^^xsd:boolean`},
		{`1 = 1.0e0`, `"true"^^xsd:boolean`},
		{`?i01 = 1`, `"true"^^xsd:boolean`},
		{`?byte = 7.0`, `"true"^^xsd:boolean`},
		{`1 < 1.5`, `"true"^^xsd:boolean`},
		{`1.50 = 1.5`, `"true"^^xsd:boolean`},
		{`-0.0 = 0`, `"true"^^xsd:boolean`},
		{`123456789012345678901234567890.5 > 1.5`, `"true"^^xsd:boolean`},
		{`0.1 < 123456789012345678901234567890`, `"true"^^xsd:boolean`},
		{`922337203685477580.7 > 92233720368547758`, `"true"^^xsd:boolean`},
		{`0.1e0 = 0.1`, `"true"^^xsd:boolean`},
		{`2 <= 1.5`, `"false"^^xsd:boolean`},
		{`?flt = 1.25`, `"true"^^xsd:boolean`},
		{`?nan = ?nan`, `"false"^^xsd:boolean`},
		{`?nan != ?nan`, `"true"^^xsd:boolean`},
		{`?nan < 1`, `"false"^^xsd:boolean`},
		{`?nan >= 1`, `"false"^^xsd:boolean`},
		{`"abc" < "abd"`, `"true"^^xsd:boolean`},
		{`"b" > "abc"`, `"true"^^xsd:boolean`},
		{`?str = ?xstr`, `"true"^^xsd:boolean`},
		{`?str = ?en`, `"false"^^xsd:boolean`},
		{`?en = ?fr`, `"false"^^xsd:boolean`},
		{`?en = "abc"@EN`, `"true"^^xsd:boolean`},
		{`?en < ?fr`, `error`},
		{`?str < 1`, `error`},
		{`?str = 1`, `"false"^^xsd:boolean`},
		{`?iri = <http://example.org/a>`, `"true"^^xsd:boolean`},
		{`?iri != <http://example.org/b>`, `"true"^^xsd:boolean`},
		{`?iri = "http://example.org/a"`, `"false"^^xsd:boolean`},
		{`?iri < <http://example.org/b>`, `error`},
		{`?bn = ?bn`, `"true"^^xsd:boolean`},
		{`false < true`, `"true"^^xsd:boolean`},
		{`?t = true`, `"true"^^xsd:boolean`},
		{`?t > ?f`, `"true"^^xsd:boolean`},
		{`?t < 2`, `error`},
		// Unknown datatypes: identical terms are equal, anything else is an
		// error (RDFterm-equal).
		{`?unk = ?unk`, `"true"^^xsd:boolean`},
		{`?unk = ?unk2`, `error`},
		{`?unk != ?unk2`, `error`},
		{`?unk = "x"`, `error`},
		{`?unk = <http://example.org/dt>`, `"false"^^xsd:boolean`},
		{`?unk < ?unk2`, `error`},
		{`?bad = ?bad`, `"true"^^xsd:boolean`},
		{`?bad = 1`, `error`},
		{`?bad = "abc"^^xsd:integer`, `"true"^^xsd:boolean`},
		// dateTimes: by instant, the timezone rules of XSD.
		{`?dtz = "2010-06-21T12:28:01+01:00"^^xsd:dateTime`, `"true"^^xsd:boolean`},
		{`?dt > ?dtz`, `"true"^^xsd:boolean`},
		{`?dt = "2010-12-21T23:38:02Z"^^xsd:dateTime`, `"true"^^xsd:boolean`},
		{`?dtl < "2011-02-01T01:02:04"^^xsd:dateTime`, `"true"^^xsd:boolean`},
		{`?dtl < "2011-02-01T10:00:00Z"^^xsd:dateTime`, `error`}, // within 14 hours
		{`?dtl < "2011-02-01T20:00:00Z"^^xsd:dateTime`, `"true"^^xsd:boolean`},
		{`?dtl < "2011-02-02T20:00:00Z"^^xsd:dateTime`, `"true"^^xsd:boolean`},
		{`?dtl > "2011-01-30T20:00:00Z"^^xsd:dateTime`, `"true"^^xsd:boolean`},
		{`?dtl = "2011-02-01T01:02:03Z"^^xsd:dateTime`, `error`},  // within 14 hours: indeterminate
		{`?dtl != "2011-02-01T01:02:03Z"^^xsd:dateTime`, `error`}, // likewise
		{`?dtl = "2011-02-02T01:02:03Z"^^xsd:dateTime`, `"false"^^xsd:boolean`},
		{`"2006-08-23"^^xsd:date = "2006-08-23Z"^^xsd:date`, `error`},
		{`"2006-08-23"^^xsd:date = "2006-08-25Z"^^xsd:date`, `"false"^^xsd:boolean`},
		{`"2006-08-23+02:00"^^xsd:date = "2006-08-22T22:00:00Z"^^xsd:dateTime`, `"false"^^xsd:boolean`},
		{`"2011-02-01T24:00:00Z"^^xsd:dateTime = "2011-02-02T00:00:00Z"^^xsd:dateTime`, `"true"^^xsd:boolean`},
		{`?date < "2011-02-02"^^xsd:date`, `"true"^^xsd:boolean`},
		{`?date < ?dtl`, `error`},
		{`?dt < 1`, `error`},
		{`?unbound = 1`, `error`},
		{`1 IN (2, 1)`, `"true"^^xsd:boolean`},
		{`1 IN (2, 3)`, `"false"^^xsd:boolean`},
		{`1 IN ()`, `"false"^^xsd:boolean`},
		{`1 NOT IN ()`, `"true"^^xsd:boolean`},
		{`1 IN (?unbound, 1)`, `"true"^^xsd:boolean`},
		{`1 IN (?unbound, 2)`, `error`},
		{`1 NOT IN (?unbound, 1)`, `"false"^^xsd:boolean`},
		{`1 NOT IN (?unbound, 2)`, `error`},
		{`2 NOT IN (1, 3)`, `"true"^^xsd:boolean`},
		{`?unk IN (?unk2, ?unk)`, `"true"^^xsd:boolean`},
		{`sameTerm(1, 1.0)`, `"false"^^xsd:boolean`},
		{`sameTerm(?i1, 1)`, `"true"^^xsd:boolean`},
		{`sameTerm(?str, ?xstr)`, `"true"^^xsd:boolean`},
		{`sameTerm(?unk, ?unk2)`, `"false"^^xsd:boolean`},
	})
}

func TestCompareOrder(t *testing.T) {
	// Sorted: every term must compare below every later one.
	terms := []struct {
		name string
		v    Value
	}{
		{"unbound", Value{}},
		{"blank a", Decode(rdf.NewBlank("a"))},
		{"blank b", Decode(rdf.NewBlank("b"))},
		{"iri a", Decode(rdf.NewIRI("http://a"))},
		{"iri b", Decode(rdf.NewIRI("http://b"))},
		{"NaN", Decode(lit("NaN", "double"))},
		{"-5", Decode(lit("-5", "integer"))},
		{"01", Decode(lit("01", "integer"))},
		{"1", Decode(lit("1", "integer"))},
		{"1.0", Decode(lit("1.0", "decimal"))},
		{"1.0E0", Decode(lit("1.0E0", "double"))},
		{"1.5", Decode(lit("1.5", "decimal"))},
		{"INF", Decode(lit("INF", "double"))},
		{`""`, Decode(rdf.NewLiteral("", ""))},
		{`"a"`, Decode(rdf.NewLiteral("a", ""))},
		{`"b"`, Decode(rdf.NewLiteral("b", ""))},
		{`"a"@en`, Decode(rdf.NewLangLiteral("a", "en"))},
		{`"a"@fr`, Decode(rdf.NewLangLiteral("a", "fr"))},
		{`"b"@en`, Decode(rdf.NewLangLiteral("b", "en"))},
		{"false", Decode(lit("false", "boolean"))},
		{"true", Decode(lit("true", "boolean"))},
		{"dt1", Decode(lit("2000-01-01T00:00:00Z", "dateTime"))},
		{"dt2", Decode(lit("2000-01-01T10:00:00", "dateTime"))},
		{"dt3", Decode(lit("2000-01-01T12:00:00+01:00", "dateTime"))},
		{"date", Decode(lit("1999-01-01", "date"))},
		{"unk a", Decode(rdf.NewLiteral("a", "http://example.org/a"))},
		{"unk b", Decode(rdf.NewLiteral("a", "http://example.org/b"))},
		{"ill-typed", Decode(lit("abc", "integer"))},
	}
	for i := range terms {
		for j := range terms {
			got := CompareValues(terms[i].v, terms[j].v)
			want := cmp.Compare(i, j)
			if got != want {
				t.Errorf("CompareValues(%s, %s) = %d, want %d", terms[i].name, terms[j].name, got, want)
			}
		}
	}
	if c := Compare(lit("2", "integer"), lit("10", "integer")); c != -1 {
		t.Errorf("Compare(2, 10) = %d, want -1 (by value, not lexical form)", c)
	}
}
