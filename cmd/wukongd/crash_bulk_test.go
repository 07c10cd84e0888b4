package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/client"
)

// The bulk crash harness (issue 12 item 6): the real server takes a big
// Graph Store POST of new data — new subjects, objects, predicates and a
// new class, on every shard — while a few clients send small writes, and
// is killed with SIGKILL at a random moment of the POST (reading the
// body, parsing, the write, the log record, the checkpoint after it) or
// just after. After each restart the POST's triples are there all or not
// at all (all if it got a 2xx), and every small write acknowledged before
// is there (checkCrashState).
//
// CI runs 3 kills of 20,000-triple POSTs on the small data set; make
// test-crash-bulk runs WUKONGD_CRASH_BULK_KILLS kills (default 20) of
// WUKONGD_CRASH_BULK_TRIPLES-triple POSTs (default 300,000) on LUBM-1.

// bulkBody returns POST i's body: n triples, n/2 subjects with a type (a
// class new to the store) and one of two predicates new to the store
// each, objects new IRIs or literals.
func bulkBody(i, n int) []byte {
	var b bytes.Buffer
	for k := range n {
		s := fmt.Sprintf("<http://bulk/%d/s%d>", i, k/2)
		switch k % 4 {
		case 0:
			fmt.Fprintf(&b, "%s <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://bulk/%d/C> .\n", s, i)
		case 1:
			fmt.Fprintf(&b, "%s <http://bulk/%d/a> <http://bulk/%d/o%d> .\n", s, i, i, (k*7919)%n)
		case 2:
			fmt.Fprintf(&b, "%s <http://bulk/%d/a> \"v%d\" .\n", s, i, k)
		default:
			fmt.Fprintf(&b, "%s <http://bulk/%d/b> <http://bulk/%d/s%d> .\n", s, i, i, (k*31)%(n/2))
		}
	}
	return b.Bytes()
}

// bulkCounts returns how many triples of POST i the server holds: with
// its class (the type triples), with predicate a and with predicate b.
func bulkCounts(t *testing.T, url string, i int) [3]int {
	t.Helper()
	cl := client.New(url + "/sparql")
	var out [3]int
	for j, pat := range []string{
		fmt.Sprintf("?s a <http://bulk/%d/C>", i),
		fmt.Sprintf("?s <http://bulk/%d/a> ?o", i),
		fmt.Sprintf("?s <http://bulk/%d/b> ?o", i),
	} {
		rows, err := cl.Select(context.Background(), "SELECT (COUNT(*) AS ?n) WHERE { "+pat+" }")
		if err != nil {
			t.Fatal(err)
		}
		if !rows.Next() {
			t.Fatalf("count of %s: no row (%v)", pat, rows.Err())
		}
		n, err := strconv.Atoi(rows.Row()[0].Value)
		rows.Close()
		if err != nil {
			t.Fatalf("count of %s: %v", pat, err)
		}
		out[j] = n
	}
	return out
}

// postBody POSTs body to the default graph; it reports whether it got a
// 2xx.
func postBody(url string, body []byte) (bool, error) {
	req, err := http.NewRequest(http.MethodPost, url+"/store?default", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/n-triples")
	req.Header.Set("Authorization", "Bearer "+crashToken)
	resp, err := (&http.Client{Timeout: 5 * time.Minute}).Do(req)
	if err != nil {
		return false, err // killed mid-request: unknown outcome
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return false, fmt.Errorf("POST /store: %s: %s", resp.Status, msg)
	}
	return true, nil
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q", name, v)
	}
	return n
}

func TestCrashBulkPost(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and kills servers")
	}
	kills := envInt(t, "WUKONGD_CRASH_BULK_KILLS", 3)
	n := envInt(t, "WUKONGD_CRASH_BULK_TRIPLES", 20000)
	n -= n % 4
	cr := newCrashRounds(t, 2)
	rng := rand.New(rand.NewPCG(2, uint64(time.Now().UnixNano())))
	acked := map[int]bool{} // POSTs with a 2xx
	var full time.Duration  // an uninterrupted POST's time
	var sent, landed, none, all int
	cr.check = func(_ int, url string) {
		none, all = 0, 0
		for i := range sent {
			c := bulkCounts(t, url, i)
			switch c {
			case [3]int{}:
				if acked[i] {
					t.Errorf("POST %d was acknowledged and is gone", i)
				}
				none++
			case [3]int{n / 4, n / 2, n / 4}:
				all++
			default:
				t.Errorf("POST %d is there in part: %v of %v (types, a, b)", i, c, [3]int{n / 4, n / 2, n / 4})
			}
		}
	}
	cr.during = func(round int, url string) func() {
		i := sent
		sent++
		body := bulkBody(i, n)
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			ok, err := postBody(url, body)
			if ok {
				acked[i] = true // read after <-done
			}
			done <- err
		}()
		if round == 0 {
			// The first POST runs to its end: its time sets the range
			// of the kills' moments.
			if err := <-done; err != nil {
				t.Fatalf("POST 0: %v", err)
			}
			full = time.Since(start)
			time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
			return nil
		}
		// A moment in the POST's first 110%: the body's transfer, the
		// parse, the write, the record, the reply.
		time.Sleep(time.Duration(rng.Int64N(int64(full) * 11 / 10)))
		return func() { // after the kill
			err := <-done
			if acked[i] {
				landed++
			} else if err != nil && !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "connection reset") && !strings.Contains(err.Error(), "refused") {
				t.Logf("POST %d: %v", i, err)
			}
		}
	}
	cr.run(t, kills)
	t.Logf("after the last restart: %d POSTs there in full, %d not at all", all, none)
	t.Logf("%d kills (the first after a whole POST, the others during %d-triple POSTs; an uninterrupted one took %v): %d of %d POSTs acknowledged before the kill; %d small writes acknowledged",
		kills, n, full.Round(time.Millisecond), landed+1, sent, cr.ledger.ackedCount)
	if cr.ledger.ackedCount == 0 {
		t.Fatal("no small write was acknowledged: the harness tested nothing of them")
	}
}
