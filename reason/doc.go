// Package reason materializes the RDFS and OWL 2 RL closure of a graph on
// IDs: forward chaining, semi-naive, in parallel.
//
// In: the explicit triples of a graph as ID triples (Triple), the
// ontology compiled from its TBox triples (Compile, with the vocabulary's
// IDs in a Vocab) and a Profile (RDFS or OWLRL). Out: the inferred
// triples, those the rules derive that are not explicit (Materialize), or
// for a change to a materialized graph, the inferred triples to add and to
// retract (Maintain, delete-and-rederive).
//
// # Rules
//
// Each rule is named after its entry in the OWL 2 RL/RDF rule tables
// (OWL 2 Profiles, §4.3). Profile RDFS runs the first group; OWLRL all:
//
//	RDFS    prp-dom (rdfs2), prp-rng (rdfs3), prp-spo1 (rdfs7), cax-sco (rdfs9)
//	OWLRL   prp-eqp1, prp-eqp2, prp-inv1, prp-inv2, prp-symp, prp-trp,
//	        prp-fp, prp-ifp, cax-eqc1, cax-eqc2, cls-int1, cls-int2,
//	        cls-uni, cls-svf1, cls-svf2, cls-avf, cls-hv1, cls-hv2,
//	        eq-sym, eq-trans, eq-rep-s, eq-rep-o
//
// The schema is compiled once (Compile): subClassOf and subPropertyOf are
// closed transitively (scm-sco, scm-spo), equivalentClass and
// equivalentProperty become subclass/subproperty both ways (scm-eqc1,
// scm-eqp1), intersections give their members as superclasses (cls-int2)
// and unions their union as superclass of each member (cls-uni). The
// instance rules then fire from precomputed tables: a new (s p o) emits
// at once (s q o) for every superproperty q of p, the domain classes of p
// and its superproperties and their superclasses for s, likewise the
// ranges for o, and the inverse and symmetric triples; a new (x type c)
// emits every superclass of c at once. The closure is the same as the
// rules applied one at a time (the differential test checks it against
// exec/refeval's naive fixpoint); the precomputation only saves rounds.
//
// owl:sameAs is materialized: eq-sym and eq-trans, and eq-rep-s / eq-rep-o
// copy every triple of a term to each term it is the same as. When the
// data uses owl:sameAs every triple is indexed by subject and object for
// eq-rep; without it no such index is built.
//
// Not covered: the schema rules' own conclusions are not materialized
// (no derived rdfs:subClassOf, rdfs:subPropertyOf, owl:equivalentClass
// triples; scm-dom1/2, scm-rng1/2, scm-svf1/2, scm-avf1/2, scm-hv,
// scm-int, scm-uni, scm-cls, scm-op, scm-dp); eq-ref (every term
// sameAs itself) and eq-rep-p; the inconsistency rules (eq-diff*,
// prp-irp, prp-asyp, prp-pdw, prp-adp, prp-npa*, cax-dw, cax-adc,
// cls-nothing2, cls-com, cls-maxc1, cls-maxqc1/2); cls-maxc2,
// cls-maxqc3/4, prp-key, prp-spo2 (property chains), cls-oo, dt-*;
// owl:Thing / owl:Nothing types of every individual. A triple whose
// subject would be a literal is not stored (RDF has none). The TBox is
// read from the explicit triples only: a derived triple that states
// schema (say through owl:sameAs on a class) does not change the rules.
//
// # Evaluation
//
// Facts live in a hash set of ID triples packed in 16 bytes (subject and
// predicate in one word, object in the other; predicates are < 2^23, as
// a dictionary gives them) split into 64 partitions. A round takes the
// previous round's new facts (the delta; at first every explicit
// triple, in the store's order) and fires the rules for each delta fact
// on the workers (each reads the set and the join indexes, which do not
// change during the phase). Conclusions are routed to their partitions
// in chained blocks (nothing is copied as they grow) and inserted there
// in parallel, filtered in place: what was not yet known is the next
// delta, handed on as those blocks. Joins (prp-trp, prp-fp, prp-ifp,
// cls-svf1, cls-avf, cls-int1, eq-rep-*) read an index of the edges of
// only the predicates some join rule needs, and the set itself for
// membership (x type c?). The closure is reached when a round finds
// nothing new. Three things keep duplicate conclusions down, the main
// cost (each is a probe of a big, cache-cold set): a conclusion emitted
// from a closed table with its superclasses (cax-sco) or as a
// superproperty with its domains, ranges and inverses carries a flag,
// and firing it again skips those tables (they would emit the same
// triples); on the first round of a materialization from scratch every
// fact is in the delta, so a join rule fires from one premise only; and
// each worker drops a conclusion equal to a recent one in a small
// direct-mapped filter (a subject's domain types repeat back to back).
//
// # Maintenance
//
// Maintain keeps a materialization right under a change of the explicit
// triples by delete-and-rederive (DRed): it overdeletes every inferred
// triple that has a derivation through a deleted triple, rederives those
// of them that still follow from what remains in one step, then runs the
// semi-naive rounds from the rederived and inserted triples. Its cost
// follows the change and what depends on it, not the graph.
package reason
