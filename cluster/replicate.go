package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wukongd/wukongd/cluster/raftlog"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/wal"
	"github.com/wukongd/wukongd/web"
)

// Writes in a cluster (DESIGN.md §15): any node turns a request into its
// changes (service.UpdateChanges), hands them to its proposer, which
// puts the requests waiting together into one entry of the replicated log
// (propose.go; package raftlog, a Raft group of every node), and answers
// once the entry is committed and applied here. Every node applies every
// entry in log order with graphstore.Dataset.ApplyHosted: the dictionary
// everywhere, the lists on the shards it holds.

// A request in an entry carries flags and the version its changes were
// computed on (format 2: propose.go; format 1, one request per entry, is
// the format byte, flags byte, base version u64 and the changes). With
// entryReads, the changes came from a WHERE that read that version: they
// apply only if it is still the newest one and no earlier request of the
// entry changed anything (otherwise the request is a conflict on every
// node and its proposer evaluates it again).
const (
	entryFormat = 1
	entryReads  = 1 << 0
	entryHeader = 10
)

// outcome is what applying an entry gave, on every node alike.
type outcome struct {
	version  uint64 // the version it made
	conflict bool   // its base was not the newest version: not applied
	err      error  // refused (ErrAllShardsNeeded): not applied
	// proposeErr: the entry was not proposed, or its outcome is unknown
	// (past timeout); not set by applyEntry.
	proposeErr error
	timeout    time.Duration
}

// errRefused marks a change the cluster cannot apply.
var errRefused = errors.New("refused by the cluster")

// openRaft starts the replicated log: its Ready loop replays the log
// (every committed entry is applied again onto the snapshot) and then
// follows the group.
func (n *Node) openRaft() error {
	dir := n.cfg.RaftDir
	if dir == "" {
		dir = filepath.Join(n.cfg.Data, "raft", fmt.Sprintf("node-%d", n.cfg.Node))
	}
	tick := n.cfg.RaftTick
	if tick <= 0 {
		tick = 100 * time.Millisecond
	}
	peers := len(n.cfg.Peers)
	n.raftOut = make([]chan []byte, peers)
	n.stopOut = make(chan struct{})
	_, n.postRaft = n.store.Fabric().(rdmakv.Poster)
	for i := range n.raftOut {
		if i == n.cfg.Node {
			continue
		}
		n.raftOut[i] = make(chan []byte, 4096)
		n.raftWG.Add(1)
		go n.sendLoop(i)
	}
	logf := n.cfg.Fabric.Logf
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n.snap = &snapshots{dir: dir, region: rdmakv.RegionID(2*n.store.NumShards() + 1)}
	every := uint64(10000)
	switch {
	case n.cfg.SnapshotEntries < 0:
		every = 0
	case n.cfg.SnapshotEntries > 0:
		every = uint64(n.cfg.SnapshotEntries)
	}
	r, err := raftlog.Open(raftlog.Config{Dir: dir, ID: uint64(n.cfg.Node) + 1, Peers: peers,
		Send: n.sendRaft, Apply: n.applyEntry, Tick: tick, Logf: logf,
		SnapshotEntries: every, KeepEntries: uint64(max(n.cfg.SnapshotKeep, 0)),
		Snapshot: n.takeSnapshot, Fetch: n.fetchSnapshot, Install: n.installSnapshot})
	if err != nil {
		return err
	}
	n.raft = r
	n.prop = newProposer(n)
	n.raftp.Store(r)
	step := func(from rdmakv.NodeID, batch []byte) {
		err := eachRaftMessage(batch, func(msg []byte) error {
			return r.Step(context.Background(), msg)
		})
		if err != nil && logf != nil {
			logf("raft message from node %d refused: %v", from, err)
		}
	}
	n.shards.raft.Store(&step)
	return nil
}

// closeRaft stops the senders and closes the datasets the log made.
func (n *Node) closeRaft() {
	if n.stopOut != nil {
		close(n.stopOut)
		n.raftWG.Wait()
		n.stopOut = nil
	}
	n.tipMu.Lock()
	if n.tip != nil && n.tip != n.ds0 {
		n.tip.Close()
	}
	n.tip = nil
	n.tipMu.Unlock()
}

// sendRaft queues a Raft message for a peer (never blocks: a full queue
// drops it, and Raft sends again).
func (n *Node) sendRaft(to uint64, msg []byte) {
	i := int(to) - 1
	if i < 0 || i >= len(n.raftOut) || n.raftOut[i] == nil {
		return
	}
	select {
	case n.raftOut[i] <- msg:
	default:
		if r := n.raftp.Load(); r != nil {
			r.ReportUnreachable(to)
		}
	}
}

// sendLoop sends the Raft messages for peer i over the fabric, in order,
// the messages queued together in one fabric message. On a fabric that
// posts (rdmakv.Poster: the tcp fabric) it does not wait for the peer's
// acknowledgement — a message is one way on the wire, not a round trip,
// and the next goes out behind it at once (a lost one is Raft's to send
// again: the peer is reported unreachable); otherwise every message
// queued while the previous send waited goes in the next one.
func (n *Node) sendLoop(i int) {
	defer n.raftWG.Done()
	var batch []byte
	for {
		select {
		case msg := <-n.raftOut[i]:
			batch = appendRaftMessage(batch[:0], msg)
		more:
			for len(batch) < raftBatchBytes {
				select {
				case m := <-n.raftOut[i]:
					batch = appendRaftMessage(batch, m)
				default:
					break more
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			var err error
			if n.postRaft {
				err = n.shards.PostRaft(ctx, rdmakv.NodeID(i), batch, func(err error) {
					if err != nil {
						go n.unreachable(i) // not on the fabric's goroutine
					}
				})
			} else {
				err = n.shards.SendRaft(ctx, rdmakv.NodeID(i), batch)
			}
			cancel()
			if err != nil {
				n.unreachable(i)
			}
		case <-n.stopOut:
			return
		}
	}
}

// unreachable tells Raft that a message to peer i may be lost.
func (n *Node) unreachable(i int) {
	if r := n.raftp.Load(); r != nil {
		r.ReportUnreachable(uint64(i) + 1)
	}
}

// raftBatchBytes bounds the Raft messages sent to a peer at once (a
// message of Raft's own is at most about MaxSizePerMsg, 1 MiB, more).
const raftBatchBytes = 4 << 20

// A batch of Raft messages: each a uvarint length and the encoded
// message.
func appendRaftMessage(dst, msg []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(msg)))
	return append(dst, msg...)
}

func eachRaftMessage(batch []byte, fn func(msg []byte) error) error {
	for len(batch) > 0 {
		l, k := binary.Uvarint(batch)
		if k <= 0 || l > uint64(len(batch)-k) {
			return errors.New("a torn batch of Raft messages")
		}
		if err := fn(batch[k : k+int(l)]); err != nil {
			return err
		}
		batch = batch[k+int(l):]
	}
	return nil
}

// applyEntry applies one committed entry (raftlog's Apply): every node
// gets the same outcomes from the same entry on the same version. The
// requests of an entry apply together, in one ApplyHosted (one version),
// less the ones left out: a request that cannot be decoded or is refused,
// and one whose changes came from a WHERE on a version that is no longer
// the newest (or that an earlier request of the entry changed) — a
// conflict, its proposer evaluates it again. It returns one outcome per
// request, in the entry's order.
func (n *Node) applyEntry(index uint64, data []byte) (any, error) {
	reqs, err := decodeEntry(data)
	if err != nil {
		return []outcome{{err: fmt.Errorf("%w: log entry %d is not a change: %v", errRefused, index, err)}}, nil
	}
	n.tipMu.Lock()
	defer n.tipMu.Unlock()
	tip := n.tip
	if tip == nil {
		return nil, errors.New("the node is closing")
	}
	outs := make([]outcome, len(reqs))
	var keep []int // the requests that go in, in order
	changed := false
	for i, r := range reqs {
		switch {
		case r.err != nil:
			outs[i].err = fmt.Errorf("%w: log entry %d, request %d: %v", errRefused, index, i, r.err)
		case r.reads && (r.base != tip.Version() || changed):
			outs[i].conflict = true
		default:
			if err := refusedHosted(r.changes); err != nil {
				outs[i].err = err
				continue
			}
			keep = append(keep, i)
			changed = changed || len(r.changes) > 0
		}
	}
	changes := joinChanges(reqs, keep)
	var nd *graphstore.Dataset
	if len(changes) > 0 {
		nd, err = tip.ApplyHosted(context.Background(), changes...)
		if errors.Is(err, graphstore.ErrAllShardsNeeded) {
			// One of them is refused on this state (a plain vertex newly
			// used as a predicate or class): find which, the same way on
			// every node — each request in order goes in if it applies
			// after the ones that went in before it.
			var in []int
			for _, i := range keep {
				t, terr := tip.ApplyHosted(context.Background(), joinChanges(reqs, append(slices.Clone(in), i))...)
				switch {
				case errors.Is(terr, graphstore.ErrAllShardsNeeded):
					outs[i].err = fmt.Errorf("%w: %v", errRefused, terr)
					continue
				case terr != nil:
					return nil, terr
				}
				if derr := t.Discard(); derr != nil {
					return nil, derr
				}
				in = append(in, i)
			}
			keep, changes = in, joinChanges(reqs, in)
			nd, err = nil, nil
			if len(changes) > 0 {
				nd, err = tip.ApplyHosted(context.Background(), changes...)
			}
		}
		if err != nil {
			return nil, err // the node cannot follow the log any more
		}
	}
	v := tip.Version()
	if nd != nil {
		n.tip = nd
		v = nd.Version()
		grew := nd.Dict().Len() != tip.Dict().Len()
		roles := nd.Dict().RoleChanges() != tip.Dict().RoleChanges()
		if tip != n.ds0 {
			tip.Close()
		}
		n.snap.net.add(changes)
		n.shards.setDict(nd.Dict())
		if roles {
			n.shards.addClasses(nd.Dict())
		}
		if grew || roles {
			n.termsAdded()
		}
		n.vs.set(v)
	}
	for _, i := range keep {
		outs[i].version = v
	}
	n.requests.Add(uint64(len(keep)))
	return outs, nil
}

// joinChanges returns the changes of the requests keep, in order, with
// neighbours that can be one change made one (coalesce).
func joinChanges(reqs []batchedRequest, keep []int) []graphstore.GraphChange {
	if len(keep) == 1 {
		return reqs[keep[0]].changes
	}
	var all []graphstore.GraphChange
	for _, i := range keep {
		all = append(all, reqs[i].changes...)
	}
	return coalesce(all)
}

// coalesce makes a change of each run of changes that apply as one: the
// same graph, no CLEAR or DROP after the first, and no deletes after
// inserts (a change deletes before it inserts). Applying the result is
// applying the changes one after another — the same triples, and new
// terms met in the same order (the same IDs) — but a store's list that
// many requests of an entry touch is read and written once, not once per
// request.
func coalesce(changes []graphstore.GraphChange) []graphstore.GraphChange {
	var out []graphstore.GraphChange
	for _, c := range changes {
		if k := len(out) - 1; k >= 0 {
			last := &out[k]
			if last.Graph == c.Graph && !c.Clear && !c.Drop && (len(c.Delete) == 0 || len(last.Insert) == 0) {
				// slices.Clip: the decoded changes may share a backing array.
				last.Delete = append(slices.Clip(last.Delete), c.Delete...)
				last.Insert = append(slices.Clip(last.Insert), c.Insert...)
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// refusedHosted refuses, at apply, what ApplyHosted refuses whatever the
// state (the proposer checked it too: checkChanges).
func refusedHosted(changes []graphstore.GraphChange) error {
	if err := checkChanges(changes); err != nil {
		return fmt.Errorf("%w: %v", errRefused, err)
	}
	return nil
}

// checkChanges refuses, before proposing, what ApplyHosted refuses.
func checkChanges(changes []graphstore.GraphChange) error {
	for _, c := range changes {
		switch {
		case !c.Graph.IsZero():
			return fmt.Errorf("%w: named graphs in a cluster (graph %v)", web.ErrUnsupported, c.Graph)
		}
	}
	return nil
}

// write evaluates a request into its changes at the newest version
// applied here, hands them to the proposer (propose.go) and waits until
// its entry is applied here. A conflict (a WHERE read a version that is
// no longer the newest) evaluates the request again.
func (n *Node) write(ctx context.Context, eval func(ctx context.Context) ([]graphstore.GraphChange, bool, error)) error {
	if err := n.writable(); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		v := n.vs.current()
		changes, reads, err := eval(withVersion(ctx, v))
		if err != nil || len(changes) == 0 {
			return err
		}
		if err := checkChanges(changes); err != nil {
			return err
		}
		data, err := wal.AppendChanges(nil, changes)
		if err != nil {
			return fmt.Errorf("%w: %v", web.ErrBadRequest, err)
		}
		out, err := n.prop.submit(ctx, &request{reads: reads, base: v, data: data})
		if err != nil {
			return err // ctx: the outcome is unknown
		}
		switch {
		case out.proposeErr != nil:
			return n.proposeError(ctx, out.proposeErr, out.timeout)
		case out.err != nil:
			return fmt.Errorf("%w: %v", web.ErrUnsupported, out.err)
		case out.conflict && attempt < 50:
			continue
		case out.conflict:
			return fmt.Errorf("%w: the change's WHERE kept meeting newer versions (%d attempts); try again", web.ErrNotReady, attempt+1)
		}
		return nil
	}
}

// writable says why this node takes no writes now (nil: it does).
func (n *Node) writable() error {
	if err := n.raft.Err(); err != nil {
		return fmt.Errorf("%w: the replicated log of node %d stopped: %v", web.ErrNotReady, n.cfg.Node, err)
	}
	return n.serving()
}

// replaying says, while the node replays its own log after a start, how
// far it is (nil once it is done).
func (n *Node) replaying() error {
	if a, c := n.raft.Applied(), n.raft.InitialCommit(); a < c {
		return fmt.Errorf("%w: node %d is replaying the replicated log (entry %d of %d)", web.ErrNotReady, n.cfg.Node, a, c)
	}
	return nil
}

// proposeError turns a failed proposal into the answer (503: try again).
func (n *Node) proposeError(ctx context.Context, err error, timeout time.Duration) error {
	switch {
	case errors.Is(err, raftlog.ErrNoLeader):
		return fmt.Errorf("%w: no leader of the replicated log is known to node %d: it is cut off from a majority of the %d nodes, or an election is running; the change was not made", web.ErrNotReady, n.cfg.Node, len(n.cfg.Peers))
	case errors.Is(err, raftlog.ErrLost):
		return fmt.Errorf("%w: %v; the change was not made", web.ErrNotReady, err)
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: the change was not committed within %s (node %d may be cut off from a majority); its outcome is unknown", web.ErrNotReady, timeout, n.cfg.Node)
	}
	return fmt.Errorf("%w: %v", web.ErrNotReady, err)
}

// Version returns the newest version applied on this node.
func (n *Node) Version() uint64 { return n.vs.current() }

// RaftStatus returns this node's view of the replicated log.
func (n *Node) RaftStatus() raftlog.Status { return n.raft.Status() }
