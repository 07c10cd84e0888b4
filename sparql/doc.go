// Package sparql parses SPARQL 1.1 Query and Update text into the algebra of
// the SPARQL 1.1 specification (§18).
//
// In: query or update text. Out: a *Query or *Update (plain structs named
// after the spec's algebra — BGP, PathPattern, Join, LeftJoin, Filter,
// Union, Minus, Graph, Extend, Group, Values, Service, OrderBy, Project,
// Distinct, Reduced, Slice — each with a source position and a String that
// prints valid SPARQL whose translation is the same algebra), or a
// *SyntaxError with line and column, for grammar errors and for the errors
// the spec defines beyond the grammar.
//
// Entry points: ParseQuery, ParseUpdate, Parse (decides by the first
// keyword), and Cache, a bounded concurrent cache of parse results keyed by
// the text. Results may be shared: treat every parsed value as immutable.
// FormatAlgebra prints the algebra tree (wukongd parse --algebra).
//
// The translation follows §18.2: IRIs are resolved against BASE and
// prefixes expanded; literals keep their lexical form ("01" stays "01";
// bare numbers are xsd:integer / xsd:decimal / xsd:double); blank nodes of
// patterns become hidden variables ("_:label", see Var) while CONSTRUCT and
// INSERT templates keep blank-node terms; links, inverse links and
// sequences of property paths become triple patterns with fresh hidden
// variables (§18.2.2.4), other paths stay PathPatterns; aggregates are
// bound by Group to hidden variables (".aggN") that the expressions above
// it refer to; HAVING is a Filter over the Group; SELECT expressions are
// Extends; a sub-select is its modifiers' tree nested in the pattern.
//
// The grammar (internal/Sparql.g4) is ours, written from the W3C grammar;
// the ANTLR-generated lexer and parser live in internal/parser (regenerate
// with `make generate`) and no ANTLR type leaves this package. Parsing is
// two-stage: SLL prediction stopping at the first error, then full LL only
// when SLL fails, which also yields the error message.
package sparql
