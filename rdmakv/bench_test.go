package rdmakv

import (
	"context"
	"testing"
)

func benchTable(b *testing.B) (*Table, []uint64) {
	entries := testEntries(100_000, 42)
	tab := buildTable(b, entries, TableOptions{Width: 4})
	keys := make([]uint64, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	return tab, keys
}

func BenchmarkTableLookupLocal(b *testing.B) {
	tab, keys := benchTable(b)
	var dst []uint64
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		dst = tab.AppendValues(dst[:0], keys[i%len(keys)])
		i++
	}
}

func BenchmarkTableLookupRemote(b *testing.B) {
	tab, keys := benchTable(b)
	f, rt := remoteTableOn(b, tab, 2, 1, 0, LoopbackOptions{})
	ctx := context.Background()
	var dst []uint64
	var err error
	b.ReportAllocs()
	c0 := f.Counters()
	i := 0
	for b.Loop() {
		dst, err = rt.AppendValues(ctx, 0, dst[:0], keys[i%len(keys)])
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
	c := f.Counters().Sub(c0)
	b.ReportMetric(float64(c.Reads)/float64(b.N), "reads/op")
}

func BenchmarkTableLookupRemoteBatch256(b *testing.B) {
	tab, keys := benchTable(b)
	f, rt := remoteTableOn(b, tab, 2, 1, 0, LoopbackOptions{})
	ctx := context.Background()
	lookups := make([]Lookup, 256)
	var dst []uint64
	var ends []int
	var err error
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		for j := range lookups {
			lookups[j] = Lookup{Table: rt, Key: keys[(i+j)%len(keys)]}
		}
		i += 256
		dst, ends, err = LookupBatch(ctx, f, 0, lookups, dst[:0], ends)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*256)/b.Elapsed().Seconds(), "keys/s")
}

// A table larger than the caches (2M keys, about 60 MB), looked up in a
// random order one key at a time and in batches of 256.
func bigBenchTable(b *testing.B) (*Table, []uint64) {
	entries := testEntries(2_000_000, 7)
	tab := buildTable(b, entries, TableOptions{Width: 4})
	keys := make([]uint64, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	return tab, keys
}

func BenchmarkTableLookupBig(b *testing.B) {
	tab, keys := bigBenchTable(b)
	b.Run("one-by-one", func(b *testing.B) {
		var dst []uint64
		i := 0
		for b.Loop() {
			dst = dst[:0]
			for j := 0; j < 256; j++ {
				dst = tab.AppendValues(dst, keys[(i+j)%len(keys)])
			}
			i += 256
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*256), "ns/key")
	})
	b.Run("batch", func(b *testing.B) {
		var dst []uint64
		var ends []int
		batch := make([]uint64, 256)
		i := 0
		for b.Loop() {
			for j := range batch {
				batch[j] = keys[(i+j)%len(keys)]
			}
			i += 256
			dst, ends = tab.AppendValuesBatch(dst[:0], batch, ends[:0])
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*256), "ns/key")
	})
}
