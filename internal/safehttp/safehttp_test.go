package safehttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"wharf/internal/safehttp"
)

func TestValidateURL(t *testing.T) {
	strict := safehttp.Policy{}
	lax := safehttp.Policy{AllowPrivate: true}
	cases := []struct {
		url         string
		strict, lax bool // allowed?
	}{
		{"https://example.com/hook", true, true},
		{"http://93.184.216.34/x", true, true},
		{"ftp://example.com", false, false},
		{"example.com/hook", false, false},
		{"https://user:pw@example.com", false, false},
		{"http://localhost:8080", false, true},
		{"http://api.localhost", false, true},
		{"http://printer.local", false, true},
		{"http://metadata.internal", false, true},
		{"http://127.0.0.1", false, true},
		{"http://[::1]/", false, true},
		{"http://10.1.2.3", false, true},
		{"http://172.16.0.1", false, true},
		{"http://192.168.1.1", false, true},
		{"http://100.64.0.1", false, true},
		{"http://[fd00::1]", false, true},
		{"http://[::ffff:127.0.0.1]", false, true},
		{"http://169.254.169.254/latest/meta-data", false, false},
		{"http://[fe80::1]", false, false},
		{"http://0.0.0.0", false, false},
		{"http://[::]", false, false},
		{"http://224.0.0.1", false, false},
	}
	for _, c := range cases {
		if err := strict.ValidateURL(c.url); (err == nil) != c.strict {
			t.Errorf("strict %s: %v", c.url, err)
		}
		if err := lax.ValidateURL(c.url); (err == nil) != c.lax {
			t.Errorf("allow-private %s: %v", c.url, err)
		}
	}
}

// A host name that resolves to loopback passes the name check but is refused
// when dialled; so is a redirect from an allowed target to an internal one.
func TestDialTimeCheckAndRedirects(t *testing.T) {
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) }))
	defer internal.Close()
	port := internal.URL[strings.LastIndex(internal.URL, ":")+1:]

	strict := safehttp.Policy{}.Client(5 * time.Second)
	// "localhost" is resolved by the system resolver to 127.0.0.1: the
	// dialer sees the resolved address and refuses it.
	for _, u := range []string{"http://localhost:" + port, "http://127.0.0.1:" + port} {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", u, nil)
		if _, err := strict.Do(req); err == nil || !errors.Is(err, safehttp.ErrBlocked) {
			t.Fatalf("%s: loopback dial allowed: %v", u, err)
		}
	}

	lax := safehttp.Policy{AllowPrivate: true}.Client(5 * time.Second)
	res, err := lax.Get(internal.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	// A redirect to link-local is refused even when private targets are allowed.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusFound)
	}))
	defer redirector.Close()
	if _, err := lax.Get(redirector.URL); err == nil || !errors.Is(err, safehttp.ErrBlocked) {
		t.Fatalf("redirect to link-local followed: %v", err)
	}
}
