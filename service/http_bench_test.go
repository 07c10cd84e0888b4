package service

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/wukongd/wukongd/client"
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
