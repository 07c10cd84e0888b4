package exec

import (
	"context"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// Property paths (SPARQL 1.1 §18.4).
//
// The parser rewrites links, inverse links and sequences of them into
// triple patterns; what reaches here is Path(S, P, O) with alternatives,
// repetitions (*, +, ?), negated property sets and anything nested in
// them. A path is compiled against the graph's dictionary into a pathExpr
// whose inverses are pushed down to the links and negated sets, so every
// path is evaluated forwards from a set of start vertices:
//
//   - link (p, dir): one adjacency lookup (v, p, dir) per start; rdf:type
//     backwards reads the type index of the class on every shard;
//   - negated set: the start's predicate list (v, AllPredicates, dir), then
//     the lists of every predicate not excluded;
//   - sequence a/b: a from the starts, b from the distinct ends of a; the
//     ends of a are kept with their multiplicity (a bag: §18.2.2.4 joins
//     over a fresh variable that is projected away);
//   - alternative: the bag union of both sides;
//   - ZeroOrOne, ZeroOrMore, OneOrMore: sets of distinct nodes per start
//     (§18.5 ALP): a breadth-first search per start with a roaring bitmap
//     of visited nodes; all searches advance together, so each round reads
//     the adjacency of the frontier nodes once (and never twice: the ends
//     of a node are cached for the whole evaluation). Cycles end the
//     search, never loop it.
//
// Reads go through Store.Lookup from one node: local for its own shard,
// batched one-sided READs for the others (in place; paths do not fork).
//
// Joining with the input rows (full history): a row whose subject is bound
// (a constant, or a column bound by an earlier step) evaluates the path
// from that value — once per distinct value over all rows; a row with only
// the object bound evaluates the inverse path from the object; a row with
// neither bound takes every solution of the path, from the nodes that can
// start it (the whole graph's nodes, subjects and objects, when the path
// can have length zero). A constant the dictionary does not know is still a
// node for the zero-length match (<u> :p* ?x gives ?x = <u>): it gets a
// query-local ID.

// pathOp is the kind of a compiled path expression.
type pathOp uint8

const (
	pathLink pathOp = iota // one step along pred in dir (pred 0: unknown, matches nothing)
	pathNeg                // one step along any predicate not excluded
	pathSeq
	pathAlt
	pathZeroOrMore
	pathOneOrMore
	pathZeroOrOne
)

// pathExpr is a path compiled to IDs, with inverses pushed to the leaves.
type pathExpr struct {
	op   pathOp
	pred ID          // pathLink
	dir  planner.Dir // pathLink
	fwd  bool        // pathNeg: has a forward part (excluding fwdEx)
	inv  bool        // pathNeg: has an inverse part (excluding invEx)
	ex   [2][]ID     // pathNeg: excluded predicates, by direction (In, Out)
	a, b *pathExpr   // sub-expressions
	src  sparql.Path // the source path (for errors)
}

// compilePath compiles p (inverted when inverse) against lookup.
func compilePath(p sparql.Path, inverse bool, lookup func(rdf.Term) (ID, bool)) (*pathExpr, error) {
	switch p := p.(type) {
	case *sparql.LinkPath:
		id, _ := lookup(rdf.NewIRI(p.IRI))
		if id > graphstore.MaxPredicate {
			id = 0 // a term that is never a predicate: no edge
		}
		d := planner.Out
		if inverse {
			d = planner.In
		}
		return &pathExpr{op: pathLink, pred: id, dir: d, src: p}, nil
	case *sparql.InversePath:
		return compilePath(p.Path, !inverse, lookup)
	case *sparql.SequencePath:
		l, err := compilePath(p.Left, inverse, lookup)
		if err != nil {
			return nil, err
		}
		r, err := compilePath(p.Right, inverse, lookup)
		if err != nil {
			return nil, err
		}
		if inverse {
			l, r = r, l
		}
		return &pathExpr{op: pathSeq, a: l, b: r, src: p}, nil
	case *sparql.AlternativePath:
		l, err := compilePath(p.Left, inverse, lookup)
		if err != nil {
			return nil, err
		}
		r, err := compilePath(p.Right, inverse, lookup)
		if err != nil {
			return nil, err
		}
		return &pathExpr{op: pathAlt, a: l, b: r, src: p}, nil
	case *sparql.ZeroOrMorePath, *sparql.OneOrMorePath, *sparql.ZeroOrOnePath:
		var inner sparql.Path
		var op pathOp
		switch p := p.(type) {
		case *sparql.ZeroOrMorePath:
			inner, op = p.Path, pathZeroOrMore
		case *sparql.OneOrMorePath:
			inner, op = p.Path, pathOneOrMore
		case *sparql.ZeroOrOnePath:
			inner, op = p.Path, pathZeroOrOne
		}
		a, err := compilePath(inner, inverse, lookup)
		if err != nil {
			return nil, err
		}
		return &pathExpr{op: op, a: a, src: p}, nil
	case *sparql.NegatedPropertySet:
		ids := func(iris []string) []ID {
			var out []ID
			for _, iri := range iris {
				if id, ok := lookup(rdf.NewIRI(iri)); ok && id <= graphstore.MaxPredicate {
					out = append(out, id)
				}
			}
			slices.Sort(out)
			return slices.Compact(out)
		}
		x := &pathExpr{op: pathNeg, src: p}
		// A forward IRI excludes a forward step, an inverse one (^iri) a
		// backward step; inverting the whole set swaps the parts.
		fd, id := planner.Out, planner.In
		if inverse {
			fd, id = planner.In, planner.Out
		}
		if len(p.Forward) > 0 {
			x.ex[fd] = ids(p.Forward)
			if fd == planner.Out {
				x.fwd = true
			} else {
				x.inv = true
			}
		}
		if len(p.Inverse) > 0 {
			x.ex[id] = ids(p.Inverse)
			if id == planner.Out {
				x.fwd = true
			} else {
				x.inv = true
			}
		}
		return x, nil
	case nil:
		return nil, fmt.Errorf("BUG: nil property path")
	}
	return nil, fmt.Errorf("%w: property path %T", planner.ErrUnsupported, p)
}

// zeroLength reports whether x matches the empty path from every node.
func (x *pathExpr) zeroLength() bool {
	switch x.op {
	case pathZeroOrMore, pathZeroOrOne:
		return true
	case pathOneOrMore:
		return x.a.zeroLength()
	case pathSeq:
		return x.a.zeroLength() && x.b.zeroLength()
	case pathAlt:
		return x.a.zeroLength() || x.b.zeroLength()
	}
	return false
}

// pathReader reads adjacency lists of one graph for path evaluation, from
// node self (local reads of its shard, batched fabric READs of the others).
type pathReader struct {
	ctx   context.Context
	st    Store
	self  int
	stats *planner.Stats
	cost  ReadCost
	// instances caches the type index of a class (rdf:type backwards).
	instances map[ID][]ID
	// mem is the query's account (nil: none): the closures' state and the
	// lists made are charged as they grow; what is still charged when the
	// path scan returns is settled by queryRun.eval.
	mem *memAccount
}

func newPathReader(ctx context.Context, st Store, self int, mem *memAccount) *pathReader {
	return &pathReader{ctx: ctx, st: st, self: self, stats: st.PlannerStats(), instances: map[ID][]ID{}, mem: mem}
}

// made charges n bytes of lists made (kept to the path scan's end) and
// returns the context's error once the account has stopped the query.
func (r *pathReader) made(n int64) error {
	r.mem.charge(n)
	return r.ctx.Err()
}

// isVertex reports whether v can be the vertex of a key (a store ID, not a
// query-local one).
func isVertex(v ID) bool { return v != 0 && v <= graphstore.MaxID }

// lookup reads keys (vertex ≠ 0) grouped by the owner of the vertex, one
// batch per shard.
func (r *pathReader) lookup(keys []Key) ([][]ID, error) {
	out := make([][]ID, len(keys))
	n := r.st.Shards()
	byShard := make([][]int32, n)
	for i, k := range keys {
		sh := r.st.Owner(k.Vertex())
		byShard[sh] = append(byShard[sh], int32(i))
	}
	var ks []Key
	var res [][]ID
	for sh, idx := range byShard {
		if len(idx) == 0 {
			continue
		}
		ks = ks[:0]
		for _, i := range idx {
			ks = append(ks, keys[i])
		}
		res = append(res[:0], make([][]ID, len(ks))...)
		c, err := r.st.Lookup(r.ctx, r.self, sh, ks, res)
		if err != nil {
			return nil, err
		}
		r.cost.add(c)
		for j, i := range idx {
			out[i] = res[j]
		}
	}
	return out, nil
}

// index returns the union over every shard of the index lists (0, p, d)
// of each p in preds.
func (r *pathReader) index(preds []ID, d planner.Dir) ([]ID, error) {
	if len(preds) == 0 {
		return nil, nil
	}
	keys := make([]Key, len(preds))
	for i, p := range preds {
		keys[i] = graphstore.MakeKey(graphstore.IndexVertex, p, d)
	}
	var parts [][]ID
	for sh := 0; sh < r.st.Shards(); sh++ {
		out := make([][]ID, len(keys))
		c, err := r.st.Lookup(r.ctx, r.self, sh, keys, out)
		if err != nil {
			return nil, err
		}
		r.cost.add(c)
		parts = append(parts, out...)
	}
	return mergeUnion(parts), nil
}

// predicates returns the predicates having a d-edge on any shard.
func (r *pathReader) predicates(d planner.Dir) ([]ID, error) {
	return r.index([]ID{graphstore.AllPredicates}, d)
}

// subjects returns every subject of the graph.
func (r *pathReader) subjects() ([]ID, error) {
	ps, err := r.predicates(planner.Out)
	if err != nil {
		return nil, err
	}
	return r.index(ps, planner.Out)
}

// objects returns every object of the graph (classes with an instance
// included: rdf:type objects are not in the In lists).
func (r *pathReader) objects() ([]ID, error) {
	ps, err := r.predicates(planner.In)
	if err != nil {
		return nil, err
	}
	ps = slices.DeleteFunc(slices.Clone(ps), func(p ID) bool { return p == graphstore.TypeID })
	objs, err := r.index(ps, planner.In)
	if err != nil {
		return nil, err
	}
	// An ID that is a predicate and a class shares (0, id, In) with its
	// instances; those are subjects, so for the node set (and the starts
	// of a path, which may be too many) they do no harm.
	var classes []ID
	for c, n := range r.stats.Classes {
		if n > 0 {
			classes = append(classes, c)
		}
	}
	slices.Sort(classes)
	return mergeUnion([][]ID{objs, classes}), nil
}

// keysOf returns the keys (v, p, d) of store vertices vs.
func keysOf(vs []ID, p ID, d planner.Dir) []Key {
	out := make([]Key, len(vs))
	for i, v := range vs {
		out[i] = graphstore.MakeKey(v, p, d)
	}
	return out
}

// allNodes returns every node of the graph: subjects and objects.
func (r *pathReader) allNodes() ([]ID, error) {
	s, err := r.subjects()
	if err != nil {
		return nil, err
	}
	o, err := r.objects()
	if err != nil {
		return nil, err
	}
	return mergeUnion([][]ID{s, o}), nil
}

// nodesOnly returns the values of the sorted set vs that are nodes of the
// graph: subjects or objects of a triple (a class, of an rdf:type triple).
func (r *pathReader) nodesOnly(vs []ID) ([]ID, error) {
	var keys []Key
	var at []int
	for i, v := range vs {
		if isVertex(v) {
			keys = append(keys, graphstore.MakeKey(v, graphstore.AllPredicates, planner.Out), graphstore.MakeKey(v, graphstore.AllPredicates, planner.In))
			at = append(at, i)
		}
	}
	lists, err := r.lookup(keys)
	if err != nil {
		return nil, err
	}
	out := make([]ID, 0, len(at))
	for j, i := range at {
		v := vs[i]
		if len(lists[2*j]) > 0 || len(lists[2*j+1]) > 0 || v <= graphstore.MaxPredicate && r.stats.Classes[v] > 0 {
			out = append(out, v)
		}
	}
	return out, nil
}

// classInstances returns the instances of class c (the type index on every
// shard), checked against (v, rdf:type, Out) when c is also a predicate.
func (r *pathReader) classInstances(c ID) ([]ID, error) {
	if l, ok := r.instances[c]; ok {
		return l, nil
	}
	var l []ID
	if c <= graphstore.MaxPredicate && r.st.IsClass(c) {
		var err error
		if l, err = r.index([]ID{c}, planner.In); err != nil {
			return nil, err
		}
		if _, punned := r.stats.Preds[c]; punned && len(l) > 0 {
			types, err := r.lookup(keysOf(l, graphstore.TypeID, planner.Out))
			if err != nil {
				return nil, err
			}
			keep := make([]ID, 0, len(l))
			for i, v := range l {
				if contains(types[i], c) {
					keep = append(keep, v)
				}
			}
			l = keep
		}
	}
	r.instances[c] = l
	return l, nil
}

// link returns, for each vertex of vs, its neighbours along (p, d).
func (r *pathReader) link(vs []ID, p ID, d planner.Dir) ([][]ID, error) {
	out := make([][]ID, len(vs))
	if p == 0 {
		return out, nil
	}
	if p == graphstore.TypeID && d == planner.In {
		for i, v := range vs {
			l, err := r.classInstances(v)
			if err != nil {
				return nil, err
			}
			out[i] = l
		}
		return out, nil
	}
	var keys []Key
	var at []int
	for i, v := range vs {
		if isVertex(v) {
			keys = append(keys, graphstore.MakeKey(v, p, d))
			at = append(at, i)
		}
	}
	lists, err := r.lookup(keys)
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		out[i] = lists[j]
	}
	return out, nil
}

// negated returns, for each vertex of vs, its neighbours along every
// predicate of direction d not in ex (one bag entry per edge).
func (r *pathReader) negated(vs []ID, d planner.Dir, ex []ID, out [][]ID) error {
	var keys []Key
	var at []int
	for i, v := range vs {
		if isVertex(v) {
			keys = append(keys, graphstore.MakeKey(v, graphstore.AllPredicates, d))
			at = append(at, i)
		}
	}
	preds, err := r.lookup(keys)
	if err != nil {
		return err
	}
	keys = keys[:0]
	var owner []int
	for j, i := range at {
		for _, p := range preds[j] {
			if contains(ex, p) {
				continue
			}
			keys = append(keys, graphstore.MakeKey(vs[i], p, d))
			owner = append(owner, i)
		}
	}
	lists, err := r.lookup(keys)
	if err != nil {
		return err
	}
	for j, i := range owner {
		out[i] = append(out[i], lists[j]...)
	}
	if d == planner.In && !contains(ex, graphstore.TypeID) {
		// Backwards along rdf:type: a class's instances (never an In list).
		for i, v := range vs {
			if v > graphstore.MaxPredicate || !r.st.IsClass(v) {
				continue
			}
			l, err := r.classInstances(v)
			if err != nil {
				return err
			}
			out[i] = append(out[i], l...)
		}
	}
	return nil
}

// eval returns, for each start vs[i], the bag of the ends of x from it.
// The lists may alias store memory: never modify them.
func (r *pathReader) eval(x *pathExpr, vs []ID) ([][]ID, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	switch x.op {
	case pathLink:
		return r.link(vs, x.pred, x.dir)
	case pathNeg:
		out := make([][]ID, len(vs))
		if x.fwd {
			if err := r.negated(vs, planner.Out, x.ex[planner.Out], out); err != nil {
				return nil, err
			}
		}
		if x.inv {
			if err := r.negated(vs, planner.In, x.ex[planner.In], out); err != nil {
				return nil, err
			}
		}
		return out, nil
	case pathSeq:
		first, err := r.eval(x.a, vs)
		if err != nil {
			return nil, err
		}
		mids := mergeUnion(first)
		second, err := r.eval(x.b, mids)
		if err != nil {
			return nil, err
		}
		out := make([][]ID, len(vs))
		sc := stopCheck{ctx: r.ctx}
		for i, l := range first {
			var ends []ID
			for _, m := range l {
				j, _ := slices.BinarySearch(mids, m)
				ends = append(ends, second[j]...)
				if err := sc.add(1 + len(second[j])); err != nil {
					return nil, err
				}
			}
			out[i] = ends
			if err := r.made(8 * int64(cap(ends))); err != nil {
				return nil, err
			}
		}
		return out, nil
	case pathAlt:
		left, err := r.eval(x.a, vs)
		if err != nil {
			return nil, err
		}
		right, err := r.eval(x.b, vs)
		if err != nil {
			return nil, err
		}
		out := make([][]ID, len(vs))
		for i := range vs {
			n := len(left[i]) + len(right[i])
			if err := r.made(8 * int64(n)); err != nil {
				return nil, err
			}
			out[i] = append(append(make([]ID, 0, n), left[i]...), right[i]...)
		}
		return out, nil
	case pathZeroOrOne:
		one, err := r.eval(x.a, vs)
		if err != nil {
			return nil, err
		}
		out := make([][]ID, len(vs))
		for i, v := range vs {
			l := append(append(make([]ID, 0, len(one[i])+1), one[i]...), v)
			slices.Sort(l)
			out[i] = slices.Compact(l)
		}
		return out, nil
	case pathZeroOrMore, pathOneOrMore:
		return r.closure(x.a, vs, x.op == pathZeroOrMore)
	}
	return nil, fmt.Errorf("BUG: path op %d", x.op)
}

// closure returns, for each start, the distinct nodes reached by one or
// more steps of x (and the start itself when zero): one breadth-first
// search per start, all advancing in rounds that read the adjacency of the
// new frontier nodes once.
func (r *pathReader) closure(x *pathExpr, vs []ID, zero bool) ([][]ID, error) {
	step := map[ID][]ID{} // distinct ends of one step of x from a node
	// The search's state is charged as it grows: about 2 bytes per node
	// reached in a bitmap, 8 in the frontiers, and the step lists.
	var reached, stepIDs int64
	g := growth{m: r.mem}
	defer g.done()
	charge := func() { g.to(10*reached + 8*stepIDs + 64*int64(len(step)) + 64*int64(len(vs))) }
	visited := make([]*roaring64.Bitmap, len(vs))
	frontier := make([][]ID, len(vs))
	for i, v := range vs {
		visited[i] = roaring64.New()
		if zero {
			visited[i].Add(uint64(v))
		}
		frontier[i] = []ID{v}
	}
	for {
		var need []ID
		for _, f := range frontier {
			for _, v := range f {
				if _, ok := step[v]; !ok {
					need = append(need, v)
				}
			}
		}
		slices.Sort(need)
		need = slices.Compact(need)
		if len(need) > 0 {
			ends, err := r.eval(x, need)
			if err != nil {
				return nil, err
			}
			for j, v := range need {
				l := slices.Clone(ends[j])
				slices.Sort(l)
				step[v] = slices.Compact(l)
				stepIDs += int64(len(step[v]))
			}
		}
		active := false
		sc := stopCheck{ctx: r.ctx, grow: charge}
		for i, f := range frontier {
			if err := sc.add(1); err != nil {
				return nil, err
			}
			var next []ID
			for _, v := range f {
				ws := step[v]
				if err := sc.add(len(ws)); err != nil {
					return nil, err
				}
				for _, w := range ws {
					if visited[i].CheckedAdd(uint64(w)) {
						next = append(next, w)
						reached++
					}
				}
			}
			frontier[i] = next
			active = active || len(next) > 0
		}
		if !active {
			break
		}
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
	}
	if err := r.made(8 * reached); err != nil {
		return nil, err
	}
	out := make([][]ID, len(vs))
	for i, b := range visited {
		l := make([]ID, 0, b.GetCardinality())
		it := b.Iterator()
		for it.HasNext() {
			l = append(l, ID(it.Next()))
		}
		out[i] = l
	}
	return out, nil
}

// starts returns the nodes from which x can match at least one step
// (possibly more than that: a start that matches nothing gives nothing).
func (r *pathReader) starts(x *pathExpr) ([]ID, error) {
	if x.zeroLength() {
		return r.allNodes()
	}
	switch x.op {
	case pathLink:
		switch {
		case x.pred == 0:
			return nil, nil
		case x.pred == graphstore.TypeID && x.dir == planner.In:
			var classes []ID
			for c, n := range r.stats.Classes {
				if n > 0 {
					classes = append(classes, c)
				}
			}
			slices.Sort(classes)
			return classes, nil
		}
		return r.index([]ID{x.pred}, x.dir)
	case pathNeg:
		var parts [][]ID
		if x.fwd {
			s, err := r.subjects()
			if err != nil {
				return nil, err
			}
			parts = append(parts, s)
		}
		if x.inv {
			o, err := r.objects()
			if err != nil {
				return nil, err
			}
			parts = append(parts, o)
		}
		return mergeUnion(parts), nil
	case pathSeq:
		if !x.a.zeroLength() {
			return r.starts(x.a)
		}
		fallthrough // a can match no step: a sequence starts where a or b does
	case pathAlt:
		a, err := r.starts(x.a)
		if err != nil {
			return nil, err
		}
		b, err := r.starts(x.b)
		if err != nil {
			return nil, err
		}
		return mergeUnion([][]ID{a, b}), nil
	case pathOneOrMore:
		return r.starts(x.a)
	}
	return nil, fmt.Errorf("BUG: starts of path op %d", x.op)
}

// pathEnd is one end of a path pattern as the rows see it.
type pathEnd struct {
	col   int // column of a variable in the output table; -1: a constant
	id    ID  // the constant's ID (query-local when the dictionary does not know it)
	bound bool
}

// value returns the end's value in row (0: unbound).
func (p pathEnd) value(t *Table, row int) ID {
	if p.col < 0 {
		return p.id
	}
	return t.At(p.col, row)
}

// evalPathPattern joins the rows of input with the solutions of pp over
// st, evaluated from node self. The result has input's columns and, after
// them, a column for each variable of pp that input does not have.
// Constants the dictionary does not know get IDs from locals.
func evalPathPattern(ctx context.Context, st Store, self int, pp *sparql.PathPattern, input *Table, locals *TermTable, mem *memAccount) (*Table, *ReadCost, error) {
	fwd, err := compilePath(pp.Path, false, st.LookupTerm)
	if err != nil {
		return nil, nil, err
	}
	bwd, err := compilePath(pp.Path, true, st.LookupTerm)
	if err != nil {
		return nil, nil, err
	}
	// The output columns: input's, then the new variables.
	t := &Table{Vars: append([]sparql.Var(nil), input.Vars...), Cols: append([][]ID(nil), input.Cols...), N: input.N}
	end := func(x sparql.TermOrVar) pathEnd {
		if x.Var == "" {
			id, ok := st.LookupTerm(x.Term)
			if !ok {
				id = locals.Intern(x.Term)
			}
			return pathEnd{col: -1, id: id}
		}
		c := t.Col(x.Var)
		if c < 0 {
			t.Vars = append(t.Vars, x.Var)
			t.Cols = append(t.Cols, nil)
			c = len(t.Vars) - 1
		}
		return pathEnd{col: c}
	}
	s, o := end(pp.S), end(pp.O)
	same := s.col >= 0 && s.col == o.col

	r := newPathReader(ctx, st, self, mem)
	// Rows by what is bound: subject (forwards), object only (backwards),
	// neither (every solution).
	var fromS, fromO []ID
	free := false
	for row := 0; row < t.N; row++ {
		sv, ov := s.value(t, row), o.value(t, row)
		switch {
		case sv != 0:
			fromS = append(fromS, sv)
		case ov != 0:
			fromO = append(fromO, ov)
		default:
			free = true
		}
	}
	fromS = sortDistinct(fromS)
	fromO = sortDistinct(fromO)
	if s.col >= 0 && o.col >= 0 {
		// Both ends are variables: the pattern's solutions are pairs of
		// nodes of the graph (§18.5: "for each node x in the graph"), so a
		// value bound by an earlier step that is not a node matches
		// nothing, not even with a zero-length path. (A constant end is
		// its own zero-length match, in the graph or not.)
		if fromS, err = r.nodesOnly(fromS); err != nil {
			return nil, nil, err
		}
		if fromO, err = r.nodesOnly(fromO); err != nil {
			return nil, nil, err
		}
	}
	endsS, err := r.eval(fwd, fromS)
	if err != nil {
		return nil, nil, err
	}
	endsO, err := r.eval(bwd, fromO)
	if err != nil {
		return nil, nil, err
	}
	// Every solution (x, y), for rows with neither end bound.
	var allX, allY []ID
	if free {
		starts, err := r.starts(fwd)
		if err != nil {
			return nil, nil, err
		}
		ends, err := r.eval(fwd, starts)
		if err != nil {
			return nil, nil, err
		}
		// The pairs are charged as they grow (16 bytes each).
		g := growth{m: mem}
		sc := stopCheck{ctx: ctx, grow: func() { g.to(16 * int64(cap(allX))) }}
		for i, x := range starts {
			if err := sc.add(1 + len(ends[i])); err != nil {
				return nil, nil, err
			}
			for _, y := range ends[i] {
				if same && x != y {
					continue
				}
				allX = append(allX, x)
				allY = append(allY, y)
			}
		}
	}

	src := make([]int32, 0, t.N)
	var newS, newO []ID // values of s / o per output row (written when unbound in the row)
	// The output rows are charged as they are made (20 bytes of src,
	// newS, newO, and 8 per input column once gathered).
	rowBytes := int64(20 + 8*len(t.Cols))
	g := growth{m: mem}
	sc := stopCheck{ctx: ctx, grow: func() { g.to(rowBytes * int64(len(src))) }}
	var stop error
	emit := func(row int, sv, ov ID) {
		src = append(src, int32(row))
		newS = append(newS, sv)
		newO = append(newO, ov)
		if err := sc.add(1); err != nil && stop == nil {
			stop = err
		}
	}
	for row := 0; row < t.N && stop == nil; row++ {
		sv, ov := s.value(t, row), o.value(t, row)
		switch {
		case sv != 0:
			i, ok := slices.BinarySearch(fromS, sv)
			if !ok {
				continue // not a node
			}
			for _, y := range endsS[i] {
				if ov == 0 || y == ov {
					emit(row, sv, y)
				}
			}
		case ov != 0:
			i, ok := slices.BinarySearch(fromO, ov)
			if !ok {
				continue // not a node
			}
			for _, x := range endsO[i] {
				emit(row, x, ov)
			}
		default:
			for k, x := range allX {
				if emit(row, x, allY[k]); stop != nil {
					break
				}
			}
		}
	}
	if stop == nil {
		sc.grow()
		stop = ctx.Err()
	}
	if stop != nil {
		return nil, nil, stop
	}
	out := t.gather(src)
	if s.col >= 0 {
		out.Cols[s.col] = newS
	}
	if o.col >= 0 && !same {
		out.Cols[o.col] = newO
	}
	return out, &r.cost, nil
}

// sortDistinct sorts l and removes duplicates in place.
func sortDistinct(l []ID) []ID {
	slices.Sort(l)
	return slices.Compact(l)
}

type localsKey struct{}

// withLocals gives the query running under ctx its table of local terms.
func withLocals(ctx context.Context, tt *TermTable) context.Context {
	return context.WithValue(ctx, localsKey{}, tt)
}

// localsOf returns the query's table of local terms (a new one when the
// context carries none).
func localsOf(ctx context.Context) *TermTable {
	if tt, ok := ctx.Value(localsKey{}).(*TermTable); ok {
		return tt
	}
	return &TermTable{}
}
