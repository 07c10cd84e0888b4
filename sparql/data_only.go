package sparql

import (
	"context"
	"strings"
)

// parseDataOnly parses, without the generated parser, an update that is
// nothing but one INSERT DATA or DELETE DATA block of plain quad data
// (liftQuadData) with no prefixed names — a writer's one-triple INSERT
// DATA, whose ANTLR parse cost most of its request's parse (~70 µs of CPU
// per request for an empty block, setting up the lexer and the parser).
// ok is false for anything else (a prologue, a second operation, a
// prefixed name, whatever the lifter does not take): ParseUpdateBase then
// parses it as before, and reports errors exactly. The result is the one
// the generated parser's path builds (TestParseDataOnlyAgrees).
func parseDataOnly(ctx context.Context, text, base string) (u *Update, err error, ok bool) {
	i := skipSpace(text, 0)
	var insert bool
	switch {
	case hasWordFold(text, i, "insert"):
		insert = true
	case hasWordFold(text, i, "delete"):
	default:
		return nil, nil, false
	}
	start := i
	j := skipSpace(text, i+6)
	if j == i+6 || !hasWordFold(text, j, "data") {
		return nil, nil, false
	}
	defer func() {
		if r := recover(); r != nil {
			switch x := r.(type) {
			case parseAbort:
				u, err, ok = nil, x.err, true
			case bailout:
				u, err, ok = nil, x.err, true
			default:
				panic(r)
			}
		}
	}()
	_, end, lb := liftQuadData(ctx, text, j+4, insert)
	if lb == nil || skipSpace(text, end+1) != len(text) {
		return nil, nil, false
	}
	for _, t := range lb.toks {
		if t.kind == lPName {
			return nil, nil, false // the prefix is undeclared: the parser says so
		}
	}
	b := &builder{prefixes: map[string]string{}, labelScope: map[string]int{}, ctx: ctx, text: text, base: base}
	p := offPos(text, start)
	var op UpdateOp
	if insert {
		b.scopeID++
		b.curScope = b.scopeID
		op = &InsertData{Pos: p, Quads: b.liftedQuads(lb)}
	} else {
		op = &DeleteData{Pos: p, Quads: b.liftedQuads(lb)}
	}
	return &Update{Pos: p, Base: b.base, Prefixes: b.prefixList, Operations: []UpdateOp{op}}, nil, true
}

// hasWordFold reports whether text has the keyword w (lower case) at i,
// in any case, not followed by a name character.
func hasWordFold(text string, i int, w string) bool {
	return i+len(w) <= len(text) && strings.EqualFold(text[i:i+len(w)], w) && !isPNameByte(text, i+len(w))
}
