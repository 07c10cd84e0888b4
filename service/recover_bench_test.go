package service

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/wal"
)

// BenchmarkRecover is a restart of a durable LUBM-1 whose log holds
// LUBM-10 with every "University" renamed (1,272,953 triples, all new,
// with new terms): OpenDurable + Recover, in records of 1,000 triples
// and as one record (a Graph Store POST).
func BenchmarkRecover(b *testing.B) {
	triples := renamedLUBM10(b)
	for _, bc := range []struct {
		name string
		per  int
	}{{"records1000", 1000}, {"one", len(triples)}} {
		b.Run(bc.name, func(b *testing.B) {
			dir := recoverDir(b, triples, bc.per)
			b.ResetTimer()
			for range b.N {
				s, err := OpenDurable(dir, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Recover(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				s.Close()
				b.StartTimer()
			}
		})
	}
}

// renamedLUBM10 is LUBM-10 with "University" renamed "Univ".
func renamedLUBM10(b *testing.B) []rdf.Triple {
	raw, err := os.ReadFile(filepath.Join(lubmDir, "lubm10.nt.gz"))
	if err != nil {
		b.Skipf("LUBM-10 not available: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	var text strings.Builder
	buf := new(bytes.Buffer)
	if _, err := buf.ReadFrom(zr); err != nil {
		b.Fatal(err)
	}
	text.WriteString(strings.ReplaceAll(buf.String(), "University", "Univ"))
	var out []rdf.Triple
	err = loader.Parse(strings.NewReader(text.String()), loader.NTriples, loader.Options{}, func(q rdf.Quad) error {
		out = append(out, q.Triple())
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// recoverDir writes LUBM-1 as a snapshot and a log holding triples as
// inserts, per triples a record.
func recoverDir(b *testing.B, triples []rdf.Triple, per int) string {
	st := lubm1Store(b, 4)
	dir := filepath.Join(b.TempDir(), "data")
	if err := graphstore.WriteSnapshot(dir, st); err != nil {
		b.Fatal(err)
	}
	st.Close()
	log, err := wal.Open(filepath.Join(dir, LogDir), wal.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var last *wal.Commit
	for i, lsn := 0, uint64(1); i < len(triples); i, lsn = i+per, lsn+1 {
		payload, err := wal.AppendChanges(nil, []graphstore.GraphChange{{Insert: triples[i:min(i+per, len(triples))]}})
		if err != nil {
			b.Fatal(err)
		}
		last = log.Append(lsn, payload)
	}
	if err := last.Wait(); err != nil {
		b.Fatal(err)
	}
	if err := log.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}
