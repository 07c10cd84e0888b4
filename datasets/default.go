package datasets

import "github.com/wukongd/wukongd/rdf"

// DefaultLUBMConfig returns the configuration of the small data set that
// the embedded default (`wukongd serve` with no data, `make run`) serves:
// LUBM-1 with seed 0, UBA's LUBM(1, seed 0), 100,573 triples. It is generated, never
// downloaded.
func DefaultLUBMConfig() LUBMConfig {
	return LUBMConfig{Universities: 1, Seed: 0}
}

// DefaultDataset generates the embedded default data set and calls emit for
// each of its triples, in a fixed order; it returns the number of triples.
// It takes a fraction of a second.
func DefaultDataset(emit func(rdf.Triple) error) (int64, error) {
	return GenerateLUBMTriples(DefaultLUBMConfig(), emit)
}
