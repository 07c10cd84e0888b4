package service

import (
	"context"
	"fmt"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
	"github.com/wukongd/wukongd/web"
)

// Update implements web.Backend. It runs INSERT DATA, DELETE DATA and
// CLEAR/DROP of the default graph (DEFAULT or ALL; DROP empties it, since
// the default graph always exists); ADD, COPY and MOVE from the default
// graph to itself do nothing. All operations of the request publish as one
// change. Everything else (LOAD, DELETE/INSERT … WHERE, named graphs) is
// web.ErrUnsupported, and nothing changes then.
func (s *Service) Update(ctx context.Context, req *web.UpdateRequest) error {
	u, err := s.cache.ParseUpdate(req.Update)
	if err != nil {
		return err // *sparql.SyntaxError
	}
	if len(req.UsingGraphs) > 0 || len(req.UsingNamedGraphs) > 0 {
		return fmt.Errorf("%w: using-graph-uri and using-named-graph-uri need named graphs, which the store does not have yet", web.ErrUnsupported)
	}
	// Check every operation before changing anything.
	for _, op := range u.Operations {
		if err := checkUpdateOp(op); err != nil {
			return err
		}
	}
	if len(u.Operations) == 0 {
		return nil
	}
	return s.write(ctx, func(old *graphstore.Store, emit func(rdf.Triple) error) error {
		return applyUpdate(ctx, old, u.Operations, emit)
	})
}

func checkUpdateOp(op sparql.UpdateOp) error {
	defaultOnly := func(quads []rdf.Quad) error {
		for _, q := range quads {
			if !q.G.IsZero() {
				return fmt.Errorf("%w: GRAPH %s in %s", errNamedGraphs, q.G, opName(op))
			}
		}
		return nil
	}
	switch op := op.(type) {
	case *sparql.InsertData:
		return defaultOnly(op.Quads)
	case *sparql.DeleteData:
		return defaultOnly(op.Quads)
	case *sparql.Clear:
		return defaultTarget(op.Target, "CLEAR")
	case *sparql.Drop:
		return defaultTarget(op.Target, "DROP")
	case *sparql.Add:
		return selfRef(op.From, op.To, "ADD")
	case *sparql.Copy:
		return selfRef(op.From, op.To, "COPY")
	case *sparql.Move:
		return selfRef(op.From, op.To, "MOVE")
	case *sparql.Create:
		return fmt.Errorf("%w: CREATE GRAPH <%s>", errNamedGraphs, op.Graph)
	}
	return unsupported(op.Position(), opName(op)+" updates")
}

func opName(op sparql.UpdateOp) string {
	switch op.(type) {
	case *sparql.InsertData:
		return "INSERT DATA"
	case *sparql.DeleteData:
		return "DELETE DATA"
	case *sparql.Modify:
		return "DELETE/INSERT … WHERE"
	case *sparql.Load:
		return "LOAD"
	case *sparql.Clear:
		return "CLEAR"
	case *sparql.Drop:
		return "DROP"
	case *sparql.Create:
		return "CREATE"
	case *sparql.Copy:
		return "COPY"
	case *sparql.Move:
		return "MOVE"
	case *sparql.Add:
		return "ADD"
	}
	return fmt.Sprintf("%T", op)
}

// defaultTarget accepts the targets that mean the default graph here:
// DEFAULT, and ALL (the only graph); NAMED is no graph at all.
func defaultTarget(t sparql.GraphTarget, what string) error {
	switch t.Kind {
	case sparql.TargetDefault, sparql.TargetAll, sparql.TargetNamed:
		return nil
	}
	return fmt.Errorf("%w: %s GRAPH <%s>", errNamedGraphs, what, t.IRI)
}

func selfRef(from, to sparql.GraphRef, what string) error {
	if from.IRI == "" && to.IRI == "" {
		return nil
	}
	return fmt.Errorf("%w: %s with a named graph", errNamedGraphs, what)
}

// applyUpdate emits the default graph after the operations: the old
// triples, minus those deleted or cleared, plus those inserted, in order.
func applyUpdate(ctx context.Context, old *graphstore.Store, ops []sparql.UpdateOp, emit func(rdf.Triple) error) error {
	// Find the last operation that empties the graph: what comes before it
	// (old triples included) does not matter.
	start, keepOld := 0, true
	for i, op := range ops {
		switch op := op.(type) {
		case *sparql.Clear:
			if op.Target.Kind != sparql.TargetNamed {
				start, keepOld = i+1, false
			}
		case *sparql.Drop:
			if op.Target.Kind != sparql.TargetNamed {
				start, keepOld = i+1, false
			}
		}
	}
	ops = ops[start:]
	// A triple survives if it is not deleted after its last insertion:
	// track, per triple touched by the operations, whether it ends present.
	final := map[rdf.Triple]bool{}
	var order []rdf.Triple // inserted triples in order (for a stable build)
	for _, op := range ops {
		switch op := op.(type) {
		case *sparql.InsertData:
			// The blank nodes of each INSERT DATA are new nodes.
			fresh := loader.NewBlankPrefix()
			for _, q := range op.Quads {
				t := q.Triple()
				for _, x := range []*rdf.Term{&t.S, &t.O} {
					if x.IsBlank() {
						*x = rdf.NewBlank(fresh + x.Value)
					}
				}
				if _, ok := final[t]; !ok {
					order = append(order, t)
				}
				final[t] = true
			}
		case *sparql.DeleteData:
			for _, q := range op.Quads {
				final[q.Triple()] = false
			}
		}
	}
	if keepOld {
		err := eachTriple(ctx, old, func(t rdf.Triple) error {
			if present, touched := final[t]; touched && !present {
				return nil // deleted
			}
			return emit(t)
		})
		if err != nil {
			return err
		}
	}
	for _, t := range order {
		if final[t] {
			if err := emit(t); err != nil {
				return err
			}
		}
	}
	return nil
}
