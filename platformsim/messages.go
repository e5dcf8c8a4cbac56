package platformsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// message is an accepted send. Its status plan is fixed at send time from
// the configuration then in force.
type message struct {
	id        string
	phone     *phone
	to        string
	typ       string
	body      []byte
	bizOpaque string
	category  string // pricing category: marketing, utility, authentication, service
	sentAt    time.Time
	status    string
	gen       uint64
	delays    [3]time.Duration // sent, delivered, read; negative: skipped
	failCode  int
	next      int // index of the next planned status
}

var plannedStatuses = [3]string{"sent", "delivered", "read"}

// step returns the i-th planned status and its offset from the send.
func (m *message) step(i int) (string, time.Duration, bool) {
	if m.failCode != 0 {
		if i == 0 {
			return "failed", max(m.delays[0], 0), true
		}
		return "", 0, false
	}
	type st struct {
		name string
		at   time.Duration
	}
	var steps [3]st
	n := 0
	for j, d := range m.delays {
		if d >= 0 {
			steps[n] = st{plannedStatuses[j], d}
			n++
		}
	}
	// Stable sort of at most three: a read configured before delivered
	// comes first, as the real provider sometimes does.
	slices.SortStableFunc(steps[:n], func(a, b st) int { return int(a.at - b.at) })
	if i >= n {
		return "", 0, false
	}
	return steps[i].name, steps[i].at, true
}

// Message is an accepted send as the control API reports it. Body is the
// request JSON; Status the last status planned or posted for it.
type Message struct {
	ID                    string          `json:"id"`
	PhoneNumberID         string          `json:"phone_number_id"`
	To                    string          `json:"to"`
	Type                  string          `json:"type"`
	Body                  json.RawMessage `json:"body"`
	Status                string          `json:"status"`
	BizOpaqueCallbackData string          `json:"biz_opaque_callback_data,omitempty"`
	SentAt                time.Time       `json:"sent_at"`
}

// MessageFilter selects messages; zero values match everything.
type MessageFilter struct {
	PhoneNumberID string
	To            string
}

// Messages returns the accepted sends in send order.
func (s *Simulator) Messages(f MessageFilter) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Message{}
	for _, m := range s.sent {
		if (f.PhoneNumberID == "" || m.phone.id == f.PhoneNumberID) && (f.To == "" || m.to == f.To) {
			out = append(out, m.view())
		}
	}
	return out
}

// MessageCount counts the accepted sends Messages would return, without
// copying them: a benchmark that polls for "every send arrived" must not
// hold the simulator's lock for a copy of 100,000 messages each time.
func (s *Simulator) MessageCount(f MessageFilter) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.sent {
		if (f.PhoneNumberID == "" || m.phone.id == f.PhoneNumberID) && (f.To == "" || m.to == f.To) {
			n++
		}
	}
	return n
}

func (m *message) view() Message {
	return Message{ID: m.id, PhoneNumberID: m.phone.id, To: m.to, Type: m.typ, Body: m.body,
		Status: m.status, BizOpaqueCallbackData: m.bizOpaque, SentAt: m.sentAt}
}

// Request shapes. Only what is validated is decoded; the stored body keeps
// everything.
type sendRequest struct {
	MessagingProduct string          `json:"messaging_product"`
	RecipientType    string          `json:"recipient_type"`
	To               string          `json:"to"`
	Type             string          `json:"type"`
	Status           string          `json:"status"`
	MessageID        string          `json:"message_id"`
	BizOpaque        string          `json:"biz_opaque_callback_data"`
	Text             *textObject     `json:"text"`
	Image            *mediaObject    `json:"image"`
	Video            *mediaObject    `json:"video"`
	Audio            *mediaObject    `json:"audio"`
	Document         *mediaObject    `json:"document"`
	Sticker          *mediaObject    `json:"sticker"`
	Template         *templateObject `json:"template"`
	Interactive      *interactive    `json:"interactive"`
	Reaction         *struct {
		MessageID string `json:"message_id"`
		Emoji     string `json:"emoji"`
	} `json:"reaction"`
	Location *struct {
		Latitude  *float64 `json:"latitude"`
		Longitude *float64 `json:"longitude"`
	} `json:"location"`
}

type textObject struct {
	Body string `json:"body"`
}

type mediaObject struct {
	Link    string `json:"link"`
	ID      string `json:"id"`
	Caption string `json:"caption"`
}

type templateObject struct {
	Name     string `json:"name"`
	Language struct {
		Code string `json:"code"`
	} `json:"language"`
	Components []struct {
		Type       string          `json:"type"`
		Parameters []templateParam `json:"parameters"`
	} `json:"components"`
}

type templateParam struct {
	Type          string       `json:"type"`
	ParameterName string       `json:"parameter_name"`
	Text          string       `json:"text"`
	Image         *mediaObject `json:"image"`
	Video         *mediaObject `json:"video"`
	Document      *mediaObject `json:"document"`
}

type interactive struct {
	Type string `json:"type"`
	Body *struct {
		Text string `json:"text"`
	} `json:"body"`
	Action struct {
		Name    string `json:"name"`
		Button  string `json:"button"`
		Buttons []struct {
			Type  string `json:"type"`
			Reply struct {
				ID    string `json:"id"`
				Title string `json:"title"`
			} `json:"reply"`
		} `json:"buttons"`
		Sections []struct {
			Title string `json:"title"`
			Rows  []struct {
				ID          string `json:"id"`
				Title       string `json:"title"`
				Description string `json:"description"`
			} `json:"rows"`
		} `json:"sections"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"action"`
}

type sendResponse struct {
	MessagingProduct string         `json:"messaging_product"`
	Contacts         []sendContact  `json:"contacts"`
	Messages         []sendAccepted `json:"messages"`
}

type sendContact struct {
	Input string `json:"input"`
	WaID  string `json:"wa_id"`
}

type sendAccepted struct {
	ID            string `json:"id"`
	MessageStatus string `json:"message_status"`
}

// handleMessages serves POST /{version}/{id}/messages: sends and
// mark-as-read.
func (s *Simulator) handleMessages(w http.ResponseWriter, r *http.Request) {
	body := requestBody(r)
	var req sendRequest
	parseErr := json.Unmarshal(body, &req)
	cfg := s.config()
	id := newMessageID() // outside the lock: it reads crypto/rand

	s.mu.Lock()
	// Taken under the lock so that the send window sees times in order.
	now := time.Now()
	ph, aerr := objectAs[*phone](s, r, r.PathValue("id"), "messages")
	if aerr == nil && parseErr != nil {
		aerr = errInvalid("the request body is not valid JSON: %v", parseErr)
	}
	if aerr == nil && req.MessagingProduct != "whatsapp" {
		aerr = errInvalid("messaging_product must be \"whatsapp\"")
	}
	if aerr != nil {
		s.mu.Unlock()
		writeError(w, aerr)
		return
	}
	// A body with a status (or a bare message_id) is a mark-as-read, which
	// the throughput cap and the injected errors leave alone.
	if req.Status != "" || (req.MessageID != "" && req.Type == "") {
		aerr = s.markReadLocked(ph, &req)
		s.mu.Unlock()
		if aerr != nil {
			writeError(w, aerr)
			return
		}
		writeJSON(w, http.StatusOK, success)
		return
	}
	if aerr := ph.sendErrorLocked(); aerr != nil {
		s.mu.Unlock()
		writeError(w, aerr)
		return
	}
	if !ph.window.allow(now, cfg.ThroughputPerSecond) {
		s.mu.Unlock()
		writeError(w, errThroughput(cfg.ThroughputPerSecond))
		return
	}
	if cfg.ErrorRate > 0 && rand.Float64() < cfg.ErrorRate {
		s.mu.Unlock()
		writeError(w, errTransient())
		return
	}
	category, aerr := s.validateSendLocked(ph, &req)
	if aerr != nil {
		s.mu.Unlock()
		writeError(w, aerr)
		return
	}
	m := &message{
		id:        id,
		phone:     ph,
		to:        req.To,
		typ:       req.Type,
		body:      body,
		bizOpaque: req.BizOpaque,
		category:  category,
		sentAt:    now,
		status:    "accepted",
		gen:       s.gen.Load(),
		delays:    [3]time.Duration{cfg.SentAfter, cfg.DeliveredAfter, cfg.ReadAfter},
		failCode:  cfg.FailRecipients[req.To],
	}
	s.messages[m.id] = m
	s.sent = append(s.sent, m)
	_, first, planned := m.step(0)
	s.mu.Unlock()

	if planned {
		s.sched.push(event{at: now.Add(first), kind: evStatus, msg: m})
	}
	writeJSON(w, http.StatusOK, sendResponse{
		MessagingProduct: "whatsapp",
		Contacts:         []sendContact{{Input: req.To, WaID: req.To}},
		Messages:         []sendAccepted{{ID: m.id, MessageStatus: "accepted"}},
	})
}

func (s *Simulator) markReadLocked(ph *phone, req *sendRequest) *apiError {
	if req.Status != "read" {
		return errInvalid("status must be \"read\"")
	}
	if req.MessageID == "" {
		return errMissing("message_id")
	}
	if owner, ok := s.incoming[req.MessageID]; ok && owner == ph.id {
		return nil
	}
	if m, ok := s.messages[req.MessageID]; ok && m.phone == ph {
		return nil
	}
	return errInvalid("message_id %s is not a message of this phone number", req.MessageID)
}

var sendTypes = []string{"text", "image", "video", "audio", "document", "sticker", "template", "interactive", "reaction", "location"}

// validateSendLocked checks a send like the provider does synchronously and
// returns the pricing category of the message.
func (s *Simulator) validateSendLocked(ph *phone, req *sendRequest) (string, *apiError) {
	if req.To == "" {
		return "", errMissing("to")
	}
	if !isDigits(req.To) || len(req.To) < 8 || len(req.To) > 15 {
		return "", errParamValue("to must be 8 to 15 digits (E.164 without +), got %q", req.To)
	}
	if req.RecipientType != "" && req.RecipientType != "individual" {
		return "", errParamValue("recipient_type must be \"individual\"")
	}
	switch req.Type {
	case "":
		return "", errMissing("type")
	case "text":
		if req.Text == nil || req.Text.Body == "" {
			return "", errMissing("text['body']")
		}
		if n := utf8.RuneCountInString(req.Text.Body); n > 4096 {
			return "", errParamValue("text['body'] is %d characters, the maximum is 4096", n)
		}
	case "image", "video", "audio", "document", "sticker":
		obj := map[string]*mediaObject{"image": req.Image, "video": req.Video, "audio": req.Audio, "document": req.Document,
			"sticker": req.Sticker}[req.Type]
		if aerr := s.checkMediaLocked(ph, req.Type, obj); aerr != nil {
			return "", aerr
		}
	case "template":
		return s.checkTemplateSendLocked(ph, req.Template)
	case "interactive":
		if aerr := checkInteractive(req.Interactive); aerr != nil {
			return "", aerr
		}
	case "reaction":
		if req.Reaction == nil || req.Reaction.MessageID == "" {
			return "", errMissing("reaction['message_id']")
		}
	case "location":
		if req.Location == nil || req.Location.Latitude == nil || req.Location.Longitude == nil {
			return "", errMissing("location['latitude'] and location['longitude']")
		}
		if *req.Location.Latitude < -90 || *req.Location.Latitude > 90 || *req.Location.Longitude < -180 || *req.Location.Longitude > 180 {
			return "", errParamValue("location coordinates out of range")
		}
	default:
		return "", errParamValue("type must be one of %s, got %q", strings.Join(sendTypes, ", "), req.Type)
	}
	return "service", nil
}

// checkMediaLocked validates a media object of a send (also template header
// parameters): a http(s) link, or the id of media uploaded to this account.
func (s *Simulator) checkMediaLocked(ph *phone, kind string, obj *mediaObject) *apiError {
	if obj == nil || obj.Link == "" && obj.ID == "" {
		return errParamValue("%s requires a link or an id", kind)
	}
	if obj.Link != "" {
		u, err := url.Parse(obj.Link)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errParamValue("%s['link'] must be an http or https URL, got %q", kind, obj.Link)
		}
		return nil
	}
	if md, ok := s.objects[obj.ID].(*media); !ok || md.waba != ph.waba.id {
		return errParamValue("%s['id'] %s is not media uploaded to this business account", kind, obj.ID)
	}
	return nil
}

func checkInteractive(in *interactive) *apiError {
	if in == nil {
		return errMissing("interactive")
	}
	if in.Body == nil || in.Body.Text == "" {
		return errParamValue("interactive['body']['text'] is required")
	}
	if n := utf8.RuneCountInString(in.Body.Text); n > 1024 {
		return errParamValue("interactive['body']['text'] is %d characters, the maximum is 1024", n)
	}
	a := in.Action
	switch in.Type {
	case "button":
		if len(a.Buttons) < 1 || len(a.Buttons) > 3 {
			return errParamValue("interactive buttons: expected 1 to 3, got %d", len(a.Buttons))
		}
		seen := map[string]bool{}
		for i, b := range a.Buttons {
			if b.Type != "reply" {
				return errParamValue("button %d: type must be \"reply\"", i)
			}
			if b.Reply.ID == "" || b.Reply.Title == "" {
				return errParamValue("button %d: reply id and title are required", i)
			}
			if n := utf8.RuneCountInString(b.Reply.Title); n > 20 {
				return errParamValue("button %d: title is %d characters, the maximum is 20", i, n)
			}
			if seen[b.Reply.ID] {
				return errParamValue("button %d: duplicate id %q", i, b.Reply.ID)
			}
			seen[b.Reply.ID] = true
		}
	case "list":
		if a.Button == "" {
			return errParamValue("interactive list: action['button'] is required")
		}
		if n := utf8.RuneCountInString(a.Button); n > 20 {
			return errParamValue("interactive list: action['button'] is %d characters, the maximum is 20", n)
		}
		if len(a.Sections) < 1 || len(a.Sections) > 10 {
			return errParamValue("interactive list: expected 1 to 10 sections, got %d", len(a.Sections))
		}
		rows := 0
		for _, sec := range a.Sections {
			for _, row := range sec.Rows {
				if row.ID == "" || row.Title == "" {
					return errParamValue("interactive list: every row needs an id and a title")
				}
				if n := utf8.RuneCountInString(row.Title); n > 24 {
					return errParamValue("interactive list: row title is %d characters, the maximum is 24", n)
				}
				rows++
			}
		}
		if rows < 1 || rows > 10 {
			return errParamValue("interactive list: expected 1 to 10 rows in all, got %d", rows)
		}
	case "cta_url":
		if a.Name != "cta_url" {
			return errParamValue("interactive cta_url: action['name'] must be \"cta_url\"")
		}
		var p struct {
			DisplayText string `json:"display_text"`
			URL         string `json:"url"`
		}
		if len(a.Parameters) == 0 || json.Unmarshal(a.Parameters, &p) != nil || p.DisplayText == "" || p.URL == "" {
			return errParamValue("interactive cta_url: parameters display_text and url are required")
		}
		if n := utf8.RuneCountInString(p.DisplayText); n > 20 {
			return errParamValue("interactive cta_url: display_text is %d characters, the maximum is 20", n)
		}
		if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errParamValue("interactive cta_url: url must be an http or https URL")
		}
	case "flow":
		if a.Name != "flow" {
			return errParamValue("interactive flow: action['name'] must be \"flow\"")
		}
		var p struct {
			FlowMessageVersion string `json:"flow_message_version"`
			FlowID             string `json:"flow_id"`
			FlowName           string `json:"flow_name"`
			FlowCTA            string `json:"flow_cta"`
		}
		if len(a.Parameters) == 0 || json.Unmarshal(a.Parameters, &p) != nil {
			return errParamValue("interactive flow: action['parameters'] is required")
		}
		if p.FlowMessageVersion == "" || p.FlowCTA == "" || p.FlowID == "" && p.FlowName == "" {
			return errParamValue("interactive flow: flow_message_version, flow_cta and flow_id (or flow_name) are required")
		}
	case "call_permission_request":
		if a.Name != "call_permission_request" {
			return errParamValue("interactive call_permission_request: action['name'] must be \"call_permission_request\"")
		}
	case "":
		return errParamValue("interactive['type'] is required")
	default:
		return errParamValue("interactive['type'] must be button, list, cta_url, flow or call_permission_request, got %q", in.Type)
	}
	return nil
}

// checkTemplateSendLocked validates a template send against the stored
// template and returns its pricing category.
func (s *Simulator) checkTemplateSendLocked(ph *phone, t *templateObject) (string, *apiError) {
	if t == nil || t.Name == "" {
		return "", errMissing("template['name']")
	}
	if t.Language.Code == "" {
		return "", errMissing("template['language']['code']")
	}
	tmpl := s.templates[templateKey(ph.waba.id, t.Name, t.Language.Code)]
	if tmpl == nil || tmpl.status != "APPROVED" {
		return "", newError(http.StatusBadRequest, 132001, "Template name does not exist in the translation",
			fmt.Sprintf("template name (%s) does not exist in %s", t.Name, t.Language.Code))
	}
	var body, header []templateParam
	for _, c := range t.Components {
		switch strings.ToLower(c.Type) {
		case "body":
			body = append(body, c.Parameters...)
		case "header":
			header = append(header, c.Parameters...)
		}
	}
	if len(body) != len(tmpl.bodyVars) {
		return "", newError(http.StatusBadRequest, 132000, "Number of parameters does not match the expected number of params",
			fmt.Sprintf("body: number of localizable_params (%d) does not match the expected number of params (%d)", len(body), len(tmpl.bodyVars)))
	}
	if tmpl.parameterFormat == "NAMED" {
		seen := map[string]bool{}
		for _, p := range body {
			if p.ParameterName == "" || !slices.Contains(tmpl.bodyVars, p.ParameterName) || seen[p.ParameterName] {
				return "", newError(http.StatusBadRequest, 132012, "Parameter format does not match format in the created template",
					fmt.Sprintf("body: the template uses named parameters %v; got parameter_name %q", tmpl.bodyVars, p.ParameterName))
			}
			seen[p.ParameterName] = true
		}
	} else {
		for _, p := range body {
			if p.ParameterName != "" {
				return "", newError(http.StatusBadRequest, 132012, "Parameter format does not match format in the created template",
					"body: the template uses positional parameters; parameter_name is not allowed")
			}
		}
	}
	switch tmpl.headerFormat {
	case "IMAGE", "VIDEO", "DOCUMENT":
		kind := strings.ToLower(tmpl.headerFormat)
		if len(header) != 1 || header[0].Type != kind {
			return "", newError(http.StatusBadRequest, 132000, "Number of parameters does not match the expected number of params",
				fmt.Sprintf("header: expected one %s parameter", kind))
		}
		obj := map[string]*mediaObject{"image": header[0].Image, "video": header[0].Video, "document": header[0].Document}[kind]
		if aerr := s.checkMediaLocked(ph, "header "+kind, obj); aerr != nil {
			return "", aerr
		}
	case "TEXT":
		if len(header) != len(tmpl.headerVars) {
			return "", newError(http.StatusBadRequest, 132000, "Number of parameters does not match the expected number of params",
				fmt.Sprintf("header: number of localizable_params (%d) does not match the expected number of params (%d)", len(header), len(tmpl.headerVars)))
		}
	}
	return strings.ToLower(tmpl.category), nil
}

// Status webhook payload.
type statusJSON struct {
	ID           string            `json:"id"`
	Status       string            `json:"status"`
	Timestamp    string            `json:"timestamp"`
	RecipientID  string            `json:"recipient_id"`
	BizOpaque    string            `json:"biz_opaque_callback_data,omitempty"`
	Conversation *conversationJSON `json:"conversation,omitempty"`
	Pricing      *pricingJSON      `json:"pricing,omitempty"`
	Errors       []statusErrorJSON `json:"errors,omitempty"`
}

type conversationJSON struct {
	ID     string `json:"id"`
	Origin struct {
		Type string `json:"type"`
	} `json:"origin"`
}

type pricingJSON struct {
	Billable     bool   `json:"billable"`
	PricingModel string `json:"pricing_model"`
	Category     string `json:"category"`
}

type statusErrorJSON struct {
	Code      int    `json:"code"`
	Title     string `json:"title"`
	Message   string `json:"message"`
	ErrorData struct {
		Details string `json:"details"`
	} `json:"error_data"`
}

// failureTitles are the provider's titles for the usual asynchronous
// failures.
var failureTitles = map[int]string{
	130472: "User's number is part of an experiment",
	131000: "Something went wrong",
	131026: "Message undeliverable",
	131047: "Re-engagement message",
	131048: "Spam rate limit hit",
	131049: "This message was not delivered to maintain healthy ecosystem engagement.",
	131050: "Unable to deliver the message. This recipient has chosen to stop receiving marketing messages on WhatsApp from your business",
	131051: "Unsupported message type",
	131053: "Media upload error",
	131056: "(Business Account, Consumer Account) pair rate limit hit",
}

// statusJSON builds a status payload of m. It reads only fields fixed at
// send time, so it needs no lock.
func (m *message) statusJSON(status string, at time.Time, errorCode int) statusJSON {
	st := statusJSON{ID: m.id, Status: status, Timestamp: strconv.FormatInt(at.Unix(), 10), RecipientID: m.to, BizOpaque: m.bizOpaque}
	switch status {
	case "sent", "delivered":
		// Conversation ids are per number, recipient and category, as on the
		// real provider; hashing avoids storing them.
		h := sha256.Sum256([]byte(m.phone.id + "|" + m.to + "|" + m.category))
		conv := &conversationJSON{ID: hex.EncodeToString(h[:16])}
		conv.Origin.Type = m.category
		st.Conversation = conv
		st.Pricing = &pricingJSON{Billable: true, PricingModel: "CBP", Category: m.category}
	case "failed":
		if errorCode == 0 {
			errorCode = 131026
		}
		title, ok := failureTitles[errorCode]
		if !ok {
			title = "Message failed to send"
		}
		e := statusErrorJSON{Code: errorCode, Title: title, Message: title}
		e.ErrorData.Details = fmt.Sprintf("%s (simulated failure for recipient %s)", title, m.to)
		st.Errors = []statusErrorJSON{e}
	}
	return st
}

// fireStatus moves m to its next planned status, queues the webhook and
// schedules the status after it.
func (s *Simulator) fireStatus(m *message) {
	now := time.Now()
	s.mu.Lock()
	if m.gen != s.gen.Load() {
		s.mu.Unlock()
		return
	}
	status, _, ok := m.step(m.next)
	if !ok {
		s.mu.Unlock()
		return
	}
	m.next++
	m.status = status
	item := statusItem{msg: m, status: status, at: now.Unix(), errorCode: m.failCode}
	_, after, more := m.step(m.next)
	s.mu.Unlock()

	s.queue.pushStatus(m.phone.id, item)
	if more {
		s.sched.push(event{at: m.sentAt.Add(after), kind: evStatus, msg: m})
	}
}

// PostStatus posts a status webhook for a message the simulator accepted,
// synchronously, whatever its plan: tests use it for duplicates and
// out-of-order statuses. errorCode applies to "failed" (default 131026).
// It returns the receiver's HTTP status.
func (s *Simulator) PostStatus(ctx context.Context, messageID, status string, errorCode int) (int, error) {
	return s.postStatus(ctx, messageID, status, errorCode, time.Now())
}

func (s *Simulator) postStatus(ctx context.Context, messageID, status string, errorCode int, at time.Time) (int, error) {
	switch status {
	case "sent", "delivered", "read", "failed":
	default:
		return 0, fmt.Errorf("platformsim: status must be sent, delivered, read or failed, got %q", status)
	}
	s.mu.Lock()
	m, ok := s.messages[messageID]
	if !ok {
		s.mu.Unlock()
		return 0, fmt.Errorf("platformsim: %w: message %s", ErrNotFound, messageID)
	}
	m.status = status
	value := m.phone.messagesValue()
	value.Statuses = []statusJSON{m.statusJSON(status, at, errorCode)}
	wabaID := m.phone.waba.id
	s.mu.Unlock()
	body, err := json.Marshal(newEnvelope(wabaID, "messages", value))
	if err != nil {
		return 0, err
	}
	return s.postNow(ctx, body)
}
