package messaging

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/models"
	"wharf/platform"
)

// Bot replies. The chatbot decides its replies inside the transaction that
// evaluates an incoming message and stores them there as pending messages
// (QueueReply), so a message is answered exactly once whatever crashes;
// then it sends them in order with SendQueued, like queued template sends.
// A reply whose send was lost is found by the sweeper like any queued send.

// Reply is one message the bot sends: text, quick-reply buttons (1 to 3),
// a list menu (4 to 10 choices, under ListButton), or a platform flow.
type Reply struct {
	Text       string
	Buttons    []Button
	ListButton string
	Flow       *FlowReply
}

// FlowReply is a platform-native flow message.
type FlowReply struct {
	FlowID string
	CTA    string
	Token  string // echoed in the flow's reply
	Action string // navigate (default) or data_exchange
	Screen string
}

// QueueReply stores a reply to the contact, pending, inside tx. It answers
// the message's id for SendQueued.
func (s *Service) QueueReply(ctx context.Context, tx *gorm.DB, orgID, contactID, accountID uuid.UUID, r Reply) (uuid.UUID, error) {
	typ, content := replyContent(r)
	now := s.now()
	m := models.Message{ID: uuid.New(), OrganizationID: orgID, ContactID: contactID, AccountID: &accountID,
		Direction: models.DirectionOutgoing, Type: typ, Status: models.StatusPending, OccurredAt: now}
	m.Content.V = content
	return m.ID, tx.WithContext(ctx).Create(&m).Error
}

// replyContent is how a reply is stored (as the synchronous sends store
// theirs, plus list and flow).
func replyContent(r Reply) (string, map[string]any) {
	switch {
	case r.Flow != nil:
		return "interactive", map[string]any{"type": "flow", "body": r.Text, "flow_id": r.Flow.FlowID, "flow_cta": r.Flow.CTA,
			"flow_token": r.Flow.Token, "flow_action": r.Flow.Action, "screen": r.Flow.Screen}
	case len(r.Buttons) > MaxButtons:
		return "interactive", map[string]any{"type": "list", "body": r.Text, "button": r.ListButton, "buttons": r.Buttons}
	case len(r.Buttons) > 0:
		return "interactive", map[string]any{"type": "button", "body": r.Text, "buttons": r.Buttons}
	}
	return "text", map[string]any{"text": r.Text}
}

// storedMessage builds the provider message of a stored text or
// interactive message (a bot reply) for the number to.
func storedMessage(m *models.Message, to string) (platform.Message, error) {
	c := m.Content.V
	str := func(k string) string { v, _ := c[k].(string); return v }
	if m.Type == "text" {
		msg := platform.NewMessage(to, "text")
		msg.Text = &platform.Text{Body: str("text")}
		return msg, nil
	}
	if m.Type != "interactive" {
		return platform.Message{}, fmt.Errorf("a %s message cannot be sent from its stored content", m.Type)
	}
	var buttons []Button
	if raw, ok := c["buttons"].([]any); ok {
		for _, b := range raw {
			bm, _ := b.(map[string]any)
			id, _ := bm["id"].(string)
			title, _ := bm["title"].(string)
			buttons = append(buttons, Button{ID: id, Title: title})
		}
	}
	msg := platform.NewMessage(to, "interactive")
	body := &platform.InteractiveText{Text: str("body")}
	switch str("type") {
	case "button":
		rb := make([]platform.ReplyButton, len(buttons))
		for i, b := range buttons {
			rb[i] = platform.ReplyButton{Type: "reply", Reply: platform.ReplyDetail{ID: b.ID, Title: b.Title}}
		}
		msg.Interactive = &platform.Interactive{Type: "button", Body: body, Action: platform.InteractiveAction{Buttons: rb}}
	case "list":
		rows := make([]platform.ListRow, len(buttons))
		for i, b := range buttons {
			rows[i] = platform.ListRow{ID: b.ID, Title: b.Title}
		}
		msg.Interactive = &platform.Interactive{Type: "list", Body: body,
			Action: platform.InteractiveAction{Button: str("button"), Sections: []platform.ListSection{{Rows: rows}}}}
	case "flow":
		action := str("flow_action")
		if action == "" {
			action = "navigate"
		}
		p := platform.FlowParameters{FlowMessageVersion: "3", FlowToken: str("flow_token"), FlowID: str("flow_id"), FlowCTA: str("flow_cta"),
			FlowAction: action}
		if sc := str("screen"); sc != "" && action == "navigate" {
			p.FlowActionPayload = map[string]any{"screen": sc}
		}
		msg.Interactive = &platform.Interactive{Type: "flow", Body: body, Action: platform.InteractiveAction{Name: "flow", Parameters: p}}
	default:
		return platform.Message{}, fmt.Errorf("an interactive %q message cannot be sent from its stored content", str("type"))
	}
	return msg, nil
}
