package chatbot

import (
	"errors"
	"slices"
	"strings"

	"wharf/internal/infra/ai"
	"wharf/models"
)

// errNoAI is the answer when AI is on but nothing can be asked (no client,
// no model): the fallback is sent instead.
var errNoAI = errors.New("no AI model configured")

// aiReply asks the organization's model for the reply. The prompt is the
// system prompt, then the matching AI contexts (by priority; a context
// without trigger keywords always matches, others when the message
// contains one), then the last ai_history_messages messages of the
// conversation, this one included. The model call happens inside the
// evaluation's transaction (so the answer is stored exactly once with
// it), bounded by AI_TIMEOUT, and within the organization's share of the
// worker (errOrgBusy past it).
func (e *evaluation) aiReply() (string, error) {
	st := e.settings
	if e.s.ai == nil || st.AIModel == "" {
		return "", errNoAI
	}
	cfg, err := e.aiConfig()
	if err != nil {
		return "", err
	}
	if err := e.outbound(); err != nil {
		return "", err
	}
	system, err := e.systemPrompt()
	if err != nil {
		return "", err
	}
	history, err := e.history(max(st.AIHistoryMessages, 1))
	if err != nil {
		return "", err
	}
	return e.s.ai.Reply(e.ctx, cfg, system, history)
}

// aiConfig resolves the model settings, and which key goes where: the
// process's AI_API_KEY only with AI_API_URL (or the provider's own API),
// that is to an organization without an ai_base_url of its own; the
// organization's key only with the provider and base URL it was stored
// with; otherwise none.
func (e *evaluation) aiConfig() (ai.Config, error) {
	st := e.settings
	cfg := ai.Config{Provider: st.AIProvider, Model: st.AIModel, BaseURL: st.AIBaseURL, Temperature: st.AITemperature, MaxTokens: st.AIMaxTokens}
	if st.AIBaseURL == "" {
		cfg.BaseURL, cfg.APIKey = e.s.aiDefault.BaseURL, e.s.aiDefault.APIKey
	}
	if len(st.AIAPIKeyEnc) > 0 {
		key, bound, err := e.s.aiKey(st)
		if err != nil {
			return cfg, err
		}
		if !bound {
			e.s.log.Warn("the organization's AI key was stored for another provider or base URL; not sent", "organization_id", e.orgID)
			return cfg, nil
		}
		cfg.APIKey = key
	}
	return cfg, nil
}

// systemPrompt is the system prompt followed by the matching contexts (of
// the organization's first MaxAIContexts); the `api` ones are fetched
// together, within one budget, and a context that cannot be fetched is
// left out.
func (e *evaluation) systemPrompt() (string, error) {
	var contexts []models.AIContext
	if err := e.tx.Where("organization_id = ? AND enabled", e.orgID).Order("priority DESC, created_at, id").Limit(MaxAIContexts).
		Find(&contexts).Error; err != nil {
		return "", err
	}
	var used []models.AIContext
	var urls []string
	for _, c := range contexts {
		if len(c.TriggerKeywords.V) > 0 && !matches("contains", c.TriggerKeywords.V, e.text) {
			continue
		}
		used = append(used, c)
		if c.ContextType == "api" {
			urls = append(urls, c.Content)
		}
	}
	var fetched []ai.ContextResult
	if len(urls) > 0 {
		fetched = e.s.ai.FetchContexts(e.ctx, urls)
	}
	parts := []string{}
	if p := strings.TrimSpace(e.settings.SystemPrompt); p != "" {
		parts = append(parts, p)
	}
	for _, c := range used {
		text := c.Content
		if c.ContextType == "api" {
			r := fetched[0]
			fetched = fetched[1:]
			if r.Err != nil {
				e.s.log.Info("AI context not fetched; left out of the prompt", "context", c.Name, "error", r.Err)
				continue
			}
			text = r.Text
		}
		parts = append(parts, c.Name+":\n"+strings.TrimSpace(text))
	}
	return strings.Join(parts, "\n\n"), nil
}

// history is the conversation's last n messages ending with this one,
// oldest first: the contact's as user turns, ours as assistant turns. The
// order is the order of storing, with this message last: a reply to an
// earlier message may have been stored after this message arrived (the bot
// answers in order, but messages arrive while it does), and the contact's
// later messages, still waiting, are left out.
func (e *evaluation) history(n int) ([]ai.Message, error) {
	var rows []struct {
		Direction string
		Content   models.JSON[map[string]any]
	}
	err := e.tx.Raw(`SELECT direction, content FROM messages WHERE contact_id = @contact AND organization_id = @org AND id <> @id
		AND (direction = 'outgoing' OR created_at <= (SELECT created_at FROM messages WHERE id = @id))
		ORDER BY created_at DESC, id DESC LIMIT @n`, map[string]any{"contact": e.contact.ID, "org": e.orgID, "id": e.msg.MessageID,
		"n": n - 1}).Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make([]ai.Message, 0, len(rows)+1)
	for _, r := range slices.Backward(rows) {
		text := messageText(r.Content.V)
		if text == "" {
			continue
		}
		role := ai.RoleUser
		if r.Direction == models.DirectionOutgoing {
			role = ai.RoleAssistant
		}
		out = append(out, ai.Message{Role: role, Text: text})
	}
	if e.text != "" {
		out = append(out, ai.Message{Role: ai.RoleUser, Text: e.text})
	}
	return out, nil
}

// messageText is the readable text of a stored message.
func messageText(c map[string]any) string {
	for _, k := range []string{"text", "body", "title", "caption"} {
		if v, ok := c[k].(string); ok && strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
