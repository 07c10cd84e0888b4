package main

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// crashRounds is the loop the kill -9 tests share (TestCrashHarness,
// TestCrashBulkPost, TestCrashStoppedWriteRollback): kills+1 runs of the
// server on dir, which logs to logPath. Each run starts the server, waits
// until it serves, calls check and checkCrashState(ledger), and stops the
// test with the server log (the server killed) if anything failed. In every run but the
// last, clients small writers (storm) go on while during runs; when
// during returns the server is killed -9, the writers stop, and the func
// during returned (if not nil) runs. The last run's server is killed
// after its checks.
type crashRounds struct {
	bin, dir, logPath string
	ledger            *crashLedger
	clients           int

	start  func(round int) *crashServer // nil: startServer
	check  func(round int, url string)  // nil: nothing but checkCrashState
	during func(round int, url string) (afterKill func())
}

// newCrashRounds is the crash binary on a fresh data directory (crashData)
// with an empty ledger.
func newCrashRounds(t *testing.T, clients int) *crashRounds {
	t.Helper()
	bin := crashBinary(t)
	return &crashRounds{bin: bin, dir: crashData(t, bin), logPath: filepath.Join(t.TempDir(), "server.log"),
		ledger: newCrashLedger(), clients: clients}
}

func (c *crashRounds) run(t *testing.T, kills int) {
	t.Helper()
	seq := make([]int, c.clients)
	for round := 0; round <= kills; round++ {
		var srv *crashServer
		if c.start != nil {
			srv = c.start(round)
		} else {
			srv = startServer(t, c.bin, c.dir, c.logPath)
		}
		srv.waitReady(t, c.logPath)
		if c.check != nil {
			c.check(round, srv.url)
		}
		checkCrashState(t, srv.url, c.ledger)
		if t.Failed() {
			srv.kill(t) // not left running after the test
			log, _ := os.ReadFile(c.logPath)
			t.Fatalf("after %d kills (server log follows)\n%s", round, log)
		}
		if round == kills {
			srv.kill(t)
			break
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		ctx, cancel := context.WithCancel(context.Background())
		storm(ctx, srv.url, c.clients, c.ledger, seq, stop, &wg)
		after := c.during(round, srv.url)
		srv.kill(t)
		close(stop)
		cancel()
		wg.Wait()
		if after != nil {
			after()
		}
	}
}
