package graphstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
)

// TestApplyHostedMatchesApply applies the same random changes to a whole
// dataset (Apply) and to two datasets that each hold half the shards of
// its snapshot (ApplyHosted, as two cluster nodes do), and checks that
// every list of every shard, read on the node that holds it, equals the
// whole dataset's, and the dictionaries agree; a CLEAR (with inserts, as
// a Graph Store PUT) and a DROP of the default graph midway too.
func TestApplyHostedMatchesApply(t *testing.T) {
	// The hosted path checks an In list in place or reads it whole
	// (hostedHas): both ways, and the mix of the default.
	for _, n := range []int{16, 0, 1 << 30} {
		t.Run(fmt.Sprintf("readAll=%d", n), func(t *testing.T) {
			defer func(old int) { hostedReadAll = old }(hostedReadAll)
			hostedReadAll = n
			testApplyHostedMatchesApply(t)
		})
	}
}

func testApplyHostedMatchesApply(t *testing.T) {
	ctx := context.Background()
	ex := func(f string, a ...any) rdf.Term { return rdf.NewIRI("http://ex.org/" + fmt.Sprintf(f, a...)) }
	typ := rdf.NewIRI(rdf.RDFType)
	const shards, nodes = 4, 2
	base := testTriples(600, 5)
	st := buildTestStore(t, base, shards)
	dir := t.TempDir() + "/snap"
	if err := WriteSnapshot(dir, st); err != nil {
		t.Fatal(err)
	}
	st.Close()
	open := func(local []int) *Dataset {
		f := rdmakv.NewLoopback(nodes, rdmakv.LoopbackOptions{})
		t.Cleanup(func() { f.Close() })
		s, err := OpenSnapshot(dir, OpenOptions{Shards: local, Fabric: f})
		if err != nil {
			t.Fatal(err)
		}
		return NewDataset(s)
	}
	whole := open(nil)
	baseStats := whole.Default().Stats()
	var parts [nodes]*Dataset
	for n := range parts {
		var local []int
		for s := n; s < shards; s += nodes {
			local = append(local, s)
		}
		parts[n] = open(local)
	}
	r := rand.New(rand.NewPCG(3, 4))
	randTriple := func() rdf.Triple {
		s := ex("v%d", r.IntN(200))
		switch r.IntN(6) {
		case 0:
			return tri(s, typ, ex("C%d", r.IntN(7)))
		case 1:
			return tri(s, ex("name"), rdf.NewLiteral(fmt.Sprintf("n%d", r.IntN(40)), ""))
		case 2:
			return tri(s, ex("newp%d", r.IntN(3)), ex("w%d", r.IntN(30)))
		default:
			return tri(s, ex("p%d", r.IntN(6)), ex("v%d", r.IntN(200)))
		}
	}
	universe := append([]rdf.Triple(nil), base...)
	cur := map[rdf.Triple]bool{}
	for _, tr := range base {
		cur[tr] = true
	}
	for step := 0; step < 25; step++ {
		var c GraphChange
		for k := 0; k < 1+r.IntN(30); k++ {
			tr := randTriple()
			universe = append(universe, tr)
			if r.IntN(3) == 0 {
				c.Delete = append(c.Delete, tr)
			} else {
				c.Insert = append(c.Insert, tr)
			}
		}
		if r.IntN(4) == 0 { // delete some base triples too
			for k := 0; k < 10; k++ {
				c.Delete = append(c.Delete, base[r.IntN(len(base))])
			}
		}
		// A CLEAR with inserts (Graph Store PUT) of a graph that holds
		// every base triple and the writes so far, and later a DROP, each
		// followed by writes that bring back vertices, types and
		// predicates the clear removed from the index.
		switch step {
		case 10:
			c.Clear = true
			c.Insert = append(c.Insert, base[:200]...)
		case 18:
			c.Drop, c.Delete = true, nil
		}
		if c.Clear || c.Drop {
			clear(cur)
		}
		for _, tr := range c.Delete {
			delete(cur, tr)
		}
		for _, tr := range c.Insert {
			cur[tr] = true
		}
		nw, err := whole.Apply(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		whole = nw
		for n := range parts {
			np, err := parts[n].ApplyHosted(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if np.Version() != nw.Version() || np.Stamp() != nw.Stamp() {
				t.Fatalf("node %d at version %d stamp %d, the whole dataset at %d/%d", n, np.Version(), np.Stamp(), nw.Version(), nw.Stamp())
			}
			parts[n] = np
		}
	}
	// Same IDs on every node.
	for _, tr := range universe {
		for _, x := range []rdf.Term{tr.S, tr.P, tr.O} {
			want, ok := whole.Dict().Lookup(x)
			for n := range parts {
				got, ok2 := parts[n].Dict().Lookup(x)
				if ok != ok2 || got != want {
					t.Fatalf("node %d: %v has ID %d (%v), the whole dataset %d (%v)", n, x, got, ok2, want, ok)
				}
			}
		}
	}
	var live []rdf.Triple
	for tr := range cur {
		live = append(live, tr)
	}
	ws := whole.Default()
	ref := buildReference(t, ws, live)
	holder := func(shard int) *Store { return parts[shard%nodes].Default() }
	// Every list of the universe's keys, on the shard that holds it.
	keys := map[Key]bool{}
	for k := range ref.lists {
		keys[k] = true
	}
	for _, tr := range universe {
		s, ok1 := whole.Dict().Lookup(tr.S)
		p, ok2 := whole.Dict().Lookup(tr.P)
		o, ok3 := whole.Dict().Lookup(tr.O)
		if ok1 && ok2 && ok3 {
			keys[MakeKey(s, p, Out)], keys[MakeKey(o, p, In)] = true, true
			keys[MakeKey(s, AllPredicates, Out)], keys[MakeKey(o, AllPredicates, In)] = true, true
		}
	}
	for k := range keys {
		shard := ws.Owner(k.Vertex())
		got, err := holder(shard).Shard(shard).AppendEdges(ctx, nil, k.Vertex(), k.Pred(), k.Dir())
		if err != nil {
			t.Fatal(err)
		}
		want, err := ws.Shard(shard).AppendEdges(ctx, nil, k.Vertex(), k.Pred(), k.Dir())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || !slices.Equal(want, ref.lists[k]) {
			t.Fatalf("shard %d: %v = %v on its node, %v in the whole dataset, %v in the reference", shard, k, got, want, ref.lists[k])
		}
	}
	for shard := 0; shard < shards; shard++ {
		for k, want := range ref.index[shard] {
			if got := holder(shard).Shard(shard).AppendIndex(nil, k.Pred(), k.Dir()); !slices.Equal(got, want) {
				t.Fatalf("shard %d: index %v = %v, want %v", shard, k, got, want)
			}
		}
		for _, d := range []Dir{In, Out} {
			if got, want := holder(shard).Shard(shard).AppendPredicates(nil, d), ref.index[shard][MakeKey(IndexVertex, AllPredicates, d)]; !slices.Equal(got, want) {
				t.Fatalf("shard %d: predicates %s = %v, want %v", shard, d, got, want)
			}
		}
	}
	// Each node starts from the snapshot's statistics and counts its own
	// share of every change: the shares add up to the whole's change.
	var triples, subjects, objects int64
	for n := range parts {
		s := parts[n].Default().Stats()
		triples += int64(s.Triples) - int64(baseStats.Triples)
		subjects += int64(s.Subjects) - int64(baseStats.Subjects)
		objects += int64(s.Objects) - int64(baseStats.Objects)
	}
	if w := ws.Stats(); triples != int64(w.Triples)-int64(baseStats.Triples) || int64(w.Triples) != int64(len(live)) ||
		subjects != int64(w.Subjects)-int64(baseStats.Subjects) || objects != int64(w.Objects)-int64(baseStats.Objects) {
		t.Fatalf("the nodes' shares change the triples by %d, subjects by %d, objects by %d; the whole dataset %d→%d, %d→%d, %d→%d (%d live)",
			triples, subjects, objects, baseStats.Triples, w.Triples, baseStats.Subjects, w.Subjects, baseStats.Objects, w.Objects, len(live))
	}
	// Refused the same way on every node, with nothing changed.
	for _, c := range []GraphChange{
		{Graph: ex("g"), Insert: []rdf.Triple{tri(ex("a"), ex("p0"), ex("b"))}},
		{Insert: []rdf.Triple{tri(ex("a"), ex("v7"), ex("b"))}}, // v7 is a vertex
	} {
		for n := range parts {
			if _, err := parts[n].ApplyHosted(ctx, c); !errors.Is(err, ErrAllShardsNeeded) {
				t.Fatalf("node %d: %+v gave %v", n, c, err)
			}
		}
	}
	for n := range parts {
		if _, err := parts[n].ApplyHosted(ctx, GraphChange{Insert: []rdf.Triple{tri(ex("z1"), ex("p0"), ex("z2"))}}); err != nil {
			t.Fatalf("node %d after a refusal: %v", n, err)
		}
	}
}

func buildTestStore(t *testing.T, ts []rdf.Triple, shards int) *Store {
	t.Helper()
	b, err := NewBuilder(shards)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddTriples(ts); err != nil {
		t.Fatal(err)
	}
	st, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return st
}
