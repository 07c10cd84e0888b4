// Package results reads and writes SPARQL 1.1 query results and RDF graphs
// on the wire.
//
// In: result rows ([]rdf.Term bound to variable names), booleans, and
// rdf.Triples. Out: bytes in the SPARQL 1.1 Query Results JSON, XML, CSV and
// TSV formats, and N-Triples, Turtle, JSON-LD (expanded, JSON-LD 1.1) and
// RDF/XML for CONSTRUCT and DESCRIBE. The readers go the other way, for the
// Go client and for the W3C evaluation tests (.srj, .srx, .csv, .tsv).
//
// Writers stream: NewSolutionWriter and NewGraphWriter encode each row or
// triple by appending to a reused scratch buffer and writing it to a
// bufio.Writer, so memory stays bounded whatever the result size. Call Close
// to write the trailer and flush. The writers do not close the underlying
// io.Writer.
//
// Readers stream too: NewSolutionReader returns the variables first and then
// one row at a time. CSV is lossy by design (the spec drops the kind of a
// term and the datatype of a literal): the CSV reader returns "_:x" values as
// blank nodes, values that look like absolute IRIs as IRIs and everything
// else as simple literals.
//
// Negotiate picks a Format from an HTTP Accept header with q-values and
// wildcards; ParseFormat understands the short names ("json", "csv", "ttl",
// …) and media types some clients put in a format= or output= parameter.
package results
