package cluster

import (
	"fmt"

	"github.com/wukongd/wukongd/rdmakv"
)

// Placement says which nodes host each shard (DESIGN.md §15): shard s
// lives on the R nodes s mod N, s+1 mod N, …, s+R-1 mod N. The first is
// its primary; all R hold the same lists at every version, because every
// node applies the whole replicated log to the shards it hosts. With
// shards ≥ nodes every node hosts about R/N of the shards, and the nodes
// that share a node's shards are its R-1 successors and predecessors, so
// losing any R-1 nodes leaves every shard a replica.
type Placement struct {
	Shards, Nodes, Replicas int
}

// NewPlacement checks and returns the placement of shards on nodes with
// r replicas each.
func NewPlacement(shards, nodes, r int) (Placement, error) {
	switch {
	case nodes < 1:
		return Placement{}, fmt.Errorf("a cluster needs at least one node")
	case shards < nodes:
		return Placement{}, fmt.Errorf("the snapshot has %d shards, fewer than the %d nodes: load it with --shards %d or more", shards, nodes, nodes)
	case r < 1 || r > nodes:
		return Placement{}, fmt.Errorf("--replicas %d: each shard needs 1 to %d (the number of nodes) replicas", r, nodes)
	}
	return Placement{Shards: shards, Nodes: nodes, Replicas: r}, nil
}

// Primary returns shard s's first node.
func (p Placement) Primary(s int) rdmakv.NodeID { return rdmakv.NodeID(s % p.Nodes) }

// Replica returns the k-th node of shard s (k < Replicas; 0 is the
// primary).
func (p Placement) Replica(s, k int) rdmakv.NodeID { return rdmakv.NodeID((s + k) % p.Nodes) }

// Hosts reports whether node hosts shard s.
func (p Placement) Hosts(node rdmakv.NodeID, s int) bool {
	return (int(node)-s%p.Nodes+p.Nodes)%p.Nodes < p.Replicas
}

// Hosted returns the shards node hosts, in order.
func (p Placement) Hosted(node rdmakv.NodeID) []int {
	var r []int
	for s := 0; s < p.Shards; s++ {
		if p.Hosts(node, s) {
			r = append(r, s)
		}
	}
	return r
}

// placeOn returns the store's placement function for node: a shard it
// hosts is on node itself, another on its primary (graphstore's NodeOf;
// routing picks among the replicas itself).
func (p Placement) placeOn(node rdmakv.NodeID) func(int) rdmakv.NodeID {
	return func(s int) rdmakv.NodeID {
		if p.Hosts(node, s) {
			return node
		}
		return p.Primary(s)
	}
}
