package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

var script = strings.Repeat("console.log('wharf');\n", 100)

func built() *Handler {
	return newHandler(fstest.MapFS{
		"index.html":              {Data: []byte(`<!doctype html><script type="module" src="/console/assets/index-abc123.js"></script>`)},
		"assets/index-abc123.js":  {Data: []byte(script)},
		"assets/index-abc123.css": {Data: []byte("body{margin:0}")},
		"favicon.svg":             {Data: []byte("<svg/>")},
	})
}

func serve(h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func TestServesFilesAndFallsBackToThePage(t *testing.T) {
	h := built()
	cases := []struct {
		path, body, cache, ctype string
		status                   int
	}{
		{"/console/", "<!doctype html>", "no-cache", "text/html; charset=utf-8", 200},
		{"/console/index.html", "<!doctype html>", "no-cache", "text/html; charset=utf-8", 200},
		{"/console/assets/index-abc123.js", "console.log", "public, max-age=31536000, immutable", "text/javascript; charset=utf-8", 200},
		{"/console/assets/index-abc123.css", "body{", "public, max-age=31536000, immutable", "text/css; charset=utf-8", 200},
		{"/console/favicon.svg", "<svg/>", "no-cache", "image/svg+xml", 200},
		// The application's routes, known or not, get the page: its router
		// shows them (or its own "page not found").
		{"/console/campaigns/42", "<!doctype html>", "no-cache", "text/html; charset=utf-8", 200},
		{"/console/no/such/page", "<!doctype html>", "no-cache", "text/html; charset=utf-8", 200},
		// A missing file is not answered with the page.
		{"/console/assets/gone-123.js", "not found", "no-store", "text/plain; charset=utf-8", 404},
		{"/console/robots.txt", "not found", "no-store", "text/plain; charset=utf-8", 404},
		// Only the build is served, whatever the path climbs to.
		{"/console/../../go.mod", "not found", "no-store", "text/plain; charset=utf-8", 404},
		{"/console/../../../etc", "<!doctype html>", "no-cache", "text/html; charset=utf-8", 200},
	}
	for _, c := range cases {
		w := serve(h, "GET", c.path)
		if w.Code != c.status || !strings.HasPrefix(w.Body.String(), c.body) || w.Header().Get("Cache-Control") != c.cache ||
			w.Header().Get("Content-Type") != c.ctype {
			t.Errorf("%s: %d %q cache %q type %q", c.path, w.Code, clip(w.Body.String()), w.Header().Get("Cache-Control"), w.Header().Get("Content-Type"))
		}
		if got := w.Header().Get("Content-Security-Policy"); got != CSP {
			t.Errorf("%s: CSP %q", c.path, got)
		}
		if w.Header().Get("X-Content-Type-Options") != "nosniff" || w.Header().Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", c.path, w.Header())
		}
	}
}

func TestPolicyForbidsInlineScriptEvalAndFraming(t *testing.T) {
	for _, want := range []string{"default-src 'self'", "script-src 'self';", "style-src 'self';", "frame-ancestors 'none'", "object-src 'none'",
		"img-src 'self' blob:;", "media-src 'self' blob:;"} {
		if !strings.Contains(CSP, want) {
			t.Errorf("CSP lacks %q: %s", want, CSP)
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "data:", "*"} {
		if strings.Contains(CSP, bad) {
			t.Errorf("CSP allows %q: %s", bad, CSP)
		}
	}
}

func TestCompressesAndRevalidates(t *testing.T) {
	h := built()
	w := serve(h, "GET", "/console/assets/index-abc123.js", "Accept-Encoding", "br, gzip")
	if w.Header().Get("Content-Encoding") != "gzip" || !strings.Contains(w.Header().Get("Vary"), "Accept-Encoding") {
		t.Fatalf("not compressed: %v", w.Header())
	}
	zr, err := gzip.NewReader(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if string(plain) != script {
		t.Fatal("the compressed script differs")
	}
	if w := serve(h, "GET", "/console/assets/index-abc123.js", "Accept-Encoding", "gzip;q=0"); w.Header().Get("Content-Encoding") != "" || w.Body.String() != script {
		t.Fatalf("gzip;q=0 got %v", w.Header())
	}

	page := serve(h, "GET", "/console/")
	etag := page.Header().Get("ETag")
	if etag == "" {
		t.Fatal("the page has no ETag")
	}
	if w := serve(h, "GET", "/console/deep/link", "If-None-Match", etag); w.Code != http.StatusNotModified {
		t.Fatalf("revalidation: %d", w.Code)
	}
	if w := serve(h, "HEAD", "/console/"); w.Code != 200 || w.Body.Len() != 0 {
		t.Fatalf("HEAD: %d, %d bytes", w.Code, w.Body.Len())
	}
	if w := serve(h, "POST", "/console/"); w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", w.Code)
	}
}

func TestWithoutABuildSaysHowToBuild(t *testing.T) {
	h := newHandler(fstest.MapFS{})
	if h.Built() {
		t.Fatal("an empty build counts as built")
	}
	for _, p := range []string{"/console/", "/console/assets/index.js", "/console/campaigns"} {
		w := serve(h, "GET", p)
		if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "make build") ||
			!strings.Contains(w.Body.String(), "not built") || w.Header().Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: %d %q", p, w.Code, clip(w.Body.String()))
		}
		if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script") {
			t.Fatalf("%s: CSP %q", p, csp)
		}
	}
}

// The embedded build, when there is one, is what the build wrote: its page
// loads only module scripts from assets/, inline scripts being refused by
// the policy.
func TestEmbeddedBuildHasNoInlineScript(t *testing.T) {
	h := New()
	if !h.Built() {
		t.Skip("no console build embedded (make build builds it)")
	}
	page := h.files["index.html"].body
	for _, tag := range bytes.Split(page, []byte("<script"))[1:] {
		if !bytes.Contains(tag[:bytes.IndexByte(tag, '>')], []byte(`src="/console/assets/`)) {
			t.Fatalf("index.html has an inline script: <script%s", clip(string(tag)))
		}
	}
	if bytes.Contains(page, []byte(" style=")) {
		t.Fatal("index.html has an inline style attribute")
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// The custom-action sandbox is served, built or not, with its own policy:
// sandboxed (an opaque origin), its one inline script allowed by its hash,
// eval and blob: workers for the action's code, no request of any kind,
// framed only by the api's own pages. The console's own policy still
// refuses eval.
func TestSandboxPageIsSandboxedWithoutNetwork(t *testing.T) {
	for _, h := range []*Handler{built(), newHandler(fstest.MapFS{})} {
		w := serve(h, "GET", "/console/"+SandboxPath)
		csp := w.Header().Get("Content-Security-Policy")
		if w.Code != 200 || w.Header().Get("Content-Type") != "text/html; charset=utf-8" || w.Header().Get("X-Frame-Options") != "SAMEORIGIN" {
			t.Fatalf("sandbox: %d %v", w.Code, w.Header())
		}
		for _, want := range []string{"default-src 'none';", "sandbox allow-scripts;", "frame-ancestors 'self'", "worker-src blob:;"} {
			if !strings.Contains(csp, want) {
				t.Errorf("sandbox CSP lacks %q: %s", want, csp)
			}
		}
		for _, bad := range []string{"allow-same-origin", "connect-src", "'self';", "unsafe-inline", "*"} {
			if strings.Contains(csp, bad) {
				t.Errorf("sandbox CSP has %q: %s", bad, csp)
			}
		}
		// The hash in the policy is the page's script's.
		body := w.Body.String()
		start, end := strings.Index(body, "<script>")+len("<script>"), strings.Index(body, "</script>")
		sum := sha256.Sum256([]byte(body[start:end]))
		if !strings.Contains(csp, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") {
			t.Errorf("the policy does not allow the page's script: %s", csp)
		}
	}
	if strings.Contains(CSP, "unsafe-eval") {
		t.Fatal("the console's own policy allows eval")
	}
}

// TestOnlyTheSignupPageAllowsTheProviderScript: the embedded signup page's
// policy allows the provider's script origin (scripts, frames, requests)
// and its other origins (frames, requests), and nothing else changes; every
// other page, asset and the page under another name keep the strict policy.
func TestOnlyTheSignupPageAllowsTheProviderScript(t *testing.T) {
	h := built().WithSignup("https://connect.provider.test/en_US/sdk.js", []string{"https://www.provider.test", "https://web.provider.test/"})
	want := "default-src 'self'; script-src 'self' https://connect.provider.test; style-src 'self'; img-src 'self' blob:; " +
		"media-src 'self' blob:; font-src 'self'; connect-src 'self' https://connect.provider.test https://www.provider.test https://web.provider.test; " +
		"frame-src https://connect.provider.test https://www.provider.test https://web.provider.test; object-src 'none'; base-uri 'self'; " +
		"form-action 'self'; frame-ancestors 'none'"
	for _, p := range []string{"/console/accounts/signup", "/console/accounts/signup/", "/console/accounts/./signup"} {
		w := serve(h, "GET", p)
		if w.Code != 200 || !strings.HasPrefix(w.Body.String(), "<!doctype html>") {
			t.Fatalf("%s: %d %q", p, w.Code, clip(w.Body.String()))
		}
		if got := w.Header().Get("Content-Security-Policy"); got != want {
			t.Errorf("%s: CSP\n got %q\nwant %q", p, got, want)
		}
		if got := w.Header().Get("Cross-Origin-Opener-Policy"); got != "same-origin-allow-popups" {
			t.Errorf("%s: COOP %q", p, got)
		}
		if w.Header().Get("X-Frame-Options") != "DENY" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", p, w.Header())
		}
	}
	for _, p := range []string{"/console/", "/console/accounts", "/console/accounts/signups", "/console/accounts/signup/x",
		"/console/settings", "/console/assets/index-abc123.js", "/console/index.html"} {
		w := serve(h, "GET", p)
		if got := w.Header().Get("Content-Security-Policy"); got != CSP {
			t.Errorf("%s: CSP %q, want the strict one", p, got)
		}
		if got := w.Header().Get("Cross-Origin-Opener-Policy"); got != "same-origin" {
			t.Errorf("%s: COOP %q", p, got)
		}
	}
	// Without a script URL (or a bad one) the signup page is strict too.
	for _, u := range []string{"", "not a url", "/relative/sdk.js"} {
		if got := serve(built().WithSignup(u, nil), "GET", "/console/accounts/signup").Header().Get("Content-Security-Policy"); got != CSP {
			t.Errorf("script URL %q: CSP %q", u, got)
		}
	}
	// The policy still forbids inline script, eval and being framed.
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "*", "data:"} {
		if strings.Contains(want, bad) {
			t.Errorf("the signup policy allows %q", bad)
		}
	}
}
