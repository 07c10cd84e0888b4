package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
)

func TestInfo(t *testing.T) {
	b, err := graphstore.NewBuilder(2)
	if err != nil {
		t.Fatal(err)
	}
	ex := func(s string) rdf.Term { return rdf.NewIRI("http://ex.org/" + s) }
	typ := rdf.NewIRI(rdf.RDFType)
	err = b.AddTriples([]rdf.Triple{
		{S: ex("a"), P: typ, O: ex("Student")},
		{S: ex("b"), P: typ, O: ex("Student")},
		{S: ex("a"), P: ex("knows"), O: ex("b")},
		{S: ex("a"), P: ex("name"), O: rdf.NewLiteral("A", "")},
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "snap")
	if err := graphstore.WriteSnapshot(dir, st); err != nil {
		t.Fatal(err)
	}
	st.Close()
	var out bytes.Buffer
	if err := writeInfo(&out, dir, 10); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`(?m)^triples +4$`, `predicates \(3,`, `(?m)^ +2 <http://ex.org/Student>$`,
		`(?m)^ +1 +1 +1 <http://ex.org/knows>$`, `(?m)^shards +2,`} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
	if err := writeInfo(&out, filepath.Join(dir, "missing"), 10); err == nil {
		t.Error("a missing snapshot gave no error")
	}
}
