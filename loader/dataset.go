package loader

import (
	"context"
	"runtime"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
)

// GraphSummary is one graph of a dataset load.
type GraphSummary struct {
	Name     rdf.Term // the zero Term for the default graph
	Triples  uint64   // statements read
	Distinct uint64   // distinct triples stored
}

// BuildDataset is BuildStore for a dataset: statements in named graphs
// (N-Quads, TriG) go into their graph, each graph its own store over one
// shared dictionary (graphstore.DatasetBuilder). Summary.Graphs lists the
// graphs; Duplicates, Distinct and Terms are totals over all graphs.
func BuildDataset(ctx context.Context, inputs []Input, opts BuildOptions) (*graphstore.Dataset, Summary, error) {
	start := time.Now()
	if opts.Shards < 1 {
		opts.Shards = 1
	}
	if opts.Workers < 1 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	db, err := graphstore.NewDatasetBuilder(opts.Shards)
	if err != nil {
		return nil, Summary{}, err
	}
	st := &loadState{db: db, opts: opts, free: make(chan []byte, 2*opts.Workers+2)}
	if err := st.parse(ctx, inputs); err != nil {
		return nil, Summary{}, err
	}
	parsed := time.Now()
	ds, err := db.Build()
	if err != nil {
		return nil, Summary{}, err
	}
	c := db.Counters()
	sum := st.summary(len(inputs), start, parsed)
	sum.Duplicates, sum.Distinct, sum.Terms = c.Duplicates, c.Distinct, ds.Terms()
	for _, g := range c.Graphs {
		sum.Graphs = append(sum.Graphs, GraphSummary{Name: g.Name, Triples: g.Read, Distinct: g.Distinct})
	}
	return ds, sum, nil
}
