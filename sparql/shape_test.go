package sparql

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

const shapePrologue = "PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\nPREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\nPREFIX : <http://example.org/>\n"

// bindPrint prints template tq with params in the sentinels' places (what
// the planner sees once the plan is bound).
func bindPrint(t *testing.T, tq *Query, l lexedShape) string {
	t.Helper()
	s := tq.String()
	for i := range l.slots {
		tm, ok := l.term(i)
		if !ok {
			continue
		}
		s = strings.ReplaceAll(s, sentinel(i, l.slots[i].kind), tm.String())
	}
	return s
}

// TestShapesDifferential: a template learned from one text, looked up with
// another text of the same shape, is that text's own algebra once its
// constants are in — for constants of every form the lexer takes out.
func TestShapesDifferential(t *testing.T) {
	tests := []struct{ name, a, b string }{
		{"iri object", "SELECT ?x WHERE { ?x ub:takesCourse <http://www.Department0.University0.edu/GraduateCourse1> . ?x rdf:type ub:GraduateStudent }",
			"SELECT ?x WHERE { ?x ub:takesCourse <http://www.Department9.University3.edu/GraduateCourse27> . ?x rdf:type ub:GraduateStudent }"},
		{"subject and object", "SELECT ?p WHERE { <http://a/s1> ?p <http://a/o1> }",
			"SELECT ?p WHERE { <http://b/s-2#x> ?p <urn:isbn:0451450523> }"},
		{"prefixed names", "SELECT ?x WHERE { ?x ub:worksFor :dept.0 . ?x ub:advisor :p-1 }",
			"SELECT ?x WHERE { ?x ub:worksFor :d:e:p:t . ?x ub:advisor :_9 }"},
		{"trailing dot", "SELECT * WHERE { ?x ub:worksFor :a.b.}", "SELECT * WHERE { ?x ub:worksFor :c.}"},
		{"string", `SELECT ?x WHERE { ?x ub:name "Course1" }`, `SELECT ?x WHERE { ?x ub:name 'it"s # not a comment' }`},
		{"comments and spacing", "SELECT ?x # c <http://no/slot>\nWHERE {\n\t?x ub:memberOf <http://a/1> .\n}",
			"SELECT ?x # other\nWHERE { ?x ub:memberOf <http://b/2> . }"},
		{"optional and union", "SELECT * WHERE { { ?x ub:memberOf <http://a/1> } UNION { ?x ub:worksFor <http://a/2> } OPTIONAL { ?x ub:name ?n } }",
			"SELECT * WHERE { { ?x ub:memberOf <http://b/1> } UNION { ?x ub:worksFor <http://b/2> } OPTIONAL { ?x ub:name ?n } }"},
		{"limit stays", "SELECT ?x WHERE { ?x ub:memberOf <http://a/1> } LIMIT 10", "SELECT ?x WHERE { ?x ub:memberOf <http://a/2> } LIMIT 10"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewShapes(100, 0)
			c.LearnAfter = 1
			a, b := shapePrologue+tc.a, shapePrologue+tc.b
			qa, err := ParseQuery(a)
			if err != nil {
				t.Fatal(err)
			}
			c.Learn(context.Background(), a, "", qa)
			tq, params, ok := c.Lookup(b, "")
			if !ok {
				t.Fatalf("no template for %q after learning %q", tc.b, tc.a)
			}
			qb, err := ParseQuery(b)
			if err != nil {
				t.Fatal(err)
			}
			l, _ := lexShape(b)
			if got, want := bindPrint(t, tq, l), qb.String(); got != want {
				t.Fatalf("template bound:\n%s\nparsed:\n%s", got, want)
			}
			n := 0
			for _, p := range params {
				if !p.IsZero() {
					n++
				}
			}
			if n == 0 {
				t.Fatal("no parameters")
			}
		})
	}
}

// TestShapesFixed: constants the plan depends on, or that are not in a
// triple pattern's subject or object, are part of the template's key: a
// text differing there finds no template.
func TestShapesFixed(t *testing.T) {
	tests := []struct{ name, a, b string }{
		{"class", "SELECT ?x WHERE { ?x ub:memberOf <http://a/1> . ?x rdf:type ub:GraduateStudent }",
			"SELECT ?x WHERE { ?x ub:memberOf <http://a/1> . ?x rdf:type ub:UndergraduateStudent }"},
		{"class with a", "SELECT ?x WHERE { ?x ub:memberOf <http://a/1> . ?x a <http://c/1> }",
			"SELECT ?x WHERE { ?x ub:memberOf <http://a/1> . ?x a <http://c/2> }"},
		{"predicate", "SELECT ?x WHERE { ?x ub:memberOf <http://a/1> }", "SELECT ?x WHERE { ?x ub:worksFor <http://a/1> }"},
		{"limit", "SELECT ?x WHERE { ?x ub:memberOf <http://a/1> } LIMIT 1", "SELECT ?x WHERE { ?x ub:memberOf <http://a/1> } LIMIT 2"},
		{"offset", "SELECT ?x WHERE { ?x ub:memberOf <http://a/1> } OFFSET 1", "SELECT ?x WHERE { ?x ub:memberOf <http://a/1> } OFFSET 2"},
		{"filter", "SELECT ?x WHERE { ?x ub:memberOf ?d FILTER(?d = <http://a/1>) }", "SELECT ?x WHERE { ?x ub:memberOf ?d FILTER(?d = <http://a/2>) }"},
		{"filter string", `SELECT ?x WHERE { ?x ub:name ?n FILTER(?n = "a") }`, `SELECT ?x WHERE { ?x ub:name ?n FILTER(?n = "b") }`},
		{"language tag", `SELECT ?x WHERE { ?x ub:name "a"@en }`, `SELECT ?x WHERE { ?x ub:name "a"@fr }`},
		{"datatype", `SELECT ?x WHERE { ?x ub:name "1"^^<http://www.w3.org/2001/XMLSchema#int> }`,
			`SELECT ?x WHERE { ?x ub:name "1"^^<http://www.w3.org/2001/XMLSchema#long> }`},
		{"number", "SELECT ?x WHERE { ?x ub:age 1 }", "SELECT ?x WHERE { ?x ub:age 2 }"},
		{"values", "SELECT ?x WHERE { VALUES ?d { <http://a/1> } ?x ub:memberOf ?d }", "SELECT ?x WHERE { VALUES ?d { <http://a/2> } ?x ub:memberOf ?d }"},
		{"bind", "SELECT ?x WHERE { ?x ub:memberOf ?d BIND(<http://a/1> AS ?y) }", "SELECT ?x WHERE { ?x ub:memberOf ?d BIND(<http://a/2> AS ?y) }"},
		{"graph", "SELECT ?x WHERE { GRAPH <http://g/1> { ?x ub:memberOf ?d } }", "SELECT ?x WHERE { GRAPH <http://g/2> { ?x ub:memberOf ?d } }"},
		{"path", "SELECT ?x WHERE { ?x ub:subOrganizationOf+ <http://a/1> }", "SELECT ?x WHERE { ?x ub:subOrganizationOf+ <http://a/2> }"},
		{"from", "SELECT ?x FROM <http://g/1> WHERE { ?x ub:memberOf ?d }", "SELECT ?x FROM <http://g/2> WHERE { ?x ub:memberOf ?d }"},
		{"construct template", "CONSTRUCT { ?x ub:memberOf <http://a/1> } WHERE { ?x ub:worksFor <http://a/9> }",
			"CONSTRUCT { ?x ub:memberOf <http://a/2> } WHERE { ?x ub:worksFor <http://a/9> }"},
		{"describe", "DESCRIBE <http://a/1>", "DESCRIBE <http://a/2>"},
		{"both uses", "SELECT ?x WHERE { ?x ub:memberOf <http://a/1> FILTER(?x != <http://a/1>) }",
			"SELECT ?x WHERE { ?x ub:memberOf <http://a/1> FILTER(?x != <http://a/2>) }"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewShapes(100, 0)
			c.LearnAfter = 1
			a, b := shapePrologue+tc.a, shapePrologue+tc.b
			qa, err := ParseQuery(a)
			if err != nil {
				t.Fatal(err)
			}
			c.Learn(context.Background(), a, "", qa)
			if tq, _, ok := c.Lookup(b, ""); ok {
				qb, _ := ParseQuery(b)
				l, _ := lexShape(b)
				if got := bindPrint(t, tq, l); got != qb.String() {
					t.Fatalf("%q found the template of %q:\n%s\nparsed:\n%s", tc.b, tc.a, got, qb.String())
				}
				t.Fatalf("%q found the template of %q (bound equal, but the constant should be fixed)", tc.b, tc.a)
			}
		})
	}
}

// TestShapesLearnAfter: a shape gets its template on its second sighting
// by default, and the cache stays within its byte budget.
func TestShapesLearnAfter(t *testing.T) {
	c := NewShapes(1000, 1<<20)
	text := func(i int) string {
		return shapePrologue + fmt.Sprintf("SELECT ?x WHERE { ?x ub:memberOf <http://a/%d> . ?x ub:name ?y%d }", i, i%50)
	}
	for i := 0; i < 200; i++ {
		q, err := ParseQuery(text(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := c.Lookup(text(i), ""); ok != (i >= 100) {
			t.Fatalf("query %d: template found %v", i, ok)
		}
		c.Learn(context.Background(), text(i), "", q)
	}
	if c.Bytes() > 1<<20 {
		t.Fatalf("%d bytes over the 1 MiB budget", c.Bytes())
	}
	small := NewShapes(1000, 4<<10)
	for i := 0; i < 200; i++ {
		q, _ := ParseQuery(text(i))
		small.Learn(context.Background(), text(i), "", q)
	}
	if small.Bytes() > 4<<10 {
		t.Fatalf("%d bytes over the 4 KiB budget", small.Bytes())
	}
}

// TestLexShapeNoShape: texts the lexer does not take apart.
func TestLexShapeNoShape(t *testing.T) {
	for _, text := range []string{
		`SELECT ?x WHERE { ?x :p "unclosed }`,
		"SELECT ?x WHERE { ?x :p :caf\u00e9 }",
		`SELECT ?x WHERE { ?x :p :a\,b }`,
		"PREFIX p: <rel/> SELECT ?x WHERE { ?x p:a ?y }",
	} {
		if l, ok := lexShape(text); ok && len(l.slots) > 0 {
			t.Errorf("%q: a shape with %d slots", text, len(l.slots))
		}
	}
}

func BenchmarkShapeLookup(b *testing.B) {
	c := NewShapes(100, 0)
	c.LearnAfter = 1
	text := shapePrologue + "SELECT ?X ?Y1 ?Y2 ?Y3 WHERE {\n\t?X ub:worksFor <http://www.Department0.University0.edu> .\n\t?X rdf:type ub:FullProfessor .\n\t?X ub:name ?Y1 .\n\t?X ub:emailAddress ?Y2 .\n\t?X ub:telephone ?Y3 .\n}\n"
	q, err := ParseQuery(text)
	if err != nil {
		b.Fatal(err)
	}
	c.Learn(context.Background(), text, "", q)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, ok := c.Lookup(text, ""); !ok {
			b.Fatal("no template")
		}
	}
}
