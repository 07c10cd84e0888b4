package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/web"
)

// TestWriteWaitsWithinItsDeadline: a write queued behind another (here
// the write lock held by the test) fails with its context's error once its
// context ends, instead of waiting for the lock (issue 13: an 8 MB INSERT
// DATA behind another answered 8 s past its deadline); the lock it gave up
// on is released once it comes, so the next write goes through.
func TestWriteWaitsWithinItsDeadline(t *testing.T) {
	s := openDurable(t, emptySnapshot(t, "", 2))
	defer s.Close()
	s.writeMu.Lock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Update(ctx, &web.UpdateRequest{Update: `INSERT DATA { <http://example.org/a> <http://example.org/p> 1 }`})
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a write cancelled while queued: %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a write cancelled while queued for the write lock is still waiting for it")
	}
	s.writeMu.Unlock()
	update(t, s, `INSERT DATA { <http://example.org/a> <http://example.org/p> 2 }`)
	if got := state(t, s); strings.Contains(got, `"1"`) || !strings.Contains(got, `"2"`) {
		t.Errorf("after one acknowledged write and one cancelled:\n%s", got)
	}
}

// TestGroupQuads: quads split by graph in order of first appearance,
// across runs longer than the loop's look at the context, and a done
// context stops it.
func TestGroupQuads(t *testing.T) {
	var quads []rdf.Quad
	graphs := []rdf.Term{{}, rdf.NewIRI("http://example.org/g1"), {}, rdf.NewIRI("http://example.org/g2"), rdf.NewIRI("http://example.org/g1")}
	want := map[rdf.Term]int{}
	for k, g := range graphs {
		n := []int{3, quadCheck + 7, 1, 2 * quadCheck, 5}[k]
		for i := 0; i < n; i++ {
			quads = append(quads, rdf.Quad{G: g, S: rdf.NewIRI(fmt.Sprintf("http://example.org/s%d_%d", k, i)), P: rdf.NewIRI("http://example.org/p"), O: rdf.NewLiteral(fmt.Sprint(i), rdf.XSD+"integer")})
		}
		want[g] += n
	}
	byGraph, order, err := groupQuads(context.Background(), quads)
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != 3 || !order[0].IsZero() || order[1] != graphs[1] || order[2] != graphs[3] {
		t.Errorf("graphs in order %v, want DEFAULT, g1, g2", order)
	}
	for g, n := range want {
		ts := byGraph[g]
		if len(ts) != n {
			t.Errorf("graph %v: %d triples, want %d", g, len(ts), n)
			continue
		}
	}
	// Within a graph, the triples keep the order of the quads.
	if ts := byGraph[graphs[1]]; ts[0].S.Value != "http://example.org/s1_0" || ts[len(ts)-1].S.Value != "http://example.org/s4_4" {
		t.Errorf("g1's triples out of order: first %v, last %v", ts[0].S, ts[len(ts)-1].S)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := groupQuads(ctx, quads); !errors.Is(err, context.Canceled) {
		t.Errorf("with a done context: %v, want context.Canceled", err)
	}
}
