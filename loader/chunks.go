package loader

import (
	"context"
	"io"
	"runtime"
	"sync"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/internal/cpugate"
	"github.com/wukongd/wukongd/rdf"
)

// RawBatch is a batch of statements of one graph, as ParseChunks gives
// them: Seq numbers the chunk of the input it comes from (0, 1, … in
// input order; a chunk's batches come in order, from one goroutine).
// Graph is the zero Term for the default graph. The bytes of the triples
// are valid only during the call. Last marks a chunk's last batch (which
// may be empty): no more batches of Seq follow.
type RawBatch struct {
	Seq     int
	Graph   rdf.Term
	Triples []graphstore.RawTriple
	Last    bool
}

// ParseChunks parses an N-Triples (quads false) or N-Quads stream on
// workers goroutines (0: GOMAXPROCS): the stream is cut at line
// boundaries into chunks of about 4 MB, each parsed by one worker, which
// calls fn with its statements in batches. Memory is bounded by the chunks
// in flight (about 2 × workers + 2), whatever the stream's size. Blank
// node labels are scoped with opts.BlankPrefix (a fresh one if empty) as
// Parse does. The error returned is the first one in input order: a
// *SyntaxError (opts.Name:line:col, as Parse reports it) or fn's; ctx
// stops the parse with its error.
func ParseChunks(ctx context.Context, r io.Reader, quads bool, opts Options, workers int, fn func(RawBatch) error) error {
	if opts.BlankPrefix == "" {
		opts.BlankPrefix = NewBlankPrefix()
	}
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	type chunkJob struct {
		seq, line int
		buf       []byte
	}
	var (
		mu      sync.Mutex
		errSeq  = -1 // the earliest chunk that failed
		firstEr error
	)
	failed := func(seq int) bool { // whether an earlier chunk failed
		mu.Lock()
		defer mu.Unlock()
		return errSeq >= 0 && errSeq < seq
	}
	fail := func(seq int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if errSeq < 0 || seq < errSeq {
			errSeq, firstEr = seq, err
		}
	}
	free := make(chan []byte, 2*workers+2)
	jobs := make(chan chunkJob, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cw := chunkWorker{prefix: opts.BlankPrefix, fn: fn}
			cw.p.quads = quads
			for j := range jobs {
				if ctx.Err() == nil && !failed(j.seq) {
					// Queries keep a processor while they run
					// (cpugate): the worker waits here, and yields
					// between batches.
					cpugate.Default.Enter()
					err := cw.run(j.buf, j.seq, j.line, opts)
					cpugate.Default.Leave()
					if err != nil {
						fail(j.seq, err)
					}
				}
				select {
				case free <- j.buf[:cap(j.buf)]:
				default:
				}
			}
		}()
	}
	feedErr := feedChunks(ctx, r, chunkBytes, free, func(seq, line int, buf []byte) bool {
		if failed(seq) {
			return false
		}
		select {
		case jobs <- chunkJob{seq, line, buf}:
			return true
		case <-ctx.Done():
			return false
		}
	})
	close(jobs)
	wg.Wait()
	if firstEr != nil {
		return firstEr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return feedErr
}

// chunkBatch is the statements of a batch ParseChunks hands over. The
// worker's yield point (cpugate) is between two batches, so a batch is
// small: parsing and resolving 256 triples takes a few hundred
// microseconds, 4,096 took milliseconds — that long a query queued on
// the worker's processor could wait.
const chunkBatch = 256

// chunkBytes is the size of ParseChunks' chunks (a variable for the
// tests).
var chunkBytes = ntChunkSize

// feedChunks reads r in line-aligned chunks of about size bytes (buffers
// from free when there are some) and gives each non-empty one to send with
// its sequence number and the number of its first line, until send returns
// false (feedChunks then returns ctx's error) or r ends.
func feedChunks(ctx context.Context, r io.Reader, size int, free chan []byte, send func(seq, line int, buf []byte) bool) error {
	var carry []byte
	line := 1
	for seq := 0; ; {
		var buf []byte
		select {
		case buf = <-free:
		default:
			buf = make([]byte, size)
		}
		if len(buf) <= len(carry) { // a line longer than the chunk
			buf = make([]byte, 2*len(carry))
		}
		n := copy(buf, carry)
		m, err := io.ReadFull(r, buf[n:])
		n += m
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return err
		}
		cut := n
		if !eof {
			if i := lastNewline(buf[:n]); i >= 0 {
				cut = i + 1
			} else {
				carry = append(carry[:0], buf[:n]...)
				continue
			}
		}
		carry = append(carry[:0], buf[cut:n]...)
		chunk := buf[:cut]
		if len(chunk) > 0 {
			if !send(seq, line, chunk) {
				return ctx.Err()
			}
			seq++
		}
		line += countNewlines(chunk)
		if eof {
			return nil
		}
	}
}

// chunkWorker parses chunks into raw batches.
type chunkWorker struct {
	p      ntParser
	prefix string
	fn     func(RawBatch) error
	raw    []graphstore.RawTriple
	graph  rdf.Term
	side   []byte // scoped blank node labels of raw
	seq    int
}

func (w *chunkWorker) run(chunk []byte, seq, line int, opts Options) error {
	w.seq, w.graph = seq, rdf.Term{}
	err := w.p.parseChunk(chunk, line, opts, w.add)
	if err == nil {
		err = w.fn(RawBatch{Seq: w.seq, Graph: w.graph, Triples: w.raw, Last: true})
		clear(w.raw)
		w.raw, w.side = w.raw[:0], w.side[:0]
	}
	return err
}

func (w *chunkWorker) add(q *rawQuad) error {
	if q.g.kind != rdf.KindNone {
		if g := q.g.term(w.prefix); g != w.graph {
			if err := w.flush(); err != nil {
				return err
			}
			w.graph = g
		}
	} else if !w.graph.IsZero() {
		if err := w.flush(); err != nil {
			return err
		}
		w.graph = rdf.Term{}
	}
	w.raw = append(w.raw, graphstore.RawTriple{S: w.term(&q.s), P: w.term(&q.p), O: w.term(&q.o)})
	if len(w.raw) == chunkBatch {
		return w.flush()
	}
	return nil
}

func (w *chunkWorker) term(t *rawTerm) graphstore.RawTerm {
	switch t.kind {
	case rdf.KindBlank:
		start := len(w.side)
		w.side = append(w.side, w.prefix...)
		w.side = append(w.side, 'u')
		w.side = append(w.side, t.val...)
		return graphstore.RawTerm{Kind: rdf.KindBlank, Value: w.side[start:len(w.side):len(w.side)]}
	case rdf.KindLiteral:
		return graphstore.RawTerm{Kind: rdf.KindLiteral, Value: t.val, Datatype: t.dt, Lang: t.lang}
	}
	return graphstore.RawTerm{Kind: t.kind, Value: t.val}
}

func (w *chunkWorker) flush() error {
	if len(w.raw) == 0 {
		return nil
	}
	err := w.fn(RawBatch{Seq: w.seq, Graph: w.graph, Triples: w.raw})
	clear(w.raw)
	w.raw = w.raw[:0]
	w.side = w.side[:0]
	cpugate.Default.Yield()
	return err
}
