package datasets

// UniversityDepartments returns the number of departments of university u
// for a seed, for tests that pick a seed by shape.
func UniversityDepartments(seed uint64, u int) int { return len(universityShape(seed, u)) }
