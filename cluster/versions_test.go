package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/web"
)

// TestPeerVersionCarriesFloor: what a probe sees of a peer that installed
// a snapshot (applied 100, floor 50) makes a read of version 10 from it
// answer "compacted past", however the version was learnt. A probe that
// recorded the applied version without the floor let waitNode's fast path
// accept version 10 (TestClusterSnapshotInstall failed so under load).
func TestPeerVersionCarriesFloor(t *testing.T) {
	f := rdmakv.NewLoopback(2, rdmakv.LoopbackOptions{})
	defer f.Close()
	reg := rdmakv.RegionID(12)
	me, err := newVersions(f, 0, reg, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	peer, err := newVersions(f, 1, reg, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	peer.setFloor(50)
	peer.set(100)
	ctx := context.Background()
	var b [16]byte // as the prober and the catch-up read it
	if err := f.Read(ctx, 0, rdmakv.ReadRequest{Node: 1, Region: reg, Dst: b[:]}); err != nil {
		t.Fatal(err)
	}
	me.observeWords(1, b[:])
	if got := me.seen(1); got != 100 {
		t.Fatalf("seen %d, want 100", got)
	}
	for _, v := range []uint64{10, 49} {
		err := me.waitNode(ctx, 1, v)
		if !errors.Is(err, web.ErrNotReady) || !strings.Contains(err.Error(), "compacted past") {
			t.Fatalf("version %d of a peer at floor 50: %v", v, err)
		}
	}
	for _, v := range []uint64{50, 100} {
		if err := me.waitNode(ctx, 1, v); err != nil {
			t.Fatalf("version %d of a peer at floor 50, applied 100: %v", v, err)
		}
	}
	// A forgotten peer (a new process) is read again: its new floor counts.
	me.forget(1)
	if got := me.seen(1); got != 0 {
		t.Fatalf("seen %d after forget, want 0", got)
	}
	peer.setFloor(90)
	if err := me.waitNode(ctx, 1, 60); err == nil || !strings.Contains(err.Error(), "compacted past") {
		t.Fatalf("version 60 of a peer at floor 90: %v", err)
	}
}
