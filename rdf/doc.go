// Package rdf holds the RDF term, triple and quad types that every layer
// shares: the loader produces them, the dictionary interns them into IDs, the
// result writers and the client decode IDs back into them.
//
// In: nothing (a leaf package with no dependencies outside the standard
// library). Out: Term, Triple, Quad and their N-Triples spelling (with the
// escaping of IRIs and strings), RFC 3986 IRI resolution (ResolveIRI), and
// MatchBags, which compares bags of tuples of terms (solutions, graphs,
// datasets) up to blank node renaming for the tests and the conformance
// runner.
//
// Strings live only at the edges: inside the store, planner and executor,
// terms are integer IDs (see graphstore).
package rdf
