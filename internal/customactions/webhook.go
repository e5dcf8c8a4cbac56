package customactions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"wharf/internal/infra/safehttp"
	"wharf/models"
)

// Bounds of a webhook run: the user waits for it in the conversation view,
// and its answer is handed back to them.
const (
	webhookTimeout  = 10 * time.Second
	maxWebhookReply = 1 << 20
)

// callWebhook sends the filled-in request through the SSRF-safe client and
// reports the target's answer. Nothing here is an error of the service: a
// refused address, a dead host, a timeout, an error status or an oversized
// answer are all results with Success false and a message that says which,
// without the internal address a URL led to.
func (s *Service) callWebhook(ctx context.Context, a *models.CustomAction, v Values) *Result {
	cfg := webhookOf(a.Config.V)
	fail := func(msg string, data any) *Result {
		return &Result{Success: false, Message: msg, Data: data, Toast: &Toast{Message: a.Name + ": " + msg, Type: "error"}}
	}
	target, err := fillURL(cfg.URL, v)
	if err != nil {
		return fail("the URL cannot be filled in: "+err.Error(), nil)
	}
	if err := checkTarget(target); err != nil {
		return fail("the URL "+err.Error(), nil)
	}
	if err := s.policy.ValidateURL(target); err != nil {
		return fail(targetMessage(err), nil)
	}
	var body io.Reader
	if cfg.Body != "" {
		body = strings.NewReader(fill(cfg.Body, v, jsonString))
	}
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, cfg.Method, target, body)
	if err != nil {
		return fail("the URL is not valid once filled in", nil)
	}
	for name, val := range cfg.Headers {
		req.Header.Set(name, headerValue(fill(val, v, headerValue)))
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "Wharf-Custom-Action/1")
	}
	start := time.Now()
	res, err := s.http.Do(req)
	if err != nil {
		s.logFailure(a, err, time.Since(start))
		if isTimeout(err) {
			return fail(fmt.Sprintf("the target did not answer within %s", webhookTimeout), nil)
		}
		return fail(targetMessage(err), nil)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxWebhookReply+1))
	if err != nil {
		s.logFailure(a, err, time.Since(start))
		if isTimeout(err) {
			return fail(fmt.Sprintf("the target did not finish its answer within %s", webhookTimeout), nil)
		}
		return fail("the target's answer was cut off", nil)
	}
	if len(raw) > maxWebhookReply {
		// Refused rather than cut: a truncated JSON answer would not parse,
		// and a cut text would pass for the whole.
		return fail(fmt.Sprintf("the target's answer is larger than %d MB (status %d)", maxWebhookReply>>20, res.StatusCode), nil)
	}
	data := decode(raw)
	if res.StatusCode/100 != 2 {
		return fail(fmt.Sprintf("the target answered %d %s", res.StatusCode, http.StatusText(res.StatusCode)), data)
	}
	return &Result{Success: true, Message: "Webhook executed successfully", Data: data,
		Toast: &Toast{Message: a.Name + ": done", Type: "success"}}
}

// decode answers the receiver's JSON as a value, or its text when it is
// not JSON (nil when empty). Text that is not UTF-8 is answered with its
// invalid bytes replaced, so the answer stays valid JSON.
func decode(raw []byte) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) == nil {
		return v
	}
	if !utf8.Valid(raw) {
		return strings.ToValidUTF8(string(raw), "\uFFFD")
	}
	return string(raw)
}

// targetMessage says why a target was not called or not reached, in
// safehttp's words: never the address a name resolved to or a redirect
// led to.
func targetMessage(err error) string {
	if safehttp.Public(err) == safehttp.NotAllowed {
		return "the target's address is not allowed"
	}
	return "the target could not be reached"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// logFailure records why a call failed, with the cause the user is not
// shown (it may name an internal address).
func (s *Service) logFailure(a *models.CustomAction, err error, took time.Duration) {
	if s.log != nil {
		s.log.Info("custom action webhook failed", "action_id", a.ID, "organization_id", a.OrganizationID,
			"error", err, "duration", took)
	}
}
