package storage_test

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"wharf/internal/infra/storage"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

func signingStore(t *testing.T) *storage.Local {
	t.Helper()
	s, err := storage.NewLocal(t.TempDir(), storage.WithSigning(testSecret, "https://wharf.example/"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// parts splits a signed local URL into the route's key, expires and
// signature, as the route receives them.
func parts(t *testing.T, raw string) (key, expires, sig string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	key, ok := strings.CutPrefix(u.Path, "/api/files/")
	if !ok || u.Scheme != "https" || u.Host != "wharf.example" {
		t.Fatalf("signed URL %s", raw)
	}
	return key, u.Query().Get("expires"), u.Query().Get("signature")
}

func TestLocalSignedURLVerifies(t *testing.T) {
	s := signingStore(t)
	before := time.Now()
	raw, expires, err := s.SignedURL(context.Background(), "orgs/a/calls/my call.ogg", 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(raw, "/api/files/orgs/a/calls/my%20call.ogg?") {
		t.Fatalf("URL %s does not escape the key", raw)
	}
	key, exp, sig := parts(t, raw)
	if key != "orgs/a/calls/my call.ogg" || exp != strconv.FormatInt(expires.Unix(), 10) || len(sig) != 64 {
		t.Fatalf("key %q expires %q (returned %d) signature %q", key, exp, expires.Unix(), sig)
	}
	if lo, hi := before.Add(15*time.Minute-time.Second), time.Now().Add(15*time.Minute); expires.Before(lo) || expires.After(hi) {
		t.Fatalf("expires %s, want within [%s, %s]", expires, lo, hi)
	}
	if err := s.Verify(key, exp, sig, time.Now()); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	// Valid up to the last instant before the expiry, not at it.
	if err := s.Verify(key, exp, sig, expires.Add(-time.Nanosecond)); err != nil {
		t.Fatalf("just before expiry: %v", err)
	}
	if err := s.Verify(key, exp, sig, expires); !errors.Is(err, storage.ErrExpired) {
		t.Fatalf("at expiry: %v, want ErrExpired", err)
	}

	// Another server's secret does not verify it.
	other, err := storage.NewLocal(t.TempDir(), storage.WithSigning(bytes.Repeat([]byte("x"), 32), "https://wharf.example"))
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Verify(key, exp, sig, time.Now()); !errors.Is(err, storage.ErrBadSignature) {
		t.Fatalf("other secret: %v", err)
	}
}

func TestLocalVerifyRefusesTampering(t *testing.T) {
	s := signingStore(t)
	raw, _, err := s.SignedURL(context.Background(), "orgs/a/calls/c1.ogg", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	key, exp, sig := parts(t, raw)
	later, _ := strconv.ParseInt(exp, 10, 64)
	flipped := []byte(sig)
	flipped[10] = map[bool]byte{true: 'a', false: 'b'}[flipped[10] != 'a']
	cases := []struct{ name, key, exp, sig string }{
		{"other key", "orgs/b/calls/c1.ogg", exp, sig},
		{"longer expiry", key, strconv.FormatInt(later+3600, 10), sig},
		{"expiry written differently", key, "0" + exp, sig},
		{"one signature digit", key, exp, string(flipped)},
		{"uppercase is not what we sign", key, exp, strings.ToUpper(sig) + "0"},
		{"truncated signature", key, exp, sig[:62]},
		{"not hex", key, exp, strings.Repeat("z", 64)},
		{"no signature", key, exp, ""},
		{"no expiry", key, "", sig},
		{"bad key", "../" + key, exp, sig},
	}
	for _, c := range cases {
		if err := s.Verify(c.key, c.exp, c.sig, time.Now()); !errors.Is(err, storage.ErrBadSignature) {
			t.Errorf("%s: %v, want ErrBadSignature", c.name, err)
		}
	}
}

func TestLocalSignedURLLimits(t *testing.T) {
	s := signingStore(t)
	ctx := context.Background()
	// A link signed for the past is expired, not tampered with.
	raw, err := s.SignURL("orgs/a/x.wav", time.Now().Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	key, exp, sig := parts(t, raw)
	if err := s.Verify(key, exp, sig, time.Now()); !errors.Is(err, storage.ErrExpired) {
		t.Fatalf("past expiry: %v", err)
	}
	// Capped at a week, like S3.
	if _, expires, err := s.SignedURL(ctx, "orgs/a/x.wav", 30*24*time.Hour); err != nil || expires.After(time.Now().Add(storage.MaxURLTTL)) {
		t.Fatalf("30 days: %s, %v", expires, err)
	}
	for _, ttl := range []time.Duration{0, -time.Minute, time.Millisecond} {
		if _, _, err := s.SignedURL(ctx, "orgs/a/x.wav", ttl); err == nil {
			t.Errorf("ttl %s accepted", ttl)
		}
	}
	if _, _, err := s.SignedURL(ctx, "a//b", time.Minute); err == nil {
		t.Error("an invalid key was signed")
	}

	unsigned, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := unsigned.SignedURL(ctx, "orgs/a/x.wav", time.Minute); !errors.Is(err, storage.ErrNoSigning) {
		t.Fatalf("without signing: %v", err)
	}
	if err := unsigned.Verify(key, exp, sig, time.Now()); !errors.Is(err, storage.ErrNoSigning) {
		t.Fatalf("Verify without signing: %v", err)
	}
	if _, err := storage.NewLocal(t.TempDir(), storage.WithSigning([]byte("short"), "http://x")); err == nil {
		t.Fatal("a short secret was accepted")
	}
}

func TestDeriveSigningKey(t *testing.T) {
	a, b := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	ka := storage.DeriveSigningKey(a)
	if len(ka) != 32 || !bytes.Equal(ka, storage.DeriveSigningKey(a)) {
		t.Fatalf("not a stable 32-byte key: %x", ka)
	}
	if bytes.Equal(ka, a) || bytes.Equal(ka, storage.DeriveSigningKey(b)) {
		t.Fatal("the derived key is the master key, or the same for two masters")
	}
}

func TestContentType(t *testing.T) {
	for key, want := range map[string]string{
		"a/x.ogg": "audio/ogg", "a/x.OGG": "audio/ogg", "a/x.wav": "audio/wav", "a/x.mp3": "audio/mpeg",
		"a/x.bin": "application/octet-stream", "a/x": "application/octet-stream", "a.ogg/x": "application/octet-stream",
	} {
		if got := storage.ContentType(key); got != want {
			t.Errorf("%s: %s, want %s", key, got, want)
		}
	}
}
