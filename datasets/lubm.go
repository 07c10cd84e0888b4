package datasets

import (
	"compress/gzip"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/wukongd/wukongd/rdf"
)

// LUBMConfig says what GenerateLUBM and GenerateLUBMTriples generate: the
// data UBA 1.7 writes for `-univ Universities -index Index -seed Seed`.
type LUBMConfig struct {
	// Universities is the number of universities: LUBM-N has N. It must be
	// at least 1.
	Universities int
	// Index is the index of the first university (UBA's -index):
	// University<Index> … University<Index+Universities-1> are generated.
	Index int
	// Seed is UBA's -seed, 0 to 2^31-1. University u draws from
	// java.util.Random seeded with Seed*(-2^31) + u, so a university is the
	// same whatever Universities and Index, and the same seed and scale
	// give byte-identical output whatever Workers is.
	Seed int64
	// Workers is the number of universities generated in parallel;
	// 0 means runtime.GOMAXPROCS(0).
	Workers int
	// Gzip makes GenerateLUBM write gzip: one gzip member per university,
	// compressed in parallel (a valid multi-member stream that gzip, zcat and
	// Go's gzip.Reader read as one). Ignored by GenerateLUBMTriples.
	Gzip bool
	// Progress, when set, is called after each university has been written
	// or emitted, from the calling goroutine, with the number done so far.
	Progress func(done, total int)
}

// MaxUBAInt is the largest seed and university index UBA accepts
// (Integer.MAX_VALUE).
const MaxUBAInt = 1<<31 - 1

func (c *LUBMConfig) check() error {
	switch {
	case c.Universities < 1:
		return fmt.Errorf("cannot generate LUBM: %d universities (want at least 1)", c.Universities)
	case c.Index < 0 || int64(c.Index)+int64(c.Universities)-1 > MaxUBAInt:
		return fmt.Errorf("cannot generate LUBM: universities %d to %d (UBA numbers them 0 to %d)",
			c.Index, int64(c.Index)+int64(c.Universities)-1, MaxUBAInt)
	case c.Seed < 0 || c.Seed > MaxUBAInt:
		return fmt.Errorf("cannot generate LUBM: seed %d (want 0 to %d)", c.Seed, MaxUBAInt)
	}
	return nil
}

func (c *LUBMConfig) workers() int {
	w := c.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return min(w, c.Universities)
}

// typedBefore returns, for the i-th generated university, the set of
// degree universities whose rdf:type the universities before it write: a
// university's type is written where it first occurs in the data set, and
// every university refers to hundreds of the 1,000 degree universities.
// It generates the universities in order, without output, until all 1,000
// are typed (after two or three universities); the slice ends there, and
// from there on every degree university is typed before.
func (c *LUBMConfig) typedBefore() []*univSet {
	var sets []*univSet
	g := newUnivGen(c.Seed, nopSink{})
	var typed univSet
	for i := 0; i < c.Universities-1 && !typed.full(); i++ {
		before := typed
		sets = append(sets, &before)
		g.generate(c.Index+i, &before)
		typed = g.typed
	}
	if !typed.full() {
		sets = append(sets, &typed)
	}
	return sets
}

// typedFor returns the typedBefore set of the i-th university.
func typedFor(sets []*univSet, i int) *univSet {
	if i < len(sets) {
		return sets[i]
	}
	return &allDegreeUniversities
}

var allDegreeUniversities = func() (s univSet) {
	for u := range DegreeUniversities {
		s.add(u)
	}
	return s
}()

// GenerateLUBM writes LUBM-N as N-Triples to w and returns the number of
// triples written. The output is duplicate-free; triples come university by
// university in UBA's order (see the package documentation). It only calls
// w.Write from the calling goroutine, with large chunks (one university,
// about 15 MB of text, at a time), so w needs no buffering.
func GenerateLUBM(w io.Writer, cfg LUBMConfig) (int64, error) {
	if err := cfg.check(); err != nil {
		return 0, err
	}
	workers := cfg.workers()
	typed := cfg.typedBefore()
	free := make(chan []byte, 2*workers+2) // chunk buffers for reuse
	getBuf := func() []byte {
		select {
		case b := <-free:
			return b[:0]
		default:
			return make([]byte, 0, 32<<20) // a university is 15-28 MB of text
		}
	}
	putBuf := func(b []byte) {
		select {
		case free <- b:
		default:
		}
	}

	type chunk struct {
		buf     []byte
		triples int64
	}
	type state struct {
		gen  *univGen
		text textSink
		gz   *gzip.Writer
	}
	states := make([]state, workers)
	for i := range states {
		states[i].gen = newUnivGen(cfg.Seed, &states[i].text)
	}
	var total int64
	err := ordered(cfg.Universities, workers,
		func(worker, u int) chunk {
			st := &states[worker]
			st.text = textSink{buf: getBuf()}
			st.gen.generate(cfg.Index+u, typedFor(typed, u))
			c := chunk{buf: st.text.buf, triples: st.text.triples}
			if cfg.Gzip {
				out := &appendWriter{b: getBuf()}
				if st.gz == nil {
					st.gz, _ = gzip.NewWriterLevel(out, gzip.BestSpeed) // the level is valid
				} else {
					st.gz.Reset(out)
				}
				// Writes to an appendWriter cannot fail.
				_, _ = st.gz.Write(c.buf)
				_ = st.gz.Close()
				putBuf(c.buf)
				c.buf = out.b
			}
			return c
		},
		func(u int, c chunk) error {
			_, err := w.Write(c.buf)
			putBuf(c.buf)
			if err != nil {
				return fmt.Errorf("cannot write LUBM University%d: %w", cfg.Index+u, err)
			}
			total += c.triples
			if cfg.Progress != nil {
				cfg.Progress(u+1, cfg.Universities)
			}
			return nil
		})
	return total, err
}

// GenerateLUBMTriples generates LUBM-N and calls emit for each triple, in
// the same order as GenerateLUBM writes them, from the calling goroutine.
// It returns the number of triples emitted; the first error from emit stops
// the generation and is returned.
func GenerateLUBMTriples(cfg LUBMConfig, emit func(rdf.Triple) error) (int64, error) {
	if err := cfg.check(); err != nil {
		return 0, err
	}
	workers := cfg.workers()
	typed := cfg.typedBefore()
	type state struct {
		gen  *univGen
		sink tripleSink
	}
	states := make([]state, workers)
	for i := range states {
		states[i].sink.intern = make(map[string]string)
		states[i].gen = newUnivGen(cfg.Seed, &states[i].sink)
	}
	var total int64
	err := ordered(cfg.Universities, workers,
		func(worker, u int) []rdf.Triple {
			st := &states[worker]
			clear(st.sink.intern)
			st.sink.triples = make([]rdf.Triple, 0, 160_000)
			st.gen.generate(cfg.Index+u, typedFor(typed, u))
			return st.sink.triples
		},
		func(u int, ts []rdf.Triple) error {
			for _, t := range ts {
				if err := emit(t); err != nil {
					return err
				}
				total++
			}
			if cfg.Progress != nil {
				cfg.Progress(u+1, cfg.Universities)
			}
			return nil
		})
	return total, err
}

// appendWriter is an io.Writer that appends to a byte slice.
type appendWriter struct{ b []byte }

func (a *appendWriter) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// ordered runs produce(worker, i) for i in [0, n) on workers goroutines and
// consume(i, v) on the calling goroutine in increasing i. At most about
// 2*workers results are in flight, which bounds memory. The first error
// from consume stops the dispatch of new items and is returned after the
// workers have finished.
func ordered[T any](n, workers int, produce func(worker, i int) T, consume func(i int, v T) error) error {
	type job struct {
		i   int
		out chan T
	}
	jobs := make(chan job)
	queue := make(chan job, workers)
	done := make(chan struct{})
	go func() {
		defer close(jobs)
		defer close(queue)
		for i := range n {
			j := job{i: i, out: make(chan T, 1)}
			select {
			case queue <- j:
			case <-done:
				return
			}
			select {
			case jobs <- j:
			case <-done:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for j := range jobs {
				j.out <- produce(w, j.i) // buffered: never blocks
			}
		})
	}
	var err error
	for j := range queue {
		if err = consume(j.i, <-j.out); err != nil {
			break
		}
	}
	if err != nil {
		close(done)
	}
	wg.Wait()
	return err
}
