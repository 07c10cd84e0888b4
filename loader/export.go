package loader

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
)

// ExportNTriples writes the default graph of ds to w as N-Triples, one
// triple a line, in the store's order. With reasoning that is the
// closure, explicit and inferred triples (what a system without a
// reasoner needs to answer as wukongd does). Named graphs are not
// written. It returns the number of triples written.
func ExportNTriples(ctx context.Context, ds *graphstore.Dataset, w io.Writer) (uint64, error) {
	dict := ds.Dict()
	bw := bufio.NewWriterSize(w, 1<<20)
	var line []byte
	var n uint64
	err := ds.Default().EachTriple(ctx, func(s, p, o graphstore.ID) error {
		var t [3]rdf.Term
		for i, id := range [3]graphstore.ID{s, p, o} {
			var ok bool
			if t[i], ok = dict.Term(id); !ok {
				return fmt.Errorf("BUG: triple (%d %d %d) has an ID the dictionary lacks", s, p, o)
			}
		}
		line = rdf.AppendNTriples(line[:0], t[0])
		line = append(line, ' ')
		line = rdf.AppendNTriples(line, t[1])
		line = append(line, ' ')
		line = rdf.AppendNTriples(line, t[2])
		line = append(line, " .\n"...)
		n++
		_, err := bw.Write(line)
		return err
	})
	if err != nil {
		return n, err
	}
	return n, bw.Flush()
}

// ExportFile writes the default graph of the snapshot at dir into file as
// N-Triples (gzip if file ends in .gz), atomically: a temporary file
// renamed into place.
func ExportFile(ctx context.Context, dir, file string) (uint64, error) {
	ds, err := graphstore.OpenDataset(dir, graphstore.OpenOptions{SkipChecksums: true})
	if err != nil {
		return 0, err
	}
	defer ds.Close()
	tmp := file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp)
	var w io.Writer = f
	var zw *gzip.Writer
	if strings.HasSuffix(file, ".gz") {
		zw, _ = gzip.NewWriterLevel(f, gzip.BestSpeed)
		w = zw
	}
	n, err := ExportNTriples(ctx, ds, w)
	if err == nil && zw != nil {
		err = zw.Close()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("cannot export %s: %w", dir, err)
	}
	return n, os.Rename(tmp, file)
}
