// Package client is a Go client for any SPARQL 1.1 endpoint: Select with a
// streaming row iterator, Ask, Construct, Update and the Graph Store
// Protocol, with context cancellation and typed errors.
//
// In: a context and query text. Out: typed rdf terms.
package client
