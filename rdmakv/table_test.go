package rdmakv

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// testEntries returns n keys with lists of varied lengths (1..5, some long).
func testEntries(n int, seed uint64) map[uint64][]uint64 {
	r := rand.New(rand.NewPCG(seed, 1))
	m := make(map[uint64][]uint64, n)
	for len(m) < n {
		k := r.Uint64()
		ln := 1 + r.IntN(5)
		if r.IntN(20) == 0 {
			ln = 100 + r.IntN(200)
		}
		vals := make([]uint64, ln)
		for i := range vals {
			vals[i] = uint64(r.Uint32())
		}
		slices.Sort(vals)
		m[k] = vals
	}
	return m
}

func buildTable(t testing.TB, entries map[uint64][]uint64, opts TableOptions) *Table {
	t.Helper()
	tab, err := OpenTable(tableRegion(t, entries, opts))
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// tableRegion builds a table of entries with opts into a region.
func tableRegion(t testing.TB, entries map[uint64][]uint64, opts TableOptions) *Region {
	t.Helper()
	b, err := NewTableBuilder(opts)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]uint64, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := b.Add(k, entries[k]); err != nil {
			t.Fatal(err)
		}
	}
	buf, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return NewRegion(buf)
}

// remoteTableOn registers tab as region of node on a new loopback fabric of
// nodes nodes and opens it from node 0.
func remoteTableOn(t testing.TB, tab *Table, nodes int, node NodeID, region RegionID, opts LoopbackOptions) (*Loopback, *RemoteTable) {
	t.Helper()
	f := NewLoopback(nodes, opts)
	if err := f.Register(node, region, NewRegion(tab.buf)); err != nil {
		t.Fatal(err)
	}
	rt, err := OpenRemoteTable(context.Background(), f, 0, node, region)
	if err != nil {
		t.Fatal(err)
	}
	return f, rt
}

func TestTableCollisionsAndChains(t *testing.T) {
	for _, tc := range []struct {
		name    string
		buckets int
		width   int
	}{{"one-bucket", 1, 4}, {"three-buckets", 3, 8}, {"thirteen-buckets", 13, 4}, {"sized", 0, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			entries := testEntries(100, 7)
			tab := buildTable(t, entries, TableOptions{Width: tc.width, Buckets: tc.buckets, Seed: 3})
			h := tab.Header()
			if tc.buckets > 0 && h.NBuckets <= h.NMain {
				t.Fatalf("expected overflow buckets, got %d main %d total", h.NMain, h.NBuckets)
			}
			if tab.Len() != len(entries) {
				t.Fatalf("Len = %d, want %d", tab.Len(), len(entries))
			}
			for k, want := range entries {
				got := tab.AppendValues(nil, k)
				if !slices.Equal(got, want) {
					t.Fatalf("key %#x: got %v want %v", k, got, want)
				}
				if n, ok := tab.Lookup(k); !ok || n != len(want) {
					t.Fatalf("Lookup(%#x) = %d,%v", k, n, ok)
				}
			}
			r := rand.New(rand.NewPCG(99, 1))
			for j := 0; j < 3000; j++ {
				k := r.Uint64()
				if j < 50 {
					k = uint64(j)
				}
				if _, in := entries[k]; in {
					continue
				}
				if got := tab.AppendValues(nil, k); len(got) != 0 {
					t.Fatalf("absent key %d: got %v", k, got)
				}
			}
		})
	}
}

func TestTableLengthEscape(t *testing.T) {
	old := lenEscape
	lenEscape = 3
	defer func() { lenEscape = old }()
	entries := map[uint64][]uint64{1: {5, 6}, 2: {1, 2, 3}, 3: {1, 2, 3, 4, 5, 6, 7}, 4: {9}}
	for _, w := range []int{4, 8} {
		tab := buildTable(t, entries, TableOptions{Width: w, Buckets: 1})
		f := NewLoopback(2, LoopbackOptions{})
		if err := f.Register(1, 0, NewRegion(tab.buf)); err != nil {
			t.Fatal(err)
		}
		rt, err := OpenRemoteTable(context.Background(), f, 0, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		for k, want := range entries {
			if got := tab.AppendValues(nil, k); !slices.Equal(got, want) {
				t.Fatalf("width %d key %d: local got %v want %v", w, k, got, want)
			}
			got, err := rt.AppendValues(context.Background(), 0, nil, k)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("width %d key %d: remote got %v, %v want %v", w, k, got, err, want)
			}
		}
	}
}

func TestWidthOverflowRefused(t *testing.T) {
	b, _ := NewTableBuilder(TableOptions{Width: 4})
	if err := b.Add(1, []uint64{1, 1 << 33}); err == nil {
		t.Fatal("a value above 2^32 was accepted in a 4-byte table")
	}
}

func TestRemoteEqualsLocalAndCountsReads(t *testing.T) {
	entries := testEntries(500, 11)
	tab := buildTable(t, entries, TableOptions{Width: 4, Buckets: 20})
	f, rt := remoteTableOn(t, tab, 3, 2, 5, LoopbackOptions{Model: &NetModel{RoundTrip: 2 * time.Microsecond, Bandwidth: 1e9}})
	ctx := context.Background()
	before := f.Counters()
	var lookups []Lookup
	var want []uint64
	var wantEnds []int
	for k, vals := range entries {
		c0 := f.Counters()
		got, err := rt.AppendValues(ctx, 0, nil, k)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, vals) {
			t.Fatalf("key %#x: remote %v, local %v", k, got, vals)
		}
		d := f.Counters().Sub(c0)
		// One READ per bucket of the chain walked, plus one for a
		// non-inline value.
		minReads := uint64(1)
		if len(vals) > 1 {
			minReads = 2
		}
		if d.Reads < minReads || d.Reads != d.RoundTrips || d.ModelNanos == 0 {
			t.Fatalf("key %#x (%d values): counters %+v", k, len(vals), d)
		}
		lookups = append(lookups, Lookup{Table: rt, Key: k})
		want = append(want, vals...)
		wantEnds = append(wantEnds, len(want))
	}
	lookups = append(lookups, Lookup{Table: rt, Key: 12345})
	wantEnds = append(wantEnds, len(want))
	c0 := f.Counters()
	got, ends, err := LookupBatch(ctx, f, 0, lookups, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) || !slices.Equal(ends, wantEnds) {
		t.Fatal("batched lookup differs from single lookups")
	}
	d := f.Counters().Sub(c0)
	maxChain := tab.Header().NBuckets // bound on rounds
	if d.RoundTrips > maxChain+1 || d.RoundTrips < 2 {
		t.Fatalf("batched lookup took %d round trips", d.RoundTrips)
	}
	if f.Counters().Reads <= before.Reads {
		t.Fatal("reads not counted")
	}
}

func TestFabricErrors(t *testing.T) {
	f := NewLoopback(2, LoopbackOptions{RingSize: 1})
	ctx := context.Background()
	buf := make([]byte, 100)
	for i := range buf {
		buf[i] = byte(i)
	}
	r := NewRegion(buf)
	if err := f.Register(1, 0, r); err != nil {
		t.Fatal(err)
	}
	if err := f.Read(ctx, 0, ReadRequest{Node: 1, Region: 0, Offset: 90, Dst: make([]byte, 20)}); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("out of range read: %v", err)
	}
	if err := f.Read(ctx, 0, ReadRequest{Node: 1, Region: 3, Dst: make([]byte, 1)}); !errors.Is(err, ErrNoRegion) {
		t.Fatalf("missing region: %v", err)
	}
	f.SetDown(1, true)
	if err := f.Read(ctx, 0, ReadRequest{Node: 1, Dst: make([]byte, 1)}); !errors.Is(err, ErrNodeDown) {
		t.Fatalf("down node: %v", err)
	}
	if err := f.Send(ctx, 0, 1, []byte("x")); !errors.Is(err, ErrNodeDown) {
		t.Fatalf("send to down node: %v", err)
	}
	f.SetDown(1, false)
	if err := f.Send(ctx, 0, 1, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := f.Send(dctx, 0, 1, []byte("ring full")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send into a full ring: %v", err)
	}
	m, err := f.Recv(ctx, 1)
	if err != nil || string(m.Data) != "hello" || m.From != 0 {
		t.Fatalf("recv: %+v %v", m, err)
	}
	var meter Meter
	mctx := ContextWithMeter(ctx, &meter)
	dst := make([]byte, 7)
	if err := f.Read(mctx, 0, ReadRequest{Node: 1, Offset: 10, Dst: dst}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dst, buf[10:17]) {
		t.Fatalf("read %v, want %v", dst, buf[10:17])
	}
	if c := meter.Snapshot(); c.Reads != 1 || c.ReadBytes != 7 {
		t.Fatalf("per-context meter: %+v", c)
	}
	c := f.Counters()
	if c.Sends != 1 || c.SendBytes != 5 || c.Recvs != 1 || c.FailedCalls != 5 {
		t.Fatalf("counters: %+v", c)
	}
	f.Close()
	if _, err := f.Recv(ctx, 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("recv after close: %v", err)
	}
}

func TestCorruptHeaderRefused(t *testing.T) {
	tab := buildTable(t, testEntries(10, 1), TableOptions{})
	buf := slices.Clone(tab.buf)
	if _, err := OpenTable(NewRegion(buf[:len(buf)-1])); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated: %v", err)
	}
	buf[0] ^= 1
	if _, err := OpenTable(NewRegion(buf)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("bad magic: %v", err)
	}
	if _, err := OpenTable(NewRegion(nil)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("empty: %v", err)
	}
}

func TestNetModelChargesDeterministically(t *testing.T) {
	m := &NetModel{RoundTrip: 10 * time.Microsecond, MessageLatency: 5 * time.Microsecond, Bandwidth: 1e6}
	f := NewLoopback(3, LoopbackOptions{Model: m})
	for n := NodeID(0); n < 3; n++ {
		if err := f.Register(n, 0, NewRegion(make([]byte, 1000))); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	step := func(name string, want time.Duration, fn func() error) {
		t.Helper()
		before := f.Counters().ModelNanos
		if err := fn(); err != nil {
			t.Fatal(err)
		}
		if got := time.Duration(f.Counters().ModelNanos - before); got != want {
			t.Errorf("%s: charged %v, want %v", name, got, want)
		}
	}
	step("read 100 B", 110*time.Microsecond, func() error {
		return f.Read(ctx, 0, ReadRequest{Node: 1, Dst: make([]byte, 100)})
	})
	step("local read", 0, func() error {
		return f.Read(ctx, 0, ReadRequest{Node: 0, Dst: make([]byte, 100)})
	})
	// Two peers: the round trips overlap, the slower one counts.
	step("batch to two peers", 210*time.Microsecond, func() error {
		return f.ReadBatch(ctx, 0, []ReadRequest{
			{Node: 1, Dst: make([]byte, 60)}, {Node: 2, Dst: make([]byte, 200)}, {Node: 1, Dst: make([]byte, 40)},
		})
	})
	step("send 50 B", 55*time.Microsecond, func() error { return f.Send(ctx, 0, 2, make([]byte, 50)) })
	if c := f.Counters(); c.RoundTrips != 3 || c.LocalReads != 1 || c.Reads != 5 {
		t.Fatalf("counters %+v", c)
	}
}

func TestAddSharedStoresEqualListsOnce(t *testing.T) {
	for _, w := range []int{4, 8} {
		b, err := NewTableBuilder(TableOptions{Width: w})
		if err != nil {
			t.Fatal(err)
		}
		lists := [][]uint64{{1, 2, 3}, {1, 2, 4}, {1, 2, 3}, {7}, {1, 2, 3}, {1, 2, 4}, {5, 6}}
		for i, l := range lists {
			if err := b.AddShared(uint64(100+i), l); err != nil {
				t.Fatal(err)
			}
		}
		// Distinct non-inline lists: {1,2,3}, {1,2,4}, {5,6} = 8 values.
		if got := b.ValueBytes(); got != 8*w {
			t.Fatalf("width %d: value area %d bytes, want %d", w, got, 8*w)
		}
		buf, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		tab, err := OpenTable(NewRegion(buf))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range lists {
			if got := tab.AppendValues(nil, uint64(100+i)); !slices.Equal(got, l) {
				t.Fatalf("key %d: %v, want %v", 100+i, got, l)
			}
		}
	}
}
