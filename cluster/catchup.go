package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/web"
)

// Catching up (DESIGN.md §15). A node that starts replays its own log
// (replaying), then follows the group's log from the leader. It serves —
// answers queries and writes, and lets peers route steps to it — once it
// has applied the newest version any peer it reached had applied when it
// looked after the replay (the target), or, if it reached no peer within
// catchUpAlone, its own. Serving is then for good: a node that falls
// behind later makes the steps on it wait for the query's version.
const catchUpAlone = 2 * time.Second

// catchUp waits for the replay, picks the target and waits for it, then
// marks the node serving (raftWG; stops with stopOut).
func (n *Node) catchUp() {
	defer n.raftWG.Done()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	wait := func() bool {
		select {
		case <-tick.C:
			return true
		case <-n.stopOut:
			return false
		}
	}
	for n.replaying() != nil {
		if !wait() {
			return
		}
	}
	start := time.Now()
	var b [16]byte // the applied version and the floor
	for {
		seen, any := n.vs.current(), false
		for i := range n.cfg.Peers {
			node := rdmakv.NodeID(i)
			if i == n.cfg.Node || !n.shards.link(node) {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
			err := n.fabric.Read(ctx, rdmakv.NodeID(n.cfg.Node), rdmakv.ReadRequest{Node: node, Region: n.vs.reg, Dst: b[:]})
			cancel()
			if err != nil {
				continue
			}
			any = true
			v := binary.LittleEndian.Uint64(b[:])
			n.vs.observeWords(node, b[:])
			seen = max(seen, v)
		}
		if any || time.Since(start) > catchUpAlone {
			n.target.Store(seen)
			break
		}
		if !wait() {
			return
		}
	}
	for n.vs.current() < n.target.Load() {
		if !wait() {
			return
		}
	}
	n.caughtUp.Store(true)
	n.shards.setServing()
	if logf := n.cfg.Fabric.Logf; logf != nil {
		logf("node %d serves: applied version %d (target %d) %s after the replay", n.cfg.Node, n.vs.current(), n.target.Load(), time.Since(start).Round(time.Millisecond))
	}
}

// WaitServing waits until the node serves (it has replayed its log and
// caught up with its peers) or ctx ends.
func (n *Node) WaitServing(ctx context.Context) error {
	for {
		err := n.serving()
		if err == nil {
			return nil
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
	}
}

// serving says why this node does not answer queries and writes yet
// (nil: it does): it replays its log, or catches up with its peers.
func (n *Node) serving() error {
	if err := n.replaying(); err != nil {
		return err
	}
	if n.caughtUp.Load() {
		return nil
	}
	if t := n.target.Load(); t > 0 {
		return fmt.Errorf("%w: node %d is catching up: applied version %d of %d (the newest a peer had applied)", web.ErrNotReady, n.cfg.Node, n.vs.current(), t)
	}
	return fmt.Errorf("%w: node %d is catching up: applied version %d, looking for a peer's version", web.ErrNotReady, n.cfg.Node, n.vs.current())
}

// shardsUp says which shard has no replica this node can reach (nil:
// every shard has one).
func (n *Node) shardsUp() error {
	for s := 0; s < n.pl.Shards; s++ {
		up := false
		for k := 0; k < n.pl.Replicas && !up; k++ {
			node := n.pl.Replica(s, k)
			up = int(node) == n.cfg.Node || n.shards.link(node)
		}
		if !up {
			var down []string
			for _, p := range n.fabric.Peers() {
				if !p.Connected && n.pl.Hosts(p.Node, s) {
					down = append(down, fmt.Sprintf("%d (%s): %s", p.Node, p.Addr, p.LastError))
				}
			}
			return fmt.Errorf("%w: shard %d has no live replica (%d of each shard): nodes %v are not connected", web.ErrNotReady, s, n.pl.Replicas, down)
		}
	}
	return nil
}
