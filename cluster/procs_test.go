package cluster

import (
	"bytes"
	"context"
	"fmt"
	"github.com/wukongd/wukongd/internal/shareddata"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
)

// repoRoot walks up from the working directory to the directory of go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// lubmDir returns the shared LUBM directory (../shared/datasets/lubm from
// the repository root), skipping the test when it is absent.
func lubmDir(t testing.TB) string {
	t.Helper()
	dir := shareddata.Path("datasets", "lubm")
	if _, err := os.Stat(filepath.Join(dir, "lubm1.nt.gz")); err != nil {
		t.Skipf("LUBM data not available: %v", err)
	}
	return dir
}

// buildBinary builds wukongd into dir.
// serverBinary is $WUKONGD_BIN (the Makefile's built binary) when set,
// else a wukongd built into dir.
func serverBinary(t testing.TB, dir string) string {
	if bin := os.Getenv("WUKONGD_BIN"); bin != "" {
		return bin
	}
	return buildBinary(t, dir)
}

func buildBinary(t testing.TB, dir string) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	bin := filepath.Join(dir, "wukongd")
	cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/wukongd")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type lubmQuery struct {
	name, text, want string
}

// lubmQueries reads the LUBM queries with their LUBM-1 reference answers
// (TSV, header then rows sorted bytewise).
func lubmQueries(t testing.TB, dir string) []lubmQuery {
	t.Helper()
	var qs []lubmQuery
	for _, set := range []string{"wukong", "std"} {
		files, _ := filepath.Glob(filepath.Join(dir, "queries", set, "*.rq"))
		for _, f := range files {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			base := strings.TrimSuffix(filepath.Base(f), ".rq")
			want, err := os.ReadFile(filepath.Join(dir, "answers", "lubm1", set, base+".tsv"))
			if err != nil {
				t.Fatal(err)
			}
			qs = append(qs, lubmQuery{set + "/" + base, string(text), string(bytes.TrimRight(want, "\n")) + "\n"})
		}
	}
	if len(qs) < 20 {
		t.Fatalf("found %d LUBM queries", len(qs))
	}
	return qs
}

// query runs a SELECT over HTTP and returns the HTTP status and the TSV
// body with its rows sorted (the reference answers' form).
func query(base, text string, timeout time.Duration) (int, string, error) {
	form := url.Values{"query": {text}, "timeout": {fmt.Sprint(timeout.Seconds())}}
	req, err := http.NewRequest(http.MethodPost, base+"/sparql", strings.NewReader(form.Encode()))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/tab-separated-values")
	client := &http.Client{Timeout: timeout + 10*time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, string(b), nil
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	sort.Strings(lines[1:])
	return resp.StatusCode, strings.Join(lines, "\n") + "\n", nil
}

// checkAnswers runs every query, on node i mod n for query i, and compares.
func checkAnswers(t *testing.T, p *Procs, nodes int, qs []lubmQuery, what string) {
	t.Helper()
	for i, q := range qs {
		status, got, err := query(p.URL(i%nodes), q.text, 30*time.Second)
		if err != nil || status != http.StatusOK {
			t.Errorf("%s: %s on node %d: status %d, %v: %s", what, q.name, i%nodes, status, err, got)
			continue
		}
		if got != q.want {
			t.Errorf("%s: %s on node %d: %d rows, want %d", what, q.name, i%nodes,
				strings.Count(got, "\n")-1, strings.Count(q.want, "\n")-1)
		}
	}
}

func get(url string) (int, error) {
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestClusterProcesses starts 3 wukongd processes over a 6-shard LUBM-1
// snapshot and checks every LUBM query against the reference answers in
// every execution mode; then it kills a node, checks that a query needing
// it fails within its deadline while the other nodes serve on, restarts
// it and checks the answers again.
func TestClusterProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	lubm := lubmDir(t)
	qs := lubmQueries(t, lubm)
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	snap := filepath.Join(tmp, "snap")
	if out, err := exec.Command(bin, "load", "--shards", "6", "--out", snap, filepath.Join(lubm, "lubm1.nt.gz")).CombinedOutput(); err != nil {
		t.Fatalf("wukongd load: %v\n%s", err, out)
	}
	const nodes = 3
	var logs lockedBuffer
	start := func(mode string) *Procs {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		p, err := StartProcs(ctx, ProcsConfig{Binary: bin, Data: snap, Nodes: nodes,
			Args: []string{"--mode", mode, "--log-level", "warn"}, Output: &logs})
		if err != nil {
			t.Fatalf("%v\n%s", err, logs.String())
		}
		t.Cleanup(func() { p.Stop() })
		return p
	}
	for _, mode := range []string{"in-place", "fork-join"} {
		p := start(mode)
		checkAnswers(t, p, nodes, qs, mode)
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
	}

	p := start("auto")
	checkAnswers(t, p, nodes, qs, "auto")

	// A query on one vertex owned by node 0 or 1 needs no other node.
	st, err := graphstore.OpenSnapshot(snap, graphstore.OpenOptions{SkipChecksums: true})
	if err != nil {
		t.Fatal(err)
	}
	var local string
	for d := 0; d < 15 && local == ""; d++ {
		iri := fmt.Sprintf("http://www.Department%d.University0.edu", d)
		if id, ok := st.Dict().Lookup(rdf.NewIRI(iri)); ok && st.Owner(id)%nodes != 2 {
			local = fmt.Sprintf("SELECT ?p ?o WHERE { <%s> ?p ?o }", iri)
		}
	}
	st.Close()
	if local == "" {
		t.Fatal("no department owned by node 0 or 1")
	}
	_, localWant, err := query(p.URL(0), local, 10*time.Second)
	if err != nil || strings.Count(localWant, "\n") < 2 {
		t.Fatalf("local query: %v %q", err, localWant)
	}

	if err := p.Kill(2); err != nil {
		t.Fatal(err)
	}
	// The two queries with the most answers read or fork to every node.
	big := append([]lubmQuery(nil), qs...)
	sort.Slice(big, func(i, j int) bool { return strings.Count(big[i].want, "\n") > strings.Count(big[j].want, "\n") })
	const deadline = 5 * time.Second
	for _, q := range big[:2] {
		t0 := time.Now()
		status, body, err := query(p.URL(0), q.text, deadline)
		elapsed := time.Since(t0)
		if err != nil {
			t.Fatalf("%s with node 2 down: %v", q.name, err)
		}
		if status == http.StatusOK {
			t.Fatalf("%s with node 2 down: 200 OK", q.name)
		}
		if elapsed > deadline+2*time.Second {
			t.Fatalf("%s with node 2 down failed after %v, past its %v deadline", q.name, elapsed, deadline)
		}
		t.Logf("%s with node 2 down: status %d after %v: %s", q.name, status, elapsed.Round(time.Millisecond), strings.TrimSpace(body))
		if !(status == http.StatusGatewayTimeout || status == http.StatusServiceUnavailable && strings.Contains(body, "node down")) {
			t.Errorf("%s with node 2 down: the error does not say a node is down: %s", q.name, body)
		}
	}
	for i := 0; i < 2; i++ {
		if code, err := get(p.URL(i) + "/healthz"); err != nil || code != http.StatusOK {
			t.Fatalf("node %d /healthz with node 2 down: %d %v", i, code, err)
		}
		if code, err := get(p.URL(i) + "/readyz"); err != nil || code != http.StatusServiceUnavailable {
			t.Errorf("node %d /readyz with node 2 down: %d %v, want 503", i, code, err)
		}
		status, got, err := query(p.URL(i), local, 10*time.Second)
		if err != nil || status != http.StatusOK || got != localWant {
			t.Errorf("node %d, a query not needing node 2: status %d, %v: %q", i, status, err, got)
		}
	}

	if err := p.Start(2); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < nodes; i++ {
		if err := p.WaitReady(ctx, i); err != nil {
			t.Fatalf("%v\n%s", err, logs.String())
		}
	}
	checkAnswers(t, p, nodes, qs, "auto, after node 2 restarted")
	if t.Failed() {
		t.Logf("node output:\n%s", logs.String())
	}
}

// lockedBuffer is a buffer written by the processes' output copiers and
// read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
