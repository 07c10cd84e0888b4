package service

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/exec"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
	"github.com/wukongd/wukongd/web"
)

// TestQueryShapes: light queries sent to the service with a new constant
// each go through their shape's template once it is learned (the second
// sighting), and answer the same as the engine running each text parsed on
// its own.
func TestQueryShapes(t *testing.T) {
	s := newService(t, lubm1Store(t, 4), Options{Shards: 4})
	texts := mixTexts(t, s, 120)
	g, err := s.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer g.release()
	templated := 0
	for _, text := range texts {
		if _, _, ok := s.shapes.Lookup(text, ""); ok {
			templated++
		}
		res, err := s.Query(context.Background(), &web.QueryRequest{Query: text})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for res.Rows.Next() {
			got = append(got, rowText(res.Rows.Row()))
		}
		res.Rows.Close()
		q, err := sparql.ParseQuery(text)
		if err != nil {
			t.Fatal(err)
		}
		want, err := g.eng.Run(context.Background(), q, exec.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var w []string
		for i := 0; i < want.Len(); i++ {
			w = append(w, rowText(want.Row(i, nil)))
		}
		slices.Sort(got)
		slices.Sort(w)
		if strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Fatalf("%s\nthrough the service: %d rows, on its own: %d rows", text, len(got), len(w))
		}
	}
	if templated < len(texts)/2 {
		t.Fatalf("only %d of %d queries had a template", templated, len(texts))
	}
}

func rowText(row []rdf.Term) string {
	f := make([]string, len(row))
	for i, x := range row {
		f[i] = x.String()
	}
	return strings.Join(f, "\t")
}
