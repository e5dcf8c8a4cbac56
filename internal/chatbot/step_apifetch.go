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
	"slices"
	"strconv"
	"strings"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/safehttp"
	"wharf/models"
)

// apiFetchStep calls api_config's URL (placeholders filled, GET or POST
// with a JSON body) through the SSRF-safe client and maps fields of its
// JSON answer into the session's variables; then it sends its message
// (without buttons) and waits when it has an input type. A failed call
// sets api_error and the walk goes on.
type apiFetchStep struct{}

// maxFetchBody bounds the answer of an api_fetch step.
const maxFetchBody = 64 << 10

func (apiFetchStep) check(c *stepCheck, st *models.FlowStep) error {
	if err := c.buttons(st, false); err != nil {
		return err
	}
	if st.APIConfig == nil || c.s.checkURL(st.APIConfig.URL) != nil {
		return apperr.Invalidf("%s: an api_fetch step needs api_config.url, an http(s) URL the service may call", c.where)
	}
	m := strings.ToUpper(st.APIConfig.Method)
	if m == "" {
		m = "GET"
	}
	if !slices.Contains([]string{"GET", "POST"}, m) {
		return apperr.Invalidf("%s: api_config.method must be GET or POST", c.where)
	}
	st.APIConfig.Method = m
	if b := strings.TrimSpace(st.APIConfig.Body); b != "" && !json.Valid([]byte(fillJSON(b, func(string) string { return "" }))) {
		return apperr.Invalidf("%s: api_config.body must be JSON; a {{placeholder}} stands inside a string or for a value, and is sent as a string", c.where)
	}
	for v := range st.APIConfig.ResponseMapping {
		if !variableName.MatchString(v) {
			return apperr.Invalidf("%s: api_config.response_mapping keys must be variable names", c.where)
		}
	}
	return nil
}

func (apiFetchStep) enter(e *evaluation, sess *models.ChatbotSession, st models.FlowStep) (stepNext, error) {
	if err := e.fetch(sess, st.APIConfig); err != nil {
		return 0, err
	}
	e.ask(sess, st, false)
	return waitsFor(st), nil
}

func (apiFetchStep) answer(e *evaluation, sess *models.ChatbotSession, st models.FlowStep) (any, bool) {
	return e.inputAnswer(sess, st)
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
