// Package exec runs physical plans by graph exploration over the shards of
// a graph store (DESIGN.md §6).
//
// In: a *sparql.Query (planned here through planner.Build) or a
// *planner.Plan, and a Store (NewGraphStore adapts a *graphstore.Store; its
// fabric is the Transport). Out: a *Result: for SELECT the result
// variables and the rows as ID columns, decoded to rdf.Terms on demand
// (Result.Row, Result.Term); for ASK Result.Boolean; for CONSTRUCT and
// DESCRIBE Result.Triples (a set of ID triples, Result.Triple decodes);
// the plan, and with Options.Analyze the per-step measurements for
// EXPLAIN ANALYZE (Explain, ExplainJSON).
//
// # API
//
//	g, _ := exec.NewGraphEngine(store, exec.Config{})   // or exec.New(Store, Transport, Config)
//	defer g.Close()
//	res, err := g.Run(ctx, query, exec.Options{Mode: planner.ModeAuto, ForkThreshold: 0, Analyze: false})
//	for i := 0; i < res.Len(); i++ { row = res.Row(i, row) }
//	fmt.Print(exec.Explain(res.Plan, res.Analysis, g.Store()))
//
// Engine.Plan and Engine.Execute split Run in two (EXPLAIN without running).
// A query constant the dictionary does not know matches nothing.
// Unsupported algebra fails with an error wrapping planner.ErrUnsupported.
//
// # Tables of ID columns
//
// Everything flows as a *Table: one []ID column per variable (a nil column
// is unbound in every row), N rows. An exploration carries the full
// history: every column bound so far travels with the rows from step to
// step and across nodes, so a step that reaches a bound variable (known→
// known, known→const) checks the edge against the row and prunes it at
// once, and forked rows come back complete: the parent concatenates the
// children's tables, with no final join. Nothing is deduplicated unless the
// plan says DISTINCT (bag semantics).
//
// # Operators (run.go, ops.go, seed.go, forms.go)
//
// queryRun evaluates the plan tree bottom-up on the caller's goroutine;
// explorations run on the nodes' workers. Every operator takes and returns
// Tables and never modifies its inputs (SPARQL 1.1 §18.5):
//   - Explore, seeded or not: a seeded exploration (planner.Explore.Seed:
//     a bind join) starts from the seed's rows, its SeedVars bound, every
//     other seed column carried along (full history, also across forks).
//   - Join: a bind join is the seeded exploration; a hash join indexes the
//     right rows on the shared variables — a row with an unbound (0) shared
//     value is compatible with every row and is checked apart.
//   - LeftJoin (OPTIONAL): the left rows are numbered in a hidden column
//     and fill a slot; the right side is planned over that slot (seeded),
//     so its rows carry the number of the left row they extend; rows that
//     fail the OPTIONAL's filter are dropped, left rows no right row
//     extends are kept alone.
//   - Union (columns matched by name), Minus (a row goes only when a
//     compatible right row shares a variable bound in both), Filter
//     (exec/expr programs; an error is false), Extend (an error leaves the
//     value unbound; the binds of one Extend share the row's identity for
//     BNODE), Group (keys may be expressions; no keys: one group, also over
//     no rows; every aggregate of exec/expr), Values, OrderBy (expr.Compare
//     on decoded values; an erring key sorts as unbound), Distinct (IDs:
//     one per term), Slice, Project.
//   - EXISTS: before a table's expressions run, each EXISTS pattern runs
//     once, seeded with all the table's rows (numbered), and the numbers
//     that come back say which rows have a solution; the ExistsFunc given
//     to exec/expr reads that answer.
//   - FILTERs pushed into an exploration (planner.Explore.Filters) run on
//     the node holding the rows right after their step; a forked child gets
//     them with the sub-query as SPARQL text (with the query's NOW and
//     base) and compiles them itself.
//   - Property paths and GRAPH are path.go's and dataset.go's (evalPath,
//     evalInGraph), called with the seed's rows.
//   - ASK keeps whether a row came; CONSTRUCT instantiates the template per
//     row (a fresh blank node per template blank node and row; triples with
//     an unbound or ill-formed position are left out; a set); DESCRIBE
//     gives the concise bounded description of each resource: the triples
//     with it as subject, and in turn those of their blank-node objects.
//
// Values computed by expressions get the dictionary's ID when the store
// knows the term (joins and equality by ID stay exact: one term, one ID),
// else a query-local ID from LocalIDBase (2^62) up, held by the query's
// TermTable (Result.Term decodes both kinds). Store IDs are below 2^40, so
// the ranges never meet. A panic on a worker or while evaluating becomes
// the query's error.
//
// # Exploration
//
// A plan's Explore lists steps (planner.Step): an index step binds a
// variable from an index vertex (the type index, a predicate's subjects or
// objects, every subject), an expand step follows (vertex, predicate, dir)
// from a bound value or a constant to a new variable (also variable
// predicates, through the (v, AllPredicates, dir) lists), and a check step
// keeps the rows whose edge exists. Each step states its mode:
//   - local: the rows' source vertices are owned by the node running it;
//   - in-place: the node reads the remote adjacency lists itself, one
//     batched READ round trip per owner shard per round (the keys of a step
//     are deduplicated first);
//   - fork-join: the rows are split by the owner of the source vertex and
//     each part is serialized with the rest of the plan into a fabric
//     message (codec.go lays out the bytes); the owner's workers run it and
//     send the rows back, which the parent concatenates. An index step forks
//     to every node, each scanning its own part of the index.
//
// A query whose first step starts from a constant runs on the constant's
// owner; other queries on the nodes in turn. A step runs on one worker
// per node: splitting large in-place steps over a node's workers was
// measured without gain on the shared 2-core dev machine (no idle core to
// run the second part; docs/PERFORMANCE.md, Engine).
//
// Kernels and caches: the keys of a step are deduplicated (runs first,
// then an open-addressing key set, kernels.go) and read per owner shard in
// one batch; a known→known check looks up the To side instead when its
// runs of values cost less than the From side's distinct values (a
// linear-counting estimate), galloping through each To list with the
// run's ascending From values (a semi-join); a type check
// (?x rdf:type C on a bound ?x) over 64 rows or more tests a bitmap of C's
// instances on every shard (or, rows all on the node's own shard, of that
// shard's), built from the shards' type index on first use and cached per
// node (the store is immutable, so it never goes stale; classes too sparse
// for a 256 KiB bitmap, or spanning more than 2^28 IDs, are checked row by
// row).
// Engine.Query caches parses and Engine.Plan caches plans (by query and
// options), so a repeated query costs only its execution.
//
// Mode choice: the planner's default cost model (planner.DefaultCost) is
// calibrated on the in-process loopback fabric, where forking a step whose
// rows go out and come back never pays, but forking a large index step
// does (docs/PERFORMANCE.md, Engine): auto forks LUBM L2's Course index
// and runs the rest in place. Forced modes and ForkThreshold exercise
// fork-join; a network cost model (planner.NetworkCost, Config.Cost) makes
// large fan-outs fork.
//
// # Nodes, workers, cancellation
//
// The Engine runs one node per shard: a dispatcher goroutine takes the
// node's messages (sub-queries, replies, cancels) off the Transport, and
// Config.Workers idle worker goroutines take its jobs (a new query's
// exploration, a forked sub-query); a job that finds none idle runs on a
// goroutine of its own, so no job ever queues behind another's run (a
// fixed pool let three heavy cross products hold back a `LIMIT 5` for
// seconds) and a parent waiting for its children cannot deadlock the
// cluster. What bounds the work is the service's admission cap and the
// memory budgets; the Go scheduler shares the processors. Every
// sub-query carries the query's deadline; when a query is cancelled or
// fails, the parent sends a cancel message to each child, which cancels
// the sub-query's context (and so, in turn, its own children). Inside a
// step or operator the loops look at the context every few thousand rows
// (cancel.go: index scans, expansions, checks, splits for forks, path
// searches, hash joins, MINUS, FILTER, BIND, GROUP BY, ORDER BY,
// DISTINCT), so a cancelled or timed-out query stops within a fraction of
// a millisecond of work; Run returns the context's error at once, and a
// child's error that comes back after the parent's context ended reads as
// the context's error. A parent whose own part of a fork fails cancels the
// children and does not wait for them. Close stops every goroutine the
// engine started.
//
// Memory: the lists a Store returns may alias store memory and are never
// modified; Tables returned to callers are theirs.
//
// # Property paths and named graphs
//
// A property path pattern (planner.PathScan) is evaluated by path.go: the
// path is compiled to IDs with inverses pushed down to the links, then
// evaluated forwards from the distinct bound starts of the input rows (the
// subject, else the object with the inverse path, else every node that
// can start it), with in-place batched reads from one node. Alternatives
// and sequences are bags; *, + and ? are sets of distinct nodes per start
// (ALP), searched breadth-first for all starts at once with a roaring
// bitmap of visited nodes per start, so cycles end the search.
//
// NewDatasetEngine(ds *graphstore.Dataset, cfg) runs over a dataset (the
// default graph is the engine's own store); New and NewGraphEngine make a
// dataset without named graphs. GRAPH (planner.GraphScan) runs its pattern
// on a graph engine per named graph (dataset.go: started on first use,
// stopped by Close); FROM / FROM NAMED run the query on the engine of its
// default graph (one graph's, an empty one, or a per-query union store for
// the merge of several) with its named graphs in the context.
//
// exec/refeval is the reference evaluator for differential tests.
package exec
