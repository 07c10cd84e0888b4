package rdmakv

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// tcpPeer is this node's link to one peer: the connection it dials (for
// its own requests), kept up by maintain, and the counters.
type tcpPeer struct {
	f    *TCP
	node NodeID
	addr string
	rnd  *rand.Rand // backoff jitter; used by maintain only

	meter                                Meter
	rttNanos                             atomic.Uint64
	connects, dialFails, disconnects     atomic.Uint64
	servedReads, servedBytes, servedMsgs atomic.Uint64

	mu      sync.Mutex
	conn    *clientConn   // nil: not connected
	up      chan struct{} // closed when a connection is up; replaced when it drops
	lastErr error
	kick    chan struct{} // wakes maintain from its backoff
}

// maintain dials the peer, keeps the connection while it lives, and dials
// again with exponential backoff when it breaks, until the fabric closes.
func (p *tcpPeer) maintain() {
	f := p.f
	defer f.wg.Done()
	backoff := f.opts.BackoffMin
	for {
		c, err := p.dial()
		if err != nil {
			if f.isClosed() {
				return
			}
			p.dialFails.Add(1)
			p.mu.Lock()
			logIt := p.lastErr == nil || p.lastErr.Error() != err.Error()
			p.lastErr = err
			p.mu.Unlock()
			if logIt {
				f.logf("fabric: node %d cannot connect to node %d (%s): %v", f.self, p.node, p.addr, err)
			}
			// Sleep at least BackoffMin; then a caller waiting for the peer
			// may cut the rest of the backoff short.
			jitter := time.Duration(p.rnd.Int63n(int64(backoff)/2 + 1))
			if !p.sleep(f.opts.BackoffMin, nil) || !p.sleep(backoff-f.opts.BackoffMin+jitter, p.kick) {
				return
			}
			backoff = min(2*backoff, f.opts.BackoffMax)
			continue
		}
		backoff = f.opts.BackoffMin
		p.connects.Add(1)
		p.mu.Lock()
		p.conn, p.lastErr = c, nil
		close(p.up)
		p.mu.Unlock()
		f.logf("fabric: node %d connected to node %d (%s)", f.self, p.node, p.addr)
		select {
		case <-c.dead:
		case <-f.closed:
			c.fail(ErrClosed)
		}
		c.wg.Wait()
		p.mu.Lock()
		if p.conn == c { // (fail has usually cleared it already)
			p.conn, p.up = nil, make(chan struct{})
		}
		p.lastErr = c.err
		p.mu.Unlock()
		if f.isClosed() {
			return
		}
		p.disconnects.Add(1)
		f.logf("fabric: node %d lost node %d (%s): %v", f.self, p.node, p.addr, c.err)
	}
}

// sleep waits d, or until wake fires; it reports false if the fabric
// closed.
func (p *tcpPeer) sleep(d time.Duration, wake chan struct{}) bool {
	if d <= 0 {
		return !p.f.isClosed()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-wake:
	case <-p.f.closed:
		return false
	}
	return true
}

// dial connects and performs the handshake.
func (p *tcpPeer) dial() (*clientConn, error) {
	f := p.f
	ctx, cancel := context.WithTimeout(f.ctx, f.opts.DialTimeout)
	defer cancel()
	nc, err := f.opts.Dial(ctx, p.addr)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	deadline, _ := ctx.Deadline()
	nc.SetDeadline(deadline)
	h := hello{version: tcpVersion, nodes: uint32(len(f.peers)), from: uint32(f.self), to: uint32(p.node), clusterID: f.opts.ClusterID}
	if _, err := nc.Write(appendFrame(nil, frameHello, 0, 0, h.append(nil))); err != nil {
		nc.Close()
		return nil, fmt.Errorf("handshake: %w", err)
	}
	br := bufio.NewReaderSize(nc, 64<<10)
	fh, payload, _, err := readFrame(br, nil, 4096)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("handshake: %w", err)
	}
	if fh.kind != frameHelloAck {
		nc.Close()
		return nil, fmt.Errorf("handshake: %w: frame kind %d instead of a hello reply", ErrBadFrame, fh.kind)
	}
	if fh.status != statusOK {
		nc.Close()
		return nil, fmt.Errorf("handshake refused by %s: %s", p.addr, payload)
	}
	if len(payload) != 4 || NodeID(binary.LittleEndian.Uint32(payload)) != p.node {
		nc.Close()
		return nil, fmt.Errorf("handshake: %w: the peer at %s is not node %d", ErrBadFrame, p.addr, p.node)
	}
	nc.SetDeadline(time.Time{})
	c := &clientConn{p: p, nc: nc, br: br, out: make(chan []byte, 256), pending: map[uint32]*tcpCall{}, dead: make(chan struct{})}
	c.wg.Add(2)
	go c.readLoop()
	go c.writeLoop()
	return c, nil
}

// get returns the peer's connection, waiting up to ConnectWait for one.
func (p *tcpPeer) get(ctx context.Context) (*clientConn, error) {
	p.mu.Lock()
	c, up := p.conn, p.up
	p.mu.Unlock()
	if c != nil {
		return c, nil
	}
	select {
	case p.kick <- struct{}{}:
	default:
	}
	// A peer whose last dial failed is most likely down: wait only for the
	// redial just kicked (it succeeds at once if the peer is back).
	wait := p.f.opts.ConnectWait
	p.mu.Lock()
	if p.lastErr != nil {
		wait = min(wait, 2*p.f.opts.BackoffMin+p.f.opts.DialTimeout/10)
	}
	p.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-up:
	case <-t.C:
	case <-ctx.Done():
	case <-p.f.closed:
		return nil, ErrClosed
	}
	p.mu.Lock()
	c, lastErr := p.conn, p.lastErr
	p.mu.Unlock()
	if c != nil {
		return c, nil
	}
	if lastErr == nil {
		lastErr = errors.New("connecting")
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("node %d (%s) is not connected (%v): %w", p.node, p.addr, lastErr, ctx.Err())
	}
	return nil, fmt.Errorf("node %d (%s) is not connected (%v): %w", p.node, p.addr, lastErr, ErrNodeDown)
}

// readAll performs reqs (all to p) in as few frames as MaxFrame allows,
// sent back to back, and waits for all replies.
func (p *tcpPeer) readAll(ctx context.Context, reqs []ReadRequest) error {
	f := p.f
	c, err := p.get(ctx)
	if err != nil {
		return f.fail(ctx, p.node, fmt.Errorf("read: %w", err))
	}
	start := time.Now()
	var calls []*tcpCall
	var ids []uint32
	maxEntries := (f.opts.MaxFrame - 4) / readEntrySize
	var bytes uint64
	for lo := 0; lo < len(reqs); {
		hi, total := lo, 0
		for hi < len(reqs) && hi-lo < maxEntries && total+len(reqs[hi].Dst) <= f.opts.MaxFrame {
			total += len(reqs[hi].Dst)
			hi++
		}
		call := &tcpCall{reply: frameReadResp, reqs: reqs[lo:hi], total: total, done: make(chan struct{})}
		part := reqs[lo:hi]
		id, err := c.start(ctx, call, func(id uint32) []byte {
			buf, at := beginFrame(make([]byte, 0, frameHeaderSize+4+len(part)*readEntrySize), frameRead, 0, id)
			buf = binary.LittleEndian.AppendUint32(buf, uint32(len(part)))
			for _, r := range part {
				buf = appendReadEntry(buf, readEntry{region: r.Region, length: uint32(len(r.Dst)), offset: r.Offset})
			}
			return endFrame(buf, at)
		})
		if err != nil {
			for i, cl := range calls {
				c.abandon(ids[i], cl)
			}
			return f.fail(ctx, p.node, fmt.Errorf("read from node %d (%s): %w", p.node, p.addr, err))
		}
		calls, ids = append(calls, call), append(ids, id)
		bytes += uint64(total)
		lo = hi
	}
	for i, call := range calls {
		if err := c.wait(ctx, ids[i], call); err != nil {
			for j := i + 1; j < len(calls); j++ {
				c.abandon(ids[j], calls[j])
			}
			return f.fail(ctx, p.node, fmt.Errorf("read from node %d (%s): %w", p.node, p.addr, err))
		}
	}
	p.rttNanos.Add(uint64(time.Since(start)))
	f.charge(ctx, p.node, Counters{Reads: uint64(len(reqs)), ReadBytes: bytes, RoundTrips: uint64(len(calls))})
	return nil
}

// send delivers one message, retrying while the peer's ring is full.
func (p *tcpPeer) send(ctx context.Context, data []byte) error {
	f := p.f
	pause := 100 * time.Microsecond
	for {
		c, err := p.get(ctx)
		if err != nil {
			return f.fail(ctx, p.node, fmt.Errorf("send: %w", err))
		}
		start := time.Now()
		call := &tcpCall{reply: frameMsgAck, done: make(chan struct{})}
		id, err := c.start(ctx, call, func(id uint32) []byte {
			return appendFrame(make([]byte, 0, frameHeaderSize+len(data)), frameMsg, 0, id, data)
		})
		if err == nil {
			err = c.wait(ctx, id, call)
		}
		if err != nil {
			return f.fail(ctx, p.node, fmt.Errorf("send to node %d (%s): %w", p.node, p.addr, err))
		}
		if call.status == statusRingFull {
			if !p.sleepCtx(ctx, pause) {
				return f.fail(ctx, p.node, fmt.Errorf("send to node %d (%s): receive ring full: %w", p.node, p.addr, ctx.Err()))
			}
			pause = min(2*pause, 10*time.Millisecond)
			continue
		}
		p.rttNanos.Add(uint64(time.Since(start)))
		f.charge(ctx, p.node, Counters{Sends: 1, SendBytes: uint64(len(data))})
		return nil
	}
}

// post queues one message on the connection without waiting for its
// acknowledgement (TCP.Post).
func (p *tcpPeer) post(ctx context.Context, data []byte, done func(error)) error {
	f := p.f
	c, err := p.get(ctx)
	if err != nil {
		return f.fail(ctx, p.node, fmt.Errorf("post: %w", err))
	}
	call := &tcpCall{reply: frameMsgAck, done: make(chan struct{}), posted: true, onPosted: done}
	if _, err := c.start(ctx, call, func(id uint32) []byte {
		return appendFrame(make([]byte, 0, frameHeaderSize+len(data)), frameMsg, 0, id, data)
	}); err != nil {
		return f.fail(ctx, p.node, fmt.Errorf("post to node %d (%s): %w", p.node, p.addr, err))
	}
	f.charge(ctx, p.node, Counters{Sends: 1, SendBytes: uint64(len(data))})
	return nil
}

func (p *tcpPeer) sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-p.f.closed:
		return false
	}
}

// tcpCall is a request waiting for its reply. state: 0 waiting, 1 being
// completed (by the reader or a connection failure), 2 abandoned by its
// caller; whoever moves it out of 0 owns it, so the reader never writes
// into the Dst of a caller that has given up.
type tcpCall struct {
	state  atomic.Int32
	reply  byte // the frame kind that answers it
	reqs   []ReadRequest
	total  int
	status byte
	err    error
	done   chan struct{}
	// posted: no caller waits (Post); onPosted, if set, is told how it
	// ended, on the goroutine that completes it.
	posted   bool
	onPosted func(error)
}

func (c *tcpCall) complete(fill func()) bool {
	if !c.state.CompareAndSwap(0, 1) {
		return false
	}
	fill()
	close(c.done)
	if c.posted && c.onPosted != nil {
		err := c.err
		if err == nil && c.status == statusRingFull {
			err = ErrRingFull
		}
		c.onPosted(err)
	}
	return true
}

// clientConn is a connection this node dialed: callers enqueue request
// frames, writeLoop writes them (and pings), readLoop matches replies to
// calls by id.
type clientConn struct {
	p   *tcpPeer
	nc  net.Conn
	br  *bufio.Reader
	out chan []byte

	mu      sync.Mutex
	pending map[uint32]*tcpCall
	nextID  uint32
	err     error // why the connection died; set before dead is closed

	dead     chan struct{}
	deadOnce sync.Once
	wg       sync.WaitGroup
}

// fail breaks the connection: pending calls fail with err (wrapping
// ErrNodeDown unless it is ErrClosed).
func (c *clientConn) fail(err error) {
	c.deadOnce.Do(func() {
		if !errors.Is(err, ErrClosed) {
			err = fmt.Errorf("%w: %w", ErrNodeDown, err)
		}
		c.mu.Lock()
		c.err = err
		pending := c.pending
		c.pending = nil
		c.mu.Unlock()
		close(c.dead)
		c.nc.Close()
		// The peer counts as disconnected from now on (maintain redials).
		p := c.p
		p.mu.Lock()
		if p.conn == c {
			p.conn, p.lastErr, p.up = nil, err, make(chan struct{})
		}
		p.mu.Unlock()
		for _, call := range pending {
			call.complete(func() { call.err = err })
		}
		if lost := p.f.opts.OnPeerLost; lost != nil && !errors.Is(err, ErrClosed) {
			lost(p.node, err)
		}
	})
}

func (c *clientConn) deadErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// start registers call and enqueues the frame built for its id.
func (c *clientConn) start(ctx context.Context, call *tcpCall, frame func(id uint32) []byte) (uint32, error) {
	c.mu.Lock()
	if c.pending == nil {
		err := c.err
		c.mu.Unlock()
		return 0, err
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = call
	c.mu.Unlock()
	fr := frame(id)
	select {
	case c.out <- fr:
		return id, nil
	case <-c.dead:
		return 0, c.deadErr()
	case <-ctx.Done():
		c.abandon(id, call)
		return 0, ctx.Err()
	}
}

// wait waits for call's reply or ctx's end.
func (c *clientConn) wait(ctx context.Context, id uint32, call *tcpCall) error {
	select {
	case <-call.done:
		return call.err
	case <-ctx.Done():
		if call.state.CompareAndSwap(0, 2) {
			c.forget(id)
			return fmt.Errorf("no reply before the context ended: %w", ctx.Err())
		}
		<-call.done
		return call.err
	}
}

func (c *clientConn) abandon(id uint32, call *tcpCall) {
	call.state.CompareAndSwap(0, 2)
	c.forget(id)
}

func (c *clientConn) forget(id uint32) {
	c.mu.Lock()
	if c.pending != nil {
		delete(c.pending, id)
	}
	c.mu.Unlock()
}

func (c *clientConn) take(id uint32) *tcpCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	call := c.pending[id]
	if call != nil {
		delete(c.pending, id)
	}
	return call
}

func (c *clientConn) writeLoop() {
	defer c.wg.Done()
	opts := &c.p.f.opts
	bw := bufio.NewWriterSize(c.nc, 64<<10)
	tick := time.NewTicker(opts.HeartbeatInterval)
	defer tick.Stop()
	write := func(fr []byte) bool {
		c.nc.SetWriteDeadline(time.Now().Add(opts.HeartbeatTimeout))
		if _, err := bw.Write(fr); err != nil {
			c.fail(fmt.Errorf("write: %w", err))
			return false
		}
		return true
	}
	for {
		select {
		case fr := <-c.out:
			if !write(fr) {
				return
			}
		case <-tick.C:
			if !write(appendFrame(nil, framePing, 0, 0, nil)) {
				return
			}
		case <-c.dead:
			return
		}
		if len(c.out) == 0 {
			if err := bw.Flush(); err != nil {
				c.fail(fmt.Errorf("write: %w", err))
				return
			}
		}
	}
}

func (c *clientConn) readLoop() {
	defer c.wg.Done()
	opts := &c.p.f.opts
	var buf []byte
	for {
		c.nc.SetReadDeadline(time.Now().Add(opts.HeartbeatTimeout))
		h, payload, nb, err := readFrame(c.br, buf, opts.MaxFrame+64)
		buf = nb
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				err = fmt.Errorf("no frame for %v: %w", opts.HeartbeatTimeout, err)
			}
			c.fail(err)
			return
		}
		switch h.kind {
		case framePong:
		case frameReadResp, frameMsgAck:
			call := c.take(h.id)
			if call == nil {
				continue // abandoned
			}
			if call.reply != h.kind {
				c.fail(fmt.Errorf("%w: reply kind %d to a call expecting %d", ErrBadFrame, h.kind, call.reply))
				return
			}
			if h.kind == frameReadResp && h.status == statusOK && len(payload) != call.total {
				c.fail(fmt.Errorf("%w: read reply of %d bytes for %d requested", ErrBadFrame, len(payload), call.total))
				return
			}
			call.complete(func() {
				call.status = h.status
				if h.kind == frameReadResp {
					call.err = fillRead(call, h.status, payload)
				}
			})
		default:
			c.fail(fmt.Errorf("%w: unexpected frame kind %d from node %d", ErrBadFrame, h.kind, c.p.node))
			return
		}
	}
}

// fillRead copies a read reply into the calls' Dst or decodes its error.
func fillRead(call *tcpCall, status byte, p []byte) error {
	if status == statusOK {
		for _, r := range call.reqs {
			p = p[copy(r.Dst, p):]
		}
		return nil
	}
	var idx uint32
	msg := "?"
	if len(p) >= 4 {
		idx, msg = binary.LittleEndian.Uint32(p), string(p[4:])
	}
	var sentinel error
	switch status {
	case statusNoRegion:
		sentinel = ErrNoRegion
	case statusOutOfRange:
		sentinel = ErrOutOfRange
	default:
		sentinel = ErrBadFrame
	}
	return fmt.Errorf("request %d of the batch: %w (peer: %s)", idx, sentinel, msg)
}

// accept takes the peers' connections and serves each in a goroutine.
func (f *TCP) accept() {
	defer f.wg.Done()
	select {
	case <-f.resumed:
	case <-f.closed:
		return
	}
	for {
		nc, err := f.ln.Accept()
		if err != nil {
			if f.isClosed() {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			f.logf("fabric: node %d stops accepting: %v", f.self, err)
			return
		}
		f.srvMu.Lock()
		if f.isClosed() {
			f.srvMu.Unlock()
			nc.Close()
			return
		}
		f.srvConns[nc] = struct{}{}
		f.srvMu.Unlock()
		f.wg.Add(1)
		go f.serve(nc)
	}
}

// serve answers one peer's requests: READs from the registered regions,
// messages into the ring, pings. It is the only writer of its connection.
func (f *TCP) serve(nc net.Conn) {
	defer f.wg.Done()
	defer func() {
		f.srvMu.Lock()
		delete(f.srvConns, nc)
		f.srvMu.Unlock()
		nc.Close()
	}()
	br := bufio.NewReaderSize(nc, 64<<10)
	bw := bufio.NewWriterSize(nc, 64<<10)
	nc.SetDeadline(time.Now().Add(f.opts.DialTimeout))
	h, payload, _, err := readFrame(br, nil, 4096)
	if err != nil || h.kind != frameHello {
		return
	}
	refuse := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		f.logf("fabric: node %d refuses a connection from %s: %s", f.self, nc.RemoteAddr(), msg)
		bw.Write(appendFrame(nil, frameHelloAck, statusRefused, 0, []byte(msg)))
		bw.Flush()
	}
	hl, err := parseHello(payload)
	switch {
	case err != nil:
		refuse("%v", err)
		return
	case hl.version != tcpVersion:
		refuse("fabric version %d, node %d speaks %d", hl.version, f.self, tcpVersion)
		return
	case int(hl.nodes) != len(f.peers):
		refuse("peer thinks the cluster has %d nodes, node %d has %d", hl.nodes, f.self, len(f.peers))
		return
	case NodeID(hl.to) != f.self:
		refuse("peer dialed node %d, this is node %d", hl.to, f.self)
		return
	case int(hl.from) >= len(f.peers) || NodeID(hl.from) == f.self:
		refuse("peer claims to be node %d", hl.from)
		return
	case hl.clusterID != f.opts.ClusterID:
		refuse("cluster id %016x differs from node %d's %016x (different data?)", hl.clusterID, f.self, f.opts.ClusterID)
		return
	}
	peer := f.peers[hl.from]
	var ack [4]byte
	binary.LittleEndian.PutUint32(ack[:], uint32(f.self))
	bw.Write(appendFrame(nil, frameHelloAck, statusOK, 0, ack[:]))
	if err := bw.Flush(); err != nil {
		return
	}
	nc.SetDeadline(time.Time{})
	var in, out []byte
	for {
		nc.SetReadDeadline(time.Now().Add(f.opts.HeartbeatTimeout))
		h, payload, nb, err := readFrame(br, in, f.opts.MaxFrame+64)
		in = nb
		if err != nil {
			if !f.isClosed() && !errors.Is(err, net.ErrClosed) {
				var ne net.Error
				if errors.Is(err, ErrBadFrame) || !(errors.As(err, &ne) && ne.Timeout()) {
					f.logf("fabric: node %d drops the connection from node %d: %v", f.self, hl.from, err)
				}
			}
			return
		}
		out = out[:0]
		switch h.kind {
		case frameRead:
			out = f.answerRead(out, h.id, payload, peer)
		case frameMsg:
			status := byte(statusOK)
			msg := Message{From: NodeID(hl.from), Data: append([]byte(nil), payload...)}
			select {
			case f.ring <- msg:
				peer.servedMsgs.Add(1)
			case <-f.closed:
				status = statusClosed
			default:
				status = statusRingFull
			}
			out = appendFrame(out, frameMsgAck, status, h.id, nil)
		case framePing:
			out = appendFrame(out, framePong, 0, h.id, nil)
		default:
			f.logf("fabric: node %d drops the connection from node %d: unexpected frame kind %d", f.self, hl.from, h.kind)
			return
		}
		nc.SetWriteDeadline(time.Now().Add(f.opts.HeartbeatTimeout))
		if _, err := bw.Write(out); err != nil {
			return
		}
		if br.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return
			}
		}
		if cap(out) > 1<<20 {
			out = nil // do not pin a large reply buffer
		}
	}
}

// answerRead appends the reply to a read frame to out.
func (f *TCP) answerRead(out []byte, id uint32, payload []byte, peer *tcpPeer) []byte {
	n, total, err := parseReadRequest(payload, f.opts.MaxFrame)
	if err != nil {
		return appendFrame(out, frameReadResp, statusBadRequest, id, append([]byte{0, 0, 0, 0}, err.Error()...))
	}
	out, at := beginFrame(slices.Grow(out, frameHeaderSize+int(total)), frameReadResp, statusOK, id)
	for i := 0; i < n; i++ {
		e := readEntryAt(payload, i)
		pos := len(out)
		out = out[:pos+int(e.length)]
		if status, err := f.copyLocal(e.region, e.offset, out[pos:]); err != nil {
			out = out[:at]
			var idx [4]byte
			binary.LittleEndian.PutUint32(idx[:], uint32(i))
			return appendFrame(out, frameReadResp, status, id, append(idx[:], err.Error()...))
		}
	}
	peer.servedReads.Add(uint64(n))
	peer.servedBytes.Add(total)
	return endFrame(out, at)
}
