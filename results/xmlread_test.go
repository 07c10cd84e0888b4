package results

import (
	"bytes"
	"github.com/wukongd/wukongd/internal/shareddata"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/iotest"
)

func compareXMLWithOracle(t *testing.T, doc []byte) {
	t.Helper()
	want := readOutcome(newOldXMLReader(bytes.NewReader(doc)))
	for _, r := range []io.Reader{bytes.NewReader(doc), iotest.OneByteReader(bytes.NewReader(doc))} {
		got := readOutcome(newXMLReader(r))
		if (got.Err != nil) != (want.Err != nil) {
			t.Fatalf("%q:\nnew error %v\noracle error %v", doc, got.Err, want.Err)
		}
		w := want
		got.Err, w.Err = nil, nil
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("%q:\nnew    %#v\noracle %#v", doc, got, want)
		}
	}
}

const xmlHead = `<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="a"/><variable name="b"/></head><results>`

var xmlSeeds = []string{
	xmlHead + `<result><binding name="a"><uri>http://x</uri></binding><binding name="b"><literal xml:lang="EN">hi</literal></binding></result></results></sparql>`,
	xmlHead + `<result><binding name="a"><bnode>b0</bnode><uri>u</uri></binding></result><result></result></results></sparql>`,
	xmlHead + `<result><binding name="a"><literal datatype="http://www.w3.org/2001/XMLSchema#integer">4</literal><literal>5<x>y</x>6<![CDATA[<7>]]><!-- c --></literal></binding></result></results></sparql>`,
	xmlHead + `<result><binding name="c"><uri>x</uri></binding></result></results></sparql>`,
	xmlHead + `<result><binding name="a"></binding></result></results></sparql>`,
	xmlHead + `<result><binding name="a" name="b"><uri>x</uri></binding></result></results></sparql>`,
	xmlHead + `<result><other><binding name="a"><uri>x</uri></binding></other><binding name="b"><uri>y</uri><extra/></binding></result></results></sparql>`,
	xmlHead + `<result><binding name="a"><uri>x</uri></binding></result><foo/></results></sparql>`,
	xmlHead + `<result><binding name="a"><uri>x</uri></result></results></sparql>`,
	xmlHead + `<result><binding name="a"><uri>&amp;&lt;&#x41;</uri></binding></result></results></sparql>`,
	`<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/><boolean>true</boolean></sparql>`,
}

func TestXMLReaderMatchesOracle(t *testing.T) {
	for _, d := range xmlSeeds {
		compareXMLWithOracle(t, []byte(d))
	}
	compareXMLWithOracle(t, benchDoc(FormatXML, 100))
	compareXMLWithOracle(t, []byte(writeSolutions(t, FormatXML, testVars, testRows)))
	n := 0
	_ = filepath.Walk(shareddata.Path("w3c", "sparql11"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && filepath.Ext(p) == ".srx" {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			compareXMLWithOracle(t, b)
			n++
		}
		return nil
	})
	t.Logf("%d W3C .srx files", n)
}

func FuzzXMLReader(f *testing.F) {
	for _, d := range xmlSeeds {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		compareXMLWithOracle(t, doc)
	})
}
