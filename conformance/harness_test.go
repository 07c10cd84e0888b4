package conformance

import (
	"flag"
	"fmt"
	"github.com/wukongd/wukongd/internal/shareddata"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	updateKnown   = flag.Bool("update-known-failures", false, "rewrite testdata/known-failures.txt with the tests that fail now (of those that ran)")
	ratchetStrict = flag.Bool("ratchet-strict", false, "also fail when a known failure passes (its line must be deleted) or the lists name unknown tests")
	filterFlag    = flag.String("conformance.run", "", "run only the tests whose ID matches this regular expression")
	timeoutFlag   = flag.Duration("conformance.timeout", 10*time.Second, "timeout of one query")
	shardsFlag    = flag.String("conformance.shards", "1,4", "comma-separated shard counts to run every test with")
	detailFlag    = flag.Bool("conformance.detail", false, "with -v, print the details (query, dataset, difference) of every failure")
)

const (
	// ownPrefix starts the IDs of our own feature tests.
	ownPrefix         = OwnPrefix
	knownFailuresFile = "testdata/known-failures.txt"
	skipFile          = "testdata/skip.txt"
)

// shardCounts parses -conformance.shards.
func shardCounts(t *testing.T) []int {
	var out []int
	for _, f := range strings.Split(*shardsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			t.Fatalf("bad -conformance.shards %q", *shardsFlag)
		}
		out = append(out, n)
	}
	return out
}

// selected reports whether -conformance.run selects id.
func selected(t *testing.T, id string) bool {
	if *filterFlag == "" {
		return true
	}
	re, err := regexp.Compile(*filterFlag)
	if err != nil {
		t.Fatalf("bad -conformance.run: %v", err)
	}
	return re.MatchString(id)
}

// suiteRoot finds the W3C SPARQL 1.1 suite: $WUKONGD_W3C (the directory
// holding sparql11/) or ../shared/w3c relative to the repository root (the
// directory with go.mod above the working directory).
func suiteRoot() (string, error) {
	if d := os.Getenv("WUKONGD_W3C"); d != "" {
		return filepath.Join(d, "sparql11"), nil
	}
	return shareddata.Path("w3c", "sparql11"), nil
}

// loadSuite loads the W3C SPARQL 1.1 suite found by suiteRoot, and
// returns it and its root; the test is skipped when it is not there.
func loadSuite(t *testing.T) (*Suite, string) {
	t.Helper()
	root, err := suiteRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Skipf("W3C SPARQL 1.1 suite not found at %s (set WUKONGD_W3C to the directory holding sparql11/): %v", root, err)
	}
	suite, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return suite, root
}

// positions matches the "(line 3, column 8)" of error messages.
var positions = regexp.MustCompile(` ?\(line \d+(, column \d+)?\)`)

// counts are pass/fail/skip counts.
type counts struct{ pass, fail, skip int }

func (c *counts) add(o Outcome) {
	switch o.Status {
	case Pass:
		c.pass++
	case Fail:
		c.fail++
	case Skip:
		c.skip++
	}
}

func (c counts) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", c.pass, c.fail, c.skip)
}

// runShards runs a suite once per shard count (shardCounts): run gives
// the outcomes with n shards, which are reported under title; then the
// known-failures list is applied to the tests owns names (ratchet) and the
// runs are recorded under name for the EARL report.
func runShards(t *testing.T, title, name string, owns func(id string) bool, run func(n int) []Outcome) {
	t.Helper()
	shards := shardCounts(t)
	known, err := ReadList(knownFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	runs := make([][]Outcome, len(shards))
	for i, n := range shards {
		runs[i] = run(n)
		report(t, title, n, runs[i], known)
	}
	ratchet(t, shards, runs, owns)
	record(name, runs...)
}

// report prints the counts of one run: the total on stdout (and in the
// test log), per directory and every failure's reason with -v.
func report(t *testing.T, title string, shards int, run []Outcome, known List) {
	var total counts
	dirs := map[string]*counts{}
	for _, o := range run {
		total.add(o)
		if dirs[o.Dir] == nil {
			dirs[o.Dir] = &counts{}
		}
		dirs[o.Dir].add(o)
	}
	line := fmt.Sprintf("%s, %d shard(s): %s", title, shards, total)
	fmt.Println(line)
	t.Log(line)
	if !testing.Verbose() {
		return
	}
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		t.Logf("  %-20s %s", d, dirs[d])
	}
	// The failures grouped by reason (positions dropped): what to build next.
	byReason := map[string]int{}
	for _, o := range run {
		if o.Status == Fail {
			byReason[positions.ReplaceAllString(o.Reason, "")]++
		}
	}
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if byReason[reasons[i]] != byReason[reasons[j]] {
			return byReason[reasons[i]] > byReason[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	for _, r := range reasons {
		t.Logf("  %4d × %s", byReason[r], r)
	}
	for _, o := range run {
		switch {
		case o.Status == Fail:
			mark := "known"
			if _, ok := known[o.ID]; !ok {
				mark = "NEW"
			}
			t.Logf("  FAIL (%s) %s: %s", mark, o.ID, o.Reason)
			if *detailFlag || strings.HasPrefix(o.Reason, "engine panic") {
				t.Logf("    %s", strings.ReplaceAll(o.Detail, "\n", "\n    "))
			}
		case o.Status == Pass && o.Note != "":
			t.Logf("  pass %s (%s)", o.ID, o.Note)
		case o.Status == Pass:
			t.Logf("  pass %s", o.ID)
		}
	}
}

// ratchet applies the known-failures list to the runs (runs[i] with
// shards[i] shards) of the tests whose IDs start with prefix (the W3C
// tests and our own share one file, each test function owns its IDs).
func ratchet(t *testing.T, shards []int, runs [][]Outcome, owns func(id string) bool) {
	all, err := ReadList(knownFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	known := List{}
	for id, r := range all {
		if owns(id) {
			known[id] = r
		}
	}
	ran := map[string]bool{}
	for _, run := range runs {
		for _, o := range run {
			ran[o.ID] = true
		}
	}
	v := Judge(shards, runs, known)
	if *updateKnown {
		if err := WriteKnownFailures(knownFailuresFile, Merge(all, ran, v.Failures)); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s: %d known failures of these tests (%d regressions and %d fixed before the rewrite)",
			knownFailuresFile, len(v.Failures), len(v.Regressions), len(v.Fixed))
		return
	}
	for _, o := range v.Regressions {
		t.Errorf("REGRESSION %s: %s\n    %s", o.ID, o.Reason, strings.ReplaceAll(o.Detail, "\n", "\n    "))
	}
	if len(v.Fixed) > 0 {
		sort.Strings(v.Fixed)
		msg := fmt.Sprintf("%d known failures pass now: delete their lines from %s (or run with -update-known-failures):\n  %s",
			len(v.Fixed), knownFailuresFile, strings.Join(v.Fixed, "\n  "))
		if *ratchetStrict {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
	if *filterFlag == "" {
		var stale []string
		for id := range known {
			if !ran[id] {
				stale = append(stale, id)
			}
		}
		sort.Strings(stale)
		if len(stale) > 0 {
			msg := fmt.Sprintf("%s names tests that do not exist: %s", knownFailuresFile, strings.Join(stale, ", "))
			if *ratchetStrict {
				t.Error(msg)
			} else {
				t.Log(msg)
			}
		}
	}
}

var (
	earlFlag    = flag.String("conformance.earl", "", "write the EARL report of the suites that ran to this file")
	summaryFlag = flag.String("conformance.summary", "", "write the Markdown summary of the suites that ran to this file (docs/CONFORMANCE.md)")
	recorded    []SuiteResult
)

// record keeps a suite's runs for the EARL report and the summary.
func record(name string, runs ...[]Outcome) {
	recorded = append(recorded, Combine(name, runs...))
}

// TestMain writes the EARL report and the summary after the tests ran
// (make conformance).
func TestMain(m *testing.M) {
	code := m.Run()
	now := time.Now()
	write := func(path string, f func(w *os.File) error) {
		if path == "" {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
			return
		}
		out, err := os.Create(path)
		if err == nil {
			err = f(out)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
			return
		}
		fmt.Println("wrote", path)
	}
	write(*earlFlag, func(w *os.File) error { return WriteEARL(w, recorded, now) })
	write(*summaryFlag, func(w *os.File) error { return WriteSummary(w, recorded, now, "make conformance") })
	os.Exit(code)
}
