package service

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/web"
)

// BenchmarkLightLUBM40 measures the server's own cost of the light
// queries L4, L5 and L6 (Wukong's q4–q6, their fixed constants, as `bench`
// sends them) on the LUBM-40 snapshot that exec's LUBM-40 benchmarks
// write ($WUKONGD_BENCH_DIR/lubm40-4; `wukongd load --shards 4 --out
// $WUKONGD_BENCH_DIR/lubm40-4 lubm40.nt.gz` writes the same):
//
//   - backend/Lx: Service.Query and the decoding of every row;
//   - handler/Lx: the web server's handler (gin, the middleware, the
//     Protocol's form decoding, negotiation, the JSON writer, metrics, the
//     request log at serve's --log-level warn) on top of it, called
//     with the form POST `bench` sends and a ResponseWriter that discards;
//     handler minus backend is the web layer's own CPU and allocations;
//   - http/Lx: over loopback HTTP in this process (net/http as `serve`
//     serves by default; with WUKONGD_BENCH_LOOP=1 web.HTTPServer), one
//     client of raw requests that reads every body, reporting p50, p99
//     and p999 (cpu-µs/op is then the client's and the server's).
//
// GOGC is serve's (400) unless $GOGC is set.
//
//	go test ./service -run '^$' -bench LightLUBM40 -benchtime 20000x
func BenchmarkLightLUBM40(b *testing.B) {
	dir := lubm40BenchSnapshot(b)
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	s := openService(b, func(o Options) (*Service, error) { return Open(dir, o) }, Options{})
	srv, err := web.New(web.Options{Backend: s, MaxRows: -1, MaxConcurrent: 256,
		Logger: zerolog.New(io.Discard).Level(zerolog.WarnLevel)})
	if err != nil {
		b.Fatal(err)
	}
	names := []string{"L4", "L5", "L6"}
	texts := map[string]string{}
	for i, n := range names {
		t, err := os.ReadFile(filepath.Join(lubmDir, "queries", "wukong", fmt.Sprintf("q%d.rq", 4+i)))
		if err != nil {
			b.Skip(err)
		}
		texts[n] = string(t)
		for k := 0; k < 3; k++ { // learn the shape, warm the caches
			if _, err := drainQuery(s, texts[n]); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, n := range names {
		b.Run("backend/"+n, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := processCPU()
			rows := 0
			for i := 0; i < b.N; i++ {
				var err error
				if rows, err = drainQuery(s, texts[n]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
			b.ReportMetric(float64(rows), "rows")
		})
	}
	for _, n := range names {
		body := url.Values{"query": {texts[n]}}.Encode()
		b.Run("handler/"+n, func(b *testing.B) {
			b.ReportAllocs()
			w := &discardWriter{h: http.Header{}}
			rd := strings.NewReader(body)
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				rd.Reset(body)
				req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/sparql", io.NopCloser(rd))
				if err != nil {
					b.Fatal(err)
				}
				req.ContentLength = int64(len(body))
				req.RemoteAddr = "127.0.0.1:1"
				req.Header["Content-Type"] = []string{"application/x-www-form-urlencoded"}
				req.Header["Accept"] = []string{"application/sparql-results+json"}
				w.reset()
				srv.ServeHTTP(w, req)
				if w.status != http.StatusOK || w.n == 0 {
					b.Fatalf("status %d, %d bytes", w.status, w.n)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var hs interface {
		Serve(net.Listener) error
		Close() error
	}
	if os.Getenv("WUKONGD_BENCH_LOOP") != "" {
		hs = web.NewHTTPServer(srv, web.HTTPOptions{})
	} else {
		hs = &http.Server{Handler: srv, ConnContext: web.ConnContext}
	}
	go hs.Serve(ln)
	defer hs.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	do := rawDoer(b, conn)
	for _, n := range names {
		req := rawRequests([]string{texts[n]})[0]
		for k := 0; k < 100; k++ {
			do(req)
		}
		b.Run("http/"+n, func(b *testing.B) {
			b.ReportAllocs()
			runtime.GC()
			lat := make([]time.Duration, b.N)
			gc0, _ := gcStats()
			cpu0 := processCPU()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				do(req)
				lat[i] = time.Since(t0)
			}
			b.StopTimer()
			gc1, _ := gcStats()
			b.ReportMetric(us(percentile(lat, 0.5)), "p50-µs")
			b.ReportMetric(us(percentile(lat, 0.99)), "p99-µs")
			b.ReportMetric(us(percentile(lat, 0.999)), "p999-µs")
			b.ReportMetric(float64(gc1-gc0)*1000/float64(b.N), "gc/1kq")
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
		})
	}
}

// lubm40BenchSnapshot (in this file, which bench/quiet/reqpath-light.sh
// copies into older trees) is the 4-shard LUBM-40 snapshot exec's LUBM-40
// benchmarks write ($WUKONGD_BENCH_DIR/lubm40-4, default
// $TMPDIR/wukongd-bench); the benchmark is skipped without it.
func lubm40BenchSnapshot(b *testing.B) string {
	root := os.Getenv("WUKONGD_BENCH_DIR")
	if root == "" {
		root = filepath.Join(os.TempDir(), "wukongd-bench")
	}
	dir := filepath.Join(root, "lubm40-4")
	if _, err := graphstore.ReadManifest(dir); err != nil {
		b.Skipf("no LUBM-40 snapshot in %s (go test ./exec -run '^$' -bench LUBM40 -benchtime 1x builds it, as does `wukongd load --shards 4 --out %s lubm40.nt.gz`): %v", dir, dir, err)
	}
	return dir
}
