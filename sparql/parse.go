package sparql

import (
	"context"
	"fmt"
	"strings"

	"github.com/antlr4-go/antlr/v4"

	"github.com/wukongd/wukongd/sparql/internal/parser"
)

// ParseQuery parses a SPARQL 1.1 query. Errors are *SyntaxError.
func ParseQuery(text string) (*Query, error) { return ParseQueryContext(context.Background(), text) }

// ParseQueryContext is ParseQuery that stops when ctx is done (with
// ctx's cause as the error).
func ParseQueryContext(ctx context.Context, text string) (*Query, error) {
	return ParseQueryBase(ctx, text, "")
}

// ParseQueryBase is ParseQueryContext with base as the base IRI that
// relative IRIs resolve against until a BASE declaration (the service's
// own base, SPARQL 1.1 Protocol §2.1.4, "which MAY be the service
// endpoint"); "" leaves them relative.
func ParseQueryBase(ctx context.Context, text, base string) (*Query, error) {
	var q *Query
	err := parseWith(ctx, text, func(p *parser.SparqlParser) antlr.ParserRuleContext { return p.QueryUnit() },
		func(b *builder, tree antlr.ParserRuleContext) {
			b.base = base
			q = b.query(tree.(*parser.QueryUnitContext).Query().(*parser.QueryContext))
			checkDepth(q.Pattern)
		})
	if err != nil {
		return nil, err
	}
	return q, nil
}

// ParseUpdate parses a SPARQL 1.1 update request. Errors are *SyntaxError.
func ParseUpdate(text string) (*Update, error) { return ParseUpdateContext(context.Background(), text) }

// ParseUpdateContext is ParseUpdate that stops when ctx is done (with
// ctx's cause as the error).
func ParseUpdateContext(ctx context.Context, text string) (*Update, error) {
	return ParseUpdateBase(ctx, text, "")
}

// ParseUpdateBase is ParseUpdateContext with base as the base IRI of
// relative IRIs until a BASE declaration (see ParseQueryBase).
func ParseUpdateBase(ctx context.Context, text, base string) (*Update, error) {
	if err := checkText(text); err != nil {
		return nil, err
	}
	if ctx != nil {
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
	}
	if u, err, ok := parseDataOnly(ctx, text, base); ok { // data_only.go
		return u, err
	}
	return parseUpdateGenerated(ctx, text, base)
}

// parseUpdateGenerated parses an update with the generated parser.
func parseUpdateGenerated(ctx context.Context, text, base string) (*Update, error) {
	var u *Update
	err := parseWith(ctx, text, func(p *parser.SparqlParser) antlr.ParserRuleContext { return p.UpdateUnit() },
		func(b *builder, tree antlr.ParserRuleContext) {
			b.base = base
			u = b.update(tree.(*parser.UpdateUnitContext).Update().(*parser.UpdateContext))
			for _, op := range u.Operations {
				if m, ok := op.(*Modify); ok {
					checkDepth(m.Pattern)
				}
			}
		})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// Parse parses text as a query when its first keyword after the prologue
// is SELECT, CONSTRUCT, DESCRIBE or ASK, else as an update request;
// exactly one of the results is non-nil when err is nil.
func Parse(text string) (*Query, *Update, error) {
	if IsQuery(text) {
		q, err := ParseQuery(text)
		return q, nil, err
	}
	u, err := ParseUpdate(text)
	return nil, u, err
}

// IsQuery reports whether text looks like a query (rather than an update):
// its first token after BASE and PREFIX declarations is SELECT, CONSTRUCT,
// DESCRIBE or ASK. It does not check the rest of the text.
func IsQuery(text string) bool {
	lx := parser.NewSparqlLexer(antlr.NewInputStream(text))
	lx.RemoveErrorListeners()
	skip := 0 // tokens left of the current declaration
	for {
		t := lx.NextToken()
		switch {
		case t.GetTokenType() == antlr.TokenEOF:
			return false
		case t.GetChannel() != antlr.TokenDefaultChannel:
			continue
		case skip > 0:
			skip--
			continue
		}
		switch t.GetTokenType() {
		case parser.SparqlLexerBASE:
			skip = 1
		case parser.SparqlLexerPREFIX:
			skip = 2
		case parser.SparqlLexerSELECT, parser.SparqlLexerCONSTRUCT, parser.SparqlLexerDESCRIBE, parser.SparqlLexerASK:
			return true
		default:
			return false
		}
	}
}

// errorListener keeps the first syntax error.
type errorListener struct {
	*antlr.DefaultErrorListener
	err *SyntaxError
}

func (l *errorListener) SyntaxError(_ antlr.Recognizer, offending interface{}, line, column int, msg string, _ antlr.RecognitionException) {
	if l.err == nil {
		l.err = &SyntaxError{Line: line, Col: column + 1, Msg: readableMessage(msg)}
	}
	// Only the first error is reported: stop here rather than let error
	// recovery run over the rest of the text (which can be slow on garbage).
	panic(sllFailed{})
}

// readableMessage shortens ANTLR's messages: long expected-token sets are
// cut, token names are shown as they are written.
func readableMessage(msg string) string {
	if i := strings.Index(msg, "expecting {"); i >= 0 {
		set := strings.TrimSuffix(msg[i+len("expecting {"):], "}")
		items := strings.Split(set, ", ")
		if len(items) > 12 {
			items = append(items[:12], "…")
		}
		msg = msg[:i] + "expecting one of " + strings.Join(items, ", ")
	}
	msg = strings.Replace(msg, "<EOF>", "end of input", -1)
	return msg
}

// bailout is the panic value of a semantic error inside the builder.
type bailout struct{ err *SyntaxError }

// parseWith runs the two-stage parse (SLL prediction with bail-out first,
// then full LL with error reporting only when SLL fails) and then the
// builder.
func parseWith(ctx context.Context, text string, rule func(*parser.SparqlParser) antlr.ParserRuleContext, build func(*builder, antlr.ParserRuleContext)) (err error) {
	if err := checkText(text); err != nil {
		return err
	}
	if ctx != nil {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
	}
	// A limit (nesting, the deadline) stops the lexer, the parser or the
	// builder with a parseAbort panic.
	defer func() {
		if r := recover(); r != nil {
			pa, ok := r.(parseAbort)
			if !ok {
				panic(r)
			}
			err = pa.err
		}
	}()
	parsed, lifted := liftValues(ctx, text)
	in := newGuardedInput(ctx, parsed)
	lx := parser.NewSparqlLexer(in)
	lx.RemoveErrorListeners()
	tokens := antlr.NewCommonTokenStream(&guardedLexer{SparqlLexer: lx, ctx: ctx, in: in}, antlr.TokenDefaultChannel)
	tree, ok := parseSLL(ctx, tokens, rule)
	if !ok {
		// Stage two: full LL, which also gives the precise error.
		tokens.Seek(0)
		p := parser.NewSparqlParser(tokens)
		p.RemoveErrorListeners()
		l := &errorListener{DefaultErrorListener: antlr.NewDefaultErrorListener()}
		p.AddErrorListener(l)
		p.GetInterpreter().SetPredictionMode(antlr.PredictionModeLL)
		if ctx != nil {
			p.AddParseListener(&deadlineListener{ctx: ctx})
		}
		tree = parseLL(p, rule)
		if l.err != nil {
			return l.err
		}
		if p.HasError() || tree == nil {
			return &SyntaxError{Line: 1, Col: 1, Msg: "cannot parse the text"}
		}
	}
	b := newBuilder(tokens)
	b.ctx, b.text, b.lifted = ctx, text, lifted
	defer func() {
		if r := recover(); r != nil {
			bo, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			err = bo.err
		}
	}()
	build(b, tree)
	return nil
}

// failf stops the builder with a semantic error at pos.
func failf(pos Pos, format string, args ...interface{}) {
	if pos.Line == 0 {
		pos = Pos{Line: 1, Col: 1}
	}
	panic(bailout{&SyntaxError{Line: pos.Line, Col: pos.Col, Msg: fmt.Sprintf(format, args...)}})
}

// sllFailed is the panic value that stops a parse stage at its first error.
type sllFailed struct{}

// bailStrategy stops the SLL stage at the first error (the runtime's
// BailErrorStrategy only records the error and parsing continues).
type bailStrategy struct{ *antlr.DefaultErrorStrategy }

func (bailStrategy) Recover(antlr.Parser, antlr.RecognitionException) { panic(sllFailed{}) }
func (bailStrategy) RecoverInline(antlr.Parser) antlr.Token           { panic(sllFailed{}) }
func (bailStrategy) Sync(antlr.Parser)                                {}

// parseSLL runs the first stage: SLL prediction, stopping at the first
// error. ok is false when the text needs the second stage.
func parseSLL(ctx context.Context, tokens *antlr.CommonTokenStream, rule func(*parser.SparqlParser) antlr.ParserRuleContext) (tree antlr.ParserRuleContext, ok bool) {
	p := parser.NewSparqlParser(tokens)
	p.RemoveErrorListeners()
	if ctx != nil {
		p.AddParseListener(&deadlineListener{ctx: ctx})
	}
	p.SetErrorHandler(bailStrategy{antlr.NewDefaultErrorStrategy()})
	p.GetInterpreter().SetPredictionMode(antlr.PredictionModeSLL)
	defer func() {
		if r := recover(); r != nil {
			if _, is := r.(sllFailed); !is {
				panic(r)
			}
			tree, ok = nil, false
		}
	}()
	tree = rule(p)
	return tree, !p.HasError()
}

// parseLL runs the second stage; the error listener stops it at the first
// error.
func parseLL(p *parser.SparqlParser, rule func(*parser.SparqlParser) antlr.ParserRuleContext) (tree antlr.ParserRuleContext) {
	defer func() {
		if r := recover(); r != nil {
			if _, is := r.(sllFailed); !is {
				panic(r)
			}
			tree = nil
		}
	}()
	return rule(p)
}
