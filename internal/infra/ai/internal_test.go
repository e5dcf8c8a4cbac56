package ai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"wharf/internal/infra/safehttp"
)

func TestBaseURLNormalization(t *testing.T) {
	t.Parallel()
	s := New(safehttp.Policy{AllowPrivate: true}, time.Second)
	for _, c := range []struct{ provider, in, want string }{
		{OpenAI, "", ""},
		{OpenAI, "http://127.0.0.1:11434", "http://127.0.0.1:11434/v1/"},
		{OpenAI, "http://127.0.0.1:11434/", "http://127.0.0.1:11434/v1/"},
		{OpenAI, "http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1/"},
		{OpenAI, " https://openrouter.example/api/v1/ ", "https://openrouter.example/api/v1/"},
		{Anthropic, "https://gateway.example", "https://gateway.example/"},
		{Anthropic, "https://gateway.example/v1", "https://gateway.example/"},
		{Anthropic, "https://gateway.example/anthropic/v1/", "https://gateway.example/anthropic/"},
	} {
		cfg := Config{Provider: c.provider, Model: "m", BaseURL: c.in}
		if err := s.check(&cfg, []Message{{Role: RoleUser, Text: "hi"}}); err != nil || cfg.BaseURL != c.want {
			t.Errorf("%s %q: %q, %v; want %q", c.provider, c.in, cfg.BaseURL, err, c.want)
		}
	}
}

// Without a BaseURL the providers' own APIs are asked, OpenAI's with
// max_completion_tokens. The requests are delivered to a local server by
// the transport, so nothing leaves the machine.
func TestProviderDefaultsReachTheProvidersAPIs(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string]string{} // host+path -> body
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.Host+r.URL.Path] = string(body)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/messages") {
			_, _ = io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}]}`)
	}))
	t.Cleanup(srv.Close)
	local, _ := url.Parse(srv.URL)
	s := New(safehttp.Policy{}, 5*time.Second)
	s.llm = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Host = r.URL.Host // what the server sees: the provider's host
		r.URL.Scheme, r.URL.Host = local.Scheme, local.Host
		return http.DefaultTransport.RoundTrip(r)
	})}
	for _, p := range []string{OpenAI, Anthropic} {
		if text, err := s.Reply(context.Background(), Config{Provider: p, Model: "m", MaxTokens: 50}, "", []Message{{Role: RoleUser, Text: "hi"}}); err != nil || text != "ok" {
			t.Fatalf("%s: %q, %v", p, text, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if b, ok := got["api.openai.com/v1/chat/completions"]; !ok || !strings.Contains(b, `"max_completion_tokens":50`) || strings.Contains(b, `"max_tokens"`) {
		t.Errorf("OpenAI: %v", got)
	}
	if b, ok := got["api.anthropic.com/v1/messages"]; !ok || !strings.Contains(b, `"max_tokens":50`) {
		t.Errorf("Anthropic: %v", got)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestProviderMessage(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"error":{"message":"Invalid key","type":"invalid_request_error"}}`:          "Invalid key",
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`: "Overloaded",
		`{"error":"model 'llama9' not found"}`:                                        "model 'llama9' not found",
		`{"object":"error","message":"The model does not exist.","code":404}`:         "The model does not exist.",
		`{"detail":"Not Found"}`:   "Not Found",
		"<html>Bad Gateway</html>": "<html>Bad Gateway</html>",
		"":                         "",
	} {
		if got := providerMessage(body); got != want {
			t.Errorf("providerMessage(%q) = %q, want %q", body, got, want)
		}
	}
	if got := providerMessage(strings.Repeat("x", 1000)); len([]rune(got)) != maxMessage+1 {
		t.Errorf("a long body is kept whole: %d runes", len([]rune(got)))
	}
}

// The cap's edge: a body of exactly max bytes is read whole, one byte more
// is ErrResponseTooLarge, and so is a Content-Length past max.
func TestCappedBodies(t *testing.T) {
	t.Parallel()
	const max = 10
	serve := func(body string, length bool) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !length {
				w.(http.Flusher).Flush() // chunked: no Content-Length
			}
			_, _ = io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	c := &http.Client{Transport: capped{next: http.DefaultTransport, max: max}}
	for _, tc := range []struct {
		body    string
		length  bool
		wantErr bool
	}{{"0123456789", false, false}, {"0123456789", true, false}, {"0123456789x", false, true}, {"0123456789x", true, true},
		{strings.Repeat("y", 100000), false, true}} {
		res, err := c.Get(serve(tc.body, tc.length).URL)
		var got []byte
		if err == nil {
			got, err = io.ReadAll(res.Body)
			res.Body.Close()
		}
		if tc.wantErr != errors.Is(err, ErrResponseTooLarge) || (!tc.wantErr && string(got) != tc.body) || len(got) > max {
			t.Errorf("%d bytes (Content-Length %v): read %d, %v", len(tc.body), tc.length, len(got), err)
		}
	}
}
