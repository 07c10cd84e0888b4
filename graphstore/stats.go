package graphstore

import "sort"

// PredicateStats counts the triples of one predicate.
type PredicateStats struct {
	Pred     ID     `json:"pred"`
	Triples  uint64 `json:"triples"`
	Subjects uint64 `json:"subjects"` // distinct subjects
	Objects  uint64 `json:"objects"`  // distinct objects
}

// ClassStats counts the instances of one class.
type ClassStats struct {
	Class     ID     `json:"class"`
	Instances uint64 `json:"instances"`
}

// ClassPredicateStats is the fan-out of instances of Class along Pred in
// direction Dir: Vertices instances have at least one such edge, with Edges
// edges in total. Average fan-out per instance = Edges / instances of Class;
// per instance having the predicate = Edges / Vertices.
type ClassPredicateStats struct {
	Class    ID     `json:"class"`
	Pred     ID     `json:"pred"`
	Dir      Dir    `json:"dir"`
	Vertices uint64 `json:"vertices"`
	Edges    uint64 `json:"edges"`
}

// Stats are the planner's statistics, collected while building. Slices
// are sorted by their IDs; use the lookup methods.
type Stats struct {
	Triples uint64 `json:"triples"` // distinct triples
	Terms   uint64 `json:"terms"`
	// Subjects and Objects count distinct vertices with out-edges
	// (rdf:type included) and with in-edges (rdf:type excluded).
	Subjects uint64 `json:"subjects"`
	Objects  uint64 `json:"objects"`
	// OutPredicates and InPredicates sum, over vertices, the number of
	// distinct predicates of their out- and in-edges: divided by
	// Subjects/Objects they give the average predicates per vertex (the
	// fan-out of a variable-predicate step).
	OutPredicates uint64 `json:"out_predicates"`
	InPredicates  uint64 `json:"in_predicates"`
	// Untyped counts subjects without rdf:type.
	Untyped         uint64                `json:"untyped"`
	Predicates      []PredicateStats      `json:"predicates"`
	Classes         []ClassStats          `json:"classes"`
	ClassPredicates []ClassPredicateStats `json:"class_predicates"`
	// ShardTriples counts, per shard, the out-edges stored there (the
	// triples whose subject the shard owns).
	ShardTriples []uint64 `json:"shard_triples"`
}

// Predicate returns the statistics of p.
func (s *Stats) Predicate(p ID) (PredicateStats, bool) {
	i := sort.Search(len(s.Predicates), func(i int) bool { return s.Predicates[i].Pred >= p })
	if i < len(s.Predicates) && s.Predicates[i].Pred == p {
		return s.Predicates[i], true
	}
	return PredicateStats{}, false
}

// Class returns the statistics of class c.
func (s *Stats) Class(c ID) (ClassStats, bool) {
	i := sort.Search(len(s.Classes), func(i int) bool { return s.Classes[i].Class >= c })
	if i < len(s.Classes) && s.Classes[i].Class == c {
		return s.Classes[i], true
	}
	return ClassStats{}, false
}

// ClassPredicate returns the fan-out of instances of c along p in d.
func (s *Stats) ClassPredicate(c, p ID, d Dir) (ClassPredicateStats, bool) {
	less := func(a ClassPredicateStats) bool {
		if a.Class != c {
			return a.Class > c
		}
		if a.Pred != p {
			return a.Pred > p
		}
		return a.Dir >= d
	}
	i := sort.Search(len(s.ClassPredicates), func(i int) bool { return less(s.ClassPredicates[i]) })
	if i < len(s.ClassPredicates) {
		if x := s.ClassPredicates[i]; x.Class == c && x.Pred == p && x.Dir == d {
			return x, true
		}
	}
	return ClassPredicateStats{}, false
}

// shardStats is one shard's share, merged by mergeStats.
type shardStats struct {
	triples, subjects, objects, outPreds, inPreds, untyped uint64
	preds                                                  map[ID]*PredicateStats
	predDense                                              []*PredicateStats // cache of preds for small IDs
	classes                                                map[ID]uint64
	cp                                                     map[cpKey]*ClassPredicateStats
}

type cpKey struct {
	c, p ID
	d    Dir
}

func newShardStats() *shardStats {
	return &shardStats{preds: map[ID]*PredicateStats{}, predDense: make([]*PredicateStats, 4096), classes: map[ID]uint64{}, cp: map[cpKey]*ClassPredicateStats{}}
}

func (s *shardStats) pred(p ID) *PredicateStats {
	if p < ID(len(s.predDense)) {
		if ps := s.predDense[p]; ps != nil {
			return ps
		}
	}
	ps := s.preds[p]
	if ps == nil {
		ps = &PredicateStats{Pred: p}
		s.preds[p] = ps
	}
	if p < ID(len(s.predDense)) {
		s.predDense[p] = ps
	}
	return ps
}

func (s *shardStats) classPred(c, p ID, d Dir) *ClassPredicateStats {
	k := cpKey{c, p, d}
	x := s.cp[k]
	if x == nil {
		x = &ClassPredicateStats{Class: c, Pred: p, Dir: d}
		s.cp[k] = x
	}
	return x
}

func mergeStats(parts []*shardStats, terms uint64) *Stats {
	st := &Stats{Terms: terms}
	preds := map[ID]*PredicateStats{}
	classes := map[ID]uint64{}
	cp := map[cpKey]*ClassPredicateStats{}
	for _, p := range parts {
		st.Triples += p.triples
		st.ShardTriples = append(st.ShardTriples, p.triples)
		st.Subjects += p.subjects
		st.Objects += p.objects
		st.OutPredicates += p.outPreds
		st.InPredicates += p.inPreds
		st.Untyped += p.untyped
		for id, ps := range p.preds {
			m := preds[id]
			if m == nil {
				m = &PredicateStats{Pred: id}
				preds[id] = m
			}
			m.Triples += ps.Triples
			m.Subjects += ps.Subjects
			m.Objects += ps.Objects
		}
		for c, n := range p.classes {
			classes[c] += n
		}
		for k, x := range p.cp {
			m := cp[k]
			if m == nil {
				m = &ClassPredicateStats{Class: k.c, Pred: k.p, Dir: k.d}
				cp[k] = m
			}
			m.Vertices += x.Vertices
			m.Edges += x.Edges
		}
	}
	if ps := preds[TypeID]; ps != nil {
		// rdf:type objects are not stored as in-edges; its distinct
		// objects are the classes with instances.
		ps.Objects = uint64(len(classes))
	}
	for _, ps := range preds {
		st.Predicates = append(st.Predicates, *ps)
	}
	sort.Slice(st.Predicates, func(i, j int) bool { return st.Predicates[i].Pred < st.Predicates[j].Pred })
	for c, n := range classes {
		st.Classes = append(st.Classes, ClassStats{Class: c, Instances: n})
	}
	sort.Slice(st.Classes, func(i, j int) bool { return st.Classes[i].Class < st.Classes[j].Class })
	for _, x := range cp {
		st.ClassPredicates = append(st.ClassPredicates, *x)
	}
	sort.Slice(st.ClassPredicates, func(i, j int) bool {
		a, b := st.ClassPredicates[i], st.ClassPredicates[j]
		if a.Class != b.Class {
			return a.Class < b.Class
		}
		if a.Pred != b.Pred {
			return a.Pred < b.Pred
		}
		return a.Dir < b.Dir
	})
	return st
}
