package conformance

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/results"
)

// Our own evaluation tests, for what the W3C suite covers thinly. Each runs
// a query over a small inline data set (Turtle, or TriG for named graphs)
// and compares the answer as the W3C tests are compared (bags, blank nodes
// up to renaming, literals as terms, order where ORDER BY decides it).
//
// The expected answer (want) is written as:
//
//	ASK true | ASK false        a boolean
//	GRAPH                       a graph, in Turtle on the next lines
//	?x ?y                       solutions: the variables, then one row a
//	:a 1 UNDEF                  line, terms separated by spaces
//
// Terms: ":name" is <http://example/name>, "xsd:name" the XSD IRI,
// "UNDEF" an unbound variable, otherwise N-Triples terms and the bare
// numbers and booleans of Turtle, with ^^xsd:name allowed on literals.
// Data and queries get the prefixes ":" and "xsd:" declared.
type feature struct {
	name  string // "area/what": the test ID is ownPrefix + name
	data  string
	trig  bool
	query string
	want  string
}

const (
	exNS          = "http://example/"
	dataPrefixes  = "@prefix : <" + exNS + "> .\n@prefix xsd: <" + rdf.XSD + "> .\n"
	queryPrefixes = "PREFIX : <" + exNS + ">\nPREFIX xsd: <" + rdf.XSD + ">\n"
)

// dataD is the default data of most tests.
const dataD = `
:a :val 1 ; :other 10 ; :name "A" .
:b :val 2 ; :other 1 .
:c :name "C" .
`

// dataP is the data of the property-path tests: a 3-cycle, a self-loop, a
// diamond and two parallel edges.
const dataP = `
:a :p :b . :b :p :c . :c :p :a .
:d :p :d .
:x :q :y1 . :x :q :y2 . :y1 :q :z . :y2 :q :z .
:m :r1 :n . :m :r2 :n .
`

const dataNum = `
:m :num 1 , 2.5 , 10 .
:e :n "1"^^xsd:integer , "01"^^xsd:integer , 1.0 .
:d :short "2"^^xsd:short ; :byte "3"^^xsd:byte .
`

var features = []feature{
	// Aggregates over an empty solution sequence: without GROUP BY there
	// is one group (§18.5.1), so one row; with GROUP BY there is none.
	{"agg-empty/count-star", dataD, false, `SELECT (COUNT(*) AS ?n) WHERE { ?s :nope ?o }`, "?n\n0"},
	{"agg-empty/count-var", dataD, false, `SELECT (COUNT(?o) AS ?n) WHERE { ?s :nope ?o }`, "?n\n0"},
	{"agg-empty/count-distinct", dataD, false, `SELECT (COUNT(DISTINCT ?o) AS ?n) WHERE { ?s :nope ?o }`, "?n\n0"},
	{"agg-empty/sum", dataD, false, `SELECT (SUM(?o) AS ?x) WHERE { ?s :nope ?o }`, "?x\n0"},
	{"agg-empty/avg", dataD, false, `SELECT (AVG(?o) AS ?x) WHERE { ?s :nope ?o }`, "?x\n0"},
	{"agg-empty/min", dataD, false, `SELECT (MIN(?o) AS ?x) WHERE { ?s :nope ?o }`, "?x\nUNDEF"},
	{"agg-empty/max", dataD, false, `SELECT (MAX(?o) AS ?x) WHERE { ?s :nope ?o }`, "?x\nUNDEF"},
	{"agg-empty/sample", dataD, false, `SELECT (SAMPLE(?o) AS ?x) WHERE { ?s :nope ?o }`, "?x\nUNDEF"},
	{"agg-empty/group-concat", dataD, false, `SELECT (GROUP_CONCAT(?o) AS ?x) WHERE { ?s :nope ?o }`, "?x\n\"\""},
	{"agg-empty/several", dataD, false, `SELECT (COUNT(*) AS ?n) (SUM(?o) AS ?s) (MAX(?o) AS ?m) WHERE { ?s :nope ?o }`, "?n ?s ?m\n0 0 UNDEF"},
	{"agg-empty/group-by", dataD, false, `SELECT ?s (COUNT(*) AS ?n) WHERE { ?s :nope ?o } GROUP BY ?s`, "?s ?n"},
	{"agg-empty/having", dataD, false, `SELECT (COUNT(*) AS ?n) WHERE { ?s :nope ?o } HAVING (COUNT(*) > 0)`, "?n"},
	{"agg-empty/in-subquery", dataD, false, `SELECT ?s ?n WHERE { ?s :val ?v { SELECT (COUNT(*) AS ?n) WHERE { ?x :nope ?y } } }`, "?s ?n\n:a 0\n:b 0"},
	// Other aggregate corners.
	{"agg/sum-type-error", dataD, false, `SELECT (SUM(?n) AS ?x) WHERE { ?s :name ?n }`, "?x\nUNDEF"},
	{"agg/count-skips-unbound", dataD, false, `SELECT (COUNT(?n) AS ?c) (COUNT(*) AS ?all) WHERE { ?s :val ?v OPTIONAL { ?s :name ?n } }`, "?c ?all\n1 2"},
	{"agg/avg-decimal", dataD, false, `SELECT (AVG(?v) AS ?x) WHERE { ?s :val ?v }`, "?x\n1.5"},
	{"agg/group-unbound-key", dataD, false, `SELECT ?n (COUNT(*) AS ?c) WHERE { ?s :val ?v OPTIONAL { ?s :name ?n } } GROUP BY ?n`, "?n ?c\n\"A\" 1\nUNDEF 1"},
	// Terms are kept as written: "01"^^xsd:integer is another term than
	// "1"^^xsd:integer (some stores canonicalize literals on load; we do not).
	{"agg/count-distinct-terms", dataNum, false, `SELECT (COUNT(DISTINCT ?x) AS ?c) WHERE { :e :n ?x }`, "?c\n3"},
	{"agg/group-concat-separator", dataD, false, `SELECT (STRLEN(GROUP_CONCAT(?n; SEPARATOR="|")) AS ?l) WHERE { ?s :name ?n }`, "?l\n3"},
	{"agg/sample-per-group", dataD, false, `SELECT ?s (SAMPLE(?v) AS ?x) WHERE { ?s :val ?v } GROUP BY ?s`, "?s ?x\n:a 1\n:b 2"},

	// Errors in expressions: a FILTER error is false (also under !), an
	// error in BIND or a projection leaves the variable unbound, || and &&
	// and COALESCE and IN follow §17.2 / §17.4.
	{"expr-error/filter-div-zero", dataD, false, `SELECT ?s WHERE { ?s :val ?v FILTER(?v / 0 > 0) }`, "?s"},
	{"expr-error/filter-not-error", dataD, false, `SELECT ?s WHERE { ?s :val ?v FILTER(!(?v / 0 > 0)) }`, "?s"},
	{"expr-error/error-or-true", dataD, false, `SELECT ?s WHERE { ?s :val ?v FILTER(?v / 0 > 0 || true) }`, "?s\n:a\n:b"},
	{"expr-error/error-and-false", dataD, false, `SELECT ?s WHERE { ?s :val ?v FILTER(!(?v / 0 > 0 && false)) }`, "?s\n:a\n:b"},
	{"expr-error/filter-unbound-compare", dataD, false, `SELECT ?s WHERE { ?s :val ?v OPTIONAL { ?s :name ?n } FILTER(?n != "X") }`, "?s\n:a"},
	{"expr-error/bind-div-zero", dataD, false, `SELECT ?s ?z WHERE { ?s :val ?v BIND(?v / 0 AS ?z) }`, "?s ?z\n:a UNDEF\n:b UNDEF"},
	{"expr-error/bind-unbound-arg", dataD, false, `SELECT ?s ?z WHERE { ?s :val ?v BIND(STR(?nothing) AS ?z) }`, "?s ?z\n:a UNDEF\n:b UNDEF"},
	{"expr-error/coalesce", dataD, false, `SELECT ?s ?z WHERE { ?s :val ?v BIND(COALESCE(?v / 0, ?v * 2) AS ?z) }`, "?s ?z\n:a 2\n:b 4"},
	{"expr-error/if-condition", dataD, false, `SELECT ?s ?z WHERE { ?s :val ?v BIND(IF(?v / 0 > 0, "y", "n") AS ?z) }`, "?s ?z\n:a UNDEF\n:b UNDEF"},
	{"expr-error/projection", dataD, false, `SELECT ?s (?v / 0 AS ?z) WHERE { ?s :val ?v }`, "?s ?z\n:a UNDEF\n:b UNDEF"},
	{"expr-error/in", dataD, false, `SELECT ?s WHERE { ?s :val ?v FILTER(?v IN (1/0, 1)) }`, "?s\n:a"},
	{"expr-error/not-in", dataD, false, `SELECT ?s WHERE { ?s :val ?v FILTER(?v NOT IN (1/0, 1)) }`, "?s"},

	// Numeric type promotion (§17.3): the datatypes of computed values,
	// value comparison across types, and terms kept exactly.
	{"promotion/integer-plus-decimal", "", false, `SELECT (DATATYPE(1 + 2.0) AS ?t) WHERE {}`, "?t\nxsd:decimal"},
	{"promotion/integer-divide", "", false, `SELECT (1 / 2 AS ?h) (DATATYPE(1 / 2) AS ?t) WHERE {}`, "?h ?t\n0.5 xsd:decimal"},
	{"promotion/integer-plus-double", "", false, `SELECT (DATATYPE(1 + 1.0e0) AS ?t) WHERE {}`, "?t\nxsd:double"},
	{"promotion/float-plus-integer", "", false, `SELECT (DATATYPE(xsd:float("1") + 1) AS ?t) WHERE {}`, "?t\nxsd:float"},
	{"promotion/float-plus-double", "", false, `SELECT (DATATYPE(xsd:float("1") + 1.0e0) AS ?t) WHERE {}`, "?t\nxsd:double"},
	{"promotion/derived-integers", dataNum, false, `SELECT (?x + ?y AS ?s) (DATATYPE(?x + ?y) AS ?t) WHERE { :d :short ?x ; :byte ?y }`, "?s ?t\n5 xsd:integer"},
	{"promotion/sum-mixed", dataNum, false, `SELECT (SUM(?x) AS ?s) (DATATYPE(SUM(?x)) AS ?t) WHERE { :m :num ?x }`, "?s ?t\n13.5 xsd:decimal"},
	{"promotion/avg-integers", dataD, false, `SELECT (DATATYPE(AVG(?v)) AS ?t) WHERE { ?s :val ?v }`, "?t\nxsd:decimal"},
	{"promotion/compare-numerically", dataNum, false, `SELECT ?x WHERE { :m :num ?x FILTER(?x > 2) }`, "?x\n2.5\n10"},
	{"promotion/distinct-keeps-terms", dataNum, false, `SELECT DISTINCT ?x WHERE { :e :n ?x }`, "?x\n1\n\"01\"^^xsd:integer\n1.0"},
	{"promotion/equal-by-value", dataNum, false, `SELECT ?x WHERE { :e :n ?x FILTER(?x = 1) }`, "?x\n1\n\"01\"^^xsd:integer\n1.0"},
	{"promotion/sameterm", dataNum, false, `SELECT ?x WHERE { :e :n ?x FILTER(sameTerm(?x, 1)) }`, "?x\n1"},

	// Property paths (§18.4): * and + terminate on cycles and give each
	// end once; sequences and alternatives keep duplicates; zero-length
	// paths match a term even when it is not in the data.
	{"path/star-on-cycle", dataP, false, `SELECT ?x WHERE { :a :p* ?x }`, "?x\n:a\n:b\n:c"},
	{"path/plus-on-cycle", dataP, false, `SELECT ?x WHERE { :a :p+ ?x }`, "?x\n:a\n:b\n:c"},
	{"path/plus-self-loop", dataP, false, `SELECT ?x WHERE { :d :p+ ?x }`, "?x\n:d"},
	{"path/star-self-loop", dataP, false, `SELECT ?x WHERE { :d :p* ?x }`, "?x\n:d"},
	{"path/star-two-variables", ":a :p :b . :b :p :a .", false, `SELECT ?x ?y WHERE { ?x :p* ?y }`, "?x ?y\n:a :a\n:a :b\n:b :a\n:b :b"},
	{"path/plus-count-pairs", dataP, false, `SELECT (COUNT(*) AS ?n) WHERE { ?s :p+ ?o }`, "?n\n10"},
	{"path/star-same-variable", dataP, false, `SELECT ?x WHERE { ?x :p* ?x }`, "?x\n:a\n:b\n:c\n:d\n:x\n:y1\n:y2\n:z\n:m\n:n"},
	{"path/sequence-keeps-duplicates", dataP, false, `SELECT ?z WHERE { :x :q/:q ?z }`, "?z\n:z\n:z"},
	{"path/plus-distinct-ends", dataP, false, `SELECT ?z WHERE { :x :q+ ?z }`, "?z\n:y1\n:y2\n:z"},
	// ALP(x, P) starts by adding x itself, in the graph or not.
	{"path/star-unknown-start", dataP, false, `SELECT ?x WHERE { :nowhere :p* ?x }`, "?x\n:nowhere"},
	{"path/zero-or-one", dataP, false, `SELECT ?z WHERE { :x :q? ?z }`, "?z\n:x\n:y1\n:y2"},
	{"path/star-constants-true", dataP, false, `ASK { :a :p* :c }`, "ASK true"},
	{"path/star-constants-false", dataP, false, `ASK { :c :p* :x }`, "ASK false"},
	{"path/inverse-star", dataP, false, `SELECT ?x WHERE { :a ^:p* ?x }`, "?x\n:a\n:b\n:c"},
	// eval(Path(X, alt(P,Q), Y)) = Union(…): a bag.
	{"path/alternative-keeps-duplicates", dataP, false, `SELECT ?y WHERE { :m :r1|:r2 ?y }`, "?y\n:n\n:n"},
	{"path/negated-set", dataP, false, `SELECT ?y WHERE { :m !:r1 ?y }`, "?y\n:n"},

	// OPTIONAL with FILTER inside: the filter is part of the left join
	// and sees the left side's variables, unless it is in a nested group.
	{"optional/filter-inside", dataD, false, `SELECT ?s ?o WHERE { ?s :val ?v OPTIONAL { ?s :other ?o FILTER(?o > ?v) } }`, "?s ?o\n:a 10\n:b UNDEF"},
	{"optional/filter-inside-unbound", dataD, false, `SELECT ?s ?o WHERE { ?s :val ?v OPTIONAL { ?s :other ?o FILTER(?o > ?nothing) } }`, "?s ?o\n:a UNDEF\n:b UNDEF"},
	// OPTIONAL { { P FILTER F } }: the translation sees Join(Z, Filter(F,
	// P)), not Filter, so F stays in the inner group (the DAWG's approved
	// optional-filter-005-not-simplified).
	{"optional/filter-nested-group", dataD, false, `SELECT ?s ?o WHERE { ?s :val ?v OPTIONAL { { ?s :other ?o FILTER(?o > ?v) } } }`, "?s ?o\n:a UNDEF\n:b UNDEF"},
	{"optional/filter-outside-bound", dataD, false, `SELECT ?s WHERE { ?s :val ?v OPTIONAL { ?s :name ?n } FILTER(!BOUND(?n)) }`, "?s\n:b"},
	{"optional/two", dataD, false, `SELECT ?s ?n ?o WHERE { ?s :val ?v OPTIONAL { ?s :name ?n } OPTIONAL { ?s :other ?o } }`, "?s ?n ?o\n:a \"A\" 10\n:b UNDEF 1"},

	// MINUS removes only rows that share a bound variable with a
	// compatible right-hand row (§18.5.1 Minus); NOT EXISTS differs.
	{"minus/no-shared-variables", dataD, false, `SELECT ?s WHERE { ?s :val ?v MINUS { ?x :other ?y } }`, "?s\n:a\n:b"},
	{"minus/shared-variable", dataD, false, `SELECT ?s WHERE { ?s :val ?v MINUS { ?s :other 10 } }`, "?s\n:b"},
	{"minus/not-exists-differs", dataD, false, `SELECT ?s WHERE { ?s :val ?v FILTER NOT EXISTS { ?x :other ?y } }`, "?s"},
	{"minus/unbound-on-left", dataD, false, `SELECT ?s WHERE { ?s :val ?v OPTIONAL { ?s :name ?n } MINUS { ?t :name ?n } }`, "?s\n:b"},

	// Other bag and scoping rules.
	{"union/bag", dataD, false, `SELECT ?s WHERE { { ?s :val ?v } UNION { ?s :val ?v } }`, "?s\n:a\n:a\n:b\n:b"},
	{"values/undef-join", dataD, false, `SELECT ?s ?v WHERE { ?s :val ?v VALUES (?s ?v) { (:a UNDEF) (UNDEF 2) } }`, "?s ?v\n:a 1\n:b 2"},
	{"bind/then-filter", dataD, false, `SELECT ?s ?w WHERE { ?s :val ?v BIND(?v + 1 AS ?w) FILTER(?w > 2) }`, "?s ?w\n:b 3"},
	{"exists/outer-binding", dataD, false, `SELECT ?s WHERE { ?s :val ?v FILTER EXISTS { ?s :other ?o FILTER(?o > ?v) } }`, "?s\n:a"},
	{"subquery/aggregate-join", dataD, false, `SELECT ?s ?max WHERE { ?s :val ?v { SELECT (MAX(?w) AS ?max) WHERE { ?x :val ?w } } FILTER(?v = ?max) }`, "?s ?max\n:b 2"},
	{"order/term-kinds", ":k :mixed _:b1 , :i , \"lit\" .", false, `SELECT ?o WHERE { :k :mixed ?o } ORDER BY ?o`, "?o\n_:x\n:i\n\"lit\""},
	{"order/numeric-desc", dataNum, false, `SELECT ?x WHERE { :m :num ?x } ORDER BY DESC(?x)`, "?x\n10\n2.5\n1"},
	{"order/numeric-not-lexical", dataNum, false, `SELECT ?x WHERE { :m :num ?x } ORDER BY ?x`, "?x\n1\n2.5\n10"},
	{"ask/true", dataD, false, `ASK { :a :val 1 }`, "ASK true"},
	{"ask/false", dataD, false, `ASK { :a :val 2 }`, "ASK false"},
	{"construct/blank-node-per-solution", dataD, false, `CONSTRUCT { ?s :rel [ :v ?v ] } WHERE { ?s :val ?v }`, "GRAPH\n:a :rel [ :v 1 ] . :b :rel [ :v 2 ] ."},
	{"construct/skips-unbound", dataD, false, `CONSTRUCT { ?s :n ?n } WHERE { ?s :val ?v OPTIONAL { ?s :name ?n } }`, "GRAPH\n:a :n \"A\" ."},
	{"construct/ill-formed-skipped", dataD, false, `CONSTRUCT { ?v :of ?s . ?s ?v :x . ?s :ok ?v } WHERE { ?s :val ?v }`, "GRAPH\n:a :ok 1 . :b :ok 2 ."},
	{"construct/set", dataD, false, `CONSTRUCT { :k :has ?v } WHERE { ?s :val ?v . ?t :val ?w }`, "GRAPH\n:k :has 1 . :k :has 2 ."},
	{"construct/where-shorthand", dataD, false, `CONSTRUCT WHERE { ?s :other ?o }`, "GRAPH\n:a :other 10 . :b :other 1 ."},
	{"construct/computed-terms", dataD, false, `CONSTRUCT { ?s :twice ?w } WHERE { ?s :val ?v BIND(?v * 2 AS ?w) }`, "GRAPH\n:a :twice 2 . :b :twice 4 ."},
	{"describe/subject-triples", dataD, false, `DESCRIBE :b`, "GRAPH\n:b :val 2 ; :other 1 ."},
	{"describe/blank-closure", ":s :p [ :q 1 ; :r [ :t 2 ] ] . :o :p :s .", false, `DESCRIBE ?x WHERE { ?x :p [] }`, "GRAPH\n:s :p [ :q 1 ; :r [ :t 2 ] ] . :o :p :s ."},
	{"describe/unknown", dataD, false, `DESCRIBE :nothing`, "GRAPH\n"},
	{"bind/scope-in-group", dataD, false, `SELECT ?s ?w WHERE { ?s :val ?v { BIND(?v AS ?w) } }`, "?s ?w\n:a UNDEF\n:b UNDEF"},
	{"bind/chain", dataD, false, `SELECT ?s ?z WHERE { ?s :val ?v BIND(?v + 1 AS ?w) BIND(?w * 10 AS ?z) }`, "?s ?z\n:a 20\n:b 30"},
	{"bind/computed-joins-data", dataD, false, `SELECT ?s ?t WHERE { ?s :other ?o BIND(?o AS ?x) ?t :val ?x }`, "?s ?t\n:b :a"},
	{"group/expression-key", dataD, false, `SELECT ?k (COUNT(*) AS ?c) WHERE { ?s :val ?v } GROUP BY (?v > 1 AS ?k)`, "?k ?c\nfalse 1\ntrue 1"},
	{"group/error-key", dataD, false, `SELECT ?k (COUNT(*) AS ?c) WHERE { ?s :name ?n OPTIONAL { ?s :val ?v } } GROUP BY (?v * 2 AS ?k)`, "?k ?c\n2 1\nUNDEF 1"},
	{"order/expression-error-first", dataD, false, `SELECT ?s WHERE { ?s :name ?n OPTIONAL { ?s :val ?v } } ORDER BY (?v * 2)`, "?s\n:c\n:a"},
	{"order/expression-desc", dataD, false, `SELECT ?s WHERE { ?s :val ?v } ORDER BY DESC(-?v)`, "?s\n:a\n:b"},
	{"reduced/at-most-bag", dataD, false, `SELECT REDUCED ?s WHERE { ?s ?p ?o FILTER(?p != :name) }`, "?s\n:a\n:b"},
	{"exists/in-select", dataD, false, `SELECT ?s (EXISTS { ?s :name ?n } AS ?named) WHERE { ?s :val ?v }`, "?s ?named\n:a true\n:b false"},
	{"exists/nested", dataD, false, `SELECT ?s WHERE { ?s :val ?v FILTER EXISTS { ?s :other ?o FILTER NOT EXISTS { ?t :val ?o } } }`, "?s\n:a"},
	{"optional/nested", dataD, false, `SELECT ?s ?o ?n WHERE { ?s :val ?v OPTIONAL { ?s :other ?o OPTIONAL { ?s :name ?n } } }`, "?s ?o ?n\n:a 10 \"A\"\n:b 1 UNDEF"},
	{"optional/unbound-join", dataD, false, `SELECT ?s ?n WHERE { ?s :val ?v OPTIONAL { ?s :name ?n } ?t :name ?n }`, "?s ?n\n:a \"A\"\n:b \"A\"\n:b \"C\""},
	{"values/after-pattern", dataD, false, `SELECT ?s ?v WHERE { ?s :val ?v } VALUES ?v { 2 3 }`, "?s ?v\n:b 2"},
	{"values/unknown-term", dataD, false, `SELECT ?x WHERE { VALUES ?x { :nowhere "new" } }`, "?x\n:nowhere\n\"new\""},
	{"union/unbound-sides", dataD, false, `SELECT ?s ?n ?o WHERE { { ?s :name ?n } UNION { ?s :other ?o } }`, "?s ?n ?o\n:a \"A\" UNDEF\n:c \"C\" UNDEF\n:a UNDEF 10\n:b UNDEF 1"},
	{"filter/scope-nested-group", dataD, false, `SELECT ?s WHERE { ?s :val ?v { ?s :other ?o FILTER(?o > ?v) } }`, "?s"},
	{"subquery/limit-inside", dataD, false, `SELECT ?s ?o WHERE { ?s :other ?o { SELECT ?s WHERE { ?s :val ?v } ORDER BY ?v LIMIT 1 } }`, "?s ?o\n:a 10"},
	{"graph/variable", ":a :p :d . :g1 { :a :p :b } :g2 { :a :p :c }", true, `SELECT ?g ?o WHERE { GRAPH ?g { :a :p ?o } }`, "?g ?o\n:g1 :b\n:g2 :c"},
	{"graph/default-only", ":a :p :d . :g1 { :a :p :b } :g2 { :a :p :c }", true, `SELECT ?o WHERE { :a :p ?o }`, "?o\n:d"},

	// Basic graph patterns: what the engine runs today.
	{"bgp/basic", dataD, false, `SELECT ?s ?o WHERE { ?s :other ?o }`, "?s ?o\n:a 10\n:b 1"},
	{"bgp/literal-as-written", dataD, false, `SELECT ?s WHERE { ?s :val 01 }`, "?s"},
	{"bgp/literal-match", dataD, false, `SELECT ?s WHERE { ?s :val 1 }`, "?s\n:a"},
	{"bgp/blank-node-result", "_:x :p :o . _:y :p :o .", false, `SELECT ?s WHERE { ?s :p :o }`, "?s\n_:1\n_:2"},
	{"bgp/order-limit", dataNum, false, `SELECT ?x WHERE { :m :num ?x } ORDER BY ?x LIMIT 2`, "?x\n1\n2.5"},
}

var (
	xsdSuffix = regexp.MustCompile(`\^\^xsd:([A-Za-z]+)`)
)

// parseWant parses the expected answer of a feature test.
func parseWant(want string) (*Answer, error) {
	switch {
	case strings.HasPrefix(want, "ASK "):
		return &Answer{Kind: Boolean, Boolean: strings.TrimSpace(want[4:]) == "true"}, nil
	case strings.HasPrefix(want, "GRAPH\n"):
		ds := &Dataset{}
		if err := parseData(ds, want[len("GRAPH\n"):], false); err != nil {
			return nil, err
		}
		return &Answer{Kind: Graph, Graph: ds.Default}, nil
	}
	lines := strings.Split(want, "\n")
	a := &Answer{Kind: Solutions}
	for _, v := range strings.Fields(lines[0]) {
		if !strings.HasPrefix(v, "?") {
			return nil, fmt.Errorf("header %q: not a variable", v)
		}
		a.Vars = append(a.Vars, v[1:])
	}
	for _, line := range lines[1:] {
		row, err := parseRow(line)
		if err != nil {
			return nil, fmt.Errorf("row %q: %w", line, err)
		}
		if len(row) != len(a.Vars) {
			return nil, fmt.Errorf("row %q has %d terms for %d variables", line, len(row), len(a.Vars))
		}
		a.Rows = append(a.Rows, row)
	}
	return a, nil
}

func parseRow(line string) ([]rdf.Term, error) {
	s := xsdSuffix.ReplaceAllString(line, "^^<"+rdf.XSD+"$1>")
	var row []rdf.Term
	for {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return row, nil
		}
		word := s
		if i := strings.IndexByte(s, ' '); i >= 0 {
			word = s[:i]
		}
		switch {
		case word == "UNDEF":
			row = append(row, rdf.Term{})
			s = s[len(word):]
		case strings.HasPrefix(word, ":"):
			row = append(row, rdf.NewIRI(exNS+word[1:]))
			s = s[len(word):]
		case strings.HasPrefix(word, "xsd:"):
			row = append(row, rdf.NewIRI(rdf.XSD+word[4:]))
			s = s[len(word):]
		default:
			t, n, err := results.ParseTerm(s)
			if err != nil {
				return nil, err
			}
			row = append(row, t)
			s = s[n:]
		}
	}
}

func parseData(ds *Dataset, data string, trig bool) error {
	f := loader.Turtle
	if trig {
		f = loader.TriG
	}
	var quads []rdf.Quad
	err := loader.Parse(strings.NewReader(dataPrefixes+data), f, loader.Options{Name: "inline", Base: exNS}, func(q rdf.Quad) error {
		quads = append(quads, q)
		return nil
	})
	if err != nil {
		return err
	}
	return ds.AddQuads(quads)
}

// featureModes are the execution modes the feature tests run in: the
// planner's choice, and every step that needs remote data forced in place
// and forked.
var featureModes = []struct {
	name string
	mode planner.Mode
}{{"auto", planner.ModeAuto}, {"in-place", planner.ModeInPlace}, {"fork-join", planner.ModeForkJoin}}

// TestFeatures runs our own feature tests (features and semantics) with
// every shard count and in every execution mode, under the same ratchet as
// the W3C tests. A test fails when it fails in any mode.
func TestFeatures(t *testing.T) {
	shards := shardCounts(t)
	known, err := ReadList(knownFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	all := append(append([]feature(nil), features...), semantics...)
	names := map[string]bool{}
	runs := make([][]Outcome, len(shards))
	for i, n := range shards {
		for _, f := range all {
			id := ownPrefix + f.name
			if names[id] && i == 0 {
				t.Fatalf("two feature tests named %s", f.name)
			}
			names[id] = true
			if !selected(t, id) {
				continue
			}
			want, err := parseWant(f.want)
			if err != nil {
				t.Fatalf("%s: bad expected answer: %v", f.name, err)
			}
			ds := &Dataset{}
			if err := parseData(ds, f.data, f.trig); err != nil {
				t.Fatalf("%s: bad data: %v", f.name, err)
			}
			var out Outcome
			for _, m := range featureModes {
				out = runFeature(f, ds, want, n, ModeEvaluator(m.mode))
				if out.Status != Pass {
					out.Reason = m.name + ": " + out.Reason
					break
				}
			}
			runs[i] = append(runs[i], out)
		}
		report(t, "conformance feature tests", n, runs[i], known)
	}
	ratchet(t, shards, runs, func(id string) bool { return strings.HasPrefix(id, ownPrefix) })
	record("wukongd feature tests (conformance/…)", runs...)
}

func runFeature(f feature, ds *Dataset, want *Answer, shards int, eval Evaluator) Outcome {
	out := Outcome{ID: ownPrefix + f.name, Dir: strings.Split(f.name, "/")[0]}
	text := queryPrefixes + f.query
	q, err := ParseQuery(text, "")
	if err != nil {
		out.Status, out.Reason, out.Detail = Fail, firstLine("parser: "+err.Error()), text
		return out
	}
	return finish(context.Background(), out, q, text, ds, want, RunOptions{Shards: shards, Timeout: *timeoutFlag, Eval: eval})
}
