// Package datasets holds the LUBM data generator, the LUBM query sets, and
// the small data set that the embedded default serves.
//
// In: a scale (universities) and a seed. Out: N-Triples text
// (GenerateLUBM, optionally gzip), or rdf.Triples (GenerateLUBMTriples);
// and query texts (LUBMQueries, LUBMQuery).
//
// # The generator
//
// It is our own code, written from the published LUBM profile (Guo, Pan,
// Heflin 2005) and the documented behaviour of UBA 1.7, the original
// generator, checked against UBA's real output (lubm1/lubm10 in
// ../shared/datasets/lubm: every class and predicate count within 10%;
// `go test ./datasets -run TestLUBMMatchesReal -v` prints the counts).
// It uses UBA's value ranges (lubm_profile.go), its URI scheme
// (http://www.University0.edu, http://www.Department0.University0.edu,
// …/FullProfessor0, …/FullProfessor0/Publication0, …/Course0,
// …/GraduateCourse0, …/ResearchGroup0), the univ-bench ontology IRIs and
// its literal formats (names "FullProfessor0", emails
// "FullProfessor0@Department0.University0.edu", telephones "xxx-xxx-xxxx",
// research interests "Research12").
//
// Per department it writes, in UBA's order: the department; its full,
// associate and assistant professors and lecturers (courses taught, three
// degrees, research interest, the head of department); undergraduates
// (2–4 courses, one in five with an advisor); graduate students (1–3
// graduate courses, an undergraduate degree, an advisor, 0–5 co-authored
// publications); research groups; the publications with their authors; the
// courses and graduate courses; the teaching and research assistants. An
// advisor is a professor of a rank drawn uniformly, as in UBA. Degrees are
// drawn from University0 … University999 whatever the scale (as UBA does),
// so most point to universities that are not generated; those get just an
// rdf:type, written once.
//
// Unlike UBA the output has no owl:Ontology header and no repeated triples:
// every triple is written exactly once.
//
// Determinism and speed: each university draws from its own PCG streams keyed
// by (seed, university), so universities are generated in parallel and the
// output is byte-identical for a seed whatever the number of workers; a
// cheap sequential pre-pass decides which university writes the rdf:type of
// each referenced university. The text is built by appending into one
// buffer per university; with gzip each university is one gzip member,
// compressed in parallel. A different seed gives different data; the same
// seed with more universities gives the same first universities (except
// for where the type triples of referenced universities are written).
//
// # Queries
//
// The 14 standard LUBM queries and Wukong's 12 LUBM queries (L1–L7 are
// q1–q7), embedded from queries/ unchanged, with a name, a label and a
// one-line description each. Without RDFS/OWL reasoning only standard Q1,
// Q2, Q3 and Q14 and all of Wukong's queries except q3 have rows on UBA data
// (Q2 = L1 only from LUBM-10 on: none on UBA's LUBM-1, 28 on its LUBM-10;
// `go test ./datasets -run TestLUBMQueriesFindData -v` prints the row counts
// on LUBM-1, and `wukongd load --out l10 lubm10.nt.gz` then
// `wukongd query --data l10 --format tsv queries/wukong/q1.rq` the 28).
package datasets
