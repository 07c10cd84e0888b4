package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ProcsConfig configures a set of node processes on one machine.
type ProcsConfig struct {
	// Binary is the wukongd executable.
	Binary string
	// Data is the snapshot directory every node serves.
	Data string
	// Nodes is the number of processes.
	Nodes int
	// Host is the address the nodes listen on (default 127.0.0.1).
	Host string
	// HTTPPorts and FabricPorts fix the ports of node i (nil or 0: a free
	// port).
	HTTPPorts, FabricPorts []int
	// Args are more arguments for `wukongd serve` (--mode, --timeout, …).
	Args []string
	// Standalone starts one process without --node and --peers: the whole
	// snapshot in one process (its shards over the loopback fabric), for
	// comparisons. Nodes must be 1.
	Standalone bool
	// Output receives the processes' output, each line prefixed with
	// "node I: " (nil: discarded).
	Output io.Writer
}

// Procs is a running set of node processes.
type Procs struct {
	cfg    ProcsConfig
	http   []string
	fabric []string
	mu     sync.Mutex
	out    sync.Mutex
	procs  []*proc
}

type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// FreePort returns a TCP port of host that was free a moment ago.
func FreePort(host string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("cannot find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// StartProcs starts cfg.Nodes processes `wukongd serve --data … --node I
// --peers …` and waits until every one answers /readyz (all peers
// connected) or ctx ends; on failure it stops what it started.
func StartProcs(ctx context.Context, cfg ProcsConfig) (*Procs, error) {
	if cfg.Nodes < 1 || cfg.Standalone && cfg.Nodes != 1 {
		return nil, fmt.Errorf("a cluster of %d nodes (standalone: %v)", cfg.Nodes, cfg.Standalone)
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	p := &Procs{cfg: cfg, procs: make([]*proc, cfg.Nodes)}
	// The free ports stay bound until every one is chosen: a port closed
	// at once may be handed out again by the next bind to port 0, and two
	// nodes would then be given the same address.
	var held []net.Listener
	release := func() {
		for _, ln := range held {
			ln.Close()
		}
		held = nil
	}
	defer release()
	port := func(fixed []int, i int) (int, error) {
		if i < len(fixed) && fixed[i] != 0 {
			return fixed[i], nil
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, "0"))
		if err != nil {
			return 0, fmt.Errorf("cannot find a free port: %w", err)
		}
		held = append(held, ln)
		return ln.Addr().(*net.TCPAddr).Port, nil
	}
	for i := 0; i < cfg.Nodes; i++ {
		hp, err := port(cfg.HTTPPorts, i)
		if err != nil {
			return nil, err
		}
		fp, err := port(cfg.FabricPorts, i)
		if err != nil {
			return nil, err
		}
		p.http = append(p.http, net.JoinHostPort(cfg.Host, strconv.Itoa(hp)))
		p.fabric = append(p.fabric, net.JoinHostPort(cfg.Host, strconv.Itoa(fp)))
	}
	release()
	for i := 0; i < cfg.Nodes; i++ {
		if err := p.Start(i); err != nil {
			p.Stop()
			return nil, err
		}
	}
	for i := 0; i < cfg.Nodes; i++ {
		if err := p.WaitReady(ctx, i); err != nil {
			p.Stop()
			return nil, err
		}
	}
	return p, nil
}

// HTTPAddr returns node i's HTTP address (host:port).
func (p *Procs) HTTPAddr(i int) string { return p.http[i] }

// URL returns node i's base URL.
func (p *Procs) URL(i int) string { return "http://" + p.http[i] }

// FabricAddrs returns every node's fabric address.
func (p *Procs) FabricAddrs() []string { return p.fabric }

// Start starts node i (again, after Kill).
func (p *Procs) Start(i int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.procs[i] != nil {
		select {
		case <-p.procs[i].done:
		default:
			return fmt.Errorf("node %d is running", i)
		}
	}
	args := []string{"serve", "--data", p.cfg.Data, "--addr", p.http[i]}
	if !p.cfg.Standalone {
		args = append(args, "--node", strconv.Itoa(i), "--peers", strings.Join(p.fabric, ","))
	}
	args = append(args, p.cfg.Args...)
	cmd := exec.Command(p.cfg.Binary, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the harness
	var pipes []io.Reader
	if p.cfg.Output != nil {
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			return err
		}
		pipes = append(pipes, stdout, stderr)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start node %d: %w", i, err)
	}
	pr := &proc{cmd: cmd, done: make(chan struct{})}
	var copiers sync.WaitGroup
	for _, r := range pipes {
		copiers.Add(1)
		go func(r io.Reader) {
			defer copiers.Done()
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				p.out.Lock()
				fmt.Fprintf(p.cfg.Output, "node %d: %s\n", i, sc.Text())
				p.out.Unlock()
			}
		}(r)
	}
	go func() {
		copiers.Wait() // before Wait, which closes the pipes
		pr.err = cmd.Wait()
		close(pr.done)
	}()
	p.procs[i] = pr
	return nil
}

// Running reports whether node i's process is running.
func (p *Procs) Running(i int) bool {
	p.mu.Lock()
	pr := p.procs[i]
	p.mu.Unlock()
	if pr == nil {
		return false
	}
	select {
	case <-pr.done:
		return false
	default:
		return true
	}
}

// Done returns a channel closed when node i's current process exits, and
// its exit error afterwards.
func (p *Procs) Done(i int) (<-chan struct{}, func() error) {
	p.mu.Lock()
	pr := p.procs[i]
	p.mu.Unlock()
	return pr.done, func() error { return pr.err }
}

// WaitReady waits until node i answers /readyz with 200.
func (p *Procs) WaitReady(ctx context.Context, i int) error {
	client := &http.Client{Timeout: time.Second}
	var last string
	for {
		p.mu.Lock()
		pr := p.procs[i]
		p.mu.Unlock()
		select {
		case <-pr.done:
			return fmt.Errorf("node %d exited before it was ready: %v", i, pr.err)
		default:
		}
		resp, err := client.Get(p.URL(i) + "/readyz")
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %d not ready (%s): %w", i, last, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Kill kills node i (SIGKILL: no goodbye to its peers) and waits for it.
func (p *Procs) Kill(i int) error {
	p.mu.Lock()
	pr := p.procs[i]
	p.mu.Unlock()
	if pr == nil {
		return nil
	}
	if err := pr.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("cannot kill node %d: %w", i, err)
	}
	<-pr.done
	return nil
}

// Stop stops every node: SIGTERM, then SIGKILL for those still running
// after 10 seconds.
func (p *Procs) Stop() error {
	p.mu.Lock()
	procs := append([]*proc(nil), p.procs...)
	p.mu.Unlock()
	for _, pr := range procs {
		if pr != nil {
			pr.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	var errs []error
	for i, pr := range procs {
		if pr == nil {
			continue
		}
		select {
		case <-pr.done:
		case <-time.After(10 * time.Second):
			pr.cmd.Process.Kill()
			<-pr.done
			errs = append(errs, fmt.Errorf("node %d did not stop on SIGTERM", i))
		}
	}
	return errors.Join(errs...)
}
