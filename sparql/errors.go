package sparql

import "fmt"

// SyntaxError is a query or update that is not valid SPARQL 1.1: a
// grammar error, or one of the errors the specification defines beyond the
// grammar (a projected variable that is neither grouped nor aggregated,
// BIND of a variable already in scope, a blank node label used in two basic
// graph patterns, …). Line and Col are 1-based; Col counts Unicode code
// points.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("syntax error at %d:%d: %s", e.Line, e.Col, e.Msg)
}
