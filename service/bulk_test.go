package service

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/web"
)

// graphSize counts the triples GetGraph streams.
func graphSize(t *testing.T, s *Service, gn web.GraphName) int {
	t.Helper()
	it, err := s.GetGraph(context.Background(), gn)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.Next() {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBulkPostIsAtomicAndDurable: Graph Store POSTs of LUBM-1 text (several
// parallel chunks) into a durable service; a body with a syntax error deep
// inside fails with its line and column and leaves nothing (same version,
// same triples, also after a restart); a cancelled one too; a PUT replaces
// the graph; after a restart every acknowledged write is there.
func TestBulkPostIsAtomicAndDurable(t *testing.T) {
	path := filepath.Join(lubmDir, "lubm1.nt.gz")
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("LUBM-1 not available: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(doc), "\n")
	half := strings.Join(lines[:len(lines)/2], "")
	dir := emptySnapshot(t, "", 4)
	s := openDurable(t, dir)
	ctx := context.Background()
	nt := func(text string) web.GraphBody {
		return web.GraphBody{MediaType: "application/n-triples", Body: strings.NewReader(text)}
	}
	def := web.GraphName{Default: true}
	if _, err := s.PostGraph(ctx, def, nt(half)); err != nil {
		t.Fatal(err)
	}
	v, n := s.Version(), graphSize(t, s, def)
	if n == 0 {
		t.Fatal("nothing posted")
	}

	bad := slices.Clone(lines)
	bad[len(bad)-10] = "<http://a> <http://b> <http://c> <http://d> .\n"
	_, err = s.PostGraph(ctx, def, nt(strings.Join(bad, "")))
	var se *loader.SyntaxError
	if !errors.As(err, &se) || se.Line != len(bad)-9 || se.Col != 34 {
		t.Fatalf("bad body: %v, want a syntax error at line %d column 34", err, len(bad)-9)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.PostGraph(cctx, def, nt(string(doc))); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if s.Version() != v || graphSize(t, s, def) != n {
		t.Fatalf("a failed POST changed the store: version %d → %d", v, s.Version())
	}
	// The whole file: the first half is there already.
	if _, err := s.PostGraph(ctx, def, nt(string(doc))); err != nil {
		t.Fatal(err)
	}
	all := graphSize(t, s, def)
	g := web.GraphName{IRI: "http://example.org/g"}
	if created, err := s.PutGraph(ctx, g, nt(half)); err != nil || !created {
		t.Fatalf("PUT: created %v, %v", created, err)
	}
	if _, err := s.PutGraph(ctx, g, nt(strings.Join(lines[:100], ""))); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openDurable(t, dir)
	defer s.Close()
	if got := graphSize(t, s, def); got != all {
		t.Fatalf("after a restart: %d triples, want %d", got, all)
	}
	if got, want := graphSize(t, s, g), 100; got != want {
		t.Fatalf("after a restart: the PUT graph has %d triples, want %d", got, want)
	}
}
