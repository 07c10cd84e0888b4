package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestCrashStoppedWriteRollback: a big INSERT DATA stopped at its
// deadline is answered at the deadline (+0.2 s) while its rollback goes
// on in the background under the write lock (service/write_stop.go);
// the server is killed with SIGKILL at a random moment of the 400 ms
// after that answer — during the rollback, or just after — while small
// writes go on. After each restart nothing of the stopped write is
// there, every small write acknowledged is (checkCrashState), and the
// server comes up.
func TestCrashStoppedWriteRollback(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and kills servers")
	}
	kills := envInt(t, "WUKONGD_CRASH_STOP_KILLS", 3)
	n := envInt(t, "WUKONGD_CRASH_STOP_TRIPLES", 60000)
	n -= n % 4
	cr := newCrashRounds(t, 2)
	rng := rand.New(rand.NewPCG(3, uint64(time.Now().UnixNano())))
	acked := map[int]bool{}
	var sent, stopped int
	cr.check = func(_ int, url string) {
		for i := range sent {
			c := bulkCounts(t, url, i)
			switch {
			case acked[i] && c != [3]int{n / 4, n / 2, n / 4}:
				t.Errorf("write %d was acknowledged and is not there in full: %v", i, c)
			case !acked[i] && c != [3]int{}:
				t.Errorf("write %d was stopped and something of it is there: %v (types, a, b)", i, c)
			}
		}
	}
	cr.during = func(_ int, srvURL string) func() {
		i := sent
		sent++
		// The deadline: a fraction of what the write needs, so that it is
		// stopped part-way (in its parse or its apply).
		body := "INSERT DATA {\n" + string(bulkBody(i, n)) + "}"
		form := url.Values{"update": {body}, "timeout": {fmt.Sprintf("%.2f", 0.05+rng.Float64()*0.3)}}
		req, _ := http.NewRequest(http.MethodPost, srvURL+"/sparql", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Bearer "+crashToken)
		resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			acked[i] = true // it beat its deadline
		} else {
			stopped++
			if resp.StatusCode != http.StatusServiceUnavailable && resp.StatusCode != http.StatusGatewayTimeout {
				t.Logf("write %d: %s: %s", i, resp.Status, msg)
			}
		}
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond) // the rollback runs now
		return nil
	}
	cr.run(t, kills)
	t.Logf("%d kills, each 0-400 ms after a %d-triple INSERT DATA was answered: %d stopped at their deadline, %d finished in time; %d small writes acknowledged",
		kills, n, stopped, sent-stopped, cr.ledger.ackedCount)
	if stopped == 0 {
		t.Fatal("no write was stopped: the harness tested no rollback")
	}
}
