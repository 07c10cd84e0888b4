// Package web is the HTTP service: the SPARQL 1.1 Protocol on /sparql (and
// /query, /update), the Graph Store Protocol on /store, the embedded web
// console on /, health (/healthz), readiness (/readyz) and Prometheus
// metrics (/metrics).
//
// In: HTTP requests. Out: SPARQL results in JSON, XML, CSV and TSV, graphs
// in Turtle, N-Triples, JSON-LD and RDF/XML (package results), plans as
// JSON, and errors as JSON with a query id.
//
// # The Backend contract
//
// The web layer talks to the query engine only through Backend (backend.go),
// which this package owns; the engine provides a thin adapter.
//
//   - Query gets a *QueryRequest (text, dataset from default-graph-uri and
//     named-graph-uri, explain mode, execution mode (mode=auto,
//     in-place or fork-join), row cap hint, allowed SERVICE
//     endpoints) and returns a *Result: the query form and either a
//     RowIterator with variable names (SELECT), a boolean (ASK), a
//     TripleIterator (CONSTRUCT, DESCRIBE) or a *Plan (explain). Results
//     stream: the web layer encodes row by row into a bounded buffer, so the
//     backend must not materialize what it can produce lazily. Row slices
//     are valid until the next Next call.
//   - Cancellation: the ctx given to Query governs the query and its
//     iterator. It carries the per-query timeout and is cancelled when the
//     client disconnects or calls POST /api/cancel?id=<query id>. The
//     backend must stop promptly and return ctx.Err() (wrapped is fine).
//     If Query itself does not return within 200ms after the deadline, the
//     web layer answers anyway and closes the late result when it arrives.
//   - Update runs SPARQL Update. An operation the backend does not run
//     returns ErrUnsupported: clients get 501 with the backend's message,
//     which names the operation.
//   - GetGraph, PutGraph, PostGraph, DeleteGraph are the Graph Store
//     Protocol. PUT and POST hand the raw body with its media type and base
//     IRI; the backend parses it with package loader and publishes the
//     change atomically: concurrent readers see the old data or the new,
//     never a mixture; a body that fails to parse changes nothing.
//   - Optional: FabricStatser (fabric counters for /metrics), Readier
//     (/readyz), Prefixer (prefixes for Turtle and RDF/XML output).
//
// # Errors and statuses
//
// Backends return typed errors; statusOf in errors.go is the one place
// that maps them: *sparql.SyntaxError and *loader.SyntaxError → 400 with
// line and col; ErrBadRequest → 400; ErrForbidden → 403; ErrNotFound →
// 404; ErrUnsupportedMediaType → 415; ErrUnsupported → 501; ErrNotReady →
// 503; context.DeadlineExceeded (the query timeout) → 504 Gateway Timeout
// (TimeoutStatus); a query cancelled through /api/cancel → 499. The web
// layer adds 401 (missing bearer token), 403 (writes disabled, wrong
// token, SERVICE or LOAD not allow-listed), 404, 405, 406 (no acceptable
// format), 413 (body over the cap) and 429 (concurrency limit, with
// Retry-After). Every error body is
//
//	{"status":400,"error":"syntax_error","message":"…","queryId":"…","line":2,"col":5}
//
// and every response carries X-Query-Id (a client may choose it by sending
// a well-formed X-Query-Id header).
//
// # Streaming, limits and truncation
//
// The first Options.ResponseBuffer bytes of an answer (4 MiB by default,
// charged to the query's memory budget when the iterator is a Memory) are
// held back, so an answer that fits is sent whole or replaced by its
// error's status and body. Past them the 200 is committed and the answer
// streams; if it must then stop (timeout, budget, cancel, a failed write)
// the connection is reset (stream.go: no final chunk, a TCP RST), so the
// client sees an error, never a short valid body, and the abort is logged
// and counted (wukongd_responses_aborted_total). Serve with
// http.Server.ConnContext = ConnContext for the reset to hold when the cut
// is a failed write. The row cap (Options.MaxRows) cuts results like a
// LIMIT and says so with "Wukong-Truncated: true", as a header when the
// whole response fit the buffer and as an HTTP trailer otherwise.
//
// Limits: per-query timeout (default, maximum, and a timeout=<seconds>
// parameter), result row cap, request body cap, concurrency cap. Writes
// (SPARQL Update, GSP PUT/POST/DELETE) are off unless an update token is
// configured, and then need "Authorization: Bearer <token>". SERVICE
// endpoints and LOAD sources must be allow-listed; the web layer checks the
// query text with a small lexer before the backend sees it. CORS is off
// unless origins are configured; preflights are answered then.
package web
