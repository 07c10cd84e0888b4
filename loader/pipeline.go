package loader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
)

// Input is one RDF document to load.
type Input struct {
	Name   string // for errors and logs
	Format Format
	Base   string // base IRI; FileBase(path) for files
	Size   int64  // bytes as stored (compressed), 0 if unknown
	// Open returns the document's content, decompressed.
	Open func() (io.ReadCloser, error)

	path string // set for files: the load counts their stored bytes
}

// ExpandInputs turns command-line arguments (files, directories searched
// recursively for files of a known RDF extension, or glob patterns) into
// inputs, in a stable order.
func ExpandInputs(args []string) ([]Input, error) {
	var paths []string
	seen := map[string]bool{}
	addFile := func(p string, explicit bool) error {
		if seen[p] {
			return nil
		}
		if _, ok := FormatForPath(p); !ok {
			if explicit {
				return fmt.Errorf("cannot load %s: unknown RDF format (use .nt, .nq, .ttl, .trig, .rdf, .owl or .xml, optionally .gz)", p)
			}
			return nil
		}
		seen[p] = true
		paths = append(paths, p)
		return nil
	}
	for _, arg := range args {
		matches := []string{arg}
		if strings.ContainsAny(arg, "*?[") {
			m, err := filepath.Glob(arg)
			if err != nil {
				return nil, fmt.Errorf("bad pattern %q: %w", arg, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("no file matches %q", arg)
			}
			matches = m
		}
		for _, m := range matches {
			st, err := os.Stat(m)
			if err != nil {
				return nil, fmt.Errorf("cannot load %s: %w", m, err)
			}
			if !st.IsDir() {
				if err := addFile(m, true); err != nil {
					return nil, err
				}
				continue
			}
			var found []string
			err = filepath.WalkDir(m, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !d.IsDir() {
					found = append(found, p)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("cannot read directory %s: %w", m, err)
			}
			sort.Strings(found)
			for _, p := range found {
				_ = addFile(p, false)
			}
		}
	}
	if len(paths) == 0 {
		return nil, errors.New("no RDF files to load")
	}
	inputs := make([]Input, len(paths))
	for i, p := range paths {
		f, _ := FormatForPath(p)
		var size int64
		if st, err := os.Stat(p); err == nil {
			size = st.Size()
		}
		inputs[i] = Input{Name: p, Format: f, Base: FileBase(p), Size: size, path: p,
			Open: func() (io.ReadCloser, error) { return OpenFile(p) }}
	}
	return inputs, nil
}

// BuildOptions controls BuildStore.
type BuildOptions struct {
	Shards      int  // shards of the store (default 1)
	Workers     int  // parser goroutines (default GOMAXPROCS)
	SkipInvalid bool // skip bad statements instead of failing
	// Progress, when set, is called about every 200 ms from one goroutine
	// with the running counts.
	Progress func(Progress)
}

// Progress is the state of a running load.
type Progress struct {
	Triples    uint64 // statements parsed
	Bytes      int64  // input bytes read (as stored, i.e. compressed)
	TotalBytes int64  // sum of the input sizes (0 if unknown)
	// After parsing (Load only): the build's phase ("dictionary",
	// "partition", "shards", "publish"; "" while parsing), its units done
	// and in total (terms, triples, shards), and the bytes spilled to
	// temporary files so far.
	Phase       string
	Done, Total uint64
	Spilled     uint64
}

// Summary reports a finished load.
type Summary struct {
	// Reasoning is the profile materialized ("" for none, Config.Reasoning):
	// Explicit distinct triples, Inferred ones derived in ReasonRounds
	// semi-naive rounds; MaterializeSeconds for the rules alone,
	// ReasonSeconds with building the closure's stores too.
	Reasoning                         string
	Explicit, Inferred                uint64
	ReasonRounds                      int
	ReasonSeconds, MaterializeSeconds float64
	Files                             int
	Triples                           uint64 // statements read (default graph and named graphs)
	Duplicates                        uint64 // repeated triples dropped
	Distinct                          uint64 // distinct triples stored
	Terms                             uint64 // distinct terms
	Shards                            int
	// NamedGraphQuads counts statements in named graphs. BuildDataset and
	// Load load them into their graphs; BuildStore, which builds one
	// graph, reads them but does not load them.
	NamedGraphQuads uint64
	// Graphs lists, for BuildDataset and Load, the default graph and then
	// each named graph (in graphstore.Dataset.Graphs order) with its
	// statements read and distinct triples stored.
	Graphs        []GraphSummary
	Skipped       uint64   // bad statements skipped (SkipInvalid)
	FirstErrors   []string // the first few of them
	SnapshotBytes int64    // size of the published snapshot (Load only)
	Spilled       uint64   // bytes written to temporary files (Load only)
	Seconds       float64  // in total
	ParseSeconds  float64  // parsing and interning (Builder.AddTriples)
	BuildSeconds  float64  // Builder.Build: renumbering, partitioning, shards, statistics
}

// BytesPerTriple is the snapshot size per distinct triple.
func (s Summary) BytesPerTriple() float64 {
	if s.Distinct == 0 {
		return 0
	}
	return float64(s.SnapshotBytes) / float64(s.Distinct)
}

const (
	batchSize      = 4096
	ntChunkSize    = 4 << 20
	maxFirstErrors = 5
)

// job is a unit of parsing work: a chunk of lines of an N-Triples/N-Quads
// file, or a whole document of another format.
type job struct {
	in        *Input
	chunk     []byte
	firstLine int
	prefix    string
}

type loadState struct {
	b     *graphstore.Builder        // BuildStore: the default graph only
	db    *graphstore.DatasetBuilder // BuildDataset: every graph
	opts  BuildOptions
	read  atomic.Uint64
	named atomic.Uint64
	skip  atomic.Uint64
	bytes atomic.Int64

	mu       sync.Mutex
	firstErr []string
	free     chan []byte
}

func (st *loadState) onError(se *SyntaxError) error {
	if !st.opts.SkipInvalid {
		return se
	}
	st.skip.Add(1)
	st.mu.Lock()
	if len(st.firstErr) < maxFirstErrors {
		st.firstErr = append(st.firstErr, se.Error())
	}
	st.mu.Unlock()
	return nil
}

// BuildStore parses inputs in parallel (across files, and across chunks of
// N-Triples/N-Quads files) and builds an in-memory store. Blank nodes are
// scoped per input. Without SkipInvalid the first syntax error (a
// *SyntaxError, file:line:col) stops the build.
func BuildStore(ctx context.Context, inputs []Input, opts BuildOptions) (*graphstore.Store, Summary, error) {
	start := time.Now()
	if opts.Shards < 1 {
		opts.Shards = 1
	}
	if opts.Workers < 1 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	b, err := graphstore.NewBuilder(opts.Shards)
	if err != nil {
		return nil, Summary{}, err
	}
	st := &loadState{b: b, opts: opts, free: make(chan []byte, 2*opts.Workers+2)}
	if err := st.parse(ctx, inputs); err != nil {
		return nil, Summary{}, err
	}
	parsed := time.Now()
	store, err := b.Build()
	if err != nil {
		return nil, Summary{}, err
	}
	c := b.Counters()
	sum := st.summary(len(inputs), start, parsed)
	sum.Duplicates, sum.Distinct, sum.Terms = c.Duplicates, c.Distinct, uint64(store.Dict().Len())
	return store, sum, nil
}

// summary returns the counts of the parse; the caller fills in the
// builder's counts.
func (st *loadState) summary(files int, start, parsed time.Time) Summary {
	return Summary{
		Files:           files,
		Triples:         st.read.Load(),
		Shards:          st.opts.Shards,
		NamedGraphQuads: st.named.Load(),
		Skipped:         st.skip.Load(),
		FirstErrors:     st.firstErr,
		Seconds:         time.Since(start).Seconds(),
		ParseSeconds:    parsed.Sub(start).Seconds(),
		BuildSeconds:    time.Since(parsed).Seconds(),
	}
}

// parse parses the inputs on st.opts.Workers goroutines into the builder.
func (st *loadState) parse(ctx context.Context, inputs []Input) error {
	opts := st.opts
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	jobs := make(chan job, opts.Workers)
	var wg sync.WaitGroup
	for w := 0; w < opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk := newWorker(st)
			for j := range jobs {
				if ctx.Err() != nil {
					continue
				}
				if err := wk.run(j); err != nil {
					cancel(err)
				}
			}
		}()
	}
	var total int64
	for _, in := range inputs {
		total += in.Size
	}
	stopProgress := reportProgress(opts.Progress, func() Progress {
		return Progress{Triples: st.read.Load(), Bytes: st.bytes.Load(), TotalBytes: total}
	})
	feedErr := st.feed(ctx, inputs, jobs)
	close(jobs)
	wg.Wait()
	stopProgress()
	if feedErr != nil && context.Cause(ctx) == nil {
		cancel(feedErr)
	}
	if err := context.Cause(ctx); err != nil {
		return err
	}
	if opts.Progress != nil {
		opts.Progress(Progress{Triples: st.read.Load(), Bytes: total, TotalBytes: total})
	}
	return nil
}

// feed sends the parsing jobs. N-Triples and N-Quads files are cut into
// chunks at line boundaries so that several workers parse one big file.
func (st *loadState) feed(ctx context.Context, inputs []Input, jobs chan<- job) error {
	for i := range inputs {
		in := &inputs[i]
		if ctx.Err() != nil {
			return nil
		}
		if in.Format != NTriples && in.Format != NQuads {
			select {
			case jobs <- job{in: in}:
			case <-ctx.Done():
				return nil
			}
			continue
		}
		rc, err := st.open(in)
		if err != nil {
			return err
		}
		prefix := NewBlankPrefix()
		err = st.chunks(ctx, in, rc, prefix, jobs)
		rc.Close()
		if err != nil {
			return fmt.Errorf("cannot read %s: %w", in.Name, err)
		}
	}
	return nil
}

func (st *loadState) chunks(ctx context.Context, in *Input, r io.Reader, prefix string, jobs chan<- job) error {
	return feedChunks(ctx, r, ntChunkSize, st.free, func(_, line int, chunk []byte) bool {
		select {
		case jobs <- job{in: in, chunk: chunk, firstLine: line, prefix: prefix}:
			return true
		case <-ctx.Done():
			return false
		}
	})
}

// reportProgress calls progress with what current says every 200 ms, on
// its own goroutine, until the returned stop is called; stop returns when
// the goroutine has. A nil progress starts nothing.
func reportProgress(progress func(Progress), current func() Progress) (stop func()) {
	if progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				progress(current())
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// worker parses jobs and feeds the builder in batches.
type worker struct {
	st    *loadState
	batch []rdf.Triple // for st.b
	quads []rdf.Quad   // for st.db
	cache map[string]string
	nt    ntParser

	// The N-Triples/N-Quads chunk path: terms as bytes of the chunk.
	raw     []graphstore.RawTriple
	rawG    rdf.Term // graph of raw (BuildDataset)
	rawRead uint64   // statements read, not yet counted in st.read
	side    []byte   // scoped blank node labels of raw
}

const workerCacheMax = 1 << 16

func newWorker(st *loadState) *worker {
	return &worker{st: st, batch: make([]rdf.Triple, 0, batchSize), cache: make(map[string]string, 1024),
		raw: make([]graphstore.RawTriple, 0, batchSize)}
}

// str returns b as a string, reusing an earlier allocation for repeated
// values (predicates, classes, and subjects of consecutive lines).
func (w *worker) str(b []byte) string {
	if s, ok := w.cache[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(w.cache) >= workerCacheMax {
		clear(w.cache)
	}
	w.cache[s] = s
	return s
}

func (w *worker) term(t *rawTerm, prefix string) rdf.Term {
	switch t.kind {
	case rdf.KindIRI:
		return rdf.Term{Kind: rdf.KindIRI, Value: w.str(t.val)}
	case rdf.KindBlank:
		return rdf.Term{Kind: rdf.KindBlank, Value: userBlank(prefix, t.val)}
	case rdf.KindLiteral:
		lt := rdf.Term{Kind: rdf.KindLiteral, Value: w.str(t.val)}
		if t.lang != nil {
			lt.Lang = lowerASCII(t.lang)
		} else if t.dt != nil && string(t.dt) != rdf.XSDString {
			lt.Datatype = w.str(t.dt)
		}
		return lt
	}
	return rdf.Term{}
}

func (w *worker) add(q rdf.Quad) error {
	w.st.read.Add(1)
	if !q.G.IsZero() {
		w.st.named.Add(1)
	}
	if w.st.db != nil {
		w.quads = append(w.quads, q)
		if len(w.quads) == batchSize {
			return w.flush()
		}
		return nil
	}
	if !q.G.IsZero() {
		return nil
	}
	w.batch = append(w.batch, rdf.Triple{S: q.S, P: q.P, O: q.O})
	if len(w.batch) == batchSize {
		return w.flush()
	}
	return nil
}

func (w *worker) flush() error {
	if w.st.db != nil {
		if len(w.quads) == 0 {
			return nil
		}
		err := w.st.db.AddQuads(w.quads)
		clear(w.quads)
		w.quads = w.quads[:0]
		return err
	}
	if len(w.batch) == 0 {
		return nil
	}
	err := w.st.b.AddTriples(w.batch)
	clear(w.batch)
	w.batch = w.batch[:0]
	return err
}

func (w *worker) run(j job) error {
	opts := Options{Name: j.in.Name, Base: j.in.Base, BlankPrefix: j.prefix, OnError: w.st.onError}
	var err error
	if j.chunk != nil {
		w.nt.quads = j.in.Format == NQuads
		err = w.nt.parseChunk(j.chunk, j.firstLine, opts, func(q *rawQuad) error {
			return w.addRaw(q, j.prefix)
		})
		// The raw batch points into the chunk: flush it before the chunk
		// is reused.
		if ferr := w.flushRaw(); err == nil {
			err = ferr
		}
		select {
		case w.st.free <- j.chunk[:cap(j.chunk)]:
		default:
		}
	} else {
		var rc io.ReadCloser
		rc, err = w.st.open(j.in)
		if err == nil {
			err = Parse(rc, j.in.Format, opts, w.add)
			rc.Close()
			if j.in.path == "" {
				w.st.bytes.Add(j.in.Size)
			}
		}
	}
	if err != nil {
		return err
	}
	return w.flush()
}

// addRaw adds a statement of an N-Triples/N-Quads chunk to the raw batch,
// whose terms are bytes of the chunk (graphstore interns them without
// allocating a string for a known term).
func (w *worker) addRaw(q *rawQuad, prefix string) error {
	w.rawRead++
	if q.g.kind != rdf.KindNone {
		w.st.named.Add(1)
		if w.st.db == nil {
			return nil
		}
		if !w.inRawGraph(&q.g, prefix) {
			if err := w.flushRaw(); err != nil {
				return err
			}
			w.rawG = w.term(&q.g, prefix)
		}
	} else if !w.rawG.IsZero() {
		if err := w.flushRaw(); err != nil {
			return err
		}
		w.rawG = rdf.Term{}
	}
	w.raw = append(w.raw, graphstore.RawTriple{S: w.rawTerm(&q.s, prefix), P: w.rawTerm(&q.p, prefix), O: w.rawTerm(&q.o, prefix)})
	if len(w.raw) == batchSize {
		return w.flushRaw()
	}
	return nil
}

// inRawGraph reports whether graph label g is the raw batch's graph.
func (w *worker) inRawGraph(g *rawTerm, prefix string) bool {
	v := w.rawG.Value
	switch {
	case g.kind != w.rawG.Kind:
		return false
	case g.kind == rdf.KindIRI:
		return v == string(g.val)
	}
	return len(v) == len(prefix)+1+len(g.val) && v[:len(prefix)] == prefix && v[len(prefix)] == 'u' && v[len(prefix)+1:] == string(g.val)
}

func (w *worker) rawTerm(t *rawTerm, prefix string) graphstore.RawTerm {
	switch t.kind {
	case rdf.KindBlank:
		start := len(w.side)
		w.side = append(w.side, prefix...)
		w.side = append(w.side, 'u')
		w.side = append(w.side, t.val...)
		return graphstore.RawTerm{Kind: rdf.KindBlank, Value: w.side[start:len(w.side):len(w.side)]}
	case rdf.KindLiteral:
		return graphstore.RawTerm{Kind: rdf.KindLiteral, Value: t.val, Datatype: t.dt, Lang: t.lang}
	}
	return graphstore.RawTerm{Kind: t.kind, Value: t.val}
}

func (w *worker) flushRaw() error {
	w.st.read.Add(w.rawRead)
	w.rawRead = 0
	if len(w.raw) == 0 {
		return nil
	}
	var err error
	if w.st.db != nil {
		err = w.st.db.AddRawTriples(w.rawG, w.raw)
	} else {
		err = w.st.b.AddRawTriples(w.raw)
	}
	clear(w.raw)
	w.raw = w.raw[:0]
	w.side = w.side[:0]
	return err
}

func lastNewline(b []byte) int { return bytes.LastIndexByte(b, '\n') }

func countNewlines(b []byte) int { return bytes.Count(b, []byte{'\n'}) }

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// open opens an input, counting the stored bytes read into st.bytes.
func (st *loadState) open(in *Input) (io.ReadCloser, error) {
	if in.path == "" {
		return in.Open()
	}
	return openCounted(in.path, &st.bytes)
}
