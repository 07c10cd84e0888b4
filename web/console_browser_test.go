package web

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wukongd/wukongd/rdf"
)

const chromiumPath = "/usr/bin/chromium"

// browser starts headless Debian chromium, or skips when it is absent and
// we are not under CI (.ci/run exports CI=1 and installs chromium).
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("browser test skipped: %s not found (apt-get install -y chromium; under CI=1 this fails)", chromiumPath)
		}
		t.Fatalf("CI is set but %s is missing: %v", chromiumPath, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelCtx := chromedp.NewContext(actx)
	// The first run starts the browser; it lives as long as bctx.
	if err := chromedp.Do(bctx); err != nil {
		cancelCtx()
		cancelAlloc()
		t.Fatalf("cannot start chromium: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// setQuery replaces the editor text as typing would (the input event
// drives the highlighter).
func setQuery(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => { const q = document.getElementById("query"); q.value = ` + jsString(text) +
		`; q.dispatchEvent(new Event("input")); })()`)
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "<", `\u003c`)
	return `"` + r.Replace(s) + `"`
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return v
}

func waitFor(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(20*time.Millisecond))
}

func TestConsoleInBrowser(t *testing.T) {
	ctx := browser(t)
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
		waitFor(`document.querySelectorAll("#examples option").length === 3`),
	))
	if got := textOf(t, ctx, "#examples option:nth-child(3)"); got != "<b>bold</b>" {
		t.Errorf("example name rendered as %q", got)
	}
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](
		`(() => { const s = document.getElementById("examples"); s.value = "0"; s.dispatchEvent(new Event("change")); })()`)))
	if got := eval[string](t, ctx, `document.getElementById("query").value`); got != selectKnows {
		t.Errorf("editor holds %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#highlight span.tok-kw").length`); n < 2 {
		t.Errorf("%d highlighted keywords", n)
	}
	must(chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("run")),
		waitFor(`document.querySelectorAll("#results tbody tr").length > 0`),
	))
	if n := eval[int](t, ctx, `document.querySelectorAll("#results tbody tr").length`); n != 4 {
		t.Errorf("%d result rows", n)
	}
	table := textOf(t, ctx, "#results")
	for _, want := range []string{"?s", "?o", "<http://example.org/alice>", "_:b1", xss} {
		if !strings.Contains(table, want) {
			t.Errorf("result table lacks %q: %s", want, table)
		}
	}
	if st := textOf(t, ctx, "#status"); !strings.Contains(st, "4 rows in") {
		t.Errorf("status %q", st)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#results img").length`); n != 0 || eval[bool](t, ctx, `window.pwned === 1`) {
		t.Errorf("data was rendered as HTML")
	}

	// The plan view.
	must(chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("analyze")),
		waitFor(`document.querySelectorAll("#plan tbody tr").length > 0`),
	))
	plan := textOf(t, ctx, "#plan")
	for _, want := range []string{"index-to-var", "in-place", "fork-join", "out", "1.1", "292 B"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q: %s", want, plan)
		}
	}
	if sum := textOf(t, ctx, "#plan-summary"); !strings.Contains(sum, "4 rows") || !strings.Contains(sum, "3 reads") {
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
	if eval[bool](t, ctx, `document.getElementById("cancel").disabled`) {
		t.Error("cancel is disabled while the query runs")
	}
	must(chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("cancel")),
		waitFor(`document.getElementById("status").textContent.startsWith("Cancelled")`),
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
		waitFor(`document.getElementById("status").textContent.includes("line 2, column 5")`),
	))
}
