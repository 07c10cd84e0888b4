package loader

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/reason"
)

// Config is a load into a snapshot directory.
type Config struct {
	Inputs []string // files, directories or glob patterns
	Out    string   // snapshot directory
	BuildOptions
	// Reasoning materializes the default graph's closure (package
	// reason) before the snapshot is written; its TBox is read from the
	// default graph, into which Ontology (a file, if set) is loaded too.
	Reasoning reason.Profile
	Ontology  string
}

// Load parses the inputs, builds the dataset (BuildDataset: statements in
// named graphs go into their graphs) and publishes it as a snapshot in
// cfg.Out (graphstore.WriteDataset: temporary directory, fsync, rename; a
// single-graph snapshot when there are no named graphs). On any error
// nothing is published and a snapshot already in cfg.Out stays as it was.
func Load(ctx context.Context, cfg Config) (Summary, error) {
	start := time.Now()
	if cfg.Out == "" {
		return Summary{}, fmt.Errorf("cannot load: no output directory")
	}
	patterns := cfg.Inputs
	if cfg.Ontology != "" {
		patterns = append(slices.Clone(patterns), cfg.Ontology)
	}
	inputs, err := ExpandInputs(patterns)
	if err != nil {
		return Summary{}, err
	}
	ds, sum, err := BuildDataset(ctx, inputs, cfg.BuildOptions)
	if err != nil {
		return sum, err
	}
	defer func() { ds.Close() }()
	if cfg.Reasoning != reason.None {
		rds, st, err := reason.MaterializeDataset(ctx, ds, cfg.Reasoning, reason.Options{Workers: cfg.Workers})
		if err != nil {
			return sum, err
		}
		ds.Close()
		ds = rds
		sum.Reasoning, sum.Explicit, sum.Inferred = cfg.Reasoning.String(), st.Explicit, st.Inferred
		sum.ReasonSeconds, sum.ReasonRounds = st.Reason.Seconds()+st.Store.Seconds(), st.Rounds
		sum.MaterializeSeconds = st.Reason.Seconds()
		sum.Distinct = ds.Triples()
	}
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	if err := graphstore.WriteDataset(cfg.Out, ds); err != nil {
		return sum, fmt.Errorf("cannot publish the snapshot: %w", err)
	}
	if m, err := graphstore.ReadDatasetManifest(cfg.Out); err == nil {
		for _, f := range m.Files {
			sum.SnapshotBytes += f.Size
		}
	}
	if st, err := os.Stat(filepath.Join(cfg.Out, "manifest.json")); err == nil {
		sum.SnapshotBytes += st.Size()
	}
	sum.Seconds = time.Since(start).Seconds()
	return sum, nil
}
