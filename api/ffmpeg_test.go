package api_test

import (
	"strings"
	"testing"

	"wharf/internal/apptest"
)

// Without ffmpeg the api starts and is ready, says what is missing in
// /readyz, and answers audio uploads 503 naming ffmpeg and how to install it;
// input that is invalid anyway is still a 400, and other routes work.
func TestAPIStartsWithoutFFmpeg(t *testing.T) {
	e := apptest.New(t, map[string]string{"FFMPEG_PATH": "/nonexistent"})
	r := e.Do("GET", "/readyz", nil, nil).Expect(t, 200)
	var ready map[string]string
	r.Into(t, &ready)
	if ready["database"] != "ok" || ready["redis"] != "ok" || ready["ffmpeg"] != "missing: audio uploads are disabled" {
		t.Fatalf("readyz %s", r.Body)
	}

	admin := e.Admin()
	// Enough of a WAV header to be recognised; only ffmpeg could tell more.
	wav := append([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), make([]byte, 64)...)
	r = e.Upload("/api/org/audio", map[string]string{"type": "hold_music"}, "file", "t.wav", wav, admin.Auth())
	if r.Status != 503 || !strings.Contains(r.Message, "ffmpeg") || !strings.Contains(r.Message, "apt-get install ffmpeg") ||
		!strings.Contains(r.Message, "FFMPEG_PATH") {
		t.Fatalf("upload without ffmpeg: %d %s", r.Status, r.Body)
	}
	r = e.Upload("/api/org/audio", map[string]string{"type": "hold_music"}, "file", "x.png", []byte("\x89PNG\r\n\x1a\n0000"), admin.Auth())
	if r.Status != 400 || !strings.Contains(r.Message, "unsupported audio type") {
		t.Fatalf("invalid upload without ffmpeg: %d %s", r.Status, r.Body)
	}

	e.Do("GET", "/api/org/settings", nil, admin.Auth()).Expect(t, 200)
	e.Do("PUT", "/api/org/settings", map[string]any{"timezone": "Europe/Paris"}, admin.Auth()).Expect(t, 200)
	e.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550100999", "name": "Ann"}, admin.Auth()).Expect(t, 201)
}

// With ffmpeg installed /readyz says so.
func TestReadyzReportsFFmpeg(t *testing.T) {
	needFFmpeg(t)
	e := apptest.New(t, nil)
	var ready map[string]string
	e.Do("GET", "/readyz", nil, nil).Expect(t, 200).Into(t, &ready)
	if ready["ffmpeg"] != "ok" {
		t.Fatalf("readyz %+v", ready)
	}
}
