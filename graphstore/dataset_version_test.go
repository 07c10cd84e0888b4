package graphstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

// TestDatasetVersions checks the version contract a write-ahead log builds
// on: Apply adds one, Amend keeps it, a snapshot records it.
func TestDatasetVersions(t *testing.T) {
	ctx := context.Background()
	ex := func(s string) rdf.Term { return rdf.NewIRI("http://ex.org/" + s) }
	ds := buildDataset(t, 2, map[rdf.Term][]rdf.Triple{{}: testTriples(100, 3)})
	if ds.Version() != 0 {
		t.Fatalf("a built dataset has version %d", ds.Version())
	}
	d1, err := ds.Apply(ctx, GraphChange{Insert: []rdf.Triple{tri(ex("a"), ex("p"), ex("b"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer d1.Close()
	d2, err := d1.Amend(ctx, GraphChange{Insert: []rdf.Triple{tri(ex("b"), ex("p"), ex("c"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	d3, err := d2.Apply(ctx, GraphChange{Delete: []rdf.Triple{tri(ex("a"), ex("p"), ex("b"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer d3.Close()
	if v1, v2, v3 := d1.Version(), d2.Version(), d3.Version(); v1 != 1 || v2 != 1 || v3 != 2 {
		t.Fatalf("versions %d, %d, %d; want 1, 1, 2", v1, v2, v3)
	}
	dir := filepath.Join(t.TempDir(), "snap")
	if err := WriteDataset(dir, d3); err != nil {
		t.Fatal(err)
	}
	d4, err := OpenDataset(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d4.Close()
	if d4.Version() != 2 {
		t.Fatalf("the reopened snapshot has version %d, want 2", d4.Version())
	}
	checkGraph(t, d4, d4.Default(), append(testTriples(100, 3), tri(ex("b"), ex("p"), ex("c"))))
}
