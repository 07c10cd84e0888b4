package datasets_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/datasets"
)

func TestLUBMQueries(t *testing.T) {
	qs := datasets.LUBMQueries()
	if len(qs) != 26 {
		t.Fatalf("%d queries, want 12 Wukong + 14 standard", len(qs))
	}
	names := map[string]bool{}
	for i, q := range qs {
		set, prefix, n := datasets.SetWukong, "wukong", i+1
		if i >= 12 {
			set, prefix, n = datasets.SetLUBMStd, "lubm-std", i-11
		}
		if want := fmt.Sprintf("%s-q%d", prefix, n); q.Name != want || q.Set != set {
			t.Errorf("query %d: %s in %s, want %s in %s", i, q.Name, q.Set, want, set)
		}
		wantLabel := ""
		switch {
		case set == datasets.SetWukong && n <= 7:
			wantLabel = fmt.Sprintf("L%d", n)
		case set == datasets.SetLUBMStd:
			wantLabel = fmt.Sprintf("Q%d", n)
		}
		if q.Label != wantLabel {
			t.Errorf("%s: label %q, want %q", q.Name, q.Label, wantLabel)
		}
		if names[q.Name] || q.Description == "" || !strings.Contains(q.Text, "SELECT") {
			t.Errorf("%s: duplicate, or no description or text", q.Name)
		}
		names[q.Name] = true
		dir := map[string]string{datasets.SetWukong: "wukong", datasets.SetLUBMStd: "std"}[set]
		if want, err := os.ReadFile(fmt.Sprintf("%s/queries/%s/q%d.rq", lubmDir, dir, n)); err == nil && string(want) != q.Text {
			t.Errorf("%s: text differs from the reference query file", q.Name)
		}
	}
	qs[0].Text = "changed"
	if datasets.LUBMQueries()[0].Text == "changed" {
		t.Error("LUBMQueries returns the package's own slice")
	}
	for name, want := range map[string]string{"L1": "wukong-q1", "l7": "wukong-q7", "wukong-q12": "wukong-q12", "LUBM-STD-Q9": "lubm-std-q9"} {
		if q, ok := datasets.LUBMQuery(name); !ok || q.Name != want {
			t.Errorf("LUBMQuery(%q) = %q, %v; want %s", name, q.Name, ok, want)
		}
	}
	for _, name := range []string{"L8", "Q1", "wukong-q13", ""} {
		if q, ok := datasets.LUBMQuery(name); ok {
			t.Errorf("LUBMQuery(%q) = %s, want none", name, q.Name)
		}
	}
}
