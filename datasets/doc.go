// Package datasets holds the LUBM data generator, the LUBM query sets, and
// the small data set that the embedded default serves.
//
// In: a number of universities, a start index and a seed. Out: N-Triples
// text (GenerateLUBM, optionally gzip), rdf.Triples (GenerateLUBMTriples),
// or UBA's own RDF/XML files, one per department (WriteUBAFiles); and
// query texts (LUBMQueries, LUBMQuery).
//
// # The generator
//
// It writes exactly the data of UBA 1.7, the original LUBM generator
// (Lehigh University), for `-univ N -index I -seed S -onto
// http://swat.cse.lehigh.edu/onto/univ-bench.owl`, converted to N-Triples
// as ../shared/datasets/lubm/README.md describes: UBA's files
// (University<u>_<d>.owl, one per department) in order, each in document
// order; the owl:Ontology header of each file named
// file:///University<u>_<d>.owl; a triple that occurred before dropped
// (only the rdf:type of a university repeats: UBA writes it with every
// reference). It is our own code, written from UBA's published source: it
// reproduces UBA's random process step for step, with java.util.Random's
// 48-bit LCG (javarand.go) seeded per university with
// S*(-2^31) + u, and the same draws in the same order (uba.go): the
// department count; per department its shape (faculty by rank, students
// per faculty member, teaching and research assistants, research groups)
// and its chair; per faculty member the courses taught (a draw UBA makes
// and ignores included), three degrees from University0 … University999,
// a research interest, the number of publications; per undergraduate the
// courses and an advisor one time in five; per graduate student the
// courses, the undergraduate degree, the advisor and the co-authored
// publications; then the assistants.
//
// The checks: LUBM-1, LUBM-10 (in CI) and LUBM-40 (make test-lubm) are
// byte for byte the reference files made from UBA's output; nine other
// runs (other seeds, start indices, universities from 1000 on, the
// largest index and seed) match UBA's output as run by TestAgainstUBA
// (testdata/uba.tsv records the counts and SHA-256s, which CI checks).
//
// Speed: universities are independent (each reseeds the generator), so
// they are generated in parallel and written in order; the output is the
// same whatever the number of workers. Only the rdf:type triples of the
// degree universities depend on the universities before: a cheap
// sequential pre-pass generates, without output, the first universities
// until all 1,000 degree universities have been typed (two or three). The
// text is built by appending into one buffer per university; with gzip
// each university is one gzip member, compressed in parallel.
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
