package loader

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
)

// writeDatasetFiles writes a TriG file and an N-Quads file with a default
// graph and two named graphs (one named in both files) and returns the
// directory.
func writeDatasetFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	trig := `@prefix : <http://a/> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
:s :p :o ; a :C .
:g1 { :s :p :o1 , :o2 . :o1 a :C . :s :name "s"@en }
GRAPH :g2 { :s :p :o . :x :q "1"^^<http://www.w3.org/2001/XMLSchema#integer> }
_:bg { :s :p :o3 }
`
	nq := `<http://a/s> <http://a/p> <http://a/o> .
<http://a/s> <http://a/p> <http://a/o9> <http://a/g1> .
<http://a/s> <http://a/p> <http://a/o1> <http://a/g1> .
<http://a/y> <http://a/q> _:n <http://a/g2> .
`
	if err := os.WriteFile(filepath.Join(dir, "data.trig"), []byte(trig), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data.nq"), []byte(nq), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// graphTriples returns the triples of st in N-Triples, decoded with d,
// blank node labels replaced by "_:b".
func graphTriples(t *testing.T, d *graphstore.Dict, st *graphstore.Store) []string {
	t.Helper()
	var r []string
	err := st.EachTriple(context.Background(), func(s, p, o graphstore.ID) error {
		var parts []string
		for _, id := range []graphstore.ID{s, p, o} {
			term, ok := d.Term(id)
			if !ok {
				t.Fatalf("ID %d not in the dictionary", id)
			}
			if term.IsBlank() {
				term = rdf.NewBlank("b")
			}
			parts = append(parts, term.String())
		}
		r = append(r, strings.Join(parts, " ")+" .")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(r)
	return r
}

var (
	wantDefault = []string{
		"<http://a/s> <http://a/p> <http://a/o> .",
		"<http://a/s> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://a/C> .",
	}
	wantG1 = []string{
		"<http://a/o1> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://a/C> .",
		"<http://a/s> <http://a/name> \"s\"@en .",
		"<http://a/s> <http://a/p> <http://a/o1> .",
		"<http://a/s> <http://a/p> <http://a/o2> .",
		"<http://a/s> <http://a/p> <http://a/o9> .",
	}
	wantG2 = []string{
		"<http://a/s> <http://a/p> <http://a/o> .",
		"<http://a/x> <http://a/q> \"1\"^^<http://www.w3.org/2001/XMLSchema#integer> .",
		"<http://a/y> <http://a/q> _:b .",
	}
	wantBG = []string{"<http://a/s> <http://a/p> <http://a/o3> ."}
)

func checkDataset(t *testing.T, ds *graphstore.Dataset) {
	t.Helper()
	d := ds.Dict()
	if got := graphTriples(t, d, ds.Default()); !slices.Equal(got, wantDefault) {
		t.Fatalf("default graph %q, want %q", got, wantDefault)
	}
	gs := ds.Graphs()
	if len(gs) != 3 || gs[0].Name != rdf.NewIRI("http://a/g1") || gs[1].Name != rdf.NewIRI("http://a/g2") || !gs[2].Name.IsBlank() {
		t.Fatalf("graphs %+v", gs)
	}
	for i, want := range [][]string{wantG1, wantG2, wantBG} {
		if got := graphTriples(t, d, gs[i].Store); !slices.Equal(got, want) {
			t.Fatalf("graph %v: %q, want %q", gs[i].Name, got, want)
		}
		if st, ok := ds.Graph(gs[i].Name); !ok || st != gs[i].Store {
			t.Fatalf("Graph(%v) is not the listed store", gs[i].Name)
		}
	}
	// One dictionary: :s has one ID, the subject of its triples in every graph.
	sID, ok := d.Lookup(rdf.NewIRI("http://a/s"))
	if !ok {
		t.Fatal(":s unknown")
	}
	pID, _ := d.Lookup(rdf.NewIRI("http://a/p"))
	for _, st := range []*graphstore.Store{ds.Default(), gs[0].Store, gs[1].Store, gs[2].Store} {
		found := false
		st.EachTriple(context.Background(), func(s, p, o graphstore.ID) error {
			found = found || (s == sID && p == pID)
			return nil
		})
		if !found {
			t.Fatalf("no (:s :p ?) triple with the dictionary's IDs (%d, %d) in a graph", sID, pID)
		}
	}
}

func TestBuildDatasetLoadsNamedGraphs(t *testing.T) {
	dir := writeDatasetFiles(t)
	inputs, err := ExpandInputs([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []BuildOptions{{Shards: 1, Workers: 1}, {Shards: 3, Workers: 4}} {
		ds, sum, err := BuildDataset(context.Background(), inputs, opts)
		if err != nil {
			t.Fatal(err)
		}
		checkDataset(t, ds)
		if sum.Files != 2 || sum.Triples != 13 || sum.NamedGraphQuads != 10 || sum.Distinct != 11 || sum.Duplicates != 2 || sum.Terms != ds.Terms() {
			t.Fatalf("summary %+v", sum)
		}
		want := []GraphSummary{{Triples: 3, Distinct: 2}, {Name: rdf.NewIRI("http://a/g1"), Triples: 6, Distinct: 5},
			{Name: rdf.NewIRI("http://a/g2"), Triples: 3, Distinct: 3}, {Name: ds.Graphs()[2].Name, Triples: 1, Distinct: 1}}
		if !slices.Equal(sum.Graphs, want) {
			t.Fatalf("graphs %+v, want %+v", sum.Graphs, want)
		}
		ds.Close()
	}
}

func TestLoadPublishesDataset(t *testing.T) {
	dir := writeDatasetFiles(t)
	out := filepath.Join(t.TempDir(), "snap")
	sum, err := Load(context.Background(), Config{Inputs: []string{dir}, Out: out, BuildOptions: BuildOptions{Shards: 2}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := graphstore.ReadDatasetManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.FormatVersion != graphstore.DatasetFormatVersion || m.Triples != 11 || m.Terms != sum.Terms || m.Shards != 2 || len(m.Graphs) != 3 || sum.SnapshotBytes == 0 {
		t.Fatalf("manifest %+v, summary %+v", m, sum)
	}
	ds, err := graphstore.OpenDataset(out, graphstore.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	checkDataset(t, ds)
}
