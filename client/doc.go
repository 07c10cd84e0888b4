// Package client is a Go client for any SPARQL 1.1 endpoint: Select with a
// streaming row iterator, Ask, Construct (and DESCRIBE), Update and the
// Graph Store Protocol, with context cancellation and typed errors.
//
// In: a context and query text (or triples, for the Graph Store Protocol).
// Out: rdf.Terms and rdf.Triples, read with package results from the
// SPARQL 1.1 JSON, XML, TSV or CSV results formats and N-Triples.
//
// Errors: a failed request is an *HTTPError with the status and, when the
// server is wukongd, its error kind, message and query id. A syntax error
// is a *SyntaxError with line and column (from wukongd's error body). A
// query stopped by the server's timeout matches errors.Is(err, ErrTimeout);
// a cancelled or expired ctx gives the context's error.
package client
