package conformance

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// Evaluator runs a parsed query over a dataset on a store of the given
// number of shards and returns its answer.
type Evaluator func(ctx context.Context, ds *Dataset, q *sparql.Query, shards int) (*Answer, error)

// Evaluate is the Evaluator of our engine: it builds a graphstore.Dataset
// of shards shards (the default graph and every named graph, one
// dictionary), starts an exec.Engine over it (NewDatasetEngine: one fabric
// node per shard, loopback), runs q and decodes the rows.
//
// ASK answers with exec.Result.Boolean, CONSTRUCT and DESCRIBE with
// exec.Result.Triples.
func Evaluate(ctx context.Context, ds *Dataset, q *sparql.Query, shards int) (*Answer, error) {
	return evaluate(ctx, ds, q, shards, exec.Options{})
}

// ModeEvaluator is Evaluate with every step that needs remote data forced
// into mode (planner.ModeInPlace or planner.ModeForkJoin; ModeAuto is
// Evaluate).
func ModeEvaluator(mode planner.Mode) Evaluator {
	return func(ctx context.Context, ds *Dataset, q *sparql.Query, shards int) (*Answer, error) {
		return evaluate(ctx, ds, q, shards, exec.Options{Mode: mode})
	}
}

func evaluate(ctx context.Context, ds *Dataset, q *sparql.Query, shards int, opts exec.Options) (*Answer, error) {
	return evaluateWith(ctx, ds, shards, func(e *exec.Engine) (*exec.Result, error) { return e.Run(ctx, q, opts) })
}

// ShapeEvaluator is Evaluate through the plan cache by query shape: the
// query's text (with base) is learned by a sparql.Shapes, and when its
// shape has a template the engine runs the template with the text's
// constants (exec.Engine.RunParams); otherwise, or when the template's plan
// cannot be bound, q as Evaluate does. templated, if set, counts the runs
// through a template.
func ShapeEvaluator(text, base string, templated *atomic.Int64) Evaluator {
	return func(ctx context.Context, ds *Dataset, q *sparql.Query, shards int) (*Answer, error) {
		return evaluateWith(ctx, ds, shards, func(e *exec.Engine) (*exec.Result, error) {
			shapes := sparql.NewShapes(16, 0)
			shapes.LearnAfter = 1
			shapes.Learn(ctx, text, base, q)
			if tq, params, ok := shapes.Lookup(text, base); ok {
				res, err := e.RunParams(ctx, tq, params, exec.Options{})
				if !errors.Is(err, exec.ErrNotBindable) {
					if templated != nil {
						templated.Add(1)
					}
					return res, err
				}
			}
			return e.Run(ctx, q, exec.Options{})
		})
	}
}

func evaluateWith(ctx context.Context, ds *Dataset, shards int, run func(e *exec.Engine) (*exec.Result, error)) (*Answer, error) {
	b, err := graphstore.NewDatasetBuilder(shards)
	if err != nil {
		return nil, err
	}
	if err := b.AddTriples(rdf.Term{}, ds.Default); err != nil {
		return nil, fmt.Errorf("graphstore: %w", err)
	}
	for _, g := range ds.Named {
		name := rdf.NewIRI(g.IRI)
		if err := b.AddGraph(name); err != nil {
			return nil, fmt.Errorf("graphstore: %w", err)
		}
		if err := b.AddTriples(name, g.Triples); err != nil {
			return nil, fmt.Errorf("graphstore: %w", err)
		}
	}
	st, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("graphstore: %w", err)
	}
	e, err := exec.NewDatasetEngine(st, exec.Config{})
	if err != nil {
		st.Close()
		return nil, err
	}
	closed := false
	defer func() {
		if !closed {
			e.Close()
			st.Close()
		}
	}()
	res, err := run(e)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		// The caller gave up (timeout): do not wait for a stuck engine.
		closed = true
		go func() { e.Close(); st.Close() }()
		return nil, ctx.Err()
	}
	switch res.Form {
	case sparql.FormAsk:
		return &Answer{Kind: Boolean, Boolean: res.Boolean}, nil
	case sparql.FormConstruct, sparql.FormDescribe:
		a := &Answer{Kind: Graph, Graph: make([]rdf.Triple, res.NumTriples())}
		for i := range a.Graph {
			a.Graph[i] = res.Triple(i)
		}
		return a, nil
	}
	a := &Answer{Kind: Solutions, Vars: res.VarNames(), Rows: make([][]rdf.Term, res.Len())}
	for i := range a.Rows {
		a.Rows[i] = res.Row(i, nil)
	}
	return a, nil
}

// PanicError is an engine panic caught by RunGuarded.
type PanicError struct {
	Value any
	Stack string
}

func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// TimeoutError is returned by RunGuarded when the evaluation did not
// finish in time.
type TimeoutError struct{ After time.Duration }

func (t *TimeoutError) Error() string { return fmt.Sprintf("timeout: no answer after %v", t.After) }

// RunGuarded runs eval in its own goroutine with a deadline: a panic in
// that goroutine becomes a *PanicError (with the stack), and an evaluation
// that does not return within timeout (plus a short grace for the engine
// to notice the cancelled context, at most a second) becomes a *TimeoutError; the goroutine
// is then abandoned. Panics in goroutines the engine starts itself cannot
// be caught here.
func RunGuarded(ctx context.Context, timeout time.Duration, eval Evaluator, ds *Dataset, q *sparql.Query, shards int) (*Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type outcome struct {
		a   *Answer
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- outcome{nil, &PanicError{Value: r, Stack: string(debug.Stack())}}
			}
		}()
		a, err := eval(ctx, ds, q, shards)
		done <- outcome{a, err}
	}()
	select {
	case o := <-done:
		if o.err != nil && ctx.Err() == context.DeadlineExceeded {
			return nil, &TimeoutError{timeout}
		}
		return o.a, o.err
	case <-ctx.Done():
	}
	grace := time.NewTimer(min(timeout, time.Second))
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
	}
	return nil, &TimeoutError{timeout}
}
