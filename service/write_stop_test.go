package service

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/web"
)

// TestStoppedWriteAnswersBeforeItsUndo: a write whose context ends while
// its edit is still undoing its work (here an edit that, once its context
// is done, waits for the test: a rollback that takes long) answers with
// the context's error without waiting for it; the write lock stays with
// the edit until it returns (a later write gives up at its own deadline),
// and what the edit made is discarded (the case of an edit that finished
// after its request gave up), so the next write succeeds on the old
// state. Before, the request answered only once the undo was over.
func TestStoppedWriteAnswersBeforeItsUndo(t *testing.T) {
	s := openDurable(t, emptySnapshot(t, "", 2))
	defer s.Close()
	for _, finishes := range []bool{false, true} {
		undoing, release := make(chan struct{}), make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- s.change(ctx, func(g *generation) (*graphstore.Dataset, []graphstore.GraphChange, error) {
				<-ctx.Done()
				close(undoing)
				<-release // the undo, as long as the test likes
				if !finishes {
					return nil, nil, ctx.Err()
				}
				// The edit's work was done when the request gave up.
				ch := graphstore.GraphChange{Insert: []rdf.Triple{{S: rdf.NewIRI("http://example.org/late"), P: rdf.NewIRI("http://example.org/p"), O: rdf.NewIRI("http://example.org/o")}}}
				ds, err := g.ds.Apply(context.Background(), ch)
				return ds, []graphstore.GraphChange{ch}, err
			})
		}()
		cancel()
		<-undoing
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("finishes=%v: a stopped write answered %v, want context.Canceled", finishes, err)
			}
		case <-time.After(30 * time.Second):
			close(release)
			t.Fatalf("finishes=%v: a stopped write waited for its undo to answer", finishes)
		}
		// The lock is the undo's until it returns.
		wctx, wcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err := s.Update(wctx, &web.UpdateRequest{Update: `INSERT DATA { <http://example.org/a> <http://example.org/p> 1 }`})
		wcancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("finishes=%v: a write during the undo: %v, want to wait for the lock and give up at its deadline", finishes, err)
		}
		close(release)
		update(t, s, `INSERT DATA { <http://example.org/a> <http://example.org/p> 2 }`)
		if got := state(t, s); strings.Contains(got, "late") || !strings.Contains(got, `"2"`) || strings.Contains(got, `"1"`) {
			t.Errorf("finishes=%v: after a stopped write and one acknowledged:\n%s", finishes, got)
		}
		update(t, s, `DELETE DATA { <http://example.org/a> <http://example.org/p> 2 }`)
	}
}
