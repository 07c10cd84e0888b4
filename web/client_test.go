package web

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/wukongd/wukongd/client"
	"github.com/wukongd/wukongd/rdf"
)

// The Go client against this server.
func TestClientAgainstServer(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.UpdateToken = "tok" })
	c := client.New(f.ts.URL + "/sparql")
	ctx := context.Background()

	rows, err := c.Select(ctx, selectKnows)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]rdf.Term
	for rows.Next() {
		got = append(got, append([]rdf.Term(nil), rows.Row()...))
	}
	if err := rows.Err(); err != nil || !reflect.DeepEqual(got, knowsRows) || !reflect.DeepEqual(rows.Vars(), []string{"s", "o"}) {
		t.Errorf("select: %v %v", err, got)
	}
	rows.Close()

	if ok, err := c.Ask(ctx, "ASK { ?s <http://example.org/age> ?o }"); err != nil || !ok {
		t.Errorf("ask: %v %v", ok, err)
	}
	ts, err := c.Construct(ctx, "CONSTRUCT WHERE { ?s <http://example.org/name> ?o }")
	if err != nil {
		t.Fatal(err)
	}
	all, err := ts.All()
	if err != nil || !reflect.DeepEqual(all, baseTriples[1:2]) {
		t.Errorf("construct: %v %v", err, all)
	}

	_, err = c.Select(ctx, "SELECT * {\n SYNTAX_ERROR }")
	var se *client.SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || se.Col != 5 {
		t.Errorf("syntax: %v", err)
	}
	_, err = c.Select(ctx, "SELECT * { SLEEP }", client.WithTimeout(100*time.Millisecond))
	if !errors.Is(err, client.ErrTimeout) {
		t.Errorf("timeout: %v", err)
	}
	<-f.b.cancelled
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = c.Select(cctx, "SELECT * { SLEEP }")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("client deadline: %v", err)
	}
	<-f.b.cancelled

	// Updates and graph writes need the token.
	err = c.Update(ctx, "CLEAR ALL")
	var he *client.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 401 {
		t.Errorf("update without token: %v", err)
	}
	c.Token = "tok"
	if err = c.Update(ctx, "CLEAR ALL"); !errors.As(err, &he) || he.StatusCode != 501 {
		t.Errorf("update: %v", err)
	}
	g := "http://example.org/graph/1"
	data := []rdf.Triple{
		{S: ex("x"), P: ex("p"), O: rdf.NewLiteral("tab\there \"quoted\"", "")},
		{S: rdf.NewBlank("n"), P: ex("p"), O: rdf.NewLangLiteral("hé", "fr")},
	}
	if err := c.PutGraph(ctx, g, data); err != nil {
		t.Fatal(err)
	}
	if err := c.PostGraph(ctx, g, []rdf.Triple{{S: ex("y"), P: ex("p"), O: ex("z")}}); err != nil {
		t.Fatal(err)
	}
	ts, err = c.GetGraph(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	all, err = ts.All()
	if err != nil || len(all) != 3 || all[0] != data[0] || all[1].O != data[1].O || !all[1].S.IsBlank() {
		t.Errorf("graph: %v %v", err, all)
	}
	if err := c.DeleteGraph(ctx, g); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetGraph(ctx, g); !errors.As(err, &he) || he.StatusCode != 404 {
		t.Errorf("deleted graph: %v", err)
	}
}
