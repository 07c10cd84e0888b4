package graphstore

import (
	"bytes"
	"context"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

// Literals with a long suffix after their last '@' (e-mail addresses) are
// stored with the suffix in the shared table, IRIs ending in a word and a
// number with the word in their prefix; every dictionary path gives them
// back exactly: Lookup, Term, AppendNTriples, a snapshot, an
// extended dictionary, a version 1 dictionary file.
func TestDictLiteralSuffixes(t *testing.T) {
	ex := func(s string) rdf.Term { return rdf.NewIRI("http://ex.org/" + s) }
	lits := []rdf.Term{
		rdf.NewLiteral("Student1@Department0.University0.edu", ""),
		rdf.NewLiteral("Student2@Department0.University0.edu", ""),
		rdf.NewLiteral("Student1@Department1.University0.edu", ""),
		rdf.NewLiteral("Student1", ""),
		rdf.NewLiteral("@Department0.University0.edu", ""),            // nothing before '@'
		rdf.NewLiteral("x@short", ""),                                 // suffix too short
		rdf.NewLiteral("a@b@Department0.University0.edu", ""),         // last '@'
		rdf.NewLiteral("q\"uote\\@Depart\nment0.University0.edu", ""), // escapes on both sides
		rdf.NewLangLiteral("Student1@Department0.University0.edu", "en"),
		rdf.NewLiteral("Student1@Department0.University0.edu", "http://ex.org/dt"),
		rdf.NewLiteral("UndergraduateStudent123@Department1.University0.edu", ""),
		rdf.NewLiteral("Student007", ""),
		rdf.NewLiteral("x1", ""),
		rdf.NewLiteral("1234", ""),
		rdf.NewLangLiteral("Student8", "en"),
		// IRIs split after a word followed by a number, or at the namespace.
		rdf.NewIRI("http://www.Department0.University0.edu/GraduateStudent45"),
		rdf.NewIRI("http://www.Department0.University0.edu/GraduateStudent045"),
		rdf.NewIRI("http://www.Department0.University0.edu/GraduateStudent"),
		rdf.NewIRI("http://www.Department0.University0.edu/45"),
		rdf.NewIRI("http://www.Department0.University0.edu/Grad-Student45"),
		rdf.NewIRI("http://www.Department0.University0.edu/"),
		rdf.NewIRI("http://x.org#Course7"),
		rdf.NewIRI("urn:x:Course7"),
	}
	var ts []rdf.Triple
	for i, l := range lits {
		ts = append(ts, tri(ex("s"), ex("p"), l), tri(ex("s"+string(rune('a'+i))), ex("q"), l))
	}
	st, _ := buildStore(t, ts, 2, 3)
	defer st.Close()
	check := func(what string, d *Dict) {
		t.Helper()
		for _, l := range lits {
			id, ok := d.Lookup(l)
			if !ok {
				t.Fatalf("%s: %s not found", what, l)
			}
			back, ok := d.Term(id)
			if !ok || back != l {
				t.Fatalf("%s: Term(Lookup(%s)) = %s", what, l, back)
			}
			nt, ok := d.AppendNTriples(nil, id)
			if !ok || string(nt) != l.String() {
				t.Fatalf("%s: AppendNTriples(%s) = %s", what, l, nt)
			}
		}
		for _, l := range []rdf.Term{rdf.NewIRI("http://www.Department0.University0.edu/GraduateStudent4"), rdf.NewIRI("http://www.Department0.University0.edu/GraduateStuden45"), rdf.NewLiteral("Student07", ""), rdf.NewLiteral("Student1@Department0.University0.ed", ""), rdf.NewLiteral("Student1@Department2.University0.edu", ""), rdf.NewLiteral("Student3@Department0.University0.edu", ""), rdf.NewLiteral("Student1@Department0.University0.ed", "")} {
			if _, ok := d.Lookup(l); ok {
				t.Fatalf("%s: unknown %s found", what, l)
			}
		}
	}
	d := st.Dict()
	check("built", d)
	if !bytes.Contains(d.arena, []byte{kindLitSuffix}) || !bytes.Contains(d.arena, []byte{kindLitAffix}) {
		t.Fatal("no literal stored with a suffix, or none with a head")
	}

	var buf bytes.Buffer
	if err := d.writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	d2, err := parseDict(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	check("written and read", d2)
	for _, magic := range [][8]byte{dictMagicV1, dictMagicV2} {
		var old bytes.Buffer
		if err := d.writeFormat(&old, magic); err != nil {
			t.Fatal(err)
		}
		d3, err := parseDict(old.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", magic[:], err)
		}
		check(string(magic[:]), d3)
	}

	dir := t.TempDir() + "/snap"
	if err := WriteSnapshot(dir, st); err != nil {
		t.Fatal(err)
	}
	st2, err := OpenSnapshot(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	check("snapshot", st2.Dict())

	// New terms extend the dictionary (its hash table is rebuilt).
	ds := NewDataset(st)
	newLit := rdf.NewLiteral("Student9@Department0.University0.edu", "")
	ds2, err := ds.MergeGraph(context.Background(), rdf.Term{}, []rdf.Triple{tri(ex("new"), ex("p"), newLit)})
	if err != nil {
		t.Fatal(err)
	}
	defer ds2.Close()
	check("extended", ds2.Dict())
	if id, ok := ds2.Dict().Lookup(newLit); !ok {
		t.Fatal("new literal not found")
	} else if back, _ := ds2.Dict().Term(id); back != newLit {
		t.Fatalf("new literal came back as %s", back)
	}
}
