package expr

import (
	"errors"
	"fmt"
)

// DefaultMaxValue is the default bound (Env.MaxValue) on the bytes of a
// string an expression makes: CONCAT, REPLACE, UCASE/LCASE,
// ENCODE_FOR_URI, BNODE(str), GROUP_CONCAT.
const DefaultMaxValue = 16 << 20

// ErrValueTooLarge is wrapped by the error of a function whose result
// would pass Env.MaxValue. It is not an expression error that a FILTER
// or BIND absorbs: it also goes to Env.Abort, which ends the query.
var ErrValueTooLarge = errors.New("value too large")

// maxValue returns the environment's bound on a made string.
func (env *Env) maxValue() int {
	if env == nil || env.MaxValue <= 0 {
		return DefaultMaxValue
	}
	return env.MaxValue
}

// checkSize fails when a function would make a string of n bytes past
// the bound, telling Abort; a large string also looks at the query's
// context, so that a long chain of string functions on one row stops.
func (env *Env) checkSize(fn string, n int) error {
	if max := env.maxValue(); n > max {
		err := fmt.Errorf("%w: %s would make a string of %d bytes (the limit is %d, --max-value-bytes)", ErrValueTooLarge, fn, n, max)
		if env != nil && env.Abort != nil {
			env.Abort(err)
		}
		return err
	}
	if n > 1<<16 {
		return env.stopped()
	}
	return nil
}

// stopped returns the query's context's error once it is done.
func (env *Env) stopped() error {
	if env == nil || env.Ctx == nil {
		return nil
	}
	return env.Ctx.Err()
}
