package graphstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

var (
	gA = rdf.NewIRI("http://ex.org/graphA")
	gB = rdf.NewBlank("gB")
)

// testQuads returns triples for the default graph and two named graphs
// that share terms (subjects, predicates, classes, literals).
func testQuads(n int) (def, a, b []rdf.Triple) {
	ts := testTriples(n, 7)
	for i, t := range ts {
		switch i % 3 {
		case 0:
			def = append(def, t)
		case 1:
			a = append(a, t)
		default:
			b = append(b, t)
		}
	}
	// The same triple in two graphs, and a graph-only term.
	def = append(def, ts[1])
	a = append(a, ts[1], tri(rdf.NewIRI("http://ex.org/onlyA"), rdf.NewIRI("http://ex.org/pA"), rdf.NewLiteral("x", "")))
	return def, a, b
}

func buildDataset(t testing.TB, shards int, graphs map[rdf.Term][]rdf.Triple) *Dataset {
	t.Helper()
	db, err := NewDatasetBuilder(shards)
	if err != nil {
		t.Fatal(err)
	}
	// Interleave the graphs in mixed quad batches.
	var quads []rdf.Quad
	for _, g := range slices.SortedFunc(maps.Keys(graphs), compareGraphNames) {
		for _, tr := range graphs[g] {
			quads = append(quads, rdf.Quad{S: tr.S, P: tr.P, O: tr.O, G: g})
		}
	}
	for i := range quads {
		j := (i * 7919) % len(quads)
		quads[i], quads[j] = quads[j], quads[i]
	}
	for i := 0; i < len(quads); i += 97 {
		if err := db.AddQuads(quads[i:min(i+97, len(quads))]); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := db.Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	return ds
}

// contents returns the triples of st in N-Triples, decoded with d.
func contents(t testing.TB, d *Dict, st *Store) []string {
	t.Helper()
	var r []string
	err := st.EachTriple(context.Background(), func(s, p, o ID) error {
		var line []byte
		for _, id := range []ID{s, p, o} {
			var ok bool
			if line, ok = d.AppendNTriples(line, id); !ok {
				return fmt.Errorf("ID %d is not in the dictionary", id)
			}
			line = append(line, ' ')
		}
		r = append(r, string(line)+".")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(r)
	if n := len(slices.Compact(slices.Clone(r))); n != len(r) {
		t.Fatalf("EachTriple returned %d triples, %d distinct", len(r), n)
	}
	return r
}

func ntSet(ts []rdf.Triple) []string {
	var r []string
	for _, t := range ts {
		r = append(r, t.S.String()+" "+t.P.String()+" "+t.O.String()+" .")
	}
	slices.Sort(r)
	return slices.Compact(r)
}

func checkGraph(t *testing.T, ds *Dataset, st *Store, want []rdf.Triple) {
	t.Helper()
	if got, w := contents(t, ds.Dict(), st), ntSet(want); !slices.Equal(got, w) {
		t.Fatalf("graph has %d triples, want %d:\n got %q\nwant %q", len(got), len(w), got[:min(5, len(got))], w[:min(5, len(w))])
	}
	checkStore(t, st, buildReference(t, st, want))
	if st.Stats().Triples != uint64(len(ntSet(want))) {
		t.Fatalf("statistics count %d triples, want %d", st.Stats().Triples, len(ntSet(want)))
	}
}

func TestDatasetBuilderGraphs(t *testing.T) {
	def, a, b := testQuads(2000)
	for _, shards := range []int{1, 3} {
		t.Run(fmt.Sprint(shards), func(t *testing.T) {
			ds := buildDataset(t, shards, map[rdf.Term][]rdf.Triple{{}: def, gA: a, gB: b})
			checkGraph(t, ds, ds.Default(), def)
			sa, ok := ds.Graph(gA)
			if !ok {
				t.Fatal("graph A missing")
			}
			checkGraph(t, ds, sa, a)
			sb, ok := ds.Graph(gB)
			if !ok {
				t.Fatal("graph B missing")
			}
			checkGraph(t, ds, sb, b)
			if _, ok := ds.Graph(rdf.NewIRI("http://ex.org/none")); ok {
				t.Fatal("an absent graph was found")
			}
			if _, ok := ds.Graph(rdf.Term{}); ok {
				t.Fatal("the zero term names a graph")
			}

			// One dictionary: the same term has the same ID in every graph.
			for _, st := range []*Store{ds.Default(), sa, sb} {
				if st.Dict() != ds.Dict() || st.NumShards() != shards {
					t.Fatal("a graph store has its own dictionary or shard count")
				}
			}
			shared := a[len(a)-2] // in the default graph and in A
			idsIn := func(st *Store) map[[3]ID]bool {
				m := map[[3]ID]bool{}
				st.EachTriple(context.Background(), func(s, p, o ID) error { m[[3]ID{s, p, o}] = true; return nil })
				return m
			}
			var x [3]ID
			for i, term := range []rdf.Term{shared.S, shared.P, shared.O} {
				x[i], _ = ds.Dict().Lookup(term)
			}
			if !idsIn(ds.Default())[x] || !idsIn(sa)[x] {
				t.Fatalf("triple %v has different IDs in the default graph and graph A", shared)
			}

			// Graphs: IRIs before blank nodes, names in the dictionary.
			gs := ds.Graphs()
			if len(gs) != 2 || gs[0].Name != gA || gs[1].Name != gB || gs[0].Store != sa || gs[1].Store != sb || ds.NumGraphs() != 2 {
				t.Fatalf("Graphs() = %+v", gs)
			}
			for _, g := range gs {
				id, ok := ds.Dict().Lookup(g.Name)
				if !ok || id != g.ID {
					t.Fatalf("graph %v has ID %d, the dictionary %d", g.Name, g.ID, id)
				}
				if n, ok := ds.GraphByID(id); !ok || n.Store != g.Store || n.Name != g.Name {
					t.Fatalf("GraphByID(%d) = %+v", id, n)
				}
			}
			if _, ok := ds.GraphByID(TypeID); ok {
				t.Fatal("rdf:type names a graph")
			}
			want := uint64(len(ntSet(def)) + len(ntSet(a)) + len(ntSet(b)))
			if ds.Triples() != want || ds.Terms() != uint64(ds.Dict().Len()) || ds.NumShards() != shards {
				t.Fatalf("totals: %d triples (want %d), %d terms, %d shards", ds.Triples(), want, ds.Terms(), ds.NumShards())
			}
		})
	}
}

func TestDatasetBuilderCountersAndErrors(t *testing.T) {
	db, err := NewDatasetBuilder(2)
	if err != nil {
		t.Fatal(err)
	}
	ex := func(s string) rdf.Term { return rdf.NewIRI("http://ex.org/" + s) }
	if err := db.AddTriples(rdf.NewLiteral("g", ""), []rdf.Triple{tri(ex("s"), ex("p"), ex("o"))}); err == nil {
		t.Fatal("a literal graph name was accepted")
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.AddTriples(rdf.Term{}, []rdf.Triple{tri(ex("s"), ex("p"), ex("o")), tri(ex("s"), ex("p"), ex("o"))}))
	must(db.AddTriples(ex("g1"), []rdf.Triple{tri(ex("s"), ex("p"), ex("o"))}))
	must(db.AddQuads([]rdf.Quad{{S: ex("s"), P: ex("q"), O: ex("o"), G: ex("g1")}, {S: ex("s"), P: ex("q"), O: ex("o")}}))
	must(db.AddGraph(ex("empty")))
	if c := db.Counters(); c.Read != 5 || len(c.Graphs) != 3 || c.Graphs[0].Read != 3 || c.Graphs[1].Name != ex("empty") || c.Graphs[2].Read != 2 {
		t.Fatalf("counters before Build: %+v", c)
	}
	ds, err := db.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	c := db.Counters()
	want := DatasetCounters{BuildCounters: BuildCounters{Read: 5, Duplicates: 1, Distinct: 4, Terms: uint64(ds.Dict().Len())},
		Graphs: []GraphCounters{{Read: 3, Duplicates: 1, Distinct: 2}, {Name: ex("empty")}, {Name: ex("g1"), Read: 2, Distinct: 2}}}
	if fmt.Sprint(c) != fmt.Sprint(want) {
		t.Fatalf("counters after Build: %+v, want %+v", c, want)
	}
	if st, ok := ds.Graph(ex("empty")); !ok || st.Stats().Triples != 0 {
		t.Fatal("the empty graph is missing or not empty")
	}
	if ds.Triples() != 4 {
		t.Fatalf("%d triples", ds.Triples())
	}
	if err := db.AddQuads([]rdf.Quad{{S: ex("s"), P: ex("p"), O: ex("o")}}); err == nil {
		t.Fatal("AddQuads after Build succeeded")
	}
	if _, err := db.Build(); err == nil {
		t.Fatal("a second Build succeeded")
	}
}

func TestDatasetSnapshotRoundTrip(t *testing.T) {
	def, a, b := testQuads(1500)
	ds := buildDataset(t, 4, map[rdf.Term][]rdf.Triple{{}: def, gA: a, gB: b})
	dir := filepath.Join(t.TempDir(), "snap")
	if err := WriteDataset(dir, ds); err != nil {
		t.Fatal(err)
	}
	m, err := ReadDatasetManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.FormatVersion != DatasetFormatVersion || m.Triples != ds.Triples() || m.Terms != ds.Terms() || m.Shards != 4 || len(m.Graphs) != 2 {
		t.Fatalf("manifest %+v", m)
	}
	if m.Graphs[0].Name != (GraphName{"iri", gA.Value}) || m.Graphs[0].Dir != "graph-00001" || m.Graphs[1].Name != (GraphName{"blank", "gB"}) {
		t.Fatalf("manifest graphs %+v", m.Graphs)
	}
	ds2, err := OpenDataset(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds2.Close()
	checkGraph(t, ds2, ds2.Default(), def)
	sa, _ := ds2.Graph(gA)
	checkGraph(t, ds2, sa, a)
	sb, _ := ds2.Graph(gB)
	checkGraph(t, ds2, sb, b)
	for i, g := range ds2.Graphs() {
		if g.ID != ds.Graphs()[i].ID || g.Name != ds.Graphs()[i].Name {
			t.Fatalf("graph %d: %+v after reopening, %+v before", i, g, ds.Graphs()[i])
		}
	}
	for _, tr := range a {
		x, _ := ds.Dict().Lookup(tr.O)
		y, ok := ds2.Dict().Lookup(tr.O)
		if !ok || x != y {
			t.Fatalf("%v: ID %d before, %d after reopening", tr.O, x, y)
		}
	}
	// A single-graph reader refuses a dataset with named graphs.
	if _, err := OpenSnapshot(dir, OpenOptions{}); !errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), "OpenDataset") {
		t.Fatalf("OpenSnapshot of a dataset: %v", err)
	}

	// Rewriting replaces the snapshot; a failed write leaves it intact.
	small := buildDataset(t, 2, map[rdf.Term][]rdf.Triple{{}: def[:10]})
	testHookBeforeRename = func() error { return errors.New("injected failure") }
	err = WriteDataset(dir, small)
	testHookBeforeRename = nil
	if err == nil {
		t.Fatal("injected failure not reported")
	}
	ents, _ := os.ReadDir(filepath.Dir(dir))
	if len(ents) != 1 {
		t.Fatalf("a failed write left %d entries next to the snapshot", len(ents))
	}
	if m2, err := ReadDatasetManifest(dir); err != nil || m2.Triples != m.Triples {
		t.Fatalf("the old snapshot is damaged after a failed write: %v", err)
	}
	// A dataset without named graphs is a plain single-graph snapshot.
	if err := WriteDataset(dir, small); err != nil {
		t.Fatal(err)
	}
	st, err := OpenSnapshot(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := contents(t, st.Dict(), st); !slices.Equal(got, ntSet(def[:10])) {
		t.Fatalf("single-graph snapshot: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "graph-00001")); !os.IsNotExist(err) {
		t.Fatal("the old dataset's graph directory survived the replacement")
	}
}

func TestDamagedDatasetSnapshotRefused(t *testing.T) {
	def, a, b := testQuads(600)
	ds := buildDataset(t, 2, map[rdf.Term][]rdf.Triple{{}: def, gA: a, gB: b})
	good := filepath.Join(t.TempDir(), "good")
	if err := WriteDataset(good, ds); err != nil {
		t.Fatal(err)
	}
	editManifest := func(edit func(string) string) func(dir string) error {
		return func(dir string) error {
			p := filepath.Join(dir, manifestName)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e := edit(string(b))
			if e == string(b) {
				return fmt.Errorf("the edit changed nothing")
			}
			return os.WriteFile(p, []byte(e), 0o644)
		}
	}
	cases := []struct {
		name   string
		damage func(dir string) error
		want   string
	}{
		{"flipped byte in a named graph's shard", func(dir string) error { return flip(filepath.Join(dir, "graph-00001", shardFileName(1)), 100) }, "checksum"},
		{"truncated named graph statistics", func(dir string) error { return os.Truncate(filepath.Join(dir, "graph-00002", statsName), 3) }, "bytes"},
		{"missing named graph directory", func(dir string) error { return os.RemoveAll(filepath.Join(dir, "graph-00002")) }, "graph-00002"},
		{"newer format", editManifest(func(s string) string {
			return strings.Replace(s, `"format_version": 2`, `"format_version": 3`, 1)
		}), "newer"},
		{"graph directory outside", editManifest(func(s string) string {
			return strings.Replace(s, `"dir": "graph-00001"`, `"dir": "../graph-00001"`, 1)
		}), "directory"},
		{"graph ID not the name's", editManifest(func(s string) string {
			id, _ := ds.Dict().Lookup(gA)
			return strings.Replace(s, fmt.Sprintf(`"id": %d,`, id), `"id": 3,`, 1)
		}), "ID"},
		{"named graphs in a version 1 manifest", editManifest(func(s string) string {
			return strings.Replace(s, `"format_version": 2`, `"format_version": 1`, 1)
		}), "named graphs"},
		{"triples of the graphs do not add up", editManifest(func(s string) string {
			return strings.Replace(s, fmt.Sprintf(`"triples": %d,`, ds.Triples()), fmt.Sprintf(`"triples": %d,`, ds.Triples()+1), 1)
		}), "triples"},
		{"garbage manifest", func(dir string) error { return os.WriteFile(filepath.Join(dir, manifestName), []byte("{"), 0o644) }, "manifest"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "snap")
			if err := copyTree(good, dir); err != nil {
				t.Fatal(err)
			}
			if err := c.damage(dir); err != nil {
				t.Fatal(err)
			}
			ds, err := OpenDataset(dir, OpenOptions{})
			if err == nil {
				ds.Close()
				t.Fatal("a damaged snapshot was opened")
			}
			if !errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q: want ErrBadSnapshot mentioning %q", err, c.want)
			}
		})
	}
}

func TestSingleGraphSnapshotOpensAsDataset(t *testing.T) {
	ts := testTriples(1000, 3)
	st, _ := buildStore(t, ts, 3, 100)
	dir := filepath.Join(t.TempDir(), "snap")
	if err := WriteSnapshot(dir, st); err != nil {
		t.Fatal(err)
	}
	ds, err := OpenDataset(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.NumGraphs() != 0 || ds.NumShards() != 3 || ds.Triples() != st.Stats().Triples || len(ds.Graphs()) != 0 {
		t.Fatalf("dataset of a single-graph snapshot: %d graphs, %d shards, %d triples", ds.NumGraphs(), ds.NumShards(), ds.Triples())
	}
	checkGraph(t, ds, ds.Default(), ts)

	// A change of the mapped dataset survives closing it (the mapped
	// dictionary stays until the last store built on it is closed).
	extra := []rdf.Triple{tri(rdf.NewIRI("http://ex.org/new"), rdf.NewIRI("http://ex.org/newP"), rdf.NewLiteral("fresh", ""))}
	ds2, err := ds.MergeGraph(context.Background(), gA, extra)
	if err != nil {
		t.Fatal(err)
	}
	if ds2.Default() != ds.Default() {
		t.Fatal("the untouched default graph was not shared")
	}
	ds.Close()
	checkGraph(t, ds2, ds2.Default(), ts)
	sa, _ := ds2.Graph(gA)
	checkGraph(t, ds2, sa, extra)
	if err := ds2.Close(); err != nil {
		t.Fatal(err)
	}

	// A store wrapped with NewDataset: the same.
	st2, err := OpenSnapshot(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds3 := NewDataset(st2)
	ds4, err := ds3.ReplaceGraph(context.Background(), rdf.Term{}, extra)
	if err != nil {
		t.Fatal(err)
	}
	ds3.Close()
	checkGraph(t, ds4, ds4.Default(), extra)
	ds4.Close()
}

func TestApplySharesUntouchedStores(t *testing.T) {
	ctx := context.Background()
	def, a, b := testQuads(1200)
	ds := buildDataset(t, 3, map[rdf.Term][]rdf.Triple{{}: def, gA: a, gB: b})
	sa, _ := ds.Graph(gA)
	sb, _ := ds.Graph(gB)
	ex := func(s string) rdf.Term { return rdf.NewIRI("http://ex.org/" + s) }
	newA := []rdf.Triple{
		a[0], a[5],
		tri(ex("v1"), ex("brandNewP"), rdf.NewLangLiteral("neu", "de")),     // new predicate, new language tag
		tri(ex("fresh"), rdf.NewIRI(rdf.RDFType), ex("C1")),                 // new subject, old class
		tri(ex("fresh"), rdf.NewIRI(rdf.RDFType), ex("NewClass")),           // new class
		tri(ex("fresh"), ex("p1"), rdf.NewLiteral("3", "http://ex.org/dt")), // new datatype
		tri(rdf.NewIRI("http://other.example/x"), ex("p0"), ex("p1")),       // new prefix; a predicate as object
	}
	ds2, err := ds.ReplaceGraph(ctx, gA, newA)
	if err != nil {
		t.Fatal(err)
	}
	defer ds2.Close()
	if ds2.Default() != ds.Default() {
		t.Fatal("the default graph's store is not shared")
	}
	if s, _ := ds2.Graph(gB); s != sb {
		t.Fatal("graph B's store is not shared")
	}
	sa2, _ := ds2.Graph(gA)
	if sa2 == sa {
		t.Fatal("the replaced graph kept its store")
	}
	checkGraph(t, ds2, sa2, newA)
	checkGraph(t, ds2, ds2.Default(), def)
	checkGraph(t, ds2, sb, b)
	// Old IDs stay; the old dataset is unchanged.
	for _, tr := range def {
		for _, term := range []rdf.Term{tr.S, tr.P, tr.O} {
			x, _ := ds.Dict().Lookup(term)
			if y, ok := ds2.Dict().Lookup(term); !ok || x != y {
				t.Fatalf("%v: ID %d before, %d after", term, x, y)
			}
		}
	}
	if id, _ := ds2.Dict().Lookup(ex("NewClass")); !ds2.Dict().IsClass(id) {
		t.Fatal("the new class is not in the low range")
	}
	if id, _ := ds2.Dict().Lookup(ex("brandNewP")); !ds2.Dict().IsPredicate(id) {
		t.Fatal("the new predicate is not in the low range")
	}
	checkGraph(t, ds, sa, a)

	// Closing the old dataset keeps the shared stores open.
	ds.Close()
	checkGraph(t, ds2, sb, b)

	// Merge, delete triples, create and drop graphs in one change.
	gC := ex("graphC")
	ds3, err := ds2.Apply(ctx,
		GraphChange{Graph: gB, Drop: true},
		GraphChange{Insert: []rdf.Triple{tri(ex("v1"), ex("p2"), ex("v2"))}, Delete: []rdf.Triple{def[0], def[1], tri(ex("unknown"), ex("p1"), ex("v1"))}},
		GraphChange{Graph: gC, Insert: newA[2:4]},
		GraphChange{Graph: gC, Delete: newA[3:4]},
		GraphChange{Graph: ex("never"), Delete: newA[:1]},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer ds3.Close()
	if _, ok := ds3.Graph(gB); ok {
		t.Fatal("graph B was not dropped")
	}
	if _, ok := ds3.Graph(ex("never")); ok {
		t.Fatal("a delete created a graph")
	}
	if s, _ := ds3.Graph(gA); s != sa2 {
		t.Fatal("graph A's store is not shared")
	}
	wantDef := append([]rdf.Triple{tri(ex("v1"), ex("p2"), ex("v2"))}, slices.DeleteFunc(slices.Clone(def), func(x rdf.Triple) bool { return x == def[0] || x == def[1] })...)
	checkGraph(t, ds3, ds3.Default(), wantDef)
	sc, ok := ds3.Graph(gC)
	if !ok {
		t.Fatal("graph C was not created")
	}
	checkGraph(t, ds3, sc, newA[2:3])
	if gs := ds3.Graphs(); len(gs) != 2 || gs[0].Name != gA || gs[1].Name != gC {
		t.Fatalf("graphs %+v", gs)
	}
	if id, _ := ds3.Dict().Lookup(gC); ds3.Graphs()[1].ID != id {
		t.Fatal("graph C's ID is not its name's")
	}

	// DeleteGraph of the default graph empties it; the others stay.
	ds4, err := ds3.DeleteGraph(ctx, rdf.Term{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds4.Close()
	if ds4.Default().Stats().Triples != 0 || ds4.NumGraphs() != 2 {
		t.Fatal("DeleteGraph of the default graph")
	}

	// A snapshot of a dataset whose stores were built on different
	// dictionaries reopens with one.
	dir := filepath.Join(t.TempDir(), "snap")
	if err := WriteDataset(dir, ds3); err != nil {
		t.Fatal(err)
	}
	ds5, err := OpenDataset(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds5.Close()
	checkGraph(t, ds5, ds5.Default(), wantDef)
	s5, _ := ds5.Graph(gA)
	checkGraph(t, ds5, s5, newA)

	// ds3 is not the newest version any more (ds4 was built on it): a
	// change of it compacts it into a dataset of its own, nothing shared,
	// contents kept; an existing vertex used as a predicate moves to a
	// new low ID.
	promoted := tri(ex("v1"), ex("v2"), ex("v3"))
	ds6, err := ds3.MergeGraph(ctx, gC, []rdf.Triple{promoted})
	if err != nil {
		t.Fatal(err)
	}
	defer ds6.Close()
	if ds6.Default() == ds3.Default() {
		t.Fatal("a change of an older version shares a store with the newer one")
	}
	if id, _ := ds6.Dict().Lookup(ex("v2")); !ds6.Dict().IsPredicate(id) {
		t.Fatal("the promoted vertex is not a predicate")
	}
	checkGraph(t, ds6, ds6.Default(), wantDef)
	s6, _ := ds6.Graph(gA)
	checkGraph(t, ds6, s6, newA)
	s6c, _ := ds6.Graph(gC)
	checkGraph(t, ds6, s6c, []rdf.Triple{newA[2], promoted})
}

func TestApplyErrors(t *testing.T) {
	ds := buildDataset(t, 2, map[rdf.Term][]rdf.Triple{{}: testTriples(50, 1)})
	ex := func(s string) rdf.Term { return rdf.NewIRI("http://ex.org/" + s) }
	for _, c := range []GraphChange{
		{Graph: rdf.NewLiteral("g", ""), Insert: []rdf.Triple{tri(ex("s"), ex("p"), ex("o"))}},
		{Insert: []rdf.Triple{tri(ex("s"), rdf.NewBlank("p"), ex("o"))}},
		{Insert: []rdf.Triple{tri(ex("s"), ex("p"), rdf.Term{})}},
	} {
		if ds2, err := ds.Apply(context.Background(), c); err == nil {
			ds2.Close()
			t.Fatalf("change %+v accepted", c)
		}
	}
	// The dataset is unchanged and usable.
	checkGraph(t, ds, ds.Default(), testTriples(50, 1))
}

// copyTree copies a snapshot directory with its graph subdirectories.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

func TestDatasetBuilderConcurrentFeeding(t *testing.T) {
	def, a, b := testQuads(3000)
	var quads []rdf.Quad
	for g, ts := range map[rdf.Term][]rdf.Triple{{}: def, gA: a, gB: b} {
		for _, tr := range ts {
			quads = append(quads, rdf.Quad{S: tr.S, P: tr.P, O: tr.O, G: g})
		}
	}
	db, err := NewDatasetBuilder(4)
	if err != nil {
		t.Fatal(err)
	}
	const feeders = 4
	errs := make(chan error, feeders)
	for f := 0; f < feeders; f++ {
		go func() {
			var err error
			for i := f * 50; i < len(quads) && err == nil; i += feeders * 50 {
				part := quads[i:min(i+50, len(quads))]
				if f%2 == 0 {
					err = db.AddQuads(part)
				} else {
					for _, q := range part {
						if err = db.AddTriples(q.G, []rdf.Triple{q.Triple()}); err != nil {
							break
						}
					}
				}
			}
			errs <- err
		}()
	}
	for f := 0; f < feeders; f++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	ds, err := db.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	checkGraph(t, ds, ds.Default(), def)
	sa, _ := ds.Graph(gA)
	checkGraph(t, ds, sa, a)
	sb, _ := ds.Graph(gB)
	checkGraph(t, ds, sb, b)
	if c := db.Counters(); c.Read != uint64(len(quads)) {
		t.Fatalf("read %d of %d", c.Read, len(quads))
	}
}
