// Package sparql parses SPARQL 1.1 Query and Update text into the algebra of
// the SPARQL 1.1 specification (§18).
//
// In: query text. Out: a *Query or *Update (plain structs named after the
// spec's algebra, each with a source position and a String that prints valid
// SPARQL), or a *SyntaxError with line and column. The ANTLR-generated parser
// lives in sparql/internal and no ANTLR type leaves this package.
package sparql
