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
// Pipeline: ExpandInputs(files, directories, globs) → BuildStore (parallel
// across files and across line-aligned chunks of N-Triples/N-Quads files →
// graphstore.Builder → *graphstore.Store, in memory) → Load (BuildStore +
// graphstore.WriteSnapshot, atomic: a failed load publishes nothing).
// Statements in named graphs are counted in Summary.NamedGraphQuads and not
// loaded (the store has no named graphs yet).
//
// In: files, directories, globs or readers. Out: rdf.Quad streams, an
// in-memory *graphstore.Store, or a snapshot directory, with a Summary.
package loader
