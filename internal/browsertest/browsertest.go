// Package browsertest drives headless Chromium (chromedp) for the
// console's browser tests: it starts the browser, evaluates JavaScript,
// waits for conditions and captures screenshots. Only tests import it.
package browsertest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumPath is where Debian's chromium package installs the browser.
const ChromiumPath = "/usr/bin/chromium"

// Start opens a new tab of a headless Chromium shared by the tests of the
// process, or skips t when the browser is absent and we are not under CI
// (.ci/run exports CI=1 and installs chromium). The tab closes when t
// ends; actions on its context time out after 90s. The browser dies with
// the test process (chromedp starts it with a parent-death signal).
func Start(t testing.TB) context.Context {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("browser test skipped: %s not found (apt-get install -y chromium; under CI=1 this fails)", ChromiumPath)
		}
		t.Fatalf("CI is set but %s is missing: %v", ChromiumPath, err)
	}
	shared.once.Do(startBrowser)
	if shared.err != nil {
		t.Fatalf("cannot start chromium: %v", shared.err)
	}
	tctx, cancelTab := chromedp.NewContext(shared.ctx)
	if err := chromedp.Do(tctx); err != nil {
		cancelTab()
		t.Fatalf("cannot open a tab: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(tctx, 5*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelTab() })
	return ctx
}

var shared struct {
	once sync.Once
	ctx  context.Context
	err  error
}

func startBrowser() {
	// Profiles of earlier runs (the browser dies with its process, the
	// directory stays): removed after a day.
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), "browsertest-*"))
	for _, d := range old {
		if fi, err := os.Stat(d); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			os.RemoveAll(d)
		}
	}
	dir, err := os.MkdirTemp("", "browsertest-")
	if err != nil {
		shared.err = err
		return
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath),
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
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(dir),
	}
	actx, _ := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, _ := chromedp.NewContext(actx)
	// The first run starts the browser; it lives as long as the process.
	shared.ctx, shared.err = bctx, chromedp.Do(bctx)
}

// Do runs actions, failing t on error.
func Do(t testing.TB, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// Eval evaluates a JavaScript expression and decodes its value into a T.
func Eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// Text returns the text content of the first element matching a CSS
// selector.
func Text(t testing.TB, ctx context.Context, sel string) string {
	t.Helper()
	return Eval[string](t, ctx, `(() => { const e = document.querySelector(`+JS(sel)+`); return e ? e.textContent : "<no "+`+JS(sel)+`+">"; })()`)
}

// WaitFor polls a JavaScript condition until it holds (60 s at most: a loaded 2-core CI machine starves the renderer).
func WaitFor(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(20*time.Millisecond))
}

// JS quotes s as a JavaScript string literal.
func JS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Screenshot captures the page (the viewport at 1280×900 unless
// resized) as PNG into path.
func Screenshot(t testing.TB, ctx context.Context, path string, width, height int64) {
	t.Helper()
	Do(t, ctx, chromedp.EmulateViewport(width, height), chromedp.Sleep(150*time.Millisecond))
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
