package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	bt "github.com/wukongd/wukongd/internal/browsertest"
	"github.com/wukongd/wukongd/web"
)

// consoleData is a small graph for the console's browser tests: people
// and companies, a GROUP BY-able class membership, and literals holding
// markup that must render as text.
const consoleData = `PREFIX ex: <http://example.org/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
INSERT DATA {
  ex:alice a ex:Person ; ex:name "Alice" ; ex:age 31 ; ex:knows ex:bob, ex:carol ; ex:worksFor ex:acme .
  ex:bob a ex:Person ; ex:name "Bob" ; ex:age 45 ; ex:knows ex:carol .
  ex:carol a ex:Person ; ex:name "Carol" ; ex:age 27 ; ex:worksFor ex:acme .
  ex:dave a ex:Robot ; ex:name "<script>window.pwned=1</script>" ; ex:note "<img src=x onerror=\"window.pwned=2\">" .
  ex:acme a ex:Company ; rdfs:label "Acme Corporation" ; ex:founded 1999 .
}`

// startConsole serves a service holding consoleData and opens the
// console in a browser.
func startConsole(t *testing.T) (context.Context, string, *Service) {
	t.Helper()
	s := openService(t, NewEmpty, Options{Prefixes: map[string]string{
		"ex": "http://example.org/", "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#", "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
	}})
	if err := s.Update(context.Background(), &web.UpdateRequest{Update: consoleData}); err != nil {
		t.Fatal(err)
	}
	_, hs := serve(t, s, func(o *web.Options) {
		o.Examples = []web.Example{{Name: "people", Query: "PREFIX ex: <http://example.org/>\nSELECT ?p ?name WHERE { ?p a ex:Person ; ex:name ?name }"}}
	})
	ctx := bt.Start(t)
	bt.Do(t, ctx, chromedp.Navigate(hs.URL+"/"), chromedp.WaitVisible(chromedp.ID("query")),
		bt.WaitFor(`document.querySelectorAll("#examples option").length === 2`))
	return ctx, hs.URL, s
}

// setEditor puts text in the editor with the cursor at its end, as if
// typed (without completion).
func setEditor(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => { const q = document.getElementById("query"); q.focus(); q.value = ` + bt.JS(text) +
		`; q.setSelectionRange(q.value.length, q.value.length); q.dispatchEvent(new Event("input")); })()`)
}

// runQuery sets the editor and runs it with Ctrl+Enter, waiting for the
// status to report the result.
func runQuery(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	bt.Do(t, ctx, setEditor(text),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("status").textContent = ""`),
		chromedp.KeyEvent("\r", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		bt.WaitFor(`/ in [0-9.]+ m?s|HTTP|Failed/.test(document.getElementById("status").textContent)`))
	if st := bt.Text(t, ctx, "#status"); strings.Contains(st, "HTTP") || strings.Contains(st, "Failed") {
		t.Fatalf("running %q: %s", text, st)
	}
}

// press sends a keydown of key to the editor. (A CDP key event would
// insert the key's text after the handler prevented it.)
func press(key string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`document.getElementById("query").dispatchEvent(new KeyboardEvent("keydown", {key: ` + bt.JS(key) + `, bubbles: true, cancelable: true}))`)
}

func column(t *testing.T, ctx context.Context, col int) string {
	t.Helper()
	return bt.Eval[string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll("#results tbody tr")].map(r => r.cells[%d].textContent).join(",")`, col))
}

func TestConsoleCompletion(t *testing.T) {
	ctx, _, _ := startConsole(t)
	// A class after "a", by a typed prefix: picked with Enter, and the
	// PREFIX line is added.
	bt.Do(t, ctx, setEditor("SELECT * WHERE {\n  ?x a "), chromedp.SendKeys(chromedp.ID("query"), "ex:Pe"),
		bt.WaitFor(`!document.getElementById("completions").hidden && document.querySelector("#completions li[aria-selected=true]") !== null`))
	if got := bt.Text(t, ctx, "#completions li[aria-selected=true] .c-text"); got != "ex:Person" {
		t.Fatalf("first completion %q; all: %s", got, bt.Text(t, ctx, "#completions"))
	}
	if got := bt.Eval[string](t, ctx, `document.getElementById("query").getAttribute("aria-activedescendant")`); got != "completion-0" {
		t.Errorf("aria-activedescendant %q", got)
	}
	bt.Do(t, ctx, press("Enter"), bt.WaitFor(`document.getElementById("completions").hidden`))
	want := "PREFIX ex: <http://example.org/>\nSELECT * WHERE {\n  ?x a ex:Person"
	if got := bt.Eval[string](t, ctx, `document.getElementById("query").value`); got != want {
		t.Fatalf("after the completion the editor holds %q, want %q", got, want)
	}
	// Predicates of the subject's class, most used first.
	bt.Do(t, ctx, chromedp.SendKeys(chromedp.ID("query"), " ; ex:"),
		bt.WaitFor(`[...document.querySelectorAll("#completions .c-text")].some(e => e.textContent === "ex:knows")`))
	preds := bt.Eval[string](t, ctx, `[...document.querySelectorAll("#completions .c-text")].map(e => e.textContent).join(",")`)
	if preds != "ex:age,ex:knows,ex:name,ex:worksFor" { // by triples, then IRI
		t.Errorf("predicates of ex:Person proposed: %s", preds)
	}
	// Arrow down and Tab pick the second.
	bt.Do(t, ctx, press("ArrowDown"), press("Tab"), bt.WaitFor(`document.getElementById("completions").hidden`))
	if got := bt.Eval[string](t, ctx, `document.getElementById("query").value`); !strings.HasSuffix(got, "?x a ex:Person ; ex:knows") {
		t.Errorf("after the second completion: %q", got)
	}
	// Entities by label, written with the prefix; a keyword.
	bt.Do(t, ctx, setEditor("PREFIX ex: <http://example.org/>\nSELECT * WHERE { ?x ex:worksFor "), chromedp.SendKeys(chromedp.ID("query"), "Acme"),
		bt.WaitFor(`[...document.querySelectorAll("#completions .c-text")].some(e => e.textContent === "ex:acme")`))
	if d := bt.Text(t, ctx, "#completions li[aria-selected=true] .c-detail"); !strings.Contains(d, "Acme Corporation") {
		t.Errorf("the entity's label is not shown: %q", d)
	}
	bt.Do(t, ctx, chromedp.KeyEvent("\x1b"), setEditor("SEL"), chromedp.SendKeys(chromedp.ID("query"), "E"),
		bt.WaitFor(`[...document.querySelectorAll("#completions .c-text")].some(e => e.textContent === "SELECT")`))
	// Typing a PREFIX declaration adds none of its own.
	bt.Do(t, ctx, press("Escape"), setEditor(""), chromedp.SendKeys(chromedp.ID("query"), "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\nSELECT * { ?s rdfs:label ?o }"))
	if got := bt.Eval[string](t, ctx, `document.getElementById("query").value`); got != "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\nSELECT * { ?s rdfs:label ?o }" {
		t.Errorf("typing a PREFIX line made %q", got)
	}
	// Ctrl+Enter runs (the completion list closes).
	runQuery(t, ctx, "PREFIX ex: <http://example.org/>\nSELECT ?p WHERE { ?p a ex:Person }")
	if n := bt.Eval[int](t, ctx, `document.querySelectorAll("#results tbody tr").length`); n != 3 {
		t.Errorf("%d rows", n)
	}
}

func TestConsoleSyntaxErrorMarked(t *testing.T) {
	ctx, _, _ := startConsole(t)
	bt.Do(t, ctx, setEditor("SELECT * WHERE {\n  ?s ?p ?o .\n  FILTER(?o >) }"),
		bt.WaitFor(`document.querySelector("#highlight .err-mark") !== null`))
	lint := bt.Text(t, ctx, "#lint")
	if !strings.HasPrefix(lint, "Line 3, column 14: ") {
		t.Errorf("lint says %q", lint)
	}
	if got := bt.Text(t, ctx, "#highlight .err-mark"); got != ")" {
		t.Errorf("the marked character is %q", got)
	}
	// Fixing it clears the mark.
	bt.Do(t, ctx, setEditor("SELECT * WHERE {\n  ?s ?p ?o .\n  FILTER(?o > 1) }"),
		bt.WaitFor(`document.querySelector("#highlight .err-mark") === null && document.getElementById("lint").textContent === ""`))
}

func TestConsoleResultsTable(t *testing.T) {
	ctx, _, _ := startConsole(t)
	runQuery(t, ctx, "PREFIX ex: <http://example.org/>\nSELECT ?p ?name ?age WHERE { ?p ex:name ?name . OPTIONAL { ?p ex:age ?age } }")
	if st := bt.Text(t, ctx, "#status"); !strings.HasPrefix(st, "4 rows in ") || !strings.Contains(st, "[query c") {
		t.Errorf("status %q: wants rows, time and query id", st)
	}
	// IRIs shortened by the prefix and linked to a DESCRIBE.
	if got := bt.Eval[string](t, ctx, `[...document.querySelectorAll("#results a.describe")].map(a => a.textContent).sort().join(",")`); got != "ex:alice,ex:bob,ex:carol,ex:dave" {
		t.Errorf("IRIs shown as %s", got)
	}
	// Sort by ?age (numeric, unbound first), then descending.
	bt.Do(t, ctx, chromedp.Click(chromedp.CSS(`#results th:nth-child(3) button`)))
	if got := column(t, ctx, 2); got != ",27,31,45" {
		t.Errorf("ascending ages %q", got)
	}
	if got := bt.Eval[string](t, ctx, `document.querySelector("#results th:nth-child(3)").getAttribute("aria-sort")`); got != "ascending" {
		t.Errorf("aria-sort %q", got)
	}
	bt.Do(t, ctx, chromedp.Click(chromedp.CSS(`#results th:nth-child(3) button`)))
	if got := column(t, ctx, 2); got != "45,31,27," {
		t.Errorf("descending ages %q", got)
	}
	// Filter.
	bt.Do(t, ctx, chromedp.SendKeys(chromedp.ID("filter"), "car"), bt.WaitFor(`document.querySelectorAll("#results tbody tr").length === 1`))
	if got := column(t, ctx, 1); got != "Carol" {
		t.Errorf("filtered to %q", got)
	}
	// Markup in literals renders as text: no element made, no script run.
	bt.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { const f = document.getElementById("filter"); f.value = ""; f.dispatchEvent(new Event("input")); })()`))
	runQuery(t, ctx, "PREFIX ex: <http://example.org/>\nSELECT ?name ?note WHERE { ex:dave ex:name ?name ; ex:note ?note }")
	if got := column(t, ctx, 0); got != "<script>window.pwned=1</script>" {
		t.Errorf("the literal reads %q", got)
	}
	if got := column(t, ctx, 1); got != `<img src=x onerror="window.pwned=2">` {
		t.Errorf("the literal reads %q", got)
	}
	bt.Do(t, ctx, chromedp.Click(chromedp.ID("view-raw")), bt.WaitFor(`!document.getElementById("pane-raw").hidden`))
	if raw := bt.Text(t, ctx, "#raw"); !strings.Contains(raw, `"head"`) || !strings.Contains(raw, `<script>window.pwned=1</script>`) {
		t.Errorf("raw view %q", raw)
	}
	if n := bt.Eval[int](t, ctx, `document.querySelectorAll("main script, main img, #results script, #raw *").length`); n != 0 || bt.Eval[bool](t, ctx, `window.pwned !== undefined`) {
		t.Errorf("data was rendered as HTML (%d elements, pwned %v)", n, bt.Eval[bool](t, ctx, `window.pwned !== undefined`))
	}
	// Following an IRI opens a DESCRIBE of it in a new tab.
	bt.Do(t, ctx, chromedp.Click(chromedp.ID("view-table")))
	runQuery(t, ctx, "PREFIX ex: <http://example.org/>\nSELECT ?c WHERE { ?c a ex:Company }")
	bt.Do(t, ctx, chromedp.Click(chromedp.CSS(`#results a.describe`)),
		bt.WaitFor(`document.querySelectorAll("#tabs [role=tab]").length === 2 && /triples? in/.test(document.getElementById("status").textContent)`))
	if q := bt.Eval[string](t, ctx, `document.getElementById("query").value`); q != "DESCRIBE <http://example.org/acme>" {
		t.Errorf("the new tab holds %q", q)
	}
	if got := bt.Eval[int](t, ctx, `document.querySelectorAll("#graph svg g.node").length`); got < 3 {
		t.Errorf("the DESCRIBE drew %d nodes", got)
	}
	labels := bt.Eval[string](t, ctx, `[...document.querySelectorAll("#graph svg text")].map(e => e.textContent).join("|")`)
	for _, want := range []string{"ex:acme", `"Acme Corporation"`, "rdfs:label", "ex:Company"} {
		if !strings.Contains(labels, want) {
			t.Errorf("the graph lacks %q: %s", want, labels)
		}
	}
}

func TestConsoleTabsPersistAndShare(t *testing.T) {
	ctx, url, _ := startConsole(t)
	runQuery(t, ctx, "PREFIX ex: <http://example.org/>\nSELECT ?p WHERE { ?p a ex:Person }")
	bt.Do(t, ctx, chromedp.Click(chromedp.ID("tab-new")))
	runQuery(t, ctx, "PREFIX ex: <http://example.org/>\nSELECT ?c WHERE { ?c a ex:Company }")
	bt.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`dispatchEvent(new Event("beforeunload"))`), chromedp.Reload(),
		chromedp.WaitVisible(chromedp.ID("query")), bt.WaitFor(`document.querySelectorAll("#tabs [role=tab]").length === 2`))
	if q := bt.Eval[string](t, ctx, `document.getElementById("query").value`); !strings.Contains(q, "ex:Company") {
		t.Errorf("after reload the active tab holds %q", q)
	}
	if got := column(t, ctx, 0); got != "ex:acme" {
		t.Errorf("after reload the results are %q", got)
	}
	// The first tab kept its query and results.
	bt.Do(t, ctx, chromedp.Click(chromedp.CSS(`#tabs .tab:first-child [role=tab]`)))
	if got := column(t, ctx, 0); got != "ex:alice,ex:bob,ex:carol" {
		t.Errorf("the first tab's results are %q", got)
	}
	// The history lists both.
	if n := bt.Eval[int](t, ctx, `document.querySelectorAll("#history option").length`); n != 3 {
		t.Errorf("%d history entries", n-1)
	}
	// A share link opens its query, mode and timeout in a new tab.
	bt.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("mode").value = "fork-join"; document.getElementById("mode").dispatchEvent(new Event("change"))`),
		chromedp.Click(chromedp.ID("share")), bt.WaitFor(`document.getElementById("share-url").value !== ""`))
	link := bt.Eval[string](t, ctx, `document.getElementById("share-url").value`)
	if !strings.HasPrefix(link, url+"/#query=") || !strings.Contains(link, "mode=fork-join") {
		t.Fatalf("share link %q", link)
	}
	shared := url + "/#query=" + strings.ReplaceAll("SELECT ?s WHERE { ?s ?p 1999 }", " ", "%20") + "&mode=in-place&timeout=7"
	bt.Do(t, ctx, chromedp.Navigate(shared), chromedp.WaitVisible(chromedp.ID("query")),
		bt.WaitFor(`document.getElementById("query").value === "SELECT ?s WHERE { ?s ?p 1999 }"`))
	if m, to := bt.Eval[string](t, ctx, `document.getElementById("mode").value`), bt.Eval[string](t, ctx, `document.getElementById("timeout").value`); m != "in-place" || to != "7" {
		t.Errorf("the share link set mode %q, timeout %q", m, to)
	}
	if n := bt.Eval[int](t, ctx, `document.querySelectorAll("#tabs [role=tab]").length`); n != 3 {
		t.Errorf("%d tabs after following the link", n)
	}
	// Closing a tab.
	bt.Do(t, ctx, chromedp.Click(chromedp.CSS(`#tabs .tab:last-child .tab-close`)), bt.WaitFor(`document.querySelectorAll("#tabs [role=tab]").length === 2`))
}

func TestConsolePlanAndChart(t *testing.T) {
	ctx, _, _ := startConsole(t)
	bt.Do(t, ctx, setEditor("PREFIX ex: <http://example.org/>\nSELECT ?p ?q WHERE { ?p a ex:Person ; ex:knows ?q . ?q ex:worksFor ex:acme }"),
		chromedp.Click(chromedp.ID("analyze")), bt.WaitFor(`document.querySelectorAll("#plan [role=treeitem]").length > 0`))
	sum := bt.Text(t, ctx, "#plan-summary")
	if strings.Contains(sum, "undefined") || !strings.Contains(sum, "2 rows") || !strings.Contains(sum, "fabric reads") {
		t.Errorf("plan summary %q", sum)
	}
	tree := bt.Text(t, ctx, "#plan")
	for _, want := range []string{"ex:knows", "ex:worksFor", "rows (est. / actual)"} {
		if !strings.Contains(tree, want) {
			t.Errorf("plan tree lacks %q: %s", want, tree)
		}
	}
	if n := bt.Eval[int](t, ctx, `document.querySelectorAll("#plan .bar.act").length`); n == 0 {
		t.Error("no actual-rows bars")
	}
	if n := bt.Eval[int](t, ctx, `document.querySelectorAll("#plan .mode").length`); n == 0 {
		t.Error("no step modes")
	}
	// Fork-join: each exploration step has bars for its 4 shards, whose
	// rows add up to the step's.
	bt.Do(t, ctx, chromedp.SetValue(chromedp.ID("mode"), "fork-join"), chromedp.Click(chromedp.ID("analyze")),
		bt.WaitFor(`document.querySelectorAll("#plan .shard-bars").length > 0`))
	if got := bt.Eval[string](t, ctx, `[...document.querySelectorAll("#plan .plan-item")].filter(i => i.querySelector(".shard-bars")).map(i =>
		i.querySelector(".c-rows .fig").textContent.split(" / ")[1] + "=" + [...i.querySelectorAll(".shard-row")].map(r => parseInt(r.children[1].textContent)).reduce((a, b) => a + b, 0) + "/" + i.querySelectorAll(".shard-row").length).join(" ")`); !regexp.MustCompile(`^(\d+=\d+/4 ?)+$`).MatchString(got) {
		t.Errorf("per-shard bars: %s", got)
	} else {
		for _, f := range strings.Fields(got) {
			if a, b, _ := strings.Cut(strings.TrimSuffix(f, "/4"), "="); a != b {
				t.Errorf("a step's rows %s, its shards' rows %s", a, b)
			}
		}
	}
	// A GROUP BY charted by a chosen column.
	bt.Do(t, ctx, chromedp.Click(chromedp.ID("view-table")))
	runQuery(t, ctx, "SELECT ?class (COUNT(?x) AS ?n) WHERE { ?x a ?class } GROUP BY ?class ORDER BY DESC(?n)")
	bt.Do(t, ctx, chromedp.Click(chromedp.ID("view-chart")), bt.WaitFor(`document.querySelectorAll("#chart svg rect.chart-bar").length > 0`))
	if n := bt.Eval[int](t, ctx, `document.querySelectorAll("#chart svg rect.chart-bar").length`); n != 3 {
		t.Errorf("%d bars", n)
	}
	labels := bt.Eval[string](t, ctx, `[...document.querySelectorAll("#chart .chart-label")].map(e => e.textContent).join(",")`)
	if labels != "ex:Person,ex:Company,ex:Robot" && labels != "ex:Person,ex:Robot,ex:Company" {
		t.Errorf("bar labels %q", labels)
	}
	if w0, w1 := bt.Eval[float64](t, ctx, `document.querySelectorAll("#chart rect.chart-bar")[0].getAttribute("width")*1`),
		bt.Eval[float64](t, ctx, `document.querySelectorAll("#chart rect.chart-bar")[1].getAttribute("width")*1`); !(w0 > 2.5*w1 && w0 < 3.5*w1) {
		t.Errorf("bar widths %v and %v for counts 3 and 1", w0, w1)
	}
	// By another label column: the class as value is not numeric, so the
	// value column offers ?n only.
	if got := bt.Eval[string](t, ctx, `[...document.querySelectorAll("#chart-value option")].map(o => o.value).join(",")`); got != "n" {
		t.Errorf("value columns %q", got)
	}
}

func TestConsoleStorePage(t *testing.T) {
	ctx, _, _ := startConsole(t)
	bt.Do(t, ctx, chromedp.Click(chromedp.ID("page-store-btn")), bt.WaitFor(`document.querySelectorAll("#store-preds tbody tr").length > 0`))
	figs := bt.Text(t, ctx, "#store-figures")
	if !strings.Contains(figs, "20triples") {
		t.Errorf("figures %q", figs)
	}
	if got := bt.Text(t, ctx, "#store-preds tbody tr:first-child td:first-child"); got != "rdf:type" && got != "ex:name" {
		t.Errorf("top predicate %q", got)
	}
	if n := bt.Eval[int](t, ctx, `document.querySelectorAll("#store-shards .bar-row").length`); n != 4 {
		t.Errorf("%d shard bars", n)
	}
	if bt.Eval[bool](t, ctx, `document.getElementById("update-form").hidden`) {
		t.Fatal("the update form is hidden with writes enabled")
	}
	// A wrong token is refused; the right one writes.
	bt.Do(t, ctx, chromedp.SetValue(chromedp.ID("update-text"), `INSERT DATA { <http://example.org/eve> a <http://example.org/Person> }`),
		chromedp.SendKeys(chromedp.ID("update-token"), "wrong"), chromedp.Click(chromedp.ID("update-run")),
		bt.WaitFor(`document.getElementById("update-status").textContent.startsWith("HTTP 403")`))
	bt.Do(t, ctx, chromedp.SetValue(chromedp.ID("update-token"), testToken), chromedp.Click(chromedp.ID("update-run")),
		bt.WaitFor(`document.getElementById("update-status").textContent.startsWith("Update done")`),
		bt.WaitFor(`document.getElementById("store-figures").textContent.includes("21triples")`))
	// A predicate links to a query of it.
	bt.Do(t, ctx, chromedp.Click(chromedp.CSS(`#store-classes a.describe`)), bt.WaitFor(`!document.getElementById("page-query").hidden && /rows? in/.test(document.getElementById("status").textContent)`))
	if n := bt.Eval[int](t, ctx, `document.querySelectorAll("#results tbody tr").length`); n != 4 {
		t.Errorf("%d instances of the top class after the update", n)
	}
}

// TestConsoleScreenshots writes the README's screenshots of the console
// on LUBM-1 into $WUKONGD_SCREENSHOTS (skipped without it):
//
//	WUKONGD_SCREENSHOTS=$PWD/docs go test ./service -run TestConsoleScreenshots
func TestConsoleScreenshots(t *testing.T) {
	dir := os.Getenv("WUKONGD_SCREENSHOTS")
	if dir == "" {
		t.Skip("WUKONGD_SCREENSHOTS is not set")
	}
	s := newService(t, lubm1Store(t, 4), Options{})
	_, hs := serve(t, s, nil)
	ctx := bt.Start(t)
	shot := func(name string, h int64) { bt.Screenshot(t, ctx, filepath.Join(dir, name), 1280, h) }
	bt.Do(t, ctx, chromedp.Navigate(hs.URL+"/"), chromedp.WaitVisible(chromedp.ID("query")))
	// Wait for the term index.
	bt.Do(t, ctx, bt.WaitFor(`(async () => (await (await fetch("/api/complete?kind=entity&q=x&limit=1")).json()).indexing !== true)()`))
	const q = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n" +
		"SELECT ?student ?course ?teacher WHERE {\n" +
		"  ?student a ub:GraduateStudent ;\n" +
		"           ub:takesCourse ?course .\n" +
		"  ?teacher ub:teacherOf ?course ;\n" +
		"           ub:worksFor <http://www.Department0.University0.edu> .\n" +
		"}\nLIMIT 500"
	runQuery(t, ctx, q)
	bt.Do(t, ctx, setEditor(strings.Replace(q, "ub:takesCourse ?course .", "ub:", 1)),
		chromedp.Evaluate[chromedp.Void](`(() => { const q = document.getElementById("query"); const i = q.value.indexOf("ub:\n") + 3; q.setSelectionRange(i, i); })()`),
		chromedp.SendKeys(chromedp.ID("query"), "t"),
		bt.WaitFor(`!document.getElementById("completions").hidden`))
	shot("console-query.png", 760)
	bt.Do(t, ctx, press("Escape"))
	runQuery(t, ctx, q)
	bt.Do(t, ctx, chromedp.Click(chromedp.CSS(`#results th:nth-child(2) button`)))
	shot("console-results.png", 900)
	bt.Do(t, ctx, chromedp.SetValue(chromedp.ID("mode"), "fork-join"), chromedp.Click(chromedp.ID("analyze")), bt.WaitFor(`document.querySelectorAll("#plan [role=treeitem]").length > 0`),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("pane-plan").scrollIntoView()`))
	shot("console-plan.png", 900)
	bt.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`scrollTo(0, 0)`), chromedp.SetValue(chromedp.ID("mode"), "auto"))
	runQuery(t, ctx, "SELECT ?class (COUNT(?x) AS ?instances) WHERE { ?x a ?class } GROUP BY ?class ORDER BY DESC(?instances)")
	bt.Do(t, ctx, chromedp.Click(chromedp.ID("view-chart")), bt.WaitFor(`document.querySelectorAll("#chart rect").length > 0`),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("views").scrollIntoView()`))
	shot("console-chart.png", 800)
	runQuery(t, ctx, "DESCRIBE <http://www.Department0.University0.edu/FullProfessor0>")
	bt.Do(t, ctx, chromedp.Click(chromedp.ID("view-graph")), bt.WaitFor(`document.querySelectorAll("#graph g.node").length > 0`),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("views").scrollIntoView()`))
	shot("console-graph.png", 900)
	bt.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`scrollTo(0, 0)`), chromedp.Click(chromedp.ID("page-store-btn")),
		bt.WaitFor(`document.querySelectorAll("#store-preds tbody tr").length > 0`))
	shot("console-store.png", 900)
}

// TestConsoleKeyboard drives the console's tabs, views and plan tree from
// the keyboard and checks that every control has an accessible name.
func TestConsoleKeyboard(t *testing.T) {
	ctx, _, _ := startConsole(t)
	unnamed := bt.Eval[string](t, ctx, `[...document.querySelectorAll("button, input, select, textarea")].filter(e => {
		if (e.getAttribute("aria-label") || e.closest("label") || (e.id && document.querySelector("label[for=" + e.id + "]"))) return false;
		return e.tagName !== "BUTTON" || e.textContent.trim() === "";
	}).map(e => e.id || e.outerHTML.slice(0, 60)).join(", ")`)
	if unnamed != "" {
		t.Errorf("controls without an accessible name: %s", unnamed)
	}
	runQuery(t, ctx, "PREFIX ex: <http://example.org/>\nSELECT ?p ?q WHERE { ?p ex:knows ?q }")
	// Result views: arrows move the selection and the focus.
	bt.Do(t, ctx, chromedp.Focus(chromedp.ID("view-table")), chromedp.KeyEvent(kb.ArrowRight))
	if got := bt.Eval[string](t, ctx, `document.activeElement.id + " " + document.getElementById("view-raw").getAttribute("aria-selected") + " " + document.getElementById("pane-raw").hidden`); got != "view-raw true false" {
		t.Errorf("after ArrowRight on the Table view: %s", got)
	}
	// The plan tree.
	bt.Do(t, ctx, chromedp.Click(chromedp.ID("analyze")), bt.WaitFor(`document.querySelectorAll("#plan [role=treeitem]").length > 1`),
		chromedp.Focus(chromedp.CSS(`#plan [role=treeitem][tabindex="0"]`)), chromedp.KeyEvent(kb.ArrowDown))
	if got := bt.Eval[int](t, ctx, `[...document.querySelectorAll("#plan [role=treeitem]")].indexOf(document.activeElement)`); got != 1 {
		t.Errorf("ArrowDown in the plan tree focused item %d", got)
	}
	// Query tabs: Alt+T opens one, arrows move between them.
	bt.Do(t, ctx, chromedp.KeyEvent("t", chromedp.KeyModifiers(chromedp.ModifierAlt)), bt.WaitFor(`document.querySelectorAll("#tabs [role=tab]").length === 2`),
		chromedp.Focus(chromedp.CSS(`#tabs [role=tab][aria-selected=true]`)), chromedp.KeyEvent(kb.ArrowRight))
	if got := bt.Eval[string](t, ctx, `document.activeElement.getAttribute("aria-selected") + " " + [...document.querySelectorAll("#tabs [role=tab]")].indexOf(document.activeElement)`); got != "true 0" {
		t.Errorf("ArrowRight on the last tab: %s", got)
	}
	if q := bt.Eval[string](t, ctx, `document.getElementById("query").value`); !strings.Contains(q, "ex:knows") {
		t.Errorf("the first tab's query is %q", q)
	}
}
