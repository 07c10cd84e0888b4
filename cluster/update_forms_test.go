package cluster

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/internal/shareddata"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/rdmakv"
	"github.com/wukongd/wukongd/service"
	"github.com/wukongd/wukongd/web"
)

// updateCase is one SPARQL Update request on a default graph holding data.
type updateCase struct {
	name, data, base, update string
	// afterChange: a WHERE follows a change in the same request, which
	// the cluster must run (the overlay), not refuse.
	afterChange bool
}

// w3cUpdateCases reads the default-graph evaluation tests of the W3C
// SPARQL 1.1 Update suites (those whose action has no named-graph data).
func w3cUpdateCases(t *testing.T) []updateCase {
	root := shareddata.Path("w3c", "sparql11")
	action := regexp.MustCompile(`(?s)mf:action\s*\[(.*?)\]\s*;`)
	request := regexp.MustCompile(`ut:request\s*<([^>]+)>`)
	data := regexp.MustCompile(`ut:data\s*<([^>]+)>`)
	var cases []updateCase
	for _, suite := range []string{"basic-update", "delete-insert", "delete", "delete-where", "delete-data", "update-silent", "add", "copy", "move"} {
		dir := filepath.Join(root, suite)
		man, err := os.ReadFile(filepath.Join(dir, "manifest.ttl"))
		if err != nil {
			t.Skipf("no W3C suites: %v", err)
		}
		for _, m := range action.FindAllStringSubmatch(string(man), -1) {
			if strings.Contains(m[1], "graphData") {
				continue
			}
			r := request.FindStringSubmatch(m[1])
			if r == nil {
				continue
			}
			u, err := os.ReadFile(filepath.Join(dir, r[1]))
			if err != nil {
				t.Fatal(err)
			}
			c := updateCase{name: suite + "/" + r[1], update: string(u), base: "file://" + filepath.Join(dir, r[1])}
			if d := data.FindStringSubmatch(m[1]); d != nil {
				b, err := os.ReadFile(filepath.Join(dir, d[1]))
				if err != nil {
					t.Fatal(err)
				}
				c.data = string(b)
			}
			cases = append(cases, c)
		}
	}
	return cases
}

// Forms of a WHERE after a change in the same request, on a small graph.
const formsData = `@prefix : <http://ex.org/> .
:a :knows :b , :c ; :name "Alan" ; :age 30 .
:b :knows :c ; :name "Bob" ; :age 40 .
:c :name "Carol" ; :age 50 .
`

var formCases = []updateCase{
	{name: "insert-data then insert-where", update: `PREFIX : <http://ex.org/> INSERT DATA { :d :knows :a . :d :name "Dan" } ; INSERT { ?x :friendOf ?y } WHERE { ?y :knows ?x }`},
	{name: "delete-data then delete-where", update: `PREFIX : <http://ex.org/> DELETE DATA { :a :knows :b } ; DELETE WHERE { ?x :knows ?y . ?y :name ?n }`},
	{name: "insert then count", update: `PREFIX : <http://ex.org/> INSERT DATA { :e :age 60 . :e :age 61 } ; INSERT { :all :count ?n } WHERE { SELECT (COUNT(*) AS ?n) { ?s :age ?a } }`},
	{name: "re-insert stored triple, bag counts", update: `PREFIX : <http://ex.org/> INSERT DATA { :a :age 30 } ; INSERT { :all :count ?n } WHERE { SELECT (COUNT(*) AS ?n) { ?s :age ?a } }`},
	{name: "delete then optional", update: `PREFIX : <http://ex.org/> DELETE DATA { :b :name "Bob" } ; INSERT { ?s :label ?l } WHERE { ?s :age ?a OPTIONAL { ?s :name ?l } }`},
	{name: "delete then insert same triple then where", update: `PREFIX : <http://ex.org/> DELETE DATA { :c :age 50 } ; INSERT DATA { :c :age 50 } ; INSERT { ?s :old true } WHERE { ?s :age ?a FILTER (?a >= 50) }`},
	{name: "ground pattern after insert", update: `PREFIX : <http://ex.org/> INSERT DATA { :c :knows :a } ; INSERT { :yes :it :does } WHERE { :c :knows :a }`},
	{name: "ground pattern after delete", update: `PREFIX : <http://ex.org/> DELETE DATA { :a :knows :c } ; INSERT { :yes :it :does } WHERE { :a :knows :c }`},
	{name: "repeated variable", update: `PREFIX : <http://ex.org/> INSERT DATA { :a :knows :a } ; INSERT { ?x :self true } WHERE { ?x :knows ?x }`},
	{name: "two wheres in a row", update: `PREFIX : <http://ex.org/> DELETE { ?x :age ?a } INSERT { ?x :age ?b } WHERE { ?x :age ?a BIND (?a + 1 AS ?b) } ; DELETE { ?x :age ?a } WHERE { ?x :age ?a FILTER (?a > 45) }`},
	{name: "clear then insert then where", update: `PREFIX : <http://ex.org/> CLEAR DEFAULT ; INSERT DATA { :z :knows :y . :y :name "Yan" } ; INSERT { ?a :named ?n } WHERE { ?a :knows ?b . ?b :name ?n }`},
	{name: "union and minus", update: `PREFIX : <http://ex.org/> INSERT DATA { :f :name "Fay" } ; INSERT { ?s :tag "x" } WHERE { { ?s :name ?n } UNION { ?s :knows ?o } MINUS { ?s :age ?a } }`},
	{name: "blank node inserted then matched", update: `PREFIX : <http://ex.org/> INSERT DATA { _:n :name "Nobody" } ; INSERT { ?s :blank true } WHERE { ?s :name "Nobody" }`},
}

// dump returns every triple of the default graph, blank node labels
// replaced by one mark (the two stores label new blank nodes apart).
func dump(ctx context.Context, b web.Backend) ([]string, error) {
	rs, err := rows(ctx, b, "SELECT ?s ?p ?o WHERE { ?s ?p ?o }")
	if err != nil {
		return nil, err
	}
	blank := regexp.MustCompile(`_:[A-Za-z0-9_.\-]+`)
	for i, r := range rs {
		rs[i] = blank.ReplaceAllString(r, "_:b")
	}
	sort.Strings(rs)
	// The labels are gone: count the distinct nodes too (two blank nodes
	// where one process has one would dump alike).
	n, err := rows(ctx, b, "SELECT (COUNT(DISTINCT ?s) AS ?s) (COUNT(DISTINCT ?o) AS ?o) WHERE { ?s ?p ?o }")
	if err != nil {
		return nil, err
	}
	return append(rs, n...), nil
}

// TestClusterUpdateForms runs the default-graph tests of the W3C Update
// suites and forms of a WHERE after a change in one request through a
// 3-node cluster (SimNet, R = 2), each from a freshly cleared default
// graph holding its data, and compares the graph after it with one
// process doing the same. A form the cluster refuses (501: named graphs)
// is counted; a WHERE after a change must not be refused.
func TestClusterUpdateForms(t *testing.T) {
	st, err := service.BuildStore(6, func(emit func(rdf.Triple) error) error {
		return emit(rdf.Triple{S: rdf.NewIRI("http://ex.org/seed"), P: rdf.NewIRI("http://ex.org/seedp"), O: rdf.NewLiteral("x", "")})
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "snap")
	if err := graphstore.WriteSnapshot(dir, st); err != nil {
		t.Fatal(err)
	}
	st.Close()
	ref, err := service.Open(dir, service.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	nodes := simClusterWith(t, rdmakv.NewSimNet(5), dir, 3, Config{Workers: 2, WriteTimeout: 10 * time.Second, Replicas: 2})
	waitWritable(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	cases := w3cUpdateCases(t)
	for _, c := range formCases {
		c.data, c.afterChange = formsData, true
		cases = append(cases, c)
	}
	var same, refused, failedBoth int
	for i, c := range cases {
		nd := nodes[i%3]
		for _, b := range []web.Backend{ref, nd.Backend()} {
			if err := b.Update(ctx, &web.UpdateRequest{Update: "CLEAR DEFAULT"}); err != nil {
				t.Fatalf("%s: CLEAR: %v", c.name, err)
			}
			if c.data != "" {
				body := web.GraphBody{MediaType: "text/turtle", Body: strings.NewReader(c.data), Base: c.base}
				if _, err := b.PostGraph(ctx, web.GraphName{Default: true}, body); err != nil {
					t.Fatalf("%s: POST of its data: %v", c.name, err)
				}
			}
		}
		refErr := ref.Update(ctx, &web.UpdateRequest{Update: c.update, Base: c.base})
		gotErr := nd.Backend().Update(ctx, &web.UpdateRequest{Update: c.update, Base: c.base})
		switch {
		case gotErr != nil && errors.Is(gotErr, web.ErrUnsupported):
			if c.afterChange {
				t.Errorf("%s: refused: %v", c.name, gotErr)
			}
			t.Logf("%s: refused by the cluster: %v", c.name, gotErr)
			refused++
			continue
		case (refErr == nil) != (gotErr == nil):
			t.Errorf("%s: one process: %v, cluster node %d: %v", c.name, refErr, i%3, gotErr)
			continue
		case refErr != nil:
			failedBoth++
		}
		want, err := dump(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		// Every node, read at the version the answering node applied.
		waitVersion(t, nodes, nd.Version())
		for _, n := range nodes {
			got, err := dump(ctx, n.Backend())
			if err != nil {
				t.Fatalf("%s on node %d: %v", c.name, n.cfg.Node, err)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s: node %d holds\n%s\none process\n%s", c.name, n.cfg.Node, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
		same++
	}
	t.Logf("%d update forms: %d alike on the cluster and one process (%d of them failing alike), %d refused by the cluster", len(cases), same, failedBoth, refused)
	if same < len(formCases)+10 {
		t.Errorf("only %d forms compared", same)
	}
}

// TestClusterProcessesUpdateForms: the forms of a WHERE after a change
// through 3 real processes (R = 2) over HTTP, a request through each node
// in turn, every node's graph after it compared with one standalone
// process over the same snapshot given the same requests.
func TestClusterProcessesUpdateForms(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	tmp := t.TempDir()
	bin := serverBinary(t, tmp)
	dir := defaultSnapshot(t, 6)
	var out lockedBuffer
	start := func(nodes int, standalone bool) *Procs {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		args := []string{"--update-token", "storm", "--log-level", "warn"}
		if !standalone {
			args = append(args, "--replicas", "2")
		}
		p, err := StartProcs(ctx, ProcsConfig{Binary: bin, Data: dir, Nodes: nodes, Standalone: standalone, Output: &out, Args: args})
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		t.Cleanup(func() { p.Stop() })
		return p
	}
	one := start(1, true)
	cl := start(3, false)
	defer func() {
		if t.Failed() {
			t.Logf("node output:\n%s", out.String())
		}
	}()
	client := &http.Client{Timeout: 30 * time.Second}
	data := "PREFIX : <http://ex.org/> INSERT DATA { " + formsData[strings.Index(formsData, "\n")+1:] + " }"
	const all = `SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER (STRSTARTS(STR(?s), "http://ex.org/") || isBlank(?s)) }`
	blank := regexp.MustCompile(`_:[A-Za-z0-9_.\-]+`)
	for i, c := range formCases {
		var want string
		for k, base := range []string{one.URL(0), cl.URL(i % 3)} {
			for _, u := range []string{`DELETE { ?s ?p ?o } WHERE { ?s ?p ?o FILTER (STRSTARTS(STR(?s), "http://ex.org/") || isBlank(?s)) }`, data, c.update} {
				if status, err := postUpdate(client, base, u); err != nil || status/100 != 2 {
					t.Fatalf("%s: %s on %s: status %d, %v", c.name, u, base, status, err)
				}
			}
			if k == 0 {
				status, body, err := query(base, all, 30*time.Second)
				if err != nil || status != http.StatusOK {
					t.Fatalf("%s: one process: %d %v %s", c.name, status, err, body)
				}
				want = blank.ReplaceAllString(body, "_:b")
			}
		}
		for n := 0; n < 3; n++ {
			// A node reads the version it applied: wait for the others.
			deadline := time.Now().Add(20 * time.Second)
			for {
				status, body, err := query(cl.URL(n), all, 30*time.Second)
				got := blank.ReplaceAllString(body, "_:b")
				lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
				sort.Strings(lines[1:])
				if got = strings.Join(lines, "\n") + "\n"; err == nil && status == http.StatusOK && got == sortedTSV(want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: node %d holds (status %d, %v)\n%s\none process\n%s", c.name, n, status, err, got, sortedTSV(want))
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
}

// sortedTSV sorts the rows of a TSV answer (after its header).
func sortedTSV(tsv string) string {
	lines := strings.Split(strings.TrimRight(tsv, "\n"), "\n")
	sort.Strings(lines[1:])
	return strings.Join(lines, "\n") + "\n"
}
