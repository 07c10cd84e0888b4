package exec

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/sparql"
)

// Options are the per-query options of Run.
type Options struct {
	// Mode forces the execution mode of every step that needs remote data
	// (planner.ModeInPlace or planner.ModeForkJoin); ModeAuto lets the
	// planner choose per step.
	Mode planner.Mode
	// ForkThreshold overrides the rows from which a step forks in auto
	// mode (0: derived from the cost model).
	ForkThreshold float64
	// Analyze measures every step (EXPLAIN ANALYZE).
	Analyze bool
	// Explicit runs the query on the explicit triples only: on a dataset
	// with reasoning the default graph's inferred triples are left out
	// (explicit.go); otherwise it changes nothing.
	Explicit bool
	// HoldMemory keeps the query's memory account after Run returns: the
	// answer (its rows' columns, its triples, the terms it made) stays
	// charged to the query's and the engine's budgets while the caller
	// writes it, and the caller may charge its own buffers for it
	// (Result.Grow), until Result.Release. Without it the account is
	// closed when Run returns.
	HoldMemory bool
}

// Config configures an Engine.
type Config struct {
	// Workers is the number of idle worker goroutines each node keeps
	// for its jobs (default GOMAXPROCS). It bounds no work: a job (a new
	// query's exploration, a forked sub-query) that finds no worker idle
	// runs on a goroutine of its own, so no job waits for another to end
	// (the service's admission cap bounds the queries, their budgets the
	// memory, the Go scheduler shares the processors).
	Workers int
	// Cost is the fabric cost model for the planner (zero: DefaultCost).
	Cost planner.Cost
	// LocalShards lists the shards whose nodes this engine runs (nil:
	// all). In a cluster of processes (package cluster) each process runs
	// its own shards; the others are reached through the Store and the
	// Transport, and queries are coordinated on a local shard.
	LocalShards []int
	// MaxQueryMemory bounds the memory one query accounts (budget.go), in
	// bytes: 0 DefaultQueryMemory(), < 0 none. A query past it fails with
	// a *MemoryError (ErrMemoryBudget).
	MaxQueryMemory int64
	// MaxMemory bounds the sum over the engine's running queries: 0
	// DefaultMemory(), < 0 none.
	MaxMemory int64
	// MaxValueBytes bounds a string an expression makes (0:
	// expr.DefaultMaxValue); past it the query fails with
	// ErrValueTooLarge.
	MaxValueBytes int
}

// DefaultQueryMemory is the default per-query budget: 1/32 of the
// machine's RAM (768 MiB on 24 GiB), at least 256 MiB.
func DefaultQueryMemory() int64 { return max(physicalMemory()/32, 256<<20) }

// DefaultMemory is the default budget of all queries together: 1/16 of
// the machine's RAM (1.5 GiB on 24 GiB), at least 512 MiB.
func DefaultMemory() int64 { return max(physicalMemory()/16, 512<<20) }

// ErrClosed is returned by Run on a closed engine.
var ErrClosed = errors.New("engine closed")

// Engine runs queries over a sharded store: one node per shard, each with
// its idle worker goroutines and a dispatcher that takes the node's
// messages (sub-queries, replies, cancels) off the transport. A job that
// finds no idle worker runs on a goroutine of its own (node.start). It is
// safe for concurrent use; Close stops every goroutine it started.
type Engine struct {
	store  Store
	tr     Transport
	statsp atomic.Pointer[planner.Stats] // the store's statistics (ForgetPlans reads them again)
	cfg    Config
	nodes  []*node // by shard; nil for a shard not run here
	local  []int   // shards run here
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// spawnMu orders node.start's wg.Add against Close's wg.Wait: once
	// spawnClosed is set no job starts on a goroutine of its own.
	spawnMu     sync.RWMutex
	spawnClosed bool
	rr          atomic.Uint64
	closed      atomic.Bool
	graphs      engineGraphs // named graphs (dataset.go)
	parsed      *sparql.Cache
	shapes      *sparql.Shapes // templates of query shapes for Query (params.go)
	plans       planCache
	// planEpoch counts ForgetPlans: a plan built across one is not kept.
	planEpoch atomic.Uint64
	tplans    templatePlans // plans of query templates (params.go)
	// busy counts the workers running a job (a query's exploration or a
	// sub-query), for tests that check cancelled work stops.
	busy atomic.Int64
	// memUsed is the memory the running queries account (budget.go).
	memUsed atomic.Int64
	// typeSets caches, per node, bitmaps of classes' instances
	// (typeSetKey → *idSet, nil when too sparse), for type checks.
	typeSets sync.Map
	// typeRows counts, per node and class, the rows type-checked row by
	// row (a lookup each) because no bitmap was built (typeSetsPay).
	typeRows sync.Map // typeSetKey{node, node, class} → *atomic.Int64
}

// planCache keeps the plans of recently run queries, keyed by the parsed
// query (the parse cache hands out one *sparql.Query per text) and the
// options that change the plan. Plans are immutable once built. It is
// bounded in entries and in bytes (each charged its query's Weight); the
// plan of a query heavier than maxPlanWeight is not kept.
type planCache struct{ planMap }

// planMap is the map both plan caches keep (planCache here, templatePlans
// in params.go), bounded in bytes by the caller.
type planMap struct {
	mu    sync.Mutex
	m     map[planKey]*cachedPlan
	bytes int
}

type planKey struct {
	q         *sparql.Query
	mode      planner.Mode
	threshold float64
}

const (
	planCacheSize  = 1024
	planCacheBytes = 64 << 20
	maxPlanWeight  = 1 << 20
)

// get returns the plan kept for k, if any: an inherited one
// (InheritPlans) only once its constants are checked against catalog.
func (c *planCache) get(k planKey, catalog planner.Catalog, now *planner.Stats) *planner.Plan {
	c.mu.Lock()
	cp := c.m[k]
	c.mu.Unlock()
	if cp == nil {
		return nil
	}
	if !cp.inherited {
		return cp.p
	}
	if !c.settle(k, cp, catalog, now) {
		return nil
	}
	return cp.p
}

func (c *planCache) put(k planKey, p *planner.Plan, terms []termLookup, stats *planner.Stats) {
	w := k.q.Weight()
	if w > maxPlanWeight {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= planCacheSize || c.bytes+w > planCacheBytes {
		c.m = map[planKey]*cachedPlan{} // simple bound: start over
		c.bytes = 0
	}
	if old := c.m[k]; old != nil {
		c.bytes -= w
	}
	c.m[k] = &cachedPlan{p: p, terms: terms, stats: stats}
	c.bytes += w
}

// stats returns the statistics the engine plans with.
func (e *Engine) stats() *planner.Stats { return e.statsp.Load() }

// ForgetPlans drops the cached plans (of queries and of templates). A
// plan is made with the store's terms as they were: a constant the
// dictionary did not know then makes a plan with no answers. A store
// whose dictionary grows under a running engine (a cluster node applying
// its replicated log) calls this when it gained terms. The store's
// statistics are read again too (PlannerStats): a class the store gained
// is then one the engine enumerates (an rdf:type step with a variable
// class reads the index of every class the statistics know).
func (e *Engine) ForgetPlans() {
	e.statsp.Store(e.store.PlannerStats())
	e.planEpoch.Add(1)
	e.plans.mu.Lock()
	e.plans.m, e.plans.bytes = nil, 0
	e.plans.mu.Unlock()
	e.tplans.mu.Lock()
	e.tplans.m, e.tplans.bytes = nil, 0
	e.tplans.mu.Unlock()
}

// node is one node of the cluster as the engine runs it.
type node struct {
	id      int
	eng     *Engine
	jobs    chan func()   // a job for an idle worker (unbuffered: taken only by a worker waiting for it)
	forks   atomic.Uint64 // fork IDs of this node
	mu      sync.Mutex
	pending map[uint64]chan pendingReply // forks this node waits for
	running map[forkKey]context.CancelFunc
}

type forkKey struct {
	from int
	fork uint64
}

type pendingReply struct {
	rep  *reply
	size int
	err  error
}

// New starts an engine over store, with tr carrying the messages between
// its nodes.
func New(store Store, tr Transport, cfg Config) *Engine {
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.Cost == (planner.Cost{}) {
		cfg.Cost = planner.DefaultCost()
	}
	if cfg.MaxQueryMemory == 0 {
		cfg.MaxQueryMemory = DefaultQueryMemory()
	}
	if cfg.MaxMemory == 0 {
		cfg.MaxMemory = DefaultMemory()
	}
	e := &Engine{store: store, tr: tr, cfg: cfg, parsed: sparql.NewCache(planCacheSize),
		shapes: sparql.NewShapes(0, 0)}
	e.statsp.Store(store.PlannerStats())
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.local = cfg.LocalShards
	if e.local == nil {
		for i := 0; i < store.Shards(); i++ {
			e.local = append(e.local, i)
		}
	}
	e.nodes = make([]*node, store.Shards())
	for _, i := range e.local {
		n := &node{id: i, eng: e, jobs: make(chan func()),
			pending: map[uint64]chan pendingReply{}, running: map[forkKey]context.CancelFunc{}}
		e.nodes[i] = n
		e.wg.Add(1)
		go n.dispatch()
		for w := 0; w < cfg.Workers; w++ {
			e.wg.Add(1)
			go n.work()
		}
	}
	return e
}

// Close stops the workers and dispatchers and waits for them. Queries in
// flight fail with ErrClosed or a context error.
func (e *Engine) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	e.cancel()
	e.spawnMu.Lock()
	e.spawnClosed = true
	e.spawnMu.Unlock()
	if p, ok := e.tr.(*muxPort); ok {
		p.detach() // the dispatchers see it closed (after the cancel: they exit quietly)
	}
	e.wg.Wait()
	e.closeGraphs()
	return nil
}

// Store returns the engine's store.
func (e *Engine) Store() Store { return e.store }

// work is an idle worker: it runs the jobs handed to it (start).
func (n *node) work() {
	defer n.eng.wg.Done()
	for {
		select {
		case f := <-n.jobs:
			n.eng.run(f)
		case <-n.eng.ctx.Done():
			return
		}
	}
}

// start runs job f on the node: on an idle worker, else on a goroutine of
// its own. A fixed pool that jobs queue for lets one query's long
// exploration hold back every query behind it: with three heavy cross
// products running, one in thirteen `LIMIT 5` queries waited 2.5–2.8 s
// for a worker of its coordinator's node while another node's sat idle
// (docs/PERFORMANCE.md, issue 13). f must end once its context does.
func (n *node) start(f func()) {
	select {
	case n.jobs <- f:
	default:
		e := n.eng
		e.spawnMu.RLock()
		defer e.spawnMu.RUnlock()
		if e.spawnClosed {
			return // its waiter sees the engine closed
		}
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			e.run(f)
		}()
	}
}

// run runs a job on a worker, counted as busy.
func (e *Engine) run(f func()) {
	e.busy.Add(1)
	defer e.busy.Add(-1)
	f()
}

// dispatch takes the node's messages off the transport.
func (n *node) dispatch() {
	defer n.eng.wg.Done()
	for {
		mctx := n.eng.ctx
		var from int
		var msg []byte
		var err error
		if ct, ok := n.eng.tr.(ContextTransport); ok {
			mctx, from, msg, err = ct.RecvContext(n.eng.ctx, n.id)
		} else {
			from, msg, err = n.eng.tr.Recv(n.eng.ctx, n.id)
		}
		if err != nil {
			if n.eng.ctx.Err() != nil {
				return
			}
			// A broken transport: nothing more will arrive. Fail the
			// queries waiting on this node.
			n.failPending(fmt.Errorf("node %d cannot receive: %w", n.id, err))
			return
		}
		if len(msg) == 0 {
			continue
		}
		switch msg[0] {
		case msgSubQuery:
			q, err := decodeSubQuery(msg)
			if err != nil {
				// Without a fork ID we cannot answer; the parent's deadline
				// ends its wait.
				continue
			}
			ctx, cancel := context.WithCancel(mctx)
			if !q.deadline.IsZero() {
				ctx, cancel = context.WithDeadline(mctx, q.deadline)
			}
			key := forkKey{from, q.fork}
			n.mu.Lock()
			n.running[key] = cancel
			n.mu.Unlock()
			n.start(func() { n.runSubQuery(ctx, cancel, key, q) })
		case msgReply:
			r, err := decodeReply(msg)
			if err != nil {
				continue
			}
			n.mu.Lock()
			ch := n.pending[r.fork]
			n.mu.Unlock()
			if ch != nil {
				// The channel has room for every child's reply; it is full
				// only when failPending has already queued errors for the
				// waiter, which then gives up. Never block the dispatcher.
				select {
				case ch <- pendingReply{rep: r, size: len(msg)}:
				default:
				}
			}
		case msgCancel:
			d := &decoder{b: msg[1:]}
			fork := d.uvarint()
			n.mu.Lock()
			if c := n.running[forkKey{from, fork}]; c != nil {
				c()
			}
			n.mu.Unlock()
		}
	}
}

func (n *node) failPending(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ch := range n.pending {
		select {
		case ch <- pendingReply{err: err}:
		default:
		}
	}
}

// runSubQuery runs a forked sub-query and sends the rows back.
func (n *node) runSubQuery(ctx context.Context, cancel context.CancelFunc, key forkKey, q *subQuery) {
	defer func() {
		cancel()
		n.mu.Lock()
		delete(n.running, key)
		n.mu.Unlock()
	}()
	// Its own memory account, bounded by the query's budget: a budget
	// overrun cancels it with the cause, which goes back as such.
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	mem := n.eng.newMemAccount(q.memory, abort, q.analyze)
	defer mem.close()
	t := &task{eng: n.eng, node: n.id, ctx: ctx, steps: q.steps, ncols: len(q.table.Cols), analyze: q.analyze, limit: q.limit, reduce: q.reduce, mem: mem}
	flt, ferr := n.eng.remoteFilters(q.filters)
	if flt != nil {
		env := flt.q.env
		env.MaxValue, env.Abort, env.Ctx = n.eng.cfg.MaxValueBytes, func(err error) { abort(err) }, ctx
	}
	t.filters = flt
	if q.analyze {
		t.stats = n.eng.newStepStats(len(q.steps))
	}
	rep := &reply{fork: q.fork}
	res, err := func() (res *Table, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = recovered(r)
			}
		}()
		if ferr != nil {
			return nil, ferr
		}
		return t.explore(q.start, q.table)
	}()
	if c := limitCause(ctx); err != nil && c != nil {
		err = c
	}
	if err != nil {
		rep.kind = 1
		switch {
		case errors.Is(err, ErrMemoryBudget):
			rep.kind = 2
		case errors.Is(err, ErrValueTooLarge):
			rep.kind = 3
		}
		rep.err = fmt.Sprintf("node %d: %v", n.id, err)
		if rep.err == "" {
			rep.err = "sub-query failed"
		}
	} else {
		rep.table = res
		rep.stats = t.stats
	}
	// The reply goes out even when the query was cancelled (the parent
	// drops it); a closed engine or dead peer just loses it. The account
	// is released first: once the parent has every reply, no sub-query
	// of its query holds memory in the engine's sum.
	msg := encodeReply(rep)
	mem.close()
	_ = n.eng.tr.Send(n.eng.ctx, n.id, key.from, msg)
}

// fork sends sub-queries (steps from k, with step k run locally by the
// receiver) to the given nodes and returns a wait function; wait(true)
// cancels the children instead (the parent failed) and returns at once.
func (r *task) fork(k int, parts map[int]*Table, st *StepStats) (func(abort bool) ([]*Table, error), error) {
	n := r.eng.nodes[r.node]
	steps := append([]planner.Step(nil), r.steps...)
	steps[k].Mode = planner.ModeLocal
	var dl time.Time
	if d, ok := r.ctx.Deadline(); ok {
		dl = d
	}
	ch := make(chan pendingReply, len(parts))
	type sent struct {
		node int
		fork uint64
	}
	var forks []sent
	register := func(id uint64) {
		n.mu.Lock()
		n.pending[id] = ch
		n.mu.Unlock()
	}
	unregister := func() {
		n.mu.Lock()
		for _, f := range forks {
			delete(n.pending, f.fork)
		}
		n.mu.Unlock()
	}
	cancelAll := func() {
		for _, f := range forks {
			_ = r.eng.tr.Send(r.eng.ctx, r.node, f.node, encodeCancel(f.fork))
		}
	}
	for dst, part := range parts {
		if err := r.ctx.Err(); err != nil { // encoding a big part takes a while
			cancelAll()
			unregister()
			return nil, err
		}
		id := n.forks.Add(1)
		msg := encodeSubQuery(&subQuery{fork: id, deadline: dl, analyze: r.analyze, start: k, limit: r.limit, reduce: r.reduce, memory: r.memLimit(), steps: steps, table: part, filters: r.filters.wire()})
		register(id)
		forks = append(forks, sent{dst, id})
		if err := r.eng.tr.Send(r.ctx, r.node, dst, msg); err != nil {
			cancelAll()
			unregister()
			return nil, fmt.Errorf("cannot fork to node %d: %w", dst, err)
		}
		if st != nil {
			st.Messages++
			st.MessageBytes += uint64(len(msg))
			st.Forks++
		}
	}
	// drain waits, after cancelAll, for the replies of the children still
	// running (a cancelled child answers at its next look at the
	// context), so that the query's work has stopped on every node when
	// it returns; a child that does not answer within drainGrace (a dead
	// peer) is given up.
	drain := func(got int) {
		grace := time.NewTimer(drainGrace)
		defer grace.Stop()
		for ; got < len(forks); got++ {
			select {
			case <-ch:
			case <-grace.C:
				return
			case <-r.eng.ctx.Done():
				return
			}
		}
	}
	wait := func(abort bool) ([]*Table, error) {
		defer unregister()
		if abort {
			cancelAll()
			drain(0)
			return nil, nil
		}
		var out []*Table
		for got := 0; got < len(forks); {
			select {
			case pr := <-ch:
				got++
				if pr.err != nil || pr.rep.err != "" {
					cancelAll()
					drain(got)
					if err := r.ctx.Err(); err != nil {
						// A child that saw the deadline (or the cancel)
						// first: the query's own error says it best.
						return nil, err
					}
					if pr.err != nil {
						return nil, pr.err
					}
					switch pr.rep.kind {
					case 2:
						return nil, fmt.Errorf("%w (%s)", ErrMemoryBudget, pr.rep.err)
					case 3:
						return nil, fmt.Errorf("%w (%s)", ErrValueTooLarge, pr.rep.err)
					}
					return nil, errors.New(pr.rep.err)
				}
				if st != nil {
					st.Messages++
					st.MessageBytes += uint64(pr.size)
				}
				if r.stats != nil {
					for i := range pr.rep.stats {
						if i < len(r.stats) {
							r.stats[i].add(&pr.rep.stats[i])
						}
					}
				}
				out = append(out, pr.rep.table)
			case <-r.ctx.Done():
				cancelAll()
				drain(got)
				return nil, r.ctx.Err()
			case <-r.eng.ctx.Done():
				// Closed: the children's replies may never come.
				return nil, ErrClosed
			}
		}
		return out, nil
	}
	return wait, nil
}

// finishFork runs the local part (rows local to this node, from step k
// with step k local), waits for the children and concatenates.
func (r *task) finishFork(k int, local *Table, wait func(abort bool) ([]*Table, error), st *StepStats, t0 time.Time) (*Table, error) {
	var res *Table
	var lerr error
	if local != nil && local.N > 0 {
		saved := r.steps
		r.steps = append([]planner.Step(nil), saved...)
		r.steps[k].Mode = planner.ModeLocal
		if st != nil {
			st.Time += time.Since(t0)
		}
		res, lerr = r.explore(k, local)
		r.steps = saved
	} else if st != nil {
		st.Time += time.Since(t0)
	}
	parts, err := wait(lerr != nil) // a failed local part cancels the children
	if lerr != nil {
		return nil, lerr
	}
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &Table{Cols: make([][]ID, r.ncols)}
	}
	for _, p := range parts {
		res.appendTable(p) // the children applied the pushed filters
	}
	return res, nil
}

// forkSplit splits the rows by the owner of the step's From column.
func (r *task) forkSplit(k int, t *Table, st *StepStats, t0 time.Time) (*Table, error) {
	s := &r.steps[k]
	shards := r.eng.store.Shards()
	idx := make([][]int32, shards)
	sc := stopCheck{ctx: r.ctx}
	for row := 0; row < t.N; row++ {
		if err := sc.add(1); err != nil {
			return nil, err
		}
		o := r.eng.store.Owner(t.At(s.From.Col, row))
		idx[o] = append(idx[o], int32(row))
	}
	parts := map[int]*Table{}
	var local *Table
	for o, rows := range idx {
		if len(rows) == 0 {
			continue
		}
		p := t.gather(rows)
		if o == r.node {
			local = p
		} else {
			parts[o] = p
		}
	}
	wait, err := r.fork(k, parts, st)
	if err != nil {
		return nil, err
	}
	return r.finishFork(k, local, wait, st, t0)
}

// forkAll sends all rows to every other node (an index step: each node
// scans its own part of the index).
func (r *task) forkAll(k int, t *Table, st *StepStats, t0 time.Time) (*Table, error) {
	parts := map[int]*Table{}
	for o := 0; o < r.eng.store.Shards(); o++ {
		if o != r.node {
			parts[o] = t
		}
	}
	wait, err := r.fork(k, parts, st)
	if err != nil {
		return nil, err
	}
	return r.finishFork(k, t, wait, st, t0)
}

// forkOthers sends all rows to every other node (an index step whose
// local part has run already: localFirst).
func (r *task) forkOthers(k int, t *Table, st *StepStats, t0 time.Time) (*Table, error) {
	parts := map[int]*Table{}
	for o := 0; o < r.eng.store.Shards(); o++ {
		if o != r.node {
			parts[o] = t
		}
	}
	wait, err := r.fork(k, parts, st)
	if err != nil {
		return nil, err
	}
	return r.finishFork(k, nil, wait, st, t0)
}

// forkTo moves all rows to owner (a step from a constant owned there).
func (r *task) forkTo(k int, t *Table, owner int, st *StepStats, t0 time.Time) (*Table, error) {
	wait, err := r.fork(k, map[int]*Table{owner: t}, st)
	if err != nil {
		return nil, err
	}
	return r.finishFork(k, nil, wait, st, t0)
}

// drainGrace bounds the wait for a cancelled child's reply.
const drainGrace = 2 * time.Second

// submit runs f on node i as a new query (start: it never waits for
// another job).
func (e *Engine) submit(ctx context.Context, i int, f func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.ctx.Err() != nil {
		return ErrClosed
	}
	e.nodes[i].start(f)
	return nil
}

// Run plans and runs q.
func (e *Engine) Run(ctx context.Context, q *sparql.Query, opts Options) (*Result, error) {
	if e.closed.Load() {
		return nil, ErrClosed
	}
	if opts.Explicit && e.graphs.ds != nil && e.graphs.ds.root == e {
		x, err := e.graphs.ds.explicitEngine()
		if err != nil {
			return nil, err
		}
		if x != nil {
			return x.Run(ctx, q, opts)
		}
	}
	if res, ok, err := e.runDataset(ctx, q, opts); ok {
		return res, err // FROM / FROM NAMED: run on the query's dataset
	}
	t0 := time.Now()
	plan, err := e.planCtx(ctx, q, opts)
	if err != nil {
		return nil, err
	}
	planTime := time.Since(t0)
	res, err := e.Execute(ctx, plan, opts)
	if res != nil && res.Analysis != nil {
		res.Analysis.PlanTime = planTime
	}
	return res, err
}

// Query parses text (through a parse cache) and runs it; the plan is
// cached too, so a repeated query costs only its execution. A text of a
// shape seen before (sparql.Shapes: the same query but for the constants
// of its triple patterns) runs its template's plan bound to its own
// constants (RunParams), without the parser or the planner.
func (e *Engine) Query(ctx context.Context, text string, opts Options) (*Result, error) {
	if !opts.Analyze {
		if tq, params, ok := e.shapes.Lookup(text, ""); ok {
			res, err := e.RunParams(ctx, tq, params, opts)
			if !errors.Is(err, ErrNotBindable) {
				return res, err
			}
		}
	}
	q, err := e.parsed.ParseQueryContext(ctx, text)
	if err != nil {
		return nil, err
	}
	e.shapes.Learn(ctx, text, "", q)
	return e.Run(ctx, q, opts)
}

// Plan plans q for this engine's store and cluster. Plans are cached by
// query and options: treat the returned plan as immutable.
func (e *Engine) Plan(q *sparql.Query, opts Options) (*planner.Plan, error) {
	return e.planCtx(context.Background(), q, opts)
}

// planCtx is Plan bounded by ctx: the planner's join-order search gives up
// with ctx's error once ctx is done (a plan is cached only when complete).
func (e *Engine) planCtx(ctx context.Context, q *sparql.Query, opts Options) (*planner.Plan, error) {
	k := planKey{q, opts.Mode, opts.ForkThreshold}
	stats := e.stats()
	if p := e.plans.get(k, e.store, stats); p != nil {
		return p, nil
	}
	epoch := e.planEpoch.Load()
	cat := &recordingCatalog{cat: e.store}
	p, err := planner.Build(q, cat, stats, planner.Options{
		Mode: opts.Mode, ForkThreshold: opts.ForkThreshold, Cost: e.cfg.Cost, ConstEval: constEval, Ctx: ctx,
	})
	if err != nil {
		return nil, err
	}
	if e.planEpoch.Load() == epoch {
		e.plans.put(k, p, cat.terms, stats)
	}
	return p, nil
}
