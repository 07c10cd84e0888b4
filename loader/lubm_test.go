package loader

import (
	"github.com/wukongd/wukongd/internal/shareddata"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

var lubmDir = shareddata.Path("datasets", "lubm")

func needFile(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("test data not available: %v", err)
	}
}

func TestParseLUBM1NTriples(t *testing.T) {
	path := lubmDir + "/lubm1.nt.gz"
	needFile(t, path)
	n := 0
	distinct := map[rdf.Quad]struct{}{}
	err := ParseFile(path, Options{}, func(q rdf.Quad) error {
		n++
		distinct[q] = struct{}{}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 100573 || len(distinct) != 100573 {
		t.Fatalf("read %d statements, %d distinct; want 100573", n, len(distinct))
	}
}

func BenchmarkParseNTriplesLUBM1(b *testing.B) {
	path := lubmDir + "/lubm1.nt.gz"
	needFile(b, path)
	r, err := OpenFile(path)
	if err != nil {
		b.Fatal(err)
	}
	data, err := readAllBytes(r)
	r.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var p ntParser
		n := 0
		err := p.parseChunk(data, 1, Options{}, func(q *rawQuad) error { n++; return nil })
		if err != nil || n != 100573 {
			b.Fatal(err, n)
		}
	}
	b.ReportMetric(float64(100573*b.N)/b.Elapsed().Seconds(), "triples/s")
}

// The 15 RDF/XML files of UBA give exactly the triples of lubm1.nt.gz when
// the empty IRI resolves against file:///<name>, as the conversion did.
func TestParseUBARDFXMLMatchesNTriples(t *testing.T) {
	nt := lubmDir + "/lubm1.nt.gz"
	needFile(t, nt)
	want := map[rdf.Quad]bool{}
	if err := ParseFile(nt, Options{}, func(q rdf.Quad) error { want[q] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(lubmDir + "/uba-1/*.owl.gz")
	if len(files) != 15 {
		t.Skipf("want the 15 UBA files, found %d", len(files))
	}
	got := map[rdf.Quad]bool{}
	statements := 0
	for _, f := range files {
		base := "file:///" + strings.TrimSuffix(filepath.Base(f), ".gz")
		err := ParseFile(f, Options{Base: base}, func(q rdf.Quad) error {
			statements++
			got[q] = true
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if statements != 103104 || len(got) != 100573 {
		t.Fatalf("read %d statements, %d distinct; want 103104 and 100573", statements, len(got))
	}
	for q := range want {
		if !got[q] {
			t.Fatalf("missing %v", q)
		}
	}
}
