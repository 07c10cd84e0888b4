package rdmakv

import (
	"context"
	"hash/fnv"
	"io"
	"math/rand"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// SimNet is a deterministic simulated network for fault tests of the TCP
// fabric without sockets (in the manner of etcd raft's rafttest network):
// in-memory stream connections between named addresses, with faults set
// per directed link and seeded per connection.
//
// Faults (LinkFaults), decided for every Write on a link from a random
// source seeded by (seed, from, to, connection number), so the same writes
// meet the same faults in every run:
//   - Delay and Jitter: the bytes arrive Delay + [0, Jitter) later, in
//     order (a slow link or a slow peer);
//   - DropRate: the write is lost; TCP would retransmit and finally give
//     up, the simulation resets the connection at once (both ends see
//     ECONNRESET);
//   - CorruptRate: one bit of the write flips (what TCP's weak checksum
//     can let through; the fabric's CRC-32C must catch it).
//
// Partition splits the addresses into groups that cannot reach each other:
// dials across hang until their context ends, and bytes in flight are held
// (as TCP retransmits into a partition) until Heal. Crash closes an
// address's listener and resets its connections (a killed process).
//
// The timing of goroutines is not simulated: a fabric's writes can be cut
// differently from run to run, so tests assert invariants (correct data or
// a clean error, never a hang) rather than exact traces.
type SimNet struct {
	seed int64

	mu        sync.Mutex
	listeners map[string]*simListener
	faults    map[[2]string]LinkFaults
	def       LinkFaults
	group     map[string]int // partition group of an address; absent: 0
	linkConns map[[2]string]int
	pipes     map[*simPipe]struct{}
}

// LinkFaults are the faults of one direction of a link.
type LinkFaults struct {
	Delay, Jitter time.Duration
	DropRate      float64
	CorruptRate   float64
}

// NewSimNet returns a network without faults whose random decisions derive
// from seed.
func NewSimNet(seed int64) *SimNet {
	return &SimNet{seed: seed, listeners: map[string]*simListener{}, faults: map[[2]string]LinkFaults{},
		group: map[string]int{}, linkConns: map[[2]string]int{}, pipes: map[*simPipe]struct{}{}}
}

// SetDefault sets the faults of every link without its own.
func (n *SimNet) SetDefault(f LinkFaults) {
	n.mu.Lock()
	n.def = f
	n.mu.Unlock()
}

// SetLink sets the faults of the bytes sent from address from to address
// to (on connections in either dial direction).
func (n *SimNet) SetLink(from, to string, f LinkFaults) {
	n.mu.Lock()
	n.faults[[2]string{from, to}] = f
	n.mu.Unlock()
}

// ClearLinks removes every per-link fault and the default's.
func (n *SimNet) ClearLinks() {
	n.mu.Lock()
	n.faults = map[[2]string]LinkFaults{}
	n.def = LinkFaults{}
	n.mu.Unlock()
}

func (n *SimNet) faultsFor(from, to string) LinkFaults {
	n.mu.Lock()
	defer n.mu.Unlock()
	if f, ok := n.faults[[2]string{from, to}]; ok {
		return f
	}
	return n.def
}

// Partition puts each listed group of addresses in a partition of its
// own; unlisted addresses share one more. Addresses in different
// partitions cannot reach each other until Heal.
func (n *SimNet) Partition(groups ...[]string) {
	n.mu.Lock()
	n.group = map[string]int{}
	for i, g := range groups {
		for _, a := range g {
			n.group[a] = i + 1
		}
	}
	n.mu.Unlock()
}

// Heal ends every partition; held bytes are delivered.
func (n *SimNet) Heal() {
	n.mu.Lock()
	n.group = map[string]int{}
	pipes := make([]*simPipe, 0, len(n.pipes))
	for p := range n.pipes {
		pipes = append(pipes, p)
	}
	n.mu.Unlock()
	for _, p := range pipes {
		p.poke()
	}
}

func (n *SimNet) reachable(a, b string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.group[a] == n.group[b]
}

// Crash closes the listener of addr and resets every connection to or
// from it.
func (n *SimNet) Crash(addr string) {
	n.mu.Lock()
	l := n.listeners[addr]
	var victims []*simPipe
	for p := range n.pipes {
		if p.src == addr || p.dst == addr {
			victims = append(victims, p)
		}
	}
	n.mu.Unlock()
	if l != nil {
		l.Close()
	}
	for _, p := range victims {
		p.reset()
	}
}

// Listen returns a listener for addr.
func (n *SimNet) Listen(addr string) (net.Listener, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.listeners[addr]; ok {
		return nil, &net.OpError{Op: "listen", Net: "sim", Addr: simAddr(addr), Err: syscall.EADDRINUSE}
	}
	l := &simListener{n: n, addr: addr, conns: make(chan net.Conn, 64), closed: make(chan struct{})}
	n.listeners[addr] = l
	return l, nil
}

// Dialer returns a dial function for the node at address from, for
// TCPOptions.Dial.
func (n *SimNet) Dialer(from string) func(ctx context.Context, addr string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) { return n.dial(ctx, from, addr) }
}

func (n *SimNet) linkSeed(from, to string, conn int, dir byte) int64 {
	h := fnv.New64a()
	var b [9]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(uint64(n.seed) >> (8 * i))
	}
	b[8] = dir
	h.Write(b[:])
	h.Write([]byte(from))
	h.Write([]byte{0})
	h.Write([]byte(to))
	for i := 0; i < 8; i++ {
		b[i] = byte(uint64(conn) >> (8 * i))
	}
	h.Write(b[:8])
	return int64(h.Sum64())
}

func (n *SimNet) dial(ctx context.Context, from, to string) (net.Conn, error) {
	if !n.reachable(from, to) {
		// The SYN is lost: the dial hangs until it times out.
		<-ctx.Done()
		return nil, &net.OpError{Op: "dial", Net: "sim", Addr: simAddr(to), Err: os.ErrDeadlineExceeded}
	}
	n.mu.Lock()
	l := n.listeners[to]
	if l == nil {
		n.mu.Unlock()
		return nil, &net.OpError{Op: "dial", Net: "sim", Addr: simAddr(to), Err: syscall.ECONNREFUSED}
	}
	k := [2]string{from, to}
	idx := n.linkConns[k]
	n.linkConns[k] = idx + 1
	out := newSimPipe(n, from, to, n.linkSeed(from, to, idx, 0))
	in := newSimPipe(n, to, from, n.linkSeed(from, to, idx, 1))
	n.pipes[out] = struct{}{}
	n.pipes[in] = struct{}{}
	n.mu.Unlock()
	client := &simConn{local: simAddr(from), remote: simAddr(to), rd: in, wr: out}
	server := &simConn{local: simAddr(to), remote: simAddr(from), rd: out, wr: in}
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
	default:
	}
	client.Close()
	server.Close()
	return nil, &net.OpError{Op: "dial", Net: "sim", Addr: simAddr(to), Err: syscall.ECONNREFUSED}
}

func (n *SimNet) forget(p *simPipe) {
	n.mu.Lock()
	delete(n.pipes, p)
	n.mu.Unlock()
}

type simAddr string

func (a simAddr) Network() string { return "sim" }
func (a simAddr) String() string  { return string(a) }

type simListener struct {
	n      *SimNet
	addr   string
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *simListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, &net.OpError{Op: "accept", Net: "sim", Addr: simAddr(l.addr), Err: net.ErrClosed}
	}
}

func (l *simListener) Close() error {
	l.once.Do(func() {
		close(l.closed)
		l.n.mu.Lock()
		if l.n.listeners[l.addr] == l {
			delete(l.n.listeners, l.addr)
		}
		l.n.mu.Unlock()
		for {
			select {
			case c := <-l.conns:
				c.Close()
			default:
				return
			}
		}
	})
	return nil
}

func (l *simListener) Addr() net.Addr { return simAddr(l.addr) }

// simPipe is one direction of a connection: bytes written at src, read at
// dst.
type simPipe struct {
	n        *SimNet
	src, dst string
	rnd      *rand.Rand // used under mu

	mu       sync.Mutex
	chunks   []simChunk
	last     time.Time
	eof      bool // the writer closed
	rclosed  bool // the reader closed
	resetErr bool
	wake     chan struct{}
	deadline time.Time // read deadline
}

type simChunk struct {
	data []byte
	at   time.Time
}

func newSimPipe(n *SimNet, src, dst string, seed int64) *simPipe {
	return &simPipe{n: n, src: src, dst: dst, rnd: rand.New(rand.NewSource(seed)), wake: make(chan struct{}, 1)}
}

func (p *simPipe) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *simPipe) reset() {
	p.mu.Lock()
	p.resetErr = true
	p.chunks = nil
	p.mu.Unlock()
	p.poke()
	p.n.forget(p)
}

func opErr(op string, addr string, err error) error {
	return &net.OpError{Op: op, Net: "sim", Addr: simAddr(addr), Err: err}
}

func (p *simPipe) write(b []byte) (int, error) {
	f := p.n.faultsFor(p.src, p.dst)
	p.mu.Lock()
	if p.resetErr {
		p.mu.Unlock()
		return 0, opErr("write", p.dst, syscall.ECONNRESET)
	}
	if p.eof {
		p.mu.Unlock()
		return 0, opErr("write", p.dst, net.ErrClosed)
	}
	// Four draws per write whatever the faults, so that changing one rate
	// does not shift the others' decisions.
	drop, corrupt, bit, jitter := p.rnd.Float64(), p.rnd.Float64(), p.rnd.Int63(), p.rnd.Int63()
	if drop < f.DropRate {
		p.mu.Unlock()
		return 0, errDropped
	}
	if p.rclosed {
		p.mu.Unlock()
		return len(b), nil // the peer closed: the bytes vanish (its RST is not modelled)
	}
	data := append([]byte(nil), b...)
	if corrupt < f.CorruptRate && len(data) > 0 {
		i := bit % int64(len(data)*8)
		data[i/8] ^= 1 << (i % 8)
	}
	at := time.Now().Add(f.Delay)
	if f.Jitter > 0 {
		at = at.Add(time.Duration(jitter % int64(f.Jitter)))
	}
	if at.Before(p.last) {
		at = p.last
	}
	p.last = at
	p.chunks = append(p.chunks, simChunk{data: data, at: at})
	p.mu.Unlock()
	p.poke()
	return len(b), nil
}

var errDropped = opErr("write", "", syscall.ECONNRESET)

func (p *simPipe) read(b []byte) (int, error) {
	for {
		p.mu.Lock()
		switch {
		case p.rclosed:
			p.mu.Unlock()
			return 0, opErr("read", p.src, net.ErrClosed)
		case p.resetErr:
			p.mu.Unlock()
			return 0, opErr("read", p.src, syscall.ECONNRESET)
		}
		now := time.Now()
		if !p.deadline.IsZero() && !now.Before(p.deadline) {
			p.mu.Unlock()
			return 0, opErr("read", p.src, os.ErrDeadlineExceeded)
		}
		var wait time.Duration = -1
		if len(p.chunks) > 0 {
			c := &p.chunks[0]
			if p.n.reachable(p.src, p.dst) {
				if !c.at.After(now) {
					k := copy(b, c.data)
					c.data = c.data[k:]
					if len(c.data) == 0 {
						p.chunks[0] = simChunk{}
						p.chunks = p.chunks[1:]
					}
					p.mu.Unlock()
					return k, nil
				}
				wait = c.at.Sub(now)
			}
		} else if p.eof {
			p.mu.Unlock()
			return 0, io.EOF
		}
		if !p.deadline.IsZero() {
			if d := p.deadline.Sub(now); wait < 0 || d < wait {
				wait = d
			}
		}
		p.mu.Unlock()
		if wait < 0 {
			<-p.wake
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-p.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// simConn is one end of a simulated connection.
type simConn struct {
	local, remote simAddr
	rd, wr        *simPipe
	once          sync.Once
}

func (c *simConn) Read(b []byte) (int, error) { return c.rd.read(b) }

func (c *simConn) Write(b []byte) (int, error) {
	n, err := c.wr.write(b)
	if err == errDropped {
		c.wr.reset()
		c.rd.reset()
	}
	return n, err
}

func (c *simConn) Close() error {
	c.once.Do(func() {
		c.rd.mu.Lock()
		c.rd.rclosed = true
		c.rd.chunks = nil
		c.rd.mu.Unlock()
		c.rd.poke()
		c.wr.mu.Lock()
		c.wr.eof = true
		c.wr.mu.Unlock()
		c.wr.poke()
		c.rd.n.forget(c.rd)
	})
	return nil
}

func (c *simConn) LocalAddr() net.Addr  { return c.local }
func (c *simConn) RemoteAddr() net.Addr { return c.remote }

func (c *simConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func (c *simConn) SetReadDeadline(t time.Time) error {
	c.rd.mu.Lock()
	c.rd.deadline = t
	c.rd.mu.Unlock()
	c.rd.poke()
	return nil
}

// SetWriteDeadline is accepted and has no effect: simulated writes never
// block.
func (c *simConn) SetWriteDeadline(time.Time) error { return nil }
