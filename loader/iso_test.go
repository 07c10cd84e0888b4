package loader

import "github.com/wukongd/wukongd/rdf"

// isomorphic compares two RDF datasets, a parsed and b expected, up to
// blank node renaming: rdf.MatchBags over their distinct quads. It returns
// "" when they are isomorphic, else a reason.
func isomorphic(a, b []rdf.Quad) string {
	_, diff := rdf.MatchBags(quadTuples(a), quadTuples(b))
	return diff
}

// quadTuples returns the distinct quads of qs as tuples (S, P, O, G).
func quadTuples(qs []rdf.Quad) [][]rdf.Term {
	seen := make(map[rdf.Quad]bool, len(qs))
	out := make([][]rdf.Term, 0, len(qs))
	for _, q := range qs {
		if !seen[q] {
			seen[q] = true
			out = append(out, []rdf.Term{q.S, q.P, q.O, q.G})
		}
	}
	return out
}
