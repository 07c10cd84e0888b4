package graphstore

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wukongd/wukongd/rdmakv"
)

// Out-of-core building (DatasetBuilder.SpillTo, WriteSnapshot). The
// memory of an in-memory Build grows with the input: 12 bytes a triple of
// provisional term numbers while parsing, then 32 bytes a triple of
// partitioned edges, then the tables. With a spill directory and a budget:
//
//   - parsing: once the graphs' provisional triples exceed a quarter of
//     the budget, a graph's chunks are appended to its chunk file (12 bytes
//     a triple, unsorted);
//   - dictionary: the interning stripes' hash tables are dropped when
//     parsing ends, and each stripe is released as soon as its terms are
//     laid out in the final dictionary, which is written to the snapshot
//     and dropped before the edges are partitioned;
//   - partition: the chunks (in memory, then the file) are mapped to IDs
//     and split by owner shard into buffers of half the budget in total;
//     a full buffer is sorted, deduplicated and appended as a sorted run to
//     its shard's run file (one per shard and direction);
//   - shards: each shard's runs are merged (a heap over buffered readers)
//     into buildShardTable, whose rdf:type out-edges are teed into a
//     small file that the in-edge pass reads in step; the table is written
//     straight into the snapshot (TableBuilder.WriteTo). Shards are built
//     in parallel as far as the budget plus the dictionary's room (held
//     while the dictionary was laid out) holds their tables.
//
// A graph that was never spilled and whose edges fit half the budget is
// partitioned and built in memory as Build does. Either way the shard
// files are byte-identical to WriteDataset's of Build's result.

// SpillOptions configure an out-of-core build.
type SpillOptions struct {
	// Dir is an existing directory for temporary files (best on the file
	// system of the output); the caller removes it.
	Dir string
	// Memory is the budget in bytes for the buffers of provisional triples
	// and edges (the dictionary and the tables of the shards being built
	// come on top; see above).
	Memory int64
}

// BuildProgress is the state of a WriteSnapshot: a phase ("dictionary",
// "partition", "shards", "publish") with its units done and in total
// (terms, triples, shards).
type BuildProgress struct {
	Phase       string
	Graph       int // graph being built (0: the default graph)
	Done, Total uint64
	Spilled     uint64 // bytes written to temporary files so far
	// TermsSpilled is the part of Spilled that is sealed generations of
	// the interning tables (bounded interning).
	TermsSpilled uint64
}

// spillState is a DatasetBuilder's out-of-core configuration and counters.
type spillState struct {
	opts       SpillOptions
	chunkBytes atomic.Int64 // provisional triples held in memory
	spilled    atomic.Uint64
	mu         sync.Mutex
	progress   BuildProgress
	done       atomic.Uint64 // units of the current phase done
}

// chunkFile is a graph's spilled provisional triples.
type chunkFile struct {
	mu  sync.Mutex
	f   *os.File
	n   int64 // uint32s written
	buf []byte
}

// SpillTo makes the builder spill to opts.Dir within opts.Memory (see
// above). Call it before adding triples; WriteSnapshot then builds out of
// core (Build still builds in memory, reading spilled chunks back).
func (db *DatasetBuilder) SpillTo(opts SpillOptions) error {
	if opts.Dir == "" || opts.Memory <= 0 {
		return fmt.Errorf("cannot spill: need a directory and a positive memory budget")
	}
	if st, err := os.Stat(opts.Dir); err != nil || !st.IsDir() {
		return fmt.Errorf("cannot spill to %s: not a directory", opts.Dir)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.spill = &spillState{opts: opts}
	// The interning stripes share a quarter of the budget (the
	// provisional triples another quarter).
	db.b.limitStripes(opts.Dir, opts.Memory/4/stripeCount)
	return nil
}

// BuildProgress returns the progress of a running WriteSnapshot.
func (db *DatasetBuilder) BuildProgress() BuildProgress {
	sp := db.spill
	if sp == nil {
		return BuildProgress{}
	}
	sp.mu.Lock()
	p := sp.progress
	sp.mu.Unlock()
	p.Done = sp.done.Load()
	p.Spilled = sp.spilled.Load() + db.b.termsSpilled.Load()
	p.TermsSpilled = db.b.termsSpilled.Load()
	return p
}

func (sp *spillState) phase(name string, graph int, total uint64) {
	sp.mu.Lock()
	sp.progress = BuildProgress{Phase: name, Graph: graph, Total: total}
	sp.done.Store(0)
	sp.mu.Unlock()
}

// maybeSpill writes g's chunks to its chunk file once the builder holds
// more provisional triples than a quarter of the budget.
func (db *DatasetBuilder) maybeSpill(g *graphChunks, added int) error {
	sp := db.spill
	if sp == nil {
		return nil
	}
	if sp.chunkBytes.Add(int64(4*added)) <= sp.opts.Memory/4 {
		return nil
	}
	g.mu.Lock()
	chunks := g.chunks
	g.chunks = nil
	g.mu.Unlock()
	cf := &g.file
	cf.mu.Lock()
	defer cf.mu.Unlock()
	if cf.f == nil {
		f, err := os.CreateTemp(sp.opts.Dir, "chunks-*")
		if err != nil {
			return fmt.Errorf("cannot spill: %w", err)
		}
		cf.f = f
	}
	var n int64
	for _, c := range chunks {
		cf.buf = cf.buf[:0]
		for _, tn := range c {
			cf.buf = binary.LittleEndian.AppendUint32(cf.buf, tn)
		}
		if _, err := cf.f.Write(cf.buf); err != nil {
			return fmt.Errorf("cannot spill: %w", err)
		}
		n += int64(len(c))
	}
	cf.n += n
	sp.chunkBytes.Add(-4 * n)
	sp.spilled.Add(uint64(4 * n))
	return nil
}

// chunkSource hands out a graph's provisional triples, the chunks in
// memory first, then blocks of its chunk file; safe for concurrent use.
type chunkSource struct {
	chunks [][]uint32
	next   atomic.Int64
	file   *os.File
	blocks int64 // uint32s per block (a multiple of 3)
	fileN  int64
}

// get fills dst (reused) with the next chunk; false when none is left.
func (c *chunkSource) get(dst []uint32, raw []byte) ([]uint32, []byte, bool, error) {
	i := c.next.Add(1) - 1
	if i < int64(len(c.chunks)) {
		ch := c.chunks[i]
		c.chunks[i] = nil
		return ch, raw, true, nil
	}
	off := (i - int64(len(c.chunks))) * c.blocks
	if c.file == nil || off >= c.fileN {
		return dst, raw, false, nil
	}
	n := min(c.blocks, c.fileN-off)
	raw = grow(raw, int(4*n))
	if _, err := c.file.ReadAt(raw, 4*off); err != nil {
		return dst, raw, false, fmt.Errorf("cannot read spilled triples: %w", err)
	}
	dst = grow(dst, int(n))
	for j := range dst {
		dst[j] = binary.LittleEndian.Uint32(raw[4*j:])
	}
	return dst, raw, true, nil
}

// allChunks reads back every provisional triple of g (Build after SpillTo).
func (g *graphChunks) allChunks() ([][]uint32, error) {
	chunks := g.chunks
	g.chunks = nil
	cf := &g.file
	if cf.f == nil {
		return chunks, nil
	}
	src := &chunkSource{file: cf.f, blocks: 3 << 16, fileN: cf.n}
	for {
		ch, _, ok, err := src.get(nil, nil)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		chunks = append(chunks, ch)
	}
	cf.close()
	return chunks, nil
}

func (cf *chunkFile) close() {
	if cf.f != nil {
		name := cf.f.Name()
		cf.f.Close()
		os.Remove(name)
		cf.f = nil
	}
}

// recSize is the bytes of a rec in a run file: key and neighbour, 8 bytes
// each, little-endian.
const recSize = 16

// span is a sorted run in a run file.
type span struct{ off, n int64 } // byte offset, records

// runFile holds the sorted runs of one shard and direction.
type runFile struct {
	mu   sync.Mutex
	f    *os.File
	size int64
	runs []span
	recs int64
	// dropped counts repeats removed while sorting runs (the merge drops
	// repeats across runs).
	dropped int64
}

// add sorts, deduplicates and appends recs as a run; buf and scratch are
// reused by the caller (scratch grows to len(recs)).
func (r *runFile) add(dir string, recs []rec, buf []byte, scratch *[]rec, spilled *atomic.Uint64) ([]byte, error) {
	buf, all, n := encodeRun(recs, buf, scratch)
	return buf, r.appendRun(dir, buf, all, n, spilled)
}

// encodeRun sorts and deduplicates recs (scratch grows to len(recs)) and
// encodes them into buf (reused): the bytes of a run, the records before
// and after deduplication.
func encodeRun(recs []rec, buf []byte, scratch *[]rec) ([]byte, int, int) {
	*scratch = grow(*scratch, len(recs))
	recs = radixSortRecs(recs, *scratch)
	all := len(recs)
	recs = slices.Compact(recs)
	buf = buf[:0]
	for _, x := range recs {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(x.k))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(x.v))
	}
	return buf, all, len(recs)
}

// appendRun appends an encoded run of n records (all before
// deduplication) to the file.
func (r *runFile) appendRun(dir string, buf []byte, all, n int, spilled *atomic.Uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		f, err := os.CreateTemp(dir, "run-*")
		if err != nil {
			return err
		}
		r.f = f
	}
	if _, err := r.f.Write(buf); err != nil {
		return err
	}
	r.runs = append(r.runs, span{r.size, int64(n)})
	r.size += int64(len(buf))
	r.recs += int64(n)
	r.dropped += int64(all - n)
	spilled.Add(uint64(len(buf)))
	return nil
}

func (r *runFile) close() {
	if r.f != nil {
		name := r.f.Name()
		r.f.Close()
		os.Remove(name)
		r.f = nil
	}
}

// runReader reads one run.
type runReader struct {
	r    *bufio.Reader
	left int64
	cur  rec
	buf  [recSize]byte
}

func (rr *runReader) advance() (bool, error) {
	if rr.left == 0 {
		return false, nil
	}
	if _, err := io.ReadFull(rr.r, rr.buf[:]); err != nil {
		return false, err
	}
	rr.left--
	rr.cur = rec{Key(binary.LittleEndian.Uint64(rr.buf[:])), ID(binary.LittleEndian.Uint64(rr.buf[8:]))}
	return true, nil
}

// mergeRecs merges sorted runs (a recStream).
type mergeRecs struct {
	h []*runReader // a min-heap by cur
	e error
}

func newMerge(f *os.File, runs []span, bufSize int) *mergeRecs {
	m := &mergeRecs{}
	for _, s := range runs {
		rr := &runReader{r: bufio.NewReaderSize(io.NewSectionReader(f, s.off, s.n*recSize), bufSize), left: s.n}
		ok, err := rr.advance()
		if err != nil {
			m.e = err
			return m
		}
		if ok {
			m.h = append(m.h, rr)
		}
	}
	for i := len(m.h)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m
}

func (m *mergeRecs) down(i int) {
	h := m.h
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && cmpRec(h[r].cur, h[l].cur) < 0 {
			j = r
		}
		if cmpRec(h[j].cur, h[i].cur) >= 0 {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func (m *mergeRecs) next() (rec, bool) {
	if m.e != nil || len(m.h) == 0 {
		return rec{}, false
	}
	top := m.h[0]
	x := top.cur
	ok, err := top.advance()
	if err != nil {
		m.e = err
		return rec{}, false
	}
	if !ok {
		last := len(m.h) - 1
		m.h[0] = m.h[last]
		m.h = m.h[:last]
	}
	if len(m.h) > 1 {
		m.down(0)
	}
	return x, true
}

func (m *mergeRecs) err() error {
	if m.e != nil {
		return fmt.Errorf("cannot read a sorted run: %w", m.e)
	}
	return nil
}

// teeTypes passes a stream through and writes its rdf:type out-edges to a
// file, read back by reader.
type teeTypes struct {
	s   recStream
	f   *os.File
	w   *bufio.Writer
	n   int64
	e   error
	buf [recSize]byte
}

func (t *teeTypes) next() (rec, bool) {
	x, ok := t.s.next()
	if ok && t.e == nil && x.k.Pred() == TypeID && x.k.Dir() == Out {
		binary.LittleEndian.PutUint64(t.buf[:], uint64(x.k))
		binary.LittleEndian.PutUint64(t.buf[8:], uint64(x.v))
		if _, err := t.w.Write(t.buf[:]); err != nil {
			t.e = err
		}
		t.n++
	}
	return x, ok
}

func (t *teeTypes) err() error {
	if err := t.s.err(); err != nil {
		return err
	}
	if t.e != nil {
		return fmt.Errorf("cannot write the type runs: %w", t.e)
	}
	return nil
}

func (t *teeTypes) reader(bufSize int) (recStream, error) {
	if err := t.w.Flush(); err != nil {
		return nil, fmt.Errorf("cannot write the type runs: %w", err)
	}
	return newMerge(t.f, []span{{0, t.n}}, bufSize), nil
}

// graphRuns are one graph's edges, partitioned into sorted runs.
type graphRuns struct {
	out, in []runFile // by shard
}

func (gr *graphRuns) close() {
	for i := range gr.out {
		gr.out[i].close()
		gr.in[i].close()
	}
}

// partitionRuns maps a graph's provisional triples to IDs and writes them
// as sorted runs per shard and direction, buffering at most memory bytes
// of edges in all.
func (b *Builder) partitionRuns(src *chunkSource, remap *termRemap, sp *spillState, memory int64) (*graphRuns, error) {
	n := b.shards
	gr := &graphRuns{out: make([]runFile, n), in: make([]runFile, n)}
	workers := runtime.GOMAXPROCS(0)
	perWorker := max(int(memory/recSize/int64(workers)), 64)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// A buffer per shard and direction, each a (2n)th of the
			// worker's share, allocated once: a full one is sorted and
			// spilled alone (growing them by append copied and cleared
			// each edge about twice).
			per := max(perWorker/(2*n), 16)
			out := make([][]rec, n)
			in := make([][]rec, n)
			// A full buffer is sorted and encoded here and written by
			// the worker's writer goroutine while the worker goes on:
			// writing the runs (write(2), throttled by the kernel once
			// dirty pages pile up) was a fifth of the partition's
			// worker time at LUBM-640. Two encode buffers alternate, so
			// one run's bytes (a (2n)th of the worker's share) are in
			// flight beside the buffers.
			type pendingRun struct {
				r        *runFile
				buf      []byte
				all, cnt int
			}
			writes := make(chan pendingRun)
			free := make(chan []byte, 2)
			free <- nil
			free <- nil
			var writeErr error
			writerDone := make(chan struct{})
			go func() {
				defer close(writerDone)
				for pr := range writes {
					if writeErr == nil {
						writeErr = pr.r.appendRun(sp.opts.Dir, pr.buf, pr.all, pr.cnt, &sp.spilled)
					}
					free <- pr.buf
				}
			}()
			defer func() {
				close(writes)
				<-writerDone
				if errs[w] == nil && writeErr != nil {
					errs[w] = fmt.Errorf("cannot spill edges: %w", writeErr)
				}
			}()
			var scratch []rec
			spill := func(r *runFile, recs []rec) ([]rec, error) {
				if len(recs) == 0 {
					return recs, nil
				}
				buf, all, cnt := encodeRun(recs, <-free, &scratch)
				writes <- pendingRun{r, buf, all, cnt}
				return recs[:0], nil
			}
			flush := func() error {
				var err error
				for i := 0; i < n; i++ {
					if out[i], err = spill(&gr.out[i], out[i]); err != nil {
						return err
					}
					if in[i], err = spill(&gr.in[i], in[i]); err != nil {
						return err
					}
				}
				return nil
			}
			id := remap.id
			var dst []uint32
			var raw []byte
			for {
				ch, r, ok, err := src.get(dst, raw)
				if err != nil {
					errs[w] = err
					return
				}
				if !ok {
					break
				}
				dst, raw = ch, r
				for j := 0; j+2 < len(ch); j += 3 {
					s, p, o := id(ch[j]), id(ch[j+1]), id(ch[j+2])
					so := ownerOf(s, n)
					if out[so] == nil {
						out[so] = make([]rec, 0, per)
					}
					out[so] = append(out[so], rec{MakeKey(s, p, Out), o})
					if len(out[so]) == per {
						if out[so], err = spill(&gr.out[so], out[so]); err != nil {
							errs[w] = fmt.Errorf("cannot spill edges: %w", err)
							return
						}
					}
					if p != TypeID {
						oo := ownerOf(o, n)
						if in[oo] == nil {
							in[oo] = make([]rec, 0, per)
						}
						in[oo] = append(in[oo], rec{MakeKey(o, p, In), s})
						if len(in[oo]) == per {
							if in[oo], err = spill(&gr.in[oo], in[oo]); err != nil {
								errs[w] = fmt.Errorf("cannot spill edges: %w", err)
								return
							}
						}
					}
				}
				sp.done.Add(uint64(len(ch) / 3))
			}
			if err := flush(); err != nil {
				errs[w] = fmt.Errorf("cannot spill edges: %w", err)
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			gr.close()
			return nil, err
		}
	}
	return gr, nil
}

// buildShardFromRuns builds shard i's table from its runs and writes it
// with write.
func buildShardFromRuns(gr *graphRuns, i int, dir string, width int, bufSize int, dups, dist *atomic.Uint64, write func(tb *rdmakv.TableBuilder) error) (*shardStats, error) {
	ro, ri := &gr.out[i], &gr.in[i]
	var out, in recStream = &sliceRecs{}, &sliceRecs{}
	if ro.f != nil {
		out = newMerge(ro.f, ro.runs, bufSize)
	}
	if ri.f != nil {
		in = newMerge(ri.f, ri.runs, bufSize)
	}
	tf, err := os.CreateTemp(dir, "types-*")
	if err != nil {
		return nil, fmt.Errorf("cannot spill: %w", err)
	}
	defer func() { tf.Close(); os.Remove(tf.Name()) }()
	tee := &teeTypes{s: out, f: tf, w: bufio.NewWriterSize(tf, bufSize)}
	tb, st, err := buildShardTable(shardEdges{edges: int(ro.recs + ri.recs), out: tee, in: in,
		types: func() (recStream, error) { return tee.reader(bufSize) }}, width, dups, dist)
	// The runs of this shard are read: free their disk space at once.
	ro.close()
	ri.close()
	if err != nil {
		return nil, err
	}
	return st, write(tb)
}

// WriteSnapshot builds the dataset and writes it as a snapshot into dir
// (the layout and guarantees of WriteDataset: temporary sibling
// directory, fsync, atomic rename; a failure leaves a previous snapshot at
// dir intact) without holding it in memory: after SpillTo, out of core
// within the budget; without, in memory one graph at a time. The builder
// is spent afterwards; its Counters hold the final counts.
func (db *DatasetBuilder) WriteSnapshot(dir string) (err error) {
	db.mu.Lock()
	if db.built {
		db.mu.Unlock()
		return fmt.Errorf("cannot build: already built")
	}
	db.built = true
	gs := db.sortedGraphs()
	nGraphs := len(gs)
	if db.layer != nil {
		gs = append(gs, db.layer) // last, into inferredDir
	}
	sp := db.spill
	db.mu.Unlock()
	if sp == nil {
		tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), filepath.Base(dir)+".spill-*")
		if err != nil {
			return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
		}
		defer os.RemoveAll(tmp)
		sp = &spillState{opts: SpillOptions{Dir: tmp, Memory: 1 << 62}}
		db.mu.Lock()
		db.spill = sp
		db.mu.Unlock()
	}
	defer func() {
		for _, g := range gs {
			g.file.close()
		}
	}()
	b := db.b

	// The dictionary: the stripes' hash tables go first (nothing is
	// interned any more), each stripe once laid out.
	for s := range b.stripes {
		st := &b.stripes[s]
		st.mu.Lock()
		st.table, st.prefixIdx = nil, nil
		st.mu.Unlock()
	}
	sp.phase("dictionary", 0, 0)
	setTotal := func(n uint64) {
		sp.mu.Lock()
		sp.progress.Total = n
		sp.mu.Unlock()
	}
	var dict *Dict
	var remap termRemap
	if b.sealed() {
		// Bounded interning: one stripe in memory at a time.
		if dict, remap, err = b.buildSealedDict(sp.opts.Dir, &sp.done, setTotal); err != nil {
			return err
		}
	} else {
		ren, err := b.renumber()
		if err != nil {
			return fmt.Errorf("cannot build the dictionary: %w", err)
		}
		setTotal(ren.n)
		remap = ren.remap
		ren.remap = termRemap{}
		dict = b.layoutDictReleasing(ren, &sp.done)
	}

	dir = filepath.Clean(dir)
	tmp, err := createTempDir(dir)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	m := DatasetManifest{Manifest: Manifest{FormatVersion: FormatVersion, Terms: uint64(dict.Len()),
		Shards: b.shards, Predicates: dict.NumPredicatesAndClasses()}}
	if nGraphs > 1 {
		m.FormatVersion = DatasetFormatVersion
	}
	var filesMu sync.Mutex
	add := func(name string, write func(w io.Writer) error) error {
		fi, err := writeFile(filepath.Join(tmp, filepath.FromSlash(name)), write)
		if err != nil {
			return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
		}
		fi.Name = name
		filesMu.Lock()
		m.Files = append(m.Files, fi)
		filesMu.Unlock()
		return nil
	}
	if err := add(dictName, dict.writeTo); err != nil {
		return err
	}
	width := valueWidth(dict.MaxID())
	dn := denseOf(dict)
	terms := uint64(dict.Len())
	// The dictionary was held in full to be laid out and is dropped now:
	// the shards phase may use that room too without raising the build's
	// peak (see writeGraph).
	held := int64(dict.SizeBytes())
	dict = nil // written: the shards need only the IDs

	var after DatasetCounters
	after.Terms = terms
	for gi, g := range gs {
		sub := ""
		layer := gi == nGraphs
		switch {
		case layer:
			sub = inferredDir
		case gi > 0:
			sub = graphDirName(gi)
		}
		if sub != "" {
			if err := os.Mkdir(filepath.Join(tmp, sub), 0o755); err != nil {
				return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
			}
		}
		stats, dups, dist, err := db.writeGraph(g, gi, &remap, sp, width, dn, terms, held, func(name string, write func(w io.Writer) error) error {
			return add(path.Join(sub, name), write)
		})
		if err != nil {
			if g.name.IsZero() {
				return fmt.Errorf("cannot build the default graph: %w", err)
			}
			return fmt.Errorf("cannot build graph %v: %w", g.name, err)
		}
		if sub != "" {
			if err := syncDir(filepath.Join(tmp, sub)); err != nil {
				return fmt.Errorf("cannot write snapshot %s: %w", dir, err)
			}
		}
		if layer { // counted in the default graph already
			m.Reasoning, m.Inferred = db.reasoning, stats.Triples
			after.Inferred = stats.Triples
			continue
		}
		if sub != "" {
			id := remap.id(g.tn)
			m.Graphs = append(m.Graphs, GraphManifest{Name: graphNameOf(g.name), ID: id, Dir: sub, Triples: stats.Triples})
		}
		m.Triples += stats.Triples
		read := g.read.Load()
		after.Read += read
		after.Duplicates += dups
		after.Distinct += dist
		after.Graphs = append(after.Graphs, GraphCounters{Name: g.name, Read: read, Duplicates: dups, Distinct: dist})
	}
	sp.phase("publish", 0, 0)
	slices.SortStableFunc(m.Files, func(a, b FileInfo) int { return strings.Compare(fileOrder(a.Name), fileOrder(b.Name)) })
	if err := add(manifestName, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	}); err != nil {
		return err
	}
	if err := publishDir(tmp, dir); err != nil {
		return err
	}
	db.mu.Lock()
	db.after = after
	db.mu.Unlock()
	return nil
}

// fileOrder is the sort key of a manifest's files, in WriteDataset's
// order: the dictionary, then each graph's statistics and shards (shards
// may be written in any order).
func fileOrder(name string) string {
	if name == dictName {
		return ""
	}
	d, f := path.Split(name)
	if f == statsName {
		return d + "\x00"
	}
	return d + "\x01" + f
}

// writeGraph builds graph g's shards and statistics and writes them with
// add. It returns the statistics, the duplicates dropped and the distinct
// triples stored.
func (db *DatasetBuilder) writeGraph(g *graphChunks, gi int, remap *termRemap, sp *spillState, width int, dn denseIndex, terms uint64, held int64,
	add func(name string, write func(w io.Writer) error) error) (*Stats, uint64, uint64, error) {
	b := db.b
	n := b.shards
	read := g.read.Load()
	parts := make([]*shardStats, n)
	var dups, dist atomic.Uint64
	half := sp.opts.Memory / 2
	src := &chunkSource{chunks: g.chunks, file: g.file.f, blocks: 3 << 14, fileN: g.file.n}
	g.chunks = nil
	if g.file.f == nil && int64(read)*2*recSize*2 <= half {
		// Small enough: in memory, as Build.
		sp.phase("partition", gi, read)
		chunks := src.chunks
		outs, ins := b.partition(chunks, remap)
		sp.done.Store(read)
		sp.phase("shards", gi, uint64(n))
		tables := make([][]byte, n)
		errs := make([]error, n)
		parallel(n, func(i int) {
			out, in := concat(outs, i), concat(ins, i)
			for w := range outs {
				outs[w][i], ins[w][i] = nil, nil
			}
			tables[i], parts[i], errs[i] = buildShard(out, in, width, dn, &dups, &dist)
			sp.done.Add(1)
		})
		for i, err := range errs {
			if err != nil {
				return nil, 0, 0, fmt.Errorf("cannot build shard %d: %w", i, err)
			}
		}
		stats := mergeStats(parts, terms)
		if err := add(statsName, func(w io.Writer) error { return json.NewEncoder(w).Encode(stats) }); err != nil {
			return nil, 0, 0, err
		}
		for i, t := range tables {
			if err := add(shardFileName(i), func(w io.Writer) error { _, err := w.Write(t); return err }); err != nil {
				return nil, 0, 0, err
			}
			tables[i] = nil
		}
		return stats, dups.Load(), dist.Load(), nil
	}

	sp.phase("partition", gi, read)
	gr, err := b.partitionRuns(src, remap, sp, half)
	g.file.close()
	if err != nil {
		return nil, 0, 0, err
	}
	defer gr.close()
	// Shards in parallel as far as their tables (about 40 bytes an edge
	// while building) fit in the budget plus the dictionary's room: the
	// build held the whole dictionary (held bytes) beside the budget's
	// buffers while laying it out, and has dropped it, so tables of that
	// size do not raise the peak. Each shard is admitted by its own size,
	// not the largest one's: at LUBM-2560 with --memory 2G (16 shards of
	// 42-52 M edges, a 1.6 GB dictionary) the largest shard's 2.1 GB
	// left room for one table of its size (3.8 GB / 2.1), so every shard
	// was built alone and the phase kept one core busy; any two of them
	// fit (at most 3.8 GB), so two are built at once.
	runs := 0
	edges := make([]int64, n)
	for i := 0; i < n; i++ {
		edges[i] = gr.out[i].recs + gr.in[i].recs
		runs = max(runs, len(gr.out[i].runs)+len(gr.in[i].runs))
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	budget := sp.opts.Memory + held
	bufSize := int(min(1<<20, max(4096, half/int64(max(1, workers*(runs+1))))))
	for i := range gr.out {
		dups.Add(uint64(gr.out[i].dropped))
	}
	sp.phase("shards", gi, uint64(n))
	errs := make([]error, n)
	parallelBudget(n, workers, budget, func(i int) int64 { return shardBuildBytes * edges[i] }, func(i int) {
		parts[i], errs[i] = buildShardFromRuns(gr, i, sp.opts.Dir, width, bufSize, &dups, &dist, func(tb *rdmakv.TableBuilder) error {
			return add(shardFileName(i), func(w io.Writer) error { _, err := tb.WriteTo(w); return err })
		})
		sp.done.Add(1)
	})
	for i, err := range errs {
		if err != nil {
			return nil, 0, 0, fmt.Errorf("cannot build shard %d: %w", i, err)
		}
	}
	stats := mergeStats(parts, terms)
	if err := add(statsName, func(w io.Writer) error { return json.NewEncoder(w).Encode(stats) }); err != nil {
		return nil, 0, 0, err
	}
	return stats, dups.Load(), dist.Load(), nil
}

// shardBuildBytes is the memory of a shard's table while it is built,
// per edge (an upper estimate: keys and words, values, the lists of the
// predicate and class indexes, the layout's buckets and ordering).
const shardBuildBytes = 40

// parallelBudget runs fn(0..n-1) in order on up to workers goroutines,
// starting fn(i) only while the weights of the calls running and
// weight(i) add up to at most budget; a call runs alone however heavy
// it is, so every i runs.
func parallelBudget(n, workers int, budget int64, weight func(i int) int64, fn func(i int)) {
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	running, used := 0, int64(0)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		w := weight(i)
		mu.Lock()
		for running > 0 && (running >= workers || used+w > budget) {
			cond.Wait()
		}
		running++
		used += w
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i)
			mu.Lock()
			running--
			used -= w
			cond.Broadcast()
			mu.Unlock()
		}()
	}
	wg.Wait()
}

// parallelN runs fn(0..n-1) on up to workers goroutines.
func parallelN(n, workers int, fn func(i int)) {
	workers = max(1, min(n, workers))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}
