// Package console serves the web console: the Vue application of console/,
// built into files/app (git-ignored) by scripts/console.sh (make build, make
// run, make test, the Dockerfile) and embedded in the api binary, so that a
// deployment is one binary and the console loads nothing from elsewhere.
//
// Under /console/ it serves the built file of the path when there is one,
// else index.html, so that the application's own routes (deep links)
// survive a reload. Hashed assets (assets/) are cached for a year, the rest
// revalidated. Every answer carries a strict Content-Security-Policy: the
// console runs only its own scripts, styles and requests; the one exception
// is the embedded signup page (SignupPage), whose policy also allows the
// provider's signup script (WithSignup). Without a build,
// it serves a short page that says how to build it: Go-only builds, vets
// and tests need no Node.
//
// It imports nothing of Wharf's: the api package mounts it.
package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"
)

// files always holds files/README.md (tracked), so the pattern matches
// before any build; the application is under files/app (git-ignored).
//
//go:embed all:files
var files embed.FS

// Base is where the console is served; the build's base (console/vite.config.ts).
const Base = "/console/"

// CSP lets the console load and run only what the api serves: no inline
// script, no eval, no inline style, no framing, no other origin. Images and
// audio or video may also be blob: URLs: the inbox shows a message's media
// by reading it with the bearer token (an <img src> cannot send one) into a
// blob the page made itself; blob: is not allowed for scripts.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; media-src 'self' blob:; font-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// SignupPage is the console's embedded signup page, below Base: the one
// page whose policy allows a script from another origin, the provider's
// embedded-signup script (WithSignup). The console links to it with a full
// page load, so that the exception lives in that document only.
const SignupPage = "accounts/signup"

// SignupCSP is CSP with the embedded-signup script's origin allowed for
// scripts, and it and origins allowed for frames and requests; nothing else
// changes.
func SignupCSP(scriptOrigin string, origins []string) string {
	others := strings.Join(append([]string{scriptOrigin}, origins...), " ")
	return "default-src 'self'; script-src 'self' " + scriptOrigin + "; style-src 'self'; img-src 'self' blob:; media-src 'self' blob:; font-src 'self'; " +
		"connect-src 'self' " + others + "; frame-src " + others + "; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
}

// notBuiltCSP is the policy of the how-to-build page: its own inline style,
// nothing else.
const notBuiltCSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the console's files from memory.
type Handler struct {
	files map[string]*file // by path below Base, e.g. "index.html", "assets/index-5xVQwgDr.js"
	// signupCSP is SignupPage's policy; empty, the page has the strict one
	// (and embedded signup cannot load its script).
	signupCSP string
}

// WithSignup returns a handler of the same files whose SignupPage allows
// the embedded-signup script at scriptURL (its origin) and origins; an
// empty or unparsable scriptURL leaves every page strict.
func (h *Handler) WithSignup(scriptURL string, origins []string) *Handler {
	out := &Handler{files: h.files}
	u, err := url.Parse(scriptURL)
	if scriptURL == "" || err != nil || u.Scheme == "" || u.Host == "" {
		return out
	}
	clean := make([]string, 0, len(origins))
	for _, o := range origins {
		if v, err := url.Parse(strings.TrimSpace(o)); err == nil && v.Scheme != "" && v.Host != "" {
			clean = append(clean, v.Scheme+"://"+v.Host)
		}
	}
	out.signupCSP = SignupCSP(u.Scheme+"://"+u.Host, clean)
	return out
}

type file struct {
	body, gzipped []byte
	etag          string
	contentType   string
}

// New serves the embedded build. Every server of the process shares one
// handler (tests start hundreds of servers).
func New() *Handler { return embedded() }

var embedded = sync.OnceValue(func() *Handler {
	app, err := fs.Sub(files, "files/app")
	if err != nil {
		panic(err) // a constant, valid path
	}
	return newHandler(app)
})

// newHandler reads every file of app once: the build is small (about 150
// KB), and compressing it at start-up saves doing it per request.
func newHandler(app fs.FS) *Handler {
	h := &Handler{files: map[string]*file{}}
	_ = fs.WalkDir(app, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		body, err := fs.ReadFile(app, name)
		if err != nil {
			return nil
		}
		sum := sha256.Sum256(body)
		f := &file{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, contentType: contentType(name)}
		if compressible(f.contentType) && len(body) > 512 {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			_, _ = zw.Write(body)
			_ = zw.Close()
			if buf.Len() < len(body) {
				f.gzipped = buf.Bytes()
			}
		}
		h.files[name] = f
		return nil
	})
	return h
}

// Built reports whether a build is embedded.
func (h *Handler) Built() bool { return h.files["index.html"] != nil }

// ServeHTTP serves a request whose path starts with Base.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "same-origin")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == Base+SandboxPath {
		// Framed by the console's pages (sandbox.go), so not DENY.
		hdr.Set("X-Frame-Options", "SAMEORIGIN")
		hdr.Set("Content-Security-Policy", SandboxCSP)
		hdr.Set("Cache-Control", "no-cache")
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(sandboxPage))
		return
	}
	if !h.Built() {
		hdr.Set("Content-Security-Policy", notBuiltCSP)
		hdr.Set("Cache-Control", "no-store")
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(notBuiltPage))
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+strings.TrimPrefix(r.URL.Path, Base)), "/")
	if name == SignupPage && h.signupCSP != "" {
		hdr.Set("Content-Security-Policy", h.signupCSP)
		// The provider's sign-in window reports to the page that opened it.
		hdr.Set("Cross-Origin-Opener-Policy", "same-origin-allow-popups")
	} else {
		hdr.Set("Content-Security-Policy", CSP)
	}
	f, ok := h.files[name]
	switch {
	case ok && strings.HasPrefix(name, "assets/"):
		// Named by their content's hash: a new build has new names.
		hdr.Set("Cache-Control", "public, max-age=31536000, immutable")
	case ok:
		hdr.Set("Cache-Control", "no-cache")
	case strings.HasPrefix(name, "assets/") || path.Ext(name) != "":
		// A missing script or image must not be answered with the page
		// (which the browser would then refuse to run as a script).
		hdr.Set("Cache-Control", "no-store")
		http.Error(w, "not found", http.StatusNotFound)
		return
	default:
		// A route of the application: the page, whose router shows it
		// (or its own "page not found").
		f = h.files["index.html"]
		hdr.Set("Cache-Control", "no-cache")
	}
	hdr.Set("Content-Type", f.contentType)
	hdr.Add("Vary", "Accept-Encoding")
	body, etag := f.body, f.etag
	if f.gzipped != nil && acceptsGzip(r) {
		body, etag = f.gzipped, strings.TrimSuffix(f.etag, `"`)+`-gz"`
		hdr.Set("Content-Encoding", "gzip")
	}
	hdr.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

func contentType(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func compressible(contentType string) bool {
	for _, p := range []string{"text/", "application/javascript", "text/javascript", "application/json", "image/svg+xml"} {
		if strings.HasPrefix(contentType, p) {
			return true
		}
	}
	return false
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// notBuiltPage is served when the binary was built without the console.
const notBuiltPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Wharf console: not built</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; padding: 0 1rem; color: #1a1f26; }
code, pre { font-family: ui-monospace, monospace; background: #eef1f5; border-radius: 4px; }
pre { padding: .75rem 1rem; }
</style>
</head>
<body>
<h1>The web console is not built into this binary</h1>
<p>This api was compiled without the console's files. Build them and the binaries together from the repository:</p>
<pre>make build</pre>
<p>(<code>make run</code> does the same and starts everything.) The build needs Node.js 20.19 or later; when the
machine has none, or an older one, <code>make</code> fetches a pinned Node LTS into <code>.tools/</code>. See
README.md and docs/CONSOLE.md.</p>
<p>The HTTP API works without the console: its reference is at <a href="/api/docs">/api/docs</a>.</p>
</body>
</html>
`
