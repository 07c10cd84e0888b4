package service

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wukongd/wukongd/web"
)

func completions(t *testing.T, s *Service, req web.CompleteRequest) string {
	t.Helper()
	if req.Limit == 0 {
		req.Limit = 20
	}
	ans := completeWait(t, s, &req)
	var b []string
	for _, it := range ans.Items {
		x := strings.TrimPrefix(it.IRI, "http://example.org/")
		if it.Label != "" {
			x += fmt.Sprintf(" %q", it.Label)
		}
		if it.Count != 0 {
			x += fmt.Sprintf(" %d", it.Count)
		}
		b = append(b, x)
	}
	return strings.Join(b, ", ")
}

// completeWait asks s until its term index is built.
func completeWait(t testing.TB, s *Service, req *web.CompleteRequest) *web.CompleteAnswer {
	t.Helper()
	for {
		ans, err := s.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !ans.Indexing {
			return ans
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestComplete(t *testing.T) {
	s := openService(t, NewEmpty, Options{})
	ctx := context.Background()
	err := s.Update(ctx, &web.UpdateRequest{Update: `PREFIX ex: <http://example.org/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
INSERT DATA {
  ex:alice a ex:Person ; rdfs:label "Alice Liddell" ; ex:knows ex:bob, ex:acme .
  ex:bob a ex:Person, ex:Robot ; ex:knows ex:alice ; ex:worksFor ex:acme .
  ex:acme a ex:Company ; ex:founded 1999 .
}`})
	if err != nil {
		t.Fatal(err)
	}
	const rdfType = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
	const label = "http://www.w3.org/2000/01/rdf-schema#label"
	for _, tc := range []struct {
		name string
		req  web.CompleteRequest
		want string
	}{
		{"classes by instances", web.CompleteRequest{Kind: web.CompleteClass}, "Person 2, Company 1, Robot 1"},
		{"classes by local name", web.CompleteRequest{Kind: web.CompleteClass, Text: "ro"}, "Robot 1"},
		{"classes in a namespace", web.CompleteRequest{Kind: web.CompleteClass, Namespace: "http://example.org/", Text: "c"}, "Company 1"},
		{"predicates by triples", web.CompleteRequest{Kind: web.CompletePredicate, Text: "k"}, "knows 3"},
		{"predicates of a subject", web.CompleteRequest{Kind: web.CompletePredicate, Subject: "http://example.org/acme"}, rdfType + " 4, founded 1"},
		{"predicates of a class", web.CompleteRequest{Kind: web.CompletePredicate, Classes: []string{"http://example.org/Company"}}, "founded 1"},
		{"unknown subject", web.CompleteRequest{Kind: web.CompletePredicate, Subject: "http://example.org/nobody"}, ""},
		{"entities by local name", web.CompleteRequest{Kind: web.CompleteEntity, Text: "AL"}, `alice "Alice Liddell"`},
		{"entities by label", web.CompleteRequest{Kind: web.CompleteEntity, Text: "alice l"}, `alice "Alice Liddell"`},
		{"entities by IRI", web.CompleteRequest{Kind: web.CompleteEntity, Namespace: "http://example.org/", Text: "b"}, "bob"},
		{"entities limited", web.CompleteRequest{Kind: web.CompleteEntity, Namespace: "http://example.org/", Limit: 2}, "acme, alice \"Alice Liddell\""},
		{"label predicate", web.CompleteRequest{Kind: web.CompletePredicate, Text: "lab"}, label + " 1"},
	} {
		if got := completions(t, s, tc.req); got != tc.want {
			t.Errorf("%s: got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	// Terms written after the index was built are found (a new level).
	err = s.Update(ctx, &web.UpdateRequest{Update: `PREFIX ex: <http://example.org/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
INSERT DATA { ex:c42 a ex:Person ; rdfs:label "Caroline" . }`})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := completions(t, s, web.CompleteRequest{Kind: web.CompleteEntity, Text: "carol"}), `c42 "Caroline"`; got != want {
		t.Errorf("after a write: got %s, want %s", got, want)
	}
	if got, want := completions(t, s, web.CompleteRequest{Kind: web.CompleteClass, Text: "p"}), "Person 3"; got != want {
		t.Errorf("after a write: got %s, want %s", got, want)
	}
}
