package loader

import (
	"errors"
	"io"

	"github.com/wukongd/wukongd/rdf"
)

func parseTurtle(r io.Reader, trig bool, opts Options, emit func(rdf.Quad) error) error {
	return errors.New("cannot parse: the Turtle/TriG parser is not in this build yet")
}

func parseRDFXML(r io.Reader, opts Options, emit func(rdf.Quad) error) error {
	return errors.New("cannot parse: the RDF/XML parser is not in this build yet")
}
