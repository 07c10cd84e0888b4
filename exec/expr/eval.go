package expr

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// Binding is one solution (row): the term bound to each variable.
type Binding interface {
	// Lookup returns the term bound to v; ok is false when v is unbound.
	Lookup(v sparql.Var) (t rdf.Term, ok bool)
}

// ValueBinding is a Binding that can also hand out decoded values, for an
// engine that caches Decode results by term ID. Programs use LookupValue
// when the row implements it.
type ValueBinding interface {
	Binding
	// LookupValue returns the decoded value of the term bound to v; ok is
	// false when v is unbound.
	LookupValue(v sparql.Var) (Value, bool)
}

// RowKeyer is implemented by a Binding that knows which solution it is.
// BNODE(str) returns the same blank node for the same string within one
// solution: with RowKey, "one solution" spans every expression evaluated on
// rows with the same key; without it, one Eval call.
type RowKeyer interface {
	RowKey() uint64
}

// MapBinding is a Binding backed by a map (tests, small callers).
type MapBinding map[sparql.Var]rdf.Term

// Lookup implements Binding.
func (m MapBinding) Lookup(v sparql.Var) (rdf.Term, bool) {
	t, ok := m[v]
	return t, ok && !t.IsZero()
}

// ExistsFunc evaluates EXISTS { pattern } for one row: it reports whether
// the pattern, with the row's bindings substituted (§18.6), has a solution.
type ExistsFunc func(pattern sparql.Pattern, row Binding) (bool, error)

// Env is what the expressions of one query share: the base IRI, the fixed
// NOW() instant, the EXISTS evaluator and the blank node generator. Use one
// Env per query, by pointer, and do not copy it after first use; it is safe
// for concurrent use by the query's programs.
type Env struct {
	// Base is the query's base IRI, against which IRI() resolves relative
	// IRIs ("" when the query has none).
	Base string
	// Now is the value of NOW() for the whole query. When zero, the first
	// Compile with this Env sets it to the current time.
	Now time.Time
	// Exists evaluates EXISTS and NOT EXISTS; nil makes them errors.
	Exists ExistsFunc
	// Rand returns RAND()'s values in [0, 1); nil uses math/rand/v2.
	Rand func() float64
	// BlankPrefix starts the labels of blank nodes made by BNODE; it must
	// not be the prefix of any label in the data. When empty, the first
	// Compile sets a random one.
	BlankPrefix string
	// MaxValue bounds the bytes of a string a function makes (0:
	// DefaultMaxValue); past it the function fails with ErrValueTooLarge.
	MaxValue int
	// Abort, when set, is told of an error that must end the query (a
	// value past MaxValue): the engine cancels the query with it.
	Abort func(error)
	// Ctx, when set, is the query's context: functions whose work grows
	// with their input (large strings, a regex compiled per row) stop once
	// it is done.
	Ctx context.Context

	once    sync.Once
	now     Value
	counter atomic.Uint64
}

func (env *Env) init() {
	env.once.Do(func() {
		if env.Now.IsZero() {
			env.Now = time.Now()
		}
		env.now = Value{kind: KindDateTime, dt: fromTime(env.Now)}
		if env.BlankPrefix == "" {
			var b [6]byte
			_, _ = crand.Read(b[:])
			env.BlankPrefix = "e" + hex.EncodeToString(b[:])
		}
	})
}

// Program is a compiled expression. It is immutable and safe for concurrent
// use.
type Program struct {
	root      node
	env       *Env
	rowScoped bool // the program uses BNODE(str): give each Eval a row key
}

// node evaluates one compiled subexpression on a row.
type node func(row Binding) (Value, error)

// Compile compiles e for evaluation with env (nil means a default Env). It
// fails only for expressions that cannot be evaluated at all: an aggregate
// outside a Group, an unknown built-in or a built-in with the wrong number
// of arguments. A call of an unknown function IRI compiles and raises an
// error when evaluated, as SPARQL says.
func Compile(e sparql.Expr, env *Env) (*Program, error) {
	if env == nil {
		env = &Env{}
	}
	env.init()
	c := &compiler{env: env}
	root, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	return &Program{root: root, env: env, rowScoped: c.rowScoped}, nil
}

// rowKeyed wraps a row that does not know its identity for the duration of
// one Eval of a program that calls BNODE(str).
type rowKeyed struct {
	Binding
	key uint64
}

func (r *rowKeyed) RowKey() uint64 { return r.key }

// LookupValue passes through to a wrapped ValueBinding.
func (r *rowKeyed) LookupValue(v sparql.Var) (Value, bool) {
	if vb, ok := r.Binding.(ValueBinding); ok {
		return vb.LookupValue(v)
	}
	t, ok := r.Binding.Lookup(v)
	if !ok {
		return Value{}, false
	}
	return Decode(t), true
}

func (p *Program) prepare(row Binding) Binding {
	if p.rowScoped {
		if _, ok := row.(RowKeyer); !ok {
			return &rowKeyed{Binding: row, key: p.env.counter.Add(1)}
		}
	}
	return row
}

// EvalValue evaluates the program on row. The error, if any, wraps ErrEval.
func (p *Program) EvalValue(row Binding) (Value, error) {
	return p.root(p.prepare(row))
}

// Eval evaluates the program on row and returns the result as a term (BIND,
// projection expressions, ORDER BY keys). On error the caller leaves the
// variable unbound (BIND) or sorts the row as unbound (ORDER BY).
func (p *Program) Eval(row Binding) (rdf.Term, error) {
	v, err := p.root(p.prepare(row))
	if err != nil {
		return rdf.Term{}, err
	}
	return v.Term(), nil
}

// EvalBool evaluates the program as a FILTER condition: the effective
// boolean value of the result, with an error counting as false.
func (p *Program) EvalBool(row Binding) bool {
	v, err := p.root(p.prepare(row))
	if err != nil {
		return false
	}
	b, err := EBV(v)
	return err == nil && b
}

type compiler struct {
	env       *Env
	rowScoped bool
}

func constNode(v Value) node {
	return func(Binding) (Value, error) { return v, nil }
}

func errNode(err error) node {
	return func(Binding) (Value, error) { return Value{}, err }
}

func varNode(name sparql.Var) node {
	return func(row Binding) (Value, error) {
		if vb, ok := row.(ValueBinding); ok {
			v, ok := vb.LookupValue(name)
			if !ok {
				return Value{}, errUnbound
			}
			return v, nil
		}
		t, ok := row.Lookup(name)
		if !ok {
			return Value{}, errUnbound
		}
		return Decode(t), nil
	}
}

func (c *compiler) compile(e sparql.Expr) (node, error) {
	switch e := e.(type) {
	case *sparql.VarExpr:
		return varNode(e.Var), nil
	case *sparql.TermExpr:
		if e.Term.IsZero() {
			return nil, fmt.Errorf("constant at %d:%d: no term", e.Line, e.Col)
		}
		return constNode(Decode(e.Term)), nil
	case *sparql.UnaryExpr:
		x, err := c.compile(e.X)
		if err != nil {
			return nil, err
		}
		return unaryNode(e.Op, x, e.Pos)
	case *sparql.BinaryExpr:
		l, err := c.compile(e.L)
		if err != nil {
			return nil, err
		}
		r, err := c.compile(e.R)
		if err != nil {
			return nil, err
		}
		return binaryNode(e.Op, l, r, e.Pos)
	case *sparql.InExpr:
		return c.compileIn(e)
	case *sparql.CallExpr:
		return c.compileCall(e)
	case *sparql.FuncExpr:
		return c.compileFunc(e)
	case *sparql.ExistsExpr:
		return c.compileExists(e), nil
	case *sparql.Aggregate:
		return nil, fmt.Errorf("aggregate %s at %d:%d outside of a GROUP", e.Name, e.Line, e.Col)
	case nil:
		return nil, fmt.Errorf("BUG: nil expression")
	}
	return nil, fmt.Errorf("unknown expression type %T", e)
}

func unaryNode(op string, x node, pos sparql.Pos) (node, error) {
	switch op {
	case "!":
		return func(row Binding) (Value, error) {
			v, err := x(row)
			if err != nil {
				return Value{}, err
			}
			b, err := EBV(v)
			if err != nil {
				return Value{}, err
			}
			return Bool(!b), nil
		}, nil
	case "-":
		return func(row Binding) (Value, error) {
			v, err := x(row)
			if err != nil {
				return Value{}, err
			}
			return negate(v)
		}, nil
	case "+":
		return func(row Binding) (Value, error) {
			v, err := x(row)
			if err != nil {
				return Value{}, err
			}
			if !v.kind.IsNumeric() {
				return Value{}, errNotNumeric
			}
			return computed(v), nil
		}, nil
	}
	return nil, fmt.Errorf("unknown unary operator %q at %d:%d", op, pos.Line, pos.Col)
}

// ebvOf evaluates n and takes its effective boolean value.
func ebvOf(n node, row Binding) (bool, error) {
	v, err := n(row)
	if err != nil {
		return false, err
	}
	return EBV(v)
}

func binaryNode(op string, l, r node, pos sparql.Pos) (node, error) {
	switch op {
	case "||":
		return func(row Binding) (Value, error) {
			lb, lerr := ebvOf(l, row)
			if lerr == nil && lb {
				return Bool(true), nil
			}
			rb, rerr := ebvOf(r, row)
			switch {
			case rerr == nil && rb:
				return Bool(true), nil
			case lerr != nil:
				return Value{}, lerr
			case rerr != nil:
				return Value{}, rerr
			}
			return Bool(false), nil
		}, nil
	case "&&":
		return func(row Binding) (Value, error) {
			lb, lerr := ebvOf(l, row)
			if lerr == nil && !lb {
				return Bool(false), nil
			}
			rb, rerr := ebvOf(r, row)
			switch {
			case rerr == nil && !rb:
				return Bool(false), nil
			case lerr != nil:
				return Value{}, lerr
			case rerr != nil:
				return Value{}, rerr
			}
			return Bool(true), nil
		}, nil
	case "=", "!=":
		ne := op == "!="
		return func(row Binding) (Value, error) {
			a, err := l(row)
			if err != nil {
				return Value{}, err
			}
			b, err := r(row)
			if err != nil {
				return Value{}, err
			}
			eq, err := Equal(a, b)
			if err != nil {
				return Value{}, err
			}
			return Bool(eq != ne), nil
		}, nil
	case "<", ">", "<=", ">=":
		var test func(int) bool
		switch op {
		case "<":
			test = func(c int) bool { return c < 0 }
		case ">":
			test = func(c int) bool { return c > 0 }
		case "<=":
			test = func(c int) bool { return c <= 0 }
		default:
			test = func(c int) bool { return c >= 0 }
		}
		return func(row Binding) (Value, error) {
			a, err := l(row)
			if err != nil {
				return Value{}, err
			}
			b, err := r(row)
			if err != nil {
				return Value{}, err
			}
			c, ok, err := orderOp(a, b)
			if err != nil {
				return Value{}, err
			}
			return Bool(ok && test(c)), nil
		}, nil
	case "+", "-", "*", "/":
		o := op[0]
		return func(row Binding) (Value, error) {
			a, err := l(row)
			if err != nil {
				return Value{}, err
			}
			b, err := r(row)
			if err != nil {
				return Value{}, err
			}
			return arith(o, a, b)
		}, nil
	}
	return nil, fmt.Errorf("unknown operator %q at %d:%d", op, pos.Line, pos.Col)
}

// compileIn: x IN (e1, …) is (x = e1) || (x = e2) || …, so an error in one
// comparison matters only if no other comparison is true.
func (c *compiler) compileIn(e *sparql.InExpr) (node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	list := make([]node, len(e.List))
	for i, le := range e.List {
		if list[i], err = c.compile(le); err != nil {
			return nil, err
		}
	}
	not := e.Not
	return func(row Binding) (Value, error) {
		v, err := x(row)
		if err != nil {
			return Value{}, err
		}
		var firstErr error
		for _, n := range list {
			w, err := n(row)
			if err == nil {
				var eq bool
				eq, err = Equal(v, w)
				if err == nil && eq {
					return Bool(!not), nil
				}
			}
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}
		if firstErr != nil {
			return Value{}, firstErr
		}
		return Bool(not), nil
	}, nil
}

func (c *compiler) compileExists(e *sparql.ExistsExpr) node {
	exists, pattern, not := c.env.Exists, e.Pattern, e.Not
	if exists == nil {
		return errNode(errNoExists)
	}
	return func(row Binding) (Value, error) {
		ok, err := exists(pattern, row)
		if err != nil {
			return Value{}, fmt.Errorf("%w: EXISTS: %w", ErrEval, err)
		}
		return Bool(ok != not), nil
	}
}

func (env *Env) rand() float64 {
	if env.Rand != nil {
		return env.Rand()
	}
	return rand.Float64()
}
