// Package expr evaluates SPARQL 1.1 expressions (§17) and aggregates
// (§18.5) for the engine: FILTER, BIND, ORDER BY keys, HAVING, projection
// expressions and GROUP BY aggregates.
//
// In: a sparql.Expr (or *sparql.Aggregate) from the algebra, compiled once
// per query with Compile (CompileAggregate) and an *Env shared by the
// query's expressions (base IRI, NOW, the EXISTS callback); then rows, as a
// Binding that maps variables to rdf.Terms (or to decoded Values, for an
// engine that caches decoding by term ID).
//
// Out: an rdf.Term (Eval), a typed Value (EvalValue), a FILTER verdict
// (EvalBool: the effective boolean value, an error counting as false), or an
// aggregate's term per group (Accumulator.Result). Evaluation errors are
// values of SPARQL's three-valued logic, not failures: they wrap ErrEval
// and the caller leaves a BIND unbound or drops a FILTER row.
//
// Values: Decode turns a term into a typed Value (integers of every derived
// type on int64 with big.Int on overflow, exact big.Rat decimals, float,
// double, boolean, string, language-tagged string, dateTime, date, IRI,
// blank node); a literal whose lexical form is invalid for its datatype is
// kept as a valid term that compares only by identity. Computed values print
// in canonical form (Value.Term); terms from the data are never rewritten.
//
// Rows: BNODE(str) must give the same blank node for the same string in one
// solution, also across the expressions of one SELECT (W3C bnode01); for
// that the engine's rows implement RowKeyer (one key per solution). Rows fed
// to COUNT(DISTINCT *) implement SolutionKeyer. An ORDER BY key that errs
// sorts as unbound.
//
// Ordering: Compare is the ORDER BY order (unbound < blank < IRI < literal,
// then < where SPARQL defines it, and a fixed total order elsewhere), also
// used by MIN and MAX. DISTINCT and GROUP BY keys use term identity
// (rdf.Term ==), not this package.
package expr
