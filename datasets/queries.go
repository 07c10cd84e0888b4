package datasets

import (
	"embed"
	"fmt"
	"strings"
)

// The query texts are the public LUBM query sets, unchanged: the 14
// standard queries (Guo, Pan, Heflin 2005) and the LUBM set of Wukong
// (Shi et al., OSDI'16), whose L1–L7 are q1–q7.
//
//go:embed queries/std/*.rq queries/wukong/*.rq
var queryFiles embed.FS

// Query is one benchmark query.
type Query struct {
	// Name identifies the query: "wukong-q1" … "wukong-q12",
	// "lubm-std-q1" … "lubm-std-q14".
	Name string
	// Set is "wukong" or "lubm-std".
	Set string
	// Label is the short name the papers use: "L1" … "L7" for Wukong's
	// q1–q7, "Q1" … "Q14" for the standard queries, and "" for Wukong's
	// q8–q12, which the papers do not label.
	Label string
	// Description says in one line what the query asks and what makes it
	// interesting.
	Description string
	// Text is the SPARQL query.
	Text string
}

// Query sets.
const (
	SetWukong  = "wukong"
	SetLUBMStd = "lubm-std"
)

var wukongDescriptions = []string{
	"Graduate students whose undergraduate degree is from the university their department belongs to (triangle, no constant; empty on LUBM-1).",
	"Every course with its name (starts from the type index, large result).",
	"Undergraduates whose undergraduate degree is from the university of their department (triangle; always empty: UBA gives undergraduates no degree).",
	"Full professors of Department0 with name, email and telephone (constant start, small result).",
	"Research groups of Department0 (constant start, tiny result).",
	"Full professors working for a department of University0 (constant start, two hops).",
	"Undergraduates advised by a full professor who teaches a course they take (triangle, large input).",
	"Everything linked to a department of University0, and by which predicate (variable predicate).",
	"Everything linked to Department0, and by which predicate (variable predicate).",
	"Undergraduates linked to FullProfessor1 of Department3, and by which predicate (variable predicate).",
	"How UndergraduateStudent201 of Department7 is linked to its department (variable predicate, one row).",
	"Faculty of University0's departments, one row per student they advise (duplicate rows: bag semantics).",
}

var stdDescriptions = []string{
	"Graduate students taking GraduateCourse0 of Department0 (small input, high selectivity).",
	"Graduate students, their university and department, where the undergraduate degree is from that university (triangle).",
	"Publications of AssistantProfessor0 of Department0.",
	"Professors of Department0 with name, email and telephone (needs Professor subclass reasoning).",
	"Persons that are members of Department0 (needs subclass and subproperty reasoning).",
	"All students (needs Student subclass reasoning; large result).",
	"Students taking a course taught by AssociateProfessor0 of Department0 (needs reasoning).",
	"Students of University0's departments with their email (needs reasoning).",
	"Students, their faculty advisor, and a course the advisor teaches that the student takes (triangle; needs reasoning).",
	"Students taking GraduateCourse0 of Department0 (needs Student reasoning).",
	"Research groups that are sub-organizations of University0 (needs transitive subOrganizationOf).",
	"Chairs of University0's departments (needs Chair = headOf some Department).",
	"Alumni of University0 (needs hasAlumnus, the inverse of the degree properties).",
	"All undergraduate students (no join, large result).",
}

// StdAnswersLUBM1 are the row counts of the standard queries Q1–Q14 on
// LUBM(1, seed 0) with the univ-bench ontology materialized (wukongd
// load --reasoning owl-rl): the LUBM benchmark's reference answers. Raw
// data answers only Q1, Q2, Q3 and Q14 (the others need reasoning).
var StdAnswersLUBM1 = []int{4, 0, 6, 34, 719, 7790, 67, 7790, 208, 4, 224, 15, 1, 5916}

// StdAnswersLUBM10 and StdAnswersLUBM40 are our answers on the UBA
// reference LUBM-10 and LUBM-40 (../shared/datasets/lubm) with univ-bench
// under owl-rl. No published reference exists at these scales; how each
// is checked (raw reference counts, University0-local answers equal to
// LUBM-1's, rewritings over the explicit triples) is in reason's
// TestLUBMScaleStdQueries (make test-lubm-reasoning) and
// docs/PERFORMANCE.md.
var (
	StdAnswersLUBM10 = []int{4, 28, 6, 34, 719, 99566, 67, 7790, 2540, 4, 224, 15, 33, 75547}
	StdAnswersLUBM40 = []int{4, 106, 6, 34, 719, 414241, 67, 7790, 10846, 4, 224, 15, 186, 313671}
)

var lubmQueries = mustLoadQueries()

func mustLoadQueries() []Query {
	var qs []Query
	load := func(set, dir, prefix, label string, descs []string) {
		for i, d := range descs {
			n := i + 1
			text, err := queryFiles.ReadFile(fmt.Sprintf("queries/%s/q%d.rq", dir, n))
			if err != nil {
				panic("BUG: embedded LUBM query missing: " + err.Error())
			}
			if set == SetLUBMStd {
				d += fmt.Sprintf(" LUBM-1 answer with reasoning (load --reasoning owl-rl): %d rows.", StdAnswersLUBM1[i])
			}
			q := Query{Name: fmt.Sprintf("%s-q%d", prefix, n), Set: set, Description: d, Text: string(text)}
			if label != "" && (set != SetWukong || n <= 7) {
				q.Label = fmt.Sprintf("%s%d", label, n)
			}
			qs = append(qs, q)
		}
	}
	load(SetWukong, "wukong", "wukong", "L", wukongDescriptions)
	load(SetLUBMStd, "std", "lubm-std", "Q", stdDescriptions)
	return qs
}

// LUBMQueries returns the LUBM queries: Wukong's q1–q12, then the standard
// q1–q14. The slice is a copy.
func LUBMQueries() []Query {
	return append([]Query(nil), lubmQueries...)
}

// LUBMQuery returns the query with the given name ("wukong-q4",
// "lubm-std-q9"), or with the given Wukong label ("L1" … "L7"), compared
// without regard to case.
func LUBMQuery(name string) (Query, bool) {
	for _, q := range lubmQueries {
		if strings.EqualFold(q.Name, name) || (q.Set == SetWukong && q.Label != "" && strings.EqualFold(q.Label, name)) {
			return q, true
		}
	}
	return Query{}, false
}
