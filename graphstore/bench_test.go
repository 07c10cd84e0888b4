package graphstore_test

import (
	"context"
	"github.com/wukongd/wukongd/internal/shareddata"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
)

var lubmCache = map[string][]rdf.Triple{}

// lubm returns the triples of a LUBM N-Triples file, parsed once.
func lubm(b *testing.B, name string) []rdf.Triple {
	path := shareddata.Path("datasets", "lubm", name)
	if ts, ok := lubmCache[path]; ok {
		return ts
	}
	if _, err := os.Stat(path); err != nil {
		b.Skipf("LUBM data not available: %v", err)
	}
	var ts []rdf.Triple
	err := loader.ParseFile(path, loader.Options{}, func(q rdf.Quad) error {
		ts = append(ts, q.Triple())
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	lubmCache[path] = ts
	return ts
}

// build feeds ts into a builder from GOMAXPROCS goroutines in batches.
func build(b *testing.B, ts []rdf.Triple, shards int) *graphstore.Store {
	bl, err := graphstore.NewBuilder(shards)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 4096
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w * batch; i < len(ts); i += workers * batch {
				if err := bl.AddTriples(ts[i:min(i+batch, len(ts))]); err != nil {
					b.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	st, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	return st
}

func benchBuild(b *testing.B, file string, shards int) {
	ts := lubm(b, file)
	b.ReportAllocs()
	b.ResetTimer()
	var st *graphstore.Store
	cpu0 := cpuTime()
	for b.Loop() {
		if st != nil {
			st.Close()
		}
		st = build(b, ts, shards)
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	n := float64(len(ts))
	b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds(), "triples/s")
	// CPU time of the process (all goroutines, GC included) per triple:
	// less sensitive than wall time to other load on a shared machine.
	b.ReportMetric(n*float64(b.N)/cpu.Seconds(), "triples/cpu-s")
	b.ReportMetric(float64(st.RegionBytes())/n, "store-B/triple")
	b.ReportMetric(float64(st.Dict().SizeBytes())/n, "dict-B/triple")
	st.Close()
}

// cpuTime returns the user+system CPU time of this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStoreSize reports where a store's bytes go (per triple) on
// LUBM-1 and LUBM-10; the time per op is not meaningful.
func BenchmarkStoreSize(b *testing.B) {
	for _, name := range []string{"lubm1.nt.gz", "lubm10.nt.gz"} {
		b.Run(name, func(b *testing.B) {
			ts := lubm(b, name)
			st := build(b, ts, 4)
			defer st.Close()
			for b.Loop() {
				_ = st.Sizes()
			}
			z := st.Sizes()
			n := float64(len(ts))
			b.ReportMetric(float64(z.Keys)/n, "keys/triple")
			b.ReportMetric(float64(z.Keys)/float64(z.Buckets*8), "slot-load")
			b.ReportMetric(float64(z.BucketBytes)/n, "bucketB/triple")
			b.ReportMetric(float64(z.ValueBytes)/n, "valueB/triple")
			b.ReportMetric(float64(z.DictArena)/n, "dictArenaB/triple")
			b.ReportMetric(float64(z.DictOffsets+z.DictHash+z.DictOther)/n, "dictIndexB/triple")
			b.ReportMetric(float64(z.BucketBytes+z.ValueBytes+z.DictArena+z.DictOffsets+z.DictHash+z.DictOther)/n, "totalB/triple")
		})
	}
}

func BenchmarkBuildLUBM1(b *testing.B)  { benchBuild(b, "lubm1.nt.gz", 4) }
func BenchmarkBuildLUBM10(b *testing.B) { benchBuild(b, "lubm10.nt.gz", 4) }

// lookupSetup returns a store of LUBM-1 on 4 shards and the (s, p, Out)
// keys of its triples, split into those local to shard 0 and the rest.
func lookupSetup(b *testing.B) (*graphstore.Store, []graphstore.Key, []graphstore.Key) {
	ts := lubm(b, "lubm1.nt.gz")
	st := build(b, ts, 4)
	d := st.Dict()
	var local, remote []graphstore.Key
	for _, t := range ts {
		s, _ := d.Lookup(t.S)
		p, _ := d.Lookup(t.P)
		k := graphstore.MakeKey(s, p, graphstore.Out)
		if st.Owner(s) == 0 {
			local = append(local, k)
		} else {
			remote = append(remote, k)
		}
	}
	return st, local, remote
}

func benchLookup(b *testing.B, remote bool) {
	st, lk, rk := lookupSetup(b)
	defer st.Close()
	keys := lk
	if remote {
		keys = rk
	}
	v := st.Shard(0)
	ctx := context.Background()
	var dst []graphstore.ID
	b.ReportAllocs()
	b.ResetTimer()
	c0 := st.Counters()
	i := 0
	for b.Loop() {
		k := keys[i%len(keys)]
		i++
		var err error
		dst, err = v.AppendEdges(ctx, dst[:0], k.Vertex(), k.Pred(), k.Dir())
		if err != nil || len(dst) == 0 {
			b.Fatalf("lookup of %v: %v %v", k, dst, err)
		}
	}
	b.StopTimer()
	c := st.Counters().Sub(c0)
	b.ReportMetric(float64(c.Reads)/float64(b.N), "reads/op")
	b.ReportMetric(float64(c.ReadBytes)/float64(b.N), "readB/op")
}

func BenchmarkLookupLocal(b *testing.B)  { benchLookup(b, false) }
func BenchmarkLookupRemote(b *testing.B) { benchLookup(b, true) }

func BenchmarkLookupRemoteBatch256(b *testing.B) {
	st, _, rk := lookupSetup(b)
	defer st.Close()
	v := st.Shard(0)
	ctx := context.Background()
	var dst []graphstore.ID
	var ends []int
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		start := (i * 256) % (len(rk) - 256)
		i++
		var err error
		dst, ends, err = v.AppendEdgesBatch(ctx, rk[start:start+256], dst[:0], ends)
		if err != nil || len(ends) != 256 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*256)/b.Elapsed().Seconds(), "keys/s")
}

// BenchmarkIntern* measure AddTriples and AddRawTriples alone (one
// goroutine, batches of 4096, no Build) on LUBM-1. The string form's input
// already holds strings; a parser feeding it allocates them first, which
// the raw form avoids for repeated terms.
func BenchmarkInternStringsLUBM1(b *testing.B) {
	ts := lubm(b, "lubm1.nt.gz")
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		bl, _ := graphstore.NewBuilder(4)
		for i := 0; i < len(ts); i += 4096 {
			if err := bl.AddTriples(ts[i:min(i+4096, len(ts))]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(ts))*float64(b.N)/b.Elapsed().Seconds(), "triples/s")
	b.ReportMetric(float64(len(ts))*float64(b.N)/(cpuTime()-cpu0).Seconds(), "triples/cpu-s")
}

func BenchmarkInternRawLUBM1(b *testing.B) {
	ts := lubm(b, "lubm1.nt.gz")
	// The bytes lie in one buffer in input order, as in a parser's chunk.
	var buf []byte
	for _, t := range ts {
		for _, x := range []rdf.Term{t.S, t.P, t.O} {
			buf = append(append(append(buf, x.Value...), x.Datatype...), x.Lang...)
		}
	}
	pos := 0
	next := func(s string) []byte {
		b := buf[pos : pos+len(s) : pos+len(s)]
		pos += len(s)
		return b
	}
	raw := func(x rdf.Term) graphstore.RawTerm {
		return graphstore.RawTerm{Kind: x.Kind, Value: next(x.Value), Datatype: next(x.Datatype), Lang: next(x.Lang)}
	}
	rs := make([]graphstore.RawTriple, len(ts))
	for i, t := range ts {
		rs[i] = graphstore.RawTriple{S: raw(t.S), P: raw(t.P), O: raw(t.O)}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		bl, _ := graphstore.NewBuilder(4)
		for i := 0; i < len(rs); i += 4096 {
			if err := bl.AddRawTriples(rs[i:min(i+4096, len(rs))]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(rs))*float64(b.N)/b.Elapsed().Seconds(), "triples/s")
	b.ReportMetric(float64(len(rs))*float64(b.N)/(cpuTime()-cpu0).Seconds(), "triples/cpu-s")
}
