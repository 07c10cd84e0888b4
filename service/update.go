package service

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/internal/cpugate"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
	"github.com/wukongd/wukongd/web"
)

// Update implements web.Backend. It runs the operations of SPARQL 1.1
// Update on the dataset: INSERT DATA and DELETE DATA (with GRAPH blocks),
// DELETE/INSERT … WHERE (WITH, USING, USING NAMED; the WHERE runs on the
// engine), CLEAR, DROP and CREATE of GRAPH, DEFAULT, NAMED and ALL, and
// ADD, COPY and MOVE. The operations run in order, each seeing the
// effects of those before it, and the request publishes as one change:
// readers see the dataset before the request or after all of it. An
// operation that fails (a missing graph without SILENT, LOAD, a WHERE the
// engine cannot run) fails the request and nothing changes.
//
// The parse and the edit pass through cpugate.Writers: while queries run,
// the writers together keep off one processor (a query need not wait
// behind 16 writers' parses), and when none run they use all of them.
func (s *Service) Update(ctx context.Context, req *web.UpdateRequest) error {
	if err := cpugate.Writers.EnterContext(ctx); err != nil {
		return err
	}
	u, err := s.cache.ParseUpdateBase(ctx, req.Update, req.Base)
	cpugate.Writers.Leave()
	if err != nil {
		return err // *sparql.SyntaxError
	}
	using := usingOf(req)
	if err := s.checkUpdate(u, req); err != nil {
		return err
	}
	if len(u.Operations) == 0 {
		return nil
	}
	loads, err := s.fetchLoads(ctx, u.Operations, req.AllowedLoads)
	if err != nil {
		return err
	}
	return s.change(ctx, func(g *generation) (*graphstore.Dataset, []graphstore.GraphChange, error) {
		if err := cpugate.Writers.EnterContext(ctx); err != nil {
			return nil, nil, err
		}
		defer cpugate.Writers.Leave()
		r := &updateRun{svc: s, ctx: ctx, base: g.ds, baseGen: g, cur: g.ds, using: using,
			touched: map[rdf.Term]bool{}, exists: map[rdf.Term]bool{}, loads: loads}
		ds, err := r.run(u.Operations)
		if err != nil {
			r.discard()
			return nil, nil, err
		}
		return ds, r.applied, nil
	})
}

// usingOf returns the request's protocol dataset (using-graph-uri,
// using-named-graph-uri), nil if it has none.
func usingOf(req *web.UpdateRequest) *sparql.Dataset {
	if len(req.UsingGraphs) > 0 || len(req.UsingNamedGraphs) > 0 {
		return &sparql.Dataset{Default: req.UsingGraphs, Named: req.UsingNamedGraphs}
	}
	return nil
}

// checkUpdate checks what can be checked before changing anything.
func (s *Service) checkUpdate(u *sparql.Update, req *web.UpdateRequest) error {
	using := usingOf(req)
	for _, op := range u.Operations {
		switch op := op.(type) {
		case *sparql.Modify:
			if using != nil && (op.Using != nil || op.With != "") {
				return fmt.Errorf("%w: the update has USING or WITH (line %d) and the request using-graph-uri or using-named-graph-uri: give the dataset in one place",
					web.ErrBadRequest, op.Line)
			}
		}
	}
	return nil
}

// updateRun applies the operations of one request. Changes that need no
// reading collect in pending and are applied together
// (graphstore.Dataset.Apply); an operation that reads a graph the pending
// changes touch (ADD, COPY, MOVE) or the whole dataset (a WHERE) applies
// them first, into an intermediate dataset that only this request sees.
type updateRun struct {
	svc     *Service
	ctx     context.Context
	base    *graphstore.Dataset // the served dataset (not ours to close)
	baseGen *generation         // its generation (engine: its engine)
	cur     *graphstore.Dataset // base, or an intermediate dataset we own
	using   *sparql.Dataset     // the request's using-graph-uri / using-named-graph-uri
	pending []graphstore.GraphChange
	applied []graphstore.GraphChange // every change applied so far, in order (the request's log record)
	touched map[rdf.Term]bool        // graphs the pending changes touch
	exists  map[rdf.Term]bool        // named graphs the pending changes create (true) or drop (false)
	loads   map[*sparql.Load]loaded  // the LOAD sources, fetched before the run
	// dry: collect the changes without applying them (a cluster proposes
	// them to its log: replicated.go); reads: a WHERE read the store.
	dry, reads bool
}

// run applies ops and returns the resulting dataset (nil: unchanged).
func (r *updateRun) run(ops []sparql.UpdateOp) (*graphstore.Dataset, error) {
	for _, op := range ops {
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		if err := r.op(op); err != nil {
			return nil, err
		}
	}
	if r.dry {
		r.applied = append(r.applied, r.pending...)
		r.pending = nil
		return nil, nil
	}
	if err := r.flush(); err != nil {
		return nil, err
	}
	if r.cur == r.base {
		return nil, nil
	}
	ds := r.cur
	r.cur = r.base
	return ds, nil
}

// discard drops the intermediate dataset after an error.
func (r *updateRun) discard() {
	if r.cur != r.base {
		r.cur.Discard()
		r.cur = r.base
	}
}

// flush applies the pending changes: the first flush of the request makes
// the next version (Apply), later ones amend it (one request, one
// version).
func (r *updateRun) flush() error {
	if len(r.pending) == 0 {
		return nil
	}
	if r.dry {
		return fmt.Errorf("%w: in a cluster, an operation that reads the store (DELETE/INSERT … WHERE, ADD, COPY, MOVE) after one that changed it in the same request (send them as two requests)", web.ErrUnsupported)
	}
	ds, err := r.svc.reasoner.apply(r.ctx, r.cur, r.pending, r.cur != r.base) // Apply or Amend, and the reasoner's maintenance (reason.go)
	if err != nil {
		return err
	}
	if r.cur != r.base {
		r.cur.Close() // an intermediate state, superseded (not discarded: ds holds its changes)
	}
	r.cur = ds
	r.applied = append(r.applied, r.pending...)
	r.pending = nil
	clear(r.touched)
	clear(r.exists)
	return nil
}

func (r *updateRun) add(c graphstore.GraphChange) {
	r.pending = append(r.pending, c)
	r.touched[c.Graph] = true
}

// graphExists reports whether graph name (zero: the default graph, which
// always exists) exists after the operations so far.
func (r *updateRun) graphExists(name rdf.Term) bool {
	if name.IsZero() {
		return true
	}
	if e, ok := r.exists[name]; ok {
		return e
	}
	_, ok := r.cur.Graph(name)
	return ok
}

// namedGraphs returns the named graphs after the operations so far.
func (r *updateRun) namedGraphs() []rdf.Term {
	var out []rdf.Term
	for _, g := range r.cur.Graphs() {
		if e, ok := r.exists[g.Name]; !ok || e {
			out = append(out, g.Name)
		}
	}
	for name, e := range r.exists {
		if _, ok := r.cur.Graph(name); e && !ok {
			out = append(out, name)
		}
	}
	return out
}

// graphOf names a graph of an update: the default graph for "".
func graphOf(iri string) rdf.Term {
	if iri == "" {
		return rdf.Term{}
	}
	return rdf.NewIRI(iri)
}

func graphLabel(name rdf.Term) string {
	if name.IsZero() {
		return "DEFAULT"
	}
	return "GRAPH " + name.String()
}

// missing is the error for an operation on a graph that does not exist.
func missing(op sparql.UpdateOp, name rdf.Term) error {
	return fmt.Errorf("%w: %s (line %d): there is no graph %s (add SILENT to ignore this)", web.ErrNotFound, opName(op), op.Position().Line, name)
}

func (r *updateRun) op(op sparql.UpdateOp) error {
	switch op := op.(type) {
	case *sparql.InsertData:
		return r.insertData(op.Quads)
	case *sparql.DeleteData:
		byGraph, order, err := groupQuads(r.ctx, op.Quads)
		if err != nil {
			return err
		}
		for _, g := range order {
			if r.graphExists(g) {
				r.add(graphstore.GraphChange{Graph: g, Delete: byGraph[g]})
			}
		}
	case *sparql.Clear:
		return r.clearOrDrop(op, op.Target, op.Silent, false)
	case *sparql.Drop:
		return r.clearOrDrop(op, op.Target, op.Silent, true)
	case *sparql.Create:
		name := graphOf(op.Graph)
		if r.graphExists(name) {
			if op.Silent {
				return nil
			}
			return fmt.Errorf("%w: CREATE GRAPH %s (line %d): the graph exists (add SILENT to ignore this)", web.ErrBadRequest, name, op.Line)
		}
		r.add(graphstore.GraphChange{Graph: name, Clear: true})
		r.exists[name] = true
	case *sparql.Add:
		return r.transfer(op, op.From, op.To, op.Silent, false, false)
	case *sparql.Copy:
		return r.transfer(op, op.From, op.To, op.Silent, true, false)
	case *sparql.Move:
		return r.transfer(op, op.From, op.To, op.Silent, true, true)
	case *sparql.Modify:
		return r.modify(op)
	case *sparql.Load:
		r.load(op)
	default:
		return unsupported(op.Position(), opName(op)+" updates")
	}
	return nil
}

// load adds the triples LOAD fetched to its graph (INTO GRAPH g: g,
// created if it does not exist). A LOAD SILENT whose source was refused or
// failed does nothing.
func (r *updateRun) load(op *sparql.Load) {
	l := r.loads[op]
	if l.err != nil {
		return
	}
	g := graphOf(op.Into)
	r.add(graphstore.GraphChange{Graph: g, Clear: !r.graphExists(g), Insert: l.triples})
	if !g.IsZero() {
		r.exists[g] = true
	}
}

// insertData inserts quads; their blank nodes are new nodes (one scope per
// INSERT DATA).
func (r *updateRun) insertData(quads []rdf.Quad) error {
	fresh := r.svc.newBlankPrefix()
	byGraph, order, err := groupQuads(r.ctx, quads)
	if err != nil {
		return err
	}
	for _, g := range order {
		ts := byGraph[g]
		for i := range ts {
			if i%quadCheck == 0 {
				if err := r.ctx.Err(); err != nil {
					return err
				}
			}
			for _, x := range []*rdf.Term{&ts[i].S, &ts[i].O} {
				if x.IsBlank() {
					*x = rdf.NewBlank(fresh + x.Value)
				}
			}
		}
		r.add(graphstore.GraphChange{Graph: g, Insert: ts})
		if len(ts) > 0 && !g.IsZero() {
			r.exists[g] = true
		}
	}
	return nil
}

// quadCheck is how many quads pass between two looks at the request's
// context in the loops over an update's data (a few hundred microseconds;
// at a load of 20 on two cores, several milliseconds).
const quadCheck = 4096

// groupQuads splits quads by graph (a copy: the parsed update is shared
// through the cache), graphs in order of first appearance; it stops with
// ctx's error once ctx is done.
func groupQuads(ctx context.Context, quads []rdf.Quad) (map[rdf.Term][]rdf.Triple, []rdf.Term, error) {
	byGraph := map[rdf.Term][]rdf.Triple{}
	var order []rdf.Term
	for i := 0; i < len(quads); {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		// A run of quads of one graph (the common case: a whole block)
		// is appended with one map lookup.
		g := quads[i].G
		j := i + 1
		for j < len(quads) && j-i < quadCheck && quads[j].G == g {
			j++
		}
		ts, ok := byGraph[g]
		if !ok {
			order = append(order, g)
			ts = make([]rdf.Triple, 0, j-i)
		}
		for _, q := range quads[i:j] {
			ts = append(ts, q.Triple())
		}
		byGraph[g] = ts
		i = j
	}
	return byGraph, order, nil
}

// clearOrDrop runs CLEAR or DROP of a target. Dropping the default graph
// empties it (it always exists).
func (r *updateRun) clearOrDrop(op sparql.UpdateOp, t sparql.GraphTarget, silent, drop bool) error {
	do := func(name rdf.Term) {
		if drop && !name.IsZero() {
			r.add(graphstore.GraphChange{Graph: name, Drop: true})
			r.exists[name] = false
			return
		}
		r.add(graphstore.GraphChange{Graph: name, Clear: true})
	}
	switch t.Kind {
	case sparql.TargetGraph:
		name := graphOf(t.IRI)
		if !r.graphExists(name) {
			if silent {
				return nil
			}
			return missing(op, name)
		}
		do(name)
	case sparql.TargetDefault:
		do(rdf.Term{})
	case sparql.TargetNamed, sparql.TargetAll:
		for _, name := range r.namedGraphs() {
			do(name)
		}
		if t.Kind == sparql.TargetAll {
			do(rdf.Term{})
		}
	default:
		return fmt.Errorf("BUG: graph target kind %d", t.Kind)
	}
	return nil
}

// transfer runs ADD (replace false), COPY (replace) and MOVE (replace,
// drop the source) from one graph to another.
func (r *updateRun) transfer(op sparql.UpdateOp, from, to sparql.GraphRef, silent, replace, move bool) error {
	src, dst := graphOf(from.IRI), graphOf(to.IRI)
	if src == dst {
		return nil // to itself: nothing changes
	}
	if !r.graphExists(src) {
		if silent {
			return nil
		}
		return missing(op, src)
	}
	if r.dry {
		// The source is the default graph, the target a named graph.
		return fmt.Errorf("%w: %s (line %d) to a named graph in a cluster (a cluster holds the default graph only)", web.ErrUnsupported, opName(op), op.Position().Line)
	}
	if r.touched[src] {
		if err := r.flush(); err != nil {
			return err
		}
	}
	st, ok := r.cur.Default(), true
	if !src.IsZero() {
		st, ok = r.cur.Graph(src)
	}
	var triples []rdf.Triple
	if ok {
		var err error
		if triples, err = graphTriples(r.ctx, r.cur.Dict(), st); err != nil {
			return fmt.Errorf("cannot read %s: %w", graphLabel(src), err)
		}
	}
	r.add(graphstore.GraphChange{Graph: dst, Clear: replace || !r.graphExists(dst), Insert: triples})
	if !dst.IsZero() {
		r.exists[dst] = true
	}
	if move {
		r.add(graphstore.GraphChange{Graph: src, Drop: true})
		if !src.IsZero() {
			r.exists[src] = false
		}
	}
	return nil
}

// modify runs DELETE/INSERT … WHERE: the WHERE is evaluated by the engine
// on the dataset as the operations so far left it (with USING / USING
// NAMED, the request's using-graph-uri / using-named-graph-uri, or WITH
// as its default graph), then the templates are instantiated with every
// solution: the DELETE triples are removed and the INSERT triples added
// (per graph, deletions first). A template triple with an unbound
// variable, a literal subject or a predicate that is not an IRI, or a
// GRAPH variable bound to anything but an IRI, is skipped.
func (r *updateRun) modify(m *sparql.Modify) error {
	pattern := m.Pattern
	if r.dry && len(r.pending) > 0 {
		// A cluster's proposer applies nothing: the WHERE reads the
		// version with the request's changes so far laid over it
		// (overlay.go).
		if r.using != nil || m.Using != nil || m.With != "" {
			return fmt.Errorf("%w: in a cluster, a WHERE with USING or WITH after a change in the same request (send them as two requests)", web.ErrUnsupported)
		}
		n, err := netOf(r.pending)
		if err != nil {
			return err
		}
		if pattern, err = overlayPattern(m.Pattern, n); err != nil {
			return err
		}
	} else if err := r.flush(); err != nil {
		return err
	}
	vars := modifyVars(m)
	q := &sparql.Query{Pos: m.Pos, Form: sparql.FormSelect, Pattern: pattern, Vars: vars}
	switch {
	case r.using != nil:
		q.Dataset = r.using
	case m.Using != nil:
		q.Dataset = m.Using
	case m.With != "":
		// WITH names the default graph of the WHERE; the named graphs stay.
		q.Dataset = &sparql.Dataset{Default: []string{m.With}}
		for _, g := range r.cur.Graphs() {
			if g.Name.IsIRI() {
				q.Dataset.Named = append(q.Dataset.Named, g.Name.Value)
			}
		}
	}
	r.reads = true
	var eng *exec.Engine
	var err error
	if r.cur == r.base {
		eng, err = r.baseGen.engine()
	} else if eng, err = r.svc.newEngine(r.cur); err == nil {
		defer eng.Close()
	}
	if err != nil {
		return err
	}
	res, err := eng.Run(r.ctx, q, exec.Options{Mode: r.svc.opts.Mode, ForkThreshold: r.svc.opts.ForkThreshold})
	if err != nil {
		if ctxErr := r.ctx.Err(); ctxErr != nil && !isCtxErr(err) {
			return fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return engineError(err, q)
	}
	col := map[sparql.Var]int{}
	for i, v := range res.Vars {
		col[v] = i
	}
	with := graphOf(m.With)
	dels, ins := map[rdf.Term][]rdf.Triple{}, map[rdf.Term][]rdf.Triple{}
	var order []rdf.Term
	note := func(g rdf.Term) {
		if _, ok := dels[g]; ok {
			return
		}
		if _, ok := ins[g]; ok {
			return
		}
		order = append(order, g)
	}
	prefix := r.svc.newBlankPrefix()
	var row []rdf.Term
	for i := 0; i < res.Len(); i++ {
		if i%ctxCheckEvery == 0 {
			if err := r.ctx.Err(); err != nil {
				return err
			}
		}
		row = res.Row(i, row)
		bind := func(x sparql.TermOrVar, blanks string) rdf.Term {
			if x.IsVar() {
				if c, ok := col[x.Var]; ok {
					return row[c]
				}
				return rdf.Term{}
			}
			if blanks != "" && x.Term.IsBlank() {
				return rdf.NewBlank(blanks + x.Term.Value)
			}
			return x.Term
		}
		inst := func(qp sparql.QuadPattern, blanks string) (rdf.Term, rdf.Triple, bool) {
			g := with
			if qp.G.IsVar() || !qp.G.Term.IsZero() {
				if g = bind(qp.G, ""); !g.IsIRI() {
					return rdf.Term{}, rdf.Triple{}, false
				}
			}
			t := rdf.Triple{S: bind(qp.S, blanks), P: bind(qp.P, blanks), O: bind(qp.O, blanks)}
			if t.S.IsZero() || t.S.IsLiteral() || !t.P.IsIRI() || t.O.IsZero() {
				return rdf.Term{}, rdf.Triple{}, false
			}
			return g, t, true
		}
		for _, qp := range m.Delete {
			if g, t, ok := inst(qp, ""); ok {
				note(g)
				dels[g] = append(dels[g], t)
			}
		}
		blanks := fmt.Sprintf("%sr%d_", prefix, i)
		for _, qp := range m.Insert {
			if g, t, ok := inst(qp, blanks); ok {
				note(g)
				ins[g] = append(ins[g], t)
			}
		}
	}
	for _, g := range order {
		c := graphstore.GraphChange{Graph: g, Insert: ins[g]}
		if r.graphExists(g) {
			c.Delete = dels[g]
		}
		if len(c.Delete) == 0 && len(c.Insert) == 0 {
			continue
		}
		r.add(c)
		if len(c.Insert) > 0 && !g.IsZero() {
			r.exists[g] = true
		}
	}
	return nil
}

// modifyVars returns the variables of the templates of m, sorted (the
// WHERE is evaluated for these).
func modifyVars(m *sparql.Modify) []sparql.Var {
	seen := map[sparql.Var]bool{}
	var vars []sparql.Var
	for _, qps := range [][]sparql.QuadPattern{m.Delete, m.Insert} {
		for _, qp := range qps {
			for _, x := range []sparql.TermOrVar{qp.S, qp.P, qp.O, qp.G} {
				if x.IsVar() && !seen[x.Var] {
					seen[x.Var] = true
					vars = append(vars, x.Var)
				}
			}
		}
	}
	slices.Sort(vars)
	return vars
}

func opName(op sparql.UpdateOp) string {
	switch op.(type) {
	case *sparql.InsertData:
		return "INSERT DATA"
	case *sparql.DeleteData:
		return "DELETE DATA"
	case *sparql.Modify:
		return "DELETE/INSERT … WHERE"
	case *sparql.Load:
		return "LOAD"
	case *sparql.Clear:
		return "CLEAR"
	case *sparql.Drop:
		return "DROP"
	case *sparql.Create:
		return "CREATE"
	case *sparql.Copy:
		return "COPY"
	case *sparql.Move:
		return "MOVE"
	case *sparql.Add:
		return "ADD"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", op), "*sparql.")
}
