package exec

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
)

// holdingStore holds every Lookup of a key with predicate pred until
// release is closed (or the lookup's context ends): a query that reads pred
// keeps the goroutine running it, as a long exploration does.
type holdingStore struct {
	*GraphStore
	pred    ID
	release chan struct{}
	mu      sync.Mutex
	held    int // lookups holding now
}

func (h *holdingStore) Lookup(ctx context.Context, self, shard int, keys []Key, out [][]ID) (ReadCost, error) {
	for _, k := range keys {
		if k.Pred() != h.pred && k.Vertex() != h.pred {
			continue
		}
		h.mu.Lock()
		h.held++
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			h.held--
			h.mu.Unlock()
		}()
		select {
		case <-h.release:
		case <-ctx.Done():
			return ReadCost{}, ctx.Err()
		}
		break
	}
	return h.GraphStore.Lookup(ctx, self, shard, keys, out)
}

func (h *holdingStore) holding() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

// TestLightQueryPassesHeldWorkers: while heavy queries hold every worker of
// every node (their lookups held), a light query still runs to its answer,
// in place and forked. With a fixed pool of workers that jobs queue for,
// the light query waited for a heavy one to end: in the server, three heavy
// cross products made one `LIMIT 5` in thirteen wait 2.5–2.8 s (issue 13).
// The light query's deadline is generous (a loaded machine); it only
// fails if the query waits for the held ones.
func TestLightQueryPassesHeldWorkers(t *testing.T) {
	triples := diffData(t, 3000)
	st := buildGraph(t, triples, 2)
	g, err := NewGraphStore(st)
	if err != nil {
		t.Fatal(err)
	}
	const ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
	takes, ok := g.LookupTerm(rdf.NewIRI(ub + "takesCourse"))
	if !ok {
		t.Fatal("no takesCourse in the test data")
	}
	heavy := readQueryText(t, `SELECT * WHERE { ?x <`+ub+`takesCourse> ?c }`)
	light := readQueryText(t, `SELECT ?t ?c WHERE { ?t <`+ub+`teacherOf> ?c } LIMIT 5`)
	for _, mode := range []planner.Mode{planner.ModeInPlace, planner.ModeForkJoin} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			const workers = 1
			hs := &holdingStore{GraphStore: g, pred: takes, release: make(chan struct{})}
			e := New(hs, g.Port(), Config{Workers: workers})
			defer e.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// More heavy queries than the engine has workers: each node's
			// workers are all held, whichever nodes coordinate them.
			nheavy := 2 * workers * g.Shards()
			var wg sync.WaitGroup
			errs := make(chan error, nheavy)
			for i := 0; i < nheavy; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := e.Run(ctx, heavy, Options{Mode: mode})
					if err == nil && res.Len() == 0 {
						err = fmt.Errorf("heavy query: no rows")
					}
					errs <- err
				}()
			}
			// Every worker of every node is held (with a fixed pool of
			// workers the other heavy queries wait for one; with a goroutine
			// per job every heavy query holds its own, a forked one one per
			// node).
			for hs.holding() < workers*g.Shards() {
				if ctx.Err() != nil {
					t.Fatalf("%d of %d heavy queries hold a lookup", hs.holding(), nheavy)
				}
				time.Sleep(time.Millisecond)
			}
			lctx, lcancel := context.WithTimeout(ctx, 30*time.Second)
			res, err := e.Run(lctx, light, Options{Mode: mode})
			lcancel()
			if err != nil {
				t.Fatalf("the light query, with %d heavy ones holding: %v", hs.holding(), err)
			}
			if res.Len() != 5 {
				t.Errorf("the light query: %d rows, want 5", res.Len())
			}
			if h := hs.holding(); h < workers*g.Shards() {
				t.Errorf("%d lookups of the heavy queries still held after the light one, want %d or more", h, workers*g.Shards())
			}
			close(hs.release)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}
