package messaging

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/platform"
)

// FlowMessage is a platform-native flow sent to a contact: a message with a
// button (CTA) that opens the flow. The caller (internal/pflows) has checked
// that the flow is published and names its provider id and business
// account.
type FlowMessage struct {
	FlowID            uuid.UUID // the flow here, kept in the message's content
	ProviderFlowID    string
	BusinessAccountID string // the flow's: the sending number must belong to it
	Body              string
	CTA               string
	Header            string         // optional text header
	Footer            string         // optional
	Screen            string         // the first screen to open; required by the provider's navigate action
	Data              map[string]any // optional initial data of that screen
	// FlowToken comes back in the contact's flow reply (nfm_reply); a new
	// one is made when empty.
	FlowToken string
}

// Flow message limits (the provider's).
const (
	maxFlowBody   = 1024
	maxFlowCTA    = 30
	maxFlowHeader = 60
	maxFlowFooter = 60
)

// SendFlow sends a flow message through the same path as every free-form
// send: the contact's service window, the stored message, the provider's
// acceptance and message.sent / message.outgoing.
func (s *Service) SendFlow(ctx context.Context, orgID uuid.UUID, actor Actor, contactID uuid.UUID, in FlowMessage) (*Sent, error) {
	body, cta := strings.TrimSpace(in.Body), strings.TrimSpace(in.CTA)
	header, footer, screen := strings.TrimSpace(in.Header), strings.TrimSpace(in.Footer), strings.TrimSpace(in.Screen)
	switch {
	case body == "" || len([]rune(body)) > maxFlowBody:
		return nil, apperr.Invalidf("body is required (at most %d characters)", maxFlowBody)
	case cta == "" || len([]rune(cta)) > maxFlowCTA:
		return nil, apperr.Invalidf("cta is required (at most %d characters)", maxFlowCTA)
	case len([]rune(header)) > maxFlowHeader:
		return nil, apperr.Invalidf("header must be at most %d characters", maxFlowHeader)
	case len([]rune(footer)) > maxFlowFooter:
		return nil, apperr.Invalidf("footer must be at most %d characters", maxFlowFooter)
	case screen == "":
		return nil, apperr.Invalidf("screen is required (the id of the flow's first screen)")
	case in.ProviderFlowID == "":
		return nil, apperr.Invalidf("the flow has no provider id")
	}
	token := strings.TrimSpace(in.FlowToken)
	if token == "" {
		token = uuid.NewString()
	}
	c, err := s.windowContact(ctx, orgID, contactID)
	if err != nil {
		return nil, err
	}
	a, err := s.accounts.Sender(ctx, orgID, "", c.AccountID)
	if err != nil {
		return nil, err
	}
	if in.BusinessAccountID != "" && a.BusinessAccountID != in.BusinessAccountID {
		return nil, apperr.Invalidf("the flow belongs to another business account than the one the contact is reached from (account %s)", a.Name)
	}
	content := map[string]any{"type": "flow", "body": body, "cta": cta, "flow_id": in.FlowID, "provider_flow_id": in.ProviderFlowID,
		"flow_token": token, "screen": screen}
	if header != "" {
		content["header"] = header
	}
	if footer != "" {
		content["footer"] = footer
	}
	payload := map[string]any{"screen": screen}
	if len(in.Data) > 0 {
		payload["data"] = in.Data
		content["data"] = in.Data
	}
	return s.sendTo(ctx, orgID, actor, c, prepared{typ: "flow", content: content,
		build: func(to string) platform.Message {
			m := platform.NewMessage(to, "interactive")
			m.Interactive = &platform.Interactive{Type: "flow", Body: &platform.InteractiveText{Text: body},
				Action: platform.InteractiveAction{Name: "flow", Parameters: platform.FlowParameters{FlowMessageVersion: "3",
					FlowToken: token, FlowID: in.ProviderFlowID, FlowCTA: cta, FlowAction: "navigate", FlowActionPayload: payload}}}
			if header != "" {
				m.Interactive.Header = &platform.InteractiveHeader{Type: "text", Text: header}
			}
			if footer != "" {
				m.Interactive.Footer = &platform.InteractiveText{Text: footer}
			}
			return m
		}})
}
