package export

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's chromium package, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

// mermaidBundle is the browser bundle of the mermaid npm package pinned
// with the test peers (.ci/peers installs it).
const mermaidBundle = "../../testdata/peers/node_modules/mermaid/dist/mermaid.min.js"

// browser starts a headless Chromium of its own (a fresh profile, no
// network of its own making) for one test, or skips the test saying why.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("Chromium is not installed at %s (bash .ci/run installs Debian's chromium package)", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute) // generous: the machine is shared
	t.Cleanup(func() { cancelTime(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", chromiumPath, err)
	}
	return ctx
}

// eval evaluates a JavaScript expression in the page (awaiting it when it
// is a promise).
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %.80s: %v", js, err)
	}
	return v
}

// The HTML export opens in a real browser with no network: its search
// finds a frame, a collapsed frame expands, and the payload carrying
// </script><script> and an onerror handler runs nothing.
func TestHTMLExportWorksInHeadlessChromium(t *testing.T) {
	page, _ := exportString(t, goldenSession, Options{Format: FormatHTML})
	path := filepath.Join(t.TempDir(), "session.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path), chromedp.WaitReady(chromedp.CSS("#records"))); err != nil {
		t.Fatal(err)
	}
	title := eval[string](t, ctx, `document.title`)
	scripts := eval[int](t, ctx, `document.scripts.length`)
	images := eval[int](t, ctx, `document.images.length`)
	payload := eval[string](t, ctx, `document.querySelector('#line-6 pre').textContent`)
	openBefore := eval[bool](t, ctx, `document.querySelector('#line-7 details').open`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#line-7 summary"))); err != nil {
		t.Fatal(err)
	}
	openAfter := eval[bool](t, ctx, `document.querySelector('#line-7 details').open`)
	preHeight := eval[int](t, ctx, `document.querySelector('#line-7 pre').offsetHeight`)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#search"), "Unknown tool")); err != nil {
		t.Fatal(err)
	}
	hits := eval[string](t, ctx, `document.getElementById('hits').textContent`)
	shown := eval[int](t, ctx, `[...document.querySelectorAll('.rec')].filter(r => !r.hidden).length`)
	if title != "rpctap session demo" || scripts != 1 || images != 0 {
		t.Errorf("the payload ran or made elements: title %q, %d scripts, %d images", title, scripts, images)
	}
	if !strings.Contains(payload, `</script><script>document.title='pwned'</script>`) {
		t.Errorf("the payload does not show as text: %q", payload)
	}
	if openBefore || !openAfter || preHeight == 0 {
		t.Errorf("a collapsed frame: open %v, after a click %v, %d px high", openBefore, openAfter, preHeight)
	}
	if shown != 1 || hits != "1 of 13 records match" {
		t.Errorf("searching for the error's message: %d shown, %q", shown, hits)
	}
}

// The Mermaid export parses and renders with the real mermaid library, a
// folded one too.
func TestMermaidExportRendersWithMermaidInHeadlessChromium(t *testing.T) {
	bundle, err := os.ReadFile(mermaidBundle)
	if err != nil {
		t.Skipf("mermaid is not installed (%v): bash .ci/peers installs it with the test peers", err)
	}
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	eval[any](t, ctx, string(bundle)+"\n;0")
	eval[any](t, ctx, `mermaid.initialize({startOnLoad: false, securityLevel: 'strict'}), 0`)
	for _, max := range []int{0, 4} {
		diagram, _ := exportString(t, goldenSession, Options{Format: FormatMermaid, MaxFrames: max})
		text, _ := json.Marshal(diagram)
		js := `mermaid.parse(` + string(text) + `).then(() => mermaid.render('d` + string(rune('0'+max)) + `', ` + string(text) + `)).then(r => 'svg ' + r.svg.length, e => 'error: ' + (e && e.message || e))`
		if result := eval[string](t, ctx, js); !strings.HasPrefix(result, "svg ") {
			t.Errorf("max-frames %d: mermaid says %s\n%s", max, result, diagram)
		}
	}
	// The test can fail: mermaid rejects a diagram with a bad line.
	if result := eval[string](t, ctx, `mermaid.parse("sequenceDiagram\n    H->>S: a;b#c\n    H->>>S").then(() => 'ok', e => 'error')`); result != "error" {
		t.Errorf("mermaid took a bad diagram: %s", result)
	}
}
