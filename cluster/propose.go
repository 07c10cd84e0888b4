package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/wal"
)

// Batched proposals (DESIGN.md §15). A write that reached this node is
// one request of an entry, not an entry of its own: the proposer gathers
// the requests that wait while earlier entries are in flight into one
// entry of the replicated log, so every node pays an entry's costs — the
// log record and its sync, the Raft messages, one ApplyHosted and the
// version it makes — once for all of them. At most maxInflight entries of
// this node are in flight at once (proposed, not yet applied here);
// while they are, the next entry fills. Eight, not four: a request that
// waits for a slot waits out a whole commit (two log syncs and four
// hops), and the entry's costs it would share are a small part of a
// request's (48 writers over 3 nodes: 1.59 requests an entry with 8, 2.7
// with 4, yet 8 was the faster in every pairing, at 16 writers too —
// docs/PERFORMANCE.md "Session 10"). Each request stays atomic and is
// answered on its own: at apply, a request that is refused or whose
// WHERE read an older version is left out of the entry (on every node
// alike) and only it is told so.
//
// An entry of format 2: the format byte, the count of requests
// (uvarint), then per request its flags byte, the version its changes
// were computed on (u64), the length of its changes (uvarint) and the
// changes (wal.AppendChanges). Format 1 (one request: flags, base,
// changes) is still applied, for logs written before.
const (
	entryBatched   = 2
	maxInflight    = 8
	maxBatchBytes  = 1 << 20
	maxBatchedReqs = 1024
)

// request is one write waiting to be proposed.
type request struct {
	reads bool
	base  uint64
	data  []byte // wal.AppendChanges of its changes
	done  chan outcome
}

// proposer gathers requests into entries (one per node).
type proposer struct {
	n       *Node
	mu      sync.Mutex
	queue   []*request
	wake    chan struct{} // a request was queued
	slots   chan struct{} // one token per entry in flight
	stop    chan struct{}
	once    sync.Once
	stopped sync.WaitGroup
}

func newProposer(n *Node) *proposer {
	p := &proposer{n: n, wake: make(chan struct{}, 1), slots: make(chan struct{}, maxInflight), stop: make(chan struct{})}
	p.stopped.Add(1)
	go p.run()
	return p
}

// close stops gathering (once; later calls do nothing); entries in
// flight finish on their own (their Propose fails once the Raft node is
// closed).
func (p *proposer) close() {
	p.once.Do(func() { close(p.stop) })
	p.stopped.Wait()
	p.mu.Lock()
	q := p.queue
	p.queue = nil
	p.mu.Unlock()
	for _, r := range q {
		r.done <- outcome{proposeErr: errors.New("the node is closing")}
	}
}

// submit queues a request and waits for its outcome (or ctx).
func (p *proposer) submit(ctx context.Context, r *request) (outcome, error) {
	r.done = make(chan outcome, 1)
	p.mu.Lock()
	p.queue = append(p.queue, r)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	select {
	case out := <-r.done:
		return out, nil
	case <-ctx.Done():
		return outcome{}, ctx.Err()
	}
}

func (p *proposer) run() {
	defer p.stopped.Done()
	for {
		select {
		case <-p.wake:
		case <-p.stop:
			return
		}
		for {
			// A free slot first: while every slot is taken, the queue
			// fills and the next entry carries all of it.
			select {
			case p.slots <- struct{}{}:
			case <-p.stop:
				return
			}
			batch := p.take()
			if len(batch) == 0 {
				<-p.slots
				break
			}
			go p.propose(batch)
		}
	}
}

// take removes the next entry's requests from the queue: up to
// maxBatchBytes (at least one request) and maxBatchedReqs.
func (p *proposer) take() []*request {
	p.mu.Lock()
	defer p.mu.Unlock()
	size, k := 0, 0
	for k < len(p.queue) && k < maxBatchedReqs {
		if k > 0 && size+len(p.queue[k].data) > maxBatchBytes {
			break
		}
		size += len(p.queue[k].data)
		k++
	}
	batch := slices.Clone(p.queue[:k])
	p.queue = slices.Delete(p.queue, 0, k)
	return batch
}

// propose proposes one entry of batch and hands each request its
// outcome.
func (p *proposer) propose(batch []*request) {
	defer func() { <-p.slots }()
	// A request whose changes came from a WHERE applies only if no
	// earlier request of the entry changed anything: put them first.
	slices.SortStableFunc(batch, func(a, b *request) int {
		switch {
		case a.reads == b.reads:
			return 0
		case a.reads:
			return -1
		}
		return 1
	})
	entry := encodeBatch(batch)

	timeout := p.n.cfg.WriteTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, res, err := p.n.raft.Propose(ctx, entry)
	if err != nil {
		for _, r := range batch {
			r.done <- outcome{proposeErr: err, timeout: timeout}
		}
		return
	}
	outs, _ := res.([]outcome)
	for i, r := range batch {
		if i < len(outs) {
			r.done <- outs[i]
		} else {
			r.done <- outcome{err: fmt.Errorf("%w: the entry's apply gave %d outcomes for %d requests", errRefused, len(outs), len(batch))}
		}
	}
}

func encodeBatch(batch []*request) []byte {
	size := 1 + binary.MaxVarintLen64
	for _, r := range batch {
		size += 1 + 8 + binary.MaxVarintLen64 + len(r.data)
	}
	b := make([]byte, 0, size)
	b = append(b, entryBatched)
	b = binary.AppendUvarint(b, uint64(len(batch)))
	for _, r := range batch {
		var flags byte
		if r.reads {
			flags = entryReads
		}
		b = append(b, flags)
		b = binary.LittleEndian.AppendUint64(b, r.base)
		b = binary.AppendUvarint(b, uint64(len(r.data)))
		b = append(b, r.data...)
	}
	return b
}

// batchedRequest is one request of an entry, decoded.
type batchedRequest struct {
	reads   bool
	base    uint64
	changes []graphstore.GraphChange
	err     error // it cannot be decoded: refused
}

// decodeEntry decodes an entry of either format; an entry that is not
// one at all is an error (every request of it refused).
func decodeEntry(data []byte) ([]batchedRequest, error) {
	if len(data) == 0 {
		return nil, errors.New("an empty entry")
	}
	switch data[0] {
	case entryFormat:
		if len(data) < entryHeader {
			return nil, fmt.Errorf("an entry of %d bytes", len(data))
		}
		br := batchedRequest{reads: data[1]&entryReads != 0, base: binary.LittleEndian.Uint64(data[2:])}
		br.changes, br.err = wal.DecodeChanges(data[entryHeader:])
		return []batchedRequest{br}, nil
	case entryBatched:
	default:
		return nil, fmt.Errorf("format %d", data[0])
	}
	b := data[1:]
	count, k := binary.Uvarint(b)
	if k <= 0 || count > uint64(len(b)) {
		return nil, errors.New("a torn request count")
	}
	b = b[k:]
	reqs := make([]batchedRequest, 0, count)
	for i := uint64(0); i < count; i++ {
		if len(b) < 9 {
			return nil, fmt.Errorf("request %d of %d is torn", i, count)
		}
		br := batchedRequest{reads: b[0]&entryReads != 0, base: binary.LittleEndian.Uint64(b[1:])}
		l, k := binary.Uvarint(b[9:])
		if k <= 0 || l > uint64(len(b)-9-k) {
			return nil, fmt.Errorf("request %d of %d is torn", i, count)
		}
		body := b[9+k : 9+k+int(l)]
		b = b[9+k+int(l):]
		br.changes, br.err = wal.DecodeChanges(body)
		reqs = append(reqs, br)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes past the entry's %d requests", len(b), count)
	}
	return reqs, nil
}
