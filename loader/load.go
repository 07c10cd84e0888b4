package loader

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wukongd/wukongd/graphstore"
)

// Config is a load into a snapshot directory.
type Config struct {
	Inputs []string // files, directories or glob patterns
	Out    string   // snapshot directory
	BuildOptions
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
	inputs, err := ExpandInputs(cfg.Inputs)
	if err != nil {
		return Summary{}, err
	}
	ds, sum, err := BuildDataset(ctx, inputs, cfg.BuildOptions)
	if err != nil {
		return sum, err
	}
	defer ds.Close()
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
