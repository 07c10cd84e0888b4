package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wukongd/wukongd/client"
	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/internal/shareddata"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/service"
)

// The crash harness: the real wukongd binary serves a data directory with
// durable writes; concurrent clients send a storm of multi-triple writes
// and note which got a 2xx; the server is killed with SIGKILL at random
// moments (during writes, and sometimes during its recovery) and
// restarted. After every restart: the server comes up, every
// acknowledged write is there, and no request is there in part.
//
// In CI it runs a few kills on a small data set. make test-crash runs the
// long version: WUKONGD_CRASH_KILLS kills (default 3), on LUBM-1 with
// WUKONGD_CRASH_LUBM1=1, with the binary WUKONGD_BIN (default: this test
// binary, which runs as wukongd: see TestMain).

const crashToken = "crash-token"

// TestMain runs the test binary as wukongd when the crash harness
// starts it as a server (WUKONGD_AS_MAIN=1): the same code as the
// binary's main, without a go build in every test run.
func TestMain(m *testing.M) {
	if os.Getenv("WUKONGD_AS_MAIN") == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// crashBinary returns the wukongd binary to run: WUKONGD_BIN (make
// test-crash passes bin/wukongd), else this test binary as wukongd.
func crashBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("WUKONGD_BIN"); bin != "" {
		return bin
	}
	os.Setenv("WUKONGD_AS_MAIN", "1") // inherited by the servers started
	t.Cleanup(func() { os.Unsetenv("WUKONGD_AS_MAIN") })
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// crashServer is one run of the server.
type crashServer struct {
	cmd  *exec.Cmd
	url  string
	done chan error
}

// startServer starts serve on dir and returns once it listens (it may
// still be recovering).
func startServer(t *testing.T, bin, dir, logPath string) *crashServer {
	t.Helper()
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	// A small checkpoint threshold: compactions (a new snapshot, the log
	// retired) run all through the storm, so kills land in them too.
	// Checkpoints of the delta every few hundred triples, a compaction
	// (new snapshot) every few thousand: kills land in both.
	cmd := exec.Command(bin, "serve", "--data", dir, "--update-token", crashToken, "--addr", "127.0.0.1:0", "--log-level", "warn",
		"--checkpoint-log-triples", crashCheckpoint(), "--compact-log-triples", crashCompact())
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &crashServer{cmd: cmd, done: make(chan error, 1)}
	urlc := make(chan string, 1)
	go func() {
		defer logf.Close() // the server's stdout is copied to the log until it exits
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if rest, ok := strings.CutPrefix(line, "wukongd serving on "); ok {
				urlc <- strings.Fields(rest)[0]
			}
		}
	}()
	go func() { s.done <- cmd.Wait() }()
	select {
	case s.url = <-urlc:
		return s
	case err := <-s.done:
		log, _ := os.ReadFile(logPath)
		t.Fatalf("the server exited before listening: %v\n%s", err, log)
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("the server did not listen within 2 minutes")
	}
	return nil
}

// readyServer starts a server on a fresh crashData directory, waits
// until it is ready and kills it when the test ends: it returns the
// binary, the directory and the server.
func readyServer(t *testing.T) (string, string, *crashServer) {
	t.Helper()
	bin := crashBinary(t)
	dir := crashData(t, bin)
	logPath := filepath.Join(t.TempDir(), "server.log")
	srv := startServer(t, bin, dir, logPath)
	t.Cleanup(func() { srv.kill(t) })
	srv.waitReady(t, logPath)
	return bin, dir, srv
}

// waitReady polls /readyz until 200.
func (s *crashServer) waitReady(t *testing.T, logPath string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-s.done:
			log, _ := os.ReadFile(logPath)
			t.Fatalf("the server exited while recovering: %v\n%s", err, log)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("the server was not ready within 2 minutes")
}

func (s *crashServer) kill(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	<-s.done
}

// crashLedger is what the clients know about their writes. A request
// inserts three triples about one resource (r/C/N a, b, c); a later
// request of the same client may delete those three and insert a marker
// (d/C/N deleted r/C/N) in one request.
func newCrashLedger() *crashLedger {
	return &crashLedger{acked: map[string]bool{}, delSent: map[string]bool{}, delAcked: map[string]bool{}, seen: map[string]bool{}}
}

type crashLedger struct {
	mu         sync.Mutex
	acked      map[string]bool // inserts with a 2xx
	delSent    map[string]bool // deletes sent (outcome unknown without a 2xx)
	delAcked   map[string]bool
	seen       map[string]bool // resources found after some restart
	ackedCount int
}

// crashCheckpoint is serve's --checkpoint-log-triples in the harness
// ($WUKONGD_CRASH_CHECKPOINT, default 400: a compaction every hundred
// requests or so).
func crashCheckpoint() string {
	if v := os.Getenv("WUKONGD_CRASH_CHECKPOINT"); v != "" {
		return v
	}
	return "400"
}

// crashCompact is serve's --compact-log-triples in the harness
// ($WUKONGD_CRASH_COMPACT, default 3000: a compaction every ten or so
// checkpoints).
func crashCompact() string {
	if v := os.Getenv("WUKONGD_CRASH_COMPACT"); v != "" {
		return v
	}
	return "3000"
}

// damageCheckpoint damages the newest checkpoint of dir, if there is
// one: a byte of one of its files flipped, or the file cut short (a
// restart must fall back to the one before, or the snapshot and the
// whole log). It returns what it did ("" nothing).
func damageCheckpoint(t *testing.T, dir string, rng *rand.Rand) string {
	t.Helper()
	root := filepath.Join(dir, service.CheckpointDir)
	ents, _ := os.ReadDir(root)
	var newest uint64
	var name string
	for _, e := range ents {
		if v, ok := graphstore.CheckpointVersionOf(e.Name()); ok && v >= newest {
			newest, name = v, e.Name()
		}
	}
	if name == "" {
		return ""
	}
	var files []string
	filepath.Walk(filepath.Join(root, name), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && fi.Size() > 0 {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		return ""
	}
	f := files[rng.IntN(len(files))]
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if rng.IntN(2) == 0 {
		b[rng.IntN(len(b))] ^= 1 << rng.IntN(8)
		os.WriteFile(f, b, 0o644)
		return "flipped a byte of " + f
	}
	os.WriteFile(f, b[:rng.IntN(len(b))], 0o644)
	return "cut short " + f
}

func resource(c, n int) string { return fmt.Sprintf("http://crash/r/%d/%d", c, n) }

// storm runs clients until stop is closed.
func storm(ctx context.Context, url string, clients int, l *crashLedger, seq []int, stop <-chan struct{}, wg *sync.WaitGroup) {
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := client.New(url + "/sparql")
			cl.Token = crashToken
			cl.HTTPClient = &http.Client{Timeout: 30 * time.Second}
			rng := rand.New(rand.NewPCG(uint64(c), uint64(time.Now().UnixNano())))
			for {
				select {
				case <-stop:
					return
				default:
				}
				l.mu.Lock()
				var victim string
				if rng.IntN(5) == 0 {
					for r := range l.acked {
						if !l.delSent[r] && strings.HasPrefix(r, fmt.Sprintf("http://crash/r/%d/", c)) {
							victim = r
							break
						}
					}
				}
				var u, r string
				if victim != "" {
					l.delSent[victim] = true
					r = victim
					v := strings.TrimPrefix(victim, "http://crash/r/")
					u = fmt.Sprintf(`DELETE DATA { <%s> <http://crash/a> "%s" ; <http://crash/b> "%s" ; <http://crash/c> "%s" } ;
INSERT DATA { <http://crash/d/%s> <http://crash/deleted> <%s> }`, victim, v, v, v, v, victim)
				} else {
					seq[c]++
					r = resource(c, seq[c])
					v := strings.TrimPrefix(r, "http://crash/r/")
					u = fmt.Sprintf(`INSERT DATA { <%s> <http://crash/a> "%s" ; <http://crash/b> "%s" ; <http://crash/c> "%s" }`, r, v, v, v)
				}
				l.mu.Unlock()
				err := cl.Update(ctx, u)
				if err != nil {
					// Unknown outcome (killed mid-request), or refused: keep going
					// until stop.
					time.Sleep(5 * time.Millisecond)
					continue
				}
				l.mu.Lock()
				if victim != "" {
					l.delAcked[r] = true
				} else {
					l.acked[r] = true
					l.ackedCount++
				}
				l.mu.Unlock()
			}
		}()
	}
}

// checkCrashState reads the default graph and checks the ledger's
// invariants.
func checkCrashState(t *testing.T, url string, l *crashLedger) {
	t.Helper()
	cl := client.New(url + "/sparql")
	tr, err := cl.GetGraph(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	all, err := tr.All()
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]map[string]string{} // resource → predicate → value
	markers := map[string]bool{}            // resources with a deletion marker
	for _, x := range all {
		switch {
		case strings.HasPrefix(x.S.Value, "http://crash/r/"):
			if props[x.S.Value] == nil {
				props[x.S.Value] = map[string]string{}
			}
			props[x.S.Value][x.P.Value] = x.O.Value
		case strings.HasPrefix(x.S.Value, "http://crash/d/"):
			markers[x.O.Value] = true
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for r, ps := range props {
		v := strings.TrimPrefix(r, "http://crash/r/")
		if len(ps) != 3 || ps["http://crash/a"] != v || ps["http://crash/b"] != v || ps["http://crash/c"] != v {
			t.Errorf("request for %s is there in part: %v", r, ps)
		}
		if markers[r] {
			t.Errorf("%s is there and marked deleted: a delete request applied in part", r)
		}
		l.seen[r] = true
	}
	for r := range markers {
		if !l.delSent[r] {
			t.Errorf("%s is marked deleted, but no delete was sent", r)
		}
		if props[r] != nil {
			continue // reported above
		}
	}
	for r := range l.acked {
		present := props[r] != nil
		switch {
		case l.delAcked[r]:
			if present || !markers[r] {
				t.Errorf("the acknowledged delete of %s is lost (present %v, marker %v)", r, present, markers[r])
			}
		case l.delSent[r]:
			if present == markers[r] {
				t.Errorf("the delete of %s applied in part (present %v, marker %v)", r, present, markers[r])
			}
		case !present:
			t.Errorf("the acknowledged insert of %s is lost", r)
		}
	}
	for r := range l.seen {
		if props[r] == nil && !markers[r] && !l.delSent[r] {
			t.Errorf("%s was there after an earlier restart and is gone", r)
		}
	}
}

// crashData makes the data directory: a small generated snapshot, or
// LUBM-1 loaded with the binary.
func crashData(t *testing.T, bin string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	if os.Getenv("WUKONGD_CRASH_LUBM1") != "" {
		src := shareddata.Path("datasets", "lubm", "lubm1.nt.gz")
		if _, err := os.Stat(src); err != nil {
			t.Skipf("no LUBM-1 at %s", src)
		}
		cmd := exec.Command(bin, "load", "--out", dir, src)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("load: %v\n%s", err, out)
		}
		return dir
	}
	st, err := service.BuildStore(4, func(emit func(rdf.Triple) error) error {
		for i := 0; i < 2000; i++ {
			s := rdf.NewIRI(fmt.Sprintf("http://base/s%d", i))
			if err := emit(rdf.Triple{S: s, P: rdf.NewIRI("http://base/p"), O: rdf.NewIRI(fmt.Sprintf("http://base/s%d", (i*7)%2000))}); err != nil {
				return err
			}
			if err := emit(rdf.Triple{S: s, P: rdf.NewIRI(rdf.RDFType), O: rdf.NewIRI("http://base/C")}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := graphstore.WriteSnapshot(dir, st); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCrashHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and kills servers")
	}
	kills := 3
	if v := os.Getenv("WUKONGD_CRASH_KILLS"); v != "" {
		var err error
		if kills, err = strconv.Atoi(v); err != nil {
			t.Fatalf("WUKONGD_CRASH_KILLS=%q", v)
		}
	}
	cr := newCrashRounds(t, 8)
	dir, ledger := cr.dir, cr.ledger
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	duringRecovery, damaged, tornCkpt := 0, 0, 0
	torn := map[string]bool{}
	cr.start = func(round int) *crashServer {
		m, _ := filepath.Glob(filepath.Join(dir, service.CheckpointDir, "*.tmp-*"))
		for _, p := range m {
			if !torn[p] {
				torn[p] = true // the kill came while this checkpoint was being written
				tornCkpt++
			}
		}
		if round > 0 && rng.IntN(4) == 0 {
			if what := damageCheckpoint(t, dir, rng); what != "" {
				t.Logf("round %d: %s", round, what)
				damaged++
			}
		}
		srv := startServer(t, cr.bin, dir, cr.logPath)
		if round > 0 && round < kills && rng.IntN(5) == 0 {
			// Kill it while it recovers (or just after).
			time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
			srv.kill(t)
			duringRecovery++
			srv = startServer(t, cr.bin, dir, cr.logPath)
		}
		return srv
	}
	cr.during = func(int, string) func() {
		time.Sleep(time.Duration(100+rng.IntN(900)) * time.Millisecond)
		return nil
	}
	cr.run(t, kills)
	log, _ := os.ReadFile(cr.logPath)
	compactions := strings.Count(string(log), "wukongd: compacted version ")
	checkpoints := strings.Count(string(log), "wukongd: checkpoint of version ")
	if testing.Verbose() {
		for _, line := range strings.Split(string(log), "\n") {
			if strings.Contains(line, "checkpoint") || strings.Contains(line, "compacted") {
				t.Log(line)
			}
		}
	}
	loaded := strings.Count(string(log), "wukongd: loaded checkpoint ")
	refused := strings.Count(string(log), "wukongd: checkpoint not used: ")
	t.Logf("%d kills (%d during recovery), %d acknowledged inserts, %d acknowledged deletes, %d resources seen, %d checkpoints and %d compactions completed; restarts loaded a checkpoint %d times, refused %d (%d damaged by the harness); %d kills during a checkpoint's write",
		kills, duringRecovery, ledger.ackedCount, len(ledger.delAcked), len(ledger.seen), checkpoints, compactions, loaded, refused, damaged, tornCkpt)
	if ledger.ackedCount == 0 {
		t.Fatal("no write was acknowledged: the harness tested nothing")
	}
}

func TestSecondServerRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns servers")
	}
	bin, dir, srv := readyServer(t)
	for _, args := range [][]string{
		{"serve", "--data", dir, "--update-token", crashToken, "--addr", "127.0.0.1:0"},
		{"serve", "--data", dir, "--addr", "127.0.0.1:0"}, // read-only, but the directory has a log to replay
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, bin, args...)
		out, err := cmd.CombinedOutput()
		cancel()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%v: a second server on %s: %v\n%s", args, dir, err, out)
		}
		want := fmt.Sprintf("is locked by process %d", srv.cmd.Process.Pid)
		if !strings.Contains(string(out), "in use by another process") || !strings.Contains(string(out), want) {
			t.Fatalf("%v: the refusal does not say why (want %q):\n%s", args, want, out)
		}
	}
	// The first server still serves.
	resp, err := http.Get(srv.url + "/readyz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the first server after the refusals: %v %v", err, resp)
	}
	resp.Body.Close()
}

func TestLoadRefusesADataDirWithALog(t *testing.T) {
	bin := crashBinary(t)
	dir := crashData(t, bin)
	if err := os.MkdirAll(filepath.Join(dir, service.LogDir), 0o755); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, service.LogDir, "00000000000000000001.wal")
	if err := os.WriteFile(seg, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "in.nt")
	os.WriteFile(src, []byte("<http://x/s> <http://x/p> <http://x/o> .\n"), 0o644)
	err := runLoad([]string{"--out", dir, src})
	if err == nil || !strings.Contains(err.Error(), "write-ahead log") {
		t.Fatalf("load over a data directory with a log: %v", err)
	}
	if _, err := os.Stat(seg); err != nil {
		t.Fatalf("the log is gone: %v", err)
	}
}
