package openapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"wharf/api/openapi"
)

// The document is served as generated, and the reference page is the
// embedded file, which loads nothing from anywhere else and may not.
func TestServesTheDocumentAndASelfContainedPage(t *testing.T) {
	t.Parallel()
	h, err := openapi.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	for _, rt := range h.Routes() {
		r.Handle(rt.Method, rt.Path, rt.Handler)
	}
	get := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, w.Code)
		}
		return w
	}

	w := get("/api/openapi.json")
	if ct := w.Header().Get("Content-Type"); ct != "application/json" || !bytes.Equal(w.Body.Bytes(), h.Document()) {
		t.Fatalf("GET /api/openapi.json: %s, %d bytes, want the document", ct, w.Body.Len())
	}

	w = get("/api/docs")
	page := w.Body.String()
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") || !strings.Contains(page, `fetch("openapi.json")`) {
		t.Fatalf("GET /api/docs: %s, not the reference page", ct)
	}
	csp := w.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	if external := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|@import|url\(`).FindString(page); external != "" {
		t.Errorf("the page loads something from elsewhere: %q", external)
	}
}
