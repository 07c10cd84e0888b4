package sparql

import (
	"github.com/wukongd/wukongd/internal/shareddata"
	"path/filepath"
	"strings"
	"testing"
)

func lubmQueries(b *testing.B, set string) map[string]string {
	files, _ := filepath.Glob(shareddata.Path("datasets", "lubm", "queries", set, "q*.rq"))
	if len(files) == 0 {
		b.Skip("LUBM queries not present")
	}
	out := map[string]string{}
	for _, f := range files {
		out[strings.TrimSuffix(filepath.Base(f), ".rq")] = readText(b, f)
	}
	return out
}

func benchParse(b *testing.B, set string, names []string, cached bool) {
	qs := lubmQueries(b, set)
	for _, name := range names {
		text, ok := qs[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			c := NewCache(64)
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			for i := 0; i < b.N; i++ {
				var err error
				if cached {
					_, err = c.ParseQuery(text)
				} else {
					_, err = ParseQuery(text)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var (
	wukongNames = []string{"q1", "q2", "q3", "q4", "q5", "q6", "q7"}
	stdNames    = []string{"q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "q11", "q12", "q13", "q14"}
)

func BenchmarkParseWukong(b *testing.B)       { benchParse(b, "wukong", wukongNames, false) }
func BenchmarkParseWukongCached(b *testing.B) { benchParse(b, "wukong", wukongNames, true) }
func BenchmarkParseStd(b *testing.B)          { benchParse(b, "std", stdNames, false) }
func BenchmarkParseStdCached(b *testing.B)    { benchParse(b, "std", stdNames, true) }
