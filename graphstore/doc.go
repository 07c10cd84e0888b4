// Package graphstore is the RDF graph store: the dictionary (term <-> ID), the
// 64-bit key (vertex, predicate, direction), shards partitioned by vertex,
// index vertices, planner statistics, the builder from ID triples to shards,
// and snapshots on disk.
//
// In: rdf terms and triples from the loader. Out: ID lists per key (through
// rdmakv), statistics for the planner, and terms for result output.
package graphstore
