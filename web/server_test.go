package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/results"
)

const exNS = "http://example.org/"

func ex(s string) rdf.Term { return rdf.NewIRI(exNS + s) }

var baseTriples = []rdf.Triple{
	{S: ex("alice"), P: ex("knows"), O: ex("bob")},
	{S: ex("alice"), P: ex("name"), O: rdf.NewLangLiteral("Alice", "en")},
	{S: ex("bob"), P: ex("knows"), O: ex("carol")},
	{S: ex("bob"), P: ex("age"), O: rdf.NewLiteral("42", rdf.XSDInteger)},
	{S: rdf.NewBlank("b1"), P: ex("knows"), O: ex("alice")},
}

type fixture struct {
	t   *testing.T
	srv *Server
	ts  *testServer
	b   *testBackend
}

func newFixture(t *testing.T, mod func(*Options)) *fixture {
	t.Helper()
	b := newTestBackend(baseTriples)
	opts := Options{Backend: b, Examples: []Example{{Name: "all", Query: "SELECT * { ?s ?p ?o }"}}}
	if mod != nil {
		mod(&opts)
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, srv: srv, ts: serveForTest(t, srv), b: b}
}

type response struct {
	status int
	header http.Header
	body   string
}

func (f *fixture) do(method, path string, header map[string]string, body string) response {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.ts.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return response{resp.StatusCode, resp.Header, string(b)}
}

func (f *fixture) get(path string, accept string) response {
	return f.do("GET", path, map[string]string{"Accept": accept}, "")
}

func q(query string, extra ...string) string {
	v := url.Values{"query": {query}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Add(extra[i], extra[i+1])
	}
	return "/sparql?" + v.Encode()
}

func apiErr(t *testing.T, r response) apiError {
	t.Helper()
	var ae apiError
	if err := json.Unmarshal([]byte(r.body), &ae); err != nil {
		t.Fatalf("error body is not JSON: %v: %q", err, r.body)
	}
	if ae.Status != r.status || ae.QueryID == "" || ae.QueryID != r.header.Get("X-Query-Id") {
		t.Errorf("error body %+v for status %d, X-Query-Id %q", ae, r.status, r.header.Get("X-Query-Id"))
	}
	return ae
}

const selectKnows = "SELECT ?s ?o WHERE { ?s <http://example.org/knows> ?o }"

var knowsRows = [][]rdf.Term{
	{ex("alice"), ex("bob")},
	{ex("bob"), ex("carol")},
	{rdf.NewBlank("b1"), ex("alice")},
}

func TestSelectEveryTransportAndFormat(t *testing.T) {
	f := newFixture(t, nil)
	formats := map[string]results.Format{
		"application/sparql-results+json": results.FormatJSON,
		"application/sparql-results+xml":  results.FormatXML,
		"text/tab-separated-values":       results.FormatTSV,
		"text/csv":                        results.FormatCSV,
	}
	form := url.Values{"query": {selectKnows}}.Encode()
	for accept, rf := range formats {
		for _, tr := range []string{"get", "form", "direct", "query-path"} {
			var r response
			switch tr {
			case "get":
				r = f.get(q(selectKnows), accept)
			case "query-path":
				r = f.get("/query?"+url.Values{"query": {selectKnows}}.Encode(), accept)
			case "form":
				r = f.do("POST", "/sparql", map[string]string{"Accept": accept, "Content-Type": "application/x-www-form-urlencoded"}, form)
			case "direct":
				r = f.do("POST", "/sparql", map[string]string{"Accept": accept, "Content-Type": "application/sparql-query"}, selectKnows)
			}
			if r.status != 200 {
				t.Fatalf("%s %s: %d %s", tr, accept, r.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, accept) {
				t.Errorf("%s %s: Content-Type %q", tr, accept, ct)
			}
			res, err := results.Read(rf, strings.NewReader(r.body))
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", tr, accept, err, r.body)
			}
			if !reflect.DeepEqual(res.Vars, []string{"s", "o"}) {
				t.Errorf("%s %s: vars %v", tr, accept, res.Vars)
			}
			if rf != results.FormatCSV && !reflect.DeepEqual(res.Rows, knowsRows) {
				t.Errorf("%s %s: rows %v", tr, accept, res.Rows)
			}
			if rf == results.FormatCSV && len(res.Rows) != 3 {
				t.Errorf("csv: %d rows", len(res.Rows))
			}
		}
	}
}

func TestFormatParameterAndNegotiation(t *testing.T) {
	f := newFixture(t, nil)
	r := f.get(q(selectKnows, "format", "csv"), "application/sparql-results+json")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") {
		t.Errorf("format=csv: %d %s", r.status, r.header.Get("Content-Type"))
	}
	r = f.get(q(selectKnows, "output", "tsv"), "")
	if r.status != 200 || !strings.HasPrefix(r.body, "?s\t?o\n") {
		t.Errorf("output=tsv: %d %q", r.status, r.body)
	}
	// An unknown format value is tolerated: Accept decides.
	r = f.get(q(selectKnows, "format", "html"), "text/csv;q=0.5, application/sparql-results+xml")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/sparql-results+xml") {
		t.Errorf("format=html: %d %s", r.status, r.header.Get("Content-Type"))
	}
	r = f.get(q(selectKnows), "text/html")
	if r.status != 406 {
		t.Fatalf("text/html: %d", r.status)
	}
	apiErr(t, r)
	// A graph-only Accept passes the early check but not for SELECT.
	r = f.get(q(selectKnows), "text/turtle")
	if r.status != 406 {
		t.Errorf("SELECT as turtle: %d", r.status)
	}
	// ASK has no CSV form.
	r = f.get(q("ASK { ?s <http://example.org/knows> ?o }"), "text/csv")
	if r.status != 406 {
		t.Errorf("ASK as csv: %d %s", r.status, r.body)
	}
}

func TestDatasetParameters(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.UpdateToken = "tok" })
	r := f.do("PUT", "/store?graph="+url.QueryEscape(exNS+"g1"), map[string]string{"Authorization": "Bearer tok", "Content-Type": "application/n-triples"},
		"<http://example.org/x> <http://example.org/knows> <http://example.org/y> .\n")
	if r.status != 201 {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	r = f.get(q(selectKnows, "default-graph-uri", exNS+"g1"), "text/tab-separated-values")
	want := "?s\t?o\n<http://example.org/x>\t<http://example.org/y>\n"
	if r.status != 200 || r.body != want {
		t.Errorf("default-graph-uri: %d %q", r.status, r.body)
	}
}

func TestAskConstructDescribe(t *testing.T) {
	f := newFixture(t, nil)
	for _, c := range []struct {
		query, accept string
		want          bool
	}{
		{"ASK { ?s <http://example.org/knows> ?o }", "application/sparql-results+json", true},
		{"ASK { ?s <http://example.org/nothing> ?o }", "application/sparql-results+xml", false},
	} {
		r := f.get(q(c.query), c.accept)
		res, err := results.Read(results.Negotiate(c.accept, results.BooleanFormats), strings.NewReader(r.body))
		if r.status != 200 || err != nil || !res.IsBoolean || res.Boolean != c.want {
			t.Errorf("%s: %d %v %+v", c.query, r.status, err, res)
		}
	}
	construct := "CONSTRUCT WHERE { ?s <http://example.org/knows> ?o }"
	wantNT := "<http://example.org/alice> <http://example.org/knows> <http://example.org/bob> .\n" +
		"<http://example.org/bob> <http://example.org/knows> <http://example.org/carol> .\n" +
		"_:b1 <http://example.org/knows> <http://example.org/alice> .\n"
	r := f.get(q(construct), "application/n-triples")
	if r.status != 200 || r.body != wantNT || r.header.Get("Content-Type") != "application/n-triples" {
		t.Errorf("n-triples: %d %q %q", r.status, r.header.Get("Content-Type"), r.body)
	}
	r = f.get(q(construct), "text/turtle")
	wantTTL := "@prefix ex: <http://example.org/> .\n\nex:alice ex:knows ex:bob .\nex:bob ex:knows ex:carol .\n_:b1 ex:knows ex:alice .\n"
	if r.status != 200 || r.body != wantTTL {
		t.Errorf("turtle: %d %q", r.status, r.body)
	}
	r = f.get(q(construct), "application/ld+json")
	var nodes []map[string]any
	if r.status != 200 || json.Unmarshal([]byte(r.body), &nodes) != nil || len(nodes) != 3 || nodes[2]["@id"] != "_:b1" {
		t.Errorf("json-ld: %d %s", r.status, r.body)
	}
	r = f.get(q(construct), "application/rdf+xml")
	if r.status != 200 || !strings.Contains(r.body, `<rdf:Description rdf:about="http://example.org/alice">`) ||
		!strings.Contains(r.body, `<ex:knows rdf:resource="http://example.org/bob"/>`) {
		t.Errorf("rdf/xml: %d %s", r.status, r.body)
	}
	r = f.get(q("DESCRIBE <http://example.org/bob>"), "")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/turtle") ||
		r.body != "@prefix ex: <http://example.org/> .\n\nex:bob ex:knows ex:carol ;\n    ex:age \"42\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n" {
		t.Errorf("describe: %d %q", r.status, r.body)
	}
}

func TestErrors(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxBodyBytes = 1000 })
	r := f.get(q("SELECT * WHERE {\n ?s SYNTAX_ERROR }"), "")
	ae := apiErr(t, r)
	if r.status != 400 || ae.Error != "syntax_error" || ae.Line != 2 || ae.Col != 5 {
		t.Errorf("syntax error: %d %+v", r.status, ae)
	}
	for _, c := range []struct {
		method, path string
		header       map[string]string
		body         string
		status       int
	}{
		{"GET", "/sparql", nil, "", 400},
		{"GET", "/sparql?query=", nil, "", 400},
		{"GET", "/sparql?query=a&query=b", nil, "", 400},
		{"GET", "/sparql?update=CLEAR+ALL", nil, "", 400},
		{"GET", q(selectKnows, "timeout", "soon"), nil, "", 400},
		{"GET", q(selectKnows, "explain", "maybe"), nil, "", 400},
		{"POST", "/sparql", map[string]string{"Content-Type": "text/plain"}, selectKnows, 415},
		{"POST", "/sparql", nil, selectKnows, 415},
		{"POST", "/sparql", map[string]string{"Content-Type": "application/sparql-query"}, strings.Repeat("#", 2000), 413},
		{"POST", "/sparql", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, "query=" + strings.Repeat("x", 2000), 413},
		{"DELETE", "/sparql", nil, "", 405},
		{"GET", "/nothing-here", nil, "", 404},
		{"GET", "/store?graph=" + url.QueryEscape(exNS+"missing"), nil, "", 404},
		{"GET", "/store", nil, "", 400},
		{"GET", "/store?default&graph=http://x/", nil, "", 400},
		{"GET", "/store?graph=relative", nil, "", 400},
		{"GET", "/store?default", map[string]string{"Accept": "text/csv"}, "", 406},
		{"POST", "/update", map[string]string{"Content-Type": "application/sparql-update"}, "CLEAR ALL", 403},
		{"POST", "/sparql", map[string]string{"Content-Type": "application/sparql-update"}, "CLEAR ALL", 403},
		{"PUT", "/store?default", map[string]string{"Content-Type": "text/turtle"}, "", 403},
	} {
		r := f.do(c.method, c.path, c.header, c.body)
		if r.status != c.status {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, r.status, c.status, r.body)
			continue
		}
		apiErr(t, r)
	}
}

func TestUpdateAuthAndUnsupported(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.UpdateToken = "s3cret" })
	upd := map[string]string{"Content-Type": "application/sparql-update"}
	r := f.do("POST", "/update", upd, "CLEAR ALL")
	if r.status != 401 || r.header.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %d %v", r.status, r.header)
	}
	upd["Authorization"] = "Bearer wrong"
	if r = f.do("POST", "/update", upd, "CLEAR ALL"); r.status != 403 {
		t.Errorf("wrong token: %d", r.status)
	}
	upd["Authorization"] = "Bearer s3cret"
	r = f.do("POST", "/update", upd, "CLEAR ALL")
	if ae := apiErr(t, r); r.status != 501 || !strings.Contains(ae.Message, "not supported") {
		t.Errorf("update: %d %s", r.status, r.body)
	}
	r = f.do("POST", "/sparql", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": "Bearer s3cret"}, "update=CLEAR+ALL")
	if r.status != 501 {
		t.Errorf("update via form: %d", r.status)
	}
	r = f.do("POST", "/update", upd, "LOAD <http://evil.example/data.ttl>")
	if r.status != 403 || !strings.Contains(r.body, "LOAD") {
		t.Errorf("LOAD: %d %s", r.status, r.body)
	}
}

func TestServicePolicy(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.AllowedServices = []string{"http://ok.example/sparql"} })
	for query, want := range map[string]int{
		"SELECT * { SERVICE <http://bad.example/sparql> { ?s ?p ?o } }":                       403,
		"PREFIX b: <http://bad.example/>\nSELECT * { SERVICE SILENT b:sparql { ?s ?p ?o } }":  403,
		"SELECT * { SERVICE ?endpoint { ?s ?p ?o } }":                                         403,
		"SELECT * { SERVICE <http://ok.example/sparql> { ?s ?p ?o } }":                        400, // allowed; the test backend cannot parse it
		"SELECT * { ?service <http://example.org/knows> ?o }":                                 200,
		"SELECT * { ?s <http://example.org/knows> ?o } # SERVICE <http://bad.example/sparql>": 200,
	} {
		r := f.get(q(query), "")
		if r.status != want {
			t.Errorf("%q: %d, want %d: %s", query, r.status, want, r.body)
		}
	}
}

func TestRemoteRefs(t *testing.T) {
	cases := map[string][]string{
		`PREFIX e: <http://e/> SELECT * { SERVICE e:x {} SERVICE <http://y> {} }`:           {"http://e/x", "http://y"},
		`SELECT * { ?s ?p "SERVICE <http://no>" . FILTER(?x < 3 && ?y > 2) } # SERVICE <x>`: nil,
		`SELECT * { ?s ex:service ?o . ?service ?p ?o }`:                                    nil,
		`SELECT * { service silent ?svc {} }`:                                               {"?svc"},
		`SELECT * { ?s ?p """a "SERVICE <http://no>" b""" }`:                                nil,
	}
	for text, want := range cases {
		if got := remoteRefs(text, "SERVICE"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, want %q", text, got, want)
		}
	}
	if got := remoteRefs("LOAD SILENT <http://a/b> INTO GRAPH <http://g>", "LOAD"); !reflect.DeepEqual(got, []string{"http://a/b"}) {
		t.Errorf("LOAD: %q", got)
	}
	// The web layer leaves LOAD SILENT to the backend (refused: no effect).
	if got := scanRefs("LOAD SILENT <http://a/b> ; LOAD <http://c/d>", "LOAD", true); !reflect.DeepEqual(got, []string{"http://c/d"}) {
		t.Errorf("LOAD, SILENT skipped: %q", got)
	}
}

func TestAllowed(t *testing.T) {
	list := []string{"http://a.example/x.ttl", "http://b.example/pub/*"}
	for ref, want := range map[string]bool{
		"http://a.example/x.ttl":      true,
		"http://a.example/x.ttl2":     false,
		"http://a.example/y.ttl":      false,
		"http://b.example/pub/":       true,
		"http://b.example/pub/z/w.nt": true,
		"http://b.example/pu":         false,
		"http://b.example/private":    false,
		"":                            false,
	} {
		if got := Allowed(ref, list); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", ref, got, want)
		}
	}
	if !Allowed("http://any", []string{"*"}) || Allowed("http://any", nil) || Allowed("http://any", []string{""}) {
		t.Error(`"*" allows any IRI, an empty list none, an empty entry none`)
	}
}

func TestExplain(t *testing.T) {
	f := newFixture(t, nil)
	for _, mode := range []string{"true", "analyze"} {
		r := f.get(q(selectKnows, "explain", mode), "")
		var body struct {
			QueryID string `json:"queryId"`
			Plan    struct {
				Form     string
				Analyzed bool
				Rows     int64
				Steps    []struct {
					Op, Pattern, Start, Direction, Mode string
					EstRows                             float64
					ActualRows                          *int64
					ElapsedMs                           float64
					Fabric                              *FabricStats
					Children                            []json.RawMessage
				}
			}
		}
		if r.status != 200 || json.Unmarshal([]byte(r.body), &body) != nil {
			t.Fatalf("explain=%s: %d %s", mode, r.status, r.body)
		}
		p := body.Plan
		if body.QueryID == "" || p.Form != "select" || len(p.Steps) != 1 || p.Steps[0].Mode != "in-place" || p.Steps[0].Direction != "out" || len(p.Steps[0].Children) != 1 {
			t.Errorf("explain=%s: %s", mode, r.body)
		}
		if analyzed := mode == "analyze"; p.Analyzed != analyzed || (p.Steps[0].ActualRows != nil) != analyzed {
			t.Errorf("explain=%s: analyzed %v: %s", mode, p.Analyzed, r.body)
		}
		if mode == "analyze" && (*p.Steps[0].ActualRows != 3 || p.Steps[0].ElapsedMs != 1 || p.Steps[0].Fabric.ReadBytes != 192) {
			t.Errorf("analyze figures: %s", r.body)
		}
	}
}

func TestTimeoutStopsTheBackend(t *testing.T) {
	f := newFixture(t, nil)
	r := f.get(q("SELECT * { SLEEP }", "timeout", "0.2"), "")
	ae := apiErr(t, r)
	if r.status != TimeoutStatus || ae.Error != "timeout" {
		t.Fatalf("timeout: %d %s", r.status, r.body)
	}
	select {
	case id := <-f.b.cancelled:
		if id != ae.QueryID {
			t.Errorf("cancelled %q, answered %q", id, ae.QueryID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the backend never saw the cancellation")
	}
}

// A backend that ignores its context still gets an answer out by the
// deadline: the response comes while the backend is still stuck.
func TestTimeoutWithStuckBackend(t *testing.T) {
	f := newFixture(t, nil)
	defer close(f.b.unstick)
	r := f.get(q("SELECT * { STUCK }", "timeout", "0.1"), "")
	if r.status != TimeoutStatus {
		t.Fatalf("stuck: %d %s", r.status, r.body)
	}
}

// A timeout after the response has started cuts the stream: the client
// sees a broken response, not a well-formed short one.
//
// The response starts once 64 KiB of rows are out (the response buffer); on a loaded machine
// that may take longer than the timeout, and the query then gets a 504
// before any byte (the right answer, but not the case under test): it is
// asked again with a longer timeout.
func TestTimeoutMidStream(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxRows, o.ResponseBuffer = -1, 64<<10 })
	for _, timeout := range []string{"0.3", "1", "3", "10"} {
		resp, err := http.Get(f.ts.URL + q("SELECT ?n { ENDLESS }", "timeout", timeout))
		if err != nil {
			t.Fatal(err)
		}
		status := resp.StatusCode
		var n int64
		if status == 200 {
			n, err = io.Copy(io.Discard, resp.Body)
		}
		resp.Body.Close()
		if status != 200 && status != TimeoutStatus {
			t.Fatalf("timeout %s: status %d", timeout, status)
		}
		select {
		case <-f.b.cancelled:
		case <-time.After(10 * time.Second):
			t.Fatalf("timeout %s, status %d: the stream was not stopped", timeout, status)
		}
		if status == TimeoutStatus {
			t.Logf("timeout %s: 504 before the response started; again with a longer timeout", timeout)
			continue
		}
		if err == nil {
			t.Errorf("a cut stream read cleanly (%d bytes)", n)
		}
		return
	}
	t.Fatal("the response never started before the timeout")
}

func TestClientDisconnectCancels(t *testing.T) {
	f := newFixture(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", f.ts.URL+q("SELECT * { SLEEP }"), nil)
	req.Header.Set("X-Query-Id", "disconnect-1")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	if id := <-f.b.started; id != "disconnect-1" {
		t.Fatalf("started %q", id)
	}
	cancel()
	select {
	case id := <-f.b.cancelled:
		if id != "disconnect-1" {
			t.Errorf("cancelled %q", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("disconnect did not reach the backend")
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v", err)
	}
}

func TestCancelEndpoint(t *testing.T) {
	f := newFixture(t, nil)
	type out struct {
		r response
	}
	ch := make(chan out, 1)
	go func() {
		ch <- out{f.do("GET", q("SELECT * { SLEEP }"), map[string]string{"X-Query-Id": "q-cancel-me"}, "")}
	}()
	<-f.b.started
	if r := f.do("POST", "/api/cancel?id=q-cancel-me", nil, ""); r.status != 200 {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	o := <-ch
	if o.r.status != statusClientClosed || !strings.Contains(o.r.body, "cancelled") {
		t.Errorf("cancelled query answered %d %s", o.r.status, o.r.body)
	}
	if id := <-f.b.cancelled; id != "q-cancel-me" {
		t.Errorf("backend cancelled %q", id)
	}
	if r := f.do("POST", "/api/cancel?id=q-cancel-me", nil, ""); r.status != 404 {
		t.Errorf("second cancel: %d", r.status)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxConcurrent = 2 })
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", f.ts.URL+q("SELECT * { SLEEP }"), nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	<-f.b.started
	<-f.b.started
	r := f.get(q(selectKnows), "")
	if r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Errorf("third query: %d %v", r.status, r.header)
	}
	apiErr(t, r)
	cancel()
	wg.Wait()
	<-f.b.cancelled
	<-f.b.cancelled
	// Slots are given back.
	if r := f.get(q(selectKnows), ""); r.status != 200 {
		t.Errorf("after: %d", r.status)
	}
}

func TestRowCap(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxRows = 2 })
	r := f.get(q(selectKnows), "text/tab-separated-values")
	if r.status != 200 || r.header.Get("Wukong-Truncated") != "true" || strings.Count(r.body, "\n") != 3 {
		t.Errorf("cap 2: %d %v %q", r.status, r.header, r.body)
	}
	r = f.get(q("SELECT ?s ?o WHERE { ?s <http://example.org/knows> ?o } LIMIT 2"), "text/tab-separated-values")
	if r.status != 200 || r.header.Get("Wukong-Truncated") != "" {
		t.Errorf("exactly the cap is not truncated: %v", r.header)
	}
	// Past the commit buffer the cap is announced in a trailer.
	f = newFixture(t, func(o *Options) { o.MaxRows, o.ResponseBuffer = 20000, 64<<10 })
	resp, err := http.Get(f.ts.URL + q("SELECT ?n { ENDLESS }"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	res, err := results.Read(results.FormatJSON, strings.NewReader(string(body)))
	if err != nil || len(res.Rows) != 20000 || resp.Trailer.Get("Wukong-Truncated") != "true" {
		t.Errorf("trailer: %v rows=%d trailer=%v", err, len(res.Rows), resp.Trailer)
	}
}

// readAll reads a graph over GSP as N-Triples.
func (f *fixture) readGraph(path string) ([]rdf.Triple, int) {
	r := f.get(path, "application/n-triples")
	if r.status != 200 {
		return nil, r.status
	}
	nr := results.NewNTriplesReader(strings.NewReader(r.body))
	var ts []rdf.Triple
	for {
		t, err := nr.Next()
		if err == io.EOF {
			return ts, r.status
		}
		if err != nil {
			f.t.Fatal(err)
		}
		ts = append(ts, t)
	}
}

func TestGraphStoreProtocol(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.UpdateToken = "tok" })
	auth := func(ct string) map[string]string {
		return map[string]string{"Authorization": "Bearer tok", "Content-Type": ct}
	}
	g := "/store?graph=" + url.QueryEscape(exNS+"people")
	if _, st := f.readGraph(g); st != 404 {
		t.Fatalf("missing graph: %d", st)
	}
	ttl := "@prefix ex: <http://example.org/> .\nex:dan ex:knows ex:eve .\n"
	if r := f.do("PUT", g, auth("text/turtle"), ttl); r.status != 201 {
		t.Fatalf("PUT new: %d %s", r.status, r.body)
	}
	if r := f.do("PUT", g, auth("text/turtle"), ttl); r.status != 204 {
		t.Fatalf("PUT again: %d %s", r.status, r.body)
	}
	if r := f.do("POST", g, auth("application/n-triples"), "<http://example.org/eve> <http://example.org/knows> <http://example.org/dan> .\n"); r.status != 204 {
		t.Fatalf("POST: %d %s", r.status, r.body)
	}
	ts, _ := f.readGraph(g)
	want := []string{
		"<http://example.org/dan> <http://example.org/knows> <http://example.org/eve>",
		"<http://example.org/eve> <http://example.org/knows> <http://example.org/dan>",
	}
	if got := sortedTriples(ts); !reflect.DeepEqual(got, want) {
		t.Errorf("graph: %v", got)
	}
	r := f.do("HEAD", g, map[string]string{"Accept": "text/turtle"}, "")
	if r.status != 200 || r.body != "" || !strings.HasPrefix(r.header.Get("Content-Type"), "text/turtle") {
		t.Errorf("HEAD: %d %v %q", r.status, r.header, r.body)
	}
	// A bad body changes nothing and says where it is wrong.
	r = f.do("PUT", g, auth("text/turtle"), "@prefix ex: <http://example.org/> .\nex:a ex:b .\n")
	if ae := apiErr(t, r); r.status != 400 || ae.Line != 2 {
		t.Errorf("bad turtle: %d %+v", r.status, ae)
	}
	if ts, _ := f.readGraph(g); len(ts) != 2 {
		t.Errorf("bad PUT changed the graph: %v", ts)
	}
	if r := f.do("PUT", g, auth("application/x-unknown"), "x"); r.status != 415 {
		t.Errorf("unknown type: %d", r.status)
	}
	if r := f.do("PUT", g, map[string]string{"Authorization": "Bearer tok"}, ttl); r.status != 415 {
		t.Errorf("no content type: %d", r.status)
	}
	if r := f.do("PUT", g, map[string]string{"Content-Type": "text/turtle"}, ttl); r.status != 401 {
		t.Errorf("no auth: %d", r.status)
	}
	if r := f.do("DELETE", g, map[string]string{"Authorization": "Bearer nope"}, ""); r.status != 403 {
		t.Errorf("bad auth: %d", r.status)
	}
	if r := f.do("DELETE", g, auth(""), ""); r.status != 204 {
		t.Errorf("DELETE: %d", r.status)
	}
	if r := f.do("DELETE", g, auth(""), ""); r.status != 404 {
		t.Errorf("DELETE again: %d", r.status)
	}
	// The default graph.
	ts, st := f.readGraph("/store?default")
	if st != 200 || len(ts) != len(baseTriples) {
		t.Errorf("default: %d %d", st, len(ts))
	}
	if r := f.do("DELETE", "/store?default", auth(""), ""); r.status != 204 {
		t.Errorf("DELETE default: %d", r.status)
	}
	if ts, _ := f.readGraph("/store?default"); len(ts) != 0 {
		t.Errorf("default after delete: %v", ts)
	}
}

// PUT swaps the default graph atomically: concurrent readers see every
// triple of one version, never a mixture.
func TestGraphStoreAtomicSwap(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.UpdateToken = "tok"; o.MaxConcurrent = 64 })
	const n = 200
	version := func(v int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "<http://example.org/s%d> <http://example.org/version> \"%d\" .\n", i, v)
		}
		return b.String()
	}
	put := func(v int) {
		r := f.do("PUT", "/store?default", map[string]string{"Authorization": "Bearer tok", "Content-Type": "application/n-triples"}, version(v))
		if r.status != 204 {
			t.Errorf("PUT v%d: %d %s", v, r.status, r.body)
		}
	}
	put(0)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]int{}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := f.get(q("SELECT ?v { ?s <http://example.org/version> ?v }"), "text/csv")
				if r.status != 200 {
					t.Errorf("read: %d %s", r.status, r.body)
					return
				}
				lines := strings.Split(strings.TrimSpace(r.body), "\r\n")[1:]
				if len(lines) != n {
					t.Errorf("read %d rows, want %d", len(lines), n)
					return
				}
				for _, l := range lines[1:] {
					if l != lines[0] {
						t.Errorf("mixed versions: %s and %s", lines[0], l)
						return
					}
				}
				mu.Lock()
				seen[lines[0]]++
				mu.Unlock()
			}
		}()
	}
	for v := 1; v <= 20; v++ {
		put(v)
	}
	close(stop)
	wg.Wait()
	t.Logf("readers saw %d distinct versions", len(seen))
	if len(seen) == 0 {
		t.Error("readers saw nothing")
	}
}

func TestCORS(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.CORSOrigins = []string{"https://app.example"} })
	r := f.do("OPTIONS", "/sparql", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}, "")
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Methods"), "POST") || !strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Content-Type") {
		t.Errorf("preflight: %d %v", r.status, r.header)
	}
	r = f.do("GET", q(selectKnows), map[string]string{"Origin": "https://app.example"}, "")
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "X-Query-Id") {
		t.Errorf("simple: %v", r.header)
	}
	r = f.do("GET", q(selectKnows), map[string]string{"Origin": "https://evil.example"}, "")
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin allowed: %v", r.header)
	}
	r = f.do("OPTIONS", "/store", map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "PUT"}, "")
	if r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("other origin preflight: %v", r.header)
	}
	// Off by default.
	f = newFixture(t, nil)
	r = f.do("GET", q(selectKnows), map[string]string{"Origin": "https://app.example"}, "")
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS on by default: %v", r.header)
	}
}

func TestMetrics(t *testing.T) {
	f := newFixture(t, nil)
	f.get(q(selectKnows), "")
	f.get(q("ASK { ?s ?p ?o }"), "")
	f.get(q("SELECT * { SLEEP }", "timeout", "0.05"), "")
	<-f.b.cancelled
	r := f.get("/metrics", "")
	for _, want := range []string{
		`wukongd_query_duration_seconds_bucket{form="select",outcome="ok",le="+Inf"} 1`,
		`wukongd_query_duration_seconds_count{form="ask",outcome="ok"} 1`,
		`wukongd_queries_total{form="unknown",outcome="timeout"} 1`,
		`wukongd_query_timeouts_total 1`,
		`wukongd_queries_active 0`,
		`wukongd_result_rows_total 3`,
		`wukongd_fabric_operations_total{kind="read"} 10`,
		`wukongd_fabric_bytes_total{kind="read"} 640`,
		`go_goroutines`,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		t.Log(r.body)
	}
}

func TestHealthReadyConsole(t *testing.T) {
	f := newFixture(t, nil)
	if r := f.get("/healthz", ""); r.status != 200 {
		t.Errorf("healthz %d", r.status)
	}
	if r := f.get("/readyz", ""); r.status != 200 {
		t.Errorf("readyz %d", r.status)
	}
	r := f.get("/", "text/html")
	if r.status != 200 || !strings.Contains(r.body, `<textarea id="query"`) || !strings.Contains(r.header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Errorf("console: %d %v", r.status, r.header)
	}
	for _, p := range []string{"/console/app.js", "/console/style.css"} {
		if r := f.get(p, ""); r.status != 200 || len(r.body) < 100 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
	r = f.get("/api/examples", "")
	var exs []Example
	if r.status != 200 || json.Unmarshal([]byte(r.body), &exs) != nil || len(exs) != 1 || exs[0].Name != "all" {
		t.Errorf("examples: %d %s", r.status, r.body)
	}
	// A browser opening the endpoint is sent to the console.
	req, _ := http.NewRequest("GET", f.ts.URL+"/sparql", nil)
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/" {
		t.Errorf("browser GET /sparql: %d %v", resp.StatusCode, resp.Header)
	}
}

type notReady struct{ *testBackend }

func (notReady) Ready(context.Context) error { return errors.New("loading snapshot") }

func TestNotReady(t *testing.T) {
	srv, err := New(Options{Backend: notReady{newTestBackend(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "loading snapshot") {
		t.Errorf("readyz: %d %s", rec.Code, rec.Body)
	}
}

// testServer is a Server listening on a loopback port.
type testServer struct {
	URL      string
	Listener net.Listener
}

// serveForTest serves srv the way serve does, with HTTPServer (its own
// connection loop for queries, net/http for the rest), or only with
// net/http when WUKONGD_WEB_NETHTTP is set (to compare the two).
func serveForTest(t *testing.T, srv *Server) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("WUKONGD_WEB_NETHTTP") != "" {
		hs := &http.Server{Handler: srv, ConnContext: ConnContext}
		go func() { _ = hs.Serve(ln) }()
		t.Cleanup(func() { _ = hs.Close() })
	} else {
		hs := NewHTTPServer(srv, HTTPOptions{})
		go func() { _ = hs.Serve(ln) }()
		t.Cleanup(func() { _ = hs.Close() })
	}
	return &testServer{URL: "http://" + ln.Addr().String(), Listener: ln}
}

func newHTTPTestServer(t *testing.T, h http.Handler) *httptest.Server {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

func TestMayContainWord(t *testing.T) {
	for _, c := range []struct {
		text, kw string
		want     bool
	}{
		{"SELECT * { SERVICE <a> {} }", "SERVICE", true},
		{"select * { service <a> {} }", "SERVICE", true},
		{"select * { ſervice <a> {} }", "SERVICE", true},
		{"SELECT * { ?s ?p ?o }", "SERVICE", false},
		{"SELECT * { ?s ?p ?o }", "LOAD", false},
		{"load <a>", "LOAD", true},
		{"lo@d", "LOAD", false},
	} {
		if got := mayContainWord(c.text, c.kw); got != c.want {
			t.Errorf("mayContainWord(%q, %q) = %v", c.text, c.kw, got)
		}
		if refs := remoteRefs(c.text, c.kw); len(refs) > 0 && !c.want {
			t.Errorf("%q: refs %v but no word", c.text, refs)
		}
	}
}

// TestGraphStoreDirectAndCreated: a graph named by its own URL under
// /store (direct identification) is the graph of that IRI, and a POST to
// /store without ?graph= creates a graph of the server's naming, given in
// Location, which reads back by that IRI.
func TestGraphStoreDirectAndCreated(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.UpdateToken = "tok" })
	auth := map[string]string{"Authorization": "Bearer tok", "Content-Type": "application/n-triples"}
	doc := "<http://example.org/a> <http://example.org/knows> <http://example.org/b> .\n"
	if r := f.do("PUT", "/store/people/1.nt", auth, doc); r.status != 201 {
		t.Fatalf("direct PUT: %d %s", r.status, r.body)
	}
	direct := f.ts.URL + "/store/people/1.nt"
	if ts, st := f.readGraph("/store?graph=" + url.QueryEscape(direct)); st != 200 || len(ts) != 1 {
		t.Errorf("the direct graph by ?graph=<%s>: %d, %d triples", direct, st, len(ts))
	}
	if ts, st := f.readGraph("/store/people/1.nt"); st != 200 || len(ts) != 1 {
		t.Errorf("direct GET: %d, %d triples", st, len(ts))
	}
	if r := f.do("HEAD", "/store/people/2.nt", nil, ""); r.status != 404 {
		t.Errorf("direct HEAD of a missing graph: %d", r.status)
	}
	if r := f.get("/store/people/1.nt?default", "application/n-triples"); r.status != 400 {
		t.Errorf("direct path with ?default: %d", r.status)
	}
	if r := f.do("DELETE", "/store/people/1.nt", auth, ""); r.status != 204 {
		t.Errorf("direct DELETE: %d %s", r.status, r.body)
	}
	if _, st := f.readGraph("/store/people/1.nt"); st != 404 {
		t.Errorf("direct GET after DELETE: %d", st)
	}

	var locs []string
	for i := 0; i < 2; i++ {
		r := f.do("POST", "/store", auth, doc)
		loc := r.header.Get("Location")
		if r.status != 201 || !strings.HasPrefix(loc, f.ts.URL+"/store/graphs/") {
			t.Fatalf("POST creation: %d, Location %q: %s", r.status, loc, r.body)
		}
		if ts, st := f.readGraph("/store?graph=" + url.QueryEscape(loc)); st != 200 || len(ts) != 1 {
			t.Errorf("created graph <%s>: %d, %d triples", loc, st, len(ts))
		}
		locs = append(locs, loc)
	}
	if locs[0] == locs[1] {
		t.Errorf("two POSTs were given one graph: %s", locs[0])
	}
	if r := f.do("POST", "/store", map[string]string{"Content-Type": "application/n-triples"}, doc); r.status != 401 && r.status != 403 {
		t.Errorf("POST creation without the token: %d", r.status)
	}
}
