package exec

import (
	"fmt"
	"sync"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// Table is a batch of rows as ID columns: Cols[c][r] is the value of
// variable Vars[c] in row r (0: unbound). Every column has N entries, or is
// nil when the variable is unbound in every row. A Table returned by the
// engine is owned by the caller.
type Table struct {
	Vars []sparql.Var
	Cols [][]ID
	N    int
}

// NewTable returns an empty table over vars.
func NewTable(vars []sparql.Var) *Table {
	return &Table{Vars: vars, Cols: make([][]ID, len(vars))}
}

// unitTable is one row of no bound values (the start of an exploration).
func unitTable(ncols int) *Table {
	return &Table{Vars: nil, Cols: make([][]ID, ncols), N: 1}
}

// At returns the value of column c in row r.
func (t *Table) At(c, r int) ID {
	if t.Cols[c] == nil {
		return 0
	}
	return t.Cols[c][r]
}

// Col returns the column of v, or -1.
func (t *Table) Col(v sparql.Var) int {
	for i, x := range t.Vars {
		if x == v {
			return i
		}
	}
	return -1
}

// appendTable appends o's rows to t (same column count).
func (t *Table) appendTable(o *Table) {
	if len(o.Cols) != len(t.Cols) {
		panic(fmt.Sprintf("BUG: append a table of %d columns to one of %d", len(o.Cols), len(t.Cols)))
	}
	for c := range t.Cols {
		switch {
		case o.Cols[c] == nil && t.Cols[c] == nil:
		case o.Cols[c] == nil:
			t.Cols[c] = append(t.Cols[c], make([]ID, o.N)...)
		case t.Cols[c] == nil:
			t.Cols[c] = append(make([]ID, t.N, t.N+o.N), o.Cols[c]...)
		default:
			t.Cols[c] = append(t.Cols[c], o.Cols[c]...)
		}
	}
	t.N += o.N
}

// gather returns the rows src of t, in that order.
func (t *Table) gather(src []int32) *Table {
	out := &Table{Vars: t.Vars, Cols: make([][]ID, len(t.Cols)), N: len(src)}
	for c, col := range t.Cols {
		if col == nil {
			continue
		}
		nc := make([]ID, len(src))
		for i, r := range src {
			nc[i] = col[r]
		}
		out.Cols[c] = nc
	}
	return out
}

// LocalIDBase is the first query-local ID. IDs from LocalIDBase up name
// terms computed by a query (BIND, aggregates, …) that are not in the
// dictionary; a query's TermTable maps them. Store IDs are below 2^40.
const LocalIDBase ID = 1 << 62

// TermTable holds a query's local terms (IDs from LocalIDBase). It is
// safe for concurrent use.
type TermTable struct {
	mem   *memAccount // the query's, while it runs (nil: none)
	mu    sync.Mutex
	terms []rdf.Term
	ids   map[rdf.Term]ID
}

// Intern returns the local ID of t, giving it one if needed.
func (tt *TermTable) Intern(t rdf.Term) ID {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if id, ok := tt.ids[t]; ok {
		return id
	}
	if tt.ids == nil {
		tt.ids = map[rdf.Term]ID{}
	}
	id := LocalIDBase + ID(len(tt.terms))
	tt.terms = append(tt.terms, t)
	tt.ids[t] = id
	tt.mem.chargeTerm(termBytes(t.Value, t.Datatype, t.Lang))
	return id
}

// account sets the memory account the table's new terms are charged to.
func (tt *TermTable) account(m *memAccount) {
	tt.mu.Lock()
	tt.mem = m
	tt.mu.Unlock()
}

// Term returns the term of a local ID.
func (tt *TermTable) Term(id ID) (rdf.Term, bool) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if id < LocalIDBase || id-LocalIDBase >= ID(len(tt.terms)) {
		return rdf.Term{}, false
	}
	return tt.terms[id-LocalIDBase], true
}
