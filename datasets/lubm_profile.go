package datasets

import "math/rand/v2"

// The LUBM profile: the value ranges of the UBA 1.7 generator (Guo, Pan,
// Heflin, "LUBM: A benchmark for OWL knowledge base systems", J. Web
// Semantics 3(2), 2005, and the documented parameters of UBA). Every range is
// inclusive and drawn uniformly.
const (
	deptMin, deptMax = 15, 25 // departments per university

	fullProfMin, fullProfMax   = 7, 10 // per department
	assocProfMin, assocProfMax = 10, 14
	asstProfMin, asstProfMax   = 8, 11
	lecturerMin, lecturerMax   = 5, 7

	underPerFacultyMin, underPerFacultyMax = 8, 14 // undergraduates per faculty member
	gradPerFacultyMin, gradPerFacultyMax   = 3, 4  // graduate students per faculty member
	gradPerTAMin, gradPerTAMax             = 4, 5  // graduate students per teaching assistant
	gradPerRAMin, gradPerRAMax             = 3, 4  // graduate students per research assistant
	underPerAdvised                        = 5     // one undergraduate in 5 has an advisor

	researchGroupMin, researchGroupMax = 10, 20 // per department

	facultyCourseMin, facultyCourseMax         = 1, 2 // undergraduate courses taught per faculty member
	facultyGradCourseMin, facultyGradCourseMax = 1, 2 // graduate courses taught per faculty member
	underTakesMin, underTakesMax               = 2, 4 // courses taken per undergraduate
	gradTakesMin, gradTakesMax                 = 1, 3 // graduate courses taken per graduate student

	fullProfPubMin, fullProfPubMax   = 15, 20 // publications per faculty member, by rank
	assocProfPubMin, assocProfPubMax = 10, 18
	asstProfPubMin, asstProfPubMax   = 5, 10
	lecturerPubMin, lecturerPubMax   = 0, 5
	gradPubMin, gradPubMax           = 0, 5 // faculty publications a graduate student co-authors

	researchTopics = 30 // research interests are "Research0" … "Research29"

	// DegreeUniversities is the number of universities that degrees are
	// drawn from: like UBA, every undergraduate, masters and doctoral degree
	// points to a university drawn uniformly from University0 …
	// University999, whatever the number of generated universities. So most
	// degree links of a small data set point to universities that are not
	// generated (they get only an rdf:type), and a larger data set has more
	// graduates whose degree is from their own university (Wukong's L1).
	DegreeUniversities = 1000
)

// rank is a faculty rank, in UBA's generation order.
type rank uint8

const (
	fullProfessor rank = iota
	associateProfessor
	assistantProfessor
	lecturer
	numRanks
)

var rankPubRange = [numRanks][2]int{
	{fullProfPubMin, fullProfPubMax},
	{assocProfPubMin, assocProfPubMax},
	{asstProfPubMin, asstProfPubMax},
	{lecturerPubMin, lecturerPubMax},
}

var rankClass = [numRanks]class{classFullProfessor, classAssociateProfessor, classAssistantProfessor, classLecturer}

// deptShape is the size of one department: everything the degree draws
// depend on, drawn from the university's shape stream before anything else,
// so that the owner pre-pass (see ownersOf) can recompute it cheaply.
type deptShape struct {
	faculty [numRanks]int
	under   int
	grad    int
	ta      int
	ra      int
	groups  int
	chair   int // index of the full professor who heads the department
}

func (d *deptShape) facultyTotal() int {
	return d.faculty[0] + d.faculty[1] + d.faculty[2] + d.faculty[3]
}

// Random streams of one university. Each is an independent PCG stream keyed
// by (seed, university, stream), so universities can be generated in any
// order and in parallel with identical output.
const (
	streamShape = iota
	streamDegree
	streamMain
	numStreams
)

func newStream(seed uint64, univ int, stream int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(univ)*numStreams+uint64(stream)))
}

// between returns a uniform integer in [lo, hi].
func between(r *rand.Rand, lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + r.IntN(hi-lo+1)
}

// universityShape draws the departments of university univ.
func universityShape(seed uint64, univ int) []deptShape {
	r := newStream(seed, univ, streamShape)
	depts := make([]deptShape, between(r, deptMin, deptMax))
	for i := range depts {
		d := &depts[i]
		d.faculty[fullProfessor] = between(r, fullProfMin, fullProfMax)
		d.faculty[associateProfessor] = between(r, assocProfMin, assocProfMax)
		d.faculty[assistantProfessor] = between(r, asstProfMin, asstProfMax)
		d.faculty[lecturer] = between(r, lecturerMin, lecturerMax)
		f := d.facultyTotal()
		d.under = between(r, underPerFacultyMin*f, underPerFacultyMax*f)
		d.grad = between(r, gradPerFacultyMin*f, gradPerFacultyMax*f)
		d.ta = between(r, d.grad/gradPerTAMax, d.grad/gradPerTAMin)
		d.ra = between(r, d.grad/gradPerRAMax, d.grad/gradPerRAMin)
		d.groups = between(r, researchGroupMin, researchGroupMax)
		d.chair = r.IntN(d.faculty[fullProfessor])
	}
	return depts
}

// degreePicks draws the degree universities of university univ, in the
// order the generator uses them: per department, three per faculty member
// (undergraduate, masters, doctoral, faculty in rank order) and then one per
// graduate student (undergraduate).
func degreePicks(seed uint64, univ int, shape []deptShape) []int32 {
	n := 0
	for i := range shape {
		n += 3*shape[i].facultyTotal() + shape[i].grad
	}
	r := newStream(seed, univ, streamDegree)
	picks := make([]int32, n)
	for i := range picks {
		picks[i] = int32(r.IntN(DegreeUniversities))
	}
	return picks
}

// ownersOf decides, for each university a degree can point to, which
// generated university writes its rdf:type triple, so that the output holds
// it exactly once even though universities are generated independently: a
// generated university types itself; any other one is typed by the first
// (lowest-numbered) generated university that refers to it, at its first
// reference. -1 means nobody refers to it. The pre-pass only draws shapes
// and degree picks, a small fraction of the work.
func ownersOf(seed uint64, universities int) []int32 {
	owner := make([]int32, DegreeUniversities)
	for i := range owner {
		owner[i] = -1
	}
	for u := 0; u < universities && u < DegreeUniversities; u++ {
		owner[u] = int32(u)
	}
	if universities >= DegreeUniversities {
		return owner
	}
	for u := 0; u < universities; u++ {
		for _, p := range degreePicks(seed, u, universityShape(seed, u)) {
			if owner[p] < 0 {
				owner[p] = int32(u)
			}
		}
	}
	return owner
}
