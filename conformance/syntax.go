package conformance

import (
	"fmt"
	"os"
	"strings"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// SyntaxTest is one positive or negative syntax test of the query or
// update suite.
type SyntaxTest struct {
	ID, Dir  string
	Type     string // PositiveSyntaxTest11, NegativeSyntaxTest11, PositiveUpdateSyntaxTest11, NegativeUpdateSyntaxTest11
	File     Doc    // mf:action
	Update   bool
	Positive bool
}

// LoadSyntaxTests reads the syntax tests of the query and update manifests
// (and those they include).
func LoadSyntaxTests(root string) ([]SyntaxTest, error) {
	s := &Suite{Root: root}
	var out []SyntaxTest
	seen := map[string]bool{}
	for _, m := range []string{"manifest-sparql11-query.ttl", UpdateManifest, "manifest-sparql11-fed.ttl"} {
		err := s.eachEntry(SuiteBase+m, seen, func(g graph, e rdf.Term, dir string) error {
			typ, _ := strings.CutPrefix(g.one(e, rdf.RDFType).Value, mfNS)
			switch typ {
			case "PositiveSyntaxTest11", "NegativeSyntaxTest11", "PositiveUpdateSyntaxTest11", "NegativeUpdateSyntaxTest11":
			default:
				return nil
			}
			id, _ := strings.CutPrefix(e.Value, SuiteBase)
			doc, err := s.doc(g.one(e, mfNS+"action").Value)
			if err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
			out = append(out, SyntaxTest{ID: id, Dir: dir, Type: typ, File: doc,
				Update: strings.Contains(typ, "Update"), Positive: strings.HasPrefix(typ, "Positive")})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RunSyntax parses the test's file (with its location as base IRI): a
// positive test must parse, a negative one must fail with a
// *sparql.SyntaxError.
func RunSyntax(t SyntaxTest) Outcome {
	out := Outcome{ID: t.ID, Dir: t.Dir}
	text, err := os.ReadFile(t.File.Path)
	if err != nil {
		out.Status, out.Reason = Fail, err.Error()
		return out
	}
	src := "BASE <" + t.File.IRI + "> " + string(text)
	if t.Update {
		_, err = sparql.ParseUpdate(src)
	} else {
		_, err = sparql.ParseQuery(src)
	}
	switch {
	case t.Positive && err != nil:
		out.Status, out.Reason = Fail, firstLine("rejected: "+err.Error())
	case !t.Positive && err == nil:
		out.Status, out.Reason = Fail, "parsed, but the text must be rejected"
	default:
		out.Status = Pass
	}
	out.Detail = string(text)
	return out
}
