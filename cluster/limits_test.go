package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/web"
)

// TestClusterLimits: a node's query limits (serve --peers with
// --max-value-bytes, --max-query-memory) reach its engine, for queries in
// place and forked to the peers.
func TestClusterLimits(t *testing.T) {
	dir := defaultSnapshot(t, 4)
	for _, mode := range []planner.Mode{planner.ModeInPlace, planner.ModeForkJoin} {
		sim := rdmakv.NewSimNet(5)
		nodes := simClusterWith(t, sim, dir, 2, Config{Mode: mode, Workers: 2,
			MaxValueBytes: 1 << 10, MaxQueryMemory: 4 << 20,
			// A cross product on two shared cores under load can starve
			// the heartbeats of 300 ms; a lost peer is not what is tested.
			Fabric: rdmakv.TCPOptions{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 10 * time.Second}})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		// CONCAT doubling 20 times makes a MiB from one character.
		var b strings.Builder
		b.WriteString(`SELECT ?x20 WHERE { BIND("a" AS ?x0) `)
		for i := 1; i <= 20; i++ {
			fmt.Fprintf(&b, "BIND(CONCAT(?x%d, ?x%d) AS ?x%d) ", i-1, i-1, i)
		}
		b.WriteString(`}`)
		if _, err := rows(ctx, nodes[0].Backend(), b.String()); !errors.Is(err, web.ErrValueTooLarge) {
			t.Errorf("%v: CONCAT doubling past --max-value-bytes: %v, want web.ErrValueTooLarge", mode, err)
		}
		// A cross product of every triple with every triple: far past 4 MiB.
		if _, err := rows(ctx, nodes[1].Backend(), `SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }`); !errors.Is(err, web.ErrQueryMemory) {
			t.Errorf("%v: cross product past --max-query-memory: %v, want web.ErrQueryMemory", mode, err)
		}
		// Within the limits, a query answers.
		if out, err := rows(ctx, nodes[0].Backend(), `SELECT (CONCAT("a", "b") AS ?x) WHERE {}`); err != nil || len(out) != 1 {
			t.Errorf("%v: a small query: %v %v", mode, out, err)
		}
		cancel()
	}
}
