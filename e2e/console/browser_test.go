package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	apiconsole "wharf/api/console"
)

// chromium is Debian's browser (apt-get install chromium).
const chromium = "/usr/bin/chromium"

// waitFor bounds every wait for the page: generous, the machine is shared.
const waitFor = 30 * time.Second

// requireBrowser skips the test when Chromium or the console build is
// missing, unless WHARF_REQUIRE_BROWSER=1, which makes it a failure.
func requireBrowser(t *testing.T) {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath(chromium); err != nil {
		missing = "Chromium is not installed (apt-get install chromium fonts-dejavu-core)"
	} else if !apiconsole.New().Built() {
		missing = "the console is not built into this test binary (make console, then run the tests again)"
	} else if _, err := os.Stat(axePath); err != nil {
		missing = "axe-core is not installed (console/node_modules: make console runs npm ci)"
	}
	if missing == "" {
		return
	}
	if os.Getenv("WHARF_REQUIRE_BROWSER") == "1" {
		t.Fatalf("the browser tests cannot run: %s (WHARF_REQUIRE_BROWSER=1)", missing)
	}
	t.Skipf("browser tests skipped: %s; WHARF_REQUIRE_BROWSER=1 makes this a failure", missing)
}

// browser is one headless Chromium; each page runs in a browser context of
// its own (its own cookies and storage), as a separate person would.
type browser struct {
	ctx  context.Context
	base string // the api's origin
}

func startBrowser(t *testing.T, base string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.DisableGPU,
		// No connection anywhere but the api under test.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-first-run", true),
		// The calls panel takes the microphone: Chromium's fake device (a
		// beep) without asking, so that a test can answer a call.
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.WindowSize(1280, 860),
	}
	opts = append(chromedp.DefaultExecAllocatorOptions[:], opts...)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium's sandbox refuses root
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start Chromium: %v", err)
	}
	return &browser{ctx: ctx, base: base}
}

// page is one tab in a fresh browser context, with what it logged and every
// request it made.
type page struct {
	t      *testing.T // the test now using the page (a subtest)
	owner  *testing.T // the test whose end closes it
	ctx    context.Context
	base   string
	name   string
	origin string

	mu       sync.Mutex
	log      []string
	requests []string
	outside  []string
	problems []string // exceptions and refusals by the Content-Security-Policy
	// allowed are URLs outside the api's origin the test lets the page
	// load (the simulator's stand-in for the provider's signup script).
	allowed []string
	saved   bool // artifacts of a failure written
}

// newPage opens a tab as a new visitor named name (used in artifact names).
// When the test fails, the tab's screenshot and log are saved (artifactDir).
func (b *browser) newPage(t *testing.T, name string) *page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	u, _ := url.Parse(b.base)
	p := &page{t: t, owner: t, ctx: ctx, base: b.base, name: name, origin: u.Scheme + "://" + u.Host}
	if err := chromedp.Listen(ctx, p.observe); err != nil {
		t.Fatalf("listen to the page: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 860)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.t = t
		if t.Failed() && !p.saved {
			p.saveArtifacts("failure")
		}
		p.assertClean()
	})
	return p
}

// allow lets the page request this exact URL outside the api's origin.
func (p *page) allow(u string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.allowed = append(p.allowed, u)
}

// in hands the page to a subtest.
func (p *page) in(t *testing.T) *page {
	p.t = t
	return p
}

// fatalf saves the page's screenshot and log, then fails the test.
func (p *page) fatalf(format string, args ...any) {
	p.t.Helper()
	if !p.saved {
		p.saveArtifacts("failure")
		p.saved = true
	}
	p.t.Fatalf(format, args...)
}

// observe runs on chromedp's reading goroutine: it only records.
func (p *page) observe(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		u := ev.Request.URL
		p.requests = append(p.requests, ev.Request.Method+" "+u)
		// data: URLs are no request to anyone: Chromium draws its own
		// controls' icons (a date input's calendar) with them; nor are the
		// page's own blob: URLs (the inbox shows media it read into blobs),
		// which are of its origin.
		if !strings.HasPrefix(u, p.origin+"/") && u != p.origin && !strings.HasPrefix(u, "data:") &&
			!strings.HasPrefix(u, "blob:"+p.origin+"/") && !slices.Contains(p.allowed, u) {
			p.outside = append(p.outside, u)
		}
	case *runtime.EventConsoleAPICalled:
		var parts []string
		for _, a := range ev.Args {
			if a.Description != "" {
				parts = append(parts, a.Description)
			} else {
				parts = append(parts, string(a.Value))
			}
		}
		p.log = append(p.log, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(parts, " ")))
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text += " " + d.Exception.Description
		}
		p.log = append(p.log, "exception: "+text)
		p.problems = append(p.problems, "uncaught exception: "+text)
	case *cdplog.EventEntryAdded:
		e := ev.Entry
		line := fmt.Sprintf("%s %s: %s %s", e.Source, e.Level, e.Text, e.URL)
		p.log = append(p.log, line)
		if strings.Contains(e.Text, "Content Security Policy") {
			p.problems = append(p.problems, "refused by the Content-Security-Policy: "+e.Text)
		}
	}
}

// assertClean fails the test when the page went outside the api's origin,
// threw, or broke its Content-Security-Policy.
func (p *page) assertClean() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.outside) > 0 {
		p.t.Errorf("%s: the browser made requests outside %s: %v", p.name, p.origin, p.outside)
	}
	for _, pr := range p.problems {
		p.t.Errorf("%s: %s", p.name, pr)
	}
	if len(p.requests) == 0 && !p.t.Failed() {
		p.t.Errorf("%s: no request was seen: the network listener is broken", p.name)
	}
}

// artifactDir is where screenshots and logs go: WHARF_SCREENSHOTS, else a
// directory under the system's temporary one that outlives the test (the
// test's own TempDir is removed when it ends).
func artifactDir(t *testing.T) string {
	dir := os.Getenv("WHARF_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "wharf-console-e2e")
	}
	dir = filepath.Join(dir, regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(t.Name(), "_"))
	_ = os.MkdirAll(dir, 0o755)
	return dir
}

// saveArtifacts writes the tab's screenshot and log.
func (p *page) saveArtifacts(label string) {
	dir := artifactDir(p.t)
	base := filepath.Join(dir, p.name+"-"+label)
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		_ = os.WriteFile(base+".png", png, 0o644)
	}
	p.mu.Lock()
	text := "requests:\n" + strings.Join(p.requests, "\n") + "\n\nlog:\n" + strings.Join(p.log, "\n") + "\n"
	p.mu.Unlock()
	_ = os.WriteFile(base+".log", []byte(text), 0o644)
	p.t.Logf("%s: screenshot and browser log in %s.{png,log}", p.name, base)
}

// shot saves a screenshot of the page as it is, when WHARF_SCREENSHOTS names
// a directory (to look at the pages; docs/CONSOLE.md).
func (p *page) shot(label string) {
	if os.Getenv("WHARF_SCREENSHOTS") == "" {
		return
	}
	dir := artifactDir(p.t)
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("%s: screenshot: %v", p.name, err)
	}
	_ = os.WriteFile(filepath.Join(dir, p.name+"-"+label+".png"), png, 0o644)
}

// do runs actions with the waiting bound, failing the test with what the
// page was doing.
func (p *page) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitFor)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.fatalf("%s: %s: %v", p.name, what, err)
	}
}

// eval evaluates a JavaScript expression (with the helpers of prelude).
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitFor)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](withPrelude(expr), chromedp.EvalAwaitPromise))
	if err != nil {
		p.fatalf("%s: evaluate %s: %v", p.name, expr, err)
	}
	return v
}

// prelude finds elements as a person does: by the text of their label, by
// role and accessible name, by visible text.
const prelude = `
const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
const shown = (e) => !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
const labelled = (name) => {
  for (const l of document.querySelectorAll('label')) {
    if (norm(l.textContent) === name && l.control && shown(l.control)) return l.control;
  }
  return null;
};
// The accessible name, near enough: aria-label, or the text without what
// is hidden from assistive technology.
const textOf = (e) => [...e.childNodes].map((n) => n.nodeType === 3 ? n.textContent
  : n.nodeType === 1 && n.getAttribute('aria-hidden') !== 'true' ? textOf(n) : '').join('');
const named = (e) => norm(e.getAttribute('aria-label') || textOf(e));
const byRole = (role, name) => {
  const sel = { button: 'button, [role=button], input[type=submit]', link: 'a[href], [role=link]',
    heading: 'h1, h2, h3, h4, [role=heading]', dialog: 'dialog[open], [role=dialog]', alert: '[role=alert]' }[role];
  return [...document.querySelectorAll(sel)].find((e) => shown(e) && (name === null || named(e) === name)) || null;
};
const pageText = () => norm(document.body.innerText);
`

func withPrelude(expr string) string {
	return "(() => {" + prelude + "\nreturn (" + expr + ");\n})()"
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// waitUntil waits until the expression is truthy.
func (p *page) waitUntil(what, expr string) {
	p.t.Helper()
	p.do(what, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Poll[chromedp.Void](withPrelude(expr), chromedp.WithPollingTimeout(waitFor), chromedp.WithPollingInterval(50*time.Millisecond))(ctx, t)
		return err
	}))
}

func (p *page) open(path string) {
	p.t.Helper()
	p.do("open "+path, chromedp.Navigate(p.base+path))
}

func (p *page) reload() {
	p.t.Helper()
	p.do("reload", chromedp.Reload())
}

// fill types value into the control labelled label, replacing its value.
func (p *page) fill(label, value string) {
	p.t.Helper()
	sel := chromedp.JSPath(withPrelude("labelled(" + js(label) + ")"))
	p.do("fill "+label, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[chromedp.Void](withPrelude(`(() => { const e = labelled(`+js(label)+`); if (e) { e.value = ''; e.dispatchEvent(new Event('input', { bubbles: true })); } })()`))(ctx, t)
		return err
	}), chromedp.SendKeys(sel, value))
}

// click clicks what has this role (button, link) and accessible name.
func (p *page) click(role, name string) {
	p.t.Helper()
	p.do("click "+role+" "+name, chromedp.Click(chromedp.JSPath(withPrelude("byRole("+js(role)+", "+js(name)+")"))))
}

// toggle clicks the control labelled label (a checkbox or switch).
func (p *page) toggle(label string) {
	p.t.Helper()
	p.do("toggle "+label, chromedp.Click(chromedp.JSPath(withPrelude("labelled("+js(label)+")"))))
}

// choose picks the option shown as option in the select labelled label.
func (p *page) choose(label, option string) {
	p.t.Helper()
	p.waitUntil("the choice "+label, "labelled("+js(label)+")")
	ok := eval[bool](p, `(() => {
  const s = labelled(`+js(label)+`);
  const o = [...s.options].find((o) => norm(o.text) === `+js(option)+`);
  if (!o) return false;
  s.value = o.value;
  s.dispatchEvent(new Event('change', { bubbles: true }));
  return true;
})()`)
	if !ok {
		p.fatalf("%s: %q has no option %q", p.name, label, option)
	}
}

// see waits for text to show on the page.
func (p *page) see(text string) {
	p.t.Helper()
	p.waitUntil("see "+js(text), "pageText().includes("+js(text)+")")
}

// seeRole waits for an element of the role and name (name "" for any).
func (p *page) seeRole(role, name string) {
	p.t.Helper()
	n := "null"
	if name != "" {
		n = js(name)
	}
	p.waitUntil("see "+role+" "+js(name), "byRole("+js(role)+", "+n+")")
}

// has reports whether an element of the role and name is shown now.
func (p *page) has(role, name string) bool {
	p.t.Helper()
	return eval[bool](p, "!!byRole("+js(role)+", "+js(name)+")")
}

// path is the page's path.
func (p *page) path() string { return eval[string](p, "location.pathname + location.search") }

// dark switches Chromium's preferred colour scheme.
func (p *page) prefersDark(on bool) {
	p.t.Helper()
	v := "light"
	if on {
		v = "dark"
	}
	p.do("prefers-color-scheme "+v, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}})
		return err
	}))
}

// axePath is axe-core as npm ci installed it for the console (never fetched
// at test time).
var axePath = filepath.Join("..", "..", "console", "node_modules", "axe-core", "axe.min.js")

var axeSource = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile(axePath)
	return string(b), err
})

type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any  `json:"target"`
		HTML   string `json:"html"`
	} `json:"nodes"`
}

// axe checks the page with axe-core: no violation of impact serious or
// critical. The script is evaluated through DevTools, which the page's
// Content-Security-Policy does not govern.
func (p *page) axe(what string) {
	p.t.Helper()
	src, err := axeSource()
	if err != nil {
		p.t.Fatalf("axe-core: %v", err)
	}
	ctx, cancel := context.WithTimeout(p.ctx, waitFor)
	defer cancel()
	loaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof window.axe === 'object'`))
	if err != nil {
		p.t.Fatalf("%s: %v", p.name, err)
	}
	if !loaded {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](src)); err != nil {
			p.t.Fatalf("%s: inject axe-core: %v", p.name, err)
		}
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](
		`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("%s: run axe-core: %v", p.name, err)
	}
	for _, v := range out {
		if v.Impact != "serious" && v.Impact != "critical" {
			continue
		}
		var where []string
		for _, n := range v.Nodes {
			where = append(where, fmt.Sprint(n.Target)+" "+n.HTML)
		}
		p.t.Errorf("%s, %s: accessibility (%s) %s: %s\n  %s", p.name, what, v.Impact, v.ID, v.Help, strings.Join(where, "\n  "))
	}
}

// upload gives the file input labelled label the file at path, once the
// input is there.
func (p *page) upload(label, path string) {
	p.t.Helper()
	p.waitUntil("the file input "+label, "labelled("+js(label)+")")
	p.do("upload to "+label, chromedp.SetUploadFiles(chromedp.JSPath(withPrelude("labelled("+js(label)+")")), []string{path}))
}

// download clicks the button named name, lets the browser save the file it
// starts into a fresh directory, and returns the saved file's name and
// content (the page hands files over as a blob link: api/download.ts).
func (p *page) download(name string) (string, []byte) {
	p.t.Helper()
	dir := p.t.TempDir()
	on := true
	params := cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir, EventsEnabled: &on,
		BrowserContextID: chromedp.FromContext(p.ctx).BrowserContextID}
	if _, err := chromedp.Call(p.ctx, cdpbrowser.SetDownloadBehavior, params); err != nil {
		p.fatalf("%s: allow downloads: %v", p.name, err)
	}
	p.click("button", name)
	deadline := time.Now().Add(waitFor)
	for {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".crdownload") {
				body, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err == nil && len(body) > 0 {
					return e.Name(), body
				}
			}
		}
		if time.Now().After(deadline) {
			p.fatalf("%s: %q downloaded nothing within %s", p.name, name, waitFor)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
