package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wukongd/wukongd/datasets"
	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/sparql"
	"github.com/wukongd/wukongd/wal"
	"github.com/wukongd/wukongd/web"
)

// Options configure a Service.
type Options struct {
	// Shards is the number of shards of the stores the service builds
	// (the default data set, --empty); default 4. A snapshot keeps its own
	// shard count, and writes keep the served dataset's.
	Shards int
	// Workers is the number of worker goroutines per node of the engine
	// (default GOMAXPROCS).
	Workers int
	// MaxQueryMemory, MaxMemory and MaxValueBytes bound a query's
	// accounted memory, the sum over running queries, and a string an
	// expression makes (exec.Config: 0 the engine's defaults, a negative
	// memory none).
	MaxQueryMemory, MaxMemory int64
	MaxValueBytes             int
	// Mode is the execution mode of queries that do not ask for one
	// (web.QueryRequest.Mode): planner.ModeAuto (the planner chooses per
	// step), ModeInPlace or ModeForkJoin.
	Mode planner.Mode
	// ForkThreshold overrides the rows from which a step forks in auto
	// mode (0: derived from the cost model).
	ForkThreshold float64
	// Prefixes abbreviate Turtle and RDF/XML output (prefix → namespace).
	// Nil: rdf, rdfs, owl, xsd and ub (the LUBM ontology).
	Prefixes map[string]string
	// ParseCache is the capacity of the parse cache (default 1024).
	ParseCache int
	// NewEngine, if set, builds the engine over the default graph's store
	// instead of exec.NewDatasetEngine over the dataset (a node of a
	// cluster runs an engine over its own shards; package cluster). It
	// serves datasets without named graphs only.
	NewEngine func(st *graphstore.Store, cfg exec.Config) (*exec.Engine, error)
	// CompactDeltaBytes is the size of the write delta from which a
	// background compaction starts (0: DefaultCompactDeltaBytes; < 0:
	// only on demand, Compact).
	CompactDeltaBytes int64
	// CheckpointLogTriples bounds the log a restart replays: when the
	// records after the data directory's newest checkpoint (or snapshot)
	// hold this many triples (inserted and deleted; one for a change of
	// none), a background checkpoint of the delta is written
	// (checkpoint.go; a compaction for a dataset with reasoning) (0:
	// DefaultCheckpointLogTriples; < 0: the log alone never starts one).
	CheckpointLogTriples int64
	// CompactLogTriples bounds the log kept since the snapshot (the
	// checkpoints never retire it: a damaged one falls back to the
	// snapshot and the whole log): past this weight a background
	// compaction writes a new snapshot and retires the log (0:
	// DefaultCompactLogTriples; < 0: never by the log's length).
	CompactLogTriples int64
	// OnCheckpoint, if set, is called when a checkpoint is written, with
	// its version, its bytes and how long the write took.
	OnCheckpoint func(version uint64, bytes int64, took time.Duration)
	// OnCompacted, if set, is called with the version a compaction wrote
	// (after its snapshot is durable, before the switch).
	OnCompacted func(version uint64)
	// LoadMaxBytes caps the document a LOAD fetches (default
	// DefaultLoadMaxBytes); LoadTimeout bounds the fetch (default
	// DefaultLoadTimeout). LoadTransport, if set, makes LOAD's HTTP
	// requests (default http.DefaultTransport). Which sources LOAD may
	// fetch is the request's (web.UpdateRequest.AllowedLoads).
	LoadMaxBytes  int64
	LoadTimeout   time.Duration
	LoadTransport http.RoundTripper
	// VerifyChecksums makes Open read every byte of the snapshot to check
	// its CRC-32C before serving. Off, Open stays O(1) in the data size:
	// the files are mapped and only their sizes, headers and bounds are
	// checked (the page cache then holds the only copy of the data, read
	// in as queries touch it).
	VerifyChecksums bool
}

// DefaultPrefixes are the prefixes used when Options.Prefixes is nil.
func DefaultPrefixes() map[string]string {
	return map[string]string{
		"rdf":  rdf.RDFNS,
		"rdfs": "http://www.w3.org/2000/01/rdf-schema#",
		"owl":  "http://www.w3.org/2002/07/owl#",
		"xsd":  rdf.XSD,
		"ub":   datasets.UnivBench,
	}
}

// Service serves a dataset through the engine. It implements web.Backend,
// web.FabricStatser, web.Readier and web.Prefixer, and is safe for
// concurrent use.
type Service struct {
	opts  Options
	cache *sparql.Cache
	// shapes keeps query templates by shape: a query of a known shape
	// skips the parser and the planner (query.go, queryShape).
	shapes *sparql.Shapes
	cur    atomic.Pointer[generation]
	// writeMu serializes the building of writes (each builds on the
	// newest generation, tip) and guards tip and pending.
	writeMu sync.Mutex
	// reasoner keeps a dataset's materialization up to date (reason.go;
	// guarded by writeMu).
	reasoner reasoner
	closed   atomic.Bool
	// log, if set, makes writes durable (durable.go): a write's generation
	// is built on tip, waits in pending until its record is durable, and
	// is then published (in LSN order). Without a log, tip is cur.
	log     *wal.Log
	tip     *generation
	pending []*pendingWrite
	// superseded are generations replaced under writeMu, released by
	// unlockWrites (in the background: releasing counts those running).
	superseded []*generation
	releasing  sync.WaitGroup
	// dataDir is the data directory of a durable service (compaction
	// writes its snapshot there); compact is the compaction's state
	// (compact.go), guarded by writeMu.
	dataDir string
	compact compactState
	ckpt    ckptState
	// bgMu is held by the compaction or checkpoint running (one at a
	// time: a compaction makes the checkpoints obsolete).
	bgMu sync.Mutex
	// background runs the compactions the service starts itself, under
	// bgCtx; Close cancels it and waits for them (a compaction writes the
	// data directory, which is not ours once Close has unlocked it).
	background sync.WaitGroup
	bgCtx      context.Context
	bgCancel   context.CancelFunc
	// logWeight is the weight (changeWeight) of every record appended
	// since the service opened, replayed ones included; snapWeight that
	// of those the snapshot holds. Guarded by writeMu.
	logWeight, snapWeight int64
	// recovery is set while the log is being replayed (queries and
	// writes are not served yet); nil once the service is ready.
	recovery atomic.Pointer[recoveryProgress]
	// blanks names the blank nodes of bodies and INSERTs: a prefix unique
	// to this service (random, so that it cannot meet the labels of a
	// snapshot written by an earlier process) and a counter.
	blankBase string
	blankSeq  atomic.Uint64
	// rewrites keeps the queries rewritten for a request (rewrite).
	rewriteMu sync.Mutex
	rewrites  map[rewriteKey]*sparql.Query
	// complete keeps the console's term index (complete.go).
	complete completer

	// Fabric counters only grow: the fabrics of live stores (shared by
	// generations, and by a store's versions) are summed with the final
	// counters of the released ones.
	statsMu sync.Mutex
	live    map[*generation]struct{}
	fabrics map[rdmakv.Fabric]int // stores of live generations on each fabric (a store's versions share theirs)
	retired web.FabricStats
}

var (
	_ web.Backend       = (*Service)(nil)
	_ web.FabricStatser = (*Service)(nil)
	_ web.Readier       = (*Service)(nil)
	_ web.Compactor     = (*Service)(nil)
	_ web.Prefixer      = (*Service)(nil)
	_ web.InlineQuerier = (*Service)(nil)
)

// generation is one immutable dataset and the engine over it. refs counts
// the service's own reference (while current or pending) and one per
// query or iterator using it; at zero the engine and the dataset are
// closed (the dataset closes the stores no newer generation shares). The
// engine is started when the generation is published (or a write's
// WHERE needs it first): a version that a group commit superseded before
// it was published is never served and never gets one.
type generation struct {
	svc   *Service
	ds    *graphstore.Dataset
	engMu sync.Mutex
	eng   *exec.Engine // nil until engine
	// started is eng once set, for a later generation's engine to take
	// over its cached plans (engine) without taking engMu.
	started atomic.Pointer[exec.Engine]
	refs    atomic.Int64
}

// engine returns the engine over g's dataset, starting it on first use
// with the cached plans of the served generation's engine (each checked
// before use: exec.Engine.InheritPlans) and its bitmaps of the classes
// no write since touched (exec.Engine.InheritTypeSets), so a reader
// meeting a new version does not plan again what it planned on the last
// one, nor read again the instances of every class it type-checks.
func (g *generation) engine() (*exec.Engine, error) {
	g.engMu.Lock()
	defer g.engMu.Unlock()
	if g.eng == nil {
		eng, err := g.svc.newEngine(g.ds)
		if err != nil {
			return nil, err
		}
		if g.svc.opts.NewEngine == nil {
			if cur := g.svc.cur.Load(); cur != nil && cur != g {
				prev := cur.started.Load()
				eng.InheritPlans(prev)
				eng.InheritTypeSets(prev)
			}
		}
		g.eng = eng
		g.started.Store(eng)
	}
	return g.eng, nil
}

// version is the generation's dataset's version: the LSN of the log
// record that made it.
func (g *generation) version() uint64 { return g.ds.Version() }

// New serves st as the default graph of a dataset without named graphs.
// The service takes st over: it closes it when it is no longer served, or
// when New fails.
func New(st *graphstore.Store, opts Options) (*Service, error) {
	return NewDataset(graphstore.NewDataset(st), opts)
}

// NewDataset serves ds, which the service takes over: it closes it when
// it is no longer served, or when NewDataset fails.
func NewDataset(ds *graphstore.Dataset, opts Options) (*Service, error) {
	if opts.Shards <= 0 {
		opts.Shards = 4
	}
	if opts.ParseCache <= 0 {
		opts.ParseCache = 1024
	}
	if opts.Prefixes == nil {
		opts.Prefixes = DefaultPrefixes()
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		ds.Close()
		return nil, fmt.Errorf("cannot seed blank node labels: %w", err)
	}
	s := &Service{opts: opts, cache: sparql.NewCache(opts.ParseCache), shapes: sparql.NewShapes(opts.ParseCache, 0),
		blankBase: "w" + hex.EncodeToString(rnd[:]),
		live:      map[*generation]struct{}{}, fabrics: map[rdmakv.Fabric]int{}}
	s.bgCtx, s.bgCancel = context.WithCancel(context.Background())
	g, err := s.newGeneration(ds)
	if err == nil {
		_, err = g.engine()
	}
	if err != nil {
		if g != nil {
			g.retire()
		}
		ds.Close()
		return nil, err
	}
	s.cur.Store(g)
	s.tip = g
	return s, nil
}

// Open serves the snapshot at dir (mapped, not reparsed): a single-graph
// snapshot (format 1) or a dataset snapshot with named graphs (format 2,
// written by wukongd load of N-Quads or TriG).
func Open(dir string, opts Options) (*Service, error) {
	ds, err := graphstore.OpenDataset(dir, graphstore.OpenOptions{SkipChecksums: !opts.VerifyChecksums})
	if err != nil {
		return nil, err
	}
	return NewDataset(ds, opts)
}

// NewEmpty serves an empty dataset.
func NewEmpty(opts Options) (*Service, error) {
	st, err := BuildStore(shardsOf(opts), nil)
	if err != nil {
		return nil, err
	}
	return New(st, opts)
}

// NewDefault generates the embedded default data set
// (datasets.DefaultDataset) in memory and serves it as the default graph
// of a dataset without named graphs.
func NewDefault(opts Options) (*Service, error) {
	st, err := BuildStore(shardsOf(opts), func(emit func(rdf.Triple) error) error {
		_, err := datasets.DefaultDataset(emit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot build the default data set: %w", err)
	}
	return New(st, opts)
}

func shardsOf(opts Options) int {
	if opts.Shards <= 0 {
		return 4
	}
	return opts.Shards
}

// BuildStore builds an in-memory store of shards shards from the triples
// that each calls emit with (nil: an empty store).
func BuildStore(shards int, each func(emit func(rdf.Triple) error) error) (*graphstore.Store, error) {
	b, err := graphstore.NewBuilder(shards)
	if err != nil {
		return nil, err
	}
	if each != nil {
		const batchSize = 4096
		batch := make([]rdf.Triple, 0, batchSize)
		err := each(func(t rdf.Triple) error {
			batch = append(batch, t)
			if len(batch) == batchSize {
				err := b.AddTriples(batch)
				batch = batch[:0]
				return err
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if err := b.AddTriples(batch); err != nil {
			return nil, err
		}
	}
	return b.Build()
}

// newBlankPrefix returns a prefix for the blank nodes of one document or
// one INSERT: different from every other prefix of this service.
func (s *Service) newBlankPrefix() string {
	return fmt.Sprintf("%sn%d_", s.blankBase, s.blankSeq.Add(1))
}

// newEngine returns the engine over ds: exec.NewDatasetEngine, or
// Options.NewEngine over the default graph.
func (s *Service) newEngine(ds *graphstore.Dataset) (*exec.Engine, error) {
	cfg := exec.Config{Workers: s.opts.Workers, MaxQueryMemory: s.opts.MaxQueryMemory, MaxMemory: s.opts.MaxMemory,
		MaxValueBytes: s.opts.MaxValueBytes}
	if s.opts.NewEngine == nil {
		return exec.NewDatasetEngine(ds, cfg)
	}
	if ds.NumGraphs() > 0 {
		return nil, fmt.Errorf("%w: named graphs with a custom engine (Options.NewEngine serves the default graph only)", web.ErrUnsupported)
	}
	return s.opts.NewEngine(ds.Default(), cfg)
}

// storesOf returns the stores of ds: the default graph's and the named
// graphs'.
func storesOf(ds *graphstore.Dataset) []*graphstore.Store {
	out := []*graphstore.Store{ds.Default()}
	for _, g := range ds.Graphs() {
		out = append(out, g.Store)
	}
	return out
}

// newGeneration makes the generation of ds (its engine starts later:
// generation.engine). On error ds is not closed.
func (s *Service) newGeneration(ds *graphstore.Dataset) (*generation, error) {
	if s.opts.NewEngine != nil && ds.NumGraphs() > 0 {
		return nil, fmt.Errorf("%w: named graphs with a custom engine (Options.NewEngine serves the default graph only)", web.ErrUnsupported)
	}
	g := &generation{svc: s, ds: ds}
	g.refs.Store(1)
	s.statsMu.Lock()
	s.live[g] = struct{}{}
	for _, st := range storesOf(ds) {
		s.fabrics[st.Fabric()]++
	}
	s.statsMu.Unlock()
	return g, nil
}

// acquire returns the current generation with a reference taken.
func (s *Service) acquire() (*generation, error) {
	for {
		if s.closed.Load() {
			return nil, fmt.Errorf("%w: the service is closed", web.ErrNotReady)
		}
		if p := s.recovery.Load(); p != nil {
			return nil, p.err()
		}
		if g := s.ref(); g != nil {
			return g, nil
		}
	}
}

// ref returns the current generation with a reference taken, or nil if it
// was just retired (try again: the pointer has moved on).
func (s *Service) ref() *generation {
	g := s.cur.Load()
	if g.tryRef() {
		return g
	}
	return nil
}

func (g *generation) tryRef() bool {
	for {
		n := g.refs.Load()
		if n <= 0 {
			return false
		}
		if g.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference; the last one closes the engine and the
// dataset (which closes the stores no other generation shares).
func (g *generation) release() {
	if g.refs.Add(-1) != 0 {
		return
	}
	g.retire()
	g.ds.Close()
}

// discard drops a generation that was never published (its dataset is
// Discarded: its version's changes undone); later ones built on it must
// be discarded first.
func (g *generation) discard() {
	if g.refs.Add(-1) != 0 {
		panic("BUG: an unpublished generation has references")
	}
	g.retire()
	g.ds.Discard()
}

// retire closes g's engine and moves its stores' counters to the retired
// totals.
func (g *generation) retire() {
	g.engMu.Lock()
	if g.eng != nil {
		g.eng.Close()
	}
	g.engMu.Unlock()
	s := g.svc
	s.statsMu.Lock()
	for _, st := range storesOf(g.ds) {
		f := st.Fabric()
		if s.fabrics[f]--; s.fabrics[f] == 0 {
			s.retired = addStats(s.retired, fabricStats(f))
			delete(s.fabrics, f)
		}
	}
	delete(s.live, g)
	s.statsMu.Unlock()
}

// publish makes ds the served dataset and releases the old generation.
// It takes ds over (discarding it on error). The caller holds writeMu and
// nothing is pending.
func (s *Service) publish(ds *graphstore.Dataset) error {
	g, err := s.newGeneration(ds)
	if err == nil {
		_, err = g.engine()
		if err != nil {
			g.retire()
		}
	}
	if err != nil {
		ds.Discard()
		return err
	}
	s.swap(g)
	return nil
}

// swap makes g current (starting its engine) and releases the old
// generation once writeMu is released (unlockWrites: closing an engine
// waits for its goroutines, which no write should wait for); tip follows
// if it was the old one.
func (s *Service) swap(g *generation) {
	// The engine's start can only fail for reasons of the dataset's shape
	// (its shards, a custom engine with named graphs: newGeneration),
	// which every version of a lineage shares with the first one.
	if _, err := g.engine(); err != nil {
		panic(fmt.Sprintf("BUG: version %d is durable but its engine does not start: %v", g.version(), err))
	}
	old := s.cur.Swap(g)
	if s.tip == old {
		s.tip = g
	}
	s.superseded = append(s.superseded, old)
	s.maybeCompact()
}

// unlockWrites releases writeMu, then, off the caller's path, the
// generations superseded under it (a write's response need not wait for
// the old engine's goroutines to stop; Close waits for them).
func (s *Service) unlockWrites() {
	old := s.superseded
	s.superseded = nil
	s.writeMu.Unlock()
	if len(old) == 0 {
		return
	}
	s.releasing.Add(1)
	go func() {
		defer s.releasing.Done()
		for _, g := range old {
			g.release()
		}
	}()
}

// Close stops serving: queries in flight finish, new ones get ErrNotReady.
// Writes waiting for the log fail (their records may or may not be
// durable: a restart replays what is). Close releases the data
// directory's lock.
func (s *Service) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	// Background compactions: none starts from now on (maybeCompact
	// checks closed under writeMu); the running ones stop at their next
	// check, or write their snapshot and skip the switch.
	s.writeMu.Lock()
	s.writeMu.Unlock()
	s.bgCancel()
	s.background.Wait()
	s.writeMu.Lock()
	defer s.releasing.Wait()
	defer s.unlockWrites()
	var err error
	s.shutdownCheckpoint()
	if s.log != nil {
		err = s.log.Close()
		for i := len(s.pending) - 1; i >= 0; i-- {
			p := s.pending[i]
			p.settle(fmt.Errorf("%w: the service closed before the change was published", web.ErrNotReady))
			p.g.discard()
		}
		s.pending = nil
	}
	s.tip = nil
	s.superseded = append(s.superseded, s.cur.Load())
	return err
}

// Info describes what is served.
type Info struct {
	Triples uint64 // distinct triples of all graphs (distinct quads)
	Terms   uint64
	Shards  int
	Graphs  int // named graphs
}

// Info returns the size of the served dataset (while the log is replayed:
// of the snapshot).
func (s *Service) Info() Info {
	if s.closed.Load() {
		return Info{}
	}
	g := s.ref()
	for ; g == nil; g = s.ref() {
	}
	defer g.release()
	return Info{Triples: g.ds.Triples(), Terms: g.ds.Terms(), Shards: g.ds.NumShards(), Graphs: g.ds.NumGraphs()}
}

// Ready implements web.Readier: not ready once closed, nor while the
// write-ahead log is replayed (the error says how far it is).
func (s *Service) Ready(context.Context) error {
	if s.closed.Load() {
		return fmt.Errorf("%w: the service is closed", web.ErrNotReady)
	}
	if p := s.recovery.Load(); p != nil {
		return p.err()
	}
	return nil
}

// Prefixes implements web.Prefixer.
func (s *Service) Prefixes() map[string]string { return s.opts.Prefixes }

// FabricStats implements web.FabricStatser: the fabric traffic of every
// store served so far.
func (s *Service) FabricStats() web.FabricStats {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	out := s.retired
	for f := range s.fabrics {
		out = addStats(out, fabricStats(f))
	}
	return out
}

func fabricStats(f rdmakv.Fabric) web.FabricStats {
	c := f.Counters()
	return web.FabricStats{Reads: int64(c.Reads), ReadBytes: int64(c.ReadBytes),
		Messages: int64(c.Sends), MessageBytes: int64(c.SendBytes)}
}

func addStats(a, b web.FabricStats) web.FabricStats {
	return web.FabricStats{Reads: a.Reads + b.Reads, ReadBytes: a.ReadBytes + b.ReadBytes,
		Messages: a.Messages + b.Messages, MessageBytes: a.MessageBytes + b.MessageBytes}
}

// isCtxErr reports whether err is a context error.
func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// DeltaBytes returns the bytes the served version's write delta uses (0
// while the service is closed or between versions).
func (s *Service) DeltaBytes() uint64 {
	g := s.ref()
	if g == nil {
		return 0
	}
	defer g.release()
	return g.ds.DeltaBytes()
}
