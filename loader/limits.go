package loader

// MaxNesting is the deepest the parsers nest: blank node property lists
// and collections ([ … ], ( … )) in Turtle and TriG, elements in RDF/XML.
// Deeper input is a *SyntaxError at the place the limit was passed, so
// that no document can drive the parsers' recursion (or the RDF/XML
// element tree) past a small, fixed depth.
const MaxNesting = 1000
