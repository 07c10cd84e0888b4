package graphstore

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/wukongd/wukongd/rdf"
)

// The mapped prefix table (WKDICT03) is read in place; offsets that a
// corrupt file puts out of order or beyond its bytes make the terms using
// them unknown, never a crash, and a section whose bounds are wrong is
// refused at open.
func TestMappedPrefixTableCorrupt(t *testing.T) {
	var ts []rdf.Triple
	for _, s := range []string{"http://a.org/x/Student1", "http://a.org/y/Course2", "http://b.org/z/Paper3"} {
		ts = append(ts, tri(rdf.NewIRI(s), rdf.NewIRI("http://a.org/p"), rdf.NewLiteral("Student4@Department0.University0.edu", "")))
	}
	st, _ := buildStore(t, ts, 1, 1)
	defer st.Close()
	var buf bytes.Buffer
	if err := st.Dict().writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	img := buf.Bytes()
	d, err := parseDict(img)
	if err != nil {
		t.Fatal(err)
	}
	if d.prefixes.offs == nil || d.prefixes.n < 3 {
		t.Fatalf("prefix table not mapped (%d prefixes)", d.prefixes.n)
	}
	// The offsets section starts 16 bytes into the prefix section, which
	// ends the file.
	preLen := binary.LittleEndian.Uint64(img[48:])
	sec := uint64(len(img)) - pad8(preLen)
	offs := sec + 16
	w := d.prefixes.offW
	for _, bad := range []uint64{1 << 40, 0} {
		c := bytes.Clone(img)
		putUint(c[offs:], w, 1, bad) // prefix 0 ends beyond the bytes, or prefix 1 starts before prefix 0 ends
		if bad == 0 {
			putUint(c[offs:], w, 1, getUint(c[offs:], w, 2)+1)
		}
		cd, err := parseDict(c)
		if err != nil {
			continue // refused at open: fine too
		}
		for id := ID(1); id <= cd.MaxID(); id++ {
			cd.Term(id)
			cd.AppendNTriples(nil, id)
		}
		for _, tr := range ts {
			cd.Lookup(tr.S)
		}
	}
	// Wrong bounds of the whole section are refused.
	c := bytes.Clone(img)
	binary.LittleEndian.PutUint64(c[sec:], 1<<50)
	if _, err := parseDict(c); err == nil {
		t.Fatal("a prefix count beyond the section was accepted")
	}
}
