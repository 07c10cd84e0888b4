package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/client"
	"github.com/wukongd/wukongd/web"
)

// loadSource is a local HTTP server of RDF documents for LOAD.
func loadSource(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	doc := func(path, ctype, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if ctype != "" {
				w.Header().Set("Content-Type", ctype)
			}
			fmt.Fprint(w, body)
		})
	}
	doc("/a.ttl", "text/turtle; charset=utf-8", "@prefix ex: <http://example.org/> . ex:a ex:p 1 , 2 . ex:b ex:p <rel> .")
	doc("/b", "application/n-triples", "<http://example.org/b> <http://example.org/q> \"b\" .\n")
	doc("/c.nt", "application/octet-stream", "<http://example.org/c> <http://example.org/q> \"c\" .\n")
	doc("/d.rdf", "", `<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/"><rdf:Description rdf:about="http://example.org/d"><ex:q>d</ex:q></rdf:Description></rdf:RDF>`)
	doc("/bad.ttl", "text/turtle", "@prefix ex: <http://example.org/> . ex:a ex:p .")
	doc("/quads", "application/n-quads", "<http://example.org/x> <http://example.org/q> \"x\" <http://example.org/g> .\n")
	doc("/html", "text/html", "<html></html>")
	doc("/empty.ttl", "text/turtle", "")
	doc("/big.nt", "application/n-triples", strings.Repeat("<http://example.org/big> <http://example.org/q> \"0123456789\" .\n", 1000))
	mux.HandleFunc("/to-a", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/a.ttl", http.StatusFound) })
	mux.HandleFunc("/to-elsewhere", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/private/a.ttl", http.StatusFound)
	})
	mux.HandleFunc("/private/a.ttl", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/turtle")
		fmt.Fprint(w, "<http://example.org/secret> <http://example.org/q> 1 .")
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/slow.ttl", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs
}

// TestLoad runs LOAD against a local server: formats by Content-Type and
// by extension, INTO GRAPH, relative IRIs against the document, the
// allow-list (also after redirects), the size cap, the timeout, failing
// sources, SILENT, and that a request with a failing LOAD changes nothing.
func TestLoad(t *testing.T) {
	src := loadSource(t)
	svc := openService(t, NewEmpty, Options{Shards: 2, LoadMaxBytes: 4096, LoadTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	allow := []string{src.URL + "/a.ttl", src.URL + "/b", src.URL + "/c.nt", src.URL + "/d.rdf", src.URL + "/bad.ttl",
		src.URL + "/quads", src.URL + "/html", src.URL + "/empty.ttl", src.URL + "/big.nt", src.URL + "/to-a",
		src.URL + "/to-elsewhere", src.URL + "/loop", src.URL + "/slow.ttl", src.URL + "/missing"}
	update := func(u string) error {
		return svc.Update(ctx, &web.UpdateRequest{Update: u, AllowedLoads: allow})
	}
	rel := "<" + src.URL + "/rel>"
	steps := []struct {
		update string
		want   string // the state after (unchanged on error)
		err    error
	}{
		{"LOAD <" + src.URL + "/a.ttl>", "DEFAULT\n" +
			`<http://example.org/a> <http://example.org/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .` + "\n" +
			`<http://example.org/a> <http://example.org/p> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .` + "\n" +
			`<http://example.org/b> <http://example.org/p> ` + rel + " .\n", nil},
		{"CLEAR DEFAULT ; LOAD <" + src.URL + "/b> INTO GRAPH <http://example.org/g1> ; LOAD <" + src.URL + "/c.nt> INTO GRAPH <http://example.org/g1> ; LOAD <" + src.URL + "/d.rdf>",
			"DEFAULT\n" + `<http://example.org/d> <http://example.org/q> "d" .` + "\nGRAPH <http://example.org/g1>\n" +
				`<http://example.org/b> <http://example.org/q> "b" .` + "\n" + `<http://example.org/c> <http://example.org/q> "c" .` + "\n", nil},
		// An empty document into a new graph creates the graph.
		{"LOAD <" + src.URL + "/empty.ttl> INTO GRAPH <http://example.org/g2>", "", nil},
		// Each failure fails the whole request: the CLEAR before it too.
		{"CLEAR ALL ; LOAD <" + src.URL + "/bad.ttl>", "", web.ErrUpstream},
		{"CLEAR ALL ; LOAD <" + src.URL + "/quads>", "", web.ErrUpstream},
		{"CLEAR ALL ; LOAD <" + src.URL + "/html>", "", web.ErrUpstream},
		{"CLEAR ALL ; LOAD <" + src.URL + "/big.nt>", "", web.ErrUpstream},
		{"CLEAR ALL ; LOAD <" + src.URL + "/missing>", "", web.ErrUpstream},
		{"CLEAR ALL ; LOAD <" + src.URL + "/slow.ttl>", "", web.ErrUpstream},
		{"CLEAR ALL ; LOAD <" + src.URL + "/loop>", "", web.ErrUpstream},
		{"CLEAR ALL ; LOAD <" + src.URL + "/to-elsewhere>", "", web.ErrForbidden},
		{"CLEAR ALL ; LOAD <" + src.URL + "/private/a.ttl>", "", web.ErrForbidden},
		{"CLEAR ALL ; LOAD <file:///etc/passwd>", "", web.ErrForbidden},
		// SILENT: every failure above is success without effect; the
		// rest of the request runs.
		{"LOAD SILENT <" + src.URL + "/bad.ttl> ; LOAD SILENT <" + src.URL + "/big.nt> INTO GRAPH <http://example.org/g3> ; LOAD SILENT <" + src.URL +
			"/missing> ; LOAD SILENT <" + src.URL + "/to-elsewhere> ; LOAD SILENT <" + src.URL + "/private/a.ttl> ; LOAD SILENT <http://not.allowed/x.ttl> ; DROP GRAPH <http://example.org/g2>",
			"DEFAULT\n" + `<http://example.org/d> <http://example.org/q> "d" .` + "\nGRAPH <http://example.org/g1>\n" +
				`<http://example.org/b> <http://example.org/q> "b" .` + "\n" + `<http://example.org/c> <http://example.org/q> "c" .` + "\n", nil},
		// A redirect to an allowed source is followed; the base is where
		// the document was found.
		{"CLEAR ALL ; LOAD <" + src.URL + "/to-a> INTO GRAPH <http://example.org/g1>", "DEFAULT\nGRAPH <http://example.org/g1>\n" +
			`<http://example.org/a> <http://example.org/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .` + "\n" +
			`<http://example.org/a> <http://example.org/p> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .` + "\n" +
			`<http://example.org/b> <http://example.org/p> ` + rel + " .\n", nil},
	}
	prev := state(t, svc)
	for i, s := range steps {
		err := update(s.update)
		if s.err != nil {
			if !errors.Is(err, s.err) {
				t.Fatalf("step %d %q: %v, want %v", i, s.update, err, s.err)
			}
			if got := state(t, svc); got != prev {
				t.Fatalf("step %d: a failed request changed the dataset:\n%s\nwas\n%s", i, got, prev)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d %q: %v", i, s.update, err)
		}
		want := s.want
		if want == "" {
			want = prev + "GRAPH <http://example.org/g2>\n"
		}
		if got := state(t, svc); got != want {
			t.Fatalf("step %d %q:\n%s\nwant\n%s", i, s.update, got, want)
		}
		prev = want
	}
}

// TestLoadOverHTTP checks the statuses of LOAD through the web layer: a
// source outside --allow-load is refused (403) unless SILENT, which
// succeeds (204) without effect; a failing source is 502.
func TestLoadOverHTTP(t *testing.T) {
	src := loadSource(t)
	svc := openService(t, NewEmpty, Options{})
	c, _ := serve(t, svc, func(o *web.Options) { o.AllowedLoads = []string{src.URL + "/*"} })
	ctx := context.Background()
	var he *client.HTTPError
	if err := c.Update(ctx, "LOAD <http://elsewhere.example/x.ttl>"); !errors.As(err, &he) || he.StatusCode != http.StatusForbidden {
		t.Fatalf("refused LOAD: %v, want 403", err)
	}
	if err := c.Update(ctx, "LOAD SILENT <http://elsewhere.example/x.ttl>"); err != nil {
		t.Fatalf("refused LOAD SILENT: %v, want success", err)
	}
	if err := c.Update(ctx, "LOAD <"+src.URL+"/missing>"); !errors.As(err, &he) || he.StatusCode != http.StatusBadGateway {
		t.Fatalf("failing LOAD: %v, want 502", err)
	}
	if err := c.Update(ctx, "LOAD <"+src.URL+"/b>"); err != nil {
		t.Fatal(err)
	}
	got, err := selectTSV(ctx, c, `SELECT ?o WHERE { <http://example.org/b> <http://example.org/q> ?o }`)
	if err != nil || got != "?o\n\"b\"\n" {
		t.Fatalf("after LOAD: %q, %v", got, err)
	}
}

// TestMultipartPost: a Graph Store POST of multipart/form-data merges
// every part into the graph in one change (blank nodes scoped per part);
// a part that does not parse changes nothing.
func TestMultipartPost(t *testing.T) {
	svc := openService(t, NewEmpty, Options{Shards: 2})
	_, hs := serve(t, svc, func(o *web.Options) { o.UpdateToken = "tok" })
	post := func(body string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/store?graph=http%3A%2F%2Fexample.org%2Fg", strings.NewReader(body))
		req.Header.Set("Content-Type", "multipart/form-data; boundary=XX")
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	part := func(name, ctype, doc string) string {
		h := "--XX\r\nContent-Disposition: form-data; name=\"" + name + "\"; filename=\"" + name + "\"\r\n"
		if ctype != "" {
			h += "Content-Type: " + ctype + "\r\n"
		}
		return h + "\r\n" + doc + "\r\n"
	}
	body := part("a.ttl", "text/turtle", "<http://example.org/s> <http://example.org/p> _:b . _:b <http://example.org/q> 1 .") +
		part("b.nt", "", "<http://example.org/s> <http://example.org/p> _:b .") + "--XX--\r\n"
	if code := post(body); code != http.StatusCreated {
		t.Fatalf("multipart POST: %d, want 201", code)
	}
	st := state(t, svc)
	if n := strings.Count(st, "<http://example.org/p> _:"); n != 2 || strings.Count(st, "\n") != 5 {
		t.Fatalf("after the multipart POST (two parts, blank nodes of their own):\n%s", st)
	}
	bad := part("c.ttl", "text/turtle", "<http://example.org/x> <http://example.org/p> 2 .") + part("d.ttl", "text/turtle", "<http://example.org/x> <http://example.org/p> .") + "--XX--\r\n"
	if code := post(bad); code != http.StatusBadRequest {
		t.Fatalf("multipart POST with a bad part: %d, want 400", code)
	}
	if got := state(t, svc); got != st {
		t.Fatalf("a failed multipart POST changed the graph:\n%s", got)
	}
}
