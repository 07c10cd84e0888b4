package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/wal"
)

// Snapshots of the replicated log (DESIGN.md §15). Each node holds only
// its shards, so no other node has a copy of them: a node far behind
// cannot be given another node's store files. What every node has whole
// is the log, so a snapshot at entry I is the log up to I compacted into
// its net effect on the cluster's snapshot (the data directory every node
// opens): the triples inserted since, in the order they were first
// inserted (so replaying them gives new terms the IDs they got — the
// dictionary is the same on every node), and the triples whose last
// change deleted them. Set semantics make it exact: applied onto the
// snapshot, or onto any state the log passed through before I, it gives
// the state at I. Its size follows the triples written, not the length of
// the log (a triple written a thousand times is in it once).
//
// A node takes one after SnapshotEntries applied entries (a file
// snapshot-I in its raft directory, written to a temporary name, synced
// and renamed), registers its bytes as a fabric region, and Raft
// truncates the log before I. A follower whose next entry the leader no
// longer has gets Raft's MsgSnap whose data is only a descriptor (holder,
// index, length, CRC-32C); it READs the file from the holder in chunks,
// checks it, keeps it under its name, and only then hands the message to
// Raft, which installs it: one ApplyHostedAt jumps the node to the
// snapshot's version. A torn or changed transfer fails the check and is
// dropped; the leader sends the descriptor again. The versions a node
// jumped over are not on it: it publishes them as its floor, and a query
// reading one answers that it was compacted past.

const (
	snapMagic      = "WKRS"
	snapFormat     = 2
	snapHeader     = 4 + 1 + 8 + 8 + 8 // magic, format, index, version, requests
	snapHeader1    = 4 + 1 + 8 + 8     // format 1: no requests
	snapDescFormat = 1
	snapDescLen    = 1 + 4 + 8 + 8 + 4 // format, holder node, index, length, CRC-32C
	snapChunk      = 256 << 10
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// snapshotFetchHook, set by tests, sees each chunk a fetch read (and may
// damage it).
var snapshotFetchHook func(chunk []byte)

// snapshots is a node's side of the log's snapshots.
type snapshots struct {
	dir    string
	region rdmakv.RegionID

	// net is the log's net effect since the cluster's snapshot, up to
	// the newest applied entry (changed by the apply loop only).
	net netChanges

	mu   sync.Mutex
	buf  []byte // the newest local snapshot's bytes (the registered region)
	last uint64 // its index: files before the one before it are removed

	taken, fetched, rejected, installed atomic.Uint64
	lastFetched                         atomic.Uint64 // the index of the snapshot fetched last
}

// netChanges is the net effect of a sequence of changes. After a CLEAR
// (or DROP) of the default graph, cleared is set: none of the snapshot's
// triples is left, and only the triples inserted since that are present
// are; ins still holds every triple ever inserted, in order, because
// inserting them is what gives their new terms the IDs they got.
type netChanges struct {
	ins     []rdf.Triple         // every triple inserted, in first-insert order
	state   map[rdf.Triple]uint8 // netInserted: in ins; netPresent: the last change inserted it
	cleared bool
}

const (
	netInserted = 1 << 0
	netPresent  = 1 << 1
)

func netKey(t rdf.Triple) rdf.Triple {
	for _, x := range []*rdf.Term{&t.S, &t.P, &t.O} {
		if x.Kind == rdf.KindLiteral && x.Datatype == rdf.XSDString {
			x.Datatype = ""
		}
	}
	return t
}

// add folds an applied entry's changes (default graph only: a cluster
// refuses the rest) into nc.
func (nc *netChanges) add(changes []graphstore.GraphChange) {
	if nc.state == nil {
		nc.state = map[rdf.Triple]uint8{}
	}
	for _, c := range changes {
		if c.Clear || c.Drop {
			nc.cleared = true
			for k, st := range nc.state {
				if st&netInserted == 0 {
					delete(nc.state, k) // a snapshot triple: the clear deletes it
				} else {
					nc.state[k] = st &^ netPresent
				}
			}
		}
		for _, t := range c.Delete {
			k := netKey(t)
			nc.state[k] &^= netPresent
		}
		for _, t := range c.Insert {
			k := netKey(t)
			st := nc.state[k]
			if st&netInserted == 0 {
				nc.ins = append(nc.ins, t)
			}
			nc.state[k] = st | netInserted | netPresent
		}
	}
}

// changes returns nc as two changes: every insert in order, then the
// triples the last change deleted; after a clear, three: every insert in
// order, a CLEAR, and the inserted triples present now.
func (nc *netChanges) changes() []graphstore.GraphChange {
	if nc.cleared {
		var present []rdf.Triple
		for _, t := range nc.ins {
			if nc.state[netKey(t)]&netPresent != 0 {
				present = append(present, t)
			}
		}
		return []graphstore.GraphChange{{Insert: nc.ins}, {Clear: true}, {Insert: present}}
	}
	var del []rdf.Triple
	for k, st := range nc.state {
		if st&netPresent == 0 {
			del = append(del, k)
		}
	}
	return []graphstore.GraphChange{{Insert: nc.ins}, {Delete: del}}
}

func encodeSnapshot(index, version, requests uint64, nc *netChanges) ([]byte, error) {
	b := make([]byte, snapHeader, 64+32*len(nc.ins))
	copy(b, snapMagic)
	b[4] = snapFormat
	binary.LittleEndian.PutUint64(b[5:], index)
	binary.LittleEndian.PutUint64(b[13:], version)
	binary.LittleEndian.PutUint64(b[21:], requests)
	b, err := wal.AppendChanges(b, nc.changes())
	if err != nil {
		return nil, err
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// decodeSnapshot checks a snapshot file's bytes and returns its index,
// version, count of requests applied (0 in format 1, which had none) and
// net changes.
func decodeSnapshot(b []byte) (sh snapHead, nc netChanges, err error) {
	if len(b) < snapHeader1+4 || string(b[:4]) != snapMagic {
		return sh, nc, errors.New("not a snapshot of the replicated log")
	}
	head := snapHeader
	switch b[4] {
	case 1:
		head = snapHeader1
	case snapFormat:
		if len(b) < snapHeader+4 {
			return sh, nc, errors.New("a torn snapshot header")
		}
	default:
		return sh, nc, fmt.Errorf("snapshot format %d, this build reads 1 and %d", b[4], snapFormat)
	}
	body := b[:len(b)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(b[len(b)-4:]); got != want {
		return sh, nc, fmt.Errorf("snapshot checksum %08x, want %08x", got, want)
	}
	sh.index, sh.version = binary.LittleEndian.Uint64(b[5:]), binary.LittleEndian.Uint64(b[13:])
	if head == snapHeader {
		sh.requests = binary.LittleEndian.Uint64(b[21:])
	}
	chs, err := wal.DecodeChanges(body[head:])
	if err != nil {
		return sh, nc, fmt.Errorf("snapshot: %w", err)
	}
	switch {
	case len(chs) == 2 && !chs[1].Clear && len(chs[1].Insert) == 0:
		nc.add(chs[:1])
		for _, t := range chs[1].Delete {
			nc.state[netKey(t)] &^= netPresent
		}
	case len(chs) == 3 && chs[1].Clear && len(chs[1].Insert)+len(chs[1].Delete)+len(chs[2].Delete) == 0:
		nc.add(chs) // the inserts, the clear, the inserts present after it
	default:
		return sh, nc, fmt.Errorf("snapshot holds %d changes, want 2, or 3 with a clear", len(chs))
	}
	return sh, nc, nil
}

// snapHead is a snapshot's header.
type snapHead struct{ index, version, requests uint64 }

func snapshotName(index uint64) string { return fmt.Sprintf("snapshot-%020d", index) }

// writeFileSynced writes b to dir/name atomically: a temporary file,
// synced, renamed, the directory synced.
func writeFileSynced(dir, name string, b []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// prune removes the snapshot files older than keep.
func (sn *snapshots) prune(keep uint64) {
	ents, _ := os.ReadDir(sn.dir)
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "snapshot-") {
			continue
		}
		idx, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, "snapshot-"), ".tmp"), 10, 64)
		if err == nil && (idx < keep || strings.HasSuffix(name, ".tmp")) {
			os.Remove(filepath.Join(sn.dir, name))
		}
	}
}

func encodeDesc(holder rdmakv.NodeID, index uint64, b []byte) []byte {
	d := make([]byte, snapDescLen)
	d[0] = snapDescFormat
	binary.LittleEndian.PutUint32(d[1:], uint32(holder))
	binary.LittleEndian.PutUint64(d[5:], index)
	binary.LittleEndian.PutUint64(d[13:], uint64(len(b)))
	binary.LittleEndian.PutUint32(d[21:], crc32.Checksum(b, castagnoli))
	return d
}

type snapDesc struct {
	holder        rdmakv.NodeID
	index, length uint64
	crc           uint32
}

func decodeDesc(d []byte) (snapDesc, error) {
	if len(d) != snapDescLen || d[0] != snapDescFormat {
		return snapDesc{}, fmt.Errorf("bad snapshot descriptor (%d bytes)", len(d))
	}
	return snapDesc{holder: rdmakv.NodeID(binary.LittleEndian.Uint32(d[1:])), index: binary.LittleEndian.Uint64(d[5:]),
		length: binary.LittleEndian.Uint64(d[13:]), crc: binary.LittleEndian.Uint32(d[21:])}, nil
}

// takeSnapshot (raftlog's Snapshot, on the apply goroutine) writes the
// net effect of the log up to index and serves it to the peers.
func (n *Node) takeSnapshot(index uint64) ([]byte, error) {
	sn := n.snap
	if logf := n.cfg.Fabric.Logf; logf != nil {
		logf("node %d: writing a snapshot of the replicated log at entry %d", n.cfg.Node, index)
	}
	b, err := encodeSnapshot(index, n.vs.current(), n.requests.Load(), &sn.net)
	if err != nil {
		return nil, err
	}
	if err := writeFileSynced(sn.dir, snapshotName(index), b); err != nil {
		return nil, fmt.Errorf("cannot write the snapshot: %w", err)
	}
	if err := n.serveSnapshot(b); err != nil {
		return nil, err
	}
	sn.taken.Add(1)
	return encodeDesc(rdmakv.NodeID(n.cfg.Node), index, b), nil
}

// serveSnapshot makes b the snapshot peers read from this node.
func (n *Node) serveSnapshot(b []byte) error {
	sn := n.snap
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if err := n.store.Fabric().Register(rdmakv.NodeID(n.cfg.Node), sn.region, rdmakv.NewRegion(b)); err != nil {
		return fmt.Errorf("cannot serve the snapshot: %w", err)
	}
	sn.buf = b
	// The raft log's newest snapshot record may still name the previous
	// file (a crash before the new record): keep it.
	if idx := binary.LittleEndian.Uint64(b[5:]); idx > sn.last {
		sn.prune(sn.last)
		sn.last = idx
	}
	return nil
}

// fetchSnapshot (raftlog's Fetch) reads the snapshot desc names from its
// holder in chunks, checks it and keeps it as this node's file for its
// index; it fails on a torn, damaged or changed transfer.
func (n *Node) fetchSnapshot(ctx context.Context, from, index uint64, desc []byte) error {
	sn := n.snap
	d, err := decodeDesc(desc)
	if err != nil {
		return err
	}
	if d.index != index || int(d.holder) >= len(n.cfg.Peers) || d.holder == rdmakv.NodeID(n.cfg.Node) {
		return fmt.Errorf("snapshot descriptor of entry %d (holder %d) for entry %d", d.index, d.holder, index)
	}
	if d.length > 1<<40 {
		return fmt.Errorf("snapshot of %d bytes", d.length)
	}
	if b, err := os.ReadFile(filepath.Join(sn.dir, snapshotName(index))); err == nil && uint64(len(b)) == d.length && crc32.Checksum(b, castagnoli) == d.crc {
		return nil // fetched before (the message came again)
	}
	b := make([]byte, d.length)
	for off := uint64(0); off < d.length; off += snapChunk {
		chunk := b[off:min(off+snapChunk, d.length)]
		if err := n.store.Fabric().Read(ctx, rdmakv.NodeID(n.cfg.Node), rdmakv.ReadRequest{Node: d.holder, Region: sn.region, Offset: off, Dst: chunk}); err != nil {
			sn.rejected.Add(1)
			return fmt.Errorf("cannot read the snapshot from node %d: %w", d.holder, err)
		}
		if h := snapshotFetchHook; h != nil {
			h(chunk)
		}
	}
	if got := crc32.Checksum(b, castagnoli); got != d.crc {
		sn.rejected.Add(1)
		return fmt.Errorf("snapshot of entry %d from node %d: checksum %08x, want %08x (a torn or changed transfer)", index, d.holder, got, d.crc)
	}
	if sh, _, err := decodeSnapshot(b); err != nil || sh.index != index {
		sn.rejected.Add(1)
		return fmt.Errorf("snapshot of entry %d from node %d: %v (entry %d)", index, d.holder, err, sh.index)
	}
	if err := writeFileSynced(sn.dir, snapshotName(index), b); err != nil {
		return fmt.Errorf("cannot keep the snapshot: %w", err)
	}
	sn.fetched.Add(1)
	sn.lastFetched.Store(index)
	return nil
}

// installSnapshot (raftlog's Install) makes this node's state the
// snapshot's: one ApplyHostedAt of its net changes onto the newest
// applied dataset jumps to the snapshot's version.
func (n *Node) installSnapshot(index uint64, desc []byte) error {
	sn := n.snap
	b, err := os.ReadFile(filepath.Join(sn.dir, snapshotName(index)))
	if err != nil {
		return fmt.Errorf("the snapshot of entry %d is not here: %w", index, err)
	}
	if d, err := decodeDesc(desc); err != nil || uint64(len(b)) != d.length || crc32.Checksum(b, castagnoli) != d.crc {
		return fmt.Errorf("the snapshot file of entry %d does not match its descriptor", index)
	}
	sh, nc, err := decodeSnapshot(b)
	if err != nil {
		return err
	}
	version := sh.version
	if sh.index != index {
		return fmt.Errorf("the snapshot file of entry %d holds entry %d", index, sh.index)
	}
	if logf := n.cfg.Fabric.Logf; logf != nil {
		from := "its own, from its log"
		if sn.lastFetched.Load() == index {
			from = "fetched from a peer"
		}
		logf("node %d: installing the snapshot of the replicated log at entry %d (version %d, %d bytes, %s)", n.cfg.Node, index, version, len(b), from)
	}
	n.tipMu.Lock()
	defer n.tipMu.Unlock()
	tip := n.tip
	if tip == nil {
		return errors.New("the node is closing")
	}
	if version > tip.Version() {
		nd, err := tip.ApplyHostedAt(context.Background(), version, nc.changes()...)
		if err != nil {
			return fmt.Errorf("cannot install the snapshot of entry %d: %w", index, err)
		}
		n.tip = nd
		grew := nd.Dict().Len() != tip.Dict().Len()
		roles := nd.Dict().RoleChanges() != tip.Dict().RoleChanges()
		if tip != n.ds0 {
			tip.Close()
		}
		n.shards.setDict(nd.Dict())
		if roles {
			n.shards.addClasses(nd.Dict())
		}
		if grew || roles {
			n.termsAdded()
		}
		n.vs.setFloor(version)
		n.vs.set(version)
		n.requests.Store(sh.requests)
	}
	sn.net = nc
	if err := n.serveSnapshot(b); err != nil {
		return err
	}
	sn.installed.Add(1)
	return nil
}

// SnapshotCounts says how many snapshots this node took, fetched,
// refused (a failed or damaged transfer) and installed.
type SnapshotCounts struct{ Taken, Fetched, Rejected, Installed uint64 }

// Snapshots returns the node's snapshot counters.
func (n *Node) Snapshots() SnapshotCounts {
	sn := n.snap
	return SnapshotCounts{sn.taken.Load(), sn.fetched.Load(), sn.rejected.Load(), sn.installed.Load()}
}
