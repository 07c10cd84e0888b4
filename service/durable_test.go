package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/wal"
	"github.com/wukongd/wukongd/web"
)

// emptySnapshot writes an empty snapshot of shards shards into a new
// data directory (under parent, or a temporary one).
func emptySnapshot(t *testing.T, parent string, shards int) string {
	t.Helper()
	if parent == "" {
		parent = t.TempDir()
	}
	dir := filepath.Join(parent, "data")
	st, err := BuildStore(shards, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := graphstore.WriteSnapshot(dir, st); err != nil {
		t.Fatal(err)
	}
	return dir
}

// openDurable opens and recovers the data directory dir.
func openDurable(t *testing.T, dir string) *Service {
	t.Helper()
	s, err := OpenDurable(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(context.Background()); !errors.Is(err, web.ErrNotReady) {
		t.Fatalf("ready before recovery: %v", err)
	}
	if _, err := s.Query(context.Background(), &web.QueryRequest{Query: "ASK {}"}); !errors.Is(err, web.ErrNotReady) {
		t.Fatalf("a query before recovery: %v", err)
	}
	if err := s.Recover(context.Background()); err != nil {
		s.Close()
		t.Fatal(err)
	}
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func update(t *testing.T, s *Service, u string) {
	t.Helper()
	if err := s.Update(context.Background(), &web.UpdateRequest{Update: u}); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
}

func TestDurableWritesSurviveRestart(t *testing.T) {
	dir := emptySnapshot(t, "", 2)
	s := openDurable(t, dir)
	ctx := context.Background()
	const prefix = "PREFIX ex: <http://example.org/>\n"
	update(t, s, prefix+`INSERT DATA { ex:a ex:p 1 . _:b ex:p "blank" . GRAPH ex:g1 { ex:a ex:p 2 . ex:b ex:p 3 } }`)
	update(t, s, prefix+`DELETE DATA { GRAPH ex:g1 { ex:b ex:p 3 } } ; ADD ex:g1 TO ex:g3 ; COPY DEFAULT TO ex:g2`)
	update(t, s, prefix+`WITH ex:g2 DELETE { ?s ex:p ?o } INSERT { ?s ex:r ?o . _:n ex:of ?s } WHERE { ?s ex:p ?o . FILTER(isLiteral(?o)) }`)
	update(t, s, prefix+`INSERT DATA { ex:Thing a ex:Class . ex:x ex:Class ex:y }`) // a vertex that becomes a predicate
	if _, err := s.PutGraph(ctx, web.GraphName{IRI: "http://example.org/g5"}, web.GraphBody{MediaType: "application/n-triples",
		Body: strings.NewReader("<http://example.org/s> <http://example.org/p> _:x .\n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PostGraph(ctx, web.GraphName{Default: true}, web.GraphBody{MediaType: "text/turtle",
		Body: strings.NewReader(`<http://example.org/s> <http://example.org/q> "posted"@en .`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteGraph(ctx, web.GraphName{IRI: "http://example.org/g3"}); err != nil {
		t.Fatal(err)
	}
	// A failing request changes nothing and logs nothing.
	if err := s.Update(ctx, &web.UpdateRequest{Update: prefix + `INSERT DATA { ex:n ex:p 9 } ; DROP GRAPH ex:missing`}); !errors.Is(err, web.ErrNotFound) {
		t.Fatalf("a failing update: %v", err)
	}
	update(t, s, prefix+`CLEAR GRAPH ex:g1`)
	want, version := state(t, s), s.Version()
	if version != 8 {
		t.Fatalf("version %d after 8 changes", version)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for round := 0; round < 2; round++ {
		s = openDurable(t, dir)
		if got := state(t, s); got != want {
			t.Fatalf("round %d: after a restart:\n%s\nwant\n%s", round, got, want)
		}
		if s.Version() != version {
			t.Fatalf("round %d: version %d, want %d", round, s.Version(), version)
		}
		if rec := s.LogRecovery(); rec.Records != version || rec.Cut != "" {
			t.Fatalf("round %d: recovery %+v", round, rec)
		}
		if round == 0 {
			// Writes after a recovery go on from its version.
			update(t, s, prefix+`INSERT DATA { ex:after ex:p ex:restart }`)
			want, version = state(t, s), version+1
		}
		s.Close()
	}
}

func TestDataDirLock(t *testing.T) {
	dir := emptySnapshot(t, "", 1)
	s := openDurable(t, dir)
	_, err := OpenDurable(dir, Options{})
	if !errors.Is(err, wal.ErrLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("a second service on %s: %v", dir, err)
	}
	s.Close()
	s = openDurable(t, dir) // the lock goes with Close
	s.Close()
}

func TestConcurrentDurableWrites(t *testing.T) {
	dir := emptySnapshot(t, "", 2)
	s := openDurable(t, dir)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				// Two triples per request: both or neither survive.
				u := fmt.Sprintf(`INSERT DATA { <http://x/w%d/%d> <http://x/a> %d ; <http://x/b> %d }`, w, i, i, i)
				if err := s.Update(context.Background(), &web.UpdateRequest{Update: u}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := state(t, s)
	if n := strings.Count(want, "\n"); n != 1+2*writers*each {
		t.Fatalf("%d lines in the state", n)
	}
	s.Close()
	s = openDurable(t, dir)
	defer s.Close()
	if got := state(t, s); got != want {
		t.Fatal("the state after a restart differs")
	}
}

func TestRecoveryCutsATornTail(t *testing.T) {
	dir := emptySnapshot(t, "", 1)
	s := openDurable(t, dir)
	var want string
	for i := 0; i < 5; i++ {
		want = state(t, s)
		update(t, s, fmt.Sprintf(`INSERT DATA { <http://x/s> <http://x/p> %d . <http://x/s> <http://x/q> %d }`, i, i))
	}
	s.Close()
	segs, _ := filepath.Glob(filepath.Join(dir, LogDir, "*.wal"))
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	// Cut the last record short, as a crash in its write would.
	b, _ := os.ReadFile(segs[0])
	if err := os.WriteFile(segs[0], b[:len(b)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	s = openDurable(t, dir)
	defer s.Close()
	if rec := s.LogRecovery(); rec.Cut == "" || rec.Last != 4 {
		t.Fatalf("recovery %+v", rec)
	}
	if got := state(t, s); got != want {
		t.Fatalf("after cutting record 5:\n%s\nwant\n%s", got, want)
	}
}

func TestFullDiskWrite(t *testing.T) {
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): needs root; package wal's fault-injection tests cover the same paths", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	dir := emptySnapshot(t, mnt, 1)
	s := openDurable(t, dir)
	update(t, s, `INSERT DATA { <http://x/s> <http://x/p> "before" }`)
	before := state(t, s)
	ballast := filepath.Join(mnt, "ballast")
	f, err := os.Create(ballast)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	f.Close()
	big := strings.Repeat("x", 512<<10)
	var werr error
	for i := 0; i < 10 && werr == nil; i++ {
		before = state(t, s)
		werr = s.Update(context.Background(), &web.UpdateRequest{Update: fmt.Sprintf(`INSERT DATA { <http://x/s> <http://x/big> "%d%s" }`, i, big)})
	}
	if !errors.Is(werr, web.ErrNotReady) || !strings.Contains(werr.Error(), "no space left on device") {
		t.Fatalf("a write on a full disk: %v", werr)
	}
	t.Logf("full disk: %v", werr)
	if got := state(t, s); got != before {
		t.Fatal("the failed write is visible")
	}
	if _, err := s.Query(context.Background(), &web.QueryRequest{Query: "SELECT * { ?s ?p ?o }"}); err != nil {
		t.Fatalf("reads on a full disk: %v", err)
	}
	os.Remove(ballast)
	update(t, s, `INSERT DATA { <http://x/s> <http://x/p> "after" }`)
	want := state(t, s)
	s.Close()
	s = openDurable(t, dir)
	defer s.Close()
	if got := state(t, s); got != want {
		t.Fatalf("after the full disk and a restart:\n%s\nwant\n%s", got, want)
	}
}

func TestLogStartingAfterTheSnapshot(t *testing.T) {
	// Records between the snapshot and the log's first are missing: the
	// recovery refuses to serve.
	dir := emptySnapshot(t, "", 1)
	l, err := wal.Open(filepath.Join(dir, LogDir), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Retire(10); err != nil { // the log starts at 11
		t.Fatal(err)
	}
	payload, _ := wal.AppendChanges(nil, []graphstore.GraphChange{{Insert: []rdf.Triple{{S: rdf.NewIRI("http://x/s"), P: rdf.NewIRI("http://x/p"), O: rdf.NewIRI("http://x/o")}}}})
	if err := l.Append(11, payload).Wait(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	s, err := OpenDurable(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Recover(context.Background()); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("a log starting at 11 on a snapshot at 0: %v", err)
	}
}

func TestSnapshotOverTheDataDirKeepsTheLog(t *testing.T) {
	// What compaction does: a snapshot of the served version written over
	// the data directory while the server runs, then the log retired up
	// to it; writes go on, and a restart gives the same state.
	dir := emptySnapshot(t, "", 2)
	s := openDurable(t, dir)
	for i := 0; i < 5; i++ {
		update(t, s, fmt.Sprintf(`INSERT DATA { <http://x/s%d> <http://x/p> %d }`, i, i))
	}
	g, err := s.acquire()
	if err != nil {
		t.Fatal(err)
	}
	err = graphstore.WriteDataset(dir, g.ds)
	v := g.version()
	g.release()
	if err != nil {
		t.Fatal(err)
	}
	update(t, s, `INSERT DATA { <http://x/after> <http://x/p> "written while the snapshot was replaced" }`)
	if err := s.RetireLog(v); err != nil {
		t.Fatal(err)
	}
	update(t, s, `DELETE DATA { <http://x/s0> <http://x/p> 0 }`)
	want := state(t, s)
	s.Close()
	s = openDurable(t, dir)
	defer s.Close()
	if got := state(t, s); got != want {
		t.Fatalf("after a snapshot over the data directory and a restart:\n%s\nwant\n%s", got, want)
	}
	if rec := s.LogRecovery(); rec.Last != v+2 || rec.Segments != 2 {
		t.Fatalf("the log after retiring up to %d: %+v", v, rec)
	}
	// The next compaction retires the rest.
	g, err = s.acquire()
	if err != nil {
		t.Fatal(err)
	}
	err = graphstore.WriteDataset(dir, g.ds)
	v = g.version()
	g.release()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RetireLog(v); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openDurable(t, dir)
	defer s.Close()
	if got := state(t, s); got != want {
		t.Fatalf("after the second snapshot:\n%s\nwant\n%s", got, want)
	}
	if rec := s.LogRecovery(); rec.Records != 0 || s.Version() != v {
		t.Fatalf("the log after retiring all: %+v, version %d want %d", rec, s.Version(), v)
	}
	update(t, s, `INSERT DATA { <http://x/last> <http://x/p> 1 }`)
}

func TestBackgroundCompactionOfADurableDir(t *testing.T) {
	// Compactions triggered by the writes themselves (a tiny threshold)
	// write snapshots over the data directory and retire the log while
	// concurrent writers go on; a restart gives the same state, from a
	// short log.
	dir := emptySnapshot(t, "", 2)
	var compactions atomic.Int64
	s, err := OpenDurable(dir, Options{CompactDeltaBytes: 1, OnCompacted: func(uint64) { compactions.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				u := fmt.Sprintf(`INSERT DATA { <http://x/w%d/%d> <http://x/a> %d ; <http://x/b> %d }`, w, i, i, i)
				if err := s.Update(context.Background(), &web.UpdateRequest{Update: u}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if _, err := s.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	want, version := state(t, s), s.Version()
	s.Close()
	if compactions.Load() < 1 {
		t.Fatalf("%d compactions", compactions.Load())
	}
	s = openDurable(t, dir)
	defer s.Close()
	if got := state(t, s); got != want || s.Version() != version {
		t.Fatalf("after compactions and a restart: version %d (want %d), state equal %v", s.Version(), version, got == want)
	}
	if rec := s.LogRecovery(); rec.Records > 0 && rec.First <= version-50 {
		t.Fatalf("the log was not retired: %+v at version %d", rec, version)
	}
	t.Logf("%d compactions; log after them: %+v", compactions.Load(), s.LogRecovery())
}
