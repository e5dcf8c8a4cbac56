package platformsim

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrNotFound is returned (wrapped) by control methods given an unknown id.
var ErrNotFound = errors.New("not found")

type template struct {
	waba            *waba
	id              string
	idNum           int64
	name            string
	language        string
	category        string
	status          string
	parameterFormat string // NAMED or POSITIONAL
	rejectedReason  string
	components      json.RawMessage
	bodyVars        []string // distinct placeholders of the BODY, in order
	headerFormat    string   // TEXT, IMAGE, VIDEO, DOCUMENT, LOCATION or ""
	headerVars      []string
	deleted         bool
}

func (t *template) wabaID() string   { return t.waba.id }
func (t *template) nodeType() string { return "WhatsAppMessageTemplate" }

func templateKey(wabaID, name, language string) string {
	return wabaID + "|" + name + "|" + language
}

var (
	templateNameRE = regexp.MustCompile(`^[a-z0-9_]{1,512}$`)
	placeholderRE  = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_]+)\s*\}\}`)
	namedVarRE     = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// placeholders returns the distinct {{...}} names of text, in order.
func placeholders(text string) []string {
	var out []string
	for _, m := range placeholderRE.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

type templateComponent struct {
	Type   string `json:"type"`
	Format string `json:"format"`
	Text   string `json:"text"`
}

// parseComponents reads what the simulator needs from the components and
// checks the placeholders against the parameter format.
func (t *template) parseComponents(raw json.RawMessage) *apiError {
	var comps []templateComponent
	if len(raw) == 0 || json.Unmarshal(raw, &comps) != nil {
		return errInvalid("components must be an array of components")
	}
	hasBody := false
	t.bodyVars, t.headerVars, t.headerFormat = nil, nil, ""
	for _, c := range comps {
		switch strings.ToUpper(c.Type) {
		case "BODY":
			if c.Text == "" && t.category != "AUTHENTICATION" {
				return errInvalid("the BODY component needs a text")
			}
			hasBody = true
			t.bodyVars = placeholders(c.Text)
		case "HEADER":
			t.headerFormat = strings.ToUpper(cmpOr(c.Format, "TEXT"))
			if t.headerFormat == "TEXT" {
				t.headerVars = placeholders(c.Text)
			}
		}
	}
	if !hasBody {
		return errInvalid("components must include a BODY")
	}
	for _, v := range append(slices.Clone(t.bodyVars), t.headerVars...) {
		if t.parameterFormat == "NAMED" && !namedVarRE.MatchString(v) {
			return errInvalid("named parameter {{%s}} must be lowercase letters, digits and underscores, starting with a letter", v)
		}
		if t.parameterFormat == "POSITIONAL" && !isDigits(v) {
			return errInvalid("positional parameter {{%s}} must be a number; use parameter_format NAMED for names", v)
		}
	}
	t.components = raw
	return nil
}

type templateJSON struct {
	ID              string          `json:"id"`
	Name            string          `json:"name"`
	Language        string          `json:"language"`
	Category        string          `json:"category"`
	Status          string          `json:"status"`
	Components      json.RawMessage `json:"components"`
	ParameterFormat string          `json:"parameter_format"`
	RejectedReason  string          `json:"rejected_reason"`
}

func (t *template) view() templateJSON {
	return templateJSON{ID: t.id, Name: t.name, Language: t.language, Category: t.category, Status: t.status,
		Components: t.components, ParameterFormat: t.parameterFormat, RejectedReason: cmpOr(t.rejectedReason, "NONE")}
}

type templateCreate struct {
	Name            string          `json:"name"`
	Language        string          `json:"language"`
	Category        string          `json:"category"`
	ParameterFormat string          `json:"parameter_format"`
	Components      json.RawMessage `json:"components"`
}

// handleCreateTemplate serves POST /{version}/{waba_id}/message_templates.
func (s *Simulator) handleCreateTemplate(w http.ResponseWriter, r *http.Request) {
	var in templateCreate
	body := requestBody(r)
	parseErr := decodeBody(body, &in)
	delay := s.config().TemplateApprovalDelay

	s.mu.Lock()
	wb, aerr := objectAs[*waba](s, r, r.PathValue("id"), "message_templates")
	if aerr == nil && parseErr != nil {
		aerr = parseErr
	}
	var t *template
	var answer map[string]string
	if aerr == nil {
		t, aerr = s.createTemplateLocked(wb, in)
	}
	if aerr == nil {
		answer = map[string]string{"id": t.id, "status": t.status, "category": t.category}
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if delay >= 0 {
		s.sched.push(event{at: time.Now().Add(delay), kind: evTemplate, tmpl: t})
	}
	writeJSON(w, http.StatusOK, answer)
}

func (s *Simulator) createTemplateLocked(wb *waba, in templateCreate) (*template, *apiError) {
	if in.Name == "" {
		return nil, errMissing("name")
	}
	if !templateNameRE.MatchString(in.Name) {
		return nil, errInvalid("name must match ^[a-z0-9_]{1,512}$, got %q", in.Name)
	}
	if in.Language == "" {
		return nil, errMissing("language")
	}
	category := strings.ToUpper(in.Category)
	switch category {
	case "MARKETING", "UTILITY", "AUTHENTICATION":
	case "":
		return nil, errMissing("category")
	default:
		return nil, errInvalid("category must be MARKETING, UTILITY or AUTHENTICATION, got %q", in.Category)
	}
	format := strings.ToUpper(cmpOr(in.ParameterFormat, "POSITIONAL"))
	if format != "NAMED" && format != "POSITIONAL" {
		return nil, errInvalid("parameter_format must be NAMED or POSITIONAL, got %q", in.ParameterFormat)
	}
	t := &template{waba: wb, name: in.Name, language: in.Language, category: category, status: "PENDING", parameterFormat: format}
	if aerr := t.parseComponents(in.Components); aerr != nil {
		return nil, aerr
	}
	key := templateKey(wb.id, in.Name, in.Language)
	if _, dup := s.templates[key]; dup {
		e := newError(http.StatusBadRequest, 100, "Message template already exists",
			fmt.Sprintf("a template named %s already exists in %s", in.Name, in.Language))
		e.subcode = 2388023
		return nil, e
	}
	t.id = s.newIDLocked()
	t.idNum, _ = strconv.ParseInt(t.id, 10, 64)
	s.objects[t.id] = t
	s.templates[key] = t
	wb.templates = append(wb.templates, t)
	return t, nil
}

// fireTemplateReview decides a pending template: names containing "reject"
// are rejected, everything else approved.
func (s *Simulator) fireTemplateReview(t *template) {
	s.mu.Lock()
	if t.deleted || t.status != "PENDING" {
		s.mu.Unlock()
		return
	}
	reason := "NONE"
	t.status = "APPROVED"
	if strings.Contains(t.name, "reject") {
		t.status, reason = "REJECTED", "INVALID_FORMAT"
		t.rejectedReason = reason
	}
	body, err := templateWebhook(t, t.status, reason)
	s.mu.Unlock()
	if err != nil {
		s.log.Error("platformsim: encode template webhook", "err", err)
		return
	}
	s.enqueue(body)
}

type templateStatusValue struct {
	Event                   string      `json:"event"`
	MessageTemplateID       json.Number `json:"message_template_id"`
	MessageTemplateName     string      `json:"message_template_name"`
	MessageTemplateLanguage string      `json:"message_template_language"`
	Reason                  string      `json:"reason"`
}

func templateWebhook(t *template, event, reason string) ([]byte, error) {
	return json.Marshal(newEnvelope(t.waba.id, "message_template_status_update", templateStatusValue{
		Event:                   event,
		MessageTemplateID:       json.Number(t.id),
		MessageTemplateName:     t.name,
		MessageTemplateLanguage: t.language,
		Reason:                  reason,
	}))
}

// SetTemplateStatus sets a template's status now (reason is the rejection
// reason, or "NONE") and posts the message_template_status_update webhook
// synchronously. The status is set even when the post fails.
func (s *Simulator) SetTemplateStatus(ctx context.Context, templateID, status, reason string) (int, error) {
	status = strings.ToUpper(status)
	if status == "" {
		return 0, errors.New("platformsim: status is required")
	}
	s.mu.Lock()
	t, ok := s.objects[templateID].(*template)
	if !ok {
		s.mu.Unlock()
		return 0, fmt.Errorf("platformsim: %w: template %s", ErrNotFound, templateID)
	}
	t.status = status
	t.rejectedReason = ""
	if status == "REJECTED" {
		t.rejectedReason = cmpOr(reason, "INVALID_FORMAT")
	}
	body, err := templateWebhook(t, status, cmpOr(reason, "NONE"))
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return s.postNow(ctx, body)
}

// handleListTemplates serves GET /{version}/{waba_id}/message_templates with
// cursor paging and the status and name filters.
func (s *Simulator) handleListTemplates(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 25
	var limitErr *apiError
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			limitErr = errInvalid("limit must be a positive integer, got %q", v)
		}
		limit = min(n, 1000)
	}
	var statuses []string
	if v := q.Get("status"); v != "" {
		for _, st := range strings.Split(v, ",") {
			statuses = append(statuses, strings.ToUpper(strings.TrimSpace(st)))
		}
	}
	name := q.Get("name")

	s.mu.Lock()
	wb, aerr := objectAs[*waba](s, r, r.PathValue("id"), "message_templates")
	if aerr == nil {
		aerr = limitErr
	}
	var all []*template
	if aerr == nil {
		for _, t := range wb.templates {
			if (len(statuses) == 0 || slices.Contains(statuses, t.status)) &&
				(name == "" || strings.Contains(t.name, name)) {
				all = append(all, t)
			}
		}
	}
	var page []templateJSON
	var hasMore bool
	if aerr == nil {
		var start, end int
		start, end, aerr = pageBounds(len(all), func(i int) int64 { return all[i].idNum }, q.Get("after"), q.Get("before"), limit)
		for _, t := range all[start:end] {
			page = append(page, t.view())
		}
		hasMore = end < len(all)
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, pagedList(r, s.base(r), page, func(t templateJSON) string { return t.ID }, hasMore))
}

// pageBounds finds the page of a list ordered by increasing numeric id:
// after the "after" cursor, or the limit items before the "before" cursor.
func pageBounds(n int, idAt func(int) int64, after, before string, limit int) (int, int, *apiError) {
	start := 0
	switch {
	case after != "":
		id, ok := decodeCursor(after)
		if !ok {
			return 0, 0, errInvalid("invalid after cursor")
		}
		for start < n && idAt(start) <= id {
			start++
		}
	case before != "":
		id, ok := decodeCursor(before)
		if !ok {
			return 0, 0, errInvalid("invalid before cursor")
		}
		end := 0
		for end < n && idAt(end) < id {
			end++
		}
		return max(0, end-limit), end, nil
	}
	return start, min(n, start+limit), nil
}

// Cursors are opaque to clients; here they are the base64 of an item id.
func encodeCursor(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }

func decodeCursor(c string) (int64, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

type pagingJSON struct {
	Cursors struct {
		Before string `json:"before"`
		After  string `json:"after"`
	} `json:"cursors"`
	Next string `json:"next,omitempty"`
}

type listJSON[T any] struct {
	Data   []T         `json:"data"`
	Paging *pagingJSON `json:"paging,omitempty"`
}

// pagedList wraps a page like the provider: cursors when the page has items,
// a full next URL only when more items follow.
func pagedList[T any](r *http.Request, base string, page []T, id func(T) string, hasMore bool) listJSON[T] {
	out := listJSON[T]{Data: page}
	if out.Data == nil {
		out.Data = []T{}
	}
	if len(page) == 0 {
		return out
	}
	p := &pagingJSON{}
	p.Cursors.Before = encodeCursor(id(page[0]))
	p.Cursors.After = encodeCursor(id(page[len(page)-1]))
	if hasMore {
		q := r.URL.Query()
		q.Del("before")
		q.Set("after", p.Cursors.After)
		p.Next = base + r.URL.Path + "?" + q.Encode()
	}
	out.Paging = p
	return out
}

// handleDeleteTemplates serves DELETE /{version}/{waba_id}/message_templates
// ?name=X (every language) or ?name=X&hsm_id=ID (that one).
func (s *Simulator) handleDeleteTemplates(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name, hsmID := q.Get("name"), q.Get("hsm_id")
	s.mu.Lock()
	wb, aerr := objectAs[*waba](s, r, r.PathValue("id"), "message_templates")
	if aerr == nil && name == "" {
		aerr = errMissing("name")
	}
	if aerr == nil {
		var doomed []*template
		for _, t := range wb.templates {
			if t.name == name && (hsmID == "" || t.id == hsmID) {
				doomed = append(doomed, t)
			}
		}
		if len(doomed) == 0 {
			aerr = errInvalid("message template %q not found", name+cond(hsmID != "", " ("+hsmID+")", ""))
		}
		for _, t := range doomed {
			s.deleteTemplateLocked(t)
		}
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, success)
}

func (s *Simulator) deleteTemplateLocked(t *template) {
	t.deleted = true
	t.status = "DELETED"
	delete(s.objects, t.id)
	delete(s.templates, templateKey(t.waba.id, t.name, t.language))
	t.waba.templates = slices.DeleteFunc(t.waba.templates, func(x *template) bool { return x == t })
}

// updateTemplateLocked edits a template (POST /{template_id}): new
// components or category send it back to review.
func (s *Simulator) updateTemplateLocked(t *template, body []byte) (bool, *apiError) {
	var in struct {
		Category   string          `json:"category"`
		Components json.RawMessage `json:"components"`
	}
	if aerr := decodeBody(body, &in); aerr != nil {
		return false, aerr
	}
	if in.Category != "" {
		c := strings.ToUpper(in.Category)
		if c != "MARKETING" && c != "UTILITY" && c != "AUTHENTICATION" {
			return false, errInvalid("category must be MARKETING, UTILITY or AUTHENTICATION")
		}
		t.category = c
	}
	if len(in.Components) > 0 {
		if aerr := t.parseComponents(in.Components); aerr != nil {
			return false, aerr
		}
	}
	t.status = "PENDING"
	t.rejectedReason = ""
	return true, nil
}

// decodeBody decodes a JSON request body; an empty body decodes as {}.
func decodeBody(body []byte, v any) *apiError {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errInvalid("the request body is not valid JSON for this call: %v", err)
	}
	return nil
}

func cond[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// queryFields parses ?fields=a,b,c; nil means every field.
func queryFields(q url.Values) []string {
	v := q.Get("fields")
	if v == "" {
		return nil
	}
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			// "throughput{level}"-style sub-selections keep their root.
			if i := strings.IndexAny(f, "{."); i > 0 {
				f = f[:i]
			}
			out = append(out, f)
		}
	}
	return out
}

// selectFields keeps the requested fields (and always the id) of an object.
func selectFields(all map[string]any, fields []string) map[string]any {
	if fields == nil {
		return all
	}
	out := map[string]any{}
	if id, ok := all["id"]; ok {
		out["id"] = id
	}
	for _, f := range fields {
		if v, ok := all[f]; ok {
			out[f] = v
		}
	}
	return out
}
