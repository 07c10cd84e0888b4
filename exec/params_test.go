package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wukongd/wukongd/bench"
	"github.com/wukongd/wukongd/planner"
	"github.com/wukongd/wukongd/sparql"
)

// lubmVariants returns texts of the LUBM query sets (std and wukong) and
// of Wukong's light mix with varied constants: every entity IRI of a query
// file gets other department and entity numbers (some of which LUBM-1 does
// not have), and every mix template gets instances of its class.
func lubmVariants(t *testing.T, e *Engine, perQuery int) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(19, 1))
	entity := regexp.MustCompile(`<http://www\.Department(\d+)\.University0\.edu(/[A-Za-z]+)?(\d*)>`)
	var out []string
	for _, set := range []string{"std", "wukong"} {
		files, _ := filepath.Glob(filepath.Join(lubmDir, "queries", set, "*.rq"))
		if len(files) == 0 {
			t.Skipf("no LUBM queries under %s", lubmDir)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			out = append(out, text)
			if !entity.MatchString(text) {
				continue
			}
			for k := 0; k < perQuery; k++ {
				out = append(out, entity.ReplaceAllStringFunc(text, func(m string) string {
					sub := entity.FindStringSubmatch(m)
					s := fmt.Sprintf("<http://www.Department%d.University0.edu", rng.IntN(15))
					if sub[2] != "" {
						s += sub[2] + fmt.Sprint(rng.IntN(8))
					}
					return s + ">"
				}))
			}
		}
	}
	consts := map[string][]string{}
	for _, class := range bench.Classes(bench.WukongMix) {
		res, err := e.Query(context.Background(), bench.InstancesQuery(class), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < res.Len(); i++ {
			consts[class] = append(consts[class], res.Term(res.Rows.At(0, i)).String())
		}
	}
	for _, tm := range bench.WukongMix {
		cs := consts[tm.Class]
		for k := 0; k < perQuery; k++ {
			out = append(out, strings.ReplaceAll(tm.Text, "%C", cs[rng.IntN(len(cs))]))
		}
		out = append(out, strings.ReplaceAll(tm.Text, "%C", "<http://www.Department99.University0.edu/none>"))
	}
	return out
}

// TestParamsDifferential: the answers of LUBM queries run through their
// shape's template (sparql.Shapes, RunParams) equal their answers parsed
// and planned on their own, in every mode, over 4 shards.
func TestParamsDifferential(t *testing.T) {
	e := newTestEngine(t, lubm1(t), 4)
	texts := lubmVariants(t, e, 8)
	ctx := context.Background()
	for _, m := range modes {
		shapes := sparql.NewShapes(1000, 0)
		bound, unbindable := 0, 0
		for _, text := range texts {
			q, err := sparql.ParseQuery(text)
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run(ctx, q, Options{Mode: m})
			if err != nil {
				t.Fatalf("%s: %v\n%s", modeName(m), err, text)
			}
			want := tsv(res)
			if tq, params, ok := shapes.Lookup(text, ""); ok {
				res, err := e.RunParams(ctx, tq, params, Options{Mode: m})
				switch {
				case errors.Is(err, ErrNotBindable):
					unbindable++
				case err != nil:
					t.Fatalf("%s: template: %v\n%s", modeName(m), err, text)
				default:
					bound++
					if got := tsv(res); got != want {
						t.Fatalf("%s: the template's answer differs:\n%s\ngot %d bytes, want %d\n%.500s\nwant\n%.500s", modeName(m), text, len(got), len(want), got, want)
					}
				}
			}
			shapes.Learn(ctx, text, "", q)
		}
		t.Logf("%s: %d texts, %d answered through a template, %d not bindable", modeName(m), len(texts), bound, unbindable)
		if bound < len(texts)/2 {
			t.Fatalf("%s: only %d of %d texts went through a template", modeName(m), bound, len(texts))
		}
		if unbindable == 0 {
			t.Fatalf("%s: the unknown constants did not fall back", modeName(m))
		}
	}
}

// TestBindPlan: a bound plan equals the plan of the query with its
// constants (EXPLAIN prints every physical choice), and the template's
// plan is not changed by binding.
func TestBindPlan(t *testing.T) {
	e := newTestEngine(t, lubm1(t), 4)
	shapes := sparql.NewShapes(100, 0)
	shapes.LearnAfter = 1
	ctx := context.Background()
	for _, tm := range bench.WukongMix {
		a := strings.ReplaceAll(tm.Text, "%C", "<http://www.Department1.University0.edu>")
		b := strings.ReplaceAll(tm.Text, "%C", "<http://www.Department2.University0.edu>")
		if tm.Class != "http://swat.cse.lehigh.edu/onto/univ-bench.owl#Department" {
			continue
		}
		qa, _ := sparql.ParseQuery(a)
		shapes.Learn(ctx, a, "", qa)
		tq, params, ok := shapes.Lookup(b, "")
		if !ok {
			t.Fatalf("%s: no template", tm.Name)
		}
		tp, err := e.templatePlan(tq, Options{})
		if err != nil {
			t.Fatal(err)
		}
		before := Explain(tp, nil, e.Store())
		bp, err := e.BindParams(tq, params, Options{})
		if err != nil {
			t.Fatal(err)
		}
		qb, _ := sparql.ParseQuery(b)
		p, err := e.Plan(qb, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := Explain(bp, nil, e.Store()), Explain(p, nil, e.Store()); got != want {
			t.Fatalf("%s: bound plan\n%s\nplan of the query\n%s", tm.Name, got, want)
		}
		if after := Explain(tp, nil, e.Store()); after != before {
			t.Fatalf("%s: binding changed the template's plan", tm.Name)
		}
		if _, ok := planner.IsParam(planner.ParamID(3)); !ok {
			t.Fatal("ParamID not a parameter")
		}
	}
}
