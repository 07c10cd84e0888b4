package service

import (
	"cmp"
	"context"
	"slices"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/web"
)

// StoreInfo implements web.StoreInfoer: the figures `wukongd info`
// prints for a snapshot, of the served dataset (its default graph's
// statistics and sizes; the counts cover all graphs).
func (s *Service) StoreInfo(ctx context.Context, top int) (*web.StoreInfo, error) {
	g, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer g.release()
	ds := g.ds
	d, st := ds.Dict(), ds.Default()
	stats := st.Stats()
	z := st.Sizes()
	info := &web.StoreInfo{
		Triples:           ds.Triples(),
		InferredTriples:   ds.InferredTriples(),
		Reasoning:         ds.Reasoning(),
		Terms:             ds.Terms(),
		PredicatesClasses: uint64(d.NumPredicatesAndClasses()),
		Subjects:          stats.Subjects,
		Objects:           stats.Objects,
		Shards:            ds.NumShards(),
		ShardTriples:      append([]uint64{}, stats.ShardTriples...),
		Graphs:            ds.NumGraphs(),
		Version:           ds.Version(),
		Parts: []web.StorePart{
			{Name: "key/value buckets", Bytes: z.BucketBytes},
			{Name: "key/value values", Bytes: z.ValueBytes},
			{Name: "dictionary strings", Bytes: z.DictArena},
			{Name: "dictionary index", Bytes: z.DictOffsets + z.DictHash + z.DictOther},
			{Name: "write delta", Bytes: ds.DeltaBytes()},
		},
		Predicates: len(stats.Predicates),
		Classes:    len(stats.Classes),
	}
	name := func(id graphstore.ID) string {
		if t, ok := d.Term(id); ok {
			return t.Value
		}
		return ""
	}
	preds := slices.Clone(stats.Predicates)
	slices.SortStableFunc(preds, func(a, b graphstore.PredicateStats) int { return cmp.Compare(b.Triples, a.Triples) })
	for _, p := range preds[:min(top, len(preds))] {
		info.TopPredicates = append(info.TopPredicates, web.PredicateInfo{IRI: name(p.Pred), Triples: p.Triples, Subjects: p.Subjects, Objects: p.Objects})
	}
	classes := slices.Clone(stats.Classes)
	slices.SortStableFunc(classes, func(a, b graphstore.ClassStats) int { return cmp.Compare(b.Instances, a.Instances) })
	for _, c := range classes[:min(top, len(classes))] {
		info.TopClasses = append(info.TopClasses, web.ClassInfo{IRI: name(c.Class), Instances: c.Instances})
	}
	if info.TopPredicates == nil {
		info.TopPredicates = []web.PredicateInfo{}
	}
	if info.TopClasses == nil {
		info.TopClasses = []web.ClassInfo{}
	}
	return info, ctx.Err()
}
