package exec

import (
	"reflect"
	"testing"
	"time"

	"github.com/wukongd/wukongd/planner"
)

// A sub-query with pushed filters survives the wire, and every truncation
// of it is an error, not a panic.
func TestSubQueryCodec(t *testing.T) {
	q := &subQuery{fork: 7, deadline: time.Unix(0, 12345), analyze: true, start: 1, limit: 300,
		steps: []planner.Step{{Kind: planner.StepExpand, Pattern: 0, From: planner.Column(0), Pred: planner.Const(9),
			Dir: planner.Out, To: planner.Column(1), ToNew: true, Mode: planner.ModeForkJoin, Partitioned: -1, EstRows: 2.5}},
		table: &Table{Cols: [][]ID{{1, 2}, nil}, N: 2},
		filters: &wireFilters{after: []int{0, -1}, exprs: []string{`(?y > 3)`, `BOUND(?x)`},
			vars: []string{"x", "y"}, now: time.Unix(100, 5), base: "http://base/"},
		reduce: &reduceSpec{semiCol: -1, distinct: []int{1, 0}, clashes: [][2]int{{0, 1}}}}
	msg := encodeSubQuery(q)
	got, err := decodeSubQuery(msg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.filters, q.filters) || !reflect.DeepEqual(got.reduce, q.reduce) || got.start != 1 || got.limit != 300 || got.table.N != 2 || len(got.steps) != 1 {
		t.Errorf("decoded %+v, filters %+v", got, got.filters)
	}
	for n := 1; n < len(msg); n++ {
		if _, err := decodeSubQuery(msg[:n]); err == nil {
			t.Fatalf("a sub-query cut to %d of %d bytes decoded", n, len(msg))
		}
	}
	q.filters, q.reduce = nil, &reduceSpec{semiCol: 1}
	if got, err := decodeSubQuery(encodeSubQuery(q)); err != nil || got.filters != nil || !reflect.DeepEqual(got.reduce, q.reduce) {
		t.Errorf("no filters, a semi-join: %v, %+v %+v", err, got.filters, got.reduce)
	}
	q.reduce = nil
	if got, err := decodeSubQuery(encodeSubQuery(q)); err != nil || got.reduce != nil {
		t.Errorf("no reduce: %v, %+v", err, got.reduce)
	}
	// The child compiles what it got.
	e := newTestEngine(t, diffData(t, 100), 1)
	f, err := e.remoteFilters(&wireFilters{after: []int{0}, exprs: []string{`(?y > 3)`}, vars: []string{"x", "y"}, now: time.Unix(1, 0)})
	if err != nil || len(f.after[0]) != 1 {
		t.Fatalf("remote filters: %v, %+v", err, f)
	}
	if _, err := e.remoteFilters(&wireFilters{after: []int{0}, exprs: []string{`(?y >`}}); err == nil {
		t.Error("a filter that does not parse compiled")
	}
}
