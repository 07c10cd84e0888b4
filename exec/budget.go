package exec

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/wukongd/wukongd/exec/expr"
)

// Memory budgets (DESIGN.md §6, "Limits"). A query's memory is accounted
// as it runs: the tables its operators and explorations make (8 bytes per
// ID, per column and row, as they grow inside a step), the state of hash
// joins, DISTINCT, GROUP BY and ORDER BY, and the strings of the terms it
// makes. Tables follow the plan's evaluation: when an operator returns,
// what its inputs and its own state cost is released and its result
// charged (queryRun.eval), so the account follows what is live, not what
// was ever allocated. Each query is bounded by Config.MaxQueryMemory; the
// sum over the engine's queries by Config.MaxMemory. Past either the
// query's context is cancelled with a *MemoryError as its cause: every loop
// already looks at the context (cancel.go), so the query stops within a
// few thousand rows of work, its tables become garbage, and Run returns the
// error. A forked sub-query has its own account bounded by the query's
// limit (it cannot reach the parent's) and sends a budget error back as
// such.

// ErrMemoryBudget is wrapped by the error of a query stopped because its
// memory passed its budget (or the engine's).
var ErrMemoryBudget = errors.New("memory budget exceeded")

// ErrValueTooLarge is expr.ErrValueTooLarge: a function would make a
// string past Config.MaxValueBytes.
var ErrValueTooLarge = expr.ErrValueTooLarge

// MemoryError is a query's memory passing a budget.
type MemoryError struct {
	Server bool  // the engine's budget (every query's memory), not the query's
	Limit  int64 // bytes
}

func (e *MemoryError) Error() string {
	if e.Server {
		return fmt.Sprintf("%v: the queries running need more than the server's %d MiB (--max-memory); try again later", ErrMemoryBudget, e.Limit>>20)
	}
	return fmt.Sprintf("%v: the query needs more than its %d MiB (--max-query-memory)", ErrMemoryBudget, e.Limit>>20)
}

func (e *MemoryError) Unwrap() error { return ErrMemoryBudget }

// memAccount is one query's (or sub-query's) memory. Safe for concurrent
// use; a nil account accounts nothing.
type memAccount struct {
	eng    *Engine
	limit  int64
	abort  context.CancelCauseFunc
	tables atomic.Int64 // tables and operator state (settled per operator)
	terms  atomic.Int64 // strings of made terms (kept to the end)
	peak   atomic.Int64
	failed atomic.Bool
}

// newMemAccount makes a query's account (limit ≤ 0: no budget of its
// own). With no budget at all, neither the query's nor the engine's,
// there is nothing to account against: it returns nil (nothing is
// charged) unless measure asks for the peak (EXPLAIN ANALYZE).
func (e *Engine) newMemAccount(limit int64, abort context.CancelCauseFunc, measure bool) *memAccount {
	if limit <= 0 && e.cfg.MaxMemory < 0 && !measure {
		return nil
	}
	return &memAccount{eng: e, limit: limit, abort: abort}
}

// bounded reports whether a budget bounds the account: the query's own
// or the engine's.
func (m *memAccount) bounded() bool {
	return m != nil && (m.limit > 0 || m.eng.cfg.MaxMemory > 0)
}

// charge adds n bytes of tables or operator state (n < 0 releases).
func (m *memAccount) charge(n int64) {
	if m == nil || n == 0 {
		return
	}
	m.check(m.tables.Add(n)+m.terms.Load(), m.eng.memUsed.Add(n))
}

// chargeTerm adds the bytes of a term the query made.
func (m *memAccount) chargeTerm(n int64) {
	if m == nil {
		return
	}
	m.check(m.terms.Add(n)+m.tables.Load(), m.eng.memUsed.Add(n))
}

func (m *memAccount) check(used, total int64) {
	m.notePeak(used)
	if err := m.over(used, total); err != nil && m.abort != nil && !m.failed.Swap(true) {
		m.abort(err)
	}
}

func (m *memAccount) notePeak(used int64) {
	for p := m.peak.Load(); used > p && !m.peak.CompareAndSwap(p, used); p = m.peak.Load() {
	}
}

// over returns the budget that used (the query's) or total (the
// engine's) passes, if any.
func (m *memAccount) over(used, total int64) error {
	switch {
	case m.limit > 0 && used > m.limit:
		return &MemoryError{Limit: m.limit}
	case m.eng.cfg.MaxMemory > 0 && total > m.eng.cfg.MaxMemory:
		return &MemoryError{Server: true, Limit: m.eng.cfg.MaxMemory}
	}
	return nil
}

// grow charges n bytes the query's caller takes for its answer (a held
// account, Options.HoldMemory: the query is done, nothing is aborted). A
// charge past a budget is refused: nothing is charged, and the error says
// which budget.
func (m *memAccount) grow(n int64) error {
	if m == nil || n == 0 {
		return nil
	}
	used := m.tables.Add(n) + m.terms.Load()
	total := m.eng.memUsed.Add(n)
	if n < 0 {
		return nil
	}
	if err := m.over(used, total); err != nil {
		m.tables.Add(-n)
		m.eng.memUsed.Add(-n)
		return err
	}
	m.notePeak(used)
	return nil
}

// resultBytes is what a finished query's answer holds: its rows' columns
// and its triples (the terms it made are charged apart).
func resultBytes(r *Result) int64 {
	return tableBytes(r.Rows) + 24*int64(cap(r.Triples))
}

// Grow charges n more bytes (n < 0 gives back) to the account of a
// result run with Options.HoldMemory: the caller's own buffers for the
// answer (the HTTP response buffer). It fails, charging nothing, with a
// *MemoryError when the query's or the engine's budget would be passed.
// Without a held account (or on a nil Result) it charges nothing.
func (r *Result) Grow(n int64) error {
	if r == nil {
		return nil
	}
	return r.mem.grow(n)
}

// Hold returns an empty Result with a held account in the engine's
// budgets, bounded as a query is (Config.MaxQueryMemory, and with every
// query's memory by Config.MaxMemory): the buffers of an answer the
// caller makes itself — the Graph Store Protocol's GET of a whole graph —
// are charged with Grow and given back with Release. With no budget at
// all it charges nothing.
func (e *Engine) Hold() *Result {
	return &Result{mem: e.newMemAccount(e.cfg.MaxQueryMemory, nil, false)}
}

// Release gives back what a result run with Options.HoldMemory still
// holds in the engine's budget. It is safe to call more than once, and on
// a result without a held account.
func (r *Result) Release() {
	if r != nil && r.mem != nil {
		r.mem.close()
		r.mem = nil
	}
}

// settle sets the tables' charge to base + n: an operator returned a
// table of n bytes, and what it used on the way is released.
func (m *memAccount) settle(base, n int64) {
	if m == nil {
		return
	}
	m.charge(base + n - m.tables.Load())
}

func (m *memAccount) tablesNow() int64 {
	if m == nil {
		return 0
	}
	return m.tables.Load()
}

// close releases everything the query still holds from the engine's sum.
func (m *memAccount) close() {
	if m == nil {
		return
	}
	m.eng.memUsed.Add(-m.tables.Swap(0) - m.terms.Swap(0))
}

// tableBytes is what a table's columns cost.
func tableBytes(t *Table) int64 {
	if t == nil {
		return 0
	}
	n := int64(0)
	for _, c := range t.Cols {
		n += int64(cap(c))
	}
	return 8 * n
}

// termBytes is what a made term costs in a TermTable (the strings, the
// slice entry and the map entry).
func termBytes(v, dt, lang string) int64 {
	return int64(len(v)+len(dt)+len(lang)) + 96
}

// limitCause returns the budget or size error that stopped ctx, if any.
func limitCause(ctx context.Context) error {
	c := context.Cause(ctx)
	if errors.Is(c, ErrMemoryBudget) || errors.Is(c, ErrValueTooLarge) {
		return c
	}
	return nil
}

// growth charges an operator's state as it grows inside a loop, at the
// loop's looks at the context (stopCheck.grow).
type growth struct {
	m       *memAccount
	charged int64
}

// to sets the state's charge to n bytes.
func (g *growth) to(n int64) {
	if g == nil || g.m == nil {
		return
	}
	g.m.charge(n - g.charged)
	g.charged = n
}

// done releases the state's charge.
func (g *growth) done() { g.to(0) }

// memLimit is the budget a forked sub-query gets: the query's.
func (r *task) memLimit() int64 {
	if r.mem == nil {
		return 0
	}
	return r.mem.limit
}

// reserve charges n bytes an operator is about to take (settled when the
// operator returns, queryRun.eval) and returns ctx's error: a charge past
// the budget cancels ctx, so the memory is never taken.
func reserve(ctx context.Context, mem *memAccount, n int64) error {
	mem.charge(n)
	return ctxErr(ctx)
}

// gatherBytes is what t.gather of n rows costs: its bound columns.
func gatherBytes(t *Table, n int) int64 {
	cols := 0
	for _, c := range t.Cols {
		if c != nil {
			cols++
		}
	}
	return 8 * int64(cols) * int64(n)
}

// gatherCharged is t.gather(src) with the copy charged before it is made.
func gatherCharged(ctx context.Context, mem *memAccount, t *Table, src []int32) (*Table, error) {
	if err := reserve(ctx, mem, gatherBytes(t, len(src))); err != nil {
		return nil, err
	}
	return t.gather(src), nil
}

// MemoryUsed returns the memory the engine's queries account now (bytes),
// held answers (Options.HoldMemory) included.
func (e *Engine) MemoryUsed() int64 { return e.memUsed.Load() }
