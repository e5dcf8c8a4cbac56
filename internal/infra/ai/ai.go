// Package ai asks a language model for the chatbot's replies and fetches the
// `api` AI contexts that go into its prompt.
//
// Two API shapes are spoken, through the providers' official SDKs: OpenAI's
// chat completions (provider "openai", which also covers OpenAI-compatible
// servers such as vLLM, Ollama and LM Studio through BaseURL) and
// Anthropic's messages (provider "anthropic"). Every request goes through
// the SSRF-safe client of internal/safehttp, because an organization chooses
// its own ai_base_url and AI context URLs: a model server or a context URL
// on the internal network is refused unless the policy allows private
// targets (OUTBOUND_ALLOW_PRIVATE).
//
// The package holds no organization state: the caller resolves an
// organization's settings (and the AI_API_URL / AI_API_KEY defaults) into a
// Config for each call. Errors are returned, never swallowed: the chatbot
// answers with its fallback message.
package ai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"wharf/internal/infra/safehttp"
)

// Providers.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
)

// DefaultMaxTokens is the reply limit when a Config has none: Anthropic's API
// requires one, and a chatbot reply has no use for more.
const DefaultMaxTokens = 1024

// Config is one organization's model settings, resolved by the caller.
type Config struct {
	// Provider is "openai" (also any OpenAI-compatible server: vLLM,
	// Ollama, LM Studio) or "anthropic".
	Provider string
	Model    string
	APIKey   string
	// BaseURL is optional; "" is the provider's own API. For "openai" it is
	// the URL that /chat/completions is appended to, as OpenAI-compatible
	// servers document it (http://host:11434/v1); a URL without a path gets
	// /v1. For "anthropic" it is the URL that /v1/messages is appended to;
	// a trailing /v1 is dropped.
	BaseURL     string
	Temperature float64
	// MaxTokens limits the reply; 0 is DefaultMaxTokens.
	MaxTokens int
}

// Message is one turn of the conversation, oldest first.
type Message struct {
	Role string // "user" or "assistant"
	Text string
}

// Roles of a Message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Error is the provider's answer to a request it refused: the HTTP status
// and the provider's own message (with the API key, should the provider
// quote it, taken out).
type Error struct {
	Provider string
	Status   int
	Message  string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("ai: %s answered %d %s", e.Provider, e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("ai: %s answered %d: %s", e.Provider, e.Status, e.Message)
}

// ErrTimeout is wrapped by the error of a request (Reply or FetchContext)
// that ran out of time: the Service's timeout or the caller's deadline.
var ErrTimeout = errors.New("ai: request timed out")

// ErrNoText is wrapped when a model answered without any text (a refusal
// with no content, say): the chatbot must not send an empty message.
var ErrNoText = errors.New("ai: the model answered no text")

// MaxResponseBytes caps a model server's answer. The SDKs read a whole
// body before decoding it, inside the chatbot's evaluation, which holds the
// contact's lock and a worker slot: a server of the organization's choosing
// must not make a worker read without end. A chat reply is a few KB.
const MaxResponseBytes = 1 << 20

// ErrResponseTooLarge is wrapped when a model server's answer is longer
// than MaxResponseBytes: the rest is not read, and the chatbot sends its
// fallback.
var ErrResponseTooLarge = fmt.Errorf("ai: the model server's answer is longer than %d bytes", MaxResponseBytes)

// errRedirect refuses a model server's redirect: the request carries the
// API key, which goes to the configured URL and nowhere else (Go keeps
// Anthropic's X-Api-Key header across a redirect to another host).
var errRedirect = errors.New("ai: the model server answered with a redirect, which is not followed")

// Service is safe for concurrent use; one serves the whole process.
type Service struct {
	policy  safehttp.Policy
	timeout time.Duration
	// llm carries the model requests; fetch the AI context requests, on a
	// shorter timeout because they come before the model's answer.
	llm, fetch   *http.Client
	fetchTimeout time.Duration

	now   func() time.Time // the cache's clock; tests move it
	mu    sync.Mutex
	cache map[string]cachedContext
	group singleflight.Group
}

// New returns a Service whose model requests each take at most timeout
// (AI context fetches at most ContextFetchTimeout, or timeout if shorter),
// through clients that enforce policy.
func New(policy safehttp.Policy, timeout time.Duration) *Service {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	fetchTimeout := min(timeout, ContextFetchTimeout)
	llm := policy.Client(timeout)
	llm.Transport = capped{next: llm.Transport, max: MaxResponseBytes}
	llm.CheckRedirect = func(*http.Request, []*http.Request) error { return errRedirect }
	return &Service{policy: policy, timeout: timeout, fetchTimeout: fetchTimeout,
		llm: llm, fetch: policy.Client(fetchTimeout),
		now: time.Now, cache: map[string]cachedContext{}}
}

// capped is a transport whose response bodies end with ErrResponseTooLarge
// past max bytes (at once when Content-Length announces more).
type capped struct {
	next http.RoundTripper
	max  int64
}

func (c capped) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if res.ContentLength > c.max {
		res.Body.Close()
		return nil, ErrResponseTooLarge
	}
	res.Body = &cappedBody{ReadCloser: res.Body, left: c.max}
	return res, nil
}

type cappedBody struct {
	io.ReadCloser
	left int64 // bytes still allowed
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, ErrResponseTooLarge
	}
	// Read one byte past the cap to tell a body of exactly max bytes from
	// a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), ErrResponseTooLarge
	}
	return n, err
}

// Reply asks the model for the next assistant message after history, under
// the system prompt. Errors are returned (the chatbot sends its fallback):
// an *Error for the provider's refusal, ErrTimeout, ErrNoText, or the
// transport's error, whose text may name an internal address and is for the
// log (see safehttp.Public). No error's text contains cfg.APIKey.
func (s *Service) Reply(ctx context.Context, cfg Config, system string, history []Message) (string, error) {
	if err := s.check(&cfg, history); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var (
		text string
		err  error
	)
	switch cfg.Provider {
	case OpenAI:
		text, err = s.openAIReply(ctx, cfg, system, history)
	case Anthropic:
		text, err = s.anthropicReply(ctx, cfg, system, history)
	}
	if err != nil {
		return "", s.wrap(ctx, cfg, err)
	}
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("%w (%s %s)", ErrNoText, cfg.Provider, cfg.Model)
	}
	return text, nil
}

// check validates cfg and history before anything is sent, and normalizes
// the provider and base URL.
func (s *Service) check(cfg *Config, history []Message) error {
	cfg.Provider = strings.ToLower(strings.TrimSpace(cfg.Provider))
	if cfg.Provider != OpenAI && cfg.Provider != Anthropic {
		return fmt.Errorf("ai: unknown provider %q (openai or anthropic)", cfg.Provider)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return errors.New("ai: no model configured")
	}
	if cfg.MaxTokens < 0 {
		return errors.New("ai: max tokens must not be negative")
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if len(history) == 0 {
		return errors.New("ai: no message to reply to")
	}
	for i, m := range history {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return fmt.Errorf("ai: message %d has role %q (user or assistant)", i, m.Role)
		}
	}
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	if cfg.BaseURL == "" {
		return nil
	}
	// Checked again here, not only when saved: the policy may have changed
	// since, and AI_API_URL was never saved through ValidateBaseURL.
	if err := s.policy.ValidateURL(cfg.BaseURL); err != nil {
		return fmt.Errorf("ai: base URL: %w", err)
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return fmt.Errorf("ai: base URL: %w", err)
	}
	path := strings.TrimSuffix(u.Path, "/")
	switch {
	case cfg.Provider == OpenAI && path == "":
		path = "/v1"
	case cfg.Provider == Anthropic:
		path = strings.TrimSuffix(path, "/v1")
	}
	u.Path, u.RawPath = path+"/", ""
	cfg.BaseURL = u.String()
	return nil
}

// wrap turns an SDK's error into this package's: the status and message of
// a refusal, ErrTimeout for a deadline.
func (s *Service) wrap(ctx context.Context, cfg Config, err error) error {
	if status, body, ok := apiError(err); ok {
		msg := providerMessage(body)
		if cfg.APIKey != "" {
			msg = strings.ReplaceAll(msg, cfg.APIKey, "[api key]")
		}
		return &Error{Provider: cfg.Provider, Status: status, Message: msg}
	}
	switch {
	case errors.Is(err, ErrResponseTooLarge):
		return fmt.Errorf("%w (%s %s)", ErrResponseTooLarge, cfg.Provider, cfg.Model)
	case timedOut(ctx, err):
		return fmt.Errorf("%w: %s did not answer within %s", ErrTimeout, cfg.Provider, s.timeout)
	case ctx.Err() != nil:
		return fmt.Errorf("ai: %s request: %w", cfg.Provider, ctx.Err())
	}
	return fmt.Errorf("ai: %s request: %w", cfg.Provider, err)
}

// timedOut tells whether err, of a request made with ctx, is a timeout: of
// the context (the caller's deadline, or ours) or of the client.
func timedOut(ctx context.Context, err error) bool {
	var ne net.Error
	return errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// ValidateBaseURL checks an organization's ai_base_url when it is saved:
// empty (the default), or an http or https URL that policy allows. Show the
// error to the caller through safehttp.Public.
func ValidateBaseURL(policy safehttp.Policy, raw string) error {
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	return policy.ValidateURL(raw)
}
