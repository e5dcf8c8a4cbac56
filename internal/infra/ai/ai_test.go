package ai_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/internal/infra/ai"
	"wharf/internal/infra/safehttp"
)

// private is the policy of the tests: the fake servers listen on loopback.
var private = safehttp.Policy{AllowPrivate: true}

var history = []ai.Message{
	{Role: ai.RoleUser, Text: "Hi, what are your opening hours?"},
	{Role: ai.RoleAssistant, Text: "We open at 9."},
	{Role: ai.RoleUser, Text: "And on Sundays?"},
}

func wantMessages(t *testing.T, got []apptest.LLMMessage, want []ai.Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("messages %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Role != want[i].Role || got[i].Text != want[i].Text {
			t.Fatalf("message %d: %+v, want %+v (all: %+v)", i, got[i], want[i], got)
		}
	}
}

func onlyRequest(t *testing.T, f *apptest.FakeLLM) apptest.LLMRequest {
	t.Helper()
	reqs := f.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the fake model got %d requests, want 1", len(reqs))
	}
	return reqs[0]
}

func TestOpenAIRequestCarriesPromptHistorySettingsAndKey(t *testing.T) {
	t.Parallel()
	for name, base := range map[string]func(*apptest.FakeLLM) string{
		"documented base URL":  (*apptest.FakeLLM).OpenAIBaseURL,
		"base URL without /v1": func(f *apptest.FakeLLM) string { return f.URL },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := apptest.NewFakeLLM(t)
			f.SetReply("Closed on Sundays.")
			s := ai.New(private, 5*time.Second)
			got, err := s.Reply(context.Background(), ai.Config{Provider: "openai", Model: "gpt-test", APIKey: "sk-test-123",
				BaseURL: base(f), Temperature: 0.3, MaxTokens: 77}, "You are the shop's assistant.", history)
			if err != nil || got != "Closed on Sundays." {
				t.Fatalf("Reply = %q, %v", got, err)
			}
			r := onlyRequest(t, f)
			if r.Path != "/v1/chat/completions" || r.Key != "sk-test-123" || r.Model != "gpt-test" ||
				r.System != "You are the shop's assistant." || r.Temperature == nil || *r.Temperature != 0.3 ||
				r.MaxTokens != 77 || r.MaxTokensField != "max_tokens" {
				t.Fatalf("request %+v (temperature %v)", r, r.Temperature)
			}
			wantMessages(t, r.Messages, history)
		})
	}
}

func TestAnthropicRequestCarriesPromptHistorySettingsAndKey(t *testing.T) {
	t.Parallel()
	for name, base := range map[string]func(*apptest.FakeLLM) string{
		"documented base URL": (*apptest.FakeLLM).AnthropicBaseURL,
		"base URL with /v1":   func(f *apptest.FakeLLM) string { return f.URL + "/v1/" },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := apptest.NewFakeLLM(t)
			f.SetReply("Closed on Sundays.")
			s := ai.New(private, 5*time.Second)
			got, err := s.Reply(context.Background(), ai.Config{Provider: "anthropic", Model: "claude-test", APIKey: "sk-ant-123",
				BaseURL: base(f), Temperature: 0.5, MaxTokens: 99}, "You are the shop's assistant.", history)
			if err != nil || got != "Closed on Sundays." {
				t.Fatalf("Reply = %q, %v", got, err)
			}
			r := onlyRequest(t, f)
			if r.Path != "/v1/messages" || r.Key != "sk-ant-123" || r.Header.Get("Authorization") != "" || r.Model != "claude-test" ||
				r.System != "You are the shop's assistant." || r.Temperature == nil || *r.Temperature != 0.5 || r.MaxTokens != 99 {
				t.Fatalf("request %+v", r)
			}
			wantMessages(t, r.Messages, history)
		})
	}
}

// Anthropic's turns begin with the user and alternate: a greeting the bot
// sent first is left out, and consecutive messages of one role are joined.
func TestAnthropicTurnsBeginWithTheUserAndAlternate(t *testing.T) {
	t.Parallel()
	f := apptest.NewFakeLLM(t)
	s := ai.New(private, 5*time.Second)
	_, err := s.Reply(context.Background(), ai.Config{Provider: "anthropic", Model: "m", BaseURL: f.AnthropicBaseURL()}, "", []ai.Message{
		{Role: ai.RoleAssistant, Text: "Welcome!"},
		{Role: ai.RoleUser, Text: "hi"}, {Role: ai.RoleUser, Text: "anyone?"},
		{Role: ai.RoleAssistant, Text: "Yes."}, {Role: ai.RoleUser, Text: "price?"},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := onlyRequest(t, f)
	wantMessages(t, r.Messages, []ai.Message{{Role: "user", Text: "hi\n\nanyone?"}, {Role: "assistant", Text: "Yes."}, {Role: "user", Text: "price?"}})
	if r.System != "" || r.MaxTokens != ai.DefaultMaxTokens {
		t.Fatalf("system %q, max tokens %d: want none and the default", r.System, r.MaxTokens)
	}
}

// A temperature of 0 is a setting (deterministic answers), not an absence;
// MaxTokens 0 is the default.
func TestZeroTemperatureIsSentAndMaxTokensDefaults(t *testing.T) {
	t.Parallel()
	f := apptest.NewFakeLLM(t)
	s := ai.New(private, 5*time.Second)
	if _, err := s.Reply(context.Background(), ai.Config{Provider: "openai", Model: "m", BaseURL: f.OpenAIBaseURL()}, "", history[:1]); err != nil {
		t.Fatal(err)
	}
	r := onlyRequest(t, f)
	if r.Temperature == nil || *r.Temperature != 0 || r.MaxTokens != ai.DefaultMaxTokens || r.System != "" {
		t.Fatalf("temperature %v, max tokens %d, system %q", r.Temperature, r.MaxTokens, r.System)
	}
	if !strings.Contains(string(r.Body), `"temperature":0`) {
		t.Fatalf("body %s has no temperature 0", r.Body)
	}
}

// The provider's refusal comes back as an *ai.Error with its status and
// message, without the key even when the provider quotes it, after one
// request (no retries, even of a 5xx).
func TestProviderErrorsComeBackWithStatusAndMessage(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"openai", "anthropic"} {
		for _, status := range []int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusServiceUnavailable} {
			t.Run(provider+"/"+http.StatusText(status), func(t *testing.T) {
				t.Parallel()
				f := apptest.NewFakeLLM(t)
				const key = "sk-secret-key-42"
				f.SetFailure(status, "Incorrect API key provided: "+key+".")
				s := ai.New(private, 5*time.Second)
				base := f.OpenAIBaseURL()
				if provider == "anthropic" {
					base = f.AnthropicBaseURL()
				}
				got, err := s.Reply(context.Background(), ai.Config{Provider: provider, Model: "m", APIKey: key, BaseURL: base}, "sys", history)
				var ae *ai.Error
				if got != "" || !errors.As(err, &ae) {
					t.Fatalf("Reply = %q, %v: want an *ai.Error", got, err)
				}
				if ae.Provider != provider || ae.Status != status || ae.Message != "Incorrect API key provided: [api key]." {
					t.Fatalf("error %+v", ae)
				}
				if strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "Incorrect API key") {
					t.Fatalf("error text %q", err)
				}
				onlyRequest(t, f)
			})
		}
	}
}

func TestAModelThatHangsPastTheTimeoutIsAnError(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			f := apptest.NewFakeLLM(t)
			f.SetDelay(time.Minute)
			s := ai.New(private, 300*time.Millisecond)
			start := time.Now()
			_, err := s.Reply(context.Background(), ai.Config{Provider: provider, Model: "m", BaseURL: f.URL}, "", history)
			if !errors.Is(err, ai.ErrTimeout) {
				t.Fatalf("err = %v, want ErrTimeout", err)
			}
			// Well before the model's minute (not "about 300 ms": a busy
			// machine is slow at everything).
			if d := time.Since(start); d > 30*time.Second {
				t.Fatalf("gave up after %s, want about 300ms", d)
			}
		})
	}
}

// The caller's own deadline counts too.
func TestTheCallersDeadlineIsATimeout(t *testing.T) {
	t.Parallel()
	f := apptest.NewFakeLLM(t)
	f.SetDelay(time.Minute)
	s := ai.New(private, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.Reply(ctx, ai.Config{Provider: "openai", Model: "m", BaseURL: f.URL}, "", history); !errors.Is(err, ai.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestUnreachableServerIsAnError(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := ai.New(private, 2*time.Second)
	_, err = s.Reply(context.Background(), ai.Config{Provider: "openai", Model: "m", BaseURL: "http://" + addr}, "", history)
	if err == nil || errors.Is(err, ai.ErrTimeout) {
		t.Fatalf("err = %v, want a connection error", err)
	}
}

func TestAnEmptyAnswerIsAnError(t *testing.T) {
	t.Parallel()
	f := apptest.NewFakeLLM(t)
	f.SetReply("  ")
	s := ai.New(private, 5*time.Second)
	for _, cfg := range []ai.Config{{Provider: "openai", Model: "m", BaseURL: f.URL}, {Provider: "anthropic", Model: "m", BaseURL: f.URL}} {
		if got, err := s.Reply(context.Background(), cfg, "", history); !errors.Is(err, ai.ErrNoText) {
			t.Fatalf("%s: Reply = %q, %v: want ErrNoText", cfg.Provider, got, err)
		}
	}
}

// A model server on the internal network is refused unless the policy
// allows private targets, before anything is sent.
func TestPrivateModelServerIsRefusedByDefault(t *testing.T) {
	t.Parallel()
	f := apptest.NewFakeLLM(t)
	s := ai.New(safehttp.Policy{}, 5*time.Second)
	for _, base := range []string{f.OpenAIBaseURL(), strings.Replace(f.URL, "127.0.0.1", "localhost", 1)} {
		_, err := s.Reply(context.Background(), ai.Config{Provider: "openai", Model: "m", BaseURL: base}, "", history)
		if !errors.Is(err, safehttp.ErrBlocked) {
			t.Fatalf("%s: err = %v, want ErrBlocked", base, err)
		}
	}
	if n := len(f.Requests()); n != 0 {
		t.Fatalf("the refused server got %d requests", n)
	}
}

func TestInvalidConfigOrHistoryIsRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	f := apptest.NewFakeLLM(t)
	s := ai.New(private, 5*time.Second)
	ok := ai.Config{Provider: "openai", Model: "m", BaseURL: f.URL}
	for name, c := range map[string]struct {
		cfg     ai.Config
		history []ai.Message
		want    string
	}{
		"unknown provider": {ai.Config{Provider: "gemini", Model: "m", BaseURL: f.URL}, history, "unknown provider"},
		"no model":         {ai.Config{Provider: "openai", BaseURL: f.URL}, history, "no model"},
		"negative tokens":  {ai.Config{Provider: "openai", Model: "m", BaseURL: f.URL, MaxTokens: -1}, history, "max tokens"},
		"no history":       {ok, nil, "no message"},
		"unknown role":     {ok, []ai.Message{{Role: "system", Text: "x"}}, `role "system"`},
		"bad scheme":       {ai.Config{Provider: "openai", Model: "m", BaseURL: "ftp://example.com"}, history, "scheme"},
		"only assistant":   {ai.Config{Provider: "anthropic", Model: "m", BaseURL: f.URL}, history[1:2], "no user message"},
	} {
		if _, err := s.Reply(context.Background(), c.cfg, "", c.history); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
	if n := len(f.Requests()); n != 0 {
		t.Fatalf("invalid calls sent %d requests", n)
	}
}

// No OPENAI_* or ANTHROPIC_* variable of the process reaches a tenant's
// request (no t.Parallel: it sets the environment).
func TestTheProcessEnvironmentDoesNotLeakIntoRequests(t *testing.T) {
	t.Setenv("OPENAI_ORG_ID", "org-leak")
	t.Setenv("OPENAI_PROJECT_ID", "proj-leak")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: 1")
	t.Setenv("OPENAI_API_KEY", "sk-env-leak")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-env-leak")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-leak")
	f := apptest.NewFakeLLM(t)
	s := ai.New(private, 5*time.Second)
	for _, p := range []string{"openai", "anthropic"} {
		if _, err := s.Reply(context.Background(), ai.Config{Provider: p, Model: "m", APIKey: "tenant-key", BaseURL: f.URL}, "", history); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range f.Requests() {
		for name, vals := range r.Header {
			if slices.ContainsFunc(vals, func(v string) bool { return strings.Contains(v, "leak") }) {
				t.Errorf("%s: header %s: %q carries the process environment", r.Path, name, vals)
			}
		}
		if r.Key != "tenant-key" {
			t.Errorf("%s: key %q", r.Path, r.Key)
		}
	}
}

func TestValidateBaseURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		policy safehttp.Policy
		raw    string
		ok     bool
	}{
		{safehttp.Policy{}, "", true},
		{safehttp.Policy{}, "https://api.example.com/v1", true},
		{safehttp.Policy{}, "ftp://example.com", false},
		{safehttp.Policy{}, "not a url", false},
		{safehttp.Policy{}, "http://127.0.0.1:11434/v1", false},
		{safehttp.Policy{}, "http://localhost:11434/v1", false},
		{private, "http://127.0.0.1:11434/v1", true},
		{private, "http://169.254.169.254/latest", false}, // cloud metadata, refused whatever the policy
	} {
		if err := ai.ValidateBaseURL(c.policy, c.raw); (err == nil) != c.ok {
			t.Errorf("ValidateBaseURL(%+v, %q) = %v, want ok %v", c.policy, c.raw, err, c.ok)
		}
	}
	if err := ai.ValidateBaseURL(safehttp.Policy{}, "http://10.0.0.1/"); safehttp.Public(err) != safehttp.NotAllowed {
		t.Errorf("a private address: %q, want %q for the caller", safehttp.Public(err), safehttp.NotAllowed)
	}
}

// A model server's answer past MaxResponseBytes is an error (the chatbot
// sends its fallback), for both API shapes; one just under it is read.
func TestAnAnswerPastTheCapIsAnError(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			f := apptest.NewFakeLLM(t)
			s := ai.New(private, 20*time.Second)
			cfg := ai.Config{Provider: provider, Model: "m", BaseURL: f.URL}
			f.SetReply(strings.Repeat("a", ai.MaxResponseBytes+1))
			if got, err := s.Reply(context.Background(), cfg, "", history); !errors.Is(err, ai.ErrResponseTooLarge) || got != "" {
				t.Fatalf("Reply = %d bytes, %v: want ErrResponseTooLarge", len(got), err)
			}
			under := strings.Repeat("b", ai.MaxResponseBytes-1024)
			f.SetReply(under)
			if got, err := s.Reply(context.Background(), cfg, "", history); err != nil || got != under {
				t.Fatalf("Reply = %d bytes, %v: want the answer under the cap", len(got), err)
			}
		})
	}
}

// A model server's redirect is not followed: the key goes to the
// configured URL only (Go would carry Anthropic's X-Api-Key to another
// host).
func TestARedirectIsNotFollowed(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			elsewhere := apptest.NewFakeLLM(t)
			redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
			}))
			t.Cleanup(redirect.Close)
			s := ai.New(private, 5*time.Second)
			_, err := s.Reply(context.Background(), ai.Config{Provider: provider, Model: "m", APIKey: "sk-bound", BaseURL: redirect.URL}, "", history)
			if err == nil {
				t.Fatal("a redirect was answered as a reply")
			}
			if n := len(elsewhere.Requests()); n != 0 {
				t.Fatalf("the redirect's target got %d requests", n)
			}
		})
	}
}

// Without a key no credential header is sent at all.
func TestNoKeyNoCredentialHeader(t *testing.T) {
	t.Parallel()
	f := apptest.NewFakeLLM(t)
	s := ai.New(private, 5*time.Second)
	for _, provider := range []string{"openai", "anthropic"} {
		if _, err := s.Reply(context.Background(), ai.Config{Provider: provider, Model: "m", BaseURL: f.URL}, "", history); err != nil {
			t.Fatalf("%s: %v", provider, err)
		}
	}
	for _, r := range f.Requests() {
		if _, ok := r.Header["Authorization"]; ok {
			t.Fatalf("%s: Authorization header %q", r.Path, r.Header.Get("Authorization"))
		}
		if _, ok := r.Header["X-Api-Key"]; ok {
			t.Fatalf("%s: X-Api-Key header %q", r.Path, r.Header.Get("X-Api-Key"))
		}
	}
}
