package exec

import "context"

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
