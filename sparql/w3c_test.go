package sparql

import (
	"errors"
	"fmt"
	"github.com/wukongd/wukongd/internal/shareddata"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

var w3cDir = shareddata.Path("w3c", "sparql11")

func readText(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("cannot read %s: %v", path, err)
	}
	return string(data)
}

// parseAny parses a query, or an update when the file is a .ru.
func parseAny(text string, update bool) (interface{ String() string }, error) {
	if update {
		return ParseUpdate(text)
	}
	return ParseQuery(text)
}

func TestW3CSyntax(t *testing.T) {
	if _, err := os.Stat(w3cDir); err != nil {
		t.Skipf("W3C suite not present: %v", err)
	}
	tests, err := w3cTests(w3cDir)
	if err != nil {
		t.Fatal(err)
	}
	var passed, failed, eval int
	for _, tc := range tests {
		var positive bool
		switch tc.kind {
		case "PositiveSyntaxTest11", "PositiveUpdateSyntaxTest11":
			positive = true
		case "NegativeSyntaxTest11", "NegativeUpdateSyntaxTest11":
		case "QueryEvaluationTest", "UpdateEvaluationTest", "CSVResultFormatTest":
			positive = true
			eval++
		default:
			continue
		}
		text := readText(t, tc.file)
		_, err := parseAny(text, strings.HasPrefix(tc.kind, "PositiveUpdate") || strings.HasPrefix(tc.kind, "NegativeUpdate") || strings.HasSuffix(tc.file, ".ru"))
		switch {
		case positive && err != nil:
			failed++
			t.Errorf("%s (%s, %s): %v", tc.name, tc.kind, filepath.Base(tc.file), err)
		case !positive && err == nil:
			failed++
			t.Errorf("%s (%s, %s): parsed but must be rejected", tc.name, tc.kind, filepath.Base(tc.file))
		case !positive:
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Col < 1 {
				failed++
				t.Errorf("%s: error %v is not a *SyntaxError with a position", tc.name, err)
				continue
			}
			passed++
		default:
			passed++
		}
	}
	if passed+failed < 100 {
		t.Errorf("only %d tests found in the manifests", passed+failed)
	}
	t.Logf("W3C SPARQL 1.1 syntax and evaluation-query tests: %d passed, %d failed (%d evaluation-test queries)", passed, failed, eval)
}

// queryFiles lists every query of the W3C suite and the LUBM query sets.
func queryFiles(t testing.TB) []string {
	var files []string
	for _, pat := range []string{
		w3cDir + "/*/*.rq",
		shareddata.Path("datasets", "lubm", "queries", "*", "*.rq"),
	} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	return files
}

// stripPos zeroes every Pos in the tree reachable from v.
func stripPos(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			stripPos(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(Pos{}) {
			if v.CanSet() {
				v.Set(reflect.ValueOf(Pos{}))
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			stripPos(v.Field(i))
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			stripPos(v.Index(i))
		}
	}
}

func sameAlgebra(a, b interface{}) bool {
	stripPos(reflect.ValueOf(a))
	stripPos(reflect.ValueOf(b))
	return reflect.DeepEqual(a, b)
}

// firstDiff names the first place where a and b differ.
func firstDiff(path string, a, b reflect.Value) string {
	if a.IsValid() != b.IsValid() {
		return path + ": validity"
	}
	if !a.IsValid() {
		return ""
	}
	if a.Type() != b.Type() {
		return path + ": " + a.Type().String() + " vs " + b.Type().String()
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() != b.IsNil() {
			return path + ": nil vs non-nil"
		}
		if a.IsNil() {
			return ""
		}
		return firstDiff(path, a.Elem(), b.Elem())
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if d := firstDiff(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return path + ": nil slice vs empty slice"
		}
		if a.Len() != b.Len() {
			return path + ": lengths differ"
		}
		for i := 0; i < a.Len(); i++ {
			if d := firstDiff(path+"["+strconv.Itoa(i)+"]", a.Index(i), b.Index(i)); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return path + ": " + fmt.Sprint(a.Interface()) + " vs " + fmt.Sprint(b.Interface())
	}
	return ""
}

func TestRoundTrip(t *testing.T) {
	files := queryFiles(t)
	if len(files) == 0 {
		t.Skip("no query files present")
	}
	n := 0
	for _, f := range files {
		text := readText(t, f)
		q, err := ParseQuery(text)
		if err != nil {
			continue // negative syntax tests
		}
		printed := q.String()
		q2, err := ParseQuery(printed)
		if err != nil {
			t.Errorf("%s: printed query does not parse: %v\n%s", f, err, printed)
			continue
		}
		if !sameAlgebra(q, q2) {
			t.Errorf("%s: algebra changed by print and parse (%s)\n--- printed:\n%s\n--- reprinted:\n%s\n--- algebra 1:\n%s--- algebra 2:\n%s", f, firstDiff("q", reflect.ValueOf(q), reflect.ValueOf(q2)), printed, q2.String(), FormatAlgebra(q), FormatAlgebra(q2))
		}
		n++
	}
	if n == 0 {
		t.Fatalf("none of the %d query files parsed, nothing was round-tripped", len(files))
	}
	t.Logf("%d queries round-tripped", n)
}
