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
