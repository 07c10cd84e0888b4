// Package conformance runs the W3C SPARQL 1.1 test suites — query
// evaluation, update evaluation, syntax, the Protocol and the Graph Store
// Protocol — and our own feature tests against wukongd (the engine, the
// service and the HTTP server), under a ratchet that keeps main green, and
// writes an EARL report of them (make conformance).
//
// In: the W3C suite directory (../shared/w3c/sparql11 from the repository
// root, or $WUKONGD_W3C/sparql11). Out: a pass/fail/skip Outcome per test
// and shard count.
//
// # What runs
//
// Load reads manifest-sparql11-query.ttl, manifest-sparql11-results.ttl,
// manifest-sparql11-fed.ttl and entailment/manifest.ttl with our Turtle
// parser, follows mf:include, and keeps every mf:QueryEvaluationTest and
// mf:CSVResultFormatTest (syntax and update tests are the sparql package's).
// A test is named by its IRI relative to SuiteBase
// ("aggregates/manifest#agg01"). Suite.Run then:
//
//   - parses qt:query with the query file's W3C location as base IRI
//     (ParseQuery puts a BASE in front of the text: the parser has no base
//     option, so columns on line 1 of errors are shifted);
//   - loads qt:data into the default graph and each qt:graphData (and each
//     graph of FROM / FROM NAMED) as a named graph, with our loader;
//   - reads mf:result with our results readers (.srx, .srj, .tsv, .csv) or
//     our loader (.ttl, .rdf: a CONSTRUCT/DESCRIBE graph, or a result set
//     in the DAWG rs: vocabulary);
//   - runs the query through an Evaluator (Evaluate: graphstore.Builder →
//     exec.NewGraphEngine → Engine.Run) under RunGuarded: its own goroutine,
//     a context deadline (a hang is a failure, not a stuck run) and a
//     recover (a panic is a failure with its stack);
//   - compares with Compare: solutions as bags over the same variables,
//     graphs as sets, both up to a one-to-one renaming of blank nodes;
//     literals as terms ("01"^^xsd:integer is not "1"^^xsd:integer), except
//     that the W3C tests compare numbers of one datatype by value
//     (NumbersByValue: their results write computed numbers in lexical
//     forms that contradict each other, e.g. MIN of "2E-1" as "2.0E-1"). When
//     the query's top-level ORDER BY keys are projected variables, row i
//     must also bind them as expected row i does (ties may come in any
//     order); other ORDER BY queries compare as bags and say so. CSV
//     answers, and the answers of the result-format tests, go through our
//     writer and reader of the expected format first.
//
// Every test runs with 1 and with 4 shards (-conformance.shards).
//
// # The other suites
//
//   - Update (TestW3CUpdate, update.go): every mf:UpdateEvaluationTest of
//     manifest-sparql11-update.ttl runs on a service (package service) over
//     a dataset built from ut:data and ut:graphData; the dataset it leaves
//     is compared with the expected one as a set of quads, blank nodes up
//     to renaming.
//   - Syntax (TestW3CSyntaxSuites, syntax.go): the positive and negative
//     syntax tests of the query, update and federation manifests.
//   - Protocol and Graph Store Protocol (TestW3CProtocol, protocol.go): the
//     ht: exchanges of protocol/manifest.ttl and graph-store-protocol/
//     (the direct and indirect manifests) run in order against our HTTP
//     server (package web, updates enabled), /sparql/ mapped to /sparql and
//     /gsp to /store; each response is checked for its status (or status
//     class), Content-Type, boolean or tabular result, and RDF body (graph
//     isomorphism). Tests that need direct graph identification or POST
//     graph creation are skipped with that reason.
//   - TestEARL checks the report writer.
//
// # Report
//
// make conformance runs all of them and writes var/conformance/earl.ttl
// (EARL 1.0: one earl:Assertion per test, earl:passed / earl:failed /
// earl:untested, the reason of every failure and skip in dc:description;
// a test passes only if it passed with every shard count and mode) and
// docs/CONFORMANCE.md (-conformance.earl, -conformance.summary).
//
// # Skip list and ratchet
//
// testdata/skip.txt lists, with a reason each, the tests that are not run:
// the entailment-regime tests (the engine does simple entailment) and the
// SERVICE tests (never calls remote endpoints). TestW3C checks that every
// entailment and SERVICE test is listed and that every line names a real
// test.
//
// testdata/known-failures.txt is the ratchet: the tests (W3C IDs, and
// "conformance/<name>" for our own) that fail today, each with the first
// line of its failure as a comment. A failing test that is not listed
// fails go test (a regression); a listed test that passes with every shard
// count is reported (t.Log), so whoever implements a feature deletes its
// lines — it fails the run only with -ratchet-strict.
//
// # Own tests
//
// TestFeatures (features_test.go) runs SPARQL over small inline Turtle or
// TriG data and compares with expected rows, for what the W3C suite covers
// thinly: aggregates over empty groups, errors in expressions, numeric
// type promotion, property paths over cycles and their counts, OPTIONAL
// with FILTER inside, MINUS without shared variables, and more. They share
// the runner, the comparison and the ratchet.
//
// # Checks of the runner and of the wire formats
//
// TestRunnerOracle runs every W3C test with an Evaluator that answers with
// the expected result itself — blank nodes renamed and rows shuffled (it
// must pass), then broken (it must fail) — so the manifests, the data,
// the expected results and the comparison are all exercised on the whole
// suite whatever the engine supports. TestCompare, TestOrderKeys,
// TestRunGuarded and TestJudge test the pieces. TestFormatsRoundTrip puts
// every W3C answer through our XML, JSON and TSV writers and readers, and
// every W3C graph through our N-Triples, Turtle and RDF/XML writers and
// our loader.
//
// # Running
//
//	go test ./conformance                          # the ratchet (counts show with -v or when run in the directory)
//	go test ./conformance -v                       # N passed, N failed, N skipped per shard count and per directory,
//	                                               # failures grouped by reason, every failure, panic stacks
//	go test ./conformance -v -conformance.detail   # + query, dataset and difference of every failure
//	go test ./conformance -update-known-failures   # rewrite the known-failures list
//	go test ./conformance -ratchet-strict          # also fail on known failures that pass now
//	go test ./conformance -conformance.run 'property-path|conformance/path' -conformance.shards 4
//	go test ./conformance -conformance.timeout 30s # per query (default 10s)
//
// With -conformance.run only the selected tests are judged (and rewritten
// by -update-known-failures; the other lines are kept).
package conformance
