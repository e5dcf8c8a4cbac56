package chatbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"wharf/internal/messaging"
	"wharf/internal/safehttp"
	"wharf/internal/transfers"
	"wharf/models"
)

// Walking a flow. A session remembers the flow, the step_order of the step
// waiting for the contact's answer, and the variables collected. Steps
// that wait for nothing (a text step without input, an api_fetch) run one
// after the other until a step waits, the flow transfers, or it ends.

// maxFetchBody bounds the answer of an api_fetch step.
const maxFetchBody = 64 << 10

// activeSession answers the contact's session in a flow, locked, or nil.
// A session silent past the timeout is ended here (the sweeper ends the
// others).
func (e *evaluation) activeSession() (*models.ChatbotSession, error) {
	var sess models.ChatbotSession
	if err := e.tx.Raw(`SELECT * FROM chatbot_sessions WHERE contact_id = ? AND organization_id = ? AND ended_at IS NULL FOR UPDATE`,
		e.contact.ID, e.orgID).Scan(&sess).Error; err != nil {
		return nil, err
	}
	if sess.ID == uuid.Nil {
		return nil, nil
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
func (e *evaluation) triggeredFlow() (*models.ChatbotFlow, error) {
	if e.text == "" {
		return nil, nil
	}
	var flows []models.ChatbotFlow
	if err := e.tx.Where("organization_id = ? AND enabled", e.orgID).Order("lower(name), id").Find(&flows).Error; err != nil {
		return nil, err
	}
	for i := range flows {
		if matches("exact", flows[i].TriggerKeywords.V, e.text) {
			return &flows[i], nil
		}
	}
	return nil, nil
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

// continueFlow takes the contact's answer to the waiting step: a select
// step accepts a button's id or title (anything else re-asks without
// advancing), a text step takes the text as it is, a platform_flow step
// the flow's reply.
func (e *evaluation) continueFlow(sess *models.ChatbotSession) (string, error) {
	var f models.ChatbotFlow
	if err := e.tx.Where("id = ? AND organization_id = ?", *sess.FlowID, e.orgID).Take(&f).Error; err != nil {
		return "", e.endSession(sess, "flow deleted")
	}
	idx := stepIndex(f.Steps.V, sess.CurrentStep)
	if idx < 0 {
		return "flow " + f.Name + " ended: its step is gone", e.endSession(sess, "step removed")
	}
	step := f.Steps.V[idx]
	var answer any
	switch {
	case step.MessageType == "platform_flow":
		resp, ok := e.msg.Content.V["response"].(map[string]any)
		if e.msg.Type != "flow" || !ok {
			e.sendStep(sess, step)
			return "flow " + f.Name + ": re-asked", e.saveSession(sess)
		}
		answer = resp
		if step.StoreAs == "" {
			for k, v := range resp {
				if variableName.MatchString(k) {
					sess.Variables.V[k] = v
				}
			}
		}
	case step.InputType == "select":
		title, ok := choose(step.Buttons, e.choiceID, e.text)
		if !ok {
			e.sendStep(sess, step)
			return "flow " + f.Name + ": re-asked", e.saveSession(sess)
		}
		answer = title
	default:
		answer = e.text
	}
	if step.StoreAs != "" {
		sess.Variables.V[step.StoreAs] = answer
	}
	if err := e.runFrom(sess, &f, idx+1); err != nil {
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

// runFrom runs the steps from index idx until one waits for an answer,
// the flow transfers, or it ends (completion message).
func (e *evaluation) runFrom(sess *models.ChatbotSession, f *models.ChatbotFlow, idx int) error {
	steps := f.Steps.V
	for ; idx < len(steps); idx++ {
		step := steps[idx]
		sess.CurrentStep = step.StepOrder
		switch step.MessageType {
		case "transfer":
			cfg := step.TransferConfig
			if cfg == nil {
				cfg = &models.TransferConfig{}
			}
			if _, err := e.transfer(cfg.TeamID, e.fill(cfg.Notes, sess.Variables.V), transfers.SourceFlow, e.fill(step.Message, sess.Variables.V)); err != nil {
				return err
			}
			return e.endSession(sess, "transfer")
		case "api_fetch":
			if err := e.fetch(sess, step.APIConfig); err != nil {
				return err
			}
			e.reply(step.Message, nil, "", sess.Variables.V)
			if step.InputType != "" {
				return e.saveSession(sess)
			}
			continue
		}
		e.sendStep(sess, step)
		if step.InputType != "" || step.MessageType == "buttons" || step.MessageType == "platform_flow" {
			return e.saveSession(sess) // waits for the answer
		}
	}
	e.reply(f.CompletionMessage, nil, "", sess.Variables.V)
	return e.endSession(sess, "completed")
}

// sendStep sends a step's message: text, buttons (a list past three), or a
// platform flow (its token is the session, echoed in the reply).
func (e *evaluation) sendStep(sess *models.ChatbotSession, step models.FlowStep) {
	switch step.MessageType {
	case "platform_flow":
		if step.FlowConfig == nil {
			return
		}
		e.replies = append(e.replies, messaging.Reply{Text: e.fill(step.Message, sess.Variables.V), Flow: &messaging.FlowReply{
			FlowID: step.FlowConfig.FlowID, CTA: step.FlowConfig.FlowCTA, Token: sess.ID.String(), Action: step.FlowConfig.FlowAction,
			Screen: step.FlowConfig.Screen}})
	default:
		var buttons []models.ChatButton
		if step.MessageType == "buttons" || step.InputType == "select" {
			buttons = step.Buttons
		}
		e.reply(step.Message, buttons, "", sess.Variables.V)
	}
}

// fetch runs an api_fetch step: the URL (placeholders filled) through the
// SSRF-safe client, and the mapped fields of its JSON answer into the
// session's variables. A failure leaves the variables as they were and
// sets api_error to a generic reason (fetchFailure), so the flow can go on;
// the only error returned is errOrgBusy.
func (e *evaluation) fetch(sess *models.ChatbotSession, cfg *models.APIConfig) error {
	if cfg == nil {
		return nil
	}
	if err := e.outbound(); err != nil {
		return err
	}
	if reason, err := e.callAPI(sess, cfg); err != nil {
		sess.Variables.V["api_error"] = reason
		e.s.log.Info("api_fetch step failed", "session_id", sess.ID, "reason", reason, "error", err)
	}
	return nil
}

// What api_error says of a failed api_fetch step. It is a session variable,
// so a flow's message can send it to the contact: never the address a host
// name resolved to, nor a Go error (the log has those).
const (
	fetchTimedOut   = "request failed: timeout"
	fetchRefused    = "request failed: refused"
	fetchNotAllowed = "request failed: not allowed"
	fetchBadAnswer  = "request failed: invalid response"
	fetchBadRequest = "request failed: invalid request"
)

// callAPI makes an api_fetch step's request and maps its answer; on
// failure it answers the reason for api_error and the error for the log.
func (e *evaluation) callAPI(sess *models.ChatbotSession, cfg *models.APIConfig) (string, error) {
	var body io.Reader
	if cfg.Method == "POST" && cfg.Body != "" {
		b := fillJSON(cfg.Body, func(name string) string { return e.value(name, sess.Variables.V) })
		if !json.Valid([]byte(b)) {
			return fetchBadRequest, errors.New("the body is not JSON")
		}
		body = strings.NewReader(b)
	}
	req, err := http.NewRequestWithContext(e.ctx, cfg.Method, e.fillWith(cfg.URL, sess.Variables.V, url.QueryEscape), body)
	if err != nil {
		return fetchBadRequest, err
	}
	for k, v := range cfg.Headers {
		req.Header.Set(k, e.fill(v, sess.Variables.V))
	}
	if cfg.Method == "POST" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := e.s.http.Do(req)
	if err != nil {
		return fetchFailure(err), err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Sprintf("request failed: status %d", res.StatusCode), fmt.Errorf("status %d", res.StatusCode)
	}
	var v any
	if err := json.NewDecoder(io.LimitReader(res.Body, maxFetchBody)).Decode(&v); err != nil {
		if isTimeout(err) {
			return fetchTimedOut, err
		}
		return fetchBadAnswer, fmt.Errorf("the answer is not JSON: %w", err)
	}
	for name, path := range cfg.ResponseMapping {
		if got, ok := lookup(v, path); ok {
			sess.Variables.V[name] = got
		}
	}
	return "", nil
}

// fetchFailure is the reason for api_error of a request that got no
// answer.
func fetchFailure(err error) string {
	switch {
	case errors.Is(err, safehttp.ErrBlocked):
		return fetchNotAllowed
	case isTimeout(err):
		return fetchTimedOut
	}
	return fetchRefused
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// fillJSON fills the placeholders of a JSON body so that each value is one
// JSON string whatever it holds (quotes, backslashes, line breaks): inside
// a string of the body its characters are escaped, anywhere else it
// becomes a string of its own. So a contact's answer can neither break
// the body nor add fields to it.
func fillJSON(body string, value func(name string) string) string {
	var b strings.Builder
	inString, escaped := false, false
	last := 0
	for _, m := range placeholder.FindAllStringSubmatchIndex(body, -1) {
		for _, c := range []byte(body[last:m[0]]) {
			switch {
			case escaped:
				escaped = false
			case inString && c == '\\':
				escaped = true
			case c == '"':
				inString = !inString
			}
		}
		b.WriteString(body[last:m[0]])
		v := jsonString(value(body[m[2]:m[3]]))
		if inString {
			v = v[1 : len(v)-1]
		}
		b.WriteString(v)
		last, escaped = m[1], false
	}
	b.WriteString(body[last:])
	return b.String()
}

// jsonString is s as a JSON string, quotes included (invalid UTF-8
// replaced; <, > and & as they are).
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// lookup reads a dotted path (a.b.0.c) in decoded JSON.
func lookup(v any, path string) (any, bool) {
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[part]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
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
