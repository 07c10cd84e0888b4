package exec

import (
	"context"
	"fmt"
	"slices"
	"unsafe"

	"github.com/wukongd/wukongd/exec/expr"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/sparql"
)

// Operators on tables (SPARQL 1.1 §18.5). Columns are matched by
// variable; an unbound value (0) is compatible with any value. Operators
// never modify their input tables (a slot's rows may be read again).

// sharedCols returns the column pairs of the variables l and r share.
func sharedCols(l, r *Table) (lc, rc []int) {
	for i, v := range l.Vars {
		if j := r.Col(v); j >= 0 {
			lc = append(lc, i)
			rc = append(rc, j)
		}
	}
	return lc, rc
}

// compatible reports whether row a of l and row b of r agree on the
// shared columns.
func compatible(l, r *Table, lc, rc []int, a, b int) bool {
	for k := range lc {
		x, y := l.At(lc[k], a), r.At(rc[k], b)
		if x != 0 && y != 0 && x != y {
			return false
		}
	}
	return true
}

// rowKey appends the IDs of row r in cols; ok is false when one is
// unbound.
func rowKey(dst []byte, t *Table, cols []int, r int) ([]byte, bool) {
	for _, c := range cols {
		v := t.At(c, r)
		if v == 0 {
			return dst, false
		}
		dst = appendID(dst, v)
	}
	return dst, true
}

// hashIndex indexes the rows of t by their values in cols; rows with an
// unbound value there are listed apart (they match any value).
type hashIndex struct {
	rows map[string][]int32
	wild []int32
}

// indexEntryBytes is what a row costs in a hashIndex on ncols columns:
// its key string, its map entry and slice, its row number (an estimate
// for the memory account, budget.go).
func indexEntryBytes(ncols int) int64 { return int64(8*ncols) + 64 }

func buildIndex(sc *stopCheck, mem *memAccount, t *Table, cols []int) (*hashIndex, error) {
	// The index is charged before it is built (its size is known); the
	// charge is settled when the operator returns (queryRun.eval).
	mem.charge(int64(t.N) * indexEntryBytes(len(cols)))
	if err := ctxErr(sc.ctx); err != nil {
		return nil, err
	}
	h := &hashIndex{rows: make(map[string][]int32, min(t.N, maxSizeHint))}
	var key []byte
	for r := 0; r < t.N; r++ {
		if err := sc.add(1); err != nil {
			return nil, err
		}
		var ok bool
		key, ok = rowKey(key[:0], t, cols, r)
		if !ok {
			h.wild = append(h.wild, int32(r))
			continue
		}
		h.rows[string(key)] = append(h.rows[string(key)], int32(r))
	}
	return h, nil
}

// matches calls fn for every row of r (indexed by h on rc) compatible
// with row a of l.
func (h *hashIndex) matches(l, r *Table, lc, rc []int, a int, key []byte, fn func(b int32)) []byte {
	key, ok := rowKey(key[:0], l, lc, a)
	if ok {
		for _, b := range h.rows[string(key)] {
			fn(b)
		}
		for _, b := range h.wild {
			if compatible(l, r, lc, rc, a, int(b)) {
				fn(b)
			}
		}
		return key
	}
	for b := 0; b < r.N; b++ {
		if compatible(l, r, lc, rc, a, b) {
			fn(int32(b))
		}
	}
	return key
}

// merge builds the rows (la[i] of l) ∪ (ra[i] of r) (-1: none), with the
// variables of both, looking at ctx every copyChunk rows of a column.
func merge(ctx context.Context, l, r *Table, la, ra []int32) (*Table, error) {
	out := &Table{N: len(la)}
	var err error
	pick := func(t *Table, src []int32, c int) []ID {
		if t.Cols[c] == nil || err != nil {
			return nil
		}
		col := make([]ID, len(src))
		for i, s := range src {
			if i%copyChunk == copyChunk-1 {
				if err = ctxErr(ctx); err != nil {
					return nil
				}
			}
			if s >= 0 {
				col[i] = t.Cols[c][s]
			}
		}
		return col
	}
	for c, v := range l.Vars {
		col := pick(l, la, c)
		if j := r.Col(v); j >= 0 {
			rcol := pick(r, ra, j)
			switch {
			case col == nil:
				col = rcol
			case rcol != nil:
				for i := range col {
					if col[i] == 0 {
						col[i] = rcol[i]
					}
				}
			}
		}
		out.Vars = append(out.Vars, v)
		out.Cols = append(out.Cols, col)
	}
	for c, v := range r.Vars {
		if l.Col(v) >= 0 {
			continue
		}
		out.Vars = append(out.Vars, v)
		out.Cols = append(out.Cols, pick(r, ra, c))
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// maxSizeHint bounds the size hint of an operator's map: a map made for
// every row of a large input would take its memory before the account
// (budget.go) sees any of it.
const maxSizeHint = 1 << 16

// hashJoin joins l and r on their shared variables (ctx: the query's,
// looked at every few thousand rows). The index, the pairs found and the
// output are charged to mem as they grow, before the output is made
// (nil: not accounted).
func hashJoin(ctx context.Context, mem *memAccount, l, r *Table) (*Table, error) {
	lc, rc := sharedCols(l, r)
	var la, ra []int32
	if l.N > 0 && r.N > 0 {
		g := growth{m: mem}
		sc := stopCheck{ctx: ctx, grow: func() { g.to(4 * int64(cap(la)+cap(ra))) }}
		h, err := buildIndex(&sc, mem, r, rc)
		if err != nil {
			return nil, err
		}
		var key []byte
		var gerr error // a growth of the pairs stopped by ctx
		for a := 0; a < l.N; a++ {
			made := len(la)
			key = h.matches(l, r, lc, rc, a, key, func(b int32) {
				if gerr != nil {
					return
				}
				if la, gerr = growSlice(ctx, la, 1); gerr == nil {
					ra, gerr = growSlice(ctx, ra, 1)
				}
				if gerr == nil {
					la = append(la, int32(a))
					ra = append(ra, b)
				}
			})
			if gerr != nil {
				return nil, gerr
			}
			if err := sc.add(1 + len(la) - made); err != nil {
				return nil, err
			}
		}
	}
	// The output's columns: one per variable of either side.
	ncols := len(l.Vars)
	for _, v := range r.Vars {
		if l.Col(v) < 0 {
			ncols++
		}
	}
	mem.charge(8 * int64(ncols) * int64(len(la)))
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	return merge(ctx, l, r, la, ra)
}

// minus removes the rows of l compatible with a row of r with which they
// share a bound variable.
func minus(ctx context.Context, mem *memAccount, l, r *Table) (*Table, error) {
	lc, rc := sharedCols(l, r)
	if len(lc) == 0 || r.N == 0 {
		return l, nil
	}
	sc := stopCheck{ctx: ctx}
	h, err := buildIndex(&sc, mem, r, rc)
	if err != nil {
		return nil, err
	}
	var keep []int32
	var key []byte
	for a := 0; a < l.N; a++ {
		if err := sc.add(1); err != nil {
			return nil, err
		}
		removed := false
		key = h.matches(l, r, lc, rc, a, key, func(b int32) {
			if removed {
				return
			}
			for k := range lc {
				if l.At(lc[k], a) != 0 && r.At(rc[k], int(b)) != 0 {
					removed = true // compatible and sharing a bound variable
					return
				}
			}
		})
		if !removed {
			keep = append(keep, int32(a))
		}
	}
	if len(keep) == l.N {
		return l, nil
	}
	return gatherCharged(ctx, mem, l, keep)
}

// evalFromRows evaluates right seeded (in slot) with l's rows numbered in
// rowVar, and returns its rows with the column of those numbers. what
// names the operator for the error when right loses the numbers.
func (q *queryRun) evalFromRows(l *Table, slot int, rowVar sparql.Var, right planner.Node, what string) (*Table, int, error) {
	if err := reserve(q.ctx, q.mem, 8*int64(l.N)); err != nil { // the numbers' column
		return nil, 0, err
	}
	q.seeds[slot] = withRowNumbers(l, rowVar)
	r, err := q.eval(right)
	if err != nil {
		return nil, 0, err
	}
	delete(q.seeds, slot)
	rc := r.Col(rowVar)
	if rc < 0 {
		return nil, 0, fmt.Errorf("BUG: the right side of %s lost the left rows' numbers (?%s)", what, rowVar)
	}
	return r, rc, nil
}

// unmatchedRows lists, in order, the left rows (of n) whose number (1-based,
// in r's column rc) no row of r carries.
func unmatchedRows(r *Table, rc, n int) []int32 {
	seen := make([]bool, n)
	for i := 0; i < r.N; i++ {
		if x := r.At(rc, i); x > 0 && int(x) <= n {
			seen[x-1] = true
		}
	}
	var out []int32
	for i, s := range seen {
		if !s {
			out = append(out, int32(i))
		}
	}
	return out
}

// antiJoin runs MINUS from the numbered left rows: the right side, seeded
// with them, finds the rows to remove (each at its first solution).
func (q *queryRun) antiJoin(l *Table, n *planner.Minus) (*Table, error) {
	found, err := q.matchedRows(l, n.Slot, n.RowVar, n.Right)
	if err != nil {
		return nil, err
	}
	var keep []int32
	for i, f := range found {
		if !f {
			keep = append(keep, int32(i))
		}
	}
	if len(keep) == l.N {
		return l, nil
	}
	return gatherCharged(q.ctx, q.mem, l, keep)
}

// unionTables is the bag union of a and b, columns matched by variable;
// the copy is charged to mem before it is made.
func unionTables(ctx context.Context, mem *memAccount, a, b *Table) (*Table, error) {
	cols := 0
	for c, v := range a.Vars {
		if a.Cols[c] != nil {
			cols++
		} else if j := b.Col(v); j >= 0 && b.Cols[j] != nil {
			cols++
		}
	}
	for c, v := range b.Vars {
		if b.Cols[c] != nil && a.Col(v) < 0 {
			cols++
		}
	}
	if err := reserve(ctx, mem, 8*int64(cols)*int64(a.N+b.N)); err != nil {
		return nil, err
	}
	out := &Table{Vars: append([]sparql.Var(nil), a.Vars...), Cols: append([][]ID(nil), a.Cols...), N: a.N}
	for c := range out.Cols {
		if out.Cols[c] != nil {
			out.Cols[c] = append([]ID(nil), out.Cols[c][:a.N]...)
		}
	}
	appendAligned(out, b)
	return out, nil
}

// appendAligned appends the rows of o to t (whose columns it owns),
// matching columns by variable; a variable t lacks becomes a new column.
func appendAligned(t, o *Table) {
	for _, v := range o.Vars {
		if t.Col(v) < 0 {
			t.Vars = append(t.Vars, v)
			t.Cols = append(t.Cols, nil)
		}
	}
	for c, v := range t.Vars {
		oc := o.Col(v)
		var src []ID
		if oc >= 0 {
			src = o.Cols[oc]
		}
		switch {
		case src == nil && t.Cols[c] == nil:
		case src == nil:
			t.Cols[c] = append(t.Cols[c], make([]ID, o.N)...)
		case t.Cols[c] == nil:
			t.Cols[c] = append(make([]ID, t.N, t.N+o.N), src[:o.N]...)
		default:
			t.Cols[c] = append(t.Cols[c], src[:o.N]...)
		}
	}
	t.N += o.N
}

// dropVar returns t without the column of v.
func dropVar(t *Table, v sparql.Var) *Table {
	c := t.Col(v)
	if c < 0 {
		return t
	}
	out := &Table{N: t.N}
	out.Vars = append(append([]sparql.Var(nil), t.Vars[:c]...), t.Vars[c+1:]...)
	out.Cols = append(append([][]ID(nil), t.Cols[:c]...), t.Cols[c+1:]...)
	return out
}

// leftJoin runs OPTIONAL: the right side is evaluated from the numbered
// left rows; a right row that passes the filter is kept, a left row no
// right row extends is kept alone.
func (q *queryRun) leftJoin(n *planner.LeftJoin) (*Table, error) {
	l, err := q.eval(n.Left)
	if err != nil {
		return nil, err
	}
	if l.N == 0 {
		return l, nil
	}
	r, rc, err := q.evalFromRows(l, n.Slot, n.RowVar, n.Right, "OPTIONAL")
	if err != nil {
		return nil, err
	}
	if n.Expr != nil && r.N > 0 {
		if r, err = q.filter(r, []sparql.Expr{n.Expr}); err != nil {
			return nil, err
		}
	}
	// The left rows alone, their copy and the union are charged before
	// they are made (settled when the operator returns).
	if err := reserve(q.ctx, q.mem, int64(l.N)+4*int64(l.N-r.N)); err != nil {
		return nil, err
	}
	alone := unmatchedRows(r, rc, l.N)
	out := dropVar(r, n.RowVar)
	if len(alone) == 0 {
		return out, nil
	}
	lone, err := gatherCharged(q.ctx, q.mem, l, alone)
	if err != nil {
		return nil, err
	}
	return unionTables(q.ctx, q.mem, out, lone)
}

// filter keeps the rows on which every expression is true.
func (q *queryRun) filter(t *Table, es []sparql.Expr) (*Table, error) {
	if len(es) == 0 || t.N == 0 {
		return t, nil
	}
	progs := make([]*expr.Program, len(es))
	for i, e := range es {
		p, err := q.program(e)
		if err != nil {
			return nil, err
		}
		progs[i] = p
	}
	b := q.binding(t)
	if err := q.prepareExists(t, b, es...); err != nil {
		return nil, err
	}
	// The rows kept (4 B each) are charged as the list grows, their copy
	// before it is made.
	g := growth{m: q.mem}
	defer g.done()
	keep, err := q.passingRows(b, t.N, progs, stopCheck{ctx: q.ctx}, &g)
	if err != nil {
		return nil, err
	}
	if len(keep) == t.N {
		return t, nil
	}
	return gatherCharged(q.ctx, q.mem, t, keep)
}

// passingRows lists the rows (of n, bound through b) on which every
// program is true; sc stops it when its context is done, and g (nil: not
// accounted) is charged the list as it grows.
func (q *queryRun) passingRows(b *rowBinding, n int, progs []*expr.Program, sc stopCheck, g *growth) ([]int32, error) {
	var keep []int32
	sc.grow = func() { g.to(4 * int64(cap(keep))) }
	for r := 0; r < n; r++ {
		if err := sc.add(1); err != nil {
			return nil, err
		}
		b.r, b.key = r, q.rowKeys.Add(1)
		ok := true
		for _, p := range progs {
			if !p.EvalBool(b) {
				ok = false
				break
			}
		}
		if ok {
			keep = append(keep, int32(r))
		}
	}
	return keep, nil
}

// valueBytes is what an expr.Value costs held per row (ORDER BY keys);
// a string's bytes are the term's, already held by the store or the
// query's TermTable.
const valueBytes = int64(unsafe.Sizeof(expr.Value{}))

// tableRowBytes is what a row of t costs in a copy of t.
func tableRowBytes(t *Table) int64 { return 8 * int64(len(t.Cols)) }

// extend adds the columns of binds (an error leaves the value unbound).
func (q *queryRun) extend(t *Table, binds []planner.Bind) (*Table, error) {
	// The new columns (and the rows' keys) are charged before they are
	// made (settled when the operator returns).
	q.mem.charge(8 * int64(t.N) * int64(len(binds)+1))
	if err := q.ctx.Err(); err != nil {
		return nil, err
	}
	out := &Table{Vars: append([]sparql.Var(nil), t.Vars...), Cols: append([][]ID(nil), t.Cols...), N: t.N}
	progs := make([]*expr.Program, len(binds))
	cols := make([]int, len(binds))
	for i, bd := range binds {
		p, err := q.program(bd.Expr)
		if err != nil {
			return nil, err
		}
		progs[i] = p
		c := out.Col(bd.Var)
		if c < 0 {
			out.Vars = append(out.Vars, bd.Var)
			out.Cols = append(out.Cols, nil)
			c = len(out.Vars) - 1
		}
		out.Cols[c] = make([]ID, t.N)
		cols[i] = c
	}
	b := q.binding(out)
	keys := make([]uint64, t.N)
	for r := range keys {
		keys[r] = q.rowKeys.Add(1)
	}
	for i, p := range progs {
		// An EXISTS sees the columns bound before it (the later ones are
		// still unbound).
		if err := q.prepareExists(out, b, binds[i].Expr); err != nil {
			return nil, err
		}
		col := out.Cols[cols[i]]
		sc := stopCheck{ctx: q.ctx}
		for r := 0; r < t.N; r++ {
			if err := sc.add(1); err != nil {
				return nil, err
			}
			b.r, b.key = r, keys[r]
			if v, err := p.Eval(b); err == nil {
				col[r] = q.intern(v)
			}
		}
	}
	return out, nil
}

// group groups the rows by the keys' values and computes the aggregates.
func (q *queryRun) group(t *Table, n *planner.Group) (*Table, error) {
	keyProgs := make([]*expr.Program, len(n.Keys))
	keyCols := make([]int, len(n.Keys))
	var outVars []sparql.Var
	for i, k := range n.Keys {
		keyCols[i] = -2
		if v, ok := k.(*sparql.VarExpr); ok {
			keyCols[i] = t.Col(v.Var)
			outVars = append(outVars, v.Var)
			continue
		}
		p, err := q.program(k)
		if err != nil {
			return nil, err
		}
		keyProgs[i] = p
	}
	aggs := make([]*expr.AggregateProgram, len(n.Aggs))
	var argExprs []sparql.Expr
	for i, a := range n.Aggs {
		p, err := q.aggregate(a.Agg)
		if err != nil {
			return nil, err
		}
		aggs[i] = p
		if a.Agg.Arg != nil {
			argExprs = append(argExprs, a.Agg.Arg)
		}
		outVars = append(outVars, a.Var)
	}
	b := q.binding(t)
	if err := q.prepareExists(t, b, append(append([]sparql.Expr(nil), n.Keys...), argExprs...)...); err != nil {
		return nil, err
	}
	type group struct {
		keys []ID
		accs []expr.Accumulator
	}
	var groups []*group
	index := map[string]*group{}
	newGroup := func(keys []ID) *group {
		g := &group{keys: keys, accs: make([]expr.Accumulator, len(aggs))}
		for i, a := range aggs {
			g.accs[i] = a.New()
		}
		groups = append(groups, g)
		return g
	}
	if len(n.Keys) == 0 {
		newGroup(nil) // one group, also over no rows
	}
	var key []byte
	gr := growth{m: q.mem}
	defer gr.done()
	// A group: its key, its index entry and accumulators (GROUP_CONCAT's
	// strings are bounded apart, by the value size).
	groupBytes := int64(16*len(n.Keys) + 48*len(aggs) + 96)
	// What the accumulators hold beyond that — the sets of DISTINCT
	// aggregates, GROUP_CONCAT's strings over every group — grows with
	// the rows, not the groups: charged as it grows.
	held := func() int64 {
		var h int64
		for _, a := range aggs {
			h += a.Held()
		}
		return h
	}
	held0 := held()
	sc := stopCheck{ctx: q.ctx, grow: func() { gr.to(int64(len(groups))*groupBytes + held() - held0) }}
	for r := 0; r < t.N; r++ {
		if err := sc.add(1); err != nil {
			return nil, err
		}
		b.r, b.key = r, q.rowKeys.Add(1)
		var g *group
		if len(n.Keys) == 0 {
			g = groups[0]
		} else {
			ids := make([]ID, len(n.Keys))
			key = key[:0]
			for i := range n.Keys {
				switch {
				case keyProgs[i] != nil:
					if v, err := keyProgs[i].Eval(b); err == nil {
						ids[i] = q.intern(v)
					}
				case keyCols[i] >= 0:
					ids[i] = t.At(keyCols[i], r)
				}
				key = appendID(key, ids[i])
			}
			if g = index[string(key)]; g == nil {
				g = newGroup(ids)
				index[string(key)] = g
			}
		}
		for _, acc := range g.accs {
			acc.Add(b)
		}
	}
	out := &Table{Vars: outVars, Cols: make([][]ID, len(outVars)), N: len(groups)}
	for c := range out.Cols {
		out.Cols[c] = make([]ID, len(groups))
	}
	for gi, g := range groups {
		// Each group's results are computed and interned here: millions
		// of groups are as long a loop as the rows that made them.
		if err := sc.add(1); err != nil {
			return nil, err
		}
		c := 0
		for i := range n.Keys {
			if keyProgs[i] == nil {
				out.Cols[c][gi] = g.keys[i]
				c++
			}
		}
		for _, acc := range g.accs {
			if v, ok := acc.Result(); ok {
				out.Cols[c][gi] = q.intern(v)
			}
			c++
		}
	}
	return out, nil
}

// values makes the inline table's rows.
func (q *queryRun) values(n *planner.Values) *Table {
	t := &Table{Vars: append([]sparql.Var(nil), n.Vars...), Cols: make([][]ID, len(n.Vars)), N: len(n.Rows)}
	for c := range t.Cols {
		t.Cols[c] = make([]ID, len(n.Rows))
		for r, row := range n.Rows {
			if c < len(row) {
				t.Cols[c][r] = q.intern(row[c])
			}
		}
	}
	return t
}

// orderBy sorts the rows stably by the keys (SPARQL order, expr.Compare);
// a key expression that errs sorts as unbound.
func (q *queryRun) orderBy(t *Table, keys []planner.OrderKey) (*Table, error) {
	// The keys' values, the permutation and the sorted copy are charged
	// before they are made (settled when the operator returns).
	q.mem.charge(int64(t.N) * (int64(len(keys))*valueBytes + 4 + tableRowBytes(t)))
	if err := q.ctx.Err(); err != nil {
		return nil, err
	}
	sc := stopCheck{ctx: q.ctx}
	vals, err := q.orderKeys(t, keys, &sc)
	if err != nil {
		return nil, err
	}
	src := make([]int32, t.N)
	for i := range src {
		src[i] = int32(i)
	}
	if err := sortStopping(src, &sc, func(a, b int32) int {
		for k := range keys {
			c := expr.CompareValues(vals[k][a], vals[k][b])
			if keys[k].Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}); err != nil {
		return nil, err
	}
	return t.gather(src), nil
}

// sortAbort is the panic that ends a sort whose context is done.
type sortAbort struct{ err error }

// sortStopping sorts src stably by cmp, looking at sc's context every few
// thousand comparisons; once it is done the sort is abandoned at once (a
// sort of millions of rows would otherwise go on for its n log n
// comparisons) and the context's error returned.
func sortStopping(src []int32, sc *stopCheck, cmp func(a, b int32) int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			sa, ok := r.(sortAbort)
			if !ok {
				panic(r)
			}
			err = sa.err
		}
	}()
	slices.SortStableFunc(src, func(a, b int32) int {
		if err := sc.add(1); err != nil {
			panic(sortAbort{err})
		}
		return cmp(a, b)
	})
	return nil
}

// orderKeys evaluates the ORDER BY keys on every row of t: vals[k][r] is
// key k of row r (unbound when its expression errs).
func (q *queryRun) orderKeys(t *Table, keys []planner.OrderKey, sc *stopCheck) ([][]expr.Value, error) {
	vals := make([][]expr.Value, len(keys))
	b := q.binding(t)
	var es []sparql.Expr
	for _, k := range keys {
		if k.Expr != nil {
			es = append(es, k.Expr)
		}
	}
	if err := q.prepareExists(t, b, es...); err != nil {
		return nil, err
	}
	for i, k := range keys {
		vals[i] = make([]expr.Value, t.N)
		if k.Expr == nil {
			if c := t.Col(k.Var); c >= 0 {
				for r := 0; r < t.N; r++ {
					if err := sc.add(1); err != nil {
						return nil, err
					}
					vals[i][r] = b.value(t.At(c, r)) // one decoding cache with the key expressions
				}
			}
			continue
		}
		p, err := q.program(k.Expr)
		if err != nil {
			return nil, err
		}
		for r := 0; r < t.N; r++ {
			if err := sc.add(1); err != nil {
				return nil, err
			}
			b.r, b.key = r, q.rowKeys.Add(1)
			if v, err := p.EvalValue(b); err == nil {
				vals[i][r] = v
			}
		}
	}
	return vals, nil
}
