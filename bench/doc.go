// Package bench is wukongd's end-to-end benchmark harness: it measures
// query latency (warm runs, median and p99) and mixed-workload throughput
// against any SPARQL endpoint or in-process query function, and turns the
// measurements into a JSON report, a Markdown report and SVG plots.
//
// In: functions that run one query and return its row count (in process)
// or SPARQL 1.1 Protocol endpoints (over HTTP, JSON results, decoded by
// package results on keep-alive connections of bench.Endpoint's own), and
// the query sets of package datasets. Out: a *Report.
//
// The command that drives it is `wukongd bench` (cmd/wukongd/bench.go); the
// peer systems are set up by bench/peers/virtuoso.sh (Debian's
// virtuoso-opensource, a private instance) and bench/peers/oxigraph.mjs
// (npm oxigraph in Node). `make bench` and `make bench-peers` run them.
//
// Nothing here asserts on wall-clock time; the package's tests check the
// statistics, the workload generator and the report writers.
package bench
