package reason

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/wukongd/wukongd/graphstore"
	"github.com/wukongd/wukongd/rdf"
)

// RolesError says which terms a dataset's dictionary must know as
// classes or predicates before the inferred triples can be stored
// (graphstore.Dataset.WithRoles gives it them).
type RolesError struct {
	Classes, Predicates []rdf.Term
}

func (e *RolesError) Error() string {
	return fmt.Sprintf("the dictionary lacks %d classes and %d predicates the rules derive", len(e.Classes), len(e.Predicates))
}

// DatasetStats describe MaterializeDataset's work.
type DatasetStats struct {
	Stats
	TBox    int           // TBox triples compiled
	Reason  time.Duration // the materialization itself
	Store   time.Duration // building the stores of the closure and the layer
	Rebuilt bool          // the dictionary was rebuilt to give terms roles
}

// LoadOntology reads the default graph of ds: its triples as IDs and
// the ontology of profile compiled from its TBox triples.
func LoadOntology(ctx context.Context, ds *graphstore.Dataset, profile Profile) (*Ontology, []Triple, error) {
	dict := ds.Dict()
	voc := NewVocab(func(iri string) (ID, bool) { return dict.Lookup(rdf.NewIRI(iri)) })
	st := ds.Default()
	triples := make([]Triple, 0, st.Stats().Triples)
	sameAs := false
	var tbox []Triple
	err := st.EachTriple(ctx, func(s, p, o graphstore.ID) error {
		t := Triple{s, p, o}
		triples = append(triples, t)
		if voc.IsTBox(t) {
			tbox = append(tbox, t)
		}
		sameAs = sameAs || (p == voc.SameAs && p != 0)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if inf := ds.Inferred(); inf != nil { // the explicit triples only
		var layer []Triple
		if err := inf.EachTriple(ctx, func(s, p, o graphstore.ID) error {
			layer = append(layer, Triple{s, p, o})
			return nil
		}); err != nil {
			return nil, nil, err
		}
		triples = subtract(triples, layer)
		tbox = subtract(tbox, layer)
	}
	return Compile(profile, voc, tbox, sameAs), triples, nil
}

func cmpTriple(a, b Triple) int {
	if c := compareID(a.S, b.S); c != 0 {
		return c
	}
	if c := compareID(a.P, b.P); c != 0 {
		return c
	}
	return compareID(a.O, b.O)
}

// subtract returns a without the triples of b (a is reordered).
func subtract(a, b []Triple) []Triple {
	slices.SortFunc(a, cmpTriple)
	slices.SortFunc(b, cmpTriple)
	w, j := 0, 0
	for _, x := range a {
		for j < len(b) && cmpTriple(b[j], x) < 0 {
			j++
		}
		if j < len(b) && b[j] == x {
			continue
		}
		a[w] = x
		w++
	}
	return a[:w]
}

// MaterializeDataset materializes the default graph of ds under profile
// (its TBox is read from the graph's explicit triples) and returns a new
// dataset whose default graph holds the closure with the inferred triples
// as its inferred layer (graphstore.Dataset.WithInferred). If the
// dictionary lacks a class or predicate role the inferred triples need
// (a class of the ontology no explicit triple types, say), the dataset is
// first rebuilt with them (graphstore.Dataset.WithRoles): IDs change then.
// ds is not modified; close both.
func MaterializeDataset(ctx context.Context, ds *graphstore.Dataset, profile Profile, opts Options) (*graphstore.Dataset, DatasetStats, error) {
	if profile == None {
		return nil, DatasetStats{}, errors.New("cannot materialize: no reasoning profile")
	}
	nd, st, err := materializeDataset(ctx, ds, profile, opts)
	var re *RolesError
	if !errors.As(err, &re) {
		return nd, st, err
	}
	rebuilt, err := ds.WithRoles(ctx, re.Classes, re.Predicates)
	if err != nil {
		return nil, DatasetStats{}, fmt.Errorf("cannot materialize: %w", err)
	}
	defer rebuilt.Close()
	nd, st, err = materializeDataset(ctx, rebuilt, profile, opts)
	st.Rebuilt = true
	return nd, st, err
}

func materializeDataset(ctx context.Context, ds *graphstore.Dataset, profile Profile, opts Options) (*graphstore.Dataset, DatasetStats, error) {
	dict := ds.Dict()
	o, explicit, err := LoadOntology(ctx, ds, profile)
	if err != nil {
		return nil, DatasetStats{}, fmt.Errorf("cannot materialize: %w", err)
	}
	// The terms the rules can derive as predicates or classes must have
	// those roles (low IDs) before materializing: checked on the ontology
	// first, so that a dictionary without them is rebuilt before, not
	// after, the work.
	if err := missingRolesOf(dict, o); err != nil {
		return nil, DatasetStats{}, err
	}
	if opts.IsLiteral == nil {
		opts.IsLiteral = dict.IsLiteral
	}
	opts.Distinct = true // a store's triples, less the layer's
	start := time.Now()
	_, inferred, mst, err := Materialize(ctx, o, explicit, opts)
	if err != nil {
		return nil, DatasetStats{}, fmt.Errorf("cannot materialize: %w", err)
	}
	st := DatasetStats{Stats: mst, TBox: o.TBoxTriples(), Reason: time.Since(start)}
	explicit = nil
	if o.sameAs { // eq-rep-o can make any term a class
		if err := missingRoles(dict, inferred); err != nil {
			return nil, st, err
		}
	}
	start = time.Now()
	ids := make([]graphstore.IDTriple, len(inferred))
	for i, t := range inferred {
		ids[i] = graphstore.IDTriple{S: t.S, P: t.P, O: t.O}
	}
	inferred = nil
	nd, err := ds.WithInferred(ctx, profile.String(), ids)
	if err != nil {
		return nil, st, fmt.Errorf("cannot materialize: %w", err)
	}
	st.Store = time.Since(start)
	return nd, st, nil
}

// missingRolesOf returns a *RolesError naming the terms o's rules can
// derive as predicates or classes that dict does not know as such, or nil.
func missingRolesOf(dict *graphstore.Dict, o *Ontology) error {
	var classes, preds []ID
	for _, c := range o.Classes() {
		if !dict.IsClass(c) {
			classes = append(classes, c)
		}
	}
	for _, p := range o.Properties() {
		if !dict.IsPredicate(p) {
			preds = append(preds, p)
		}
	}
	if len(classes) == 0 && len(preds) == 0 {
		return nil
	}
	return rolesError(dict, classes, preds)
}

func rolesError(dict *graphstore.Dict, classes, preds []ID) error {
	re := &RolesError{}
	for _, m := range []struct {
		ids []ID
		dst *[]rdf.Term
	}{{classes, &re.Classes}, {preds, &re.Predicates}} {
		for _, id := range m.ids {
			t, ok := dict.Term(id)
			if !ok {
				return fmt.Errorf("BUG: ID %d is not in the dictionary", id)
			}
			*m.dst = append(*m.dst, t)
		}
	}
	return re
}

// missingRoles returns a *RolesError naming the terms inferred uses as
// predicates or classes that dict does not know as such, or nil.
func missingRoles(dict *graphstore.Dict, inferred []Triple) error {
	classes, preds := map[ID]bool{}, map[ID]bool{}
	for _, t := range inferred {
		if !preds[t.P] && !dict.IsPredicate(t.P) {
			preds[t.P] = true
		}
		if t.P == graphstore.TypeID && !classes[t.O] && !dict.IsClass(t.O) {
			classes[t.O] = true
		}
	}
	if len(classes) == 0 && len(preds) == 0 {
		return nil
	}
	return rolesError(dict, slices.Collect(maps.Keys(classes)), slices.Collect(maps.Keys(preds)))
}
