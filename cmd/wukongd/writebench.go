package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func init() {
	register(&command{name: "writebench", summary: "measure update latency and throughput against a server", run: runWriteBench})
}

func runWriteBench(args []string) error {
	fs := newFlagSet("writebench", "--url URL --token T [--writers N] [--requests N | --duration D] [--triples N]", `
Sends SPARQL Update requests (INSERT DATA of --triples new triples each, on
new subjects) to URL/update from --writers concurrent clients, and reports
the requests per second and the latency percentiles of the 2xx answers.
--url may list several servers (comma-separated, the nodes of a cluster):
writer w sends to the (w mod count)-th.
Every request inserts distinct triples, so the store grows by
writers×requests×triples.`)
	url := fs.String("url", "http://127.0.0.1:8080", "server base URL (or several, comma-separated: writers go to them in turn)")
	token := fs.String("token", "", "update token (serve --update-token)")
	writers := fs.Int("writers", 1, "concurrent clients")
	requests := fs.Int("requests", 1000, "requests per client (ignored with --duration)")
	duration := fs.Duration("duration", 0, "run for this long instead of --requests")
	triples := fs.Int("triples", 1, "triples per request")
	warmup := fs.Int("warmup", 20, "requests per client before measuring")
	tag := fs.String("tag", "", "subject prefix (default: from the time)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *tag == "" {
		*tag = fmt.Sprintf("wb%d", time.Now().UnixNano())
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *writers + 1}, Timeout: 5 * time.Minute}
	urls := strings.Split(*url, ",")
	send := func(w, i int) error {
		var b strings.Builder
		b.WriteString("INSERT DATA {\n")
		for k := 0; k < *triples; k++ {
			fmt.Fprintf(&b, "<http://writebench/%s/%d/%d/%d> <http://writebench/p> %d .\n", *tag, w, i, k, k)
		}
		b.WriteString("}")
		req, err := http.NewRequestWithContext(context.Background(), "POST", urls[(w+len(urls))%len(urls)]+"/update", strings.NewReader(b.String()))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/sparql-update")
		req.Header.Set("Authorization", "Bearer "+*token)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		}
		return nil
	}
	for i := 0; i < *warmup; i++ {
		if err := send(-1, i); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	var mu sync.Mutex
	var lat []time.Duration
	var errs atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(*duration)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < *writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := 0; ; i++ {
				if *duration > 0 {
					if time.Now().After(deadline) {
						break
					}
				} else if i >= *requests {
					break
				}
				t0 := time.Now()
				if err := send(w, i); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	fmt.Printf("writebench: %d writers × %d-triple INSERT DATA: %d ok, %d failed in %s: %.0f updates/s, %.0f triples/s\n",
		*writers, *triples, len(lat), errs.Load(), elapsed.Round(time.Millisecond),
		float64(len(lat))/elapsed.Seconds(), float64(len(lat)**triples)/elapsed.Seconds())
	fmt.Printf("latency: p50 %s  p90 %s  p99 %s  max %s\n", pct(0.50), pct(0.90), pct(0.99), pct(1))
	if e := firstErr.Load(); e != nil {
		fmt.Fprintf(os.Stderr, "first error: %v\n", e)
	}
	if len(lat) == 0 {
		return fmt.Errorf("no request succeeded")
	}
	return nil
}
