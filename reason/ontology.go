package reason

import (
	"fmt"
	"slices"

	"github.com/wukongd/wukongd/graphstore"
)

// ID is a term's ID (graphstore.ID).
type ID = graphstore.ID

// Triple is a triple of IDs.
type Triple struct{ S, P, O ID }

// Profile is the rule set to materialize.
type Profile uint8

const (
	// None materializes nothing.
	None Profile = iota
	// RDFS is subclass, subproperty, domain and range (prp-dom, prp-rng,
	// prp-spo1, cax-sco and the schema closure).
	RDFS
	// OWLRL is RDFS plus the OWL 2 RL rules of the package comment.
	OWLRL
)

// String returns the profile's name as the command line takes it.
func (p Profile) String() string {
	switch p {
	case RDFS:
		return "rdfs"
	case OWLRL:
		return "owl-rl"
	}
	return "none"
}

// ParseProfile parses "none", "rdfs" or "owl-rl".
func ParseProfile(s string) (Profile, error) {
	switch s {
	case "none", "":
		return None, nil
	case "rdfs":
		return RDFS, nil
	case "owl-rl", "owlrl", "owl2rl":
		return OWLRL, nil
	}
	return None, fmt.Errorf("unknown reasoning profile %q (want none, rdfs or owl-rl)", s)
}

// Vocabulary IRIs the rules read.
const (
	RDFSNS = "http://www.w3.org/2000/01/rdf-schema#"
	OWLNS  = "http://www.w3.org/2002/07/owl#"
	RDFNS  = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"

	SubClassOf    = RDFSNS + "subClassOf"
	SubPropertyOf = RDFSNS + "subPropertyOf"
	Domain        = RDFSNS + "domain"
	Range         = RDFSNS + "range"

	EquivalentClass           = OWLNS + "equivalentClass"
	EquivalentProperty        = OWLNS + "equivalentProperty"
	InverseOf                 = OWLNS + "inverseOf"
	TransitiveProperty        = OWLNS + "TransitiveProperty"
	SymmetricProperty         = OWLNS + "SymmetricProperty"
	FunctionalProperty        = OWLNS + "FunctionalProperty"
	InverseFunctionalProperty = OWLNS + "InverseFunctionalProperty"
	IntersectionOf            = OWLNS + "intersectionOf"
	UnionOf                   = OWLNS + "unionOf"
	OnProperty                = OWLNS + "onProperty"
	SomeValuesFrom            = OWLNS + "someValuesFrom"
	AllValuesFrom             = OWLNS + "allValuesFrom"
	HasValue                  = OWLNS + "hasValue"
	Thing                     = OWLNS + "Thing"
	SameAs                    = OWLNS + "sameAs"

	First = RDFNS + "first"
	Rest  = RDFNS + "rest"
	Nil   = RDFNS + "nil"
	Type  = RDFNS + "type"
)

// VocabIRIs lists every vocabulary IRI a Vocab holds, in field order.
var VocabIRIs = []string{Type, SubClassOf, SubPropertyOf, Domain, Range,
	EquivalentClass, EquivalentProperty, InverseOf, TransitiveProperty,
	SymmetricProperty, FunctionalProperty, InverseFunctionalProperty,
	IntersectionOf, UnionOf, OnProperty, SomeValuesFrom, AllValuesFrom,
	HasValue, Thing, SameAs, First, Rest, Nil}

// Vocab holds the IDs of the vocabulary in a dictionary (0: absent).
type Vocab struct {
	Type, SubClassOf, SubPropertyOf, Domain, Range,
	EquivalentClass, EquivalentProperty, InverseOf, TransitiveProperty,
	SymmetricProperty, FunctionalProperty, InverseFunctionalProperty,
	IntersectionOf, UnionOf, OnProperty, SomeValuesFrom, AllValuesFrom,
	HasValue, Thing, SameAs, First, Rest, Nil ID
}

// NewVocab looks the vocabulary up with lookup (an IRI's ID, false when
// the dictionary lacks it).
func NewVocab(lookup func(iri string) (ID, bool)) Vocab {
	var v Vocab
	ptrs := []*ID{&v.Type, &v.SubClassOf, &v.SubPropertyOf, &v.Domain, &v.Range,
		&v.EquivalentClass, &v.EquivalentProperty, &v.InverseOf, &v.TransitiveProperty,
		&v.SymmetricProperty, &v.FunctionalProperty, &v.InverseFunctionalProperty,
		&v.IntersectionOf, &v.UnionOf, &v.OnProperty, &v.SomeValuesFrom, &v.AllValuesFrom,
		&v.HasValue, &v.Thing, &v.SameAs, &v.First, &v.Rest, &v.Nil}
	for i, iri := range VocabIRIs {
		if id, ok := lookup(iri); ok {
			*ptrs[i] = id
		}
	}
	return v
}

// isSchema reports whether p is a schema predicate (a triple with it is
// TBox, read by Compile).
func (v *Vocab) isSchema(p ID) bool {
	if p == 0 {
		return false
	}
	switch p {
	case v.SubClassOf, v.SubPropertyOf, v.Domain, v.Range, v.EquivalentClass,
		v.EquivalentProperty, v.InverseOf, v.IntersectionOf, v.UnionOf, v.OnProperty,
		v.SomeValuesFrom, v.AllValuesFrom, v.HasValue, v.First, v.Rest:
		return true
	}
	return false
}

// IsTBox reports whether t is a triple Compile reads: a schema predicate,
// or an rdf:type of a property characteristic.
func (v *Vocab) IsTBox(t Triple) bool {
	if v.isSchema(t.P) {
		return true
	}
	if t.P == v.Type && t.O != 0 {
		switch t.O {
		case v.TransitiveProperty, v.SymmetricProperty, v.FunctionalProperty, v.InverseFunctionalProperty:
			return true
		}
	}
	return false
}

// restriction is a class defined by an owl:Restriction: r = svf/avf/hv(p, x).
type restriction struct {
	r, p, x ID // x: the filler class (svf, avf; 0 = owl:Thing for svf) or the value (hv)
}

// intersection is a class c = intersectionOf(members).
type intersection struct {
	c         ID
	members   []ID
	minMember ID // the smallest member (a first round fires cls-int1 from it)
}

// propRules are the precomputed consequences of a triple (s p o).
type propRules struct {
	supers []ID          // strict superproperties (prp-spo1, prp-eqp1/2, closed: scm-spo)
	dom    []ID          // classes of s: domains of p and its supers, and their superclasses (prp-dom, cax-sco)
	rng    []ID          // classes of o (prp-rng, cax-sco)
	inv    []ID          // (o q s) for q in inv (prp-inv1/2 of p and of its supers)
	sym    []ID          // (o q s) for q in sym (prp-symp of p and of its supers)
	trans  bool          // p is transitive (prp-trp)
	fp     bool          // prp-fp
	ifp    bool          // prp-ifp
	svf    []restriction // restrictions on p: cls-svf1/2
	avf    []restriction // cls-avf (x type r) ∧ (x p y) → (y type d)
	hv     []restriction // cls-hv2
}

// classRules are the precomputed consequences of a triple (x type c).
type classRules struct {
	supers []ID          // strict superclasses (cax-sco, cax-eqc1/2, cls-int2, cls-uni; closed: scm-sco)
	ints   []int         // intersections having c as a member (cls-int1)
	svfOf  []restriction // restrictions svf(p, c): (y p x) → (y type r) (cls-svf1)
	avf    []restriction // c = avf(p, d): (x p y) → (y type d) (cls-avf)
	hv     []restriction // c = hv(p, v): (x p v) (cls-hv1)
}

// Ontology is a compiled TBox: the rule tables of a profile.
type Ontology struct {
	profile Profile
	voc     Vocab
	props   map[ID]*propRules
	classes map[ID]*classRules
	ints    []intersection
	svfAny  map[ID]bool // properties with a svf(p, Thing) restriction
	// outIdx / inIdx: the predicates whose (p, s)→o / (p, o)→s lists a
	// join rule reads.
	outIdx, inIdx map[ID]bool
	sameAs        bool // the data uses owl:sameAs: index everything
	tbox          int

	// The same tables as slices by ID for the IDs below tabLimit (which
	// is every predicate and every class a dictionary has given its role):
	// firing looks them up for every fact.
	propTab       []*propRules
	classTab      []*classRules
	outTab, inTab []bool
	anyIdx        bool // some predicate is indexed
	// derTab / derMap: the predicates a conclusion can have (derives).
	derTab []bool
	derMap map[ID]bool
}

// derives reports whether some rule can conclude a triple with predicate
// p: rdf:type, a superproperty, inverse or symmetric property, a
// transitive property, cls-hv1's property; with owl:sameAs, every one.
func (o *Ontology) derives(p ID) bool {
	if o.sameAs || p == o.voc.Type {
		return true
	}
	if p < ID(len(o.derTab)) {
		return o.derTab[p]
	}
	return o.derMap[p]
}

// tabLimit bounds the slice tables (IDs past it use the maps).
const tabLimit = 1 << 20

func (o *Ontology) propOf(p ID) *propRules {
	if p < ID(len(o.propTab)) {
		return o.propTab[p]
	}
	return o.props[p]
}

func (o *Ontology) classOf(c ID) *classRules {
	if c < ID(len(o.classTab)) {
		return o.classTab[c]
	}
	return o.classes[c]
}

func (o *Ontology) outIndexed(p ID) bool {
	if p < ID(len(o.outTab)) {
		return o.outTab[p]
	}
	return o.outIdx[p]
}

func (o *Ontology) inIndexed(p ID) bool {
	if p < ID(len(o.inTab)) {
		return o.inTab[p]
	}
	return o.inIdx[p]
}

// fits reports an error unless every predicate the rules can derive is a
// predicate ID (below graphstore.FirstVertexID): the closure's sets pack
// predicates in 23 bits (a dictionary gives terms that role before
// materializing, MaterializeDataset).
func (o *Ontology) fits() error {
	for _, p := range o.Properties() {
		if p > graphstore.MaxPredicate {
			return fmt.Errorf("cannot materialize: the rules derive triples with predicate ID %d, not a predicate's", p)
		}
	}
	return nil
}

// tables builds the slice tables from the maps.
func (o *Ontology) tables() {
	o.propTab = slice(o.props)
	o.classTab = slice(o.classes)
	o.outTab = slice(o.outIdx)
	o.inTab = slice(o.inIdx)
	o.anyIdx = len(o.outIdx)+len(o.inIdx) > 0
	o.derMap = map[ID]bool{}
	for _, p := range o.Properties() {
		o.derMap[p] = true
	}
	for p, pr := range o.props {
		if pr.trans {
			o.derMap[p] = true
		}
	}
	o.derTab = slice(o.derMap)
}

// slice returns m's values for keys below tabLimit, by key.
func slice[V any](m map[ID]V) []V {
	n := ID(0)
	for k := range m {
		if k < tabLimit {
			n = max(n, k+1)
		}
	}
	r := make([]V, n)
	for k, v := range m {
		if k < n {
			r[k] = v
		}
	}
	return r
}

// Profile returns the ontology's profile.
func (o *Ontology) Profile() Profile { return o.profile }

// Vocab returns the vocabulary IDs the ontology was compiled with.
func (o *Ontology) Vocab() Vocab { return o.voc }

// TBoxTriples returns how many TBox triples were compiled.
func (o *Ontology) TBoxTriples() int { return o.tbox }

// Classes returns every ID the rules can derive as the object of an
// rdf:type triple (sorted): the terms a store must know as classes.
func (o *Ontology) Classes() []ID {
	seen := map[ID]bool{}
	for _, pr := range o.props {
		for _, c := range pr.dom {
			seen[c] = true
		}
		for _, c := range pr.rng {
			seen[c] = true
		}
		for _, r := range pr.svf {
			seen[r.r] = true
		}
		for _, r := range pr.hv {
			seen[r.r] = true
		}
		for _, r := range pr.avf {
			if r.x != 0 {
				seen[r.x] = true
			}
		}
	}
	for _, cr := range o.classes {
		for _, d := range cr.supers {
			seen[d] = true
		}
		for _, r := range cr.svfOf {
			seen[r.r] = true
		}
		for _, r := range cr.avf {
			seen[r.x] = true
		}
	}
	for _, in := range o.ints {
		seen[in.c] = true
	}
	delete(seen, 0)
	r := make([]ID, 0, len(seen))
	for c := range seen {
		r = append(r, c)
	}
	slices.Sort(r)
	return r
}

// Properties returns every ID the rules can derive as a predicate (sorted).
func (o *Ontology) Properties() []ID {
	seen := map[ID]bool{}
	for _, pr := range o.props { // a property itself only as explicit triples have it
		for _, q := range pr.supers {
			seen[q] = true
		}
		for _, q := range pr.inv {
			seen[q] = true
		}
		for _, q := range pr.sym {
			seen[q] = true
		}
	}
	for _, cr := range o.classes {
		for _, r := range cr.hv {
			seen[r.p] = true
		}
	}
	if o.sameAs && o.voc.SameAs != 0 {
		seen[o.voc.SameAs] = true
	}
	delete(seen, 0)
	r := make([]ID, 0, len(seen))
	for p := range seen {
		r = append(r, p)
	}
	slices.Sort(r)
	return r
}

// Compile compiles the TBox triples of a graph (those for which
// voc.IsTBox holds; others are ignored) into the rule tables of profile.
// usesSameAs says whether the data has owl:sameAs triples (eq-* rules
// then index every triple).
func Compile(profile Profile, voc Vocab, tbox []Triple, usesSameAs bool) *Ontology {
	o := &Ontology{profile: profile, voc: voc, props: map[ID]*propRules{}, classes: map[ID]*classRules{},
		svfAny: map[ID]bool{}, outIdx: map[ID]bool{}, inIdx: map[ID]bool{}}
	if profile == None {
		o.tables()
		return o
	}
	owl := profile == OWLRL
	o.sameAs = owl && usesSameAs && voc.SameAs != 0
	subC := map[ID][]ID{} // direct superclasses
	subP := map[ID][]ID{} // direct superproperties
	dom := map[ID][]ID{}
	rng := map[ID][]ID{}
	inv := map[ID][]ID{}
	trans, sym, fp, ifp := map[ID]bool{}, map[ID]bool{}, map[ID]bool{}, map[ID]bool{}
	first, rest := map[ID]ID{}, map[ID]ID{}
	onProp, svf, avf, hv := map[ID]ID{}, map[ID]ID{}, map[ID]ID{}, map[ID]ID{}
	hasHV := map[ID]bool{}
	var interOf, unionOf [][2]ID // (class, list head)
	addEdge := func(m map[ID][]ID, a, b ID) {
		if a != b && !slices.Contains(m[a], b) {
			m[a] = append(m[a], b)
		}
	}
	for _, t := range tbox {
		if !voc.IsTBox(t) {
			continue
		}
		o.tbox++
		switch {
		case t.P == voc.SubClassOf:
			addEdge(subC, t.S, t.O)
		case t.P == voc.SubPropertyOf:
			addEdge(subP, t.S, t.O)
		case t.P == voc.Domain:
			addEdge(dom, t.S, t.O)
		case t.P == voc.Range:
			addEdge(rng, t.S, t.O)
		case !owl:
		case t.P == voc.EquivalentClass:
			addEdge(subC, t.S, t.O)
			addEdge(subC, t.O, t.S)
		case t.P == voc.EquivalentProperty:
			addEdge(subP, t.S, t.O)
			addEdge(subP, t.O, t.S)
		case t.P == voc.InverseOf:
			inv[t.S] = append(inv[t.S], t.O) // p inverseOf p is symmetry
			inv[t.O] = append(inv[t.O], t.S)
		case t.P == voc.Type && t.O == voc.TransitiveProperty:
			trans[t.S] = true
		case t.P == voc.Type && t.O == voc.SymmetricProperty:
			sym[t.S] = true
		case t.P == voc.Type && t.O == voc.FunctionalProperty:
			fp[t.S] = true
		case t.P == voc.Type && t.O == voc.InverseFunctionalProperty:
			ifp[t.S] = true
		case t.P == voc.First:
			first[t.S] = t.O
		case t.P == voc.Rest:
			rest[t.S] = t.O
		case t.P == voc.OnProperty:
			onProp[t.S] = t.O
		case t.P == voc.SomeValuesFrom:
			svf[t.S] = t.O
		case t.P == voc.AllValuesFrom:
			avf[t.S] = t.O
		case t.P == voc.HasValue:
			hv[t.S] = t.O
			hasHV[t.S] = true
		case t.P == voc.IntersectionOf:
			interOf = append(interOf, [2]ID{t.S, t.O})
		case t.P == voc.UnionOf:
			unionOf = append(unionOf, [2]ID{t.S, t.O})
		}
	}
	list := func(head ID) []ID {
		var r []ID
		seen := map[ID]bool{}
		for x := head; x != 0 && x != voc.Nil && !seen[x]; x = rest[x] {
			seen[x] = true
			m, ok := first[x]
			if !ok {
				return nil // not a well-formed list
			}
			r = append(r, m)
		}
		return r
	}
	for _, ch := range interOf {
		c, ms := ch[0], list(ch[1])
		if len(ms) == 0 {
			continue
		}
		o.ints = append(o.ints, intersection{c: c, members: ms, minMember: slices.Min(ms)})
		for _, m := range ms {
			addEdge(subC, c, m) // cls-int2
		}
	}
	slices.SortFunc(o.ints, func(a, b intersection) int { return compareID(a.c, b.c) })
	for _, ch := range unionOf {
		for _, m := range list(ch[1]) {
			addEdge(subC, m, ch[0]) // cls-uni
		}
	}
	closure := func(m map[ID][]ID, x ID) []ID {
		var r []ID
		seen := map[ID]bool{x: true}
		stack := slices.Clone(m[x])
		for len(stack) > 0 {
			y := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[y] {
				continue
			}
			seen[y] = true
			r = append(r, y)
			stack = append(stack, m[y]...)
		}
		slices.Sort(r)
		return r
	}
	class := func(c ID) *classRules {
		cr := o.classes[c]
		if cr == nil {
			cr = &classRules{supers: closure(subC, c)}
			o.classes[c] = cr
		}
		return cr
	}
	withSupers := func(cs []ID) []ID {
		var r []ID
		for _, c := range cs {
			r = append(r, c)
			r = append(r, class(c).supers...)
		}
		slices.Sort(r)
		return slices.Compact(r)
	}
	for c := range subC {
		class(c)
	}
	// Every property the TBox names.
	propIDs := map[ID]bool{}
	for _, m := range []map[ID][]ID{subP, dom, rng, inv} {
		for p, qs := range m {
			propIDs[p] = true
			for _, q := range qs {
				propIDs[q] = true
			}
		}
	}
	for _, m := range []map[ID]bool{trans, sym, fp, ifp} {
		for p := range m {
			propIDs[p] = true
		}
	}
	for _, p := range onProp {
		propIDs[p] = true
	}
	for p := range propIDs {
		pr := &propRules{supers: closure(subP, p), trans: trans[p], fp: fp[p], ifp: ifp[p]}
		all := append([]ID{p}, pr.supers...)
		var ds, rs []ID
		for _, q := range all {
			ds = append(ds, dom[q]...)
			rs = append(rs, rng[q]...)
			pr.inv = append(pr.inv, inv[q]...)
			if sym[q] {
				pr.sym = append(pr.sym, q)
			}
		}
		pr.dom, pr.rng = withSupers(ds), withSupers(rs)
		slices.Sort(pr.inv)
		pr.inv = slices.Compact(pr.inv)
		if pr.trans {
			o.outIdx[p], o.inIdx[p] = true, true
		}
		if pr.fp {
			o.outIdx[p] = true
		}
		if pr.ifp {
			o.inIdx[p] = true
		}
		o.props[p] = pr
	}
	// Restrictions.
	for r, p := range onProp {
		pr := o.props[p]
		if x, ok := svf[r]; ok {
			if x == voc.Thing && x != 0 {
				x = 0
			}
			rs := restriction{r: r, p: p, x: x}
			pr.svf = append(pr.svf, rs)
			if x != 0 {
				cr := class(x)
				cr.svfOf = append(cr.svfOf, rs)
				o.inIdx[p] = true
			}
			class(r)
		}
		if x, ok := avf[r]; ok {
			rs := restriction{r: r, p: p, x: x}
			pr.avf = append(pr.avf, rs)
			cr := class(r)
			cr.avf = append(cr.avf, rs)
			class(x)
			o.outIdx[p] = true
		}
		if hasHV[r] {
			rs := restriction{r: r, p: p, x: hv[r]}
			pr.hv = append(pr.hv, rs)
			cr := class(r)
			cr.hv = append(cr.hv, rs)
		}
	}
	for i, in := range o.ints {
		for _, m := range in.members {
			cr := class(m)
			if !slices.Contains(cr.ints, i) {
				cr.ints = append(cr.ints, i)
			}
		}
	}
	if owl && voc.SameAs != 0 && (len(fp) > 0 || len(ifp) > 0) {
		o.sameAs = true // prp-fp / prp-ifp derive owl:sameAs
	}
	if o.sameAs {
		o.outIdx[voc.SameAs] = true
	}
	o.tables()
	return o
}

func compareID(a, b ID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
