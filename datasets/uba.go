package datasets

import (
	"slices"
	"strconv"
)

// UBA 1.7's profile: the ranges it draws the sizes from (inclusive).
const (
	deptMin, deptMax               = 15, 25
	fullProfMin, fullProfMax       = 7, 10
	assoProfMin, assoProfMax       = 10, 14
	asstProfMin, asstProfMax       = 8, 11
	lecturerMin, lecturerMax       = 5, 7
	underPerFacMin, underPerFacMax = 8, 14 // undergraduates per faculty member
	gradPerFacMin, gradPerFacMax   = 3, 4  // graduate students per faculty member
	gradPerTAMin, gradPerTAMax     = 4, 5  // graduate students per teaching assistant
	gradPerRAMin, gradPerRAMax     = 3, 4  // graduate students per research assistant
	groupMin, groupMax             = 10, 20
	facCourseMin, facCourseMax     = 1, 2 // courses (and graduate courses) a faculty member teaches
	underTakeMin, underTakeMax     = 2, 4 // courses an undergraduate takes
	gradTakeMin, gradTakeMax       = 1, 3 // graduate courses a graduate student takes
	gradPubMin, gradPubMax         = 0, 5 // publications a graduate student co-authors

	// coursePool is the size of each department's pools of courses and of
	// graduate courses. UBA draws a position in the remaining pool for
	// every course it assigns, then takes the first one anyway (its
	// comment: kept for identical random numbers), so courses are numbered
	// in the order they are assigned.
	coursePool = 100
	// DegreeUniversities is the pool that degrees are drawn from:
	// University0 … University999, whatever the scale or the start index.
	DegreeUniversities = 1000
	researchAreas      = 30 // research interests Research0 … Research29
	underAdvisorOdds   = 5  // one undergraduate in 5 has an advisor
)

// pubRange is the number of publications a faculty member of each class
// writes.
var pubRange = [numClasses][2]int{
	classFullProfessor:      {15, 20},
	classAssociateProfessor: {10, 18},
	classAssistantProfessor: {5, 10},
	classLecturer:           {0, 5},
}

// univSet is a set of the degree universities (index < DegreeUniversities).
type univSet [(DegreeUniversities + 63) / 64]uint64

func (s *univSet) has(u int) bool { return s[u/64]&(1<<(u%64)) != 0 }
func (s *univSet) add(u int)      { s[u/64] |= 1 << (u % 64) }

func (s *univSet) full() bool {
	for u := range DegreeUniversities {
		if !s.has(u) {
			return false
		}
	}
	return true
}

// ubaSeed is the seed UBA gives java.util.Random for university u:
// baseSeed * (Integer.MAX_VALUE + 1) + u, where the int sum wraps to
// Integer.MIN_VALUE before the long product.
func ubaSeed(seed int64, u int) int64 { return seed*-(1<<31) + int64(u) }

// pubInfo is publication idx of a faculty member, with the graduate
// students who co-author it, in the order they were drawn.
type pubInfo struct {
	class  class
	author int32
	idx    int32
	grads  []int32
}

// univGen generates one university at a time into a sink, reproducing
// UBA's Generator step for step: the same draws from java.util.Random in
// the same order, and the triples in the order that UBA's RDF/XML files
// give them (file by file, section by section). A univGen is used by one
// goroutine; its buffers are reused from one university to the next.
type univGen struct {
	seed int64
	sink sink
	r    javaRandom

	univ    int
	univIRI []byte // http://www.University<u>.edu
	dept    []byte // http://www.Department<d>.University<u>.edu
	subj    []byte // scratch: the current subject
	obj     []byte // scratch: an object IRI
	val     []byte // scratch: a literal value

	// typed holds the degree universities whose rdf:type has been written
	// (by this university or, as given to generate, by the ones before);
	// ownTyped says the same of this university when it is not one of them.
	typed    univSet
	ownTyped bool

	// The current department.
	count        [numClasses]int // instances of each class
	underCourses int             // courses assigned so far (Course0 … )
	gradCourses  int             // graduate courses assigned so far
	pubs         []pubInfo
	list         []int32 // scratch: a random list
	list2        []int32 // scratch: a second random list
	removed      []int32 // scratch of randomList
}

func newUnivGen(seed int64, s sink) *univGen { return &univGen{seed: seed, sink: s} }

func appendUnivIRI(dst []byte, u int) []byte {
	dst = append(dst, "http://www.University"...)
	dst = strconv.AppendInt(dst, int64(u), 10)
	return append(dst, ".edu"...)
}

// member appends the IRI of instance idx of class c in the current
// department: http://www.Department0.University0.edu/FullProfessor3.
func (g *univGen) member(dst []byte, c class, idx int) []byte {
	dst = append(dst, g.dept...)
	dst = append(dst, '/')
	return localName(dst, c, idx)
}

// localName appends "FullProfessor3": the name of instance idx of class c.
func localName(dst []byte, c class, idx int) []byte {
	dst = append(dst, className[c]...)
	return strconv.AppendInt(dst, int64(idx), 10)
}

var telephone = []byte("xxx-xxx-xxxx")

// section starts the section of an instance: <subj> rdf:type c and, for
// most classes, <subj> ub:name "c<idx>".
func (g *univGen) section(c class, idx int, named bool) {
	g.sink.typ(g.subj, c, false)
	if named {
		g.val = localName(g.val[:0], c, idx)
		g.sink.lit(g.subj, predName, g.val)
	}
}

// contact writes a person's email address
// (FullProfessor3@Department0.University0.edu) and telephone.
func (g *univGen) contact(c class, idx int) {
	v := localName(g.val[:0], c, idx)
	v = append(v, '@')
	v = append(v, g.dept[len("http://www."):]...)
	g.val = v
	g.sink.lit(g.subj, predEmailAddress, v)
	g.sink.lit(g.subj, predTelephone, telephone)
}

// univRef writes <subj> p <University<u>>: UBA writes the university as a
// nested node, with its rdf:type, every time.
func (g *univGen) univRef(p predicate, u int) {
	g.obj = appendUnivIRI(g.obj[:0], u)
	g.sink.univ(g.subj, p, g.obj, g.typeUniv(u))
}

// typeUniv records that University<u>'s rdf:type is written and says
// whether it was written before.
func (g *univGen) typeUniv(u int) (repeat bool) {
	if u >= DegreeUniversities {
		repeat, g.ownTyped = g.ownTyped, true
		return repeat
	}
	repeat = g.typed.has(u)
	g.typed.add(u)
	return repeat
}

// randomList is UBA's _getRandomList(num, 0, size-1): num distinct values
// of [0, size), each drawn as a position in the list of the values not yet
// drawn (in increasing order). It appends them, in drawing order, to
// dst[:0].
func (g *univGen) randomList(dst []int32, num, size int) []int32 {
	dst = dst[:0]
	removed := g.removed[:0] // the values drawn so far, sorted
	for i := range num {
		v := int32(g.r.between(0, size-i-1))
		j := 0
		for ; j < len(removed) && removed[j] <= v; j++ {
			v++
		}
		removed = slices.Insert(removed, j, v)
		dst = append(dst, v)
	}
	g.removed = removed
	return dst
}

// generate writes university u. typedBefore is the set of degree
// universities whose rdf:type the universities before u have written
// (nil: none).
func (g *univGen) generate(u int, typedBefore *univSet) {
	g.univ = u
	g.typed = univSet{}
	if typedBefore != nil {
		g.typed = *typedBefore
	}
	g.ownTyped = false
	g.univIRI = appendUnivIRI(g.univIRI[:0], u)
	g.r.setSeed(ubaSeed(g.seed, u))
	depts := g.r.between(deptMin, deptMax)
	for d := range depts {
		g.department(d)
	}
}

// department writes department d of the current university: UBA's file
// University<u>_<d>.owl.
func (g *univGen) department(d int) {
	g.sink.file(g.univ, d)

	g.dept = append(g.dept[:0], "http://www.Department"...)
	g.dept = strconv.AppendInt(g.dept, int64(d), 10)
	g.dept = append(g.dept, '.')
	g.dept = append(g.dept, g.univIRI[len("http://www."):]...)

	// The department's shape, drawn in UBA's order (_setInstanceInfo).
	n := &g.count
	*n = [numClasses]int{}
	n[classFullProfessor] = g.r.between(fullProfMin, fullProfMax)
	n[classAssociateProfessor] = g.r.between(assoProfMin, assoProfMax)
	n[classAssistantProfessor] = g.r.between(asstProfMin, asstProfMax)
	n[classLecturer] = g.r.between(lecturerMin, lecturerMax)
	faculty := n[classFullProfessor] + n[classAssociateProfessor] + n[classAssistantProfessor] + n[classLecturer]
	n[classUndergraduateStudent] = g.r.between(underPerFacMin*faculty, underPerFacMax*faculty)
	grads := g.r.between(gradPerFacMin*faculty, gradPerFacMax*faculty)
	n[classGraduateStudent] = grads
	n[classTeachingAssistant] = g.r.between(grads/gradPerTAMax, grads/gradPerTAMin)
	n[classResearchAssistant] = g.r.between(grads/gradPerRAMax, grads/gradPerRAMin)
	n[classResearchGroup] = g.r.between(groupMin, groupMax)
	chair := int(g.r.nextInt(int32(n[classFullProfessor])))
	g.underCourses, g.gradCourses = 0, 0
	g.pubs = g.pubs[:0]

	if d == 0 {
		g.subj = append(g.subj[:0], g.univIRI...)
		g.sink.typ(g.subj, classUniversity, g.typeUniv(g.univ))
		g.val = localName(g.val[:0], classUniversity, g.univ)
		g.sink.lit(g.subj, predName, g.val)
	}
	g.subj = append(g.subj[:0], g.dept...)
	g.section(classDepartment, d, true)
	g.univRef(predSubOrganizationOf, g.univ)

	for _, c := range [...]class{classFullProfessor, classAssociateProfessor, classAssistantProfessor, classLecturer} {
		for j := range n[c] {
			g.facultyMember(c, j, chair)
		}
	}
	for j := range n[classUndergraduateStudent] {
		g.undergraduate(j)
	}
	for j := range n[classGraduateStudent] {
		g.graduate(j)
	}
	for j := range n[classResearchGroup] {
		g.subj = g.member(g.subj[:0], classResearchGroup, j)
		g.section(classResearchGroup, j, false)
		g.sink.iri(g.subj, predSubOrganizationOf, g.dept)
	}
	g.publications()
	for i := range g.underCourses {
		g.subj = g.member(g.subj[:0], classCourse, i)
		g.section(classCourse, i, true)
	}
	for i := range g.gradCourses {
		g.subj = g.member(g.subj[:0], classGraduateCourse, i)
		g.section(classGraduateCourse, i, true)
	}
	g.assistants()
}

// facultyMember writes member j of faculty class c and records the
// publications it writes (published after all the people).
func (g *univGen) facultyMember(c class, j, chair int) {
	g.subj = g.member(g.subj[:0], c, j)
	g.section(c, j, true)
	for range g.r.between(facCourseMin, facCourseMax) {
		g.r.between(0, coursePool-g.underCourses-1) // drawn and ignored, as in UBA
		g.obj = g.member(g.obj[:0], classCourse, g.underCourses)
		g.underCourses++
		g.sink.iri(g.subj, predTeacherOf, g.obj)
	}
	for range g.r.between(facCourseMin, facCourseMax) {
		g.r.between(0, coursePool-g.gradCourses-1)
		g.obj = g.member(g.obj[:0], classGraduateCourse, g.gradCourses)
		g.gradCourses++
		g.sink.iri(g.subj, predTeacherOf, g.obj)
	}
	g.univRef(predUndergraduateDegreeFrom, int(g.r.nextInt(DegreeUniversities)))
	g.univRef(predMastersDegreeFrom, int(g.r.nextInt(DegreeUniversities)))
	g.univRef(predDoctoralDegreeFrom, int(g.r.nextInt(DegreeUniversities)))
	g.sink.iri(g.subj, predWorksFor, g.dept)
	g.contact(c, j)
	if c != classLecturer {
		g.val = append(g.val[:0], "Research"...)
		g.val = strconv.AppendInt(g.val, int64(g.r.nextInt(researchAreas)), 10)
		g.sink.lit(g.subj, predResearchInterest, g.val)
	}
	if c == classFullProfessor && j == chair {
		g.sink.iri(g.subj, predHeadOf, g.dept)
	}
	r := pubRange[c]
	for i := range g.r.between(r[0], r[1]) {
		// Reslice rather than append, so that a slot reused from an
		// earlier department keeps its grads' capacity.
		g.pubs = slices.Grow(g.pubs, 1)
		g.pubs = g.pubs[:len(g.pubs)+1]
		p := &g.pubs[len(g.pubs)-1]
		p.class, p.author, p.idx, p.grads = c, int32(j), int32(i), p.grads[:0]
	}
}

// student writes what undergraduates and graduate students share.
func (g *univGen) student(c class, j int) {
	g.subj = g.member(g.subj[:0], c, j)
	g.section(c, j, true)
	g.sink.iri(g.subj, predMemberOf, g.dept)
	g.contact(c, j)
}

func (g *univGen) undergraduate(j int) {
	g.student(classUndergraduateStudent, j)
	g.list = g.randomList(g.list, g.r.between(underTakeMin, underTakeMax), g.underCourses)
	for _, i := range g.list {
		g.obj = g.member(g.obj[:0], classCourse, int(i))
		g.sink.iri(g.subj, predTakesCourse, g.obj)
	}
	if g.r.nextInt(underAdvisorOdds) == 0 {
		g.advisor()
	}
}

func (g *univGen) graduate(j int) {
	g.student(classGraduateStudent, j)
	g.list = g.randomList(g.list, g.r.between(gradTakeMin, gradTakeMax), g.gradCourses)
	for _, i := range g.list {
		g.obj = g.member(g.obj[:0], classGraduateCourse, int(i))
		g.sink.iri(g.subj, predTakesCourse, g.obj)
	}
	g.univRef(predUndergraduateDegreeFrom, int(g.r.nextInt(DegreeUniversities)))
	if g.r.nextInt(1) == 0 { // UBA's one-in-R_GRADSTUD_ADVISOR (= 1): always, after a draw
		g.advisor()
	}
	g.list = g.randomList(g.list, g.r.between(gradPubMin, gradPubMax), len(g.pubs))
	for _, p := range g.list {
		g.pubs[p].grads = append(g.pubs[p].grads, int32(j))
	}
}

// advisor writes the current student's advisor: a professor of a rank
// drawn uniformly, then one of that rank.
func (g *univGen) advisor() {
	c := classFullProfessor + class(g.r.nextInt(3))
	g.obj = g.member(g.obj[:0], c, int(g.r.nextInt(int32(g.count[c]))))
	g.sink.iri(g.subj, predAdvisor, g.obj)
}

// publications writes the department's publications: each has its
// faculty author, then its graduate co-authors.
func (g *univGen) publications() {
	for i := range g.pubs {
		p := &g.pubs[i]
		g.obj = g.member(g.obj[:0], p.class, int(p.author))
		g.subj = append(g.subj[:0], g.obj...)
		g.subj = append(g.subj, '/')
		g.subj = localName(g.subj, classPublication, int(p.idx))
		g.section(classPublication, int(p.idx), true)
		g.sink.iri(g.subj, predPublicationAuthor, g.obj)
		for _, s := range p.grads {
			g.obj = g.member(g.obj[:0], classGraduateStudent, int(s))
			g.sink.iri(g.subj, predPublicationAuthor, g.obj)
		}
	}
}

// assistants draws the teaching and research assistants among the graduate
// students, and the courses the teaching assistants assist, and writes
// them.
func (g *univGen) assistants() {
	ta := g.count[classTeachingAssistant]
	g.list = g.randomList(g.list, ta+g.count[classResearchAssistant], g.count[classGraduateStudent])
	g.list2 = g.randomList(g.list2, ta, g.underCourses)
	for i, s := range g.list {
		g.subj = g.member(g.subj[:0], classGraduateStudent, int(s))
		if i < ta {
			g.sink.typ(g.subj, classTeachingAssistant, false)
			g.obj = g.member(g.obj[:0], classCourse, int(g.list2[i]))
			g.sink.iri(g.subj, predTeachingAssistantOf, g.obj)
		} else {
			g.sink.typ(g.subj, classResearchAssistant, false)
		}
	}
}

var univBenchOntology = []byte(UnivBenchOntology)
