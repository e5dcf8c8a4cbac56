package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/internal/infra/storage"
)

// filesStore is a store configured as the api's (same STORAGE_DIR, same
// key derived from ENCRYPTION_KEY): what it signs, the api must serve.
func filesStore(t *testing.T, e *apptest.Env) *storage.Local {
	t.Helper()
	st, err := storage.New(storage.Config{Dir: e.Cfg.StorageDir, SigningKey: storage.DeriveSigningKey(e.Cfg.EncryptionKey),
		PublicURL: e.Cfg.PublicURL})
	if err != nil {
		t.Fatal(err)
	}
	return st.(*storage.Local)
}

// fetch GETs a signed URL from the test server, without credentials.
func fetch(t *testing.T, e *apptest.Env, signed string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	rel, ok := strings.CutPrefix(signed, e.Cfg.PublicURL)
	if !ok {
		t.Fatalf("signed URL %s is not under PUBLIC_URL %s", signed, e.Cfg.PublicURL)
	}
	req, _ := http.NewRequest(http.MethodGet, e.Server.URL+rel, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// refused checks an error answer: its status and the envelope's message.
func refused(t *testing.T, what string, resp *http.Response, body []byte, status int, message string) {
	t.Helper()
	var env struct {
		Status  string `json:"status"`
		Message string `json:"message"`
		Data    any    `json:"data"`
	}
	if resp.StatusCode != status || json.Unmarshal(body, &env) != nil || env.Status != "error" || env.Data != nil ||
		!strings.Contains(env.Message, message) || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: %d %s %s, want %d with %q", what, resp.StatusCode, resp.Header.Get("Cache-Control"), body, status, message)
	}
}

func TestSignedFileURLs(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	st := filesStore(t, e)
	ctx := context.Background()
	audio := []byte("OggS\x00\x02 a recording's bytes")
	if _, err := st.Put(ctx, "orgs/a/calls/rec.ogg", strings.NewReader(string(audio))); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, "orgs/b/calls/other.ogg", strings.NewReader("another org's audio")); err != nil {
		t.Fatal(err)
	}

	signed, expires, err := st.SignedURL(ctx, "orgs/a/calls/rec.ogg", 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := fetch(t, e, signed, nil)
	if resp.StatusCode != http.StatusOK || string(body) != string(audio) || resp.Header.Get("Content-Type") != "audio/ogg" ||
		resp.Header.Get("Content-Length") != strconv.Itoa(len(audio)) {
		t.Fatalf("signed URL: %d %q (%s, %s bytes)", resp.StatusCode, body, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Length"))
	}
	maxAge, ok := strings.CutPrefix(resp.Header.Get("Cache-Control"), "private, max-age=")
	if n, err := strconv.Atoi(maxAge); !ok || err != nil || n < 290 || n > 300 || time.Duration(n)*time.Second > time.Until(expires)+time.Second {
		t.Errorf("Cache-Control %q, the link expires in %s", resp.Header.Get("Cache-Control"), time.Until(expires))
	}
	// Audio players seek with range requests.
	resp, body = fetch(t, e, signed, map[string]string{"Range": "bytes=0-3"})
	if resp.StatusCode != http.StatusPartialContent || string(body) != "OggS" {
		t.Errorf("range: %d %q", resp.StatusCode, body)
	}

	// Tampered links: each part of the URL is covered by the signature.
	u, _ := url.Parse(signed)
	q := u.Query()
	sig := []byte(q.Get("signature"))
	sig[0] = map[bool]byte{true: '1', false: '0'}[sig[0] == '0']
	tampered := map[string]string{
		"signature": strings.Replace(signed, q.Get("signature"), string(sig), 1),
		"key":       strings.Replace(signed, "/orgs/a/calls/rec.ogg", "/orgs/b/calls/other.ogg", 1),
		"expiry":    strings.Replace(signed, "expires="+q.Get("expires"), "expires="+strconv.FormatInt(expires.Unix()+86400, 10), 1),
		"none":      strings.Split(signed, "?")[0],
	}
	for what, link := range tampered {
		if link == signed {
			t.Fatalf("%s: the link did not change", what)
		}
		resp, body := fetch(t, e, link, nil)
		refused(t, "tampered "+what, resp, body, http.StatusForbidden, "invalid link")
	}

	// An expired link: signed for a second ago, and one that lapses while
	// we wait.
	past, err := st.SignURL("orgs/a/calls/rec.ogg", time.Now().Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	resp, body = fetch(t, e, past, nil)
	refused(t, "signed in the past", resp, body, http.StatusForbidden, "expired")
	short, shortExp, err := st.SignedURL(ctx, "orgs/a/calls/rec.ogg", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if resp, _ := fetch(t, e, short, nil); resp.StatusCode != http.StatusOK && time.Now().Before(shortExp) {
		t.Errorf("one-second link, before its expiry: %d", resp.StatusCode)
	}
	time.Sleep(time.Until(shortExp) + 100*time.Millisecond)
	resp, body = fetch(t, e, short, nil)
	refused(t, "lapsed", resp, body, http.StatusForbidden, "expired")

	// A valid link to nothing, and the other content types.
	missing, _, _ := st.SignedURL(ctx, "orgs/a/calls/none.ogg", time.Minute)
	resp, body = fetch(t, e, missing, nil)
	refused(t, "missing file", resp, body, http.StatusNotFound, "not found")
	for key, ct := range map[string]string{"orgs/a/calls/rec.wav": "audio/wav", "orgs/a/exports/x.bin": "application/octet-stream"} {
		if _, err := st.Put(ctx, key, strings.NewReader("data")); err != nil {
			t.Fatal(err)
		}
		link, _, _ := st.SignedURL(ctx, key, time.Minute)
		if resp, body := fetch(t, e, link, nil); resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != ct || string(body) != "data" {
			t.Errorf("%s: %d %s %q", key, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
}

// With S3 configured the signed URLs are the bucket's: the api's file
// route serves nothing, even to a link a local store signed.
func TestFilesRouteIsOffWithS3(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, map[string]string{"STORAGE_S3_ENDPOINT": "127.0.0.1:1", "STORAGE_S3_BUCKET": "wharf",
		"STORAGE_S3_ACCESS_KEY": "ak", "STORAGE_S3_SECRET_KEY": "sk", "STORAGE_S3_USE_SSL": "false"})
	st := filesStore(t, e)
	if _, err := st.Put(context.Background(), "orgs/a/calls/rec.ogg", strings.NewReader("audio")); err != nil {
		t.Fatal(err)
	}
	link, _, err := st.SignedURL(context.Background(), "orgs/a/calls/rec.ogg", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := fetch(t, e, link, nil)
	refused(t, "with S3", resp, body, http.StatusNotFound, "not found")
}
