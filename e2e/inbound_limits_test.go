package e2e_test

import (
	"bytes"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"wharf/models"
	"wharf/platform"
)

// webhookFrom posts a webhook as if from the client address ip (the test
// server trusts X-Forwarded-For from 127.0.0.1) with the given signature
// header, and returns the answer's status and Retry-After.
func webhookFrom(t *testing.T, url, ip, signature string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/api/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", ip)
	if signature != "" {
		req.Header.Set(platform.SignatureHeader, signature)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Retry-After")
}

// countQueries counts the statements the api runs on db from now on.
func countQueries(t *testing.T, db *gorm.DB) *atomic.Int64 {
	var n atomic.Int64
	count := func(*gorm.DB) { n.Add(1) }
	cb := db.Callback()
	for name, err := range map[string]error{
		"query":  cb.Query().Before("gorm:query").Register("test:count", count),
		"row":    cb.Row().Before("gorm:row").Register("test:count", count),
		"raw":    cb.Raw().Before("gorm:raw").Register("test:count", count),
		"create": cb.Create().Before("gorm:create").Register("test:count", count),
		"update": cb.Update().Before("gorm:update").Register("test:count", count),
		"delete": cb.Delete().Before("gorm:delete").Register("test:count", count),
	} {
		if err != nil {
			t.Fatalf("register %s callback: %v", name, err)
		}
	}
	return &n
}

// A flood of badly signed webhooks from one address is answered 429 after
// 30 failures, without touching the database, while a correctly signed
// webhook from another address is still accepted. Refusals that need no
// secret cost no query at all; a well-formed wrong signature costs at most
// the one lookup that finds the organizations' own secrets (none while the
// answer is remembered, see internal/inbound/routecache.go).
func TestBadlySignedWebhooksAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"TRUSTED_PROXIES": "127.0.0.1/32"}, nil)
	queries := countQueries(t, f.DB)
	body := textWebhook(f.PhoneNumberID(), "15559990000", "wamid.flood", "flood")
	forged := platform.Sign("not-the-secret", body)
	const attacker = "203.0.113.7"

	expect := func(what string, status, want int, maxQueries int64) {
		t.Helper()
		if q := queries.Swap(0); status != want || q > maxQueries {
			t.Fatalf("%s: status %d after %d queries, want %d after at most %d", what, status, q, want, maxQueries)
		}
	}
	status, _ := webhookFrom(t, f.Server.URL, attacker, "", body)
	expect("unsigned", status, 401, 0)
	status, _ = webhookFrom(t, f.Server.URL, attacker, "sha256=xyz", body)
	expect("malformed signature", status, 401, 0)
	status, _ = webhookFrom(t, f.Server.URL, attacker, platform.Sign("x", []byte("{}")), []byte(`{"object":"x","entry":[]}`))
	expect("forged, naming no number", status, 401, 0)
	for i := 3; i < 30; i++ {
		status, _ = webhookFrom(t, f.Server.URL, attacker, forged, body)
		expect("forged #"+strconv.Itoa(i+1), status, 401, 1)
	}
	for _, sig := range []string{forged, platform.Sign(f.AppSecret, body)} {
		status, retry := webhookFrom(t, f.Server.URL, attacker, sig, body)
		expect("past the limit", status, 429, 0)
		if s, err := strconv.Atoi(retry); err != nil || s < 1 || s > 60 {
			t.Fatalf("Retry-After %q, want 1-60 seconds", retry)
		}
	}

	// Other addresses are not affected.
	status, _ = webhookFrom(t, f.Server.URL, "198.51.100.9", platform.Sign(f.AppSecret, body), body)
	if status != 200 {
		t.Fatalf("signed webhook from another address: %d", status)
	}
	if status, _ = webhookFrom(t, f.Server.URL, "198.51.100.10", forged, body); status != 401 {
		t.Fatalf("forged webhook from a third address: %d", status)
	}
	var n int64
	f.DB.Model(&models.InboundEvent{}).Count(&n)
	if n != 1 {
		t.Fatalf("%d inbound events stored, want only the signed one", n)
	}
}

// The provider sends every app's webhooks from the same addresses. An
// organization whose own app secret does not match its webhooks gets those
// refused, and after 30 failures that number is refused from that address
// without a database lookup, but the address stays open for everyone else.
func TestAMisconfiguredOrganizationSecretDoesNotBlockTheProvider(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"TRUSTED_PROXIES": "127.0.0.1/32"}, nil)
	f.Do("PUT", "/api/org/settings", map[string]any{"provider_app_secret": "configured-secret"}, f.admin.Auth()).Expect(t, 200)
	const provider = "192.0.2.50"
	body := textWebhook(f.PhoneNumberID(), "15559990000", "wamid.own", "own app")
	wrong := platform.Sign("the-app-really-uses-this", body)
	for i := 0; i < 30; i++ {
		if status, _ := webhookFrom(t, f.Server.URL, provider, wrong, body); status != 401 {
			t.Fatalf("mismatched own secret #%d: %d", i+1, status)
		}
	}
	queries := countQueries(t, f.DB)
	if status, _ := webhookFrom(t, f.Server.URL, provider, wrong, body); status != 429 || queries.Load() != 0 {
		t.Fatalf("that number past the limit: %d after %d queries, want 429 after none", status, queries.Load())
	}
	other := textWebhook("999000111", "15559990001", "wamid.other", "another tenant")
	if status, _ := webhookFrom(t, f.Server.URL, provider, platform.Sign(f.AppSecret, other), other); status != 200 {
		t.Fatalf("another tenant's webhook from the same address: %d", status)
	}
	// Its own webhooks from elsewhere are still verified against its secret.
	if status, _ := webhookFrom(t, f.Server.URL, "192.0.2.51", platform.Sign("configured-secret", body), body); status != 200 {
		t.Fatalf("the organization's correctly signed webhook: %d", status)
	}
}
