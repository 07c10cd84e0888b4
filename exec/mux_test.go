package exec

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
)

// TestEnginesShareAFabric: engines over one store (as two generations of
// a dataset are when a write left a graph unchanged) run fork-join
// queries at the same time, and engines close and start while the others
// run. Each engine receiving from the fabric itself took the others'
// replies off its rings, and their queries waited for their deadline.
func TestEnginesShareAFabric(t *testing.T) {
	const ex = "http://example.org/"
	var ts []rdf.Triple
	for i := 0; i < 64; i++ {
		ts = append(ts, rdf.Triple{S: rdf.NewIRI(fmt.Sprintf("%sv%d", ex, i)), P: rdf.NewIRI(ex + "p"), O: rdf.NewIRI(fmt.Sprintf("%sv%d", ex, (i*7+1)%64))})
	}
	st := buildGraph(t, ts, 4)
	newEngine := func() *Engine {
		e, err := NewGraphEngine(st, Config{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	const text = `SELECT ?a ?c WHERE { ?a <http://example.org/p> ?b . ?b <http://example.org/p> ?c }`
	base := runtime.NumGoroutine()
	stay := newEngine()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	run := func(e *Engine, n int) {
		defer wg.Done()
		for i := 0; i < n; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			res, err := e.Query(ctx, text, Options{Mode: planner.ModeForkJoin})
			cancel()
			if err != nil {
				errs <- err
				return
			}
			if res.Len() != 64 {
				errs <- fmt.Errorf("%d rows, want 64", res.Len())
				return
			}
		}
	}
	wg.Add(1)
	go run(stay, 400)
	for round := 0; round < 20; round++ {
		e := newEngine()
		wg.Add(1)
		done := make(chan struct{})
		go func() { run(e, 10); close(done) }()
		<-done
		e.Close()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	stay.Close()
	waitGoroutines(t, base) // the fabric's receivers stop with its last engine
}
