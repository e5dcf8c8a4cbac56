package safehttp_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"wharf/internal/infra/safehttp"
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
		// "This network": 0.0.0.0 reaches the local host on Linux.
		{"http://0.1.2.3", false, false},
		{"http://0.255.255.255", false, false},
		{"http://1.0.0.1", true, true},
		// Carrier-grade NAT and benchmarking ranges, and their edges.
		{"http://100.127.255.254", false, true},
		{"http://100.63.255.255", true, true},
		{"http://100.128.0.1", true, true},
		{"http://198.18.0.1", false, true},
		{"http://198.19.255.254", false, true},
		{"http://198.17.255.255", true, true},
		{"http://198.20.0.1", true, true},
		// NAT64 (64:ff9b::/96) carries an IPv4 address in its last 32 bits.
		{"http://[64:ff9b::7f00:1]", false, true},     // 127.0.0.1
		{"http://[64:ff9b::a00:8]", false, true},      // 10.0.0.8
		{"http://[64:ff9b::a9fe:a9fe]", false, false}, // 169.254.169.254
		{"http://[64:ff9b::127.0.0.1]", false, true},  // the same, written with the IPv4 in dotted form
		{"http://[64:ff9b::1.2.3.4]", true, true},
		{"http://[64:ff9b::5db8:d822]", true, true}, // 93.184.216.34
		{"http://[64:ff9b:1::a00:8]", false, true},  // local-use NAT64 prefix
		// 6to4 (2002::/16) carries it in bits 16-47.
		{"http://[2002:7f00:1::1]", false, true},     // 127.0.0.1
		{"http://[2002:c0a8:101::1]", false, true},   // 192.168.1.1
		{"http://[2002:a9fe:a9fe::1]", false, false}, // 169.254.169.254
		{"http://[2002:0:1::1]", false, false},       // 0.0.0.1
		{"http://[2002:5db8:d822::1]", true, true},   // 93.184.216.34
		// Deprecated IPv4-compatible addresses.
		{"http://[::7f00:1]", false, true},
		{"http://[::a9fe:a9fe]", false, false},
		{"http://[2001:db8::1]", true, true},
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

// The dialer applies the same rules, embedded IPv4 included, to the address
// it is about to connect to; nothing is sent.
func TestDialTimeRefusesEveryBlockedRange(t *testing.T) {
	strict := safehttp.Policy{}.Client(2 * time.Second)
	lax := safehttp.Policy{AllowPrivate: true}.Client(2 * time.Second)
	for _, c := range []struct {
		url       string
		laxRefuse bool
	}{
		{"http://0.1.2.3:9/", true},
		{"http://100.64.0.1:9/", false},
		{"http://198.18.0.1:9/", false},
		{"http://[64:ff9b::7f00:1]:9/", false},
		{"http://[64:ff9b::a9fe:a9fe]:9/", true},
		{"http://[2002:a00:8::1]:9/", false},
		{"http://[2002:a9fe:a9fe::1]:9/", true},
	} {
		if _, err := strict.Get(c.url); !errors.Is(err, safehttp.ErrBlocked) {
			t.Errorf("strict %s: %v, want blocked", c.url, err)
		}
		if !c.laxRefuse {
			continue // allowed with AllowPrivate: the dial would really go out
		}
		if _, err := lax.Get(c.url); !errors.Is(err, safehttp.ErrBlocked) {
			t.Errorf("allow-private %s: %v, want blocked", c.url, err)
		}
	}
}

// Public never passes on the text of a connection error, which names the
// address a host name resolved to; URL form complaints are shown.
func TestPublicHidesAddresses(t *testing.T) {
	strict := safehttp.Policy{}.Client(2 * time.Second)
	_, err := strict.Get("http://localhost:9/")
	if got := safehttp.Public(err); got != safehttp.NotAllowed {
		t.Fatalf("blocked dial: %q (%v)", got, err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close() // nothing listens there any more
	_, err = safehttp.Policy{AllowPrivate: true}.Client(2 * time.Second).Get("http://" + addr + "/")
	if got := safehttp.Public(err); got != safehttp.Unreachable || err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("refused connection: %q (%v)", got, err)
	}
	if got := safehttp.Public(safehttp.Policy{}.ValidateURL("ftp://x.example.com")); got != "scheme must be http or https" {
		t.Fatalf("form complaint: %q", got)
	}
	if got := safehttp.Public(safehttp.Policy{}.ValidateURL("http://10.1.2.3/")); got != safehttp.NotAllowed {
		t.Fatalf("refused literal: %q", got)
	}
}
