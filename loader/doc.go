// Package loader reads RDF (N-Triples, N-Quads, Turtle, TriG, RDF/XML, plain
// or gzip) and builds snapshots: parse in parallel, intern terms, partition,
// build shards and statistics, publish atomically.
//
// In: files, directories or globs. Out: rdf.Quad streams from the parsers and
// a snapshot directory from the pipeline; syntax errors carry file, line and
// column.
package loader
