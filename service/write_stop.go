package service

import (
	"context"
	"sync"
	"time"

	"github.com/wukongd/wukongd/graphstore"
)

// A write stopped by its deadline (or a cancel) must not answer late
// because of the work of undoing it: a big INSERT's apply looks at the
// context every few thousand triples, but the rollback of what it had
// appended to the deltas, or the Discard of a dataset it finished, cannot
// be stopped (a third of a second for a 50 MB INSERT DATA; more on a
// loaded machine). editWithin runs a write's edit on a goroutine of its
// own; once the context is done and the edit has not returned within
// editGrace, the request answers with the context's error and hands the
// write lock to that goroutine, which discards what the edit made and
// unlocks when it returns. The lock held until then keeps the undo
// serialized with the next writes (which wait for it within their own
// deadlines, lockWrites), so the answer is early but the work is still
// bounded: one undo at a time.

// editGrace is how long a write whose context is done waits for its edit
// to return before answering without it (as the web layer waits for a
// late query, web.gracePeriod).
const editGrace = 200 * time.Millisecond

// editHandoff is the meeting point of a request and its edit's goroutine.
type editHandoff struct {
	mu        sync.Mutex
	done      bool // the edit returned and the request takes its result
	abandoned bool // the request answered without it: the goroutine cleans up
	ds        *graphstore.Dataset
	changes   []graphstore.GraphChange
	err       error
	ready     chan struct{}
}

// editWithin runs edit on base for change, which holds writeMu. It
// returns the edit's result, or — when ctx ended and the edit did not
// return within editGrace — ctx's error with handedOff set: writeMu then
// belongs to the edit's goroutine, which discards what the edit made and
// unlocks it; the caller must not touch either.
func (s *Service) editWithin(ctx context.Context, base *generation,
	edit func(g *generation) (*graphstore.Dataset, []graphstore.GraphChange, error)) (ds *graphstore.Dataset, changes []graphstore.GraphChange, err error, handedOff bool) {
	if ctx.Done() == nil {
		ds, changes, err = edit(base) // nothing can stop it: no need to wait apart
		return ds, changes, err, false
	}
	h := &editHandoff{ready: make(chan struct{})}
	go func() {
		ds, changes, err := edit(base)
		h.mu.Lock()
		if h.abandoned {
			h.mu.Unlock()
			if ds != nil {
				ds.Discard()
			}
			s.unlockWrites()
			return
		}
		h.done, h.ds, h.changes, h.err = true, ds, changes, err
		h.mu.Unlock()
		close(h.ready)
	}()
	select {
	case <-h.ready:
		return h.ds, h.changes, h.err, false
	case <-ctx.Done():
	}
	t := time.NewTimer(editGrace)
	defer t.Stop()
	select {
	case <-h.ready:
		return h.ds, h.changes, h.err, false
	case <-t.C:
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return h.ds, h.changes, h.err, false
	}
	h.abandoned = true
	return nil, nil, ctx.Err(), true
}
