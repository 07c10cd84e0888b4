package loader

import (
	"errors"
	"io"

	"github.com/wukongd/wukongd/rdf"
)

func parseRDFXML(r io.Reader, opts Options, emit func(rdf.Quad) error) error {
	return errors.New("cannot parse: the RDF/XML parser is not in this build yet")
}
