package expr

import "errors"

// ErrEval is the root of every evaluation error: a type error, an unbound
// variable, a division by zero, a bad argument. In SPARQL these are values
// of the three-valued logic, not failures of the query: FILTER treats them
// as false, BIND leaves its variable unbound, an aggregate over them is
// unbound. Test with errors.Is(err, ErrEval).
var ErrEval = errors.New("expression error")

// evalError is an evaluation error with a fixed message. The common ones are
// package-level values so that a FILTER that errs on most rows allocates
// nothing.
type evalError struct{ msg string }

func (e *evalError) Error() string        { return e.msg }
func (e *evalError) Is(target error) bool { return target == ErrEval }

func newEvalError(msg string) error { return &evalError{msg: msg} }

var (
	errUnbound        = newEvalError("unbound variable")
	errNotNumeric     = newEvalError("type error: not a numeric literal")
	errNotBoolean     = newEvalError("type error: no effective boolean value")
	errNotString      = newEvalError("type error: not a string literal")
	errNotSimple      = newEvalError("type error: not a simple literal or xsd:string")
	errNotLiteral     = newEvalError("type error: not a literal")
	errNotIRI         = newEvalError("type error: not an IRI")
	errNotDateTime    = newEvalError("type error: not an xsd:dateTime")
	errIncompatible   = newEvalError("type error: incompatible string arguments")
	errNotComparable  = newEvalError("type error: values are not comparable")
	errUnknownEqual   = newEvalError("type error: cannot compare literals of unknown datatypes")
	errDivByZero      = newEvalError("division by zero")
	errNoTimezone     = newEvalError("dateTime has no timezone")
	errBadCast        = newEvalError("cast: invalid lexical form for the target type")
	errCastType       = newEvalError("cast: source type cannot be cast to the target type")
	errBlankStr       = newEvalError("type error: STR of a blank node")
	errEmptyMatch     = newEvalError("REPLACE: the pattern matches the empty string")
	errBadReplacement = newEvalError("REPLACE: invalid replacement string")
	errNoExists       = newEvalError("EXISTS: the engine gave no pattern evaluator")
	errRelativeIRI    = newEvalError("IRI: relative IRI and no base to resolve it against")
)
