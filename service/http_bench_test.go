package service

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wukongd/wukongd/bench"
	"github.com/wukongd/wukongd/client"
	"github.com/wukongd/wukongd/web"
)

// BenchmarkHTTPQueries measures the whole request path of LUBM queries on
// LUBM-1 (L4-L6 small, L2 and L7 a few thousand rows): client (form POST, JSON decoding of every row),
// web server and service, over loopback HTTP in one process. dials counts
// the TCP connections the client opened (1 when keep-alive works).
func BenchmarkHTTPQueries(b *testing.B) {
	st := lubm1Store(b, 4)
	s := newService(b, st, Options{Shards: 4})
	_, hs := serve(b, s, nil)
	for _, name := range []string{"q2", "q4", "q5", "q6", "q7"} {
		text, err := os.ReadFile(filepath.Join(lubmDir, "queries", "wukong", name+".rq"))
		if err != nil {
			b.Skip(err)
		}
		var dials atomic.Int64
		tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}
		c := client.New(hs.URL + "/sparql")
		c.HTTPClient = &http.Client{Transport: tr}
		b.Run("L"+name[1:], func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rows, err := c.Select(context.Background(), string(text))
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for rows.Next() {
					n++
				}
				if err := rows.Err(); err != nil || n == 0 {
					b.Fatal(n, err)
				}
				rows.Close()
			}
			b.ReportMetric(float64(dials.Load()), "dials")
		})
		tr.CloseIdleConnections()
	}
}

// BenchmarkServerPath measures the CPU a light query costs at each layer,
// on LUBM-1 over 4 shards with Wukong's light mix (each iteration the next
// template and constant, as bench-peers sends them): "backend" is
// Service.Query and the decoding of every row (the engine and the
// service), "handler" the web server's handler on top of it (gin, the
// middleware, the Protocol decoding, negotiation, the worker hand-off,
// metrics, the JSON writer), called with a form POST and a ResponseWriter
// that discards the body; "http" the same over loopback HTTP, the server
// in a process of its own and a client of raw requests (benchServerChild).
// cpu-µs/op is the process's CPU time per query (robust to other load);
// the web layer's own CPU is handler minus backend, the socket path's http
// minus handler.
func BenchmarkServerPath(b *testing.B) {
	st := lubm1Store(b, 4)
	s := newService(b, st, Options{Shards: 4})
	texts := mixTexts(b, s, 256)
	srv, err := web.New(web.Options{Backend: s, MaxRows: -1, Logger: zerolog.New(io.Discard).Level(zerolog.WarnLevel)})
	if err != nil {
		b.Fatal(err)
	}
	// Warm the shape cache: every template seen twice.
	for _, text := range texts {
		for k := 0; k < 2; k++ {
			if _, err := drainQuery(s, text); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("backend", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := processCPU()
		for i := 0; i < b.N; i++ {
			if _, err := drainQuery(s, texts[i%len(texts)]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
	})
	bodies := make([]string, len(texts))
	for i, t := range texts {
		bodies[i] = url.Values{"query": {t}}.Encode()
	}
	b.Run("handler", func(b *testing.B) {
		b.ReportAllocs()
		w := &discardWriter{h: http.Header{}}
		cpu0 := processCPU()
		for i := 0; i < b.N; i++ {
			req := httptest.NewRequest(http.MethodPost, "/sparql", strings.NewReader(bodies[i%len(bodies)]))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Accept", "application/sparql-results+json")
			w.reset()
			srv.ServeHTTP(w, req)
			if w.status != http.StatusOK || w.n == 0 {
				b.Fatalf("status %d, %d bytes", w.status, w.n)
			}
		}
		b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
	})
	b.Run("http", func(b *testing.B) {
		benchServerChild(b, texts)
	})
}

// serverChildEnv names the helper process of benchServerChild: set, the
// test TestServerPathChild serves LUBM-1 as BenchmarkServerPath's handler
// does, on a port it prints, until its stdin closes.
const serverChildEnv = "WUKONGD_SERVERPATH_CHILD"

// TestServerPathChild is the server process of BenchmarkServerPath/http;
// it is skipped unless serverChildEnv is set. With $serverChildEnv_PROFILE
// it writes a CPU profile of its serving there.
func TestServerPathChild(t *testing.T) {
	if os.Getenv(serverChildEnv) == "" {
		t.Skip("the server process of BenchmarkServerPath/http")
	}
	st := lubm1Store(t, 4)
	s := newService(t, st, Options{Shards: 4})
	srv, err := web.New(web.Options{Backend: s, MaxRows: -1, Logger: zerolog.New(io.Discard).Level(zerolog.WarnLevel)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// As serve serves (web.HTTPServer), or net/http alone with
	// WUKONGD_BENCH_NETHTTP set (the two compared in one binary).
	if os.Getenv("WUKONGD_BENCH_NETHTTP") != "" {
		hs := &http.Server{Handler: srv, ConnContext: web.ConnContext}
		go hs.Serve(ln)
		defer hs.Close()
	} else {
		hs := web.NewHTTPServer(srv, web.HTTPOptions{})
		go hs.Serve(ln)
		defer hs.Close()
	}
	if path := os.Getenv(serverChildEnv + "_PROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("ADDR %s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin) // until the benchmark closes it
}

// benchServerChild measures the light mix over loopback HTTP against the
// web server in a process of its own (TestServerPathChild, GOGC 400 as
// `wukongd serve` runs unless the environment says otherwise): the
// server's CPU is its process's (/proc/PID/stat), the client's this
// process's, so neither is charged with the other's scheduling.
func benchServerChild(b *testing.B, texts []string) {
	cmd := osexec.Command(os.Args[0], "-test.run", "^TestServerPathChild$")
	cmd.Env = append(os.Environ(), serverChildEnv+"=1")
	if os.Getenv("GOGC") == "" {
		cmd.Env = append(cmd.Env, "GOGC=400")
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	addr := ""
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		b.Fatal("the server process printed no address")
	}
	go io.Copy(io.Discard, stdout)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	reqs := rawRequests(texts)
	do := rawDoer(b, conn)
	for i := 0; i < 2*len(reqs); i++ {
		do(reqs[i%len(reqs)]) // learn every shape
	}
	b.ReportAllocs()
	b.ResetTimer()
	server0, client0 := procCPU(cmd.Process.Pid), processCPU()
	for i := 0; i < b.N; i++ {
		do(reqs[i%len(reqs)])
	}
	server, client := procCPU(cmd.Process.Pid)-server0, processCPU()-client0
	b.ReportMetric(float64(client.Nanoseconds())/1e3/float64(b.N), "client-cpu-µs/op")
	b.ReportMetric(float64(server.Nanoseconds())/1e3/float64(b.N), "server-cpu-µs/op")
}

// rawRequests makes the form POSTs of texts, as raw HTTP/1.1 requests.
func rawRequests(texts []string) [][]byte {
	reqs := make([][]byte, len(texts))
	for i, t := range texts {
		body := url.Values{"query": {t}}.Encode()
		reqs[i] = []byte(fmt.Sprintf("POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nAccept: application/sparql-results+json\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	}
	return reqs
}

// rawDoer returns a function that sends one raw request on conn and reads
// its whole response, failing b unless it is a 200 with a body.
func rawDoer(b *testing.B, conn net.Conn) func(req []byte) {
	br := bufio.NewReader(conn)
	return func(req []byte) {
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || n == 0 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
	}
}

// procCPU returns the user+system CPU time of process pid (/proc, in
// clock ticks of 10 ms; 0 when it cannot be read).
func procCPU(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	rest := string(raw)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// mixTexts draws n texts of Wukong's light mix over s's data.
func mixTexts(b testing.TB, s *Service, n int) []string {
	consts := map[string][]string{}
	for _, class := range bench.Classes(bench.WukongMix) {
		res, err := s.Query(context.Background(), &web.QueryRequest{Query: bench.InstancesQuery(class)})
		if err != nil {
			b.Fatal(err)
		}
		for res.Rows.Next() {
			consts[class] = append(consts[class], res.Rows.Row()[0].String())
		}
		res.Rows.Close()
	}
	mix, err := bench.NewMix(bench.WukongMix, consts)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 19))
	out := make([]string, n)
	for i := range out {
		_, out[i] = mix.Next(rng)
	}
	return out
}

// drainQuery runs text on the backend and decodes every row.
func drainQuery(s *Service, text string) (int, error) {
	res, err := s.Query(context.Background(), &web.QueryRequest{Query: text})
	if err != nil {
		return 0, err
	}
	defer res.Rows.Close()
	n := 0
	for res.Rows.Next() {
		n++
	}
	return n, res.Rows.Err()
}

// discardWriter is a ResponseWriter that keeps the status and counts the
// body.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *discardWriter) reset() {
	clear(w.h)
	w.status, w.n = 0, 0
}

func (w *discardWriter) Header() http.Header { return w.h }

func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

// SetWriteDeadline is what a connection's writer has (http.ResponseController).
func (w *discardWriter) SetWriteDeadline(time.Time) error { return nil }

func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}

// threadCPU returns the user+system CPU time of the calling thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU returns the user+system CPU time of this process.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHTTPTail measures the latency distribution of Wukong's light
// mix over loopback HTTP from one client of raw requests (LUBM-1, 4
// shards), and what the tail is made of: the garbage collector's share
// (GC cycles per 1,000 queries, the GC's CPU per query; p99 of the queries
// during which no GC cycle ended, "p99-nogc"; the share of the queries
// slower than the p99 that a GC cycle overlapped, "tail-gc-%") and the
// scheduler's (the p99 of the time runnable goroutines waited for a
// thread, runtime/metrics /sched/latencies, "sched-p99-µs"), under GOGC
// 100 (Go's default) and 400 (serve's default, cmd/wukongd), in rounds A
// B A B.
func BenchmarkHTTPTail(b *testing.B) {
	st := lubm1Store(b, 4)
	s := newService(b, st, Options{Shards: 4})
	texts := mixTexts(b, s, 512)
	srv, err := web.New(web.Options{Backend: s, MaxRows: -1, Logger: zerolog.New(io.Discard).Level(zerolog.WarnLevel)})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	reqs := rawRequests(texts)
	do := rawDoer(b, conn)
	for i := 0; i < 2*len(reqs); i++ {
		do(reqs[i%len(reqs)]) // learn every shape
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for round := 1; round <= 2; round++ {
		for _, gogc := range []int{100, 400} {
			b.Run(fmt.Sprintf("gogc=%d/round=%d", gogc, round), func(b *testing.B) {
				debug.SetGCPercent(gogc)
				runtime.GC()
				lat := make([]time.Duration, b.N)
				gcDuring := make([]bool, b.N)
				gc0, gcCPU0 := gcStats()
				sched0 := schedLatencies()
				cpu0 := processCPU()
				b.ResetTimer()
				prev := gc0
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					do(reqs[i%len(reqs)])
					lat[i] = time.Since(t0)
					// A GC cycle ended during this query.
					n := gcCycles()
					gcDuring[i] = n != prev
					prev = n
				}
				b.StopTimer()
				gc1, gcCPU1 := gcStats()
				sched := schedLatencies().sub(sched0)
				p99 := percentile(lat, 0.99)
				var quiet []time.Duration
				tail, tailGC := 0, 0
				for i, d := range lat {
					if d > p99 {
						tail++
						if gcDuring[i] || (i+1 < len(lat) && gcDuring[i+1]) {
							tailGC++
						}
					}
					if !gcDuring[i] {
						quiet = append(quiet, d)
					}
				}
				b.ReportMetric(us(percentile(lat, 0.5)), "p50-µs")
				b.ReportMetric(us(p99), "p99-µs")
				b.ReportMetric(us(percentile(lat, 0.999)), "p999-µs")
				b.ReportMetric(us(percentile(quiet, 0.99)), "p99-nogc-µs")
				if tail > 0 {
					b.ReportMetric(100*float64(tailGC)/float64(tail), "tail-gc-%")
				}
				b.ReportMetric(sched.quantile(0.99)*1e6, "sched-p99-µs")
				b.ReportMetric(float64(gc1-gc0)*1000/float64(b.N), "gc/1kq")
				b.ReportMetric((gcCPU1-gcCPU0)*1e6/float64(b.N), "gc-cpu-µs/op")
				b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// percentile returns the p-quantile of ds (ds is not changed).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(p*float64(len(ds))))]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// gcCycles returns the GC cycles completed so far.
func gcCycles() uint64 {
	ms := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(ms)
	return ms[0].Value.Uint64()
}

// latencyHist is a snapshot of a runtime/metrics histogram.
type latencyHist struct {
	counts  []uint64
	buckets []float64
}

// schedLatencies returns the histogram of the time goroutines waited,
// runnable, for a thread.
func schedLatencies() latencyHist {
	ms := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(ms)
	h := ms[0].Value.Float64Histogram()
	return latencyHist{counts: slices.Clone(h.Counts), buckets: h.Buckets}
}

func (h latencyHist) sub(o latencyHist) latencyHist {
	out := latencyHist{counts: slices.Clone(h.counts), buckets: h.buckets}
	for i := range out.counts {
		if i < len(o.counts) {
			out.counts[i] -= o.counts[i]
		}
	}
	return out
}

// quantile returns the upper bound of the bucket holding the q-quantile
// (seconds).
func (h latencyHist) quantile(q float64) float64 {
	var total uint64
	for _, c := range h.counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	want := uint64(q * float64(total))
	var run uint64
	for i, c := range h.counts {
		run += c
		if run > want {
			if math.IsInf(h.buckets[i+1], 1) {
				return h.buckets[i]
			}
			return h.buckets[i+1]
		}
	}
	return h.buckets[len(h.buckets)-1]
}

// gcStats returns the GC cycles so far and the GC's CPU seconds.
func gcStats() (uint64, float64) {
	ms := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(ms)
	return ms[0].Value.Uint64(), ms[1].Value.Float64()
}
