package web

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

// BenchmarkSelectStream measures the protocol layer alone: one SELECT of
// 10,000 rows (IRI, literal) through HTTP in each format, over loopback.
func BenchmarkSelectStream(b *testing.B) {
	var ts []rdf.Triple
	for i := 0; i < 10000; i++ {
		ts = append(ts, rdf.Triple{S: ex(fmt.Sprintf("s%d", i)), P: ex("p"), O: rdf.NewLiteral(fmt.Sprintf("value %d", i), "")})
	}
	srv, err := New(Options{Backend: newTestBackend(ts)})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	for _, accept := range []string{"application/sparql-results+json", "application/sparql-results+xml", "text/csv", "text/tab-separated-values"} {
		b.Run(accept, func(b *testing.B) {
			b.ReportAllocs()
			var n int64
			for i := 0; i < b.N; i++ {
				req, _ := http.NewRequest("GET", hs.URL+q("SELECT ?s ?o { ?s <http://example.org/p> ?o }"), nil)
				req.Header.Set("Accept", accept)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatal(resp.Status)
				}
			}
			b.SetBytes(n)
			b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkRemoteRefs is the SERVICE check of every query, on L5's text.
func BenchmarkRemoteRefs(b *testing.B) {
	const text = `PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>

SELECT ?X WHERE {
	?X  ub:subOrganizationOf  <http://www.Department0.University0.edu>  .
	?X  rdf:type  ub:ResearchGroup  .
}`
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if remoteRefs(text, "SERVICE") != nil {
			b.Fatal("SERVICE found")
		}
	}
}
