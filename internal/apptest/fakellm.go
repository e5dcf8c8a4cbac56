package apptest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// LLMMessage is one turn of a conversation a FakeLLM was sent.
type LLMMessage struct {
	Role string // "user" or "assistant"
	Text string
}

// LLMRequest is what a FakeLLM read of one request, in the same terms for
// both API shapes.
type LLMRequest struct {
	Path   string // /v1/chat/completions or /v1/messages
	Header http.Header
	Body   []byte
	// Key is the API key: the Bearer token (OpenAI) or X-Api-Key (Anthropic).
	Key      string
	Model    string
	System   string       // the system prompt (OpenAI: the system and developer messages, joined)
	Messages []LLMMessage // the other turns, in the order sent
	// Temperature is nil when the request had none.
	Temperature *float64
	// MaxTokens is max_tokens, or OpenAI's max_completion_tokens; 0 when absent.
	MaxTokens int
	// MaxTokensField names the field MaxTokens came from.
	MaxTokensField string
}

// FakeLLM stands in for a language model's HTTP API: OpenAI's chat
// completions (/v1/chat/completions, which vLLM, Ollama and LM Studio also
// serve) and Anthropic's messages (/v1/messages). It records every request,
// answers a configured text, and can fail with a status, answer late or
// hold its answers until released; it counts the requests in flight.
type FakeLLM struct {
	*httptest.Server
	mu        sync.Mutex
	requests  []LLMRequest
	reply     func(LLMRequest) string
	failCode  int
	failText  string
	delay     time.Duration
	delayDone chan struct{} // closed when the test ends: delayed answers stop waiting
	held      chan struct{} // non-nil while Hold holds answers back
	inFlight  int           // requests being answered now
	most      int           // the most requests ever in flight at once
}

// NewFakeLLM starts a fake model server until the test ends; it answers
// "Hello from the fake model." until told otherwise.
func NewFakeLLM(t testing.TB) *FakeLLM {
	f := &FakeLLM{delayDone: make(chan struct{})}
	f.reply = func(LLMRequest) string { return "Hello from the fake model." }
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", f.serve)
	mux.HandleFunc("POST /v1/messages", f.serve)
	f.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		close(f.delayDone)
		f.Close()
	})
	return f
}

// OpenAIBaseURL is the base URL to configure for provider "openai".
func (f *FakeLLM) OpenAIBaseURL() string { return f.URL + "/v1" }

// AnthropicBaseURL is the base URL to configure for provider "anthropic".
func (f *FakeLLM) AnthropicBaseURL() string { return f.URL }

// SetReply makes every later request succeed with text.
func (f *FakeLLM) SetReply(text string) {
	f.SetReplyFunc(func(LLMRequest) string { return text })
}

// SetReplyFunc makes every later request succeed with what reply returns
// for it (an echo of the last message, say, to check ordering).
func (f *FakeLLM) SetReplyFunc(reply func(LLMRequest) string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reply, f.failCode, f.failText = reply, 0, ""
}

// SetFailure makes every later request fail with status and message, in the
// provider's error shape, until SetReply.
func (f *FakeLLM) SetFailure(status int, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failCode, f.failText = status, message
}

// SetDelay holds every later answer back for d (0: none), or until the
// client gives up: longer than a client's timeout, it hangs past it.
func (f *FakeLLM) SetDelay(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delay = d
}

// Hold holds every answer back, of requests under way and later ones,
// until release is called (or the client gives up, or the test ends).
func (f *FakeLLM) Hold() (release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	held := make(chan struct{})
	f.held = held
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			if f.held == held {
				f.held = nil
			}
			f.mu.Unlock()
			close(held)
		})
	}
}

// InFlight is how many requests are being answered now; MaxInFlight the
// most there ever were at once.
func (f *FakeLLM) InFlight() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inFlight
}

// MaxInFlight is the most requests the server was answering at once.
func (f *FakeLLM) MaxInFlight() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.most
}

// Requests returns the requests received so far, in arrival order.
func (f *FakeLLM) Requests() []LLMRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]LLMRequest(nil), f.requests...)
}

func (f *FakeLLM) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	anthropic := r.URL.Path == "/v1/messages"
	req, err := parseLLMRequest(r, body, anthropic)
	f.mu.Lock()
	f.requests = append(f.requests, req)
	reply, failCode, failText, delay, held := f.reply, f.failCode, f.failText, f.delay, f.held
	f.inFlight++
	f.most = max(f.most, f.inFlight)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	if held != nil {
		select {
		case <-held:
		case <-r.Context().Done():
			return
		case <-f.delayDone:
			return
		}
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		case <-f.delayDone:
			return
		}
	}
	switch {
	case err != nil:
		failCode, failText = http.StatusBadRequest, err.Error()
	case req.Model == "":
		failCode, failText = http.StatusBadRequest, "model is required"
	case len(req.Messages) == 0:
		failCode, failText = http.StatusBadRequest, "messages must not be empty"
	case anthropic && req.MaxTokens == 0:
		failCode, failText = http.StatusBadRequest, "max_tokens: Field required"
	}
	w.Header().Set("Content-Type", "application/json")
	if failCode != 0 {
		w.WriteHeader(failCode)
		if anthropic {
			_ = json.NewEncoder(w).Encode(map[string]any{"type": "error",
				"error": map[string]any{"type": "api_error", "message": failText}})
		} else {
			_ = json.NewEncoder(w).Encode(map[string]any{
				"error": map[string]any{"message": failText, "type": "invalid_request_error", "code": nil, "param": nil}})
		}
		return
	}
	text := reply(req)
	if anthropic {
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": req.Model,
			"content":     []any{map[string]any{"type": "text", "text": text}},
			"stop_reason": "end_turn", "stop_sequence": nil, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(),
		"model": req.Model, "choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "logprobs": nil,
			"message": map[string]any{"role": "assistant", "content": text, "refusal": nil}}},
		"usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
}

// parseLLMRequest reads either API's request body into an LLMRequest.
func parseLLMRequest(r *http.Request, body []byte, anthropic bool) (LLMRequest, error) {
	req := LLMRequest{Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if anthropic {
		req.Key = r.Header.Get("X-Api-Key")
	} else {
		req.Key = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	var in struct {
		Model               string          `json:"model"`
		System              json.RawMessage `json:"system"`
		Temperature         *float64        `json:"temperature"`
		MaxTokens           int             `json:"max_tokens"`
		MaxCompletionTokens int             `json:"max_completion_tokens"`
		Messages            []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return req, fmt.Errorf("invalid JSON body: %v", err)
	}
	req.Model, req.Temperature = in.Model, in.Temperature
	switch {
	case in.MaxCompletionTokens != 0:
		req.MaxTokens, req.MaxTokensField = in.MaxCompletionTokens, "max_completion_tokens"
	case in.MaxTokens != 0:
		req.MaxTokens, req.MaxTokensField = in.MaxTokens, "max_tokens"
	}
	var system []string
	if len(in.System) > 0 {
		s, err := contentText(in.System)
		if err != nil {
			return req, fmt.Errorf("system: %v", err)
		}
		system = append(system, s)
	}
	for i, m := range in.Messages {
		text, err := contentText(m.Content)
		if err != nil {
			return req, fmt.Errorf("messages.%d.content: %v", i, err)
		}
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, text)
			continue
		}
		req.Messages = append(req.Messages, LLMMessage{Role: m.Role, Text: text})
	}
	req.System = strings.Join(system, "\n")
	return req, nil
}

// contentText reads a content field: a string, or a list of text parts.
func contentText(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("neither a string nor a list of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}
