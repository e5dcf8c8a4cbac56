package chatbot

import (
	"strings"
	"testing"

	"wharf/internal/messaging"
	"wharf/models"
)

func TestTextStep(t *testing.T) {
	t.Parallel()
	env := newStepEnv(t)
	step := func(input string, b ...models.ChatButton) models.FlowStep {
		return models.FlowStep{StepOrder: 1, MessageType: "text", Message: "Hello {{contact_name}}, {{x}}?", InputType: input, Buttons: b,
			StoreAs: "v"}
	}
	runChecks(t, env, []checkCase{
		{name: "needs a message", step: models.FlowStep{MessageType: "text", Message: "  "}, err: "steps[0]: a text step needs a message"},
		{name: "select needs buttons", step: step("select"), err: "steps[0].buttons must have 1 to 10 buttons"},
		{name: "select buttons checked", step: step("select", models.ChatButton{Title: strings.Repeat("x", 21)}),
			err: "steps[0].buttons: button 1 needs a title of at most 20 characters"},
		{name: "buttons dropped without select", step: step("text", buttons("A")...), want: func(t *testing.T, st models.FlowStep) {
			if st.Buttons != nil || st.InputType != "text" || st.StoreAs != "v" {
				t.Errorf("%+v", st)
			}
		}},
		{name: "select buttons trimmed, ids given", step: step("select", models.ChatButton{Title: " Yes "}), want: func(t *testing.T, st models.FlowStep) {
			if len(st.Buttons) != 1 || st.Buttons[0].Title != "Yes" || !strings.HasPrefix(st.Buttons[0].ID, "btn_") {
				t.Errorf("%+v", st.Buttons)
			}
		}},
	})
	vars := map[string]any{"x": "ready"}
	runEnters(t, env, textStep{}, []enterCase{
		{name: "no input goes on", step: step(""), vars: vars, next: stepGoesOn, replies: []messaging.Reply{{Text: "Hello Ann, ready?"}}},
		{name: "text input waits", step: step("text"), vars: vars, next: stepWaits, replies: []messaging.Reply{{Text: "Hello Ann, ready?"}}},
		{name: "select waits with buttons", step: step("select", buttons("Yes", "No")...), next: stepWaits,
			replies: []messaging.Reply{{Text: "Hello Ann, ?", Buttons: replyButtons("Yes", "No")}}},
	})
	runAnswers(t, env, textStep{}, []answerCase{
		{name: "text as it is", step: step("text"), typ: "text", content: map[string]any{"text": "some words"}, value: "some words", ok: true},
		{name: "select by title", step: step("select", buttons("Yes", "No")...), typ: "text", content: map[string]any{"text": " yes "},
			value: "Yes", ok: true},
		{name: "select by id", step: step("select", buttons("Yes", "No")...), typ: "interactive",
			content: map[string]any{"id": "bNo", "title": "renamed"}, value: "No", ok: true},
		{name: "select anything else asks again", step: step("select", buttons("Yes", "No")...), typ: "text",
			content: map[string]any{"text": "maybe"}, value: nil, ok: false,
			replies: []messaging.Reply{{Text: "Hello Ann, ?", Buttons: replyButtons("Yes", "No")}}},
	})
}
