package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/wukongd/wukongd/rdmakv"
)

// Several engines can run over one fabric at once: two generations of a
// dataset share a graph's store when a write left that graph unchanged,
// and the old generation's engine serves the queries that still read it
// while the new one serves the rest. If each engine received from the
// fabric's rings itself, one would take the other's messages off them —
// a fork-join reply its waiter never gets, a sub-query nobody runs — and
// the query would wait for its deadline (or for ever without one).
//
// So engines over a GraphStore do not receive from the fabric. Each
// engine gets a port (GraphStore.Port): a tag, sent as a uvarint before
// each of its messages, and a queue per node. One receiver per fabric
// node (fabricMux.receive) takes every message off the ring and hands it
// to the port its tag names; a message for a port that is gone (its
// engine closed, so its queries have ended) is dropped. The receivers
// start with the fabric's first port and stop with its last.

// muxes holds the live fabricMux of each fabric.
var muxes = struct {
	mu   sync.Mutex
	m    map[rdmakv.Fabric]*fabricMux
	tags uint64
}{m: map[rdmakv.Fabric]*fabricMux{}}

// portQueue is the depth of a port's queue per node. The engine's
// dispatcher empties it at once (it never blocks on a message), so a
// receiver waits on a full queue only briefly.
const portQueue = 64

type fabricMux struct {
	f      rdmakv.Fabric
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	refs   int // ports attached; guarded by muxes.mu

	mu    sync.RWMutex
	ports map[uint64]*muxPort

	failOnce sync.Once
	dead     chan struct{} // closed when a receive failed
	err      error         // why; set before dead is closed
}

// muxPort is one engine's side of a fabric: it implements Transport.
type muxPort struct {
	mux    *fabricMux
	tag    uint64
	nodeOf func(shard int) rdmakv.NodeID
	q      []chan rdmakv.Message // by fabric node
	done   chan struct{}         // closed by detach
	once   sync.Once
}

var _ Transport = (*muxPort)(nil)

// attachPort returns a new port on f, whose nodes are 0..nodes-1 (all
// local), starting f's receivers if it has none.
func attachPort(f rdmakv.Fabric, nodes int, nodeOf func(int) rdmakv.NodeID) *muxPort {
	muxes.mu.Lock()
	defer muxes.mu.Unlock()
	m := muxes.m[f]
	if m != nil && m.failed() {
		// Its receivers have stopped (the fabric failed, or was closed);
		// the ports still on it keep it until they detach.
		delete(muxes.m, f)
		m = nil
	}
	if m == nil {
		m = &fabricMux{f: f, ports: map[uint64]*muxPort{}, dead: make(chan struct{})}
		m.ctx, m.cancel = context.WithCancel(context.Background())
		for node := 0; node < nodes; node++ {
			m.wg.Add(1)
			go m.receive(rdmakv.NodeID(node))
		}
		muxes.m[f] = m
	}
	muxes.tags++
	p := &muxPort{mux: m, tag: muxes.tags, nodeOf: nodeOf, q: make([]chan rdmakv.Message, nodes), done: make(chan struct{})}
	for i := range p.q {
		p.q[i] = make(chan rdmakv.Message, portQueue)
	}
	m.refs++
	m.mu.Lock()
	m.ports[p.tag] = p
	m.mu.Unlock()
	return p
}

// detach removes the port; the fabric's receivers stop with its last
// port, before detach returns (so that receivers started for a later port
// never run beside them).
func (p *muxPort) detach() {
	p.once.Do(func() {
		m := p.mux
		m.mu.Lock()
		delete(m.ports, p.tag)
		m.mu.Unlock()
		close(p.done)
		muxes.mu.Lock()
		defer muxes.mu.Unlock()
		if m.refs--; m.refs > 0 {
			return
		}
		if muxes.m[m.f] == m {
			delete(muxes.m, m.f)
		}
		m.cancel()
		m.wg.Wait()
	})
}

func (m *fabricMux) failed() bool {
	select {
	case <-m.dead:
		return true
	default:
		return false
	}
}

func (m *fabricMux) fail(err error) {
	m.failOnce.Do(func() {
		m.err = err
		close(m.dead)
	})
}

// receive takes node's messages off the fabric for the ports.
func (m *fabricMux) receive(node rdmakv.NodeID) {
	defer m.wg.Done()
	for {
		msg, err := m.f.Recv(m.ctx, node)
		if err != nil {
			if m.ctx.Err() == nil {
				m.fail(fmt.Errorf("node %d cannot receive: %w", node, err))
			}
			return
		}
		tag, n := binary.Uvarint(msg.Data)
		if n <= 0 {
			continue // not an engine's message
		}
		m.mu.RLock()
		p := m.ports[tag]
		m.mu.RUnlock()
		if p == nil {
			continue // its engine has closed
		}
		msg.Data = msg.Data[n:]
		select {
		case p.q[node] <- msg:
		case <-p.done:
		case <-m.ctx.Done():
			return
		}
	}
}

// Send implements Transport: msg goes out behind the port's tag. The
// tagged copy is the port's own, so a fabric that can take a buffer over
// (the loopback's rings) is given it instead of copying it once more.
func (p *muxPort) Send(ctx context.Context, from, to int, msg []byte) error {
	buf := make([]byte, 0, binary.MaxVarintLen64+len(msg))
	buf = binary.AppendUvarint(buf, p.tag)
	buf = append(buf, msg...)
	if o, ok := p.mux.f.(rdmakv.OwningSender); ok {
		return o.SendOwned(ctx, p.nodeOf(from), p.nodeOf(to), buf)
	}
	return p.mux.f.Send(ctx, p.nodeOf(from), p.nodeOf(to), buf)
}

// Recv implements Transport.
func (p *muxPort) Recv(ctx context.Context, node int) (int, []byte, error) {
	n := int(p.nodeOf(node))
	if n < 0 || n >= len(p.q) {
		return 0, nil, fmt.Errorf("receive on node %d: %w", n, rdmakv.ErrNotLocal)
	}
	select {
	case m := <-p.q[n]:
		return int(m.From), m.Data, nil
	case <-ctx.Done():
		return 0, nil, ctx.Err()
	case <-p.done:
		return 0, nil, ErrClosed
	case <-p.mux.dead:
		return 0, nil, p.mux.err
	}
}
