package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/service"
	"github.com/wukongd/wukongd/web"
)

// backend is the web.Backend of a node: the service's queries, with the
// per-peer traffic of this node added to EXPLAIN ANALYZE, writes through
// the replicated log, and readiness that needs every peer.
type backend struct {
	n   *Node
	svc *service.Service
}

var (
	_ web.Backend       = (*backend)(nil)
	_ web.FabricStatser = (*backend)(nil)
	_ web.Readier       = (*backend)(nil)
	_ web.Prefixer      = (*backend)(nil)
)

// Query implements web.Backend.
func (b *backend) Query(ctx context.Context, req *web.QueryRequest) (*web.Result, error) {
	if err := b.n.serving(); err != nil {
		return nil, err // it would read an old version
	}
	// The query reads the version applied here now: every write this
	// node acknowledged, and never older than an earlier query here.
	v := b.n.vs.current()
	var (
		res *web.Result
		err error
		pm  *rdmakv.PeerMeter
	)
	for attempt := 0; ; attempt++ {
		res, pm, err = b.query(ctx, v, req)
		// A query that lost a node it had sent work to runs again, at the
		// same version, on the replicas left (its exploration had not
		// produced any row for the client yet).
		if err == nil || attempt >= 2 || b.n.pl.Replicas == 1 || ctx.Err() != nil || !errors.Is(err, rdmakv.ErrNodeDown) {
			break
		}
	}
	if err != nil {
		return nil, unavailable(err)
	}
	if pm == nil || res.Plan == nil {
		return res, nil
	}
	res.Plan.Notes = append(res.Plan.Notes, peerNotes(b.n, pm.Snapshot())...)
	return res, nil
}

// query runs req once at version v.
func (b *backend) query(ctx context.Context, v uint64, req *web.QueryRequest) (*web.Result, *rdmakv.PeerMeter, error) {
	qctx, qt := b.n.track(withVersion(ctx, v))
	defer b.n.untrack(qt)
	var pm *rdmakv.PeerMeter
	if req.Explain == web.ExplainAnalyze {
		pm = rdmakv.NewPeerMeter(len(b.n.cfg.Peers))
		qctx = rdmakv.ContextWithPeerMeter(qctx, pm)
	}
	res, err := b.svc.Query(qctx, req)
	if err != nil {
		// A query cancelled because a node it waited on was lost reports
		// that, not the cancellation.
		if cause := context.Cause(qctx); ctx.Err() == nil && errors.Is(cause, rdmakv.ErrNodeDown) {
			err = cause
		}
		return nil, nil, err
	}
	return res, pm, nil
}

// unavailable marks a query that failed because a node is down as
// web.ErrNotReady (503: the cluster cannot serve it now, try again).
func unavailable(err error) error {
	if err != nil && errors.Is(err, rdmakv.ErrNodeDown) && !errors.Is(err, web.ErrNotReady) {
		return fmt.Errorf("%w: %w", web.ErrNotReady, err)
	}
	return err
}

// peerNotes describes the fabric traffic a query's coordinating node made,
// per peer (sub-queries forked to other nodes count on those nodes).
func peerNotes(n *Node, per []rdmakv.Counters) []string {
	var notes []string
	for node, c := range per {
		if node == n.cfg.Node {
			if c.LocalReads > 0 {
				notes = append(notes, fmt.Sprintf("fabric node %d (this node, coordinator): %d local reads", node, c.LocalReads))
			}
			continue
		}
		if c == (rdmakv.Counters{}) {
			continue
		}
		var parts []string
		parts = append(parts, fmt.Sprintf("%d reads (%d B) in %d round trips", c.Reads, c.ReadBytes, c.RoundTrips))
		if c.Sends > 0 {
			parts = append(parts, fmt.Sprintf("%d messages (%d B)", c.Sends, c.SendBytes))
		}
		if c.FailedCalls > 0 {
			parts = append(parts, fmt.Sprintf("%d failed calls", c.FailedCalls))
		}
		notes = append(notes, fmt.Sprintf("fabric peer %d (%s), from the coordinator: %s", node, n.cfg.Peers[node], strings.Join(parts, ", ")))
	}
	return notes
}

// Update implements web.Backend: the request's changes go through the
// replicated log (replicate.go); it returns once they are applied here.
func (b *backend) Update(ctx context.Context, req *web.UpdateRequest) error {
	return b.n.write(ctx, func(vctx context.Context) ([]graphstore.GraphChange, bool, error) {
		qctx, qt := b.n.track(vctx) // a WHERE is a query coordinated here
		defer b.n.untrack(qt)
		changes, reads, err := b.svc.UpdateChanges(qctx, req)
		return changes, reads, unavailable(err)
	})
}

// GetGraph implements web.Backend: the default graph is read with the
// query CONSTRUCT WHERE { ?s ?p ?o } coordinated here (every shard, at the
// version applied here); a cluster has no named graphs (404).
func (b *backend) GetGraph(ctx context.Context, gn web.GraphName) (web.TripleIterator, error) {
	if !gn.Default {
		return nil, fmt.Errorf("%w: there is no graph %s (a cluster holds the default graph only)", web.ErrNotFound, gn)
	}
	res, err := b.Query(ctx, &web.QueryRequest{ID: "graph-store-get", Query: "CONSTRUCT WHERE { ?s ?p ?o }"})
	if err != nil {
		return nil, err
	}
	return res.Triples, nil
}

// PutGraph implements web.Backend: the default graph is replaced through
// the replicated log (one entry: a CLEAR and the body's triples; every
// node empties the lists of its shards and inserts the body's share).
func (b *backend) PutGraph(ctx context.Context, gn web.GraphName, body web.GraphBody) (bool, error) {
	if !gn.Default {
		return false, fmt.Errorf("%w: named graphs in a cluster (graph %s)", web.ErrUnsupported, gn)
	}
	changes, err := b.svc.PostGraphChanges(ctx, gn, body)
	if err != nil {
		return false, err
	}
	if len(changes) == 0 {
		changes = []graphstore.GraphChange{{}}
	}
	changes[0].Clear = true
	return false, b.n.write(ctx, func(context.Context) ([]graphstore.GraphChange, bool, error) {
		return changes, false, nil
	})
}

// PostGraph implements web.Backend: the body is merged into the default
// graph through the replicated log.
func (b *backend) PostGraph(ctx context.Context, gn web.GraphName, body web.GraphBody) (bool, error) {
	if !gn.Default {
		return false, fmt.Errorf("%w: named graphs in a cluster (graph %s)", web.ErrUnsupported, gn)
	}
	changes, err := b.svc.PostGraphChanges(ctx, gn, body)
	if err != nil {
		return false, err
	}
	return false, b.n.write(ctx, func(context.Context) ([]graphstore.GraphChange, bool, error) {
		return changes, false, nil
	})
}

// DeleteGraph implements web.Backend: deleting the default graph empties
// it through the replicated log; a cluster has no named graphs (404).
func (b *backend) DeleteGraph(ctx context.Context, gn web.GraphName) error {
	if !gn.Default {
		return fmt.Errorf("%w: there is no graph %s (a cluster holds the default graph only)", web.ErrNotFound, gn)
	}
	return b.n.write(ctx, func(context.Context) ([]graphstore.GraphChange, bool, error) {
		return []graphstore.GraphChange{{Drop: true}}, false, nil
	})
}

// FabricStats implements web.FabricStatser: this node's tcp fabric totals.
func (b *backend) FabricStats() web.FabricStats { return b.svc.FabricStats() }

// Prefixes implements web.Prefixer.
func (b *backend) Prefixes() map[string]string { return b.svc.Prefixes() }

// Ready implements web.Readier: the service is open, the node has
// replayed its log and caught up with its peers, a leader is known, and
// every shard has a replica the node can reach.
func (b *backend) Ready(ctx context.Context) error {
	if err := b.svc.Ready(ctx); err != nil {
		return err
	}
	if err := b.n.writable(); err != nil {
		return err
	}
	if st := b.n.raft.Status(); st.Leader == 0 {
		return fmt.Errorf("%w: the replicated log has no leader known to node %d (term %d): an election is running or the node is cut off from a majority", web.ErrNotReady, b.n.cfg.Node, st.Term)
	}
	return b.n.shardsUp()
}
