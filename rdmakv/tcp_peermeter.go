package rdmakv

import "context"

// PeerMeter counts fabric calls per peer node: a query attaches one with
// ContextWithPeerMeter so that EXPLAIN ANALYZE can show which peers it
// read from or sent to, and how much. The TCP fabric charges it (calls to
// its own node are charged to that node's entry as local reads).
type PeerMeter struct {
	m []Meter
}

// NewPeerMeter returns a meter for a cluster of nodes nodes.
func NewPeerMeter(nodes int) *PeerMeter { return &PeerMeter{m: make([]Meter, nodes)} }

// Node returns the meter of node n, or nil if n is out of range.
func (pm *PeerMeter) Node(n NodeID) *Meter {
	if pm == nil || n < 0 || int(n) >= len(pm.m) {
		return nil
	}
	return &pm.m[n]
}

// Snapshot returns the counts per node, indexed by NodeID.
func (pm *PeerMeter) Snapshot() []Counters {
	out := make([]Counters, len(pm.m))
	for i := range pm.m {
		out[i] = pm.m[i].Snapshot()
	}
	return out
}

type peerMeterKey struct{}

// ContextWithPeerMeter returns a context whose fabric calls are also
// counted, per peer, in pm.
func ContextWithPeerMeter(ctx context.Context, pm *PeerMeter) context.Context {
	return context.WithValue(ctx, peerMeterKey{}, pm)
}

// PeerMeterFromContext returns the meter attached by ContextWithPeerMeter,
// or nil.
func PeerMeterFromContext(ctx context.Context) *PeerMeter {
	pm, _ := ctx.Value(peerMeterKey{}).(*PeerMeter)
	return pm
}
