package exec

import (
	"context"
	"slices"
)

// checkEvery is the work (rows read or made) between two looks at the
// query's context inside a step or operator: often enough that a
// cancelled or timed-out query stops within well under a millisecond of
// work, rarely enough that the look costs nothing per row.
const checkEvery = 4096

// stopCheck looks at a context every checkEvery units of work. The zero
// value (nil context) never stops. Use one per loop:
//
//	sc := stopCheck{ctx: ctx}
//	for row := range rows {
//		if err := sc.add(1); err != nil {
//			return nil, err
//		}
//		…
//	}
type stopCheck struct {
	ctx context.Context
	n   int
	// grow, when set, runs at each look (before it): it charges the
	// loop's growing state to the query's memory account, whose overrun
	// cancels ctx (budget.go).
	grow func()
}

// add counts n units of work and returns the context's error when the
// count passes checkEvery and the context is done.
func (c *stopCheck) add(n int) error {
	c.n += n
	if c.n < checkEvery {
		return nil
	}
	c.n = 0
	if c.grow != nil {
		c.grow()
	}
	if c.ctx == nil {
		return nil
	}
	return c.ctx.Err()
}

// ctxErr is ctx.Err(), nil for a nil context.
func ctxErr(ctx context.Context) error {
	if ctx == nil {
		return nil
	}
	return ctx.Err()
}

// copyChunk is the most elements copied between two looks at the context
// when a large slice grows or a table is gathered (a few milliseconds of
// copying on a loaded core): a single append or gather of hundreds of MB
// is out of the context's reach for as long as the copy takes, which on
// a shared machine was seconds past a query's deadline.
const copyChunk = 1 << 20

// growSlice returns s with room for at least n more elements. A slice of
// fewer than copyChunk elements grows as append would; a larger one is
// copied into its new array chunk by chunk, with a look at ctx between
// chunks (on ctx's error s is returned as it was, with the error).
func growSlice[T any](ctx context.Context, s []T, n int) ([]T, error) {
	if cap(s)-len(s) >= n {
		return s, nil
	}
	if len(s) < copyChunk {
		return slices.Grow(s, n), nil
	}
	ns := make([]T, len(s), max(cap(s)+cap(s)/4, len(s)+n))
	for i := 0; i < len(s); i += copyChunk {
		if err := ctxErr(ctx); err != nil {
			return s, err
		}
		copy(ns[i:min(i+copyChunk, len(s))], s[i:])
	}
	return ns, nil
}

// gatherCtx is t.gather(src) that looks at ctx every copyChunk rows of
// each column.
func (t *Table) gatherCtx(ctx context.Context, src []int32) (*Table, error) {
	if len(src) < copyChunk {
		return t.gather(src), ctxErr(ctx)
	}
	out := &Table{Vars: t.Vars, Cols: make([][]ID, len(t.Cols)), N: len(src)}
	for c, col := range t.Cols {
		if col == nil {
			continue
		}
		nc := make([]ID, len(src))
		for i := 0; i < len(src); i += copyChunk {
			if err := ctxErr(ctx); err != nil {
				return nil, err
			}
			for j, r := range src[i:min(i+copyChunk, len(src))] {
				nc[i+j] = col[r]
			}
		}
		out.Cols[c] = nc
	}
	return out, nil
}
