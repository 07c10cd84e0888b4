package exec

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/wukongd/wukongd/exec/expr"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/sparql"
)

// Work bounded by the answer (DESIGN.md §6, "Early stop"). When the rows
// an exploration must make are bounded — a LIMIT with no ORDER BY above
// it, an ASK, a console page — it runs depth first over batches of rows
// instead of one step at a time over all rows: a batch goes through every
// remaining step before the next batch starts, and once the sink has the
// rows it needs the exploration stops. An index step (every subject, a
// class, a predicate's subjects) reads its lists one index key at a time
// (shortest first) and hands them on in growing chunks (indexCursor), so
// `SELECT * { ?s ?p ?o } LIMIT 100` reads one short list, not the whole
// index. A forked step sends the rows still wanted with the sub-query
// (task.limit), so every shard stops too; the parent keeps what its sink
// needs. ORDER BY … LIMIT k streams the batches into a top-k (topK) that
// never holds more than k rows beyond the batch it is merging.

// Batches grow from firstBatch (at least the rows wanted) by 4× up to
// maxBatch rows: a selective plan that needs many input rows per output
// row pays a few small rounds, a plan that needs everything runs in
// batches large enough that their overhead does not show.
const (
	firstBatch = 64
	maxBatch   = 1 << 16
)

// sink takes an exploration's final rows batch by batch.
type sink struct {
	// limit is the number of rows wanted (0: all).
	limit int
	// each, when set, takes every batch (a streaming consumer: ORDER BY
	// … LIMIT k); else the rows are collected in rows.
	each func(t *Table) error
	rows *Table
	// semi, when set, makes the sink a semi-join's (EXISTS, MINUS from
	// numbered rows): it records which seed rows have a solution and
	// keeps no rows, and the exploration drops the rows of seed rows
	// already found before each step, so each seed row stops at its
	// first solution.
	semi *semiSink
	// distinct, when set, keeps only rows new on its columns (DISTINCT
	// … LIMIT): limit counts distinct rows.
	distinct *distinctSink
	// clashes are the exploration's carried columns to check (seed.go
	// checkCarried) before a semi, distinct or top-k sink counts a row;
	// set by runExploreFrom.
	clashes [][2]int
	// topk, when set on a streaming sink (each) that is an ORDER BY …
	// LIMIT k's heap, lets a fork ask its children (and its local part)
	// for their own k least rows instead of all of theirs: set by
	// runExploreFrom when every key is a plain variable of the
	// exploration.
	topk *topKSpec
	// heap is a forked part's top-k (reduceSpec.newSink): its rows are
	// the sink's result.
	heap *topKHeap
}

// topKSpec is an ORDER BY … LIMIT k over plain variables as a fork sends
// it: k and the key columns (the exploration's) with their directions.
// The k least rows of the whole are among the k least of each part, so a
// part keeps only those.
type topKSpec struct {
	k    int
	cols []int
	desc []bool
	// keys, on the query's own sink, are the keys not yet resolved to
	// columns (runExploreFrom does it).
	keys []planner.OrderKey
}

// semiSink records the seed rows (numbered from 1 in variable v, column
// col once runExploreFrom has resolved it) that have a solution.
type semiSink struct {
	v     sparql.Var
	col   int
	found []bool
	left  int // seed rows not yet found
	// keep: the sink also keeps each seed row's first solution (a forked
	// child's, for the parent to mark).
	keep bool
}

// reduceSpec is what a semi or distinct sink asks of the children of a
// fork (and of the fork's local part), so that they do not make all of
// their part: of their rows, keep only each seed row's first solution
// (semiCol ≥ 0: the column numbering the seed rows) or the rows new on
// distinct. clashes are the carried columns to check first (seed.go).
type reduceSpec struct {
	semiCol  int
	distinct []int
	topk     *topKSpec // a top-k's parts (semiCol < 0, distinct nil)
	clashes  [][2]int
}

// reduceSpec returns what a fork of one of this sink's batches asks of
// its children (nil: nothing).
func (s *sink) reduceSpec() *reduceSpec {
	switch {
	case s.semi != nil:
		return &reduceSpec{semiCol: s.semi.col, clashes: s.clashes}
	case s.distinct != nil:
		return &reduceSpec{semiCol: -1, distinct: s.distinct.cols, clashes: s.clashes}
	case s.topk != nil:
		return &reduceSpec{semiCol: -1, topk: s.topk, clashes: s.clashes}
	}
	return nil
}

// reduceSpecFor is reduceSpec for a fork of the rows of t. A top-k is not
// pushed when a key column of t already holds a query-local ID (from the
// seed: VALUES, BIND), which a child cannot decode; the children then
// send all their rows, as without the push.
func (s *sink) reduceSpecFor(t *Table) *reduceSpec {
	rs := s.reduceSpec()
	if rs == nil || rs.topk == nil {
		return rs
	}
	for _, c := range rs.topk.cols {
		if c >= len(t.Cols) {
			return nil
		}
		for r := 0; r < t.N; r++ {
			if t.At(c, r) >= LocalIDBase {
				return nil
			}
		}
	}
	return rs
}

// newSink returns the sink of a forked part's exploration over t: limit
// rows (0: all), reduced as the spec says (nil: not reduced). A top-k
// part's heap decodes its keys with the store's dictionary on r's engine.
func (rs *reduceSpec) newSink(r *task, limit int, t *Table) *sink {
	out := &sink{limit: limit}
	if rs == nil {
		return out
	}
	out.clashes = rs.clashes
	if tk := rs.topk; tk != nil {
		keys := make([]planner.OrderKey, len(tk.cols))
		for i := range keys {
			keys[i].Desc = tk.desc[i]
		}
		h := &topKHeap{k: tk.k, keys: keys, cols: tk.cols, clashes: rs.clashes}
		// Only store IDs reach a part's keys (reduceSpecFor), so a bare
		// queryRun decodes them.
		q := &queryRun{e: r.eng, ctx: r.ctx, locals: &TermTable{}, env: &expr.Env{}}
		sc := stopCheck{ctx: r.ctx}
		out.limit, out.heap, out.topk = 0, h, tk
		out.each = func(b *Table) error { return h.add(q, b, &sc) }
		return out
	}
	if rs.semiCol >= 0 {
		n := 0
		if rs.semiCol < len(t.Cols) {
			for r := 0; r < t.N; r++ {
				n = max(n, int(min(t.At(rs.semiCol, r), 1<<31)))
			}
		}
		out.semi = &semiSink{col: rs.semiCol, found: make([]bool, n), left: n, keep: true}
		out.limit = 0
		return out
	}
	out.distinct = &distinctSink{cols: rs.distinct, seen: map[string]struct{}{}}
	return out
}

func newSemiSink(v sparql.Var, n int) *semiSink {
	return &semiSink{v: v, col: -1, found: make([]bool, n), left: n}
}

// prune drops the rows of t whose seed row is already found.
func (s *semiSink) prune(t *Table) *Table {
	if s.left == len(s.found) || t.N == 0 {
		return t
	}
	keep := make([]int32, 0, t.N)
	for r := 0; r < t.N; r++ {
		if n := t.At(s.col, r); n == 0 || int(n) > len(s.found) || !s.found[n-1] {
			keep = append(keep, int32(r))
		}
	}
	if len(keep) == t.N {
		return t
	}
	return t.gather(keep)
}

// distinctSink keeps the rows new on cols (the variables vars, resolved
// against the exploration's columns by runExploreFrom).
type distinctSink struct {
	vars []sparql.Var
	cols []int
	seen map[string]struct{}
	key  []byte
}

// fresh lists the rows of t (passing the carried columns' check) new on
// the sink's columns.
func (d *distinctSink) fresh(t *Table, clashes [][2]int, limit int) []int32 {
	var keep []int32
	for r := 0; r < t.N && (limit <= 0 || len(keep) < limit); r++ {
		if !carriedOK(t, clashes, r) {
			continue
		}
		d.key = d.key[:0]
		for _, c := range d.cols {
			d.key = appendID(d.key, t.At(c, r))
		}
		if _, dup := d.seen[string(d.key)]; dup {
			continue
		}
		d.seen[string(d.key)] = struct{}{}
		keep = append(keep, int32(r))
	}
	return keep
}

// carriedOK reports whether row r of t agrees with its carried columns
// (the row check of checkCarried).
func carriedOK(t *Table, clashes [][2]int, r int) bool {
	for _, cl := range clashes {
		if s := t.At(cl[1], r); s != 0 && s != t.At(cl[0], r) {
			return false
		}
	}
	return true
}

// want returns the rows still wanted (0: all); for a semi sink, the seed
// rows not yet found (which sizes the batches: each needs one solution).
func (s *sink) want() int {
	if s.semi != nil {
		return max(s.semi.left, 1)
	}
	if s.limit <= 0 {
		return 0
	}
	n := 0
	if s.rows != nil {
		n = s.rows.N
	}
	return max(s.limit-n, 1)
}

// forkWant is the row bound a fork of one batch sends its children (0:
// all). A distinct sink's children each keep up to that many distinct
// rows of their part: together they have as many as the batch has, up to
// the bound. A semi sink's children keep each seed row's first solution.
func (s *sink) forkWant() int {
	if s.semi != nil {
		return 0
	}
	return s.want()
}

// done reports whether the sink has every row it wants.
func (s *sink) done() bool {
	if s.semi != nil {
		return s.semi.left == 0
	}
	return s.limit > 0 && s.rows != nil && s.rows.N >= s.limit
}

// prune drops the rows a semi sink no longer needs (t itself otherwise).
func (s *sink) prune(t *Table) *Table {
	if s.semi == nil {
		return t
	}
	return s.semi.prune(t)
}

// put hands a batch to the sink and reports whether it is satisfied.
func (s *sink) put(t *Table) (bool, error) {
	if t == nil || t.N == 0 {
		return s.done(), nil
	}
	if s.each != nil {
		return false, s.each(t)
	}
	if m := s.semi; m != nil {
		var first []int32
		for r := 0; r < t.N; r++ {
			if n := t.At(m.col, r); n > 0 && int(n) <= len(m.found) && !m.found[n-1] && carriedOK(t, s.clashes, r) {
				m.found[n-1] = true
				m.left--
				first = append(first, int32(r))
			}
		}
		if !m.keep || len(first) == 0 {
			return s.done(), nil
		}
		t = t.gather(first)
		if s.rows == nil {
			s.rows = &Table{Vars: t.Vars, Cols: make([][]ID, len(t.Cols))}
		}
		s.rows.appendTable(t)
		return s.done(), nil
	}
	if s.distinct != nil {
		want := 0
		if s.limit > 0 {
			want = s.want()
		}
		keep := s.distinct.fresh(t, s.clashes, want)
		if len(keep) == 0 {
			return s.done(), nil
		}
		if len(keep) < t.N {
			t = t.gather(keep)
		}
	}
	if s.rows == nil {
		s.rows = &Table{Vars: t.Vars, Cols: make([][]ID, len(t.Cols))}
	}
	if s.limit > 0 && s.rows.N+t.N > s.limit {
		t = t.rows(0, s.limit-s.rows.N)
	}
	s.rows.appendTable(t)
	return s.done(), nil
}

// result returns the collected rows (an empty table of ncols columns when
// none came).
func (s *sink) result(ncols int) *Table {
	if s.heap != nil && s.heap.held != nil {
		return s.heap.result()
	}
	if s.rows == nil {
		return &Table{Cols: make([][]ID, ncols)}
	}
	return s.rows
}

// nextBatch returns the size of the next batch after size (0: the first)
// for a sink wanting want rows (0: all).
func nextBatch(size, want int) int {
	switch {
	case want == 0:
		return maxBatch
	case size == 0:
		return min(max(want, firstBatch), maxBatch)
	}
	return min(4*size, maxBatch)
}

// rows returns rows [lo, hi) of t; the columns alias t's.
func (t *Table) rows(lo, hi int) *Table {
	out := &Table{Vars: t.Vars, Cols: make([][]ID, len(t.Cols)), N: hi - lo}
	for c, col := range t.Cols {
		if col != nil {
			out.Cols[c] = col[lo:hi:hi]
		}
	}
	return out
}

// stream runs steps[k:] over t depth first in batches and hands the final
// rows to out; it returns true once out is satisfied.
func (r *task) stream(k int, t *Table, out *sink) (bool, error) {
	if t.N == 0 {
		return out.done(), nil
	}
	if err := r.ctx.Err(); err != nil {
		return false, err
	}
	if k == len(r.steps) {
		return out.put(t)
	}
	if t = out.prune(t); t.N == 0 {
		return out.done(), nil
	}
	if size := nextBatch(0, out.want()); t.N > size {
		for lo := 0; lo < t.N; {
			hi := min(lo+size, t.N)
			if done, err := r.stream(k, t.rows(lo, hi), out); done || err != nil {
				return done, err
			}
			lo, size = hi, nextBatch(size, out.want())
		}
		return out.done(), nil
	}
	s := &r.steps[k]
	var st *StepStats
	var t0 time.Time
	if r.analyze {
		st = r.stat(k)
		t0 = time.Now()
	}
	if r.eng.store.Shards() > 1 && s.Mode == planner.ModeForkJoin {
		// The children (and the local part, through explore) stop at the
		// rows still wanted; the parent keeps what out needs.
		saved, savedReduce := r.limit, r.reduce
		r.limit, r.reduce = out.forkWant(), out.reduceSpecFor(t)
		var res *Table
		var err error
		switch {
		case s.Kind == planner.StepIndex && r.localFirst(out):
			// This node's part first, straight into out: enough rows
			// there ends the exploration without a fork.
			r.limit, r.reduce = saved, savedReduce
			done, err := r.streamLocalPart(k, t, out)
			if done || err != nil {
				return done, err
			}
			r.limit, r.reduce = out.forkWant(), out.reduceSpecFor(t)
			res, err = r.forkOthers(k, t, st, t0)
		case s.Kind == planner.StepIndex:
			res, err = r.forkAll(k, t, st, t0)
		case s.From.Kind == planner.OpConst:
			if owner := r.eng.store.Owner(s.From.ID); owner != r.node {
				res, err = r.forkTo(k, t, owner, st, t0)
			} else {
				r.limit, r.reduce = saved, savedReduce
				return r.streamStep(k, s, t, out, st, t0)
			}
		default:
			res, err = r.forkSplit(k, t, st, t0)
		}
		r.limit, r.reduce = saved, savedReduce
		if err != nil {
			return false, err
		}
		return out.put(res)
	}
	return r.streamStep(k, s, t, out, st, t0)
}

// localFirst reports whether a fork-join index step under out should run
// this node's part before forking the others: out wants a few rows (a
// LIMIT, an ASK: not a streaming or semi-join sink) and the planner
// expects this shard alone to make at least four times as many. ASK { ?s
// ?p ?o } then reads one shard's first lists and forks nothing (at
// LUBM-2560 the fork to 15 nodes and their replies were most of its
// 4.5 ms); when the local part falls short, the others run after it with
// the rows still wanted, which costs that wait (the local part's time) on
// top of the fork.
func (r *task) localFirst(out *sink) bool {
	if out.each != nil || out.semi != nil || out.limit <= 0 || len(r.steps) == 0 {
		return false
	}
	est := r.steps[len(r.steps)-1].EstRows / float64(max(r.eng.store.Shards(), 1))
	return est >= 4*float64(out.want())
}

// streamLocalPart streams this node's part of the index step k (made
// local) over t into out.
func (r *task) streamLocalPart(k int, t *Table, out *sink) (bool, error) {
	saved := r.steps
	r.steps = append([]planner.Step(nil), saved...)
	r.steps[k].Mode = planner.ModeLocal
	defer func() { r.steps = saved }()
	return r.stream(k, t, out)
}

// streamStep runs step k locally or in place on the rows of t and streams
// the result through the rest of the steps.
func (r *task) streamStep(k int, s *planner.Step, t *Table, out *sink, st *StepStats, t0 time.Time) (bool, error) {
	if st != nil {
		st.RowsIn += uint64(t.N)
	}
	if s.Kind == planner.StepIndex {
		return r.streamIndex(k, s, t, out, st, t0)
	}
	u, err := r.apply(s, t, st)
	if err != nil {
		return false, stepError(k, err)
	}
	u = r.filters.apply(k, u)
	if st != nil {
		st.RowsOut += uint64(u.N)
		st.Time += time.Since(t0)
	}
	b := tableBytes(u)
	r.mem.charge(b)
	defer r.mem.charge(-b)
	return r.stream(k+1, u, out)
}

// streamIndex runs an index step in chunks of its list: each chunk's rows
// go through the rest of the steps before the next chunk is read.
func (r *task) streamIndex(k int, s *planner.Step, t *Table, out *sink, st *StepStats, t0 time.Time) (bool, error) {
	cur, err := r.newIndexCursor(s, st)
	if err != nil {
		return false, stepError(k, err)
	}
	var chunk []ID
	for size := nextBatch(0, out.want()); ; size = nextBatch(size, out.want()) {
		if t = out.prune(t); t.N == 0 {
			return out.done(), nil
		}
		// t.N rows × the chunk: about size rows per round.
		chunk, err = cur.next(chunk[:0], max(size/max(t.N, 1), 1))
		if err != nil {
			return false, stepError(k, err)
		}
		if len(chunk) == 0 {
			return out.done(), nil
		}
		u, err := r.cross(t, chunk, s.To.Col)
		if err != nil {
			return false, stepError(k, err)
		}
		u = r.filters.apply(k, u)
		if st != nil {
			st.RowsOut += uint64(u.N)
			st.Time += time.Since(t0)
		}
		b := tableBytes(u)
		r.mem.charge(b)
		done, err := r.stream(k+1, u, out)
		r.mem.charge(-b)
		if done || err != nil {
			return done, err
		}
		if st != nil {
			t0 = time.Now()
		}
	}
}

// indexCursor reads an index step's list lazily, one index key at a
// time: a chunk costs the lists it reads, not the whole index (every
// subject is the union of every predicate's subjects). The order is the
// shards', then the keys', not the sorted order of indexList. Shards own
// disjoint vertices; where one shard's list is a union of several lists
// (every subject, every typed vertex) a bitmap drops the IDs already given.
type indexCursor struct {
	r      *task
	st     *StepStats
	shards []int
	keys   [][]Key // per shard in shards, not yet read
	seen   *roaring64.Bitmap
	list   []ID // the rest of the list being read
	ctx    stopCheck
}

func (r *task) newIndexCursor(s *planner.Step, st *StepStats) (*indexCursor, error) {
	p := ID(0)
	if s.Pred.Kind == planner.OpConst {
		p = s.Pred.ID
	}
	c := &indexCursor{r: r, st: st, ctx: stopCheck{ctx: r.ctx}}
	for sh := 0; sh < r.eng.store.Shards(); sh++ {
		if s.Mode == planner.ModeLocal && sh != r.node {
			continue
		}
		keys, err := r.shardIndexKeys(sh, p, s.Dir, st)
		if err != nil {
			return nil, err
		}
		if len(keys) > 1 {
			c.seen = roaring64.New()
			// The shortest lists first: the first chunks cost little.
			slices.SortFunc(keys, func(a, b Key) int { return cmp.Compare(r.indexSize(a), r.indexSize(b)) })
		}
		c.shards = append(c.shards, sh)
		c.keys = append(c.keys, keys)
	}
	return c, nil
}

// indexSize estimates the length of an index vertex's list from the
// statistics (a class's instances, a predicate's subjects or objects).
func (r *task) indexSize(k Key) uint64 {
	st := r.eng.stats()
	if n, ok := st.Classes[k.Pred()]; ok && k.Dir() == planner.In {
		return n
	}
	ps := st.Preds[k.Pred()]
	if k.Dir() == planner.In {
		return ps.Objects
	}
	return ps.Subjects
}

// next appends up to n further IDs to dst (none: the list is done).
func (c *indexCursor) next(dst []ID, n int) ([]ID, error) {
	for added := 0; added < n; {
		if len(c.list) == 0 {
			for len(c.shards) > 0 && len(c.keys[0]) == 0 {
				c.shards, c.keys = c.shards[1:], c.keys[1:]
			}
			if len(c.shards) == 0 {
				return dst, nil
			}
			out := make([][]ID, 1)
			if err := c.r.lookup(c.shards[0], c.keys[0][:1], out, c.st); err != nil {
				return dst, err
			}
			c.keys[0] = c.keys[0][1:]
			c.list = out[0]
			continue
		}
		if c.seen == nil {
			m := min(n-added, len(c.list))
			dst = append(dst, c.list[:m]...)
			c.list = c.list[m:]
			added += m
			continue
		}
		if err := c.ctx.add(1); err != nil {
			return dst, err
		}
		x := c.list[0]
		c.list = c.list[1:]
		if c.seen.CheckedAdd(uint64(x)) {
			dst = append(dst, x)
			added++
		}
	}
	return dst, nil
}

// topK evaluates ORDER BY for its first k rows. When the input is an
// exploration and the keys need no EXISTS (whose exploration could not run
// while this one waits), the exploration streams its batches into a
// bounded heap of the k least rows so far (topKHeap), so the ORDER BY
// state never holds more than k rows besides the batch whose keys it is
// comparing. Ties keep the input order (the sort is stable), as a full
// sort would.
func (q *queryRun) topK(n *planner.OrderBy, k int) (*Table, error) {
	ex, ok := n.Input.(*planner.Explore)
	if !ok || keysNeedExists(n.Keys) {
		t, err := q.eval(n.Input)
		if err != nil {
			return nil, err
		}
		return q.topKOf(t, n.Keys, k)
	}
	var seed *Table
	if ex.Seed != nil {
		s, err := q.eval(ex.Seed)
		if err != nil {
			return nil, err
		}
		seed = s
	}
	h := &topKHeap{k: k, keys: n.Keys}
	sc := stopCheck{ctx: q.ctx}
	out := &sink{each: func(b *Table) error { return h.add(q, b, &sc) }}
	if k > 0 && plainKeys(n.Keys) {
		// runExploreFrom resolves the variables to the exploration's
		// columns (cols) for the forks' parts.
		out.topk = &topKSpec{k: k, keys: n.Keys}
	}
	empty, err := q.explore(ex, seed, out)
	if err != nil {
		return nil, err
	}
	if h.held == nil {
		return empty, nil
	}
	return h.result(), nil
}

// topKOf returns the first k rows of t in ORDER BY order.
func (q *queryRun) topKOf(t *Table, keys []planner.OrderKey, k int) (*Table, error) {
	if t.N <= k {
		return q.orderBy(t, keys)
	}
	h := &topKHeap{k: k, keys: keys}
	sc := stopCheck{ctx: q.ctx}
	if err := h.add(q, t, &sc); err != nil {
		return nil, err
	}
	return h.result(), nil
}

// plainKeys reports whether every ORDER BY key is a plain variable.
func plainKeys(keys []planner.OrderKey) bool {
	for _, k := range keys {
		if k.Expr != nil {
			return false
		}
	}
	return len(keys) > 0
}

// topKChunk bounds the rows whose key values a top-k decodes at once: the
// heap's own memory is k rows and one chunk's values, whatever the batch.
const topKChunk = 4096

// topKHeap keeps the k least rows seen (by the keys, then by arrival) in
// a max-heap: a new row goes in only when it is less than the greatest
// held row, which it replaces.
type topKHeap struct {
	k    int
	keys []planner.OrderKey
	// cols, when set, are the key columns (a forked part's heap: its
	// tables have no variable names); else plain variables are found by
	// name in each batch.
	cols []int
	// clashes: rows failing the carried columns' check are not offered
	// (a forked part's heap; the parent's batches are checked already).
	clashes [][2]int
	dec     *termCache     // plain variables' values
	scratch [][]expr.Value // per key, one chunk's values (plain variables)
	held    *Table         // the rows held (k at most), columns copied
	vals    [][]expr.Value // per key, per held row
	seq     []uint64       // arrival number per held row
	heap    []int          // held row indexes, a max-heap
	n       uint64         // rows seen
}

// cmp compares key values in ORDER BY order (Desc reversed).
func (h *topKHeap) cmp(k int, a, b expr.Value) int {
	c := expr.CompareValues(a, b)
	if h.keys[k].Desc {
		c = -c
	}
	return c
}

// lessHeld compares held rows i and j by the keys, then by arrival.
func (h *topKHeap) lessHeld(i, j int) bool {
	for k := range h.keys {
		if c := h.cmp(k, h.vals[k][i], h.vals[k][j]); c != 0 {
			return c < 0
		}
	}
	return h.seq[i] < h.seq[j]
}

// lessThanHeld reports whether a candidate (its key values; it came after
// every held row) is less than held row i.
func (h *topKHeap) lessThanHeld(cand []expr.Value, i int) bool {
	for k := range h.keys {
		if c := h.cmp(k, cand[k], h.vals[k][i]); c != 0 {
			return c < 0
		}
	}
	return false
}

func (h *topKHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.lessHeld(h.heap[p], h.heap[i]) {
			return
		}
		h.heap[p], h.heap[i] = h.heap[i], h.heap[p]
		i = p
	}
}

func (h *topKHeap) down(i int) {
	for {
		l, big := 2*i+1, i
		if l < len(h.heap) && h.lessHeld(h.heap[big], h.heap[l]) {
			big = l
		}
		if r := l + 1; r < len(h.heap) && h.lessHeld(h.heap[big], h.heap[r]) {
			big = r
		}
		if big == i {
			return
		}
		h.heap[i], h.heap[big] = h.heap[big], h.heap[i]
		i = big
	}
}

// add offers the rows of b, a chunk of topKChunk rows at a time.
func (h *topKHeap) add(q *queryRun, b *Table, sc *stopCheck) error {
	if h.k <= 0 || b.N == 0 {
		return nil
	}
	for lo := 0; lo < b.N; lo += topKChunk {
		c := b
		if b.N > topKChunk {
			c = b.rows(lo, min(lo+topKChunk, b.N))
			c.Vars = b.Vars
		}
		if err := h.addChunk(q, c, sc); err != nil {
			return err
		}
	}
	return nil
}

// keyValues returns the key values of b's rows, per key. Plain variables
// are decoded through a small cache of the heap's (a scan's IDs seldom
// repeat; a join's do), other keys by orderKeys.
func (h *topKHeap) keyValues(q *queryRun, b *Table, sc *stopCheck) ([][]expr.Value, error) {
	if h.cols == nil && !plainKeys(h.keys) {
		return q.orderKeys(b, h.keys, sc)
	}
	if h.dec == nil {
		h.dec = new(termCache)
		h.scratch = make([][]expr.Value, len(h.keys))
	}
	for i, k := range h.keys {
		c := -1
		if h.cols != nil {
			c = h.cols[i]
		} else {
			c = b.Col(k.Var)
		}
		v := h.scratch[i][:0]
		for r := 0; r < b.N; r++ {
			if err := sc.add(1); err != nil {
				return nil, err
			}
			var id ID
			if c >= 0 && c < len(b.Cols) {
				id = b.At(c, r)
			}
			v = append(v, h.dec.value(q, id))
		}
		h.scratch[i] = v
	}
	return h.scratch, nil
}

// termCache is a direct-mapped cache of decoded terms.
type termCache struct {
	ids  [1024]ID // ID+1 (0: empty)
	vals [1024]expr.Value
}

func (c *termCache) value(q *queryRun, id ID) expr.Value {
	i := (uint64(id) * 0x9E3779B97F4A7C15) >> 54
	if c.ids[i] == id+1 {
		return c.vals[i]
	}
	v := expr.Decode(q.term(id))
	c.ids[i], c.vals[i] = id+1, v
	return v
}

// addChunk offers the rows of b.
func (h *topKHeap) addChunk(q *queryRun, b *Table, sc *stopCheck) error {
	vals, err := h.keyValues(q, b, sc)
	if err != nil {
		return err
	}
	if h.held == nil {
		h.held = &Table{Vars: b.Vars, Cols: make([][]ID, len(b.Cols))}
		h.vals = make([][]expr.Value, len(h.keys))
	}
	cand := make([]expr.Value, len(h.keys))
	for r := 0; r < b.N; r++ {
		if err := sc.add(1); err != nil {
			return err
		}
		if len(h.clashes) > 0 && !carriedOK(b, h.clashes, r) {
			continue
		}
		seq := h.n
		h.n++
		for k := range h.keys {
			cand[k] = vals[k][r]
		}
		if len(h.heap) < h.k {
			i := h.held.N
			for c := range b.Cols {
				h.held.Cols[c] = append(h.held.Cols[c], b.At(c, r))
			}
			h.held.N++
			for k := range h.keys {
				h.vals[k] = append(h.vals[k], cand[k])
			}
			h.seq = append(h.seq, seq)
			h.heap = append(h.heap, i)
			h.up(len(h.heap) - 1)
			continue
		}
		top := h.heap[0]
		if !h.lessThanHeld(cand, top) {
			continue
		}
		for c := range b.Cols {
			h.held.Cols[c][top] = b.At(c, r)
		}
		for k := range h.keys {
			h.vals[k][top] = cand[k]
		}
		h.seq[top] = seq
		h.down(0)
	}
	return nil
}

// result returns the held rows in order.
func (h *topKHeap) result() *Table {
	idx := make([]int32, h.held.N)
	for i := range idx {
		idx[i] = int32(i)
	}
	sort.Slice(idx, func(i, j int) bool { return h.lessHeld(int(idx[i]), int(idx[j])) })
	return h.held.gather(idx)
}

// keysNeedExists reports whether an ORDER BY key uses EXISTS.
func keysNeedExists(keys []planner.OrderKey) bool {
	found := false
	for _, k := range keys {
		if k.Expr == nil {
			continue
		}
		sparql.WalkExpr(k.Expr, func(e sparql.Expr) bool {
			if _, ok := e.(*sparql.ExistsExpr); ok {
				found = true
			}
			return !found
		})
	}
	return found
}
