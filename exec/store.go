package exec

import (
	"context"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
)

// ID is a term ID in a column; 0 means unbound.
type ID = graphstore.ID

// Key is a (vertex, predicate, direction) key of an adjacency list.
type Key = graphstore.Key

// Store is the sharded graph as the engine reads it. The engine owns this
// interface; NewGraphEngine adapts a *graphstore.Store and tests may
// provide their own.
type Store interface {
	// Shards is the number of shards (= nodes of the cluster).
	Shards() int
	// Owner returns the shard owning vertex v.
	Owner(v ID) int
	// Lookup fills out[i] with the sorted adjacency list of keys[i] in shard
	// shard, as read by node self: a local read when shard == self, else
	// one batched round trip of one-sided READs through the fabric. A key
	// that is not stored gives an empty list. The lists may alias store
	// memory (valid while the store is open, never to be modified).
	Lookup(ctx context.Context, self, shard int, keys []Key, out [][]ID) (ReadCost, error)
	// LookupTerm returns the ID of a term, false when unknown.
	LookupTerm(t rdf.Term) (ID, bool)
	// Term returns the term of id.
	Term(id ID) (rdf.Term, bool)
	// IsClass reports whether id is a class (an object of rdf:type, whose
	// instances are in the type index, not in (id, rdf:type, In) lists).
	IsClass(id ID) bool
	// PlannerStats returns the statistics for the cost model.
	PlannerStats() *planner.Stats
}

// ReadCost is what one Lookup cost on the fabric.
type ReadCost struct {
	Reads      uint64 // one-sided READs
	Bytes      uint64 // bytes read
	RoundTrips uint64
}

func (c *ReadCost) add(o ReadCost) {
	c.Reads += o.Reads
	c.Bytes += o.Bytes
	c.RoundTrips += o.RoundTrips
}

// Transport carries messages between the nodes (fork-join sub-queries and
// their replies). Messages are bytes, so a network can carry them.
type Transport interface {
	// Send delivers a copy of msg to node to's receive queue.
	Send(ctx context.Context, from, to int, msg []byte) error
	// Recv takes the next message of node's receive queue.
	Recv(ctx context.Context, node int) (from int, msg []byte, err error)
}

// ContextTransport is a Transport whose messages carry context for the
// sub-queries they start: a cluster's messages carry the version the
// query reads, which the sub-query's lookups (Store.Lookup gets the
// context) and its own forks must read too. The engine derives a forked
// sub-query's context from the one RecvContext returns.
type ContextTransport interface {
	Transport
	// RecvContext is Recv that also returns a context derived from ctx
	// with what the message carries.
	RecvContext(ctx context.Context, node int) (mctx context.Context, from int, msg []byte, err error)
}
