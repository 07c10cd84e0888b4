package conformance

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/wukongd/wukongd/loader"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/results"
	"github.com/wukongd/wukongd/web"
)

// The HTTP suites: the SPARQL 1.1 Protocol tests (protocol/manifest.ttl)
// and the Graph Store Protocol tests (graph-store-protocol/manifest.ttl,
// which includes manifest-direct.ttl and manifest-indirect.ttl). Their
// manifests describe each exchange in the W3C HTTP vocabulary (ht:): the
// requests of a connection, in order, each with its method, path, headers
// and body, and the response expected (status or status class, the format
// and boolean of a query result, the headers and an RDF body).
const (
	ProtocolManifest   = "protocol/manifest.ttl"
	GraphStoreManifest = "graph-store-protocol/manifest.ttl"

	htNS  = "http://www.w3.org/2011/http#"
	htsNS = "http://www.w3.org/2011/http-statusCodes#"
	cntNS = "http://www.w3.org/2011/content#"
)

// HTTPTest is one mf:ProtocolTest or mf:GraphStoreProtocolTest.
type HTTPTest struct {
	ID, Name, Dir string
	Requires      []string   // local names of mf:requires
	GraphData     []NamedDoc // ut:graphData: the named graphs before the first request
	Requests      []HTTPRequest
}

// HTTPRequest is one request of a test and what its response must be.
type HTTPRequest struct {
	Method, Path string
	Headers      [][2]string // field name (lower case), value
	Body         string
	HasBody      bool
	// The response: Status lists the acceptable statuses (a code such as
	// "201", or a class "2xx"); Format is mf:expectedFormat ("boolean",
	// "RDF", "tabular"); Boolean the expected ASK answer; ContentType and
	// RDFBody the expected Content-Type and RDF content.
	Status      []string
	Format      string
	Boolean     *bool
	ContentType string
	RDFBody     string
	HasRDFBody  bool
	// Location: the response must name a Location (mf:expectedLocation),
	// which later requests of the test use for $LOCATION$.
	Location bool
}

var htsCodes = map[string]string{"OK": "200", "Created": "201", "NoContent": "204", "NotFound": "404",
	"BadRequest": "400", "UnsupportedMediaType": "415", "MethodNotAllowed": "405"}

// LoadHTTPTests reads an HTTP manifest (and those it includes).
func LoadHTTPTests(root, manifest string) ([]HTTPTest, error) {
	s := &Suite{Root: root}
	var out []HTTPTest
	err := s.eachEntry(SuiteBase+manifest, map[string]bool{}, func(g graph, e rdf.Term, dir string) error {
		typ := g.one(e, rdf.RDFType).Value
		if typ != mfNS+"ProtocolTest" && typ != mfNS+"GraphStoreProtocolTest" {
			return nil
		}
		t, err := s.httpTest(g, e, dir)
		if err != nil {
			return fmt.Errorf("test <%s>: %w", e.Value, err)
		}
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Suite) httpTest(g graph, e rdf.Term, dir string) (HTTPTest, error) {
	id, _ := strings.CutPrefix(e.Value, SuiteBase)
	t := HTTPTest{ID: id, Name: g.one(e, mfNS+"name").Value, Dir: dir}
	for _, r := range g.all(e, mfNS+"requires") {
		t.Requires = append(t.Requires, strings.TrimPrefix(r.Value, mfNS))
	}
	for _, gd := range g.all(e, utNS+"graphData") {
		doc, err := s.doc(g.one(gd, utNS+"graph").Value)
		if err != nil {
			return t, err
		}
		t.GraphData = append(t.GraphData, NamedDoc{IRI: g.one(gd, rdfsLabel).Value, Doc: doc})
	}
	action := g.one(e, mfNS+"action")
	for _, l := range g.all(action, htNS+"requests") {
		reqs, err := g.list(l)
		if err != nil {
			return t, err
		}
		for _, rq := range reqs {
			r := HTTPRequest{Method: g.one(rq, htNS+"methodName").Value, Path: g.one(rq, htNS+"absolutePath").Value}
			hs, err := headers(g, rq)
			if err != nil {
				return t, err
			}
			r.Headers = hs
			if b := g.one(rq, htNS+"body"); !b.IsZero() {
				r.Body, r.HasBody = encodeBody(g.one(b, cntNS+"chars").Value, g.one(b, cntNS+"characterEncoding").Value), true
			}
			resp := g.one(rq, htNS+"resp")
			for _, st := range g.all(resp, mfNS+"expectedStatus") {
				name := strings.TrimPrefix(st.Value, htsNS)
				if c, ok := strings.CutPrefix(name, "StatusCode"); ok {
					r.Status = append(r.Status, c)
				} else if code, ok := htsCodes[name]; ok {
					r.Status = append(r.Status, code)
				} else {
					return t, fmt.Errorf("unknown status %s", st.Value)
				}
			}
			r.Format = g.one(resp, mfNS+"expectedFormat").Value
			r.Location = !g.one(resp, mfNS+"expectedLocation").IsZero()
			if b := g.one(resp, mfNS+"expectedBoolean"); !b.IsZero() {
				v := b.Value == "true"
				r.Boolean = &v
			}
			rhs, err := headers(g, resp)
			if err != nil {
				return t, err
			}
			for _, h := range rhs {
				if h[0] == "content-type" {
					r.ContentType = h[1]
				}
			}
			if b := g.one(resp, htNS+"body"); !b.IsZero() {
				r.RDFBody, r.HasRDFBody = g.one(b, cntNS+"chars").Value, true
			}
			t.Requests = append(t.Requests, r)
		}
	}
	if len(t.Requests) == 0 {
		return t, fmt.Errorf("no ht:requests")
	}
	return t, nil
}

// encodeBody encodes a body's characters as cnt:characterEncoding says
// (UTF-8 unless UTF-16: big-endian with a byte-order mark).
func encodeBody(chars, enc string) string {
	if !strings.EqualFold(enc, "UTF-16") {
		return chars
	}
	b := []byte{0xFE, 0xFF}
	for _, u := range utf16.Encode([]rune(chars)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return string(b)
}

func headers(g graph, node rdf.Term) ([][2]string, error) {
	var out [][2]string
	for _, l := range g.all(node, htNS+"headers") {
		hs, err := g.list(l)
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			out = append(out, [2]string{strings.ToLower(g.one(h, htNS+"fieldName").Value), g.one(h, htNS+"fieldValue").Value})
		}
	}
	return out, nil
}

// endpointPath maps a manifest path onto our server: /sparql/… is our
// /sparql endpoint (queries and updates), /gsp… our /store.
func endpointPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "/sparql/"); ok {
		return "/sparql" + rest
	}
	if rest, ok := strings.CutPrefix(p, "/gsp"); ok {
		return "/store" + rest
	}
	return p
}

// protocolToken authorizes the writes of the HTTP tests.
const protocolToken = "conformance"

// RunHTTPTest runs an HTTP test against our server (package web over a
// service of shards shards, with the test's named graphs, updates
// enabled): each request in order, each response checked against the
// manifest.
func RunHTTPTest(ctx context.Context, t HTTPTest, shards int, timeout time.Duration) Outcome {
	out := Outcome{ID: t.ID, Dir: t.Dir}
	fail := func(i int, reason string, detail string) Outcome {
		out.Status, out.Reason = Fail, fmt.Sprintf("request %d (%s %s): %s", i+1, t.Requests[i].Method, t.Requests[i].Path, firstLine(reason))
		out.Detail = detail
		return out
	}
	before := &Dataset{}
	for _, n := range t.GraphData {
		ts, err := readGraph(n.Doc)
		if err != nil {
			out.Status, out.Reason = Fail, err.Error()
			return out
		}
		before.AddNamed(n.IRI, ts)
	}
	svc, err := newService(before, shards)
	if err != nil {
		out.Status, out.Reason = Fail, err.Error()
		return out
	}
	defer svc.Close()
	srv, err := web.New(web.Options{Backend: svc, UpdateToken: protocolToken, DefaultTimeout: timeout})
	if err != nil {
		out.Status, out.Reason = Fail, err.Error()
		return out
	}
	// Served as serve serves it: the query endpoint's own HTTP/1.1 loop,
	// net/http for the rest (web/h1.go).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		out.Status, out.Reason = Fail, err.Error()
		return out
	}
	h1 := web.NewHTTPServer(srv, web.HTTPOptions{})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	go func() { _ = h1.Serve(ln) }()
	defer h1.Close()
	hs := struct {
		URL    string
		Client func() *http.Client
	}{"http://" + ln.Addr().String(), func() *http.Client { return client }}
	location := "" // the last response's Location, for $LOCATION$
	for i, r := range t.Requests {
		var body io.Reader
		if r.HasBody {
			body = strings.NewReader(r.Body)
		}
		path := strings.ReplaceAll(endpointPath(r.Path), "$LOCATION$", url.QueryEscape(location))
		req, err := http.NewRequestWithContext(ctx, r.Method, hs.URL+path, body)
		if err != nil {
			return fail(i, err.Error(), "")
		}
		for _, h := range r.Headers {
			req.Header.Add(h[0], h[1])
		}
		req.Header.Set("Authorization", "Bearer "+protocolToken)
		resp, err := hs.Client().Do(req)
		if err != nil {
			return fail(i, err.Error(), "")
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return fail(i, err.Error(), "")
		}
		detail := fmt.Sprintf("response %s, Content-Type %q:\n%s", resp.Status, resp.Header.Get("Content-Type"), got)
		if why := checkResponse(r, resp, got); why != "" {
			return fail(i, why, detail)
		}
		if r.Location {
			loc, err := resp.Location()
			if err != nil {
				return fail(i, "no Location header: "+err.Error(), detail)
			}
			location = loc.String()
		}
	}
	out.Status = Pass
	return out
}

// checkResponse compares one response with the manifest's expectations.
func checkResponse(r HTTPRequest, resp *http.Response, body []byte) string {
	code := fmt.Sprint(resp.StatusCode)
	ok := len(r.Status) == 0
	for _, s := range r.Status {
		if s == code || (strings.HasSuffix(s, "xx") && s[0] == code[0]) {
			ok = true
		}
	}
	if !ok {
		return fmt.Sprintf("status %d, want %s", resp.StatusCode, strings.Join(r.Status, " or "))
	}
	ctype := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ctype)
	if r.ContentType != "" {
		want, _, _ := mime.ParseMediaType(r.ContentType)
		if mt != want {
			return fmt.Sprintf("Content-Type %q, want %q", ctype, r.ContentType)
		}
	}
	switch r.Format {
	case "boolean", "tabular":
		offers := results.SolutionFormats
		if r.Format == "boolean" {
			offers = results.BooleanFormats
		}
		f := results.ParseFormat(mt, offers)
		if f == results.FormatNone {
			return fmt.Sprintf("Content-Type %q is not a SPARQL results format", ctype)
		}
		res, err := results.Read(f, bytes.NewReader(body))
		if err != nil {
			return fmt.Sprintf("cannot read the %s results: %v", f, err)
		}
		if r.Format == "boolean" && !res.IsBoolean {
			return "the result is not a boolean"
		}
		if r.Format == "tabular" && res.IsBoolean {
			return "the result is a boolean, want solutions"
		}
		if r.Boolean != nil && res.Boolean != *r.Boolean {
			return fmt.Sprintf("ASK answered %v, want %v", res.Boolean, *r.Boolean)
		}
	case "RDF":
		if _, err := parseRDF(mt, string(body), ""); err != nil {
			return fmt.Sprintf("the body is not RDF (%q): %v", ctype, err)
		}
	case "":
	default:
		return fmt.Sprintf("unknown mf:expectedFormat %q", r.Format)
	}
	if r.HasRDFBody {
		wantMT, _, _ := mime.ParseMediaType(r.ContentType)
		if wantMT == "" {
			wantMT = "text/turtle"
		}
		want, err := parseRDF(wantMT, r.RDFBody, "")
		if err != nil {
			return fmt.Sprintf("the manifest's expected body does not parse: %v", err)
		}
		got, err := parseRDF(mt, string(body), "")
		if err != nil {
			return fmt.Sprintf("the body does not parse as %q: %v", ctype, err)
		}
		if _, diff := rdf.MatchBags(tripleTuples(dedupTriples(got)), tripleTuples(dedupTriples(want))); diff != "" {
			return "graph differs: " + diff
		}
	}
	return ""
}

// parseRDF parses an RDF document of media type mt with package loader.
func parseRDF(mt, text, base string) ([]rdf.Triple, error) {
	f, ok := loader.FormatForMediaType(mt)
	if !ok {
		return nil, fmt.Errorf("%q is not an RDF media type", mt)
	}
	var out []rdf.Triple
	err := loader.Parse(strings.NewReader(text), f, loader.Options{Name: "response", Base: base}, func(q rdf.Quad) error {
		out = append(out, q.Triple())
		return nil
	})
	return out, err
}
