package loader

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
)

// A failed load publishes nothing: the snapshot loaded before into the
// same directory still opens with its old contents.
func TestLoadFailureKeepsSnapshot(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.ttl")
	if err := os.WriteFile(good, []byte("@prefix : <http://a/> . :s :p :o1, :o2 ; a :C ."), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "snap")
	sum, err := Load(context.Background(), Config{Inputs: []string{good}, Out: out, BuildOptions: BuildOptions{Shards: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Distinct != 3 || sum.SnapshotBytes == 0 {
		t.Fatalf("summary %+v", sum)
	}
	bad := writeBadNT(t, dir, 1000)
	_, err = Load(context.Background(), Config{Inputs: []string{bad}, Out: out})
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 1000 {
		t.Fatalf("got %v, want a syntax error at line 1000", err)
	}
	m, err := graphstore.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Triples != 3 {
		t.Fatalf("manifest has %d triples after the failed load, want 3", m.Triples)
	}
	st, err := graphstore.OpenSnapshot(out, graphstore.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Dict().Len() < 5 {
		t.Fatalf("old snapshot has %d terms", st.Dict().Len())
	}
	// The old terms are there, and none of the failed load's.
	for _, v := range []string{"http://a/s", "http://a/p", "http://a/o1", "http://a/o2", "http://a/C", rdf.RDFType} {
		if _, ok := st.Dict().Lookup(rdf.NewIRI(v)); !ok {
			t.Errorf("old snapshot lacks <%s>", v)
		}
	}
	if _, ok := st.Dict().Lookup(rdf.NewIRI("http://a/s1")); ok {
		t.Error("old snapshot has <http://a/s1> of the failed load")
	}
}
