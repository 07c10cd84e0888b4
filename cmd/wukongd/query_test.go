package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
)

// querySnapshot writes a small snapshot of 2 shards and returns its dir.
func querySnapshot(t *testing.T) string {
	t.Helper()
	ex := func(s string) rdf.Term { return rdf.NewIRI("http://ex/" + s) }
	b, err := graphstore.NewBuilder(2)
	if err != nil {
		t.Fatal(err)
	}
	var triples []rdf.Triple
	for _, s := range []string{"a", "b", "c"} {
		triples = append(triples,
			rdf.Triple{S: ex(s), P: rdf.NewIRI(rdf.RDFType), O: ex("Person")},
			rdf.Triple{S: ex(s), P: ex("name"), O: rdf.NewLiteral(strings.ToUpper(s), "")})
	}
	triples = append(triples, rdf.Triple{S: ex("a"), P: ex("knows"), O: ex("b")}, rdf.Triple{S: ex("b"), P: ex("knows"), O: ex("c")})
	if err := b.AddTriples(triples); err != nil {
		t.Fatal(err)
	}
	st, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dir := filepath.Join(t.TempDir(), "snap")
	if err := graphstore.WriteSnapshot(dir, st); err != nil {
		t.Fatal(err)
	}
	return dir
}

// capture runs f with os.Stdout redirected and returns what it wrote.
func capture(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	ferr := f()
	w.Close()
	os.Stdout = old
	return <-done, ferr
}

func writeQuery(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "q.rq")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestQueryCommand(t *testing.T) {
	dir := querySnapshot(t)
	q := writeQuery(t, `SELECT ?x ?n WHERE { ?x a <http://ex/Person> . ?x <http://ex/knows> ?y . ?x <http://ex/name> ?n } ORDER BY ?n`)
	for _, mode := range []string{"auto", "in-place", "fork-join"} {
		out, err := capture(t, func() error { return runQuery([]string{"--data", dir, "--mode", mode, q}) })
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		want := "?x\t?n\n<http://ex/a>\t\"A\"\n<http://ex/b>\t\"B\"\n"
		if out != want {
			t.Errorf("%s: got\n%q\nwant\n%q", mode, out, want)
		}
	}
	// JSON results; an unknown constant matches nothing (not an error).
	unknown := writeQuery(t, `SELECT ?x WHERE { ?x <http://ex/knows> <http://ex/nobody> }`)
	out, err := capture(t, func() error { return runQuery([]string{"--data", dir, "--format", "json", unknown}) })
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Head    struct{ Vars []string }
		Results struct{ Bindings []map[string]any }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Head.Vars) != 1 || len(doc.Results.Bindings) != 0 {
		t.Errorf("unknown constant: %v, %q", err, out)
	}
	for _, bad := range [][]string{
		{"--data", dir, "--mode", "sideways", q},
		{"--data", dir, "--format", "yaml", q},
		{"--data", filepath.Join(dir, "missing"), q},
		{"--data", dir, writeQuery(t, "SELECT ?x WHERE { ?x ")},
	} {
		if _, err := capture(t, func() error { return runQuery(bad) }); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestExplainCommand(t *testing.T) {
	dir := querySnapshot(t)
	q := writeQuery(t, `SELECT ?x ?y WHERE { ?x <http://ex/knows> ?y . ?y a <http://ex/Person> }`)
	out, err := capture(t, func() error { return runExplain([]string{"--data", dir, q}) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "explore") || !strings.Contains(out, "mode=") || strings.Contains(out, "| rows") {
		t.Errorf("explain:\n%s", out)
	}
	out, err = capture(t, func() error {
		return runExplain([]string{"--analyze", "--json", "--mode", "fork-join", "--data", dir, q})
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Mode string
		Rows *int
		Plan struct {
			Input struct {
				Steps []struct {
					Mode   string
					Actual *struct {
						RowsOut uint64 `json:"rows_out"`
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	steps := doc.Plan.Input.Steps
	if doc.Mode != "fork-join" || doc.Rows == nil || *doc.Rows != 2 || len(steps) == 0 || steps[len(steps)-1].Actual == nil ||
		steps[len(steps)-1].Actual.RowsOut != 2 {
		t.Errorf("explain --analyze --json:\n%s", out)
	}
}
