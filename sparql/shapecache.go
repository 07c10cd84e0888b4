package sparql

import (
	"context"
	"strings"
	"sync"

	"github.com/wukongd/wukongd/internal/lru"
	"github.com/wukongd/wukongd/rdf"
)

// Shapes is a cache of query templates keyed by shape (shape.go): the
// queries that differ only in the constants of triple patterns share one
// parsed template, whose parameters are sentinel terms (ParamIndex), and
// Lookup hands out the template and the query's own constants for them.
// The planner plans the template once (its choices do not depend on the
// values of parameters, see docs/DESIGN.md "Plan cache by query shape")
// and exec re-binds the plan to each query's constants.
//
// A slot of the shape is a parameter of the template when every place the
// parser puts it is the subject or the object of a triple pattern of a
// basic graph pattern, and, as an object, its predicate is a constant
// other than rdf:type or a variable. Every other slot (a predicate, a
// class, a constant in an expression, a VALUES row, a GRAPH name, a
// CONSTRUCT template, a DESCRIBE target, …) is fixed: its text is part of
// the template's key, so queries differing there get templates of their
// own.
//
// ANTLR stays the parser of record: a query's text is parsed the ordinary
// way until its shape has been seen LearnAfter times (Learn), then the
// template is parsed from the shape's text with sentinels in the
// parameters' places, and kept only if the template with the query's
// constants prints as the query's own algebra. Errors never come from
// here: a text Lookup does not find is parsed by the caller.
//
// It is bounded in entries and in bytes like Cache (LRU over shapes and
// templates together). Safe for concurrent use; templates are shared and
// immutable.
type Shapes struct {
	// LearnAfter is how many times a shape is seen before Learn builds its
	// template (default 2: a text sent once costs one lexing pass more,
	// not two more parses).
	LearnAfter int

	mu      sync.Mutex
	entries *lru.LRU[string, *shapeEntry]
}

// shapeEntry is a shape ('s' keys: what its slots are) or a template ('t'
// keys).
type shapeEntry struct {
	key  string
	cost int
	// A shape.
	seen  int
	bad   bool   // no template can be made for the shape
	param []bool // by slot: a parameter (when cond allows)
	cond  []int  // by slot: the slot of the predicate a parameter object depends on (-1: none)
	// A template.
	tmpl   *Query
	params []int // the slots that are its parameters, in order
}

// NewShapes returns a shape cache of at most capacity entries and
// maxBytes bytes (< 1: the defaults of NewCache).
func NewShapes(capacity, maxBytes int) *Shapes {
	if capacity < 1 {
		capacity = 1024
	}
	if maxBytes < 1 {
		maxBytes = DefaultCacheBytes
	}
	return &Shapes{LearnAfter: 2, entries: lru.New[string, *shapeEntry](capacity, maxBytes)}
}

// Len returns the number of shapes and templates held.
func (c *Shapes) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Len()
}

// Bytes returns what the entries are charged in all.
func (c *Shapes) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Bytes()
}

// Lookup returns the template of text's shape (with base as the base IRI)
// and the terms of text's constants for its parameters (params[i] for
// ParamIndex i). ok is false when there is no template (yet): parse text
// the ordinary way and call Learn.
func (c *Shapes) Lookup(text, base string) (q *Query, params []rdf.Term, ok bool) {
	if len(text) > MaxCachedText {
		return nil, nil, false
	}
	l, ok := lexShape(text)
	if !ok || len(l.slots) == 0 {
		return nil, nil, false
	}
	skey := shapeKey(base, &l)
	c.mu.Lock()
	se := c.getLocked(skey)
	if se == nil || se.bad || se.param == nil {
		c.mu.Unlock()
		return nil, nil, false
	}
	param := paramsOf(se, &l)
	te := c.getLocked(templateKey(skey, &l, param))
	c.mu.Unlock()
	if te == nil || te.tmpl == nil {
		return nil, nil, false
	}
	params = make([]rdf.Term, len(l.slots))
	for _, i := range te.params {
		t, ok := l.term(i)
		if !ok {
			return nil, nil, false
		}
		params[i] = t
	}
	return te.tmpl, params, true
}

// Learn records that text (parsed, without error, to parsed) was seen, and
// once its shape has been seen LearnAfter times makes the template for it.
// It may parse twice (the shape with sentinels, the template), each bounded
// by ctx.
func (c *Shapes) Learn(ctx context.Context, text, base string, parsed *Query) {
	if len(text) > MaxCachedText || parsed == nil {
		return
	}
	l, ok := lexShape(text)
	if !ok || len(l.slots) == 0 {
		return
	}
	skey := shapeKey(base, &l)
	c.mu.Lock()
	se := c.getLocked(skey)
	if se == nil {
		se = &shapeEntry{key: skey, cost: 2*len(skey) + 256}
		c.putLocked(se)
	}
	se.seen++
	ready := se.param != nil
	if se.bad || (!ready && se.seen < max(1, c.LearnAfter)) {
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	if !ready {
		param, cond, ok := c.classifyShape(ctx, &l, base)
		c.mu.Lock()
		if ok {
			se.param, se.cond = param, cond
		} else {
			se.bad = true
		}
		c.mu.Unlock()
		if !ok {
			return
		}
	}
	c.mu.Lock()
	param := paramsOf(se, &l)
	tkey := templateKey(skey, &l, param)
	te := c.getLocked(tkey)
	c.mu.Unlock()
	if te != nil {
		return
	}
	te = &shapeEntry{key: tkey}
	te.tmpl, te.params = makeTemplate(ctx, &l, base, param, parsed)
	te.cost = len(tkey) + entryCost(text)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.getLocked(tkey) == nil {
		c.putLocked(te) // a template that failed its checks is kept (nil) so as not to retry it
	}
}

// classifyShape parses the shape with a sentinel in every slot and finds
// which slots are parameters.
func (c *Shapes) classifyShape(ctx context.Context, l *lexedShape, base string) (param []bool, cond []int, ok bool) {
	q, err := ParseQueryBase(ctx, l.text(func(i int) string { return sentinel(i, l.slots[i].kind) }), base)
	if err != nil {
		return nil, nil, false
	}
	n := len(l.slots)
	total := countSentinels(q, l)
	inBGP := make([]int, n)
	cond = make([]int, n)
	for i := range cond {
		cond[i] = -1
	}
	condConflict := make([]bool, n)
	Walk(q.Pattern, func(p Pattern) bool {
		b, ok := p.(*BGP)
		if !ok {
			return true
		}
		for _, tp := range b.Triples {
			if i, ok := sentinelAt(tp.S, n); ok {
				inBGP[i]++
			}
			i, ok := sentinelAt(tp.O, n)
			if !ok {
				continue
			}
			switch j, pIsSlot := sentinelAt(tp.P, n); {
			case tp.P.IsVar():
				inBGP[i]++
			case pIsSlot:
				if cond[i] >= 0 && cond[i] != j {
					condConflict[i] = true
				}
				cond[i] = j
				inBGP[i]++
			case tp.P.Term.Kind == rdf.KindIRI && tp.P.Term.Value != rdf.RDFType:
				inBGP[i]++
			}
		}
		return true
	})
	param = make([]bool, n)
	any := false
	for i := range param {
		param[i] = total[i] > 0 && inBGP[i] == total[i] && !condConflict[i]
		any = any || param[i]
	}
	return param, cond, any
}

// sentinelAt returns the slot of the sentinel at x.
func sentinelAt(x TermOrVar, n int) (int, bool) {
	if x.IsVar() {
		return 0, false
	}
	i, ok := ParamIndex(x.Term)
	return i, ok && i < n
}

// countSentinels counts, by slot, the places its sentinel is printed in q.
func countSentinels(q *Query, l *lexedShape) []int {
	s := q.String()
	out := make([]int, len(l.slots))
	for i := range out {
		out[i] = strings.Count(s, sentinel(i, l.slots[i].kind))
	}
	return out
}

// paramsOf returns, by slot of l, whether it is a parameter of the template
// for l: a parameter of the shape whose predicate (if it depends on one)
// is not rdf:type in l.
func paramsOf(se *shapeEntry, l *lexedShape) []bool {
	out := make([]bool, len(se.param))
	for i, p := range se.param {
		if !p {
			continue
		}
		if j := se.cond[i]; j >= 0 {
			t, ok := l.term(j)
			if !ok || t.Kind != rdf.KindIRI || t.Value == rdf.RDFType {
				continue
			}
		}
		out[i] = true
	}
	return out
}

// makeTemplate parses the template of l: the fixed slots as written, the
// parameters as sentinels. It checks that the parameters are where the
// shape said and that, with l's constants, the template prints as parsed
// (l's text as the parser read it); nil when a check fails.
func makeTemplate(ctx context.Context, l *lexedShape, base string, param []bool, parsed *Query) (*Query, []int) {
	q, err := ParseQueryBase(ctx, l.text(func(i int) string {
		if param[i] {
			return sentinel(i, l.slots[i].kind)
		}
		return slotSource(l.slots[i])
	}), base)
	if err != nil {
		return nil, nil
	}
	total := countSentinels(q, l)
	var params []int
	var pairs []string
	for i, p := range param {
		switch {
		case p && total[i] == 0, !p && total[i] != 0:
			return nil, nil
		case p:
			t, ok := l.term(i)
			if !ok {
				return nil, nil
			}
			params = append(params, i)
			pairs = append(pairs, sentinel(i, l.slots[i].kind), t.String())
		}
	}
	if len(params) == 0 || strings.NewReplacer(pairs...).Replace(q.String()) != parsed.String() {
		return nil, nil
	}
	return q, params
}

// shapeKey is the cache key of l's shape under base.
func shapeKey(base string, l *lexedShape) string {
	return "s" + base + "\x00" + l.key
}

// templateKey is the key of l's template: the shape's key and the text of
// every slot that is not a parameter.
func templateKey(skey string, l *lexedShape, param []bool) string {
	var b strings.Builder
	b.Grow(len(skey) + 64)
	b.WriteByte('t')
	b.WriteString(skey[1:])
	for i, p := range param {
		if !p {
			b.WriteByte(0)
			b.WriteString(l.slots[i].text)
		}
	}
	return b.String()
}

func (c *Shapes) getLocked(key string) *shapeEntry {
	e, _ := c.entries.Get(key)
	return e
}

// putLocked adds e (the newest entry alone over the budget is kept).
func (c *Shapes) putLocked(e *shapeEntry) { c.entries.Add(e.key, e, e.cost) }
