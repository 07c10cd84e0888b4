// Package service runs the query engine behind the HTTP service: it
// implements web.Backend (and the optional web.FabricStatser, web.Readier
// and web.Prefixer) over an exec.Engine and a graphstore.Dataset.
//
// In: web.QueryRequest, web.UpdateRequest and Graph Store Protocol calls.
// Out: web.Result (rows decoded to rdf.Term row by row, booleans, triples,
// or a web.Plan for EXPLAIN), and typed errors that web maps to statuses.
//
// # Generations
//
// What is served is one immutable generation: a graphstore.Dataset (the
// default graph and the named graphs, one store each over one dictionary)
// and the engine over it (exec.NewDatasetEngine). The current generation
// sits behind an atomic.Pointer. A query takes a reference to the
// generation it starts on and keeps it until its iterator is closed, so a
// change never disturbs a query in flight. A write (Graph Store
// PUT/POST/DELETE, SPARQL Update) derives a new dataset with
// graphstore.Dataset.Apply — only the graphs it changes get new stores,
// the others are shared — starts an engine over it and swaps the pointer:
// readers see the old data or the new, never a mixture. Writes are
// serialized; a body that fails to parse or an update that fails changes
// nothing. The old generation's engine and dataset are closed when its
// last query lets go of it; a store is closed when no dataset holds it any
// more. Changes live in memory only: a snapshot served with --data is
// never rewritten.
//
// Open serves a snapshot through graphstore.OpenDataset: a single-graph
// snapshot (format 1) or a dataset snapshot with named graphs (format 2,
// from wukongd load of N-Quads or TriG). New, NewEmpty and NewDefault serve
// a dataset without named graphs.
//
// # Queries
//
// Query parses through a sparql.Cache and runs on the engine with the
// request's context (its deadline and cancellation reach forked
// sub-queries) and execution mode (mode=, else Options.Mode). The
// request's default-graph-uri and named-graph-uri replace the query's FROM
// and FROM NAMED (SPARQL Protocol); the row cap reaches the engine as a
// LIMIT of MaxRows+1 on SELECT (one row past the cap tells web to report
// the cut). The rewritten queries are cached so that the engine's plan
// cache still hits. SELECT rows are decoded lazily, one row per Next; ASK
// answers with the engine's boolean; CONSTRUCT and DESCRIBE stream the
// engine's triples. Features the engine does not run come back as
// web.ErrUnsupported naming the feature and its position; syntax errors as
// *sparql.SyntaxError.
//
// EXPLAIN maps exec's plan document to web.Plan: the exploration steps in
// execution order (start, direction, mode, estimated rows) followed by the
// operators and solution modifiers above them; an operator with two inputs
// (UNION, OPTIONAL, MINUS, hash join) is a step whose children are its
// inputs' steps, and DESCRIBE and EXISTS plans follow as steps with
// children. With analyze: the actual rows, time and fabric reads, messages
// and bytes per step and in total.
//
// # Graph Store and Update
//
// ?default is the default graph; ?graph=IRI a named graph. GET streams a
// graph's triples shard by shard (each triple once, from its subject's
// owner), decoded with the dataset's dictionary; PUT replaces a graph,
// POST merges into it (both create a missing named graph: 201), DELETE
// removes a named graph or empties the default graph. GET, HEAD and DELETE
// of a named graph that does not exist are web.ErrNotFound. A body's
// blank nodes are new nodes; a statement in a named graph inside a body is
// web.ErrBadRequest (a body is one graph).
//
// SPARQL Update runs INSERT DATA and DELETE DATA (GRAPH blocks included),
// DELETE/INSERT … WHERE and DELETE WHERE (the WHERE evaluated by the
// engine over WITH, USING/USING NAMED or the request's using-graph-uri and
// using-named-graph-uri; templates instantiated per solution, ill-formed
// triples skipped), CLEAR, DROP and CREATE (GRAPH, DEFAULT, NAMED, ALL;
// SILENT), and ADD, COPY and MOVE. The operations run in order, each
// seeing the effects of the ones before; changes that need no reading are
// batched into one Apply, and an operation that reads (ADD/COPY/MOVE from
// a graph the batch touches, a WHERE) applies the batch first into an
// intermediate dataset only the request sees. All operations of a request
// publish as one change. A missing graph without SILENT is
// web.ErrNotFound, CREATE of an existing graph web.ErrBadRequest; LOAD is
// web.ErrUnsupported (the service fetches nothing: use the Graph Store
// Protocol).
package service
