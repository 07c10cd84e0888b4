package exec

import (
	"context"
	"fmt"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/sparql"
)

// evalPath evaluates a property path pattern over st (the graph the
// pattern is in), joined with the rows of input (the seed's rows, or one
// empty row): see evalPathPattern. It reads from one of the engine's
// nodes: the owner of a constant end (so its first reads are local), else
// each node in turn. Its state and rows are charged to mem (nil: none).
func (e *Engine) evalPath(ctx context.Context, st Store, n *planner.PathScan, input *Table, mem *memAccount) (*Table, error) {
	self := e.local[e.rr.Add(1)%uint64(len(e.local))]
	for _, x := range []sparql.TermOrVar{n.Pattern.S, n.Pattern.O} {
		if x.Var != "" {
			continue
		}
		if id, ok := st.LookupTerm(x.Term); ok && isVertex(id) && e.nodes[st.Owner(id)] != nil {
			self = st.Owner(id)
			break
		}
	}
	out, _, err := evalPathPattern(ctx, st, self, n.Pattern, input, localsOf(ctx), mem)
	if err != nil {
		return nil, fmt.Errorf("property path %s: %w", n.Pattern.Path, err)
	}
	return out, nil
}
