package exec

import (
	"context"
	"fmt"

	"github.com/wukongd/wukongd/planner"
)

// evalPath evaluates a property path pattern over st (the graph the
// pattern is in), joined with the rows of input (the seed's rows, or one
// empty row): see evalPathPattern. It reads from one of the engine's
// nodes, in turn.
func (e *Engine) evalPath(ctx context.Context, st Store, n *planner.PathScan, input *Table) (*Table, error) {
	self := e.local[e.rr.Add(1)%uint64(len(e.local))]
	out, _, err := evalPathPattern(ctx, st, self, n.Pattern, input, localsOf(ctx))
	if err != nil {
		return nil, fmt.Errorf("property path %s: %w", n.Pattern.Path, err)
	}
	return out, nil
}
