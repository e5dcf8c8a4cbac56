package chatbot

import (
	"strings"
	"testing"

	"wharf/internal/messaging"
	"wharf/models"
)

func TestPlatformFlowStep(t *testing.T) {
	t.Parallel()
	env := newStepEnv(t)
	cfg := &models.FlowConfig{FlowID: "123", FlowCTA: "Book", FlowAction: "navigate", Screen: "START"}
	step := func(storeAs string, c *models.FlowConfig) models.FlowStep {
		return models.FlowStep{StepOrder: 1, MessageType: "platform_flow", Message: "Book for {{contact_name}}", StoreAs: storeAs, FlowConfig: c}
	}
	runChecks(t, env, []checkCase{
		{name: "needs flow_config", step: step("", nil), err: "steps[0]: a platform_flow step needs flow_config.flow_id and flow_config.flow_cta"},
		{name: "needs a flow id", step: step("", &models.FlowConfig{FlowID: " ", FlowCTA: "Book"}), err: "needs flow_config.flow_id"},
		{name: "call to action at most 20", step: step("", &models.FlowConfig{FlowID: "1", FlowCTA: strings.Repeat("x", 21)}),
			err: "(at most 20 characters)"},
		{name: "needs a message", step: models.FlowStep{MessageType: "platform_flow", FlowConfig: cfg},
			err: "steps[0]: a platform_flow step needs a message (the flow message's body)"},
		{name: "valid", step: step("form", cfg), want: func(t *testing.T, st models.FlowStep) {
			if st.FlowConfig == nil || *st.FlowConfig != *cfg || st.Buttons != nil {
				t.Errorf("%+v", st)
			}
		}},
	})
	flowReply := messaging.Reply{Text: "Book for Ann", Flow: &messaging.FlowReply{FlowID: "123", CTA: "Book", Action: "navigate", Screen: "START"}}
	runEnters(t, env, platformFlowStep{}, []enterCase{
		{name: "sends the flow and waits", step: step("", cfg), next: stepWaits, replies: []messaging.Reply{flowReply}},
		{name: "no flow config sends nothing", step: step("", nil), next: stepWaits},
	})
	resp := map[string]any{"name": "Bob", "1bad": "x", "seats": 2.0}
	runAnswers(t, env, platformFlowStep{}, []answerCase{
		{name: "reply fields become variables", step: step("", cfg), typ: "flow", content: map[string]any{"response": resp},
			value: resp, ok: true, vars: map[string]any{"name": "Bob", "seats": 2.0}},
		{name: "stored whole under store_as", step: step("form", cfg), typ: "flow", content: map[string]any{"response": resp},
			value: resp, ok: true},
		{name: "text sends the flow again", step: step("", cfg), typ: "text", content: map[string]any{"text": "hi"},
			ok: false, replies: []messaging.Reply{flowReply}},
		{name: "a flow without a response sends it again", step: step("", cfg), typ: "flow", content: map[string]any{"body": "Sent"},
			ok: false, replies: []messaging.Reply{flowReply}},
	})
}
