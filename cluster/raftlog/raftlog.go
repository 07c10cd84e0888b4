package raftlog

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/wukongd/wukongd/wal"
)

// Errors of a Node.
var (
	// ErrNoLeader: the node knows no leader (it is cut off from a
	// majority, or an election is running); the proposal was not made.
	ErrNoLeader = errors.New("no Raft leader known to this node")
	// ErrLost: another entry was committed where the proposal was
	// appended (the leader changed before it committed); it will never
	// be applied.
	ErrLost = errors.New("the proposal was overtaken by a leader change and not committed")
	// ErrStopped: the node is closed or its log failed.
	ErrStopped = errors.New("the Raft node is stopped")
	// ErrSnapshotted: the proposal's entry reached this node inside a
	// snapshot; whether it was applied is unknown here.
	ErrSnapshotted = errors.New("the proposal's entry was installed with a snapshot")
)

// Config configures a Node.
type Config struct {
	// Dir is the directory of the log (created if missing; locked).
	Dir string
	// ID is this node's Raft id, 1..Peers.
	ID uint64
	// Peers is the number of nodes; their ids are 1..Peers.
	Peers int
	// Send delivers an encoded raftpb.Message to node to. It must not
	// block for long (queue, or drop: Raft retries).
	Send func(to uint64, msg []byte)
	// Apply applies the data of a committed normal entry (without the
	// proposal id), in log order, once per entry and start. Its result
	// goes to the proposer's Propose on this node. An error stops the
	// node (the state machine cannot go on past an entry it cannot
	// apply).
	Apply func(index uint64, data []byte) (any, error)
	// Tick is the Raft tick (default 50 ms); elections time out after 10
	// ticks without a leader's heartbeat, heartbeats go every tick.
	Tick time.Duration
	// Logf, if set, receives the library's warnings and errors.
	Logf func(format string, args ...any)

	// Snapshots (all optional; without Snapshot the log grows forever).
	// SnapshotEntries: once this many entries were applied since the
	// last snapshot, the node calls Snapshot at its applied index and
	// truncates its log before it (0: never). KeepEntries of the entries
	// before the snapshot stay in memory for a follower a little behind
	// (default 1,024); one further behind gets the snapshot.
	SnapshotEntries uint64
	KeepEntries     uint64
	// Snapshot makes the state machine's snapshot at index (durably) and
	// returns its descriptor: what a follower's Fetch gets to find it.
	Snapshot func(index uint64) ([]byte, error)
	// Fetch, on a follower that received a snapshot's descriptor from
	// node from, gets the snapshot and keeps it durably (verified) before
	// Raft sees the message; an error drops the message (the leader sends
	// it again).
	Fetch func(ctx context.Context, from, index uint64, desc []byte) error
	// Install makes the state machine the snapshot at index (fetched, or
	// the node's own at Open): the entries up to index are never applied
	// here one by one.
	Install func(index uint64, desc []byte) error
}

// Node is one member of the Raft group.
type Node struct {
	cfg     Config
	log     *wal.Log
	storage *raft.MemoryStorage
	node    raft.Node
	nextLSN uint64

	idPrefix      uint64
	initialCommit uint64
	idSeq         atomic.Uint64
	confState     *pb.ConfState // the membership (Ready loop)
	snapIndex     uint64        // the newest snapshot's index (Ready loop)
	fetching      atomic.Uint64 // index of a snapshot being fetched (0: none)

	mu      sync.Mutex
	waiters map[[16]byte]*waiter
	byIndex map[uint64]*waiter // waiters whose entry is in this node's log

	applied  atomic.Uint64 // last applied index
	leader   atomic.Uint64
	term     atomic.Uint64
	appliedC chan struct{} // closed and replaced at each apply batch

	// The Ready loop hands committed entries (and snapshots to install)
	// to the apply goroutine, in order, and goes on persisting and
	// sending the next batch while they are applied (pipelining). logMu
	// orders the records of the log and the storage's changes between
	// the Ready loop and a snapshot taken by the apply goroutine.
	appendQ    chan *pb.Message
	applyQ     chan applyItem
	appendDone chan struct{}
	applyDone  chan struct{}
	logMu      sync.Mutex
	stopOnce   sync.Once

	stop     chan struct{}
	done     chan struct{}
	failOnce sync.Once
	failErr  atomic.Pointer[error]
}

type waiter struct {
	id     [16]byte
	index  uint64 // 0: not seen in this node's log yet
	term   uint64
	result chan result
}

type result struct {
	index uint64
	val   any
	err   error
}

// Open opens (or creates) the log in cfg.Dir, replays it, and starts the
// Raft node and its Ready loop. A fresh log starts the group with the
// members 1..Peers (every node of a new cluster does the same).
func Open(cfg Config) (*Node, error) {
	if cfg.ID < 1 || cfg.ID > uint64(cfg.Peers) {
		return nil, fmt.Errorf("raft id %d is not in 1..%d", cfg.ID, cfg.Peers)
	}
	if cfg.Send == nil || cfg.Apply == nil {
		return nil, errors.New("raftlog: Config.Send and Config.Apply are required")
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 50 * time.Millisecond
	}
	l, err := wal.Open(cfg.Dir, wal.Options{})
	if err != nil {
		return nil, fmt.Errorf("cannot open the raft log: %w", err)
	}
	n := &Node{cfg: cfg, log: l, storage: raft.NewMemoryStorage(), waiters: map[[16]byte]*waiter{},
		byIndex: map[uint64]*waiter{}, appliedC: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		l.Close()
		return nil, err
	}
	n.idPrefix = binary.LittleEndian.Uint64(rnd[:])
	// The log is retired a segment at a time, so records older than its
	// newest snapshot record may remain before it, some with entries
	// past an older snapshot whose record is gone: only their hard state
	// is replayed (the snapshot record holds the snapshot and every entry
	// after it).
	var lastSnap uint64
	if err := l.Replay(0, func(lsn uint64, payload []byte) error {
		rec, err := decodeRecord(payload)
		if err == nil && len(rec.snap) > 0 {
			lastSnap = lsn
		}
		return nil
	}); err != nil {
		l.Close()
		return nil, fmt.Errorf("cannot replay the raft log %s: %w", cfg.Dir, err)
	}
	records := 0
	if err := l.Replay(0, func(lsn uint64, payload []byte) error {
		records++
		return n.restore(payload, lsn < lastSnap)
	}); err != nil {
		l.Close()
		return nil, fmt.Errorf("cannot replay the raft log %s: %w", cfg.Dir, err)
	}
	if err := n.commitSnapshot(); err != nil {
		l.Close()
		return nil, fmt.Errorf("cannot replay the raft log %s: %w", cfg.Dir, err)
	}
	n.nextLSN = l.NextLSN()
	if hs, cs, err := n.storage.InitialState(); err == nil {
		n.initialCommit = hs.GetCommit()
		n.confState = proto.Clone(cs).(*pb.ConfState)
	}
	var applied uint64
	if snap, err := n.storage.Snapshot(); err == nil && !raft.IsEmptySnap(snap) {
		if cfg.Install == nil {
			l.Close()
			return nil, errors.New("raftlog: the log starts with a snapshot and Config.Install is not set")
		}
		md := snap.GetMetadata()
		if err := cfg.Install(md.GetIndex(), snap.GetData()); err != nil {
			l.Close()
			return nil, fmt.Errorf("cannot install the snapshot at entry %d: %w", md.GetIndex(), err)
		}
		applied, n.snapIndex = md.GetIndex(), md.GetIndex()
		n.applied.Store(applied)
	}
	rc := &raft.Config{ID: cfg.ID, Applied: applied, ElectionTick: 10, HeartbeatTick: 1, Storage: n.storage,
		MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256, MaxUncommittedEntriesSize: 1 << 30, AsyncStorageWrites: true,
		CheckQuorum: true, PreVote: true, Logger: &logger{logf: cfg.Logf}}
	if records == 0 {
		peers := make([]raft.Peer, cfg.Peers)
		for i := range peers {
			peers[i] = raft.Peer{ID: uint64(i + 1)}
		}
		n.node = raft.StartNode(rc, peers)
	} else {
		n.node = raft.RestartNode(rc)
	}
	go n.run()
	return n, nil
}

// Record payload: kind byte, then for recState: u32 length + hard state
// (0: none), u32 count, each entry u32 length + bytes, u32 length +
// snapshot (0: none).
const recState = 1

func appendBytes(dst, b []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

func encodeState(hs *pb.HardState, ents []*pb.Entry, snap *pb.Snapshot) ([]byte, error) {
	buf := []byte{recState}
	var b []byte
	var err error
	if !raft.IsEmptyHardState(hs) {
		if b, err = proto.Marshal(hs); err != nil {
			return nil, err
		}
	}
	buf = appendBytes(buf, b)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(ents)))
	for _, e := range ents {
		if b, err = proto.Marshal(e); err != nil {
			return nil, err
		}
		buf = appendBytes(buf, b)
	}
	b = nil
	if !raft.IsEmptySnap(snap) {
		if b, err = proto.Marshal(snap); err != nil {
			return nil, err
		}
	}
	return appendBytes(buf, b), nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) u32() uint32 {
	if r.err != nil || len(r.b) < 4 {
		r.err = errors.New("record too short")
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) bytes() []byte {
	n := r.u32()
	if r.err != nil || uint64(n) > uint64(len(r.b)) {
		r.err = errors.New("record too short")
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// record is a decoded log record: its hard state, entries and snapshot
// (each marshalled; empty: none).
type record struct {
	hs, snap []byte
	ents     [][]byte
}

func decodeRecord(payload []byte) (record, error) {
	var rec record
	if len(payload) == 0 || payload[0] != recState {
		return rec, errors.New("unknown record kind")
	}
	r := &reader{b: payload[1:]}
	rec.hs = r.bytes()
	count := r.u32()
	if r.err == nil && uint64(count) > uint64(len(r.b)) {
		return rec, errors.New("entry count past the record")
	}
	rec.ents = make([][]byte, 0, count)
	for i := uint32(0); i < count && r.err == nil; i++ {
		rec.ents = append(rec.ents, r.bytes())
	}
	rec.snap = r.bytes()
	return rec, r.err
}

// restore replays one record into the memory storage (stateOnly: its
// hard state only; a newer record holds a snapshot past its entries).
func (n *Node) restore(payload []byte, stateOnly bool) error {
	rec, err := decodeRecord(payload)
	if err != nil {
		return err
	}
	var hs *pb.HardState
	if len(rec.hs) > 0 {
		hs = &pb.HardState{}
		if err := proto.Unmarshal(rec.hs, hs); err != nil {
			return fmt.Errorf("hard state: %w", err)
		}
	}
	if !stateOnly {
		ents := make([]*pb.Entry, 0, len(rec.ents))
		for _, b := range rec.ents {
			e := &pb.Entry{}
			if err := proto.Unmarshal(b, e); err != nil {
				return fmt.Errorf("entry: %w", err)
			}
			ents = append(ents, e)
		}
		if len(rec.snap) > 0 {
			snap := &pb.Snapshot{}
			if err := proto.Unmarshal(rec.snap, snap); err != nil {
				return fmt.Errorf("snapshot: %w", err)
			}
			if err := n.storage.ApplySnapshot(snap); err != nil && !errors.Is(err, raft.ErrSnapOutOfDate) {
				return err
			}
		}
		if len(ents) > 0 {
			if err := n.storage.Append(ents); err != nil {
				return err
			}
		}
	}
	if hs != nil {
		if err := n.storage.SetHardState(hs); err != nil {
			return err
		}
	}
	return nil
}

// commitSnapshot makes the replayed hard state's commit at least the
// snapshot's index (a snapshot is of committed entries; the hard state
// last written may be older than the snapshot's record).
func (n *Node) commitSnapshot() error {
	snap, err := n.storage.Snapshot()
	if err != nil || raft.IsEmptySnap(snap) {
		return err
	}
	hs, _, err := n.storage.InitialState()
	if err != nil {
		return err
	}
	if idx := snap.GetMetadata().GetIndex(); hs.GetCommit() < idx {
		hs = proto.Clone(hs).(*pb.HardState)
		hs.Commit = proto.Uint64(idx)
		return n.storage.SetHardState(hs)
	}
	return nil
}

// applyItem is work for the apply goroutine: a snapshot to install, or a
// LocalApplyThread message (committed entries, and the responses to
// step once they are applied).
type applyItem struct {
	snap *pb.Snapshot
	msg  *pb.Message
}

// run is the Ready loop. Raft runs with asynchronous storage writes
// (etcd's raft.Config.AsyncStorageWrites): the loop never waits for the
// disk; it hands the log appends to the append goroutine and the
// committed entries to the apply goroutine (each in order) and sends the
// rest at once. What must wait for the disk — a follower's
// acknowledgement, a vote, the leader's own count towards a commit — Raft
// puts among the responses of an append, which the append goroutine
// delivers only once its record is synced. So the leader's write, the
// followers' writes and the applies of earlier entries overlap, and one
// fdatasync covers every append waiting for it.
func (n *Node) run() {
	n.appendQ = make(chan *pb.Message, 256)
	n.applyQ = make(chan applyItem, 256)
	n.appendDone = make(chan struct{})
	n.applyDone = make(chan struct{})
	go n.appendLoop()
	go n.applyLoop()
	defer func() {
		close(n.appendQ)
		<-n.appendDone
		close(n.applyQ)
		<-n.applyDone
		close(n.done)
	}()
	t := time.NewTicker(n.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			n.node.Tick()
		case rd := <-n.node.Ready():
			if rd.SoftState != nil {
				n.leader.Store(rd.SoftState.Lead)
			}
			if !raft.IsEmptyHardState(rd.HardState) {
				n.term.Store(rd.HardState.GetTerm())
			}
			for _, m := range rd.Messages {
				var err error
				switch m.GetTo() {
				case raft.LocalAppendThread:
					select {
					case n.appendQ <- m:
					case <-n.stop:
						err = errors.New("stopped")
					}
				case raft.LocalApplyThread:
					err = n.queueApply(applyItem{msg: m})
				default:
					err = n.send([]*pb.Message{m})
				}
				if err != nil {
					n.fail(err)
					n.node.Stop()
					return
				}
			}
		case <-n.stop:
			n.node.Stop()
			return
		}
	}
}

// appendLoop writes the appends Raft hands it, in order: every append
// queued is written, one sync covers them, the storage follows, and then
// their responses are delivered (to this node's Raft or to peers).
func (n *Node) appendLoop() {
	defer close(n.appendDone)
	failed := false
	for m := range n.appendQ {
		if failed {
			continue
		}
		batch := []*pb.Message{m}
	more:
		for len(batch) < 256 {
			select {
			case m2, ok := <-n.appendQ:
				if !ok {
					break more
				}
				batch = append(batch, m2)
			default:
				break more
			}
		}
		if err := n.persist(batch); err != nil {
			failed = true
			n.fail(err)
			n.stopOnce.Do(func() { close(n.stop) })
			continue
		}
		for _, m := range batch {
			for _, r := range m.GetResponses() {
				if r.GetTo() == n.cfg.ID {
					if err := n.node.Step(context.Background(), r); err != nil && !errors.Is(err, raft.ErrStopped) && n.cfg.Logf != nil {
						n.cfg.Logf("raft node %d: %v", n.cfg.ID, err)
					}
				} else if err := n.send([]*pb.Message{r}); err != nil {
					failed = true
					n.fail(err)
					n.stopOnce.Do(func() { close(n.stop) })
				}
			}
		}
	}
}

// persist writes the records of a batch of appends, waits for their sync
// and updates the memory storage (an install of a snapshot is queued for
// the apply goroutine, in its place).
func (n *Node) persist(batch []*pb.Message) error {
	n.logMu.Lock()
	defer n.logMu.Unlock()
	var payloads [][]byte
	for _, m := range batch {
		hs := hardStateOf(m)
		snap := m.GetSnapshot()
		if raft.IsEmptyHardState(hs) && len(m.GetEntries()) == 0 && raft.IsEmptySnap(snap) {
			continue
		}
		payload, err := encodeState(hs, m.GetEntries(), snap)
		if err != nil {
			return err
		}
		payloads = append(payloads, payload)
	}
	if len(payloads) > 0 {
		// Written and synced on this goroutine (the log's only writer
		// but for snapshot records, which logMu orders with these).
		lsn := n.nextLSN
		n.nextLSN += uint64(len(payloads))
		if err := n.log.AppendNow(lsn, payloads); err != nil {
			return fmt.Errorf("cannot write the raft log: %w", err)
		}
	}
	for _, m := range batch {
		if snap := m.GetSnapshot(); !raft.IsEmptySnap(snap) {
			if err := n.storage.ApplySnapshot(snap); err != nil {
				return err
			}
			if err := n.queueApply(applyItem{snap: snap}); err != nil {
				return err
			}
		}
		if hs := hardStateOf(m); !raft.IsEmptyHardState(hs) {
			if err := n.storage.SetHardState(hs); err != nil {
				return err
			}
		}
		if ents := m.GetEntries(); len(ents) > 0 {
			if err := n.storage.Append(ents); err != nil {
				return err
			}
			n.noteAppended(ents)
		}
	}
	return nil
}

// hardStateOf returns the hard state an append message carries (empty:
// none; raft sets all three fields or none).
func hardStateOf(m *pb.Message) *pb.HardState {
	if m.Term == nil && m.Vote == nil && m.Commit == nil {
		return &pb.HardState{}
	}
	return &pb.HardState{Term: new(m.GetTerm()), Vote: new(m.GetVote()), Commit: new(m.GetCommit())}
}

// applyLoop applies what it is handed, in order, steps the responses of
// each applied batch, and takes the snapshots; an error stops the node.
func (n *Node) applyLoop() {
	defer close(n.applyDone)
	failed := false
	for it := range n.applyQ {
		if failed {
			continue // drain: the node is stopping
		}
		var err error
		if it.snap != nil {
			err = n.install(it.snap)
		} else {
			err = n.apply(it.msg.GetEntries())
			if err == nil {
				for _, r := range it.msg.GetResponses() {
					if serr := n.node.Step(context.Background(), r); serr != nil && !errors.Is(serr, raft.ErrStopped) && n.cfg.Logf != nil {
						n.cfg.Logf("raft node %d: %v", n.cfg.ID, serr)
					}
				}
			}
		}
		if err == nil && len(n.applyQ) == 0 {
			err = n.maybeSnapshot()
		}
		if err != nil {
			failed = true
			n.fail(err)
			n.stopOnce.Do(func() { close(n.stop) })
		}
	}
}

func (n *Node) queueApply(it applyItem) error {
	select {
	case n.applyQ <- it:
		return nil
	case <-n.stop:
		return errors.New("stopped")
	}
}

func (n *Node) send(msgs []*pb.Message) error {
	for _, m := range msgs {
		b, err := proto.Marshal(m)
		if err != nil {
			return err
		}
		n.cfg.Send(m.GetTo(), b)
		if m.GetType() == pb.MsgSnap {
			// The message is the snapshot's descriptor: the follower
			// fetches the snapshot itself, so as far as the leader goes it
			// is sent; the follower's answer (or the next heartbeat's,
			// which sends the descriptor again if it dropped it) moves
			// the leader on.
			to := m.GetTo()
			go n.node.ReportSnapshot(to, raft.SnapshotFinish)
		}
	}
	return nil
}

// install makes the state machine a snapshot Raft received (persisted
// already): proposals waiting for entries up to it get an unknown
// outcome.
func (n *Node) install(snap *pb.Snapshot) error {
	md := snap.GetMetadata()
	idx := md.GetIndex()
	if n.cfg.Install == nil {
		return errors.New("raftlog: a snapshot arrived and Config.Install is not set")
	}
	if err := n.cfg.Install(idx, snap.GetData()); err != nil {
		return fmt.Errorf("cannot install the snapshot at entry %d: %w", idx, err)
	}
	if cs := md.GetConfState(); cs != nil {
		n.confState = proto.Clone(cs).(*pb.ConfState)
	}
	n.snapIndex = idx
	n.applied.Store(idx)
	var gone []*waiter
	n.mu.Lock()
	for i, w := range n.byIndex {
		if i <= idx {
			delete(n.byIndex, i)
			delete(n.waiters, w.id)
			gone = append(gone, w)
		}
	}
	close(n.appliedC)
	n.appliedC = make(chan struct{})
	n.mu.Unlock()
	for _, w := range gone {
		w.result <- result{err: fmt.Errorf("%w: entry %d came in a snapshot (up to %d), its outcome is unknown here", ErrSnapshotted, w.index, idx)}
	}
	return nil
}

// maybeSnapshot takes a snapshot at the applied index once enough
// entries were applied since the last one, and truncates the log before
// it: one record holds the hard state, the snapshot and the entries after
// it, and the records before are retired.
func (n *Node) maybeSnapshot() error {
	applied := n.applied.Load()
	if n.cfg.Snapshot == nil || n.cfg.SnapshotEntries == 0 || applied < n.snapIndex+n.cfg.SnapshotEntries {
		return nil
	}
	desc, err := n.cfg.Snapshot(applied)
	if err != nil {
		return fmt.Errorf("cannot make a snapshot at entry %d: %w", applied, err)
	}
	n.logMu.Lock()
	defer n.logMu.Unlock()
	snap, err := n.storage.CreateSnapshot(applied, n.confState, desc)
	if err != nil {
		return err
	}
	hs, _, err := n.storage.InitialState()
	if err != nil {
		return err
	}
	last, err := n.storage.LastIndex()
	if err != nil {
		return err
	}
	var after []*pb.Entry
	if last > applied {
		es, err := n.storage.Entries(applied+1, last+1, ^uint64(0))
		if err != nil {
			return err
		}
		after = es
	}
	payload, err := encodeState(hs, after, snap)
	if err != nil {
		return err
	}
	lsn := n.nextLSN
	n.nextLSN++
	if err := n.log.Append(lsn, payload).Wait(); err != nil {
		return fmt.Errorf("cannot write the raft log: %w", err)
	}
	if err := n.log.Retire(lsn - 1); err != nil {
		return fmt.Errorf("cannot retire the raft log before its snapshot: %w", err)
	}
	keep := n.cfg.KeepEntries
	if keep == 0 {
		keep = 1024
	}
	if applied > keep {
		if err := n.storage.Compact(applied - keep); err != nil && !errors.Is(err, raft.ErrCompacted) {
			return err
		}
	}
	n.snapIndex = applied
	return nil
}

// noteAppended records where this node's proposals sit in its log.
func (n *Node) noteAppended(ents []*pb.Entry) {
	var lost []*waiter
	n.mu.Lock()
	defer func() {
		n.mu.Unlock()
		for _, w := range lost {
			w.result <- result{err: fmt.Errorf("%w (entry %d of term %d was replaced)", ErrLost, w.index, w.term)}
		}
	}()
	for _, e := range ents {
		idx := e.GetIndex()
		if w := n.byIndex[idx]; w != nil && w.term != e.GetTerm() {
			// Overwritten by a new leader's entry: an entry has one
			// index, so ours is in no leader's log any more.
			delete(n.byIndex, idx)
			delete(n.waiters, w.id)
			lost = append(lost, w)
		}
		if e.GetType() != pb.EntryNormal || len(e.Data) < 16 {
			continue
		}
		var id [16]byte
		copy(id[:], e.Data)
		if w := n.waiters[id]; w != nil && w.index == 0 {
			w.index, w.term = idx, e.GetTerm()
			n.byIndex[idx] = w
		}
	}
}

func (n *Node) apply(ents []*pb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	for _, e := range ents {
		idx := e.GetIndex()
		switch e.GetType() {
		case pb.EntryConfChange:
			var cc pb.ConfChange
			if err := proto.Unmarshal(e.Data, &cc); err != nil {
				return fmt.Errorf("entry %d: %w", idx, err)
			}
			n.confState = n.node.ApplyConfChange(&cc)
		case pb.EntryConfChangeV2:
			var cc pb.ConfChangeV2
			if err := proto.Unmarshal(e.Data, &cc); err != nil {
				return fmt.Errorf("entry %d: %w", idx, err)
			}
			n.confState = n.node.ApplyConfChange(&cc)
		case pb.EntryNormal:
			if len(e.Data) == 0 {
				break // a new leader's empty entry
			}
			if len(e.Data) < 16 {
				return fmt.Errorf("entry %d: %d bytes, shorter than a proposal id", idx, len(e.Data))
			}
			val, err := n.cfg.Apply(idx, e.Data[16:])
			if err != nil {
				return fmt.Errorf("cannot apply entry %d: %w", idx, err)
			}
			var id [16]byte
			copy(id[:], e.Data)
			n.settle(idx, id, result{index: idx, val: val})
		}
		n.settleLost(idx, e)
		n.applied.Store(idx)
	}
	n.mu.Lock()
	close(n.appliedC)
	n.appliedC = make(chan struct{})
	n.mu.Unlock()
	return nil
}

// settle hands the result to the proposer waiting for id, if any.
func (n *Node) settle(idx uint64, id [16]byte, r result) {
	n.mu.Lock()
	w := n.waiters[id]
	if w != nil {
		delete(n.waiters, id)
		if n.byIndex[w.index] == w {
			delete(n.byIndex, w.index)
		}
	}
	n.mu.Unlock()
	if w != nil {
		w.result <- r
	}
}

// settleLost fails the proposer whose entry sat at idx if another entry
// was committed there.
func (n *Node) settleLost(idx uint64, e *pb.Entry) {
	n.mu.Lock()
	w := n.byIndex[idx]
	if w != nil {
		delete(n.byIndex, idx)
		delete(n.waiters, w.id)
	}
	n.mu.Unlock()
	if w != nil {
		w.result <- result{err: fmt.Errorf("%w (entry %d of term %d)", ErrLost, idx, e.GetTerm())}
	}
}

func (n *Node) fail(err error) {
	n.failOnce.Do(func() {
		n.failErr.Store(&err)
		if n.cfg.Logf != nil {
			n.cfg.Logf("raft node %d stopped: %v", n.cfg.ID, err)
		}
		n.mu.Lock()
		ws := n.waiters
		n.waiters, n.byIndex = map[[16]byte]*waiter{}, map[uint64]*waiter{}
		n.mu.Unlock()
		for _, w := range ws {
			w.result <- result{err: fmt.Errorf("%w: %v", ErrStopped, err)}
		}
	})
}

// Err returns why the node stopped (nil while it runs).
func (n *Node) Err() error {
	if p := n.failErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Propose proposes data and waits until its entry is applied on this
// node; it returns the entry's index and what Config.Apply returned. It
// fails at once with ErrNoLeader when no leader is known, with ErrLost
// when a leader change dropped the entry, and with ctx's error when the
// entry is not applied in time (its outcome is then unknown).
func (n *Node) Propose(ctx context.Context, data []byte) (uint64, any, error) {
	if err := n.Err(); err != nil {
		return 0, nil, fmt.Errorf("%w: %v", ErrStopped, err)
	}
	if n.leader.Load() == raft.None {
		return 0, nil, ErrNoLeader
	}
	w := &waiter{result: make(chan result, 1)}
	binary.LittleEndian.PutUint64(w.id[:], n.idPrefix)
	binary.LittleEndian.PutUint64(w.id[8:], n.idSeq.Add(1))
	buf := make([]byte, 16+len(data))
	copy(buf, w.id[:])
	copy(buf[16:], data)
	n.mu.Lock()
	n.waiters[w.id] = w
	n.mu.Unlock()
	forget := func() {
		n.mu.Lock()
		if n.waiters[w.id] == w {
			delete(n.waiters, w.id)
			if n.byIndex[w.index] == w {
				delete(n.byIndex, w.index)
			}
		}
		n.mu.Unlock()
	}
	if err := n.node.Propose(ctx, buf); err != nil {
		forget()
		if errors.Is(err, raft.ErrProposalDropped) {
			return 0, nil, ErrNoLeader
		}
		if errors.Is(err, raft.ErrStopped) {
			return 0, nil, ErrStopped
		}
		return 0, nil, err
	}
	select {
	case r := <-w.result:
		return r.index, r.val, r.err
	case <-ctx.Done():
		forget()
		return 0, nil, ctx.Err()
	case <-n.done:
		forget()
		return 0, nil, ErrStopped
	}
}

// Step hands an encoded message from a peer to Raft.
func (n *Node) Step(ctx context.Context, msg []byte) error {
	m := &pb.Message{}
	if err := proto.Unmarshal(msg, m); err != nil {
		return fmt.Errorf("bad raft message: %w", err)
	}
	if m.GetTo() != n.cfg.ID {
		return fmt.Errorf("raft message for node %d received by node %d", m.GetTo(), n.cfg.ID)
	}
	if f := m.GetFrom(); f < 1 || f > uint64(n.cfg.Peers) {
		return fmt.Errorf("raft message from unknown node %d", f)
	}
	if m.GetType() == pb.MsgSnap && n.cfg.Fetch != nil {
		n.fetchSnapshot(m)
		return nil
	}
	return n.node.Step(ctx, m)
}

// fetchSnapshot gets the snapshot a MsgSnap describes (Config.Fetch) in
// the background and hands the message to Raft once it is here and
// verified; a failed fetch drops it (the leader sends the descriptor
// again after the next heartbeat). One fetch at a time.
func (n *Node) fetchSnapshot(m *pb.Message) {
	idx := m.GetSnapshot().GetMetadata().GetIndex()
	if idx <= n.applied.Load() || !n.fetching.CompareAndSwap(0, idx) {
		return
	}
	go func() {
		defer n.fetching.Store(0)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		go func() {
			select {
			case <-n.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		if err := n.cfg.Fetch(ctx, m.GetFrom(), idx, m.GetSnapshot().GetData()); err != nil {
			if n.cfg.Logf != nil {
				n.cfg.Logf("raft node %d: snapshot at entry %d from node %d refused: %v", n.cfg.ID, idx, m.GetFrom(), err)
			}
			return
		}
		if err := n.node.Step(ctx, m); err != nil && n.cfg.Logf != nil {
			n.cfg.Logf("raft node %d: snapshot at entry %d: %v", n.cfg.ID, idx, err)
		}
	}()
}

// ReportUnreachable tells Raft that a message to node id could not be
// sent.
func (n *Node) ReportUnreachable(id uint64) { n.node.ReportUnreachable(id) }

// Applied returns the index of the last entry applied on this node.
func (n *Node) Applied() uint64 { return n.applied.Load() }

// InitialCommit returns the commit index the log held when the node
// opened: once Applied reaches it, the node has replayed its own log.
func (n *Node) InitialCommit() uint64 { return n.initialCommit }

// Leader returns the id of the leader this node knows (0: none).
func (n *Node) Leader() uint64 { return n.leader.Load() }

// ID returns this node's id.
func (n *Node) ID() uint64 { return n.cfg.ID }

// Status is what the node knows of the group.
type Status struct {
	ID, Leader, Term, Commit, Applied uint64
	State                             string
}

// Status returns the node's view of the group.
func (n *Node) Status() Status {
	st := n.node.Status()
	return Status{ID: n.cfg.ID, Leader: st.Lead, Term: st.GetTerm(), Commit: st.GetCommit(), Applied: n.applied.Load(),
		State: st.RaftState.String()}
}

// WaitApplied waits until the entry at index is applied here.
func (n *Node) WaitApplied(ctx context.Context, index uint64) error {
	for {
		n.mu.Lock()
		c := n.appliedC
		n.mu.Unlock()
		if n.applied.Load() >= index {
			return nil
		}
		select {
		case <-c:
		case <-ctx.Done():
			return ctx.Err()
		case <-n.done:
			return ErrStopped
		}
	}
}

// Close stops the node and closes its log.
func (n *Node) Close() error {
	n.stopOnce.Do(func() { close(n.stop) })
	<-n.done
	n.fail(errors.New("closed"))
	return n.log.Close()
}

// logger passes the library's warnings and errors to Logf.
type logger struct{ logf func(string, ...any) }

func (l *logger) out(format string, args ...any) {
	if l.logf != nil {
		l.logf("raft: "+format, args...)
	}
}
func (l *logger) Debug(...any)                     {}
func (l *logger) Debugf(string, ...any)            {}
func (l *logger) Info(...any)                      {}
func (l *logger) Infof(string, ...any)             {}
func (l *logger) Warning(v ...any)                 { l.out("%s", fmt.Sprint(v...)) }
func (l *logger) Warningf(format string, v ...any) { l.out(format, v...) }
func (l *logger) Error(v ...any)                   { l.out("%s", fmt.Sprint(v...)) }
func (l *logger) Errorf(format string, v ...any)   { l.out(format, v...) }
func (l *logger) Fatal(v ...any)                   { panic(fmt.Sprint(v...)) }
func (l *logger) Fatalf(format string, v ...any)   { panic(fmt.Sprintf(format, v...)) }
func (l *logger) Panic(v ...any)                   { panic(fmt.Sprint(v...)) }
func (l *logger) Panicf(format string, v ...any)   { panic(fmt.Sprintf(format, v...)) }
