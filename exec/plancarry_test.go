package exec

import (
	"context"
	"fmt"
	"testing"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/rdf"
	"github.com/wukongd/wukongd/sparql"
)

// TestInheritPlans: an engine over a later version of a dataset takes
// over the plans whose constants resolve as they did (the same plan), and
// plans again a query whose constant the dictionary learnt since (its
// plan was Empty) — that query then answers.
func TestInheritPlans(t *testing.T) {
	ctx := context.Background()
	ex := func(s string) rdf.Term { return rdf.NewIRI("http://carry.example/" + s) }
	typ := rdf.NewIRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
	b, err := graphstore.NewBuilder(4)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddTriples([]rdf.Triple{{S: ex("a"), P: typ, O: ex("C")}, {S: ex("a"), P: ex("p"), O: ex("b")}}); err != nil {
		t.Fatal(err)
	}
	st, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d1 := graphstore.NewDataset(st)
	defer d1.Close()
	e1, err := NewDatasetEngine(d1, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e1.Close()
	known, err := sparql.ParseQuery(`SELECT ?x WHERE { ?x a <http://carry.example/C> . ?x <http://carry.example/p> ?y }`)
	if err != nil {
		t.Fatal(err)
	}
	unknown, err := sparql.ParseQuery(`SELECT ?x WHERE { ?x a <http://carry.example/D> }`)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := e1.Plan(known, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pu, err := e1.Plan(unknown, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d2, err := d1.Apply(ctx, graphstore.GraphChange{Insert: []rdf.Triple{{S: ex("d"), P: typ, O: ex("D")}, {S: ex("e"), P: typ, O: ex("C")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	e2, err := NewDatasetEngine(d2, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	e2.InheritPlans(e1)
	if p, err := e2.Plan(known, Options{}); err != nil || p != pk {
		t.Fatalf("a plan whose constants are unchanged: %p (%v), want the inherited %p", p, err, pk)
	}
	if p, err := e2.Plan(unknown, Options{}); err != nil || p == pu {
		t.Fatalf("a plan made while D was unknown was inherited (%v)", err)
	}
	res, err := e2.Run(ctx, unknown, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Len() != 1 {
		t.Fatalf("%d rows of D's instances on the new version, want 1", res.Len())
	}
	// After the data grew past a quarter, the plan is made again with the
	// new statistics.
	var grow []rdf.Triple
	for i := 0; i < 200; i++ {
		grow = append(grow, rdf.Triple{S: ex(fmt.Sprintf("n%d", i)), P: typ, O: ex("C")})
	}
	d3, err := d2.Apply(ctx, graphstore.GraphChange{Insert: grow})
	if err != nil {
		t.Fatal(err)
	}
	defer d3.Close()
	e4, err := NewDatasetEngine(d3, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e4.Close()
	e4.InheritPlans(e2)
	if p, err := e4.Plan(known, Options{}); err != nil || p == pk {
		t.Fatalf("a plan made on 4 triples was kept at 204 (%v)", err)
	}
	// Another plan choice (another cost model) is not taken over.
	e3, err := NewDatasetEngine(d2, Config{Workers: 1, Cost: otherCost()})
	if err != nil {
		t.Fatal(err)
	}
	defer e3.Close()
	e3.InheritPlans(e1)
	if p, _ := e3.Plan(known, Options{}); p == pk {
		t.Fatal("a plan of another cost model was inherited")
	}
}

// otherCost is the default cost model with slower messages.
func otherCost() planner.Cost {
	c := planner.DefaultCost()
	c.MsgLatency *= 2
	return c
}
