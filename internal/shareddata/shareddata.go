// Package shareddata finds the data the project's tests and benchmarks
// share but do not commit: the LUBM reference data sets and the W3C test
// suites, kept in a folder named shared beside the repository.
//
// In: the environment and the working directory. Out: paths.
package shareddata

import (
	"os"
	"path/filepath"
	"sync"
)

// Env names the variable that, when set, gives the shared folder.
const Env = "WUKONGD_SHARED"

var (
	once sync.Once
	dir  string
)

// Dir returns the shared folder: $WUKONGD_SHARED; else ../shared beside the
// repository root (the nearest directory above the working directory with a
// go.mod), when it exists; else /work/shared, when it exists. If none
// exists it returns the repository-relative candidate, so that callers'
// "not found" messages name a sensible place.
func Dir() string {
	once.Do(func() { dir = find() })
	return dir
}

// Path joins elem to the shared folder, e.g. Path("datasets", "lubm").
func Path(elem ...string) string {
	return filepath.Join(append([]string{Dir()}, elem...)...)
}

func find() string {
	if d := os.Getenv(Env); d != "" {
		return d
	}
	var candidates []string
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				candidates = append(candidates, filepath.Join(filepath.Dir(d), "shared"))
				break
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	candidates = append(candidates, "/work/shared")
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			return c
		}
	}
	return candidates[0]
}
