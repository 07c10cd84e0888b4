package rdmakv

import (
	"context"
	"slices"
	"testing"
)

// TestDeltaTable appends groups to many keys (chains, block growth),
// reads them locally and through a loopback fabric at several stamps,
// and rolls back.
func TestDeltaTable(t *testing.T) {
	d, err := NewDeltaTable(1<<24, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	want := map[uint64]map[uint64][]uint64{} // stamp → key → visible ids
	const keys = 200
	for stamp := uint64(1); stamp <= 5; stamp++ {
		for k := uint64(0); k < keys; k++ {
			if (k+stamp)%3 == 0 {
				continue
			}
			ids := []uint64{k*10 + stamp, k*10 + stamp + 100}
			if err := d.Append(k, stamp, ids, nil); err != nil {
				t.Fatal(err)
			}
		}
		m := map[uint64][]uint64{}
		for k := uint64(0); k < keys; k++ {
			m[k] = AppendVisible(nil, d.Records(k), stamp)
		}
		want[stamp] = m
	}
	for k := uint64(0); k < keys; k++ {
		var exp []uint64
		for stamp := uint64(1); stamp <= 5; stamp++ {
			if (k+stamp)%3 != 0 {
				exp = append(exp, k*10+stamp, k*10+stamp+100)
			}
			if got := AppendVisible(nil, d.Records(k), stamp); !slices.Equal(got, exp) {
				t.Fatalf("key %d at stamp %d: %v, want %v", k, stamp, got, exp)
			}
		}
	}
	f := NewLoopback(2, LoopbackOptions{})
	defer f.Close()
	if err := f.Register(1, 7, d.Region()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rd, err := OpenRemoteDelta(ctx, f, 0, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	var ls []DeltaLookup
	for k := uint64(0); k < keys+5; k++ {
		ls = append(ls, DeltaLookup{Delta: rd, Key: k})
	}
	for stamp := uint64(1); stamp <= 5; stamp++ {
		vals, ends, err := LookupDeltaBatch(ctx, f, 0, ls, stamp, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		start := 0
		for i, e := range ends {
			if got := vals[start:e]; !slices.Equal(got, want[stamp][uint64(i)]) {
				t.Fatalf("remote key %d at stamp %d: %v, want %v", i, stamp, got, want[stamp][uint64(i)])
			}
			start = e
		}
	}
	// Rollback of stamp 6 leaves stamp 5's state (an undo of more than
	// one block of entries).
	var u DeltaUndo
	d.Mark(&u)
	for k := uint64(0); k < keys+5000; k++ {
		if err := d.Append(k, 6, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9}, &u); err != nil {
			t.Fatal(err)
		}
	}
	d.Rollback(&u)
	if d.Keys() != keys {
		t.Fatalf("%d keys after rollback, want %d", d.Keys(), keys)
	}
	for k := uint64(0); k < keys+5000; k++ {
		if got := AppendVisible(nil, d.Records(k), 99); !slices.Equal(got, want[5][k]) {
			t.Fatalf("key %d after rollback: %v, want %v", k, got, want[5][k])
		}
	}
}
