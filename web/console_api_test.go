package web

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	f := newFixture(t, nil)
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for _, c := range []struct {
		body string
		want parseAnswer
	}{
		{url.Values{"query": {"SELECT * { ?s ?p ?o }"}}.Encode(), parseAnswer{OK: true, Form: "select"}},
		{url.Values{"query": {"ASK {}"}}.Encode(), parseAnswer{OK: true, Form: "ask"}},
		{url.Values{"query": {"SELECT * {\n  ?s ?p }"}}.Encode(), parseAnswer{Line: 2, Col: 9}},
		{url.Values{"query": {"SELECT * {\n  FILTER(\"é\" >) }"}}.Encode(), parseAnswer{Line: 2, Col: 15}},
		{url.Values{"update": {"INSERT DATA { <a:b> <a:c> <a:d> }"}}.Encode(), parseAnswer{OK: true, Form: "update"}},
		{url.Values{"update": {"INSERT DATA { ?x <a:c> <a:d> }"}}.Encode(), parseAnswer{Line: 1, Col: 15}},
		{"", parseAnswer{Line: 1, Col: 1}},
	} {
		r := f.do("POST", "/api/parse", form, c.body)
		var got parseAnswer
		if err := json.Unmarshal([]byte(r.body), &got); r.status != 200 || err != nil {
			t.Fatalf("%q: %d %s", c.body, r.status, r.body)
		}
		msg := got.Message
		got.Message = ""
		if got != c.want || (!got.OK && msg == "") {
			t.Errorf("%q: got %+v (%q), want %+v", c.body, got, msg, c.want)
		}
	}
	if r := f.do("POST", "/api/parse", map[string]string{"Content-Type": "text/plain"}, "x"); r.status != 200 {
		// A body that is not a form is an empty query: a syntax error.
		t.Errorf("non-form body: %d %s", r.status, r.body)
	}
}

func TestCompleteAndInfoNeedTheBackend(t *testing.T) {
	f := newFixture(t, nil)
	// The test backend completes nothing and describes nothing: 501.
	if r := f.get("/api/complete?kind=class&q=P", "application/json"); r.status != 501 {
		t.Errorf("complete: %d %s", r.status, r.body)
	}
	if r := f.get("/api/info", "application/json"); r.status != 501 {
		t.Errorf("info: %d %s", r.status, r.body)
	}
	r := f.get("/api/prefixes", "application/json")
	var p map[string]string
	if err := json.Unmarshal([]byte(r.body), &p); err != nil || r.status != 200 || p["ex"] != "http://example.org/" {
		t.Errorf("prefixes: %d %s", r.status, r.body)
	}
}

type completingBackend struct {
	*testBackend
	got *CompleteRequest
}

func (b *completingBackend) Complete(_ context.Context, req *CompleteRequest) (*CompleteAnswer, error) {
	b.got = req
	return &CompleteAnswer{Items: []Completion{{IRI: "http://example.org/Person", Count: 3}}}, nil
}

func TestCompleteRequest(t *testing.T) {
	b := &completingBackend{testBackend: newTestBackend(baseTriples)}
	f := newFixture(t, func(o *Options) { o.Backend = b })
	r := f.get("/api/complete?kind=predicate&ns=http://example.org/&q=kn&subject=http://example.org/alice&class=http://example.org/P&class=http://example.org/Q&limit=500", "")
	if r.status != 200 || r.body != `{"items":[{"iri":"http://example.org/Person","count":3}]}` {
		t.Fatalf("%d %s", r.status, r.body)
	}
	want := CompleteRequest{Kind: CompletePredicate, Namespace: "http://example.org/", Text: "kn", Subject: "http://example.org/alice",
		Classes: []string{"http://example.org/P", "http://example.org/Q"}, Limit: maxCompleteLimit}
	if g := *b.got; g.Kind != want.Kind || g.Namespace != want.Namespace || g.Text != want.Text || g.Subject != want.Subject ||
		len(g.Classes) != 2 || g.Classes[1] != want.Classes[1] || g.Limit != want.Limit {
		t.Errorf("the backend got %+v", g)
	}
	for _, bad := range []string{"kind=verb", "kind=class&limit=0", "kind=class&limit=x", "kind=class&q=" + strings.Repeat("x", 300)} {
		if r := f.get("/api/complete?"+bad, ""); r.status != 400 {
			t.Errorf("%s: %d", bad, r.status)
		}
	}
}
