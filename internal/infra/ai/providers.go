package ai

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	openaioption "github.com/openai/openai-go/v3/option"
)

// The providers' own APIs, for a Config without a BaseURL.
const (
	openAIDefaultURL    = "https://api.openai.com/v1/"
	anthropicDefaultURL = "https://api.anthropic.com/"
)

// openAIReply asks a chat completions endpoint. The service is built per
// call from explicit options only (not openai.NewClient), so that no
// OPENAI_* variable of the process's environment reaches a tenant's request.
func (s *Service) openAIReply(ctx context.Context, cfg Config, system string, history []Message) (string, error) {
	base := cfg.BaseURL
	if base == "" {
		base = openAIDefaultURL
	}
	opts := []openaioption.RequestOption{
		openaioption.WithHTTPClient(s.llm),
		openaioption.WithBaseURL(base),
		// No retries: the chatbot answers each contact in order, and a
		// fallback now beats a reply after several backoffs.
		openaioption.WithMaxRetries(0),
		openaioption.WithRequestTimeout(s.timeout),
	}
	if cfg.APIKey != "" {
		opts = append(opts, openaioption.WithAPIKey(cfg.APIKey))
	}
	svc := openai.NewChatCompletionService(opts...)
	msgs := make([]openai.ChatCompletionMessageParamUnion, 0, len(history)+1)
	if system != "" {
		msgs = append(msgs, openai.SystemMessage(system))
	}
	for _, m := range history {
		if m.Role == RoleAssistant {
			msgs = append(msgs, openai.AssistantMessage(m.Text))
		} else {
			msgs = append(msgs, openai.UserMessage(m.Text))
		}
	}
	params := openai.ChatCompletionNewParams{
		Model:       cfg.Model,
		Messages:    msgs,
		Temperature: openai.Float(cfg.Temperature),
	}
	// OpenAI's own API has replaced max_tokens by max_completion_tokens (its
	// reasoning models refuse the old name); the compatible servers
	// (vLLM, Ollama, LM Studio) know max_tokens.
	if isOpenAIHost(base) {
		params.MaxCompletionTokens = openai.Int(int64(cfg.MaxTokens))
	} else {
		params.MaxTokens = openai.Int(int64(cfg.MaxTokens))
	}
	res, err := svc.New(ctx, params)
	if err != nil {
		return "", err
	}
	if len(res.Choices) == 0 {
		return "", nil
	}
	return res.Choices[0].Message.Content, nil
}

func isOpenAIHost(base string) bool {
	u, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

// anthropicReply asks a messages endpoint, with explicit options only (no
// ANTHROPIC_* variable or profile of the process's environment).
func (s *Service) anthropicReply(ctx context.Context, cfg Config, system string, history []Message) (string, error) {
	base := cfg.BaseURL
	if base == "" {
		base = anthropicDefaultURL
	}
	opts := []anthropicoption.RequestOption{
		anthropicoption.WithHTTPClient(s.llm),
		anthropicoption.WithBaseURL(base),
		anthropicoption.WithMaxRetries(0),
		// Also what spares the SDK its estimate of a non-streaming
		// request's duration, which refuses large max_tokens.
		anthropicoption.WithRequestTimeout(s.timeout),
	}
	if cfg.APIKey != "" {
		opts = append(opts, anthropicoption.WithAPIKey(cfg.APIKey))
	}
	svc := anthropic.NewMessageService(opts...)
	params := anthropic.MessageNewParams{
		Model:       anthropic.Model(cfg.Model),
		MaxTokens:   int64(cfg.MaxTokens),
		Messages:    anthropicTurns(history),
		Temperature: anthropic.Float(cfg.Temperature),
	}
	if system != "" {
		params.System = []anthropic.TextBlockParam{{Text: system}}
	}
	if len(params.Messages) == 0 {
		return "", errors.New("ai: no user message to reply to")
	}
	res, err := svc.New(ctx, params)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, block := range res.Content {
		if block.Type == "text" {
			b.WriteString(block.Text)
		}
	}
	return b.String(), nil
}

// anthropicTurns maps the history to Anthropic's turns, which must begin
// with the user: assistant messages before the first user message (a
// greeting the bot sent first) are left out, and consecutive messages of
// one role are joined into one turn, as the API itself would.
func anthropicTurns(history []Message) []anthropic.MessageParam {
	var turns []anthropic.MessageParam
	var role string
	var parts []string
	flush := func() {
		if len(parts) == 0 {
			return
		}
		block := anthropic.NewTextBlock(strings.Join(parts, "\n\n"))
		if role == RoleAssistant {
			turns = append(turns, anthropic.NewAssistantMessage(block))
		} else {
			turns = append(turns, anthropic.NewUserMessage(block))
		}
		parts = nil
	}
	for _, m := range history {
		if role == "" && m.Role != RoleUser {
			continue
		}
		if m.Role != role {
			flush()
			role = m.Role
		}
		parts = append(parts, m.Text)
	}
	flush()
	return turns
}

// apiError recognizes either SDK's error for an HTTP answer with an error
// status, and returns the status and the body.
func apiError(err error) (status int, body string, ok bool) {
	var oe *openai.Error
	if errors.As(err, &oe) {
		return oe.StatusCode, oe.RawJSON(), true
	}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		return ae.StatusCode, ae.RawJSON(), true
	}
	return 0, "", false
}

// maxMessage bounds the provider's message kept in an Error: it goes to the
// log, and an HTML error page is not worth more.
const maxMessage = 300

// providerMessage finds the message in an error body of any of the shapes
// the providers and compatible servers use: {"error":{"message":...}}
// (OpenAI, Anthropic), {"error":"..."} (Ollama), {"message":"..."} (vLLM),
// {"detail":"..."}; else the body itself, shortened.
func providerMessage(body string) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	msg := strings.TrimSpace(body)
	if json.Unmarshal([]byte(body), &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			msg = s
		case v.Message != "":
			msg = v.Message
		case v.Detail != nil:
			if d, err := json.Marshal(v.Detail); err == nil {
				msg = strings.Trim(string(d), `"`)
			}
		}
	}
	if r := []rune(msg); len(r) > maxMessage {
		msg = string(r[:maxMessage]) + "…"
	}
	return msg
}
