// Package service runs the query engine behind the HTTP service: it
// implements web.Backend (and the optional web.FabricStatser, web.Readier
// and web.Prefixer) over an exec.Engine and a graphstore.Store.
//
// In: web.QueryRequest, web.UpdateRequest and Graph Store Protocol calls.
// Out: web.Result (rows decoded to rdf.Term row by row, booleans, triples,
// or a web.Plan for EXPLAIN), and typed errors that web maps to statuses.
//
// # Generations
//
// What is served is one immutable generation: a store and the engine over
// it. The current generation sits behind an atomic.Pointer. A query takes a
// reference to the generation it starts on and keeps it until its iterator
// is closed, so a change never disturbs a query in flight. A write (Graph
// Store PUT/POST/DELETE, SPARQL Update) builds a complete new store — the
// old triples, edited, plus the new ones — then swaps the pointer: readers
// see the old data or the new, never a mixture. Writes are serialized; a
// body that fails to parse changes nothing. The old generation's engine and
// store are closed when its last query lets go of it. Changes live in
// memory only: a snapshot served with --data is never rewritten.
//
// # Queries
//
// Query parses through a sparql.Cache, plans and runs on the engine with
// the request's context (its deadline and cancellation reach forked
// sub-queries), and decodes result IDs to terms lazily, one row per Next.
// SELECT runs as planned; ASK and CONSTRUCT run their pattern as a SELECT
// and are finished here (ASK: any row; CONSTRUCT: the template instantiated
// per row, fresh blank nodes per solution, ill-formed triples skipped,
// duplicates removed). Features the engine does not run yet come back as
// web.ErrUnsupported naming the feature (OPTIONAL, FILTER, …) and its
// position; syntax errors as *sparql.SyntaxError.
//
// EXPLAIN maps exec's plan document to web.Plan: the exploration steps in
// execution order (start, direction, mode, estimated rows) followed by the
// solution modifiers; with analyze, the actual rows, time and fabric reads,
// messages and bytes per step and in total.
//
// # Graph Store and Update
//
// The store has one graph, the default graph. GET streams its triples
// shard by shard (each triple once, from its subject's owner); PUT
// replaces it, POST merges into it, DELETE empties it. Named graphs
// (?graph=, GRAPH, FROM, default-graph-uri, quads in a named graph) are
// web.ErrUnsupported until graphstore has them. SPARQL Update runs INSERT
// DATA, DELETE DATA, CLEAR/DROP DEFAULT|ALL and the equivalent ADD, COPY,
// MOVE on the default graph; all operations of one request publish as one
// change. LOAD and DELETE/INSERT … WHERE are web.ErrUnsupported.
package service
