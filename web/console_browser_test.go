package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	bt "github.com/wukongd/wukongd/internal/browsertest"
	"github.com/wukongd/wukongd/rdf"
)

// setQuery replaces the editor text as typing would (the input event
// drives the highlighter).
func setQuery(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => { const q = document.getElementById("query"); q.value = ` + bt.JS(text) +
		`; q.dispatchEvent(new Event("input")); })()`)
}

func TestConsoleInBrowser(t *testing.T) {
	ctx := bt.Start(t)
	xss := `<img src=x onerror="window.pwned=1">`
	b := newTestBackend(append(append([]rdf.Triple(nil), baseTriples...),
		rdf.Triple{S: ex("mallory"), P: ex("knows"), O: rdf.NewLiteral(xss, "")}))
	srv, err := New(Options{Backend: b, Examples: []Example{
		{Name: "knows", Description: "who knows whom", Query: selectKnows},
		{Name: "<b>bold</b>", Query: "ASK { ?s ?p ?o }"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := newHTTPTestServer(t, srv)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// Open the console; pick the first example; run it.
	must(chromedp.Do(ctx,
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("query")),
		bt.WaitFor(`document.querySelectorAll("#examples option").length === 3`),
	))
	if got := bt.Text(t, ctx, "#examples option:nth-child(3)"); got != "<b>bold</b>" {
		t.Errorf("example name rendered as %q", got)
	}
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](
		`(() => { const s = document.getElementById("examples"); s.value = "0"; s.dispatchEvent(new Event("change")); })()`)))
	if got := bt.Eval[string](t, ctx, `document.getElementById("query").value`); got != selectKnows {
		t.Errorf("editor holds %q", got)
	}
	if n := bt.Eval[int](t, ctx, `document.querySelectorAll("#highlight span.tok-kw").length`); n < 2 {
		t.Errorf("%d highlighted keywords", n)
	}
	must(chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("run")),
		bt.WaitFor(`document.querySelectorAll("#results tbody tr").length > 0`),
	))
	if n := bt.Eval[int](t, ctx, `document.querySelectorAll("#results tbody tr").length`); n != 4 {
		t.Errorf("%d result rows", n)
	}
	table := bt.Text(t, ctx, "#results")
	for _, want := range []string{"?s", "?o", "ex:alice", "_:b1", xss} {
		if !strings.Contains(table, want) {
			t.Errorf("result table lacks %q: %s", want, table)
		}
	}
	if st := bt.Text(t, ctx, "#status"); !strings.Contains(st, "4 rows in") {
		t.Errorf("status %q", st)
	}
	if n := bt.Eval[int](t, ctx, `document.querySelectorAll("#results img").length`); n != 0 || bt.Eval[bool](t, ctx, `window.pwned === 1`) {
		t.Errorf("data was rendered as HTML")
	}

	// The plan view.
	must(chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("analyze")),
		bt.WaitFor(`document.querySelectorAll("#plan [role=treeitem]").length > 0`),
	))
	plan := bt.Text(t, ctx, "#plan")
	for _, want := range []string{"index-to-var", "in-place", "fork-join", "out", "1.1", "292 B"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q: %s", want, plan)
		}
	}
	if sum := bt.Text(t, ctx, "#plan-summary"); !strings.Contains(sum, "4 rows") || !strings.Contains(sum, "3 fabric reads") || strings.Contains(sum, "undefined") {
		t.Errorf("plan summary %q", sum)
	}

	// A long query, cancelled from the console: the server stops it.
	for len(b.started) > 0 {
		<-b.started
	}
	must(chromedp.Do(ctx, setQuery("SELECT * { SLEEP }"), chromedp.Click(chromedp.ID("run"))))
	var started string
	for !strings.HasPrefix(started, "c") {
		select {
		case started = <-b.started:
		case <-ctx.Done():
			t.Fatal("the long query never reached the backend")
		}
	}
	if bt.Eval[bool](t, ctx, `document.getElementById("cancel").disabled`) {
		t.Error("cancel is disabled while the query runs")
	}
	must(chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("cancel")),
		bt.WaitFor(`document.getElementById("status").textContent.startsWith("Cancelled")`),
	))
	select {
	case id := <-b.cancelled:
		if id != started {
			t.Errorf("backend cancelled %q, started %q", id, started)
		}
	case <-ctx.Done():
		t.Fatal("the server never stopped the cancelled query")
	}

	// A syntax error shows its position.
	must(chromedp.Do(ctx,
		setQuery("SELECT * {\n SYNTAX_ERROR }"),
		chromedp.Click(chromedp.ID("run")),
		bt.WaitFor(`document.getElementById("status").textContent.includes("line 2, column 5")`),
	))
}
