package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wukongd/wukongd/bench"
	"github.com/wukongd/wukongd/client"
)

func init() {
	register(&command{name: "bench-writes", summary: "measure writes against a running server (one-triple INSERT latency, concurrent writers, Graph Store POST)", run: runBenchWrites})
}

func runBenchWrites(args []string) error {
	fs := newFlagSet("bench-writes", "--url URL --token T [flags]", `
Drives a running wukongd serve (with --update-token) over HTTP and prints
what its writes cost:

  single     --n one-triple INSERT DATA requests one after another: p50, p99
  writers    --writers clients each sending one-triple INSERT DATA for
             --duration: update requests per second, p50 and p99; with
             --readers, that many clients run --queries for --quiet alone
             and then during the writers (latencies and errors, 429s
             counted, of both phases); with --readers-apart the readers
             run in a process of their own (this binary's readers mode)
  readers    (for --readers-apart) --readers clients run --queries from
             each line read on stdin to the next (or EOF), printing each
             such phase's latencies and errors as one JSON line
  delete     inserts --delete-n triples of one fresh predicate, then times a
             DELETE WHERE removing them all
  post       POSTs --file (N-Triples, optionally .gz, streamed) to the Graph
             Store endpoint's default graph: triples per second; with
             --readers, that many clients run --queries (L4-L6 by default)
             for --quiet before the POST and during it, and the latency
             of each query quiet and during the POST is printed

--mode picks which (comma-separated; default single,writers,delete).`)
	url := fs.String("url", "http://127.0.0.1:8080", "server base URL")
	token := fs.String("token", "", "update token (required)")
	modes := fs.String("mode", "single,writers,delete", "single, writers, delete, post (comma-separated)")
	n := fs.Int("n", 2000, "requests of the single mode")
	writers := fs.Int("writers", 16, "concurrent writers of the writers mode")
	dur := fs.Duration("duration", 10*time.Second, "length of the writers mode")
	deleteN := fs.Int("delete-n", 100000, "triples the delete mode removes")
	file := fs.String("file", "", "N-Triples file for the post mode (.gz allowed)")
	readers := fs.Int("readers", 0, "clients querying during the post or writers mode (0: none)")
	quiet := fs.Duration("quiet", 10*time.Second, "how long the readers of the post and writers modes run alone first")
	apart := fs.Bool("readers-apart", false, "with --readers in the writers mode: run the readers in a process of their own (bench-writes --mode readers), so that their latencies do not count the writers' client (its goroutines and GC share the readers' runtime)")
	slow := fs.Duration("slow", 0, "with --readers: print when during the POST the queries slower than this ran (0: not)")
	queries := fs.String("queries", "/work/shared/datasets/lubm/queries/wukong/q4.rq,/work/shared/datasets/lubm/queries/wukong/q5.rq,/work/shared/datasets/lubm/queries/wukong/q6.rq",
		"query files the post mode's readers run in turn (comma-separated)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *token == "" {
		return fmt.Errorf("bench-writes: --token is required")
	}
	base := strings.TrimSuffix(*url, "/")
	ep := bench.NewEndpoint(base+"/sparql", *writers+2)
	defer ep.Close()
	c := client.New(base + "/sparql")
	c.Token = *token
	c.HTTPClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *writers + 2}}
	ctx := context.Background()
	fmt.Printf("bench-writes %s, load %s\n", base, bench.ReadLoadAvg())
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	var seq atomic.Int64
	insert := func() (time.Duration, error) {
		i := seq.Add(1)
		q := fmt.Sprintf(`INSERT DATA { <http://bench.example/%s/s%d> <http://bench.example/p> "v%d" }`, run, i, i)
		t := time.Now()
		err := c.Update(ctx, q)
		return time.Since(t), err
	}
	for _, m := range strings.Split(*modes, ",") {
		switch strings.TrimSpace(m) {
		case "single":
			var lat []float64
			for i := 0; i < *n; i++ {
				d, err := insert()
				if err != nil {
					return err
				}
				lat = append(lat, float64(d)/1e6)
			}
			slices.Sort(lat)
			fmt.Printf("single: %d one-triple INSERT DATA: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", len(lat),
				bench.Percentile(lat, 50), bench.Percentile(lat, 99), lat[len(lat)-1])
		case "writers":
			runWriters := func() {
				var mu sync.Mutex
				var lat []float64
				var errs atomic.Int64
				stop := time.Now().Add(*dur)
				var wg sync.WaitGroup
				start := time.Now()
				for w := 0; w < *writers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var mine []float64
						for time.Now().Before(stop) {
							d, err := insert()
							if err != nil {
								errs.Add(1)
								continue
							}
							mine = append(mine, float64(d)/1e6)
						}
						mu.Lock()
						lat = append(lat, mine...)
						mu.Unlock()
					}()
				}
				wg.Wait()
				el := time.Since(start).Seconds()
				slices.Sort(lat)
				fmt.Printf("writers: %d writers, %d updates in %.1f s: %.0f updates/s, p50 %.3f ms, p99 %.3f ms, %d errors, load %s\n",
					*writers, len(lat), el, float64(len(lat))/el, bench.Percentile(lat, 50), bench.Percentile(lat, 99), errs.Load(), bench.ReadLoadAvg())
			}
			if *readers == 0 {
				runWriters()
				continue
			}
			// With --readers: the readers alone for --quiet, then during
			// the writers (their 429s and other errors counted).
			qs, err := readQueries(*queries)
			if err != nil {
				return err
			}
			var quietLat, during [][]float64
			var qerrs, derrs readerErrors
			if *apart {
				rp, err := startReaderProc(base, *token, *queries, *readers)
				if err != nil {
					return err
				}
				time.Sleep(*quiet)
				if quietLat, qerrs, err = rp.next(true); err != nil {
					return err
				}
				runWriters()
				if during, derrs, err = rp.next(false); err != nil {
					return err
				}
				fmt.Println("readers apart: in a process of their own")
			} else {
				quietLat, _, qerrs = runReaders(ctx, ep, qs, *readers, 0, func() { time.Sleep(*quiet) })
				during, _, derrs = runReaders(ctx, ep, qs, *readers, 0, runWriters)
			}
			printReaders("quiet", qs, quietLat, nil)
			printReaders("during the writers", qs, during, quietLat)
			fmt.Printf("readers' errors: quiet %d (%d of them 429), during the writers %d (%d of them 429)\n", qerrs.all, qerrs.busy, derrs.all, derrs.busy)
		case "readers":
			qs, err := readQueries(*queries)
			if err != nil {
				return err
			}
			in := bufio.NewScanner(os.Stdin)
			if !in.Scan() {
				continue
			}
			for more := true; more; {
				lat, _, errs := runReaders(ctx, ep, qs, max(*readers, 1), 0, func() { more = in.Scan() })
				b, err := json.Marshal(readerPhase{Lat: lat, All: errs.all, Busy: errs.busy})
				if err != nil {
					return err
				}
				fmt.Printf("%s\n", b)
			}
		case "delete":
			p := fmt.Sprintf("http://bench.example/%s/del", run)
			var b strings.Builder
			for i := 0; i < *deleteN; i++ {
				fmt.Fprintf(&b, "<http://bench.example/%s/d%d> <%s> \"%d\" .\n", run, i, p, i)
			}
			if err := postNT(ctx, base, *token, strings.NewReader(b.String())); err != nil {
				return err
			}
			t := time.Now()
			if err := c.Update(ctx, fmt.Sprintf("DELETE WHERE { ?s <%s> ?o }", p)); err != nil {
				return err
			}
			d := time.Since(t)
			cnt, err := ep.Select(ctx, fmt.Sprintf("SELECT ?s WHERE { ?s <%s> ?o } LIMIT 1", p))
			if err != nil {
				return err
			}
			fmt.Printf("delete: DELETE WHERE of %d triples: %.1f ms (%.0f triples/s), %d left\n", *deleteN, float64(d)/1e6, float64(*deleteN)/d.Seconds(), cnt)
		case "post":
			if *file == "" {
				return fmt.Errorf("bench-writes: the post mode needs --file")
			}
			f, err := os.Open(*file)
			if err != nil {
				return err
			}
			var r io.Reader = f
			if strings.HasSuffix(*file, ".gz") {
				if r, err = gzip.NewReader(f); err != nil {
					f.Close()
					return err
				}
			}
			var qs []namedQuery
			if *readers > 0 {
				if qs, err = readQueries(*queries); err != nil {
					f.Close()
					return err
				}
				quietLat, _, _ := runReaders(ctx, ep, qs, *readers, 0, func() { time.Sleep(*quiet) })
				printReaders("quiet", qs, quietLat, nil)
				cr := &countingReader{r: r}
				t := time.Now()
				var d time.Duration
				during, slowAt, _ := runReaders(ctx, ep, qs, *readers, *slow, func() {
					err = postNT(ctx, base, *token, cr)
					d = time.Since(t)
				})
				if *slow > 0 {
					printSlow(*slow, t, cr.eof, slowAt)
				}
				f.Close()
				if err != nil {
					return err
				}
				fmt.Printf("post: %s (%d bytes, %d lines) in %.2f s: %.1f MB/s, %.0f triples/s, load %s\n", *file, cr.n, cr.lines, d.Seconds(),
					float64(cr.n)/1e6/d.Seconds(), float64(cr.lines)/d.Seconds(), bench.ReadLoadAvg())
				printReaders("during the POST", qs, during, quietLat)
				continue
			}
			cr := &countingReader{r: r}
			t := time.Now()
			err = postNT(ctx, base, *token, cr)
			f.Close()
			if err != nil {
				return err
			}
			d := time.Since(t)
			fmt.Printf("post: %s (%d bytes, %d lines) in %.2f s: %.1f MB/s, %.0f triples/s\n", *file, cr.n, cr.lines, d.Seconds(),
				float64(cr.n)/1e6/d.Seconds(), float64(cr.lines)/d.Seconds())
		default:
			return fmt.Errorf("bench-writes: unknown mode %q", m)
		}
	}
	return nil
}

type countingReader struct {
	r        io.Reader
	n, lines int64
	eof      time.Time // when the body was read to its end
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.lines += int64(bytes.Count(p[:n], []byte{'\n'}))
	if err == io.EOF && c.eof.IsZero() {
		c.eof = time.Now()
	}
	return n, err
}

// slowQuery is a query slower than --slow: when it started, how long it
// took.
type slowQuery struct {
	at time.Time
	ms float64
}

// printSlow prints how many queries slower than slow started in each
// half-second of the POST (from start; the body was sent by eof), and
// the slowest of each.
func printSlow(slow time.Duration, start, eof time.Time, qs []slowQuery) {
	fmt.Printf("queries over %v during the POST (the body sent at %.1f s):", slow, eof.Sub(start).Seconds())
	bins := map[int][]float64{}
	last := 0
	for _, q := range qs {
		b := int(q.at.Sub(start) / (500 * time.Millisecond))
		bins[b] = append(bins[b], q.ms)
		last = max(last, b)
	}
	for b := 0; b <= last; b++ {
		if len(bins[b]) > 0 {
			fmt.Printf(" %.1fs:%d(max %.1f ms)", float64(b)/2, len(bins[b]), slices.Max(bins[b]))
		}
	}
	fmt.Println()
}

type namedQuery struct{ name, text string }

func readQueries(list string) ([]namedQuery, error) {
	var qs []namedQuery
	for _, p := range strings.Split(list, ",") {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		qs = append(qs, namedQuery{filepath.Base(p), string(b)})
	}
	return qs, nil
}

// runReaders runs n clients sending qs in turn while work runs, and
// returns the latencies (ms) of each query and the queries slower than
// slow (0: none kept).
func runReaders(ctx context.Context, ep *bench.Endpoint, qs []namedQuery, n int, slow time.Duration, work func()) ([][]float64, []slowQuery, readerErrors) {
	var stop atomic.Bool
	var nerr, nbusy atomic.Int64
	var mu sync.Mutex
	lat := make([][]float64, len(qs))
	var slowQs []slowQuery
	var wg sync.WaitGroup
	for c := 0; c < n; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([][]float64, len(qs))
			for i := c; !stop.Load(); i++ {
				k := i % len(qs)
				t := time.Now()
				if _, err := ep.Select(ctx, qs[k].text); err != nil {
					if nerr.Add(1) <= 5 {
						fmt.Fprintf(os.Stderr, "bench-writes: %s: %v\n", qs[k].name, err)
					}
					if strings.Contains(err.Error(), " 429 ") {
						nbusy.Add(1)
					}
					continue
				}
				d := time.Since(t)
				mine[k] = append(mine[k], float64(d)/1e6)
				if slow > 0 && d > slow {
					mu.Lock()
					slowQs = append(slowQs, slowQuery{t, float64(d) / 1e6})
					mu.Unlock()
				}
			}
			mu.Lock()
			for k := range mine {
				lat[k] = append(lat[k], mine[k]...)
			}
			mu.Unlock()
		}()
	}
	work()
	stop.Store(true)
	wg.Wait()
	for k := range lat {
		slices.Sort(lat[k])
	}
	return lat, slowQs, readerErrors{all: nerr.Load(), busy: nbusy.Load()}
}

// readerErrors counts the readers' failed queries (busy: answered 429).
type readerErrors struct{ all, busy int64 }

// readerPhase is what the readers mode prints of a phase: each query's
// latencies (ms, sorted) and the errors.
type readerPhase struct {
	Lat       [][]float64
	All, Busy int64
}

// readerProc is a readers mode process (--readers-apart): a line on its
// stdin starts a phase (and ends the one before), EOF ends the last.
type readerProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// startReaderProc starts this binary's readers mode with n clients of
// queries against base, and its first phase.
func startReaderProc(base, token, queries string, n int) (*readerProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "bench-writes", "--url", base, "--token", token, "--mode", "readers",
		"--readers", strconv.Itoa(n), "--queries", queries)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &readerProc{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	p.out.Buffer(make([]byte, 1<<20), 1<<30)
	if _, err := io.WriteString(in, "phase\n"); err != nil {
		return nil, err
	}
	return p, nil
}

// next ends the running phase and returns its latencies, starting
// another if again (else the process ends).
func (p *readerProc) next(again bool) ([][]float64, readerErrors, error) {
	var err error
	if again {
		_, err = io.WriteString(p.in, "phase\n")
	} else {
		err = p.in.Close()
	}
	if err != nil {
		return nil, readerErrors{}, err
	}
	for p.out.Scan() {
		line := p.out.Bytes()
		if len(line) == 0 || line[0] != '{' { // its banner
			continue
		}
		var ph readerPhase
		if err := json.Unmarshal(line, &ph); err != nil {
			return nil, readerErrors{}, fmt.Errorf("bench-writes: the readers' process: %w", err)
		}
		if !again {
			err = p.cmd.Wait()
		}
		return ph.Lat, readerErrors{all: ph.All, busy: ph.Busy}, err
	}
	if err := p.out.Err(); err != nil {
		return nil, readerErrors{}, err
	}
	return nil, readerErrors{}, fmt.Errorf("bench-writes: the readers' process ended early: %v", p.cmd.Wait())
}

func printReaders(phase string, qs []namedQuery, lat, quiet [][]float64) {
	for k, q := range qs {
		if len(lat[k]) == 0 {
			fmt.Printf("readers %s: %s: no answers\n", phase, q.name)
			continue
		}
		p99 := bench.Percentile(lat[k], 99)
		line := fmt.Sprintf("readers %s: %s: %d queries, p50 %.2f ms, p99 %.2f ms, max %.2f ms", phase, q.name, len(lat[k]),
			bench.Percentile(lat[k], 50), p99, lat[k][len(lat[k])-1])
		if quiet != nil && len(quiet[k]) > 0 {
			line += fmt.Sprintf(" (p99 %.2f× quiet)", p99/bench.Percentile(quiet[k], 99))
		}
		fmt.Println(line)
	}
}

// postNT POSTs N-Triples to the Graph Store endpoint's default graph.
func postNT(ctx context.Context, base, token string, body io.Reader) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/store?default", body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/n-triples")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST /store: %s: %s", resp.Status, msg)
	}
	return nil
}
