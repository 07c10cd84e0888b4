package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestBenchWritesReadersApart: bench-writes --readers-apart runs the
// readers in a process of their own (this binary's readers mode) and
// reads each phase's latencies and errors back from it. Against a real
// server, both phases report answered queries for the good query and
// the bad query's failures as errors of both phases — figures that
// only come back if the readers' process ran, answered phase by phase
// on its stdin, and its JSON lines were read.
func TestBenchWritesReadersApart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and two more processes")
	}
	bin, _, srv := readyServer(t)

	qdir := t.TempDir()
	good := filepath.Join(qdir, "good.rq")
	bad := filepath.Join(qdir, "bad.rq")
	if err := os.WriteFile(good, []byte(`SELECT ?o WHERE { <http://base/s1> <http://base/p> ?o }`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`SELECT ?o WHERE { ?s `), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "bench-writes", "--url", srv.url, "--token", crashToken, "--mode", "writers",
		"--writers", "2", "--duration", "1s", "--readers", "1", "--readers-apart", "--quiet", "500ms",
		"--queries", good+","+bad)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench-writes: %v\n%s", err, out)
	}
	for _, phase := range []string{"quiet", "during the writers"} {
		m := regexp.MustCompile(`readers ` + phase + `: good\.rq: (\d+) queries`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("no %s figures of good.rq in:\n%s", phase, out)
		}
		if n, _ := strconv.Atoi(string(m[1])); n == 0 {
			t.Errorf("%s: good.rq answered 0 queries\n%s", phase, out)
		}
		if !regexp.MustCompile(`readers ` + phase + `: bad\.rq: no answers`).Match(out) {
			t.Errorf("%s: bad.rq should have no answers\n%s", phase, out)
		}
	}
	m := regexp.MustCompile(`readers' errors: quiet (\d+) \(0 of them 429\), during the writers (\d+) \(0 of them 429\)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no errors line in:\n%s", out)
	}
	for i, phase := range []string{"quiet", "during the writers"} {
		if n, _ := strconv.Atoi(string(m[i+1])); n == 0 {
			t.Errorf("%s: the bad query's failures were not counted\n%s", phase, out)
		}
	}
	if !regexp.MustCompile(`writers: 2 writers, [1-9]\d* updates`).Match(out) {
		t.Errorf("the writers made no updates:\n%s", out)
	}
	if !regexp.MustCompile(`readers apart: in a process of their own`).Match(out) {
		t.Errorf("the readers did not run apart:\n%s", out)
	}
}
