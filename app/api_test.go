package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"wharf/app"
	"wharf/internal/infra/config"
	"wharf/internal/testenv"
)

func apiConfig(t *testing.T, overrides map[string]string) config.API {
	environ := map[string]string{
		"DATABASE_URL":             testenv.DatabaseURL(t),
		"REDIS_URL":                testenv.RedisURL(t),
		"JWT_SECRET":               testenv.RandomKey(),
		"ENCRYPTION_KEY":           testenv.RandomKey(),
		"BOOTSTRAP_ADMIN_PASSWORD": "bootstrap-pass-123",
		"STORAGE_DIR":              t.TempDir(),
	}
	for k, v := range overrides {
		environ[k] = v
	}
	c, err := config.LoadAPIFrom(environ)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A missing ffmpeg does not stop the api: it starts and warns once, naming
// what is disabled and how to install ffmpeg.
func TestNewAPIWarnsOnceWithoutFFmpeg(t *testing.T) {
	log, logs := testenv.CaptureLogs()
	a, err := app.NewAPI(context.Background(), apiConfig(t, map[string]string{"FFMPEG_PATH": "/nonexistent"}), log)
	if err != nil {
		t.Fatalf("api did not start without ffmpeg: %v", err)
	}
	defer a.Close()
	var warned []testenv.Record
	for _, r := range logs.Records(slog.LevelWarn) {
		if strings.Contains(r.Message+r.Attrs["error"], "ffmpeg") {
			warned = append(warned, r)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0].Message, "audio uploads are disabled") ||
		!strings.Contains(warned[0].Attrs["error"], "apt-get install ffmpeg") {
		t.Fatalf("want one warning about ffmpeg, got %+v", warned)
	}
}

// Health probes come every few seconds: answered, they are logged at debug;
// other requests stay at info.
func TestProbesAreLoggedAtDebug(t *testing.T) {
	log, logs := testenv.CaptureLogs()
	a, err := app.NewAPI(context.Background(), apiConfig(t, nil), log)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a.Handler)
	defer srv.Close()
	for _, path := range []string{"/healthz", "/readyz", "/api/me"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	levels := map[string]slog.Level{}
	for _, r := range logs.Records(slog.LevelDebug) {
		if r.Message == "http request" {
			levels[r.Attrs["path"]] = r.Level
		}
	}
	if levels["/healthz"] != slog.LevelDebug || levels["/readyz"] != slog.LevelDebug || levels["/api/me"] != slog.LevelInfo {
		t.Fatalf("request log levels %v", levels)
	}
}
