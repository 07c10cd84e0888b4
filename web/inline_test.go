package web

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wukongd/wukongd/rdf"
)

// inlineBackend is a testBackend that takes every query inline
// (InlineQuerier) except those with the word WORKER, which it leaves to
// Query; LATE makes QueryInline wait for ctx to end and then return a
// result all the same (its rows record their Close).
type inlineBackend struct {
	*testBackend
	inline, queries atomic.Int64
	lateClosed      chan struct{}
}

var _ InlineQuerier = (*inlineBackend)(nil)

func (b *inlineBackend) QueryInline(ctx context.Context, req *QueryRequest) (*Result, bool, error) {
	switch {
	case strings.Contains(req.Query, "WORKER"):
		return nil, false, nil
	case strings.Contains(req.Query, "LATE"):
		b.inline.Add(1)
		<-ctx.Done()
		if strings.HasPrefix(req.Query, "ASK") {
			return &Result{Form: FormAsk, Boolean: true}, true, nil
		}
		return &Result{Form: FormSelect, Vars: []string{"s"}, Rows: &closeRows{closed: b.lateClosed}}, true, nil
	}
	b.inline.Add(1)
	res, err := b.testBackend.Query(ctx, req)
	return res, true, err
}

func (b *inlineBackend) Query(ctx context.Context, req *QueryRequest) (*Result, error) {
	b.queries.Add(1)
	return b.testBackend.Query(ctx, req)
}

// closeRows is one row that closes its channel at Close.
type closeRows struct {
	closed chan struct{}
	done   bool
}

func (r *closeRows) Next() bool {
	if r.done {
		return false
	}
	r.done = true
	return true
}
func (r *closeRows) Row() []rdf.Term { return []rdf.Term{rdf.NewIRI("http://example.org/late")} }
func (r *closeRows) Err() error      { return nil }
func (r *closeRows) Close() error {
	if r.closed != nil {
		close(r.closed)
		r.closed = nil
	}
	return nil
}

func newInlineFixture(t *testing.T, mod func(*Options)) (*fixture, *inlineBackend) {
	t.Helper()
	tb := newTestBackend(baseTriples)
	b := &inlineBackend{testBackend: tb, lateClosed: make(chan struct{})}
	opts := Options{Backend: b}
	if mod != nil {
		mod(&opts)
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, srv: srv, ts: serveForTest(t, srv), b: tb}, b
}

// A query the backend takes inline gets the answer the worker path gives;
// one it declines goes to Query, on a worker.
func TestInlineQueryAnswers(t *testing.T) {
	f, b := newInlineFixture(t, nil)
	plain := newFixture(t, nil)
	for _, accept := range []string{"application/sparql-results+json", "text/tab-separated-values", "application/sparql-results+xml"} {
		got, want := f.get(q(selectKnows), accept), plain.get(q(selectKnows), accept)
		if got.status != 200 || got.body != want.body || got.header.Get("Content-Type") != want.header.Get("Content-Type") {
			t.Errorf("Accept %s: inline %d %q %q, worker %d %q %q", accept, got.status, got.header.Get("Content-Type"), got.body,
				want.status, want.header.Get("Content-Type"), want.body)
		}
	}
	if n, m := b.inline.Load(), b.queries.Load(); n != 3 || m != 0 {
		t.Fatalf("%d inline, %d through Query; want 3, 0", n, m)
	}
	if r := f.get(q(selectKnows+" # WORKER"), "text/tab-separated-values"); r.status != 200 || !strings.Contains(r.body, "carol") {
		t.Fatalf("declined query: %d %q", r.status, r.body)
	}
	if m := b.queries.Load(); m != 1 {
		t.Fatalf("the declined query went %d times through Query, want 1", m)
	}
	// A query the backend declines still gets its answer by the deadline
	// when the backend ignores ctx.
	defer close(f.b.unstick)
	if r := f.get(q("SELECT * { STUCK } # WORKER", "timeout", "0.1"), ""); r.status != TimeoutStatus {
		t.Fatalf("stuck on a worker: %d %s", r.status, r.body)
	}
}

// An inline query holds its slot while it runs (429 for the next one past
// MaxConcurrent), is stopped by its timeout (504, the backend sees the
// cancellation) and gives the slot back.
func TestInlineQuerySlotAndTimeout(t *testing.T) {
	f, _ := newInlineFixture(t, func(o *Options) { o.MaxConcurrent = 1 })
	done := make(chan response, 1)
	go func() { done <- f.get(q("SELECT * { SLEEP }", "timeout", "1"), "") }()
	waitOrFail(t, f.b.started, "the sleeping query never started")
	if r := f.get(q(selectKnows), ""); r.status != 429 {
		t.Fatalf("while an inline query runs: %d, want 429", r.status)
	}
	if r := <-done; r.status != TimeoutStatus {
		t.Fatalf("sleeping inline query: %d %s", r.status, r.body)
	}
	waitOrFail(t, f.b.cancelled, "the inline query was not cancelled")
	if r := f.get(q(selectKnows), ""); r.status != 200 {
		t.Fatalf("after the inline query: %d, want 200 (slot given back)", r.status)
	}
}

// A result the backend returns inline after the deadline is closed and the
// client gets the timeout, as with a late result from a worker (an ASK has
// no stream whose end would notice the deadline).
func TestInlineLateResultIsClosed(t *testing.T) {
	f, b := newInlineFixture(t, nil)
	if r := f.get(q("ASK { LATE }", "timeout", "0.1"), ""); r.status != TimeoutStatus {
		t.Fatalf("late inline ASK: %d %s", r.status, r.body)
	}
	if r := f.get(q("SELECT * { LATE }", "timeout", "0.1"), ""); r.status != TimeoutStatus {
		t.Fatalf("late inline result: %d %s", r.status, r.body)
	}
	waitOrFail(t, b.lateClosed, "the late result was not closed")
}

// waitOrFail waits up to 10 s for ch, and fails the test with msg if it
// does not come.
func waitOrFail[T any](t *testing.T, ch <-chan T, msg string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal(msg)
	}
}
