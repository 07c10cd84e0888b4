package bench

import "testing"

func TestMergeRounds(t *testing.T) {
	r1 := &LatencyRun{Path: PathHTTP, OtherCores: 1, Queries: []*QueryResult{
		{Name: "L4", Rows: 10, Samples: []float64{1, 2, 3}},
		{Name: "L5", Rows: 3, Samples: []float64{5}},
	}}
	r2 := &LatencyRun{Path: PathHTTP, OtherCores: -1, Queries: []*QueryResult{
		{Name: "L4", Rows: 10, Samples: []float64{4, 5}},
		{Name: "L5", Rows: 4, Samples: []float64{6}},
	}}
	m := MergeRounds([]*LatencyRun{r1, r2})
	if m.OtherCores != 1 || len(m.Queries) != 2 {
		t.Fatalf("merged %+v", m)
	}
	l4 := m.Query("L4")
	if len(l4.Samples) != 5 || l4.Summary.N != 5 || l4.Summary.Median != 3 || l4.Error != "" {
		t.Fatalf("L4 %+v", l4)
	}
	if m.Query("L5").Error == "" {
		t.Fatal("rounds with different row counts merged without an error")
	}
	if MergeRounds(nil) != nil {
		t.Fatal("no rounds, a run")
	}
}

func TestMedianPoints(t *testing.T) {
	pts := []ThroughputPoint{
		{Clients: 1, QPS: 100, ServerCPU: 30, Round: 1},
		{Clients: 4, QPS: 400, ServerCPU: 20, Round: 1},
		{Clients: 1, QPS: 300, ServerCPU: 10, Round: 2},
		{Clients: 4, QPS: 200, Round: 2},
		{Clients: 1, QPS: 200, ServerCPU: 20, Round: 3},
	}
	m := MedianPoints(pts)
	if len(m) != 2 || m[0].Clients != 1 || m[1].Clients != 4 {
		t.Fatalf("points %+v", m)
	}
	if m[0].QPS != 200 || m[0].ServerCPU != 20 || m[0].Round != 0 {
		t.Fatalf("1 client: %+v", m[0])
	}
	// Two rounds: the lower median; a round without CPU is left out of its median.
	if m[1].QPS != 200 || m[1].ServerCPU != 20 {
		t.Fatalf("4 clients: %+v", m[1])
	}
}
