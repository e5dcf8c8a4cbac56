package chatbot

import (
	"testing"

	"wharf/internal/messaging"
	"wharf/models"
)

func TestButtonsStep(t *testing.T) {
	t.Parallel()
	env := newStepEnv(t)
	step := func(input string, b ...models.ChatButton) models.FlowStep {
		return models.FlowStep{StepOrder: 1, MessageType: "buttons", Message: "Pick one", InputType: input, Buttons: b}
	}
	many := make([]models.ChatButton, 11)
	for i := range many {
		many[i] = models.ChatButton{Title: string(rune('a' + i))}
	}
	runChecks(t, env, []checkCase{
		{name: "needs a message", step: models.FlowStep{MessageType: "buttons", Buttons: buttons("A")}, err: "steps[0]: a buttons step needs a message"},
		{name: "needs buttons", step: step(""), err: "steps[0].buttons must have 1 to 10 buttons"},
		{name: "at most ten", step: step("", many...), err: "steps[0].buttons must have at most 10 buttons"},
		{name: "titles differ", step: step("", models.ChatButton{Title: "A"}, models.ChatButton{Title: "a"}), err: "button titles must differ"},
		{name: "input defaults to select", step: step("", buttons("A")...), want: func(t *testing.T, st models.FlowStep) {
			if st.InputType != "select" || len(st.Buttons) != 1 {
				t.Errorf("%+v", st)
			}
		}},
		{name: "text input kept with buttons", step: step("text", buttons("A")...), want: func(t *testing.T, st models.FlowStep) {
			if st.InputType != "text" || len(st.Buttons) != 1 {
				t.Errorf("%+v", st)
			}
		}},
	})
	four := buttons("A", "B", "C", "D")
	runEnters(t, env, buttonsStep{}, []enterCase{
		{name: "waits with buttons", step: step("select", buttons("A", "B")...), next: stepWaits,
			replies: []messaging.Reply{{Text: "Pick one", Buttons: replyButtons("A", "B")}}},
		{name: "a list past three", step: step("select", four...), next: stepWaits,
			replies: []messaging.Reply{{Text: "Pick one", Buttons: replyButtons("A", "B", "C", "D"), ListButton: defaultListButton}}},
		{name: "waits with text input too", step: step("text", buttons("A")...), next: stepWaits,
			replies: []messaging.Reply{{Text: "Pick one", Buttons: replyButtons("A")}}},
	})
	runAnswers(t, env, buttonsStep{}, []answerCase{
		{name: "by id", step: step("select", buttons("A", "B")...), typ: "interactive", content: map[string]any{"id": "bB", "title": "B"},
			value: "B", ok: true},
		{name: "by title", step: step("select", buttons("A", "B")...), typ: "text", content: map[string]any{"text": "a"}, value: "A", ok: true},
		{name: "anything else asks again", step: step("select", buttons("A", "B")...), typ: "text", content: map[string]any{"text": "C"},
			ok: false, replies: []messaging.Reply{{Text: "Pick one", Buttons: replyButtons("A", "B")}}},
		{name: "text input takes the text", step: step("text", buttons("A")...), typ: "text", content: map[string]any{"text": "C"},
			value: "C", ok: true},
	})
}
