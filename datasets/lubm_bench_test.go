package datasets_test

import (
	"io"
	"testing"

	"github.com/wukongd/wukongd/datasets"
	"github.com/wukongd/wukongd/rdf"
)

// The generation benchmarks write LUBM-10 (about 1.2 million triples) per
// operation and report triples/s. The LUBM-100 timing in
// docs/PERFORMANCE.md comes from `wukongd gen lubm --univ 100`.

func benchGenerate(b *testing.B, cfg datasets.LUBMConfig) {
	b.ReportAllocs()
	var triples int64
	for b.Loop() {
		n, err := datasets.GenerateLUBM(io.Discard, cfg)
		if err != nil {
			b.Fatal(err)
		}
		triples += n
	}
	b.ReportMetric(float64(triples)/b.Elapsed().Seconds(), "triples/s")
}

func BenchmarkGenerateLUBM10(b *testing.B) {
	benchGenerate(b, datasets.LUBMConfig{Universities: 10})
}

func BenchmarkGenerateLUBM10OneWorker(b *testing.B) {
	benchGenerate(b, datasets.LUBMConfig{Universities: 10, Workers: 1})
}

func BenchmarkGenerateLUBM10Gzip(b *testing.B) {
	benchGenerate(b, datasets.LUBMConfig{Universities: 10, Gzip: true})
}

func BenchmarkGenerateLUBM10Triples(b *testing.B) {
	b.ReportAllocs()
	var triples int64
	for b.Loop() {
		n, err := datasets.GenerateLUBMTriples(datasets.LUBMConfig{Universities: 10}, func(rdf.Triple) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		triples += n
	}
	b.ReportMetric(float64(triples)/b.Elapsed().Seconds(), "triples/s")
}
