package datasets

import (
	"math/rand/v2"
	"strconv"
)

// univGen generates one university at a time into a sink, in UBA's order:
// per department, the department, its faculty (by rank), undergraduates,
// graduate students, research groups, then the publications, courses,
// graduate courses, teaching assistants and research assistants. A univGen
// is used by one goroutine; its buffers are reused from one university to
// the next.
type univGen struct {
	seed  uint64
	owner []int32 // from ownersOf; shared, read-only
	sink  sink

	univ  int
	r     *rand.Rand
	picks []int32 // degree universities, consumed in order
	pick  int
	typed []bool // universities this university has written an rdf:type for

	univIRI []byte // http://www.University<u>.edu
	dept    []byte // http://www.Department<d>.University<u>.edu
	subj    []byte // scratch: the current subject
	obj     []byte // scratch: an object IRI
	val     []byte // scratch: a literal value

	pubs   []facultyPub // the department's publications, in creation order
	coauth []coAuthor   // graduate co-authors of those publications
	first  []int32      // counting-sort scratch: first co-author of each publication
	picked []int32      // scratch for distinct draws
	pool   []int32      // scratch for distinct draws
}

// facultyPub is publication idx of the faculty member (rank, author).
type facultyPub struct {
	rank   rank
	author int32
	idx    int32
}

// coAuthor says graduate student grad co-authors publication pub (an index
// into univGen.pubs).
type coAuthor struct {
	pub  int32
	grad int32
}

func newUnivGen(seed uint64, owner []int32) *univGen {
	return &univGen{seed: seed, owner: owner, typed: make([]bool, DegreeUniversities)}
}

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
	dst = append(dst, className[c]...)
	return strconv.AppendInt(dst, int64(idx), 10)
}

// localName appends "FullProfessor3": the name of instance idx of class c.
func localName(dst []byte, c class, idx int) []byte {
	dst = append(dst, className[c]...)
	return strconv.AppendInt(dst, int64(idx), 10)
}

// contact writes the email address (FullProfessor3@Department0.University0.edu)
// and the telephone ("xxx-xxx-xxxx", as in UBA) of a person.
func (g *univGen) contact(subj []byte, c class, idx int) {
	v := localName(g.val[:0], c, idx)
	v = append(v, '@')
	v = append(v, g.dept[len("http://www."):]...)
	g.val = v
	g.sink.lit(subj, predEmailAddress, v)
	g.sink.lit(subj, predTelephone, telephone)
}

var telephone = []byte("xxx-xxx-xxxx")

// named writes <subj> rdf:type c and <subj> ub:name "c<idx>".
func (g *univGen) named(subj []byte, c class, idx int) {
	g.sink.typ(subj, c)
	g.val = localName(g.val[:0], c, idx)
	g.sink.lit(subj, predName, g.val)
}

// degree writes <subj> p <University<t>> with t the next degree draw,
// preceded by t's rdf:type when this university owns it (see ownersOf).
func (g *univGen) degree(subj []byte, p predicate) {
	t := int(g.picks[g.pick])
	g.pick++
	g.obj = appendUnivIRI(g.obj[:0], t)
	if t != g.univ && int(g.owner[t]) == g.univ && !g.typed[t] {
		g.typed[t] = true
		g.sink.typ(g.obj, classUniversity)
	}
	g.sink.iri(subj, p, g.obj)
}

// generate writes university u.
func (g *univGen) generate(u int) {
	g.univ = u
	shape := universityShape(g.seed, u)
	g.picks = degreePicks(g.seed, u, shape)
	g.pick = 0
	g.r = newStream(g.seed, u, streamMain)
	clear(g.typed)

	g.univIRI = appendUnivIRI(g.univIRI[:0], u)
	g.sink.typ(g.univIRI, classUniversity)
	g.val = localName(g.val[:0], classUniversity, u)
	g.sink.lit(g.univIRI, predName, g.val)
	for d := range shape {
		g.department(d, &shape[d])
	}
	if g.pick != len(g.picks) {
		panic("BUG: LUBM generator used " + strconv.Itoa(g.pick) + " degree draws of " + strconv.Itoa(len(g.picks)))
	}
}

func (g *univGen) department(d int, s *deptShape) {
	r, out := g.r, g.sink
	g.dept = append(g.dept[:0], "http://www.Department"...)
	g.dept = strconv.AppendInt(g.dept, int64(d), 10)
	g.dept = append(g.dept, ".University"...)
	g.dept = strconv.AppendInt(g.dept, int64(g.univ), 10)
	g.dept = append(g.dept, ".edu"...)
	g.named(g.dept, classDepartment, d)
	out.iri(g.dept, predSubOrganizationOf, g.univIRI)

	// Faculty. Courses are numbered in the order they are assigned.
	courses, gradCourses := 0, 0
	g.pubs = g.pubs[:0]
	for rk := range numRanks {
		c := rankClass[rk]
		for i := range s.faculty[rk] {
			g.subj = g.member(g.subj[:0], c, i)
			subj := g.subj
			g.named(subj, c, i)
			for range between(r, facultyCourseMin, facultyCourseMax) {
				g.obj = g.member(g.obj[:0], classCourse, courses)
				out.iri(subj, predTeacherOf, g.obj)
				courses++
			}
			for range between(r, facultyGradCourseMin, facultyGradCourseMax) {
				g.obj = g.member(g.obj[:0], classGraduateCourse, gradCourses)
				out.iri(subj, predTeacherOf, g.obj)
				gradCourses++
			}
			g.degree(subj, predUndergraduateDegreeFrom)
			g.degree(subj, predMastersDegreeFrom)
			g.degree(subj, predDoctoralDegreeFrom)
			out.iri(subj, predWorksFor, g.dept)
			g.contact(subj, c, i)
			if rk != lecturer {
				g.val = append(g.val[:0], "Research"...)
				g.val = strconv.AppendInt(g.val, int64(r.IntN(researchTopics)), 10)
				out.lit(subj, predResearchInterest, g.val)
			}
			if rk == fullProfessor && i == s.chair {
				out.iri(subj, predHeadOf, g.dept)
			}
			for k := range between(r, rankPubRange[rk][0], rankPubRange[rk][1]) {
				g.pubs = append(g.pubs, facultyPub{rank: rk, author: int32(i), idx: int32(k)})
			}
		}
	}

	for i := range s.under {
		g.subj = g.member(g.subj[:0], classUndergraduateStudent, i)
		subj := g.subj
		g.student(subj, classUndergraduateStudent, i)
		for _, c := range g.distinct(between(r, underTakesMin, underTakesMax), courses) {
			g.obj = g.member(g.obj[:0], classCourse, int(c))
			out.iri(subj, predTakesCourse, g.obj)
		}
		if r.IntN(underPerAdvised) == 0 {
			g.advisor(subj, s)
		}
	}

	g.coauth = g.coauth[:0]
	for i := range s.grad {
		g.subj = g.member(g.subj[:0], classGraduateStudent, i)
		subj := g.subj
		g.student(subj, classGraduateStudent, i)
		for _, c := range g.distinct(between(r, gradTakesMin, gradTakesMax), gradCourses) {
			g.obj = g.member(g.obj[:0], classGraduateCourse, int(c))
			out.iri(subj, predTakesCourse, g.obj)
		}
		g.degree(subj, predUndergraduateDegreeFrom)
		g.advisor(subj, s)
		for _, p := range g.distinct(between(r, gradPubMin, gradPubMax), len(g.pubs)) {
			g.coauth = append(g.coauth, coAuthor{pub: p, grad: int32(i)})
		}
	}

	for i := range s.groups {
		g.subj = g.member(g.subj[:0], classResearchGroup, i)
		out.typ(g.subj, classResearchGroup)
		out.iri(g.subj, predSubOrganizationOf, g.dept)
	}

	g.publications()

	for i := range courses {
		g.subj = g.member(g.subj[:0], classCourse, i)
		g.named(g.subj, classCourse, i)
	}
	for i := range gradCourses {
		g.subj = g.member(g.subj[:0], classGraduateCourse, i)
		g.named(g.subj, classGraduateCourse, i)
	}

	// Teaching and research assistants: distinct graduate students; each
	// teaching assistant assists a distinct undergraduate course.
	assistants := append([]int32(nil), g.distinct(s.ta+s.ra, s.grad)...)
	taCourses := g.distinct(s.ta, courses)
	for k, gi := range assistants {
		g.subj = g.member(g.subj[:0], classGraduateStudent, int(gi))
		if k < len(taCourses) {
			out.typ(g.subj, classTeachingAssistant)
			g.obj = g.member(g.obj[:0], classCourse, int(taCourses[k]))
			out.iri(g.subj, predTeachingAssistantOf, g.obj)
		} else {
			out.typ(g.subj, classResearchAssistant)
		}
	}
}

// student writes what undergraduate and graduate students share.
func (g *univGen) student(subj []byte, c class, i int) {
	g.named(subj, c, i)
	g.sink.iri(subj, predMemberOf, g.dept)
	g.contact(subj, c, i)
}

// advisor writes <subj> ub:advisor <a professor>: like UBA, the rank is
// drawn first (full, associate, assistant), then a professor of that rank.
func (g *univGen) advisor(subj []byte, s *deptShape) {
	rk := rank(g.r.IntN(int(lecturer)))
	g.obj = g.member(g.obj[:0], rankClass[rk], g.r.IntN(s.faculty[rk]))
	g.sink.iri(subj, predAdvisor, g.obj)
}

// publications writes the department's publications with their authors:
// the faculty member first, then the graduate co-authors in the order they
// were drawn.
func (g *univGen) publications() {
	// Counting sort of the co-authors by publication, stable.
	n := len(g.pubs)
	g.first = append(g.first[:0], make([]int32, n+1)...)
	for _, ca := range g.coauth {
		g.first[ca.pub+1]++
	}
	for i := 1; i <= n; i++ {
		g.first[i] += g.first[i-1]
	}
	g.picked = append(g.picked[:0], make([]int32, len(g.coauth))...)
	next := append([]int32(nil), g.first[:n]...)
	for _, ca := range g.coauth {
		g.picked[next[ca.pub]] = ca.grad
		next[ca.pub]++
	}
	grads := g.picked

	var author []byte
	for pi, p := range g.pubs {
		c := rankClass[p.rank]
		author = g.member(author[:0], c, int(p.author))
		g.subj = append(append(g.subj[:0], author...), "/Publication"...)
		g.subj = strconv.AppendInt(g.subj, int64(p.idx), 10)
		g.named(g.subj, classPublication, int(p.idx))
		g.sink.iri(g.subj, predPublicationAuthor, author)
		for _, gi := range grads[g.first[pi]:g.first[pi+1]] {
			g.obj = g.member(g.obj[:0], classGraduateStudent, int(gi))
			g.sink.iri(g.subj, predPublicationAuthor, g.obj)
		}
	}
}

// distinct draws min(k, n) distinct integers from [0, n) uniformly, in draw
// order. The result is valid until the next call.
func (g *univGen) distinct(k, n int) []int32 {
	k = min(k, n)
	out := g.pool[:0]
	if k*4 <= n {
		// Few draws from a large range: rejection.
	draw:
		for len(out) < k {
			v := int32(g.r.IntN(n))
			for _, w := range out {
				if w == v {
					continue draw
				}
			}
			out = append(out, v)
		}
	} else {
		// Partial Fisher–Yates shuffle.
		for i := range n {
			out = append(out, int32(i))
		}
		for i := range k {
			j := i + g.r.IntN(n-i)
			out[i], out[j] = out[j], out[i]
		}
		out = out[:k]
	}
	g.pool = out
	return out
}
