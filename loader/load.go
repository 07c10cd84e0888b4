package loader

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/reason"
)

// Config is a load into a snapshot directory.
type Config struct {
	Inputs []string // files, directories or glob patterns
	Out    string   // snapshot directory
	// Memory is the budget in bytes for the build's buffers of triples
	// and edges, beyond which they are spilled to a temporary directory
	// beside Out and merged (graphstore.SpillOptions). 0 means
	// DefaultMemory().
	Memory int64
	BuildOptions
	// Reasoning materializes the default graph's closure (package
	// reason) before the snapshot is written; its TBox is read from the
	// default graph, into which Ontology (a file, if set) is loaded too.
	// A load with reasoning builds in memory (the reasoner works on a
	// Dataset) when about 350 bytes per input triple fit in Memory, else
	// it reasons out of core within Memory (loadReasonedOutOfCore; not
	// every rule: reason.Ontology.Streamable).
	Reasoning reason.Profile
	Ontology  string
	// ReasonOutOfCore reasons out of core whatever the inputs' size.
	ReasonOutOfCore bool
}

// DefaultMemory is the default load budget: a quarter of the machine's
// RAM, at least 64 MiB.
func DefaultMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return 1 << 30
	}
	return max(int64(si.Totalram)*int64(si.Unit)/4, 64<<20)
}

// Load parses the inputs and builds the dataset (as BuildDataset:
// statements in named graphs go into their graphs) straight into a
// snapshot in cfg.Out (graphstore.DatasetBuilder.WriteSnapshot: out of
// core within cfg.Memory; temporary directory, fsync, rename; a
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
	if cfg.Reasoning != reason.None {
		if reasonInMemory(cfg, inputs) {
			return loadReasoned(ctx, cfg, inputs, start)
		}
		return loadReasonedOutOfCore(ctx, cfg, start)
	}
	opts := cfg.BuildOptions
	if opts.Shards < 1 {
		opts.Shards = 1
	}
	if opts.Workers < 1 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	memory := cfg.Memory
	if memory <= 0 {
		memory = DefaultMemory()
	}
	out := filepath.Clean(cfg.Out)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return Summary{}, fmt.Errorf("cannot load into %s: %w", out, err)
	}
	spill, err := os.MkdirTemp(filepath.Dir(out), filepath.Base(out)+".spill-*")
	if err != nil {
		return Summary{}, fmt.Errorf("cannot load into %s: %w", out, err)
	}
	defer os.RemoveAll(spill)
	db, err := graphstore.NewDatasetBuilder(opts.Shards)
	if err != nil {
		return Summary{}, err
	}
	if err := db.SpillTo(graphstore.SpillOptions{Dir: spill, Memory: memory}); err != nil {
		return Summary{}, err
	}
	st := &loadState{db: db, opts: opts, free: make(chan []byte, 2*opts.Workers+2)}
	if err := st.parse(ctx, inputs); err != nil {
		return Summary{}, err
	}
	parsed := time.Now()
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}
	stop := reportProgress(opts.Progress, func() Progress {
		bp := db.BuildProgress()
		return Progress{Triples: st.read.Load(), Bytes: st.bytes.Load(), Phase: bp.Phase,
			Done: bp.Done, Total: bp.Total, Spilled: bp.Spilled}
	})
	err = db.WriteSnapshot(out)
	stop()
	if err != nil {
		return Summary{}, fmt.Errorf("cannot publish the snapshot: %w", err)
	}
	c := db.Counters()
	sum := st.summary(len(inputs), start, parsed)
	sum.Duplicates, sum.Distinct, sum.Terms = c.Duplicates, c.Distinct, c.Terms
	for _, g := range c.Graphs {
		sum.Graphs = append(sum.Graphs, GraphSummary{Name: g.Name, Triples: g.Read, Distinct: g.Distinct})
	}
	sum.Spilled = db.BuildProgress().Spilled
	sum.SnapshotBytes = snapshotBytes(out)
	sum.Seconds = time.Since(start).Seconds()
	sum.BuildSeconds = sum.Seconds - sum.ParseSeconds
	return sum, nil
}

// loadReasoned is Load with reasoning: the dataset is built in memory,
// materialized, then written.
func loadReasoned(ctx context.Context, cfg Config, inputs []Input, start time.Time) (Summary, error) {
	ds, sum, err := BuildDataset(ctx, inputs, cfg.BuildOptions)
	if err != nil {
		return sum, err
	}
	defer func() { ds.Close() }()
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
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	if err := graphstore.WriteDataset(cfg.Out, ds); err != nil {
		return sum, fmt.Errorf("cannot publish the snapshot: %w", err)
	}
	sum.SnapshotBytes = snapshotBytes(cfg.Out)
	sum.Seconds = time.Since(start).Seconds()
	return sum, nil
}

// snapshotBytes is the size of the snapshot at dir: its files and manifest.
func snapshotBytes(dir string) int64 {
	var n int64
	if m, err := graphstore.ReadDatasetManifest(dir); err == nil {
		for _, f := range m.Files {
			n += f.Size
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
		n += st.Size()
	}
	return n
}
