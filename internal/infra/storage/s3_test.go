package storage_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"wharf/internal/infra/storage"
)

func newTestS3(t *testing.T) (*storage.S3, *fakeS3, string) {
	t.Helper()
	fake, srv := newFakeS3(t, "recordings", "eu-west-1", "AKTEST", "test-secret-key-0123456789")
	u, _ := url.Parse(srv.URL)
	s, err := storage.NewS3(storage.S3Config{Endpoint: u.Host, Bucket: "recordings", AccessKey: "AKTEST",
		SecretKey: "test-secret-key-0123456789", Region: "eu-west-1", UseSSL: false})
	if err != nil {
		t.Fatal(err)
	}
	return s, fake, srv.URL
}

// TestS3Store runs Put, Exists, Open and Delete against the fake S3 server,
// which checks every request's SigV4 signature.
func TestS3Store(t *testing.T) {
	s, fake, _ := newTestS3(t)
	ctx := context.Background()
	const key = "orgs/a/calls/c1.ogg"

	if ok, err := s.Exists(ctx, key); err != nil || ok {
		t.Fatalf("before Put: Exists = %v, %v", ok, err)
	}
	if _, err := s.Open(ctx, key); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("before Put: Open = %v, want ErrNotFound", err)
	}
	audio := bytes.Repeat([]byte("OggS\x00opus"), 1000)
	n, err := s.Put(ctx, key, bytes.NewReader(audio))
	if err != nil || n != int64(len(audio)) {
		t.Fatalf("Put = %d, %v", n, err)
	}
	if obj := fake.object(key); !bytes.Equal(obj.body, audio) || obj.contentType != "audio/ogg" {
		t.Fatalf("stored %d bytes as %q", len(obj.body), obj.contentType)
	}
	if ok, err := s.Exists(ctx, key); err != nil || !ok {
		t.Fatalf("after Put: Exists = %v, %v", ok, err)
	}
	rc, err := s.Open(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, audio) {
		t.Fatalf("Open read %d bytes, %v", len(got), err)
	}

	// A reader of unknown size is spooled, then sent in one PUT.
	n, err = s.Put(ctx, "orgs/a/calls/c2.wav", iotest.OneByteReader(strings.NewReader("RIFF....WAVE")))
	if err != nil || n != 12 {
		t.Fatalf("Put of a plain reader = %d, %v", n, err)
	}
	if obj := fake.object("orgs/a/calls/c2.wav"); string(obj.body) != "RIFF....WAVE" || obj.contentType != "audio/wav" {
		t.Fatalf("stored %q as %q", obj.body, obj.contentType)
	}

	if err := s.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Exists(ctx, key); err != nil || ok {
		t.Fatalf("after Delete: Exists = %v, %v", ok, err)
	}
	if err := s.Delete(ctx, key); err != nil {
		t.Fatalf("deleting a missing key: %v", err)
	}
	if _, err := s.Put(ctx, "../x", strings.NewReader("x")); err == nil {
		t.Fatal("an invalid key was accepted")
	}

	// Open stats the object first (HEAD), so that a missing key fails
	// there, then the first Read GETs it.
	want := []string{
		"HEAD /recordings/orgs/a/calls/c1.ogg header",
		"HEAD /recordings/orgs/a/calls/c1.ogg header",
		"PUT /recordings/orgs/a/calls/c1.ogg header",
		"HEAD /recordings/orgs/a/calls/c1.ogg header",
		"HEAD /recordings/orgs/a/calls/c1.ogg header",
		"GET /recordings/orgs/a/calls/c1.ogg header",
		"PUT /recordings/orgs/a/calls/c2.wav header",
		"DELETE /recordings/orgs/a/calls/c1.ogg header",
		"HEAD /recordings/orgs/a/calls/c1.ogg header",
		"DELETE /recordings/orgs/a/calls/c1.ogg header",
	}
	// Over plain HTTP minio-go signs uploads chunk by chunk.
	if fake.chunked != 2 {
		t.Errorf("%d aws-chunked PUTs, want 2", fake.chunked)
	}
	if got := fake.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestS3SignedURL presigns a GET: the URL names the bucket and key, carries
// its lifetime and signature, serves the object to a client without
// credentials, and is refused once changed.
func TestS3SignedURL(t *testing.T) {
	s, _, base := newTestS3(t)
	ctx := context.Background()
	const key = "orgs/a/calls/c1.ogg"
	if _, err := s.Put(ctx, key, strings.NewReader("opus audio")); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	raw, expires, err := s.SignedURL(ctx, key, 900*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Path != "/recordings/"+key || q.Get("X-Amz-Expires") != "900" || len(q.Get("X-Amz-Signature")) != 64 ||
		!strings.HasPrefix(q.Get("X-Amz-Credential"), "AKTEST/") || !strings.HasPrefix(raw, base+"/") {
		t.Fatalf("presigned URL %s", raw)
	}
	if lo, hi := before.Add(899*time.Second), time.Now().Add(900*time.Second); expires.Before(lo) || expires.After(hi) {
		t.Fatalf("expires %s, want between %s and %s", expires, lo, hi)
	}

	resp, err := http.Get(raw)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "opus audio" || resp.Header.Get("Content-Type") != "audio/ogg" {
		t.Fatalf("GET presigned: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}

	tamper := map[string]func(url.Values, *url.URL){
		"signature": func(q url.Values, _ *url.URL) { q.Set("X-Amz-Signature", strings.Repeat("0", 64)) },
		"expires":   func(q url.Values, _ *url.URL) { q.Set("X-Amz-Expires", "901") },
		"key":       func(_ url.Values, u *url.URL) { u.Path = "/recordings/orgs/b/calls/c1.ogg" },
	}
	for name, change := range tamper {
		u, _ := url.Parse(raw)
		q := u.Query()
		change(q, u)
		u.RawQuery = q.Encode()
		resp, err := http.Get(u.String())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("tampered %s: %d, want 403", name, resp.StatusCode)
		}
	}

	// A week is the longest SigV4 allows: longer asks are capped.
	raw, expires, err = s.SignedURL(ctx, key, 30*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(raw); u.Query().Get("X-Amz-Expires") != "604800" || expires.After(time.Now().Add(storage.MaxURLTTL)) {
		t.Fatalf("30 days: %s, expires %s", raw, expires)
	}
	if _, _, err := s.SignedURL(ctx, key, 0); err == nil {
		t.Fatal("a zero ttl was accepted")
	}
}

func TestNewChoosesTheStore(t *testing.T) {
	st, err := storage.New(storage.Config{Dir: t.TempDir()})
	if _, ok := st.(*storage.Local); err != nil || !ok {
		t.Fatalf("no S3: %T, %v", st, err)
	}
	st, err = storage.New(storage.Config{Dir: t.TempDir(), S3: storage.S3Config{Endpoint: "s3.example.com", Bucket: "b", UseSSL: true}})
	if _, ok := st.(*storage.S3); err != nil || !ok {
		t.Fatalf("S3: %T, %v", st, err)
	}
	if _, err := storage.New(storage.Config{S3: storage.S3Config{Endpoint: "https://s3.example.com", Bucket: "b"}}); err == nil {
		t.Fatal("an endpoint with a scheme was accepted")
	}
}
