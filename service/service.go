package service

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/wukongd/wukongd/datasets"
	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
	"github.com/wukongd/wukongd/web"
)

// Options configure a Service.
type Options struct {
	// Shards is the number of shards of stores the service builds (the
	// default data set, --empty, and every write); default 4. A snapshot
	// keeps its own shard count until the first write.
	Shards int
	// Workers is the number of worker goroutines per node of the engine
	// (default GOMAXPROCS).
	Workers int
	// Mode is the execution mode of every query: planner.ModeAuto (the
	// planner chooses per step), ModeInPlace or ModeForkJoin.
	Mode planner.Mode
	// ForkThreshold overrides the rows from which a step forks in auto
	// mode (0: derived from the cost model).
	ForkThreshold float64
	// Prefixes abbreviate Turtle and RDF/XML output (prefix → namespace).
	// Nil: rdf, rdfs, owl, xsd and ub (the LUBM ontology).
	Prefixes map[string]string
	// ParseCache is the capacity of the parse cache (default 1024).
	ParseCache int
	// NewEngine, if set, builds the engine over a store instead of
	// exec.NewGraphEngine (a node of a cluster runs an engine over its
	// own shards; package cluster).
	NewEngine func(st *graphstore.Store, cfg exec.Config) (*exec.Engine, error)
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

// Service serves a store through the engine. It implements web.Backend,
// web.FabricStatser, web.Readier and web.Prefixer, and is safe for
// concurrent use.
type Service struct {
	opts  Options
	cache *sparql.Cache
	cur   atomic.Pointer[generation]
	// writeMu serializes writes (each builds on the current generation).
	writeMu sync.Mutex
	closed  atomic.Bool

	// Fabric counters only grow: live generations are summed with the
	// final counters of the closed ones.
	statsMu sync.Mutex
	live    map[*generation]struct{}
	retired web.FabricStats
}

var (
	_ web.Backend       = (*Service)(nil)
	_ web.FabricStatser = (*Service)(nil)
	_ web.Readier       = (*Service)(nil)
	_ web.Prefixer      = (*Service)(nil)
)

// generation is one immutable store and the engine over it. refs counts
// the service's own reference (while current) and one per query or
// iterator using it; at zero the engine and store are closed.
type generation struct {
	svc   *Service
	store *graphstore.Store
	eng   *exec.Engine
	refs  atomic.Int64
}

// New serves st, which the service takes over (it closes it when st is no
// longer served).
func New(st *graphstore.Store, opts Options) (*Service, error) {
	if opts.Shards <= 0 {
		opts.Shards = 4
	}
	if opts.ParseCache <= 0 {
		opts.ParseCache = 1024
	}
	if opts.Prefixes == nil {
		opts.Prefixes = DefaultPrefixes()
	}
	s := &Service{opts: opts, cache: sparql.NewCache(opts.ParseCache), live: map[*generation]struct{}{}}
	g, err := s.newGeneration(st)
	if err != nil {
		return nil, err
	}
	s.cur.Store(g)
	return s, nil
}

// Open serves the snapshot at dir (mapped, not reparsed).
func Open(dir string, opts Options) (*Service, error) {
	st, err := graphstore.OpenSnapshot(dir, graphstore.OpenOptions{})
	if err != nil {
		return nil, err
	}
	s, err := New(st, opts)
	if err != nil {
		st.Close()
		return nil, err
	}
	return s, nil
}

// NewEmpty serves an empty store.
func NewEmpty(opts Options) (*Service, error) {
	st, err := BuildStore(shardsOf(opts), nil)
	if err != nil {
		return nil, err
	}
	return newOwning(st, opts)
}

// NewDefault generates the embedded default data set
// (datasets.DefaultDataset) in memory and serves it.
func NewDefault(opts Options) (*Service, error) {
	st, err := BuildStore(shardsOf(opts), func(emit func(rdf.Triple) error) error {
		_, err := datasets.DefaultDataset(emit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot build the default data set: %w", err)
	}
	return newOwning(st, opts)
}

func newOwning(st *graphstore.Store, opts Options) (*Service, error) {
	s, err := New(st, opts)
	if err != nil {
		st.Close()
		return nil, err
	}
	return s, nil
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

func (s *Service) newGeneration(st *graphstore.Store) (*generation, error) {
	newEngine := exec.NewGraphEngine
	if s.opts.NewEngine != nil {
		newEngine = s.opts.NewEngine
	}
	eng, err := newEngine(st, exec.Config{Workers: s.opts.Workers})
	if err != nil {
		return nil, err
	}
	g := &generation{svc: s, store: st, eng: eng}
	g.refs.Store(1)
	s.statsMu.Lock()
	s.live[g] = struct{}{}
	s.statsMu.Unlock()
	return g, nil
}

// acquire returns the current generation with a reference taken.
func (s *Service) acquire() (*generation, error) {
	for {
		if s.closed.Load() {
			return nil, fmt.Errorf("%w: the service is closed", web.ErrNotReady)
		}
		g := s.cur.Load()
		if g.tryRef() {
			return g, nil
		}
		// g was just retired and released; the pointer has moved on.
	}
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

// release drops a reference; the last one closes the engine and store.
func (g *generation) release() {
	if g.refs.Add(-1) != 0 {
		return
	}
	g.eng.Close()
	s := g.svc
	s.statsMu.Lock()
	s.retired = addStats(s.retired, fabricStats(g.store))
	delete(s.live, g)
	s.statsMu.Unlock()
	g.store.Close()
}

// publish makes st the served store and releases the old generation.
func (s *Service) publish(st *graphstore.Store) error {
	g, err := s.newGeneration(st)
	if err != nil {
		st.Close()
		return err
	}
	old := s.cur.Swap(g)
	old.release()
	return nil
}

// Close stops serving: queries in flight finish, new ones get ErrNotReady.
func (s *Service) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.cur.Load().release()
	return nil
}

// Info describes what is served.
type Info struct {
	Triples uint64 // distinct triples
	Terms   uint64
	Shards  int
}

// Info returns the size of the served store.
func (s *Service) Info() Info {
	g, err := s.acquire()
	if err != nil {
		return Info{}
	}
	defer g.release()
	st := g.store.Stats()
	return Info{Triples: st.Triples, Terms: uint64(g.store.Dict().Len()), Shards: g.store.NumShards()}
}

// Ready implements web.Readier.
func (s *Service) Ready(context.Context) error {
	if s.closed.Load() {
		return fmt.Errorf("%w: the service is closed", web.ErrNotReady)
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
	for g := range s.live {
		out = addStats(out, fabricStats(g.store))
	}
	return out
}

func fabricStats(st *graphstore.Store) web.FabricStats {
	c := st.Counters()
	return web.FabricStats{Reads: int64(c.Reads), ReadBytes: int64(c.ReadBytes),
		Messages: int64(c.Sends), MessageBytes: int64(c.SendBytes)}
}

func addStats(a, b web.FabricStats) web.FabricStats {
	return web.FabricStats{Reads: a.Reads + b.Reads, ReadBytes: a.ReadBytes + b.ReadBytes,
		Messages: a.Messages + b.Messages, MessageBytes: a.MessageBytes + b.MessageBytes}
}

// errNamedGraphs is the error for anything that needs named graphs.
var errNamedGraphs = fmt.Errorf("%w: named graphs (the store holds the default graph only)", web.ErrUnsupported)

// isCtxErr reports whether err is a context error.
func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
