package platformsim

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// controlRoutes is the /_sim control API: plain JSON, no auth, not recorded.
func (s *Simulator) controlRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_sim/health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /_sim/config", s.handleGetConfig)
	mux.HandleFunc("PUT /_sim/config", s.handlePutConfig)
	mux.HandleFunc("GET /_sim/business_accounts", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"data": s.BusinessAccounts()})
	})
	mux.HandleFunc("POST /_sim/business_accounts", s.handleAddBusinessAccount)
	mux.HandleFunc("POST /_sim/oauth_codes", s.handleAddOAuthCode)
	mux.HandleFunc("POST /_sim/embedded_signup/codes", s.handleAddSignupCode)
	mux.HandleFunc("GET /_sim/embedded_signup/sdk.js", s.handleSignupScript)
	mux.HandleFunc("POST /_sim/incoming", s.handleIncoming)
	mux.HandleFunc("POST /_sim/statuses", s.handlePostStatus)
	mux.HandleFunc("POST /_sim/templates/{id}/status", s.handleSetTemplateStatus)
	mux.HandleFunc("PUT /_sim/call_permissions", s.handleSetCallPermission)
	mux.HandleFunc("POST /_sim/calls", s.handleIncomingCall)
	mux.HandleFunc("POST /_sim/calls/{id}/terminate", s.handleTerminateCall)
	mux.HandleFunc("GET /_sim/calls/{id}", s.handleGetCall)
	mux.HandleFunc("PUT /_sim/call_behaviours", s.handleSetCallBehaviour)
	mux.HandleFunc("PUT /_sim/phone_numbers/{id}/send_error", s.handleSetSendError)
	mux.HandleFunc("POST /_sim/tokens/revoke", s.handleRevokeToken)
	mux.HandleFunc("POST /_sim/faults", s.handleInjectFault)
	mux.HandleFunc("DELETE /_sim/faults", func(w http.ResponseWriter, r *http.Request) {
		s.ClearFaults()
		writeJSON(w, http.StatusOK, success)
	})
	mux.HandleFunc("GET /_sim/catalogs", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"data": s.Catalogs(r.URL.Query().Get("business_account_id"))})
	})
	mux.HandleFunc("POST /_sim/catalogs", s.handleAddCatalog)
	mux.HandleFunc("PUT /_sim/catalogs/{id}", s.handleRenameCatalog)
	mux.HandleFunc("DELETE /_sim/catalogs/{id}", s.handleDeleteCatalog)
	mux.HandleFunc("POST /_sim/catalogs/{id}/products", s.handleAddProduct)
	mux.HandleFunc("GET /_sim/requests", s.handleRequests)
	mux.HandleFunc("DELETE /_sim/requests", func(w http.ResponseWriter, r *http.Request) {
		s.ClearRequests()
		writeJSON(w, http.StatusOK, success)
	})
	mux.HandleFunc("GET /_sim/requests/count", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]int{"count": s.CountRequests(requestFilter(r.URL.Query()))})
	})
	mux.HandleFunc("GET /_sim/messages", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		writeJSON(w, http.StatusOK, map[string]any{"data": s.Messages(MessageFilter{
			PhoneNumberID: q.Get("phone_number_id"), To: q.Get("to")})})
	})
	mux.HandleFunc("GET /_sim/webhooks", func(w http.ResponseWriter, r *http.Request) {
		since, _ := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
		writeJSON(w, http.StatusOK, map[string]any{"data": s.WebhooksSince(since)})
	})
	mux.HandleFunc("POST /_sim/reset", func(w http.ResponseWriter, r *http.Request) {
		s.Reset()
		writeJSON(w, http.StatusOK, success)
	})
	mux.HandleFunc("GET /_sim/media/{id}/download", s.handleDownloadMedia)
	mux.HandleFunc("GET /_sim/flows/{id}/flow.json", s.handleDownloadFlowJSON)
	mux.HandleFunc("/_sim/", func(w http.ResponseWriter, r *http.Request) {
		controlError(w, http.StatusNotFound, "no such control endpoint: "+r.Method+" "+r.URL.Path)
	})
	return mux
}

func controlError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// decodeControl decodes a control request body, answering 400 on failure.
func decodeControl(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		controlError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return false
	}
	return true
}

// Reset forgets messages, incoming message ids, recorded requests and
// webhooks, pending statuses, queued webhooks and injected faults;
// accounts, templates, flows, catalogs, media, tokens and the configuration
// stay.
func (s *Simulator) Reset() {
	s.mu.Lock()
	s.gen.Add(1)
	s.messages = make(map[string]*message)
	s.sent = nil
	s.incoming = make(map[string]string)
	for _, o := range s.objects {
		if p, ok := o.(*phone); ok {
			p.window.reset()
		}
	}
	s.mu.Unlock()
	s.queue.clear()
	s.ClearFaults()
	s.ClearRequests()
	s.whMu.Lock()
	s.webhooks = nil
	s.whMu.Unlock()
}

// configJSON is the control API's view of Config. In a PUT, absent fields
// are left alone.
type configJSON struct {
	AppID                   string         `json:"app_id,omitempty"`
	WebhookURL              *string        `json:"webhook_url"`
	SentAfterMS             *int64         `json:"sent_after_ms"`
	DeliveredAfterMS        *int64         `json:"delivered_after_ms"`
	ReadAfterMS             *int64         `json:"read_after_ms"`
	TemplateApprovalDelayMS *int64         `json:"template_approval_delay_ms"`
	ThroughputPerSecond     *int           `json:"throughput_per_second"`
	LatencyMS               *int64         `json:"latency_ms"`
	ErrorRate               *float64       `json:"error_rate"`
	FailRecipients          map[string]int `json:"fail_recipients"`
	StatusBatchSize         *int           `json:"status_batch_size"`
}

// ms reports a duration in milliseconds; any negative duration (a disabled
// status) shows as negative even when it is under a millisecond.
func ms(d time.Duration) *int64 {
	v := d.Milliseconds()
	if d < 0 {
		v = min(v, -1)
	}
	return &v
}

func (s *Simulator) configView() configJSON {
	c := s.Config()
	fr := c.FailRecipients
	if fr == nil {
		fr = map[string]int{}
	}
	return configJSON{
		AppID:                   c.AppID,
		WebhookURL:              &c.WebhookURL,
		SentAfterMS:             ms(c.SentAfter),
		DeliveredAfterMS:        ms(c.DeliveredAfter),
		ReadAfterMS:             ms(c.ReadAfter),
		TemplateApprovalDelayMS: ms(c.TemplateApprovalDelay),
		ThroughputPerSecond:     &c.ThroughputPerSecond,
		LatencyMS:               ms(c.Latency),
		ErrorRate:               &c.ErrorRate,
		FailRecipients:          fr,
		StatusBatchSize:         &c.StatusBatchSize,
	}
}

func (s *Simulator) handleGetConfig(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.configView())
}

func (s *Simulator) handlePutConfig(w http.ResponseWriter, r *http.Request) {
	var in configJSON
	if !decodeControl(w, r, &in) {
		return
	}
	if in.WebhookURL != nil && *in.WebhookURL != "" {
		u, err := url.Parse(*in.WebhookURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			controlError(w, http.StatusBadRequest, "webhook_url must be an http or https URL")
			return
		}
	}
	if in.ErrorRate != nil && (*in.ErrorRate < 0 || *in.ErrorRate > 1) {
		controlError(w, http.StatusBadRequest, "error_rate must be between 0 and 1")
		return
	}
	msDur := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	s.UpdateConfig(func(c *Config) {
		if in.WebhookURL != nil {
			c.WebhookURL = *in.WebhookURL
		}
		if in.SentAfterMS != nil {
			c.SentAfter = msDur(*in.SentAfterMS)
		}
		if in.DeliveredAfterMS != nil {
			c.DeliveredAfter = msDur(*in.DeliveredAfterMS)
		}
		if in.ReadAfterMS != nil {
			c.ReadAfter = msDur(*in.ReadAfterMS)
		}
		if in.TemplateApprovalDelayMS != nil {
			c.TemplateApprovalDelay = msDur(*in.TemplateApprovalDelayMS)
		}
		if in.ThroughputPerSecond != nil {
			c.ThroughputPerSecond = *in.ThroughputPerSecond
		}
		if in.LatencyMS != nil {
			c.Latency = msDur(*in.LatencyMS)
		}
		if in.ErrorRate != nil {
			c.ErrorRate = *in.ErrorRate
		}
		if in.FailRecipients != nil {
			c.FailRecipients = in.FailRecipients
		}
		if in.StatusBatchSize != nil {
			c.StatusBatchSize = *in.StatusBatchSize
		}
	})
	writeJSON(w, http.StatusOK, s.configView())
}

func (s *Simulator) handleAddBusinessAccount(w http.ResponseWriter, r *http.Request) {
	var in BusinessAccount
	if !decodeControl(w, r, &in) {
		return
	}
	out, err := s.addBusinessAccount(in)
	if err != nil {
		controlError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Simulator) handleAddOAuthCode(w http.ResponseWriter, r *http.Request) {
	var in OAuthCode
	if !decodeControl(w, r, &in) {
		return
	}
	if in.Code == "" || in.AccessToken == "" {
		controlError(w, http.StatusBadRequest, "code and access_token are required")
		return
	}
	s.AddOAuthCode(in)
	writeJSON(w, http.StatusOK, success)
}

type postResult struct {
	MessageID  string `json:"message_id,omitempty"`
	MediaID    string `json:"media_id,omitempty"`
	CallID     string `json:"call_id,omitempty"`
	Tag        string `json:"tag,omitempty"` // of a call with media
	StatusCode int    `json:"status_code"`
	Queued     bool   `json:"queued,omitempty"`
	Error      string `json:"error,omitempty"`
}

// result reports a webhook post: the receiver's status, or 0 and the error.
func result(code int, err error) postResult {
	res := postResult{StatusCode: code}
	if err != nil {
		res.Error = err.Error()
	}
	return res
}

func (s *Simulator) handleIncoming(w http.ResponseWriter, r *http.Request) {
	var in Incoming
	if !decodeControl(w, r, &in) {
		return
	}
	body, id, mediaID, err := s.incomingWebhook(in)
	if err != nil {
		controlError(w, statusFor(err), err.Error())
		return
	}
	if r.URL.Query().Get("async") == "true" {
		s.enqueue(body)
		writeJSON(w, http.StatusOK, postResult{MessageID: id, MediaID: mediaID, Queued: true})
		return
	}
	res := result(s.postNow(r.Context(), body))
	res.MessageID, res.MediaID = id, mediaID
	writeJSON(w, http.StatusOK, res)
}

func (s *Simulator) handlePostStatus(w http.ResponseWriter, r *http.Request) {
	var in struct {
		MessageID string `json:"message_id"`
		Status    string `json:"status"`
		ErrorCode int    `json:"error_code"`
		Timestamp int64  `json:"timestamp"`
	}
	if !decodeControl(w, r, &in) {
		return
	}
	at := time.Now()
	if in.Timestamp != 0 {
		at = time.Unix(in.Timestamp, 0)
	}
	code, err := s.postStatus(r.Context(), in.MessageID, in.Status, in.ErrorCode, at)
	if err != nil && code == 0 && !isPostError(err) {
		controlError(w, statusFor(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, result(code, err))
}

func (s *Simulator) handleSetTemplateStatus(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Status string `json:"status"`
		Reason string `json:"reason"`
	}
	if !decodeControl(w, r, &in) {
		return
	}
	code, err := s.SetTemplateStatus(r.Context(), r.PathValue("id"), in.Status, in.Reason)
	if err != nil && code == 0 && !isPostError(err) {
		controlError(w, statusFor(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, result(code, err))
}

func (s *Simulator) handleSetCallPermission(w http.ResponseWriter, r *http.Request) {
	var in struct {
		PhoneNumberID string `json:"phone_number_id"`
		UserWaID      string `json:"user_wa_id"`
		Status        string `json:"status"`
	}
	if !decodeControl(w, r, &in) {
		return
	}
	if err := s.SetCallPermission(in.PhoneNumberID, in.UserWaID, in.Status); err != nil {
		controlError(w, statusFor(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, success)
}

func (s *Simulator) handleIncomingCall(w http.ResponseWriter, r *http.Request) {
	var in struct {
		IncomingCall
		// Media places the call from a real phone peer (PlaceCall).
		Media bool `json:"media"`
	}
	if !decodeControl(w, r, &in) {
		return
	}
	var (
		id, tag string
		code    int
		err     error
	)
	if in.Media {
		var c *SimCall
		c, code, err = s.PlaceCall(r.Context(), in.IncomingCall)
		if c != nil {
			id, tag = c.ID, c.Tag
		}
	} else {
		id, code, err = s.IncomingCall(r.Context(), in.IncomingCall)
	}
	if id == "" {
		controlError(w, statusFor(err), err.Error())
		return
	}
	res := result(code, err)
	res.CallID, res.Tag = id, tag
	writeJSON(w, http.StatusOK, res)
}

func (s *Simulator) handleTerminateCall(w http.ResponseWriter, r *http.Request) {
	code, err := s.TerminateCall(r.Context(), r.PathValue("id"))
	if err != nil && code == 0 && !isPostError(err) {
		controlError(w, statusFor(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, result(code, err))
}

func requestFilter(q url.Values) RequestFilter {
	since, _ := strconv.ParseInt(q.Get("since"), 10, 64)
	return RequestFilter{Method: q.Get("method"), Path: q.Get("path"), Since: since}
}

func (s *Simulator) handleRequests(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"data": s.Requests(requestFilter(r.URL.Query()))})
}

// isPostError tells a failed webhook post (reported as status_code 0 with
// an error) from a bad control request.
func isPostError(err error) bool {
	var pe *postError
	return errors.Is(err, errNoWebhookURL) || errors.As(err, &pe)
}

func statusFor(err error) int {
	if errors.Is(err, ErrNotFound) {
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

func (s *Simulator) handleAddCatalog(w http.ResponseWriter, r *http.Request) {
	var in struct {
		BusinessAccountID string `json:"business_account_id"`
		Name              string `json:"name"`
	}
	if !decodeControl(w, r, &in) {
		return
	}
	id, err := s.AddCatalog(in.BusinessAccountID, in.Name)
	if err != nil {
		controlError(w, statusFor(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id})
}

func (s *Simulator) handleRenameCatalog(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name string `json:"name"`
	}
	if !decodeControl(w, r, &in) {
		return
	}
	if err := s.RenameCatalog(r.PathValue("id"), in.Name); err != nil {
		controlError(w, statusFor(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, success)
}

func (s *Simulator) handleDeleteCatalog(w http.ResponseWriter, r *http.Request) {
	if err := s.DeleteCatalog(r.PathValue("id")); err != nil {
		controlError(w, statusFor(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, success)
}

// handleAddProduct takes the product's attributes as the provider API
// names them (retailer_id, name, price...).
func (s *Simulator) handleAddProduct(w http.ResponseWriter, r *http.Request) {
	var in map[string]any
	if !decodeControl(w, r, &in) {
		return
	}
	id, err := s.AddProduct(r.PathValue("id"), in)
	if err != nil {
		controlError(w, statusFor(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id})
}
