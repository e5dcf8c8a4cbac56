package chatbot

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"wharf/models"
)

// Walking a flow. A session remembers the flow, the step_order of the step
// waiting for the contact's answer, and the variables collected. Steps
// that wait for nothing (a text step without input, an api_fetch) run one
// after the other until a step waits, the flow transfers, or it ends.

// activeSession answers the contact's session in a flow (read and locked
// with the contact's state), or nil. A session silent past the timeout is
// ended here (the sweeper ends the others).
func (e *evaluation) activeSession() (*models.ChatbotSession, error) {
	if e.state.Session.ID == uuid.Nil {
		return nil, nil
	}
	sess := e.state.Session
	if sess.Variables.V == nil {
		sess.Variables.V = map[string]any{}
	}
	timeout := time.Duration(e.settings.SessionTimeoutMinutes) * time.Minute
	if e.s.now().Sub(sess.LastActivity) > timeout || sess.FlowID == nil {
		return nil, e.endSession(&sess, "timeout")
	}
	return &sess, nil
}

func (e *evaluation) endSession(sess *models.ChatbotSession, reason string) error {
	now := e.s.now()
	sess.EndedAt, sess.EndReason = &now, reason
	return e.saveSession(sess)
}

func (e *evaluation) saveSession(sess *models.ChatbotSession) error {
	sess.LastActivity = e.s.now()
	return e.tx.Exec(`UPDATE chatbot_sessions SET current_step = ?, variables = ?, last_activity = ?, ended_at = ?, end_reason = ?
		WHERE id = ?`, sess.CurrentStep, sess.Variables, sess.LastActivity, sess.EndedAt, sess.EndReason, sess.ID).Error
}

// triggeredFlow answers the enabled flow one of whose trigger keywords the
// message equals (case-insensitive), or nil.
func (e *evaluation) triggeredFlow() *models.ChatbotFlow {
	if e.text == "" {
		return nil
	}
	for _, f := range e.config.triggers {
		if matches("exact", f.TriggerKeywords.V, e.text) {
			return f
		}
	}
	return nil
}

// startFlow opens a session, sends the initial message and runs the flow
// from its first step.
func (e *evaluation) startFlow(f *models.ChatbotFlow) (string, error) {
	if len(f.Steps.V) == 0 {
		return "flow " + f.Name + " has no steps", nil
	}
	now := e.s.now()
	sess := models.ChatbotSession{ID: uuid.New(), OrganizationID: e.orgID, ContactID: e.contact.ID, FlowID: &f.ID, FlowName: f.Name,
		CurrentStep: f.Steps.V[0].StepOrder, StartedAt: now, LastActivity: now}
	sess.Variables.V = map[string]any{}
	sess.PanelConfig.V = f.PanelConfig.V
	if sess.PanelConfig.V == nil {
		sess.PanelConfig.V = map[string]any{}
	}
	if err := e.tx.Create(&sess).Error; err != nil {
		return "", err
	}
	e.reply(f.InitialMessage, nil, "", sess.Variables.V)
	if err := e.runFrom(&sess, f, 0); err != nil {
		return "", err
	}
	return "flow " + f.Name + " started", nil
}

// continueFlow gives the contact's answer to the waiting step (its kind
// takes it, or asks again without advancing), keeps it under the step's
// store_as, and walks on.
func (e *evaluation) continueFlow(sess *models.ChatbotSession) (string, error) {
	f := e.config.flows[*sess.FlowID]
	if f == nil {
		return "", e.endSession(sess, "flow deleted")
	}
	idx := stepIndex(f.Steps.V, sess.CurrentStep)
	if idx < 0 {
		return "flow " + f.Name + " ended: its step is gone", e.endSession(sess, "step removed")
	}
	step := f.Steps.V[idx]
	answer, ok := stepOf(step).answer(e, sess, step)
	if !ok {
		return "flow " + f.Name + ": re-asked", e.saveSession(sess)
	}
	if step.StoreAs != "" {
		sess.Variables.V[step.StoreAs] = answer
	}
	if err := e.runFrom(sess, f, idx+1); err != nil {
		return "", err
	}
	return "flow " + f.Name, nil
}

// choose finds the button the contact chose, by id or by title.
func choose(buttons []models.ChatButton, id, text string) (string, bool) {
	for _, b := range buttons {
		if (id != "" && b.ID == id) || strings.EqualFold(strings.TrimSpace(text), b.Title) {
			return b.Title, true
		}
	}
	return "", false
}

func stepIndex(steps []models.FlowStep, order int) int {
	for i, s := range steps {
		if s.StepOrder == order {
			return i
		}
	}
	return -1
}

// runFrom enters the steps from index idx until one waits for an answer,
// one ends the walk (a transfer), or the flow ends (completion message).
func (e *evaluation) runFrom(sess *models.ChatbotSession, f *models.ChatbotFlow, idx int) error {
	steps := f.Steps.V
	for ; idx < len(steps); idx++ {
		step := steps[idx]
		sess.CurrentStep = step.StepOrder
		next, err := stepOf(step).enter(e, sess, step)
		if err != nil {
			return err
		}
		switch next {
		case stepWaits:
			return e.saveSession(sess)
		case stepEnded:
			return nil
		}
	}
	e.reply(f.CompletionMessage, nil, "", sess.Variables.V)
	return e.endSession(sess, "completed")
}

var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// fill replaces {{variable}} with the session's variable, or the contact's
// contact_name and phone_number; unknown placeholders become empty.
func (e *evaluation) fill(text string, vars map[string]any) string {
	return e.fillWith(text, vars, func(s string) string { return s })
}

// fillWith is fill with each value passed through escape (a URL's values
// are query-escaped: a "+" of a phone number must not turn into a space).
func (e *evaluation) fillWith(text string, vars map[string]any, escape func(string) string) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		return escape(e.value(placeholder.FindStringSubmatch(m)[1], vars))
	})
}

// value is a placeholder's text.
func (e *evaluation) value(name string, vars map[string]any) string {
	if v, ok := vars[name]; ok && v != nil {
		if s, ok := v.(string); ok {
			return s
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	switch name {
	case "contact_name":
		if e.contact.Name != "" {
			return e.contact.Name
		}
		return e.contact.ProfileName
	case "phone_number":
		return e.contact.PhoneNumber
	}
	return ""
}
