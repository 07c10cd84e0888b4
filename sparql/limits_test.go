package sparql

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestNestingLimit: every way of nesting past MaxNesting — brackets of
// each kind, operator chains, group elements, chains nested in brackets —
// is a *SyntaxError naming where the limit was passed, not a stack
// overflow; text at the limit parses.
func TestNestingLimit(t *testing.T) {
	deep := MaxNesting + 1
	rep := strings.Repeat
	chain := func(op string, n int) string { return rep("?x "+op+" ", n-1) + "?x" }
	for _, tc := range []struct {
		name, text string
		line, col  int
		msg        string
	}{
		{"braces", "SELECT * WHERE " + rep("{", 300_000) + rep("}", 300_000), 1, 16 + MaxNesting, "brackets nest deeper"},
		{"parens", "SELECT * WHERE { FILTER" + rep("(", 300_000) + "1" + rep(")", 300_000) + "}", 1, 24 + MaxNesting - 1, "brackets nest deeper"},
		{"brackets", "SELECT * WHERE { ?s ?p " + rep("[ ?p ", deep) + rep("]", deep) + "}", 1, 24 + 5*(MaxNesting-1), "brackets nest deeper"},
		{"collections", "SELECT * WHERE { ?s ?p " + rep("( ", deep) + rep(")", deep) + "}", 1, 24 + 2*(MaxNesting-1), "brackets nest deeper"},
		{"or chain", "SELECT * WHERE { FILTER(" + chain("||", 20_000) + ") }", 1, 25 + 6*MaxNesting, "more than 1000 || operands"},
		{"and chain", "SELECT * WHERE { FILTER(" + chain("&&", deep) + ") }", 1, 25 + 6*MaxNesting, "&& operands"},
		{"plus chain", "SELECT * WHERE { FILTER(" + chain("+", deep) + ") }", 1, 23 + 5*MaxNesting, "+ and - operands"},
		{"times chain", "SELECT * WHERE { FILTER(" + chain("*", deep) + ") }", 1, 23 + 5*MaxNesting, "* and / operands"},
		{"union chain", "SELECT * WHERE { " + rep("{} UNION ", deep) + "{} }", 1, 18 + 9*MaxNesting, "UNION branches"},
		{"optional chain", "SELECT * WHERE { " + rep("OPTIONAL {} ", deep) + "}", 1, 18 + 12*MaxNesting, "group elements"},
		// Counted as the tokens are made: the limit is found before the
		// parser reaches the syntax error at the end of the chain.
		{"long optional chain", "SELECT * WHERE { " + rep("OPTIONAL {} ", 5*MaxNesting) + "} } }", 1, 18 + 12*MaxNesting, "group elements"},
		{"filter chain", "SELECT * WHERE { ?s ?p ?o " + rep("FILTER(?o) ", 5*MaxNesting) + "} } }", 1, 27 + 11*MaxNesting, "group elements"},
		{"long or chain", "SELECT * WHERE { FILTER(" + chain("||", 5*MaxNesting) + ") } } }", 1, 25 + 6*MaxNesting, "more than 1000 || operands"},
		{"long and chain", "SELECT * WHERE { FILTER(" + chain("&&", 5*MaxNesting) + ") } } }", 1, 25 + 6*MaxNesting, "more than 1000 && operands"},
		{"path sequence", "SELECT * WHERE { ?s " + rep("<p>/", deep-1) + "<p> ?o }", 1, 21 + 4*MaxNesting, "path steps"},
		{"path alternative", "SELECT * WHERE { ?s " + rep("<p>|", deep-1) + "<p> ?o }", 1, 21 + 4*MaxNesting, "path alternatives"},
		{"update", "INSERT { <a> <b> <c> } WHERE " + rep("{", deep) + rep("}", deep), 1, 30 + MaxNesting, "brackets nest deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse(tc.text)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a *SyntaxError", err)
			}
			if se.Line != tc.line || se.Col != tc.col || !strings.Contains(se.Msg, tc.msg) {
				t.Fatalf("got %d:%d %q, want %d:%d containing %q", se.Line, se.Col, se.Msg, tc.line, tc.col, tc.msg)
			}
		})
	}
	// Chains nested in brackets: each chain is short, the tree they make
	// together is too deep.
	nested := strings.Repeat("(", 900) + "?x" + strings.Repeat(" || ?x || ?x || ?x || ?x || ?x)", 900)
	if _, err := ParseQuery("SELECT * WHERE { FILTER(" + nested + ") }"); err == nil || !strings.Contains(err.Error(), "nests deeper than the limit") {
		t.Fatalf("nested chains: error %v, want the depth limit", err)
	}
	// At the limit: parses. The lexer counts || and && per chain: a comma
	// starts another (the next argument), a || another && chain.
	andOr := rep("?x && ?x && ?x || ", 3*MaxNesting/4) + "?x"
	for _, text := range []string{
		"SELECT * WHERE " + rep("{", MaxNesting) + rep("}", MaxNesting),
		"SELECT * WHERE { FILTER(" + chain("||", MaxNesting) + ") }",
		"SELECT * WHERE { FILTER(" + chain("&&", MaxNesting) + ") }",
		"SELECT * WHERE { FILTER(COALESCE(" + chain("||", 3*MaxNesting/4) + ", " + chain("||", 3*MaxNesting/4) + ")) }",
		"SELECT * WHERE { FILTER(" + andOr + ") }",
		"SELECT * WHERE { " + rep("OPTIONAL {} ", MaxNesting-2) + "}",
	} {
		if _, err := ParseQuery(text); err != nil {
			t.Errorf("%.40q…: %v", text, err)
		}
	}
}

// TestBadText: invalid UTF-8 and NUL are syntax errors at their position.
func TestBadText(t *testing.T) {
	for _, tc := range []struct {
		text      string
		line, col int
		msg       string
	}{
		{"SELECT * WHERE { ?s ?p \"a\xffb\" }", 1, 26, "invalid UTF-8 (byte 0xff)"},
		{"SELECT * WHERE {\n ?s ?p \"é\xc3\" }", 2, 10, "invalid UTF-8"},
		{"SELECT * WHERE { ?s ?p \"a\x00b\" }", 1, 26, "NUL"},
		{"INSERT DATA { <a> <b> \"\x00\" }", 1, 24, "NUL"},
	} {
		_, _, err := Parse(tc.text)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != tc.line || se.Col != tc.col || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("%q: got %v, want %d:%d containing %q", tc.text, err, tc.line, tc.col, tc.msg)
		}
	}
}

// TestParseDeadline: a parse whose context is done stops with the
// context's cause, whether it is done before or during the parse.
func TestParseDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ParseQueryContext(ctx, "SELECT * {}"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before: %v", err)
	}
	// A large VALUES block: at least several checks fall inside it.
	text := "SELECT * WHERE { VALUES ?x { " + strings.Repeat("1 ", 2_000_000) + "} }"
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := ParseQueryContext(ctx, text); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline during the parse: %v", err)
	}
	if _, err := ParseUpdateContext(ctx, "INSERT DATA { <a> <b> 1 }"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("update after the deadline: %v", err)
	}
}

// expiring is a context whose deadline passes after its first looks.
type expiring struct {
	context.Context
	looks, after int
}

func (c *expiring) Err() error {
	if c.looks++; c.looks > c.after {
		return context.DeadlineExceeded
	}
	return nil
}

// TestParseStopsInsideAToken: a parse whose deadline passes while the
// lexer is inside one long token (a 256 KiB string literal, made without
// returning a token) stops with the deadline's error, not after the
// token; ASCII and non-ASCII texts alike.
func TestParseStopsInsideAToken(t *testing.T) {
	for _, fill := range []string{"x", "é"} {
		text := `SELECT * WHERE { ?s ?p "` + strings.Repeat(fill, 256<<10/len(fill)) + `" . . }`
		_, err := ParseQueryContext(&expiring{Context: context.Background(), after: 1}, text)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%q: %v, want the deadline's error", fill, err)
		}
		// Without a deadline the same text is the syntax error it holds.
		var se *SyntaxError
		if _, err := ParseQueryContext(context.Background(), text); !errors.As(err, &se) || se.Col < 256<<10/len(fill) {
			t.Errorf("%q without a deadline: %v", fill, err)
		}
	}
}

// TestCheckDepth: the depth check over a tree built directly (deeper than
// any parse could make): patterns, expressions, EXISTS patterns inside
// expressions, aggregates and property paths each pass at maxTreeDepth
// levels and fail just past it, with the message of the kind of node
// that passed the limit.
func TestCheckDepth(t *testing.T) {
	bgp := func() Pattern { return &BGP{} }
	joins := func(n int) Pattern { // n levels of patterns
		p := bgp()
		for i := 1; i < n; i++ {
			p = &Join{Left: p, Right: bgp()}
		}
		return p
	}
	nots := func(n int, leaf Expr) Expr { // n levels of expressions
		e := leaf
		for i := 1; i < n; i++ {
			e = &UnaryExpr{Op: "!", X: e}
		}
		return e
	}
	paths := func(n int) Path {
		var p Path = &LinkPath{IRI: "http://example.org/p"}
		for i := 1; i < n; i++ {
			p = &InversePath{Path: p}
		}
		return p
	}
	check := func(pat Pattern) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = r.(bailout).err
			}
		}()
		checkDepth(pat)
		return nil
	}
	x := &VarExpr{Var: "x"}
	for _, c := range []struct {
		name string
		tree func(levels int) Pattern
		msg  string
	}{
		{"patterns", joins, "query nests deeper"},
		{"expressions", func(n int) Pattern { return &Filter{Exprs: []Expr{nots(n-1, x)}, Input: bgp()} }, "expression nests deeper"},
		{"EXISTS in an expression", func(n int) Pattern {
			return &Filter{Exprs: []Expr{nots(10, &ExistsExpr{Pattern: joins(n - 11)})}, Input: bgp()}
		}, "query nests deeper"},
		{"aggregates", func(n int) Pattern {
			return &Group{Aggregates: []AggregateBinding{{Var: "n", Agg: &Aggregate{Name: "COUNT", Arg: nots(n-2, x)}}}, Input: bgp()}
		}, "expression nests deeper"},
		{"paths", func(n int) Pattern { return &PathPattern{Path: paths(n - 1)} }, "property path nests deeper"},
	} {
		if err := check(c.tree(maxTreeDepth)); err != nil {
			t.Errorf("%s at the limit: %v", c.name, err)
		}
		if err := check(c.tree(maxTreeDepth + 1)); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s past the limit: %v, want %q", c.name, err, c.msg)
		}
	}
}
