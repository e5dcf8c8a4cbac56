package messaging_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/messaging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platformsim"
)

// A flow message goes through the one send path: validated first, from
// the contact's account only when it is in the flow's business account,
// stored as type flow and announced.
func TestSendFlow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	svc, _ := newService(t, f, p)
	org := f.Org()
	acc := f.AccountAt(p, org.ID)
	c := f.Contact(org.ID, &acc.ID)
	wrote(t, f, c, time.Hour)
	listen(t, f, org.ID, "message.sent", "message.outgoing")
	actor := messaging.Actor{UserID: f.User(org, "Agent").ID}
	sends := func() int { return p.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: "/messages"}) }
	valid := func() messaging.FlowMessage {
		return messaging.FlowMessage{FlowID: uuid.New(), ProviderFlowID: "777", BusinessAccountID: acc.BusinessAccountID, Body: "Tell us",
			CTA: "Open form", Header: "Feedback", Screen: "CHOOSE", Data: map[string]any{"order": "A-1"}}
	}

	for _, tc := range []struct {
		edit func(*messaging.FlowMessage)
		msg  string
	}{
		{func(m *messaging.FlowMessage) { m.Body = " " }, "body is required"},
		{func(m *messaging.FlowMessage) { m.CTA = "" }, "cta is required"},
		{func(m *messaging.FlowMessage) { m.CTA = strings.Repeat("x", 31) }, "cta is required (at most 30"},
		{func(m *messaging.FlowMessage) { m.Header = strings.Repeat("x", 61) }, "header must be at most 60"},
		{func(m *messaging.FlowMessage) { m.Screen = "" }, "screen is required"},
		{func(m *messaging.FlowMessage) { m.BusinessAccountID = "other-waba" }, "another business account"},
	} {
		in := valid()
		tc.edit(&in)
		_, err := svc.SendFlow(ctx, org.ID, actor, c.ID, in)
		testfactory.WantError(t, err, apperr.Invalid, tc.msg)
	}
	outside := f.Contact(org.ID, &acc.ID)
	_, err := svc.SendFlow(ctx, org.ID, actor, outside.ID, valid())
	testfactory.WantError(t, err, apperr.Invalid, "24 hours")
	if n := sends(); n != 0 || f.Count("messages", "") != 0 {
		t.Fatalf("refused sends reached the provider (%d) or were stored", n)
	}

	in := valid()
	sent, err := svc.SendFlow(ctx, org.ID, actor, c.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	m := reload(t, f.DB, sent.ID)
	if m.Type != "flow" || m.Status != models.StatusSent || m.Content.V["provider_flow_id"] != "777" || m.Content.V["cta"] != "Open form" ||
		m.Content.V["flow_token"] == "" || m.Content.V["flow_id"] != in.FlowID.String() {
		t.Fatalf("stored %+v", m)
	}
	msgs := p.Sim.Messages(platformsim.MessageFilter{})
	var body struct {
		Type        string `json:"type"`
		Interactive struct {
			Type   string `json:"type"`
			Header struct{ Text string }
			Action struct {
				Name       string `json:"name"`
				Parameters struct {
					FlowID            string         `json:"flow_id"`
					FlowCTA           string         `json:"flow_cta"`
					FlowToken         string         `json:"flow_token"`
					FlowAction        string         `json:"flow_action"`
					FlowActionPayload map[string]any `json:"flow_action_payload"`
				} `json:"parameters"`
			} `json:"action"`
		} `json:"interactive"`
	}
	if len(msgs) != 1 || json.Unmarshal(msgs[0].Body, &body) != nil {
		t.Fatalf("provider got %+v", msgs)
	}
	ps := body.Interactive.Action.Parameters
	if body.Type != "interactive" || body.Interactive.Type != "flow" || body.Interactive.Header.Text != "Feedback" || ps.FlowID != "777" ||
		ps.FlowCTA != "Open form" || ps.FlowToken != m.Content.V["flow_token"] || ps.FlowAction != "navigate" ||
		ps.FlowActionPayload["screen"] != "CHOOSE" || ps.FlowActionPayload["data"].(map[string]any)["order"] != "A-1" {
		t.Fatalf("provider got %s", msgs[0].Body)
	}
	if f.Count("events", "event = 'message.sent'") != 1 || f.Count("events", "event = 'message.outgoing'") != 1 {
		t.Fatal("want message.sent and message.outgoing once")
	}
}
