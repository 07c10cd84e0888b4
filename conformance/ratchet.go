package conformance

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

// List is a file of test IDs, one a line, each with a reason: the skip
// list ("ID  reason") and the known-failures list ("ID  # reason").
// Blank lines and lines starting with '#' are comments.
type List map[string]string

// ReadList reads a list file. A missing file is an empty list.
func ReadList(path string) (List, error) {
	l := List{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		id, reason := line, ""
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			id, reason = line[:i], line[i+1:]
		}
		reason = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(reason), "#"))
		if _, dup := l[id]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", path, n, id)
		}
		l[id] = reason
	}
	return l, sc.Err()
}

// knownFailuresHeader starts the known-failures file.
const knownFailuresHeader = `# Known failures of the conformance tests (W3C SPARQL 1.1 query evaluation
# and our own feature tests): the ratchet. A test listed here may fail; a
# failing test that is not listed fails "go test ./conformance". When a
# listed test passes, the run says so: delete its line (or rewrite the file
# with "go test ./conformance -update-known-failures"). The comment is the
# first line of the failure, from the smallest shard count that failed.
`

// WriteKnownFailures writes the list sorted by ID, atomically.
func WriteKnownFailures(path string, l List) error {
	ids := make([]string, 0, len(l))
	for id := range l {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	b.WriteString(knownFailuresHeader)
	for _, id := range ids {
		reason := strings.ReplaceAll(l[id], "\n", " ")
		fmt.Fprintf(&b, "%s  # %s\n", id, reason)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Verdict is the ratchet's judgement of one set of runs.
type Verdict struct {
	// Regressions failed at some shard count and are not known failures.
	Regressions []Outcome
	// Fixed are known failures that passed at every shard count.
	Fixed []string
	// Failures is the new known-failures content for the tests that ran:
	// ID → reason of the first failing run (smallest shard count), with
	// the shard counts appended when it did not fail at all of them.
	Failures List
}

// Judge applies the ratchet to the outcomes of runs at several shard
// counts (runs[i] ran with shards[i] shards). Skipped tests are neither
// regressions nor fixed.
func Judge(shards []int, runs [][]Outcome, known List) Verdict {
	v := Verdict{Failures: List{}}
	type agg struct {
		first    *Outcome
		failedAt []int
		passed   int
		order    int
	}
	byID := map[string]*agg{}
	var ids []string
	for i, run := range runs {
		for j := range run {
			o := &run[j]
			a := byID[o.ID]
			if a == nil {
				a = &agg{order: len(ids)}
				byID[o.ID] = a
				ids = append(ids, o.ID)
			}
			switch o.Status {
			case Fail:
				if a.first == nil {
					a.first = o
				}
				a.failedAt = append(a.failedAt, shards[i])
			case Pass:
				a.passed++
			}
		}
	}
	for _, id := range ids {
		a := byID[id]
		_, isKnown := known[id]
		if a.first != nil {
			reason := a.first.Reason
			if len(a.failedAt) < len(runs) {
				reason += fmt.Sprintf(" [fails only with %s shards]", joinInts(a.failedAt))
			}
			v.Failures[id] = reason
			if !isKnown {
				v.Regressions = append(v.Regressions, *a.first)
			}
			continue
		}
		if isKnown && a.passed == len(runs) {
			v.Fixed = append(v.Fixed, id)
		}
	}
	return v
}

// Merge returns the known-failures list after a run: entries of tests that
// did not run are kept (ran says which ran), the others replaced by the
// run's failures.
func Merge(known List, ran map[string]bool, failures List) List {
	out := List{}
	for id, r := range known {
		if !ran[id] {
			out[id] = r
		}
	}
	for id, r := range failures {
		out[id] = r
	}
	return out
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
