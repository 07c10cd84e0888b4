package sparql

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/wukongd/wukongd/sparql/internal/parser"
)

// MaxNesting is the deepest a query or update may nest: brackets ((), {},
// []) in the text, and operands of one operator chain (a || b || c, the
// OPTIONAL, MINUS, BIND, UNION and group elements of one group, the steps
// of a path); the algebra tree they build together may be 4×MaxNesting
// deep. Deeper text is a
// *SyntaxError at the line and column where the limit was passed.
//
// The limit keeps every recursion over the parse — the generated parser,
// the builder, and the passes of the planner and executor that walk the
// algebra — within a small, fixed stack, whatever the input.
const MaxNesting = 1000

// maxTreeDepth bounds the depth of the algebra tree: chains nested in
// brackets (each within MaxNesting) can make a deeper tree than either.
const maxTreeDepth = 4 * MaxNesting

// checkInterval is how many tokens (and rule entries) pass between two
// looks at the parse's context.
const checkInterval = 1024

// parseAbort is the panic value that stops the lexer or parser at a limit
// (nesting, deadline, bad text); parseWith recovers it.
type parseAbort struct{ err error }

// checkText refuses text that is not valid UTF-8 or holds a NUL character,
// naming the line and column (in code points) of the first bad byte.
func checkText(text string) error {
	line, col := 1, 1
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch c {
			case 0:
				return &SyntaxError{Line: line, Col: col, Msg: "NUL character in the text"}
			case '\n':
				line, col = line+1, 1
			default:
				col++
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && n == 1 {
			return &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf("invalid UTF-8 (byte 0x%02x)", c)}
		}
		i += n
		col++
	}
	return nil
}

// guardedLexer is the token source of a parse: the generated lexer, with
// the nesting of brackets counted as tokens are made (before the parser
// sees them, so the parser's recursion never passes MaxNesting) and the
// context checked every checkInterval tokens.
type guardedLexer struct {
	*parser.SparqlLexer
	ctx   context.Context
	in    *guardedInput // nil: the lexer's input is not guarded
	depth int
	n     int
	// elems counts, per open brace, the OPTIONAL, MINUS, BIND and FILTER
	// keywords directly inside it: each starts one element of that group,
	// so past MaxNesting the builder would refuse the group anyway, and
	// refusing it here spares the parser the rest of the chain (ANTLR
	// takes ~0.1 ms per OPTIONAL: 10 s for a 2 MB chain).
	elems []int
	// ops counts, per open bracket (and the text outside any), the || and
	// && operators of the chain being lexed there: a comma ends both
	// chains (the next argument), a || ends the && chain. Past MaxNesting
	// operators the builder would refuse the chain; refusing it here, at
	// the first token of the operand past the limit (pending: where the
	// builder would), spares the parser the rest (a 1.2 MB || chain took
	// ANTLR over 3 s).
	ops     []opChain
	pending string
}

// opChain is the || and && operators of the chains lexed at one bracket
// level.
type opChain struct{ or, and int }

// chainOp counts an operator of kind op (|| or &&) at the current level
// and notes when the chain passes MaxNesting operands.
func (l *guardedLexer) chainOp(or bool) {
	if len(l.ops) == 0 {
		l.ops = append(l.ops, opChain{})
	}
	c := &l.ops[len(l.ops)-1]
	n, what := &c.and, "&& operands"
	if or {
		c.and = 0
		n, what = &c.or, "|| operands"
	}
	if *n++; *n >= MaxNesting {
		l.pending = fmt.Sprintf("more than %d %s in a row (the nesting limit)", MaxNesting, what)
	}
}

func (l *guardedLexer) NextToken() antlr.Token {
	t := l.SparqlLexer.NextToken()
	if l.in != nil && l.in.stopped {
		checkContext(l.ctx)
	}
	if l.pending != "" && t.GetChannel() == antlr.TokenDefaultChannel {
		panic(parseAbort{&SyntaxError{Line: t.GetLine(), Col: t.GetColumn() + 1, Msg: l.pending}})
	}
	switch tt := t.GetTokenType(); tt {
	case parser.SparqlLexerLBRACE, parser.SparqlLexerLPAREN, parser.SparqlLexerLBRACK:
		if l.depth++; l.depth > MaxNesting {
			panic(parseAbort{&SyntaxError{Line: t.GetLine(), Col: t.GetColumn() + 1,
				Msg: fmt.Sprintf("brackets nest deeper than the limit of %d levels", MaxNesting)}})
		}
		if tt == parser.SparqlLexerLBRACE {
			l.elems = append(l.elems, 0)
		}
		if len(l.ops) == 0 {
			l.ops = append(l.ops, opChain{}) // the level outside any bracket
		}
		l.ops = append(l.ops, opChain{})
	case parser.SparqlLexerRBRACE, parser.SparqlLexerRPAREN, parser.SparqlLexerRBRACK:
		l.depth--
		if tt == parser.SparqlLexerRBRACE && len(l.elems) > 0 {
			l.elems = l.elems[:len(l.elems)-1]
		}
		if len(l.ops) > 1 {
			l.ops = l.ops[:len(l.ops)-1]
		}
	case parser.SparqlLexerOR, parser.SparqlLexerAND:
		l.chainOp(tt == parser.SparqlLexerOR)
	case parser.SparqlLexerCOMMA:
		if k := len(l.ops) - 1; k >= 0 {
			l.ops[k] = opChain{}
		}
	case parser.SparqlLexerOPTIONAL, parser.SparqlLexerMINUS, parser.SparqlLexerBIND, parser.SparqlLexerFILTER:
		if k := len(l.elems) - 1; k >= 0 {
			if l.elems[k]++; l.elems[k] > MaxNesting {
				panic(parseAbort{&SyntaxError{Line: t.GetLine(), Col: t.GetColumn() + 1,
					Msg: fmt.Sprintf("more than %d group elements in a row (the nesting limit)", MaxNesting)}})
			}
		}
	}
	if l.n++; l.n%checkInterval == 0 {
		checkContext(l.ctx)
	}
	return t
}

// checkContext stops the parse when ctx is done.
func checkContext(ctx context.Context) {
	if ctx == nil {
		return
	}
	if err := ctx.Err(); err != nil {
		panic(parseAbort{context.Cause(ctx)})
	}
}

// deadlineListener checks the parse's context every checkInterval rule
// entries, so that full-LL prediction over a long text stops in time too.
type deadlineListener struct {
	antlr.BaseParseTreeListener
	ctx context.Context
	n   int
}

func (l *deadlineListener) EnterEveryRule(antlr.ParserRuleContext) {
	if l.n++; l.n%checkInterval == 0 {
		checkContext(l.ctx)
	}
}

// chain counts the operands of one operator chain (or the elements of one
// group) as the builder adds them, refusing more than MaxNesting.
type chain struct{ n int }

func (c *chain) add(p Pos, what string) {
	if c.n++; c.n > MaxNesting {
		failf(p, "more than %d %s in a row (the nesting limit)", MaxNesting, what)
	}
}

// checkDepth fails when the algebra under pat (its patterns, expressions
// and property paths) nests deeper than maxTreeDepth. The walk's callbacks
// run before a node's children, so its recursion stops at the limit: it
// is the first pass over a tree the parse built, and the only one that
// may meet a deeper one.
func checkDepth(pat Pattern) {
	w := walker{
		pattern: func(p Pattern, d int) bool {
			if d > maxTreeDepth {
				failf(p.Position(), "the query nests deeper than the limit of %d levels", maxTreeDepth)
			}
			return true
		},
		expr: func(e Expr, d int) bool {
			if d > maxTreeDepth {
				failf(e.Position(), "the expression nests deeper than the limit of %d levels", maxTreeDepth)
			}
			return true
		},
		path: func(_ Path, at Pos, d int) bool {
			if d > maxTreeDepth {
				failf(at, "the property path nests deeper than the limit of %d levels", maxTreeDepth)
			}
			return true
		},
	}
	w.walkPattern(pat, 1)
}

// guardedInput is the lexer's character stream: the text itself when it
// is ASCII (no copy: antlr.NewInputStream makes a []rune of 4 bytes a
// character, a pass that cannot be stopped), else its runes; with the
// context checked every checkChars characters consumed, since one token
// can be megabytes long (a string literal) and the lexer makes it without
// returning a token. Once the context is done the stream ends (the
// generated lexer swallows panics inside a token), and guardedLexer stops
// the parse after the token.
type guardedInput struct {
	ascii   string // the text, when ASCII
	runes   []rune // else its characters
	size    int
	index   int
	ctx     context.Context
	n       int
	stopped bool
}

var _ antlr.CharStream = (*guardedInput)(nil)

func newGuardedInput(ctx context.Context, text string) *guardedInput {
	in := &guardedInput{ctx: ctx}
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			in.runes = []rune(text)
			in.size = len(in.runes)
			return in
		}
	}
	in.ascii, in.size = text, len(text)
	return in
}

// checkChars is the characters the lexer consumes between two looks at
// the context (a few hundred microseconds of lexing).
const checkChars = 1 << 16

func (in *guardedInput) Consume() {
	if in.index >= in.size {
		panic("cannot consume EOF")
	}
	in.index++
	if in.n++; in.n == checkChars {
		in.n = 0
		in.stopped = in.ctx != nil && in.ctx.Err() != nil
	}
}

func (in *guardedInput) LA(offset int) int {
	if offset == 0 {
		return 0
	}
	if offset < 0 {
		offset++ // LA(-1) is the character before the index
	}
	pos := in.index + offset - 1
	if pos < 0 || pos >= in.size || in.stopped {
		return antlr.TokenEOF
	}
	if in.runes != nil {
		return int(in.runes[pos])
	}
	return int(in.ascii[pos])
}

func (in *guardedInput) Mark() int             { return -1 }
func (in *guardedInput) Release(int)           {}
func (in *guardedInput) Index() int            { return in.index }
func (in *guardedInput) Size() int             { return in.size }
func (in *guardedInput) GetSourceName() string { return "Obtained from string" }

func (in *guardedInput) Seek(index int) {
	if index <= in.index {
		in.index = index
		return
	}
	in.index = min(index, in.size)
}

func (in *guardedInput) GetText(start, stop int) string {
	stop = min(stop, in.size-1)
	if start >= in.size || start > stop {
		return ""
	}
	if in.runes != nil {
		return string(in.runes[start : stop+1])
	}
	return in.ascii[start : stop+1]
}

func (in *guardedInput) GetTextFromTokens(start, stop antlr.Token) string {
	if start != nil && stop != nil {
		return in.GetTextFromInterval(antlr.NewInterval(start.GetTokenIndex(), stop.GetTokenIndex()))
	}
	return ""
}

func (in *guardedInput) GetTextFromInterval(i antlr.Interval) string {
	return in.GetText(i.Start, i.Stop)
}
