// Package web is the HTTP service: the SPARQL 1.1 Protocol on /sparql, the
// Graph Store Protocol on /store, the embedded web console, health, readiness
// and Prometheus metrics.
//
// In: HTTP requests. Out: SPARQL results in JSON, XML, CSV, TSV and RDF
// serializations; errors as JSON with a query id.
package web
