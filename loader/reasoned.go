package loader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/reason"
)

// reasonBytesPerTriple is about what an in-memory load with reasoning
// holds per explicit triple at its peak (LUBM-40: 1.74 GiB for 5.3 M
// explicit, 7.8 M closure triples; docs/PERFORMANCE.md): beyond the memory
// budget, Load reasons out of core.
const reasonBytesPerTriple = 350

// reasonInMemory reports whether a load with reasoning of inputs fits
// cfg's budget in memory: the inputs' size bounds their triples (at least
// 40 bytes of N-Triples each, 4 compressed).
func reasonInMemory(cfg Config, inputs []Input) bool {
	if cfg.ReasonOutOfCore {
		return false
	}
	memory := cfg.Memory
	if memory <= 0 {
		memory = DefaultMemory()
	}
	var triples int64
	for _, in := range inputs {
		per := int64(40)
		if strings.HasSuffix(in.Name, ".gz") {
			per = 4
		}
		triples += in.Size / per
	}
	return triples*reasonBytesPerTriple <= memory
}

// loadReasonedOutOfCore is Load with reasoning within cfg.Memory:
//
//  1. the inputs are loaded out of core (as without reasoning) into a
//     temporary snapshot beside cfg.Out, which is opened (its files are
//     mapped, not read into memory);
//  2. the ontology is compiled from its TBox triples (one scan);
//  3. reason.MaterializeStream reads the explicit triples in a few passes
//     (one over the snapshot, the others over a file of the edges its
//     joins need) with one bit per (vertex, class) and the transitive
//     properties' edges in memory; the explicit triples of that first
//     pass and the inferred ones it emits are turned back into terms and
//     fed to a new out-of-core DatasetBuilder (the inferred ones into the
//     default graph and its inferred layer), which writes the snapshot.
//
// Named graphs are copied as they are. The dictionary of the result is
// the new builder's (inferred triples give the derived classes and
// predicates their roles as they are added).
func loadReasonedOutOfCore(ctx context.Context, cfg Config, start time.Time) (Summary, error) {
	out := filepath.Clean(cfg.Out)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return Summary{}, fmt.Errorf("cannot load into %s: %w", out, err)
	}
	work, err := os.MkdirTemp(filepath.Dir(out), filepath.Base(out)+".reason-*")
	if err != nil {
		return Summary{}, fmt.Errorf("cannot load into %s: %w", out, err)
	}
	defer os.RemoveAll(work)
	memory := cfg.Memory
	if memory <= 0 {
		memory = DefaultMemory()
	}
	// 1. The explicit triples, out of core.
	explicitCfg := cfg
	explicitCfg.Reasoning, explicitCfg.Out = reason.None, filepath.Join(work, "explicit")
	sum, err := Load(ctx, explicitCfg)
	if err != nil {
		return sum, err
	}
	loaded := time.Now()
	ds, err := graphstore.OpenDataset(explicitCfg.Out, graphstore.OpenOptions{SkipChecksums: true})
	if err != nil {
		return sum, fmt.Errorf("cannot reason: %w", err)
	}
	defer ds.Close()
	dict, def := ds.Dict(), ds.Default()

	// 2. The ontology.
	voc := reason.NewVocab(func(iri string) (graphstore.ID, bool) { return dict.Lookup(rdf.NewIRI(iri)) })
	var tbox []reason.Triple
	sameAs := false
	if err := def.EachTriple(ctx, func(s, p, o graphstore.ID) error {
		t := reason.Triple{S: s, P: p, O: o}
		if voc.IsTBox(t) {
			tbox = append(tbox, t)
		}
		sameAs = sameAs || (p == voc.SameAs && p != 0)
		return nil
	}); err != nil {
		return sum, fmt.Errorf("cannot reason: %w", err)
	}
	onto := reason.Compile(cfg.Reasoning, voc, tbox, sameAs)
	if err := onto.Streamable(); err != nil {
		return sum, fmt.Errorf("cannot reason out of core (the in-memory path covers every rule: give it --memory of about %d bytes per triple): %w", reasonBytesPerTriple, err)
	}

	// 3. Materialize and write.
	opts := cfg.BuildOptions
	if opts.Shards < 1 {
		opts.Shards = 1
	}
	if opts.Workers < 1 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	db, err := graphstore.NewDatasetBuilder(opts.Shards)
	if err != nil {
		return sum, err
	}
	spill := filepath.Join(work, "spill")
	if err := os.Mkdir(spill, 0o755); err != nil {
		return sum, fmt.Errorf("cannot reason: %w", err)
	}
	// The builder gets what the type bits (a word or a few per vertex)
	// and the mapped snapshot's pages leave of the budget.
	if err := db.SpillTo(graphstore.SpillOptions{Dir: spill, Memory: max(memory*2/3, 64<<20)}); err != nil {
		return sum, err
	}
	feed := newTermFeed(ctx, dict, db, cfg.Reasoning.String(), opts.Workers)
	reasonStart := time.Now()
	var edges []graphstore.ID
	in := reason.StreamInput{
		Each: func(ctx context.Context, fn func(reason.Triple) error) error {
			return def.EachTriple(ctx, func(s, p, o graphstore.ID) error {
				t := reason.Triple{S: s, P: p, O: o}
				if err := feed.explicit(t); err != nil {
					return err
				}
				return fn(t)
			})
		},
		HasEdge: func(t reason.Triple) bool {
			v := def.Shard(def.Owner(t.S))
			var err error
			edges, err = v.AppendEdges(ctx, edges[:0], t.S, t.P, graphstore.Out)
			if err != nil {
				return false
			}
			_, ok := slices.BinarySearch(edges, t.O)
			return ok
		},
		MaxID:     dict.MaxID(),
		IsLiteral: dict.IsLiteral,
		Dir:       work,
		Memory:    memory / 8,
	}
	st, err := reason.MaterializeStream(ctx, onto, in, feed.inferred)
	for _, g := range ds.Graphs() { // named graphs as they are
		if err != nil {
			break
		}
		if err = db.AddGraph(g.Name); err == nil {
			err = g.Store.EachTriple(ctx, func(s, p, o graphstore.ID) error { return feed.named(g.Name, reason.Triple{S: s, P: p, O: o}) })
		}
	}
	if ferr := feed.close(false); err == nil {
		err = ferr
	}
	if err != nil {
		return sum, err
	}
	materialized := time.Since(reasonStart)
	ds.Close()
	if err := db.WriteSnapshot(out); err != nil {
		return sum, fmt.Errorf("cannot publish the snapshot: %w", err)
	}
	c := db.Counters()
	sum.Reasoning, sum.Explicit, sum.Inferred = cfg.Reasoning.String(), st.Explicit, c.Inferred
	sum.ReasonRounds = st.Passes
	sum.MaterializeSeconds = materialized.Seconds()
	sum.ReasonSeconds = time.Since(loaded).Seconds()
	sum.Distinct, sum.Terms = c.Distinct, c.Terms
	sum.Graphs = sum.Graphs[:0]
	for _, g := range c.Graphs {
		sum.Graphs = append(sum.Graphs, GraphSummary{Name: g.Name, Triples: g.Read, Distinct: g.Distinct})
	}
	sum.Spilled += db.BuildProgress().Spilled
	sum.SnapshotBytes = snapshotBytes(out)
	sum.Seconds = time.Since(start).Seconds()
	return sum, nil
}

// termFeed turns ID triples of a dictionary back into terms and adds them
// to a DatasetBuilder, in batches, on workers.
type termFeed struct {
	ctx       context.Context
	dict      *graphstore.Dict
	db        *graphstore.DatasetBuilder
	reasoning string
	workers   int
	jobs      chan feedBatch
	wg        sync.WaitGroup
	mu        sync.Mutex
	err       error
	exp, inf  []reason.Triple
	graph     rdf.Term
	nam       []reason.Triple
}

type feedBatch struct {
	ts       []reason.Triple
	inferred bool
	graph    rdf.Term
}

const feedBatchSize = 8192

func newTermFeed(ctx context.Context, dict *graphstore.Dict, db *graphstore.DatasetBuilder, reasoning string, workers int) *termFeed {
	f := &termFeed{ctx: ctx, dict: dict, db: db, reasoning: reasoning, workers: workers}
	f.start()
	return f
}

func (f *termFeed) start() {
	f.jobs = make(chan feedBatch, 2*f.workers)
	for range f.workers {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			var ts []rdf.Triple
			for b := range f.jobs {
				if f.failed() != nil {
					continue
				}
				ts = ts[:0]
				var err error
				for _, t := range b.ts {
					var x rdf.Triple
					var ok [3]bool
					x.S, ok[0] = f.dict.Term(t.S)
					x.P, ok[1] = f.dict.Term(t.P)
					x.O, ok[2] = f.dict.Term(t.O)
					if !ok[0] || !ok[1] || !ok[2] {
						err = fmt.Errorf("BUG: triple (%d %d %d) has an ID the dictionary lacks", t.S, t.P, t.O)
						break
					}
					ts = append(ts, x)
				}
				if err == nil {
					if b.inferred {
						err = f.db.AddInferredTriples(f.reasoning, ts)
					} else {
						err = f.db.AddTriples(b.graph, ts)
					}
				}
				if err != nil {
					f.fail(err)
				}
			}
		}()
	}
}

func (f *termFeed) fail(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

func (f *termFeed) failed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *termFeed) send(b *[]reason.Triple, inferred bool, graph rdf.Term, force bool) error {
	if len(*b) < feedBatchSize && !(force && len(*b) > 0) {
		return nil
	}
	if err := f.failed(); err != nil {
		return err
	}
	select {
	case f.jobs <- feedBatch{ts: *b, inferred: inferred, graph: graph}:
	case <-f.ctx.Done():
		return f.ctx.Err()
	}
	*b = make([]reason.Triple, 0, feedBatchSize)
	return nil
}

func (f *termFeed) explicit(t reason.Triple) error {
	f.exp = append(f.exp, t)
	return f.send(&f.exp, false, rdf.Term{}, false)
}

func (f *termFeed) inferred(t reason.Triple) error {
	f.inf = append(f.inf, t)
	return f.send(&f.inf, true, rdf.Term{}, false)
}

func (f *termFeed) named(g rdf.Term, t reason.Triple) error {
	if g != f.graph {
		if err := f.send(&f.nam, false, f.graph, true); err != nil {
			return err
		}
		f.graph = g
	}
	f.nam = append(f.nam, t)
	return f.send(&f.nam, false, g, false)
}

// close sends what is left, waits for the workers and returns the first
// error; with again, the feed can be used afterwards.
func (f *termFeed) close(again bool) error {
	err := errors.Join(f.send(&f.exp, false, rdf.Term{}, true), f.send(&f.inf, true, rdf.Term{}, true),
		f.send(&f.nam, false, f.graph, true))
	close(f.jobs)
	f.wg.Wait()
	if err == nil {
		err = f.failed()
	}
	if err == nil && again {
		f.start()
	}
	return err
}
