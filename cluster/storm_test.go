package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// metric reads a gauge of node i's /metrics (-1: none).
func metric(p *Procs, i int, name string) float64 {
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(p.URL(i) + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, name+" ") {
			v, err := strconv.ParseFloat(strings.TrimPrefix(line, name+" "), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// postUpdate sends a SPARQL Update with the token; it returns the status.
func postUpdate(client *http.Client, base, text string) (int, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/update", strings.NewReader(url.Values{"update": {text}}.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer storm")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestClusterWriteStorm: 3 real processes; writers through all three and
// a reader on each; kill -9 of a follower, restart; kill -9 of the
// leader, restart. Every acknowledged write is on every node after
// catch-up, no write is applied twice (one version each), and no reader
// saw the count of written triples go down. WUKONGD_STORM_ROUNDS repeats
// the two kills (make test-cluster-crash).
func TestClusterWriteStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	rounds := 1
	if s := os.Getenv("WUKONGD_STORM_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	tmp := t.TempDir()
	bin := os.Getenv("WUKONGD_BIN")
	if bin == "" {
		bin = buildBinary(t, tmp)
	}
	dir := defaultSnapshot(t, 6)
	var out lockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := StartProcs(ctx, ProcsConfig{Binary: bin, Data: dir, Nodes: 3, Output: &out,
		Args: []string{"--update-token", "storm", "--commit-timeout", "3s", "--log-level", "warn"}})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	defer p.Stop()
	defer func() {
		if t.Failed() {
			t.Logf("node output:\n%s", out.String())
		}
	}()
	const q = `SELECT (COUNT(*) AS ?n) WHERE { ?s <http://ex.org/storm> ?o }`
	var (
		mu    sync.Mutex
		acked = map[string]bool{}
		stop  atomic.Bool
		wg    sync.WaitGroup
		seq   atomic.Int64
		fails atomic.Int64
	)
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			client := &http.Client{Timeout: 10 * time.Second}
			for !stop.Load() {
				k := seq.Add(1)
				s := fmt.Sprintf("http://ex.org/w%d", k)
				status, err := postUpdate(client, p.URL(w%3), fmt.Sprintf("INSERT DATA { <%s> <http://ex.org/storm> %d }", s, k))
				if err == nil && status/100 == 2 {
					mu.Lock()
					acked[s] = true
					mu.Unlock()
				} else {
					fails.Add(1)
					time.Sleep(20 * time.Millisecond)
				}
			}
		}(w)
	}
	var backwards atomic.Int64
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			client := &http.Client{Timeout: 10 * time.Second} // one keep-alive connection while the node lives
			last := -1
			for !stop.Load() {
				form := url.Values{"query": {q}}
				req, _ := http.NewRequest(http.MethodPost, p.URL(r)+"/sparql", strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Accept", "text/tab-separated-values")
				resp, err := client.Do(req)
				if err != nil {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				n, _ := strconv.Atoi(strings.Trim(strings.SplitN(lines[len(lines)-1], "^^", 2)[0], `"`))
				if n < last {
					backwards.Add(1)
					t.Errorf("reader on node %d saw %d written triples after %d", r, n, last)
				}
				last = n
			}
		}(r)
	}
	leader := func() int {
		for i := 0; i < 3; i++ {
			if p.Running(i) {
				if l := metric(p, i, "wukongd_raft_leader"); l >= 0 {
					return int(l)
				}
			}
		}
		return -1
	}
	restart := func(i int) {
		if err := p.Start(i); err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.WaitReady(wctx, i); err != nil {
			t.Fatalf("node %d after restart: %v", i, err)
		}
	}
	time.Sleep(2 * time.Second)
	for round := 0; round < rounds; round++ {
		l := leader()
		if l < 0 {
			t.Fatal("no leader")
		}
		follower := (l + 1) % 3
		t.Logf("round %d: killing follower %d (leader %d)", round, follower, l)
		p.Kill(follower)
		time.Sleep(1500 * time.Millisecond)
		restart(follower)
		time.Sleep(1500 * time.Millisecond)
		l = leader()
		t.Logf("round %d: killing leader %d", round, l)
		p.Kill(l)
		time.Sleep(2500 * time.Millisecond)
		restart(l)
		time.Sleep(1500 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	// Catch-up: every node at the same version.
	deadline := time.Now().Add(30 * time.Second)
	var v [3]float64
	for {
		for i := range v {
			v[i] = metric(p, i, "wukongd_cluster_version")
		}
		if v[0] > 0 && v[0] == v[1] && v[1] == v[2] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("versions did not converge: %v", v)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d acknowledged writes, %d failed or refused, final version %v", len(acked), fails.Load(), v[0])
	if len(acked) < 50 {
		t.Fatalf("only %d writes were acknowledged", len(acked))
	}
	for i := 0; i < 3; i++ {
		status, body, err := query(p.URL(i), `SELECT ?s WHERE { ?s <http://ex.org/storm> ?o }`, 30*time.Second)
		if err != nil || status != http.StatusOK {
			t.Fatalf("node %d: %d %v %s", i, status, err, body)
		}
		present := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(body), "\n")[1:] {
			present[strings.Trim(line, "<>")] = true
		}
		for s := range acked {
			if !present[s] {
				t.Errorf("node %d lost the acknowledged write %s", i, s)
			}
		}
		// One version per applied write: a write applied twice would
		// make two (the writes that timed out may or may not be there).
		if int(v[i]) != len(present) {
			t.Errorf("node %d: version %v for %d written triples", i, v[i], len(present))
		}
	}
}
