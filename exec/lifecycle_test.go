package exec

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
)

// blockingStore blocks every Lookup made by a node other than the
// coordinator-to-be until the context ends, and records that it ended.
type blockingStore struct {
	*GraphStore
	mu       sync.Mutex
	blocked  int
	released int
	cause    []error
	deadline int // lookups whose context carried a deadline
	started  chan struct{}
	once     sync.Once
}

func (b *blockingStore) Lookup(ctx context.Context, self, shard int, keys []Key, out [][]ID) (ReadCost, error) {
	if self != 0 {
		b.mu.Lock()
		b.blocked++
		if _, ok := ctx.Deadline(); ok {
			b.deadline++
		}
		b.mu.Unlock()
		b.once.Do(func() { close(b.started) })
		<-ctx.Done()
		b.mu.Lock()
		b.released++
		b.cause = append(b.cause, ctx.Err())
		b.mu.Unlock()
		return ReadCost{}, ctx.Err()
	}
	return b.GraphStore.Lookup(ctx, self, shard, keys, out)
}

func buildGraph(t testing.TB, triples []rdf.Triple, shards int) *graphstore.Store {
	t.Helper()
	b, err := graphstore.NewBuilder(shards)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(triples); i += 4096 {
		if err := b.AddTriples(triples[i:min(i+4096, len(triples))]); err != nil {
			t.Fatal(err)
		}
	}
	st, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// waitGoroutines waits until the number of goroutines is back to n.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines, want %d: leak\n%s", runtime.NumGoroutine(), n, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCancelReachesSubQueries cancels (and times out) fork-join queries
// whose sub-queries are stuck on other nodes: Run must return the context's
// error at once, the cancellation must reach the sub-queries, and closing
// the engine must leave no goroutine behind.
func TestCancelReachesSubQueries(t *testing.T) {
	triples := diffData(t, 3000)
	st := buildGraph(t, triples, 4)
	base := runtime.NumGoroutine()
	g, err := NewGraphStore(st)
	if err != nil {
		t.Fatal(err)
	}
	q := readQueryText(t, `SELECT ?x ?y WHERE { ?x a <http://swat.cse.lehigh.edu/onto/univ-bench.owl#UndergraduateStudent> . ?x <http://swat.cse.lehigh.edu/onto/univ-bench.owl#takesCourse> ?y }`)
	for _, how := range []string{"cancel", "deadline"} {
		bs := &blockingStore{GraphStore: g, started: make(chan struct{})}
		e := New(bs, g.Port(), Config{Workers: 2})
		ctx, cancel := context.WithCancel(context.Background())
		if how == "deadline" {
			ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
		}
		done := make(chan error, 1)
		go func() {
			_, err := e.Run(ctx, q, Options{Mode: planner.ModeForkJoin})
			done <- err
		}()
		select {
		case <-bs.started:
		case <-time.After(5 * time.Second):
			t.Fatal("no sub-query reached another node")
		}
		if how == "cancel" {
			cancel()
		}
		select {
		case err := <-done:
			want := context.Canceled
			if how == "deadline" {
				want = context.DeadlineExceeded
			}
			if !errors.Is(err, want) {
				t.Errorf("%s: Run returned %v, want %v", how, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Run did not return", how)
		}
		// Every blocked sub-query must be released by the cancellation
		// (not by Close, which comes later).
		deadline := time.Now().Add(5 * time.Second)
		for {
			bs.mu.Lock()
			b, r, dl := bs.blocked, bs.released, bs.deadline
			causes := append([]error(nil), bs.cause...)
			bs.mu.Unlock()
			if b > 0 && b == r {
				// A cancelled query's sub-queries end by the cancel
				// message; a timed-out one's by the deadline they carry (or
				// the cancel message the parent sends when it gives up,
				// whichever comes first).
				for _, c := range causes {
					if how == "cancel" && !errors.Is(c, context.Canceled) ||
						how == "deadline" && !errors.Is(c, context.DeadlineExceeded) && !errors.Is(c, context.Canceled) {
						t.Errorf("%s: a sub-query ended with %v", how, c)
					}
				}
				if how == "deadline" && dl != b {
					t.Errorf("deadline: %d of %d sub-queries carried the deadline", dl, b)
				}
				if how == "cancel" && dl != 0 {
					t.Errorf("cancel: %d sub-queries have a deadline, want none", dl)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d sub-queries blocked, %d released by the cancellation", how, b, r)
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		e.Close()
	}
	waitGoroutines(t, base)
}

// TestNoGoroutineLeak runs queries in every mode, some cancelled midway,
// on several engines, and checks the goroutine count after Close.
func TestNoGoroutineLeak(t *testing.T) {
	triples := diffData(t, 3000)
	st := buildGraph(t, triples, 3)
	base := runtime.NumGoroutine()
	for round := 0; round < 3; round++ {
		e, err := NewGraphEngine(st, Config{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		q := readQueryText(t, `SELECT * WHERE { ?x <http://swat.cse.lehigh.edu/onto/univ-bench.owl#takesCourse> ?c . ?t <http://swat.cse.lehigh.edu/onto/univ-bench.owl#teacherOf> ?c }`)
		var wg sync.WaitGroup
		for i := 0; i < 12; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if i%4 == 3 {
					cancel()
				}
				res, err := e.Run(ctx, q, Options{Mode: modes[i%3]})
				if i%4 != 3 && (err != nil || res.Len() == 0) {
					t.Errorf("query %d: %v", i, err)
				}
			}(i)
		}
		wg.Wait()
		e.Close()
		if _, err := e.Run(context.Background(), q, Options{}); !errors.Is(err, ErrClosed) {
			t.Errorf("Run after Close: %v, want ErrClosed", err)
		}
	}
	waitGoroutines(t, base)
}

// TestDeadlineStopsSteps times out a cross product far too big to finish
// (40^5 rows over five index steps) after 100 ms: Run must return
// context.DeadlineExceeded, and every worker must be idle soon after —
// the steps look at the context every few thousand rows, and forked
// children get the deadline and the cancel message. Bounds are generous
// (seconds): the test checks that the work stops, not how fast.
func TestDeadlineStopsSteps(t *testing.T) {
	ex := func(s string) rdf.Term { return rdf.NewIRI("http://example.org/" + s) }
	var triples []rdf.Triple
	for i := 0; i < 40; i++ {
		triples = append(triples, rdf.Triple{S: ex(fmt.Sprintf("i%d", i)), P: rdf.NewIRI(rdf.RDFType), O: ex("C")})
	}
	q := readQueryText(t, `PREFIX : <http://example.org/>
		SELECT * WHERE { ?a a :C . ?b a :C . ?c a :C . ?d a :C . ?e a :C }`)
	for _, shards := range []int{1, 2} {
		st := buildGraph(t, triples, shards)
		// The budgets are raised past what 100 ms of this product can
		// account: with the defaults (1/32 of the machine's memory) a fast
		// in-place run hit the query budget before its deadline, and the
		// test is about the deadline.
		e, err := NewGraphEngine(st, Config{Workers: 2, MaxQueryMemory: 8 << 30, MaxMemory: 8 << 30})
		if err != nil {
			t.Fatal(err)
		}
		ms := []planner.Mode{planner.ModeAuto}
		if shards > 1 {
			ms = []planner.Mode{planner.ModeInPlace, planner.ModeForkJoin}
		}
		for _, m := range ms {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			t0 := time.Now()
			_, err := e.Run(ctx, q, Options{Mode: m})
			took := time.Since(t0)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("shards=%d %v: Run returned %v, want %v", shards, m, err, context.DeadlineExceeded)
			}
			if took > 5*time.Second {
				t.Errorf("shards=%d %v: Run returned after %v", shards, m, took)
			}
			deadline := time.Now().Add(5 * time.Second)
			for e.busy.Load() != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("shards=%d %v: %d workers still busy 5 s after the deadline", shards, m, e.busy.Load())
				}
				time.Sleep(5 * time.Millisecond)
			}
			t.Logf("shards=%d %v: Run returned after %v, workers idle %v later", shards, m, took, time.Since(t0)-took)
		}
		e.Close()
	}
}

// failParentStore fails every Lookup of node fail and blocks the other
// nodes' lookups until their context ends.
type failParentStore struct {
	*GraphStore
	fail              int
	mu                sync.Mutex
	blocked, released int
}

func (f *failParentStore) Lookup(ctx context.Context, self, shard int, keys []Key, out [][]ID) (ReadCost, error) {
	if self == f.fail {
		return ReadCost{}, errors.New("boom")
	}
	f.mu.Lock()
	f.blocked++
	f.mu.Unlock()
	<-ctx.Done()
	f.mu.Lock()
	f.released++
	f.mu.Unlock()
	return ReadCost{}, ctx.Err()
}

// TestFailedParentCancelsChildren: when the parent's own part of a forked
// step fails, Run returns that error without waiting for the children
// (which would block forever here), and the children are cancelled.
func TestFailedParentCancelsChildren(t *testing.T) {
	st := buildGraph(t, diffData(t, 3000), 4)
	g, err := NewGraphStore(st)
	if err != nil {
		t.Fatal(err)
	}
	// The first exploration of a fresh engine is coordinated by node 1.
	fs := &failParentStore{GraphStore: g, fail: 1}
	e := New(fs, g.Port(), Config{Workers: 2})
	defer e.Close()
	q := readQueryText(t, `SELECT ?x ?y WHERE { ?x a <http://swat.cse.lehigh.edu/onto/univ-bench.owl#UndergraduateStudent> . ?x <http://swat.cse.lehigh.edu/onto/univ-bench.owl#takesCourse> ?y }`)
	done := make(chan error, 1)
	go func() {
		_, err := e.Run(context.Background(), q, Options{Mode: planner.ModeForkJoin})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("Run returned %v, want the parent's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run waited for children blocked forever")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		fs.mu.Lock()
		b, r := fs.blocked, fs.released
		fs.mu.Unlock()
		if b == r {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d child lookups blocked, %d released", b, r)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
