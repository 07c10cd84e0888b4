// Package loader reads RDF and builds snapshots.
//
// Parsers (complete to the W3C RDF 1.1 specs; the W3C suites run as tests):
// N-Triples, N-Quads, Turtle, TriG and RDF/XML, plain or gzip. Parse(r,
// format, Options, emit) streams rdf.Quad values (G is the zero Term for the
// default graph); ParseFile picks the format by extension (FormatForPath,
// looking through .gz) and decompresses. Literals keep their lexical form,
// language tags are lower-cased, xsd:string is a simple literal. Blank node
// labels are scoped per document (Options.BlankPrefix, fresh per Parse by
// default). Errors are *SyntaxError ("file:line:col: msg"); with
// Options.OnError the parser reports and recovers (N-Triples/N-Quads: the
// bad line; Turtle/TriG: the bad statement; RDF/XML: the rest of the
// document). RDF/XML uses encoding/xml in strict mode and never fetches
// anything: only general entities with literal values from an internal DTD
// subset are expanded.
//
// Pipeline: ExpandInputs(files, directories, globs) → BuildDataset (parallel
// across files and across line-aligned chunks of N-Triples/N-Quads files →
// graphstore.DatasetBuilder → *graphstore.Dataset in memory: statements in
// named graphs go into their graph, one store per graph over one
// dictionary) → Load (BuildDataset + graphstore.WriteDataset, atomic: a
// failed load publishes nothing; without named graphs the snapshot is a
// plain single-graph one). Summary.Graphs counts each graph's statements
// read and distinct triples stored. BuildStore builds only the default
// graph into one *graphstore.Store (graphstore.Builder); it counts
// statements in named graphs in Summary.NamedGraphQuads but skips them.
//
// In: files, directories, globs or readers. Out: rdf.Quad streams, an
// in-memory *graphstore.Dataset or *graphstore.Store, or a snapshot
// directory, with a Summary.
package loader
