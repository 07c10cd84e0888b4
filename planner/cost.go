package planner

import (
	"math"
	"time"
)

// PredStats are the load statistics of one predicate.
type PredStats struct {
	Triples  uint64 // triples with the predicate
	Subjects uint64 // distinct subjects
	Objects  uint64 // distinct objects
}

// Stats are the statistics the cost model reads, filled from the store's
// load-time statistics.
type Stats struct {
	Shards   int
	TypeID   ID // the ID of rdf:type (0: no rdf:type in the data)
	Triples  uint64
	Vertices uint64 // distinct subjects and objects that are not classes
	Preds    map[ID]PredStats
	Classes  map[ID]uint64 // instances per class
	// ClassPreds is the fan-out of a class's instances along a predicate
	// in a direction (optional: without it the estimates assume
	// independence of type and predicate).
	ClassPreds map[ClassPred]ClassPredStats
}

// ClassPred names the edges of a class's instances along a predicate in a
// direction.
type ClassPred struct {
	Class, Pred ID
	Dir         Dir
}

// ClassPredStats counts them: Vertices instances have at least one such
// edge, with Edges edges in all.
type ClassPredStats struct {
	Vertices, Edges uint64
}

// classPred returns the statistics of (c, p, d), if collected.
func (s *Stats) classPred(c, p ID, d Dir) (ClassPredStats, bool) {
	if s.ClassPreds == nil {
		return ClassPredStats{}, false
	}
	x, ok := s.ClassPreds[ClassPred{c, p, d}]
	return x, ok
}

func (s *Stats) pred(p ID) PredStats {
	if ps, ok := s.Preds[p]; ok {
		return ps
	}
	return PredStats{}
}

// vertices returns the number of vertices, at least 1.
func (s *Stats) vertices() float64 { return math.Max(1, float64(s.Vertices)) }

// avgDegree is the fan-out of (vertex, p, dir) for a vertex having p in
// that direction; p == 0 means any predicate (variable predicate).
func (s *Stats) avgDegree(p ID, d Dir) float64 {
	if p == 0 {
		return math.Max(1, float64(s.Triples)/s.vertices())
	}
	if p == s.TypeID && d == In {
		// A class's instances: average over classes.
		var n, c float64
		for _, k := range s.Classes {
			n += float64(k)
			c++
		}
		if c == 0 {
			return 0
		}
		return n / c
	}
	ps := s.pred(p)
	if ps.Triples == 0 {
		return 0
	}
	div := ps.Subjects
	if d == In {
		div = ps.Objects
	}
	return float64(ps.Triples) / math.Max(1, float64(div))
}

// ends returns the number of distinct vertices at the far end of p in
// direction d (the objects for Out).
func (s *Stats) ends(p ID, d Dir) float64 {
	if p == 0 {
		return s.vertices()
	}
	if p == s.TypeID {
		if d == Out {
			return math.Max(1, float64(len(s.Classes)))
		}
		return s.vertices()
	}
	ps := s.pred(p)
	if d == Out {
		return math.Max(1, float64(ps.Objects))
	}
	return math.Max(1, float64(ps.Subjects))
}

// starts returns the number of distinct vertices having p in direction d.
func (s *Stats) starts(p ID, d Dir) float64 {
	return s.ends(p, 1-d)
}

// Cost is the fabric cost model the mode choice uses. Costs are in
// nanoseconds of the node running the step.
type Cost struct {
	// ReadRoundTrip is the latency of one batched READ round trip; ReadPerKey
	// the CPU+wire cost per remote key looked up (two READs: a bucket and a
	// value), ReadPerByte per byte of adjacency read.
	ReadRoundTrip, ReadPerKey, ReadPerByte float64
	// MsgLatency is the latency of one message; MsgPerByte per byte shipped;
	// ForkFixed the fixed cost of a sub-query (encode, queue, decode, reply).
	MsgLatency, MsgPerByte, ForkFixed float64
}

// DefaultCost models the in-process loopback fabric, calibrated on the
// dev machine with the LUBM-40 benchmark (docs/PERFORMANCE.md, Engine):
// an in-place step costs about 150 ns per remote key after deduplication
// and batching, while a fork costs about 120 µs (encoding, two messages,
// a goroutine hand-off on a busy 2-core machine, decoding) plus about 6 ns
// per byte each way. With these numbers forking a step whose rows go out
// and come back never pays in one process, which is what the benchmark
// measures; forking an index step (only rows come back, and the next steps
// run on the rows' owners) pays from about 9,500 rows of 2 columns on 4
// shards (LUBM-40 L2, 43,291 Course rows: forked 15.9 ms CPU, in place
// 24.3 ms) and from about 85,000 rows of 3 columns (L7's 6,789
// FullProfessor rows stay in place: forcing every step to fork costs 38.7
// ms against 24.9). NetworkCost adds a real network's latencies, under
// which large fan-outs fork.
func DefaultCost() Cost {
	return Cost{
		ReadRoundTrip: 2000, ReadPerKey: 150, ReadPerByte: 0.1,
		MsgLatency: 5000, MsgPerByte: 6, ForkFixed: 120000,
	}
}

// NetworkCost returns the model for a network with the given READ and
// message latency and bandwidth (bytes per second; 0 = unlimited) on top of
// the in-process costs.
func NetworkCost(readLatency, msgLatency time.Duration, bytesPerSecond float64) Cost {
	c := DefaultCost()
	c.ReadRoundTrip += float64(readLatency.Nanoseconds())
	c.ReadPerKey += float64(readLatency.Nanoseconds()) / 16 // READs of a batch overlap
	c.MsgLatency += float64(msgLatency.Nanoseconds())
	if bytesPerSecond > 0 {
		c.ReadPerByte += 1e9 / bytesPerSecond
		c.MsgPerByte += 1e9 / bytesPerSecond
	}
	return c
}

// Threshold returns the number of rows at which shipping rows to the owners
// (fork-join) becomes cheaper than reading their adjacency remotely, for a
// cluster of shards nodes, rows of cols columns and an average fan-out
// deg: the rows r where
//
//	inplace(r) = (shards-1)·ReadRoundTrip + r·f·(ReadPerKey + 8·deg·ReadPerByte)
//	fork(r)    = (shards-1)·(2·MsgLatency + ForkFixed) + r·f·8·cols·MsgPerByte·2
//
// with f = (shards-1)/shards the remote fraction. Fork-join also runs the
// children in parallel; the model credits that by dividing the in-place
// per-row cost's remote part over the nodes only when it is cheaper.
func (c Cost) Threshold(shards, cols int, deg float64) float64 {
	if shards <= 1 {
		return math.Inf(1)
	}
	n := float64(shards - 1)
	f := n / float64(shards)
	perInPlace := f * (c.ReadPerKey + 8*deg*c.ReadPerByte)
	perFork := f * 8 * float64(cols) * c.MsgPerByte * 2
	fixed := n*(2*c.MsgLatency+c.ForkFixed) - n*c.ReadRoundTrip
	if perInPlace <= perFork {
		return math.Inf(1)
	}
	t := fixed / (perInPlace - perFork)
	if t < 1 {
		t = 1
	}
	return t
}

// IndexThreshold returns the rows an index step must make for forking it
// to pay: forked, every node scans its own part of the index (the one
// seed row goes out, only rows come back), and the next steps start on
// the rows' owners; in place, the next step reads the adjacency of the
// remote fraction of the rows:
//
//	inplace(r) = r·f·ReadPerKey
//	fork(r)    = (shards-1)·(2·MsgLatency + ForkFixed - ReadRoundTrip) + r·f·8·cols·MsgPerByte
func (c Cost) IndexThreshold(shards, cols int) float64 {
	if shards <= 1 {
		return math.Inf(1)
	}
	n := float64(shards - 1)
	f := n / float64(shards)
	perInPlace := f * c.ReadPerKey
	perFork := f * 8 * float64(cols) * c.MsgPerByte
	if perInPlace <= perFork {
		return math.Inf(1)
	}
	return math.Max(1, n*(2*c.MsgLatency+c.ForkFixed-c.ReadRoundTrip)/(perInPlace-perFork))
}
