package customactions

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"wharf/models"
)

// A target that does not answer, or stops half-way through its answer, is
// given up after the timeout (shortened here) with a message that says so.
func TestWebhookTimeouts(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/half" {
			w.WriteHeader(200)
			_, _ = w.Write([]byte(`{"a": `))
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	s := &Service{policy: lax, http: lax.Client(300 * time.Millisecond)}
	for path, want := range map[string]string{
		"/none": "the target did not answer within 10s",
		"/half": "the target did not finish its answer within 10s",
	} {
		a := &models.CustomAction{Name: "Slow"}
		a.Config.V = map[string]any{"url": slow.URL + path, "method": "GET"}
		start := time.Now()
		res := s.callWebhook(context.Background(), a, Values{})
		if res.Success || res.Message != want || !strings.HasPrefix(res.Toast.Message, "Slow: ") || time.Since(start) > 30*time.Second { // well before never: the target does not answer
			t.Errorf("%s: %+v after %s", path, res, time.Since(start))
		}
	}
}
