package datasets

import "github.com/wukongd/wukongd/rdf"

// UnivBench is the namespace of the univ-bench ontology that LUBM data uses.
const UnivBench = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"

// class is a univ-bench class the generator writes as an rdf:type object.
type class uint8

const (
	classUniversity class = iota
	classDepartment
	classFullProfessor
	classAssociateProfessor
	classAssistantProfessor
	classLecturer
	classUndergraduateStudent
	classGraduateStudent
	classResearchGroup
	classPublication
	classCourse
	classGraduateCourse
	classTeachingAssistant
	classResearchAssistant
	classOntology // owl:Ontology, the type of each UBA file's header
	numClasses
)

// className is the local name of each class; it is also the prefix of the
// instances' local names ("FullProfessor3", "Course12").
var className = [numClasses]string{
	"University", "Department", "FullProfessor", "AssociateProfessor",
	"AssistantProfessor", "Lecturer", "UndergraduateStudent", "GraduateStudent",
	"ResearchGroup", "Publication", "Course", "GraduateCourse",
	"TeachingAssistant", "ResearchAssistant", "Ontology",
}

// OWL is the namespace of owl:Ontology and owl:imports.
const OWL = "http://www.w3.org/2002/07/owl#"

// UnivBenchOntology is the IRI of the univ-bench ontology, which UBA's
// files import (UBA's -onto argument).
const UnivBenchOntology = "http://swat.cse.lehigh.edu/onto/univ-bench.owl"

// classIRI is the IRI of class c.
func classIRI(c class) string {
	if c == classOntology {
		return OWL + className[c]
	}
	return UnivBench + className[c]
}

// predicate is a property the generator writes.
type predicate uint8

const (
	predType predicate = iota
	predName
	predSubOrganizationOf
	predTeacherOf
	predUndergraduateDegreeFrom
	predMastersDegreeFrom
	predDoctoralDegreeFrom
	predWorksFor
	predEmailAddress
	predTelephone
	predResearchInterest
	predHeadOf
	predMemberOf
	predTakesCourse
	predAdvisor
	predPublicationAuthor
	predTeachingAssistantOf
	predImports // owl:imports
	numPredicates
)

var predicateIRI = [numPredicates]string{
	rdf.RDFType,
	UnivBench + "name",
	UnivBench + "subOrganizationOf",
	UnivBench + "teacherOf",
	UnivBench + "undergraduateDegreeFrom",
	UnivBench + "mastersDegreeFrom",
	UnivBench + "doctoralDegreeFrom",
	UnivBench + "worksFor",
	UnivBench + "emailAddress",
	UnivBench + "telephone",
	UnivBench + "researchInterest",
	UnivBench + "headOf",
	UnivBench + "memberOf",
	UnivBench + "takesCourse",
	UnivBench + "advisor",
	UnivBench + "publicationAuthor",
	UnivBench + "teachingAssistantOf",
	OWL + "imports",
}

// Pre-rendered N-Triples tokens and rdf.Terms, built once.
var (
	// predToken[p] is "<iri> " (with the trailing space).
	predToken [numPredicates][]byte
	// typeToken[c] is "<rdf:type> <class> .\n" to follow a subject and a space.
	typeToken [numClasses][]byte
	predTerm  [numPredicates]rdf.Term
	classTerm [numClasses]rdf.Term
)

func init() {
	for p, iri := range predicateIRI {
		predToken[p] = []byte("<" + iri + "> ")
		predTerm[p] = rdf.NewIRI(iri)
	}
	for c := range numClasses {
		typeToken[c] = []byte("<" + rdf.RDFType + "> <" + classIRI(c) + "> .\n")
		classTerm[c] = rdf.NewIRI(classIRI(c))
	}
}
