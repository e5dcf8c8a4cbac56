package platformsim

import (
	"net/http"
	"regexp"
	"slices"
)

// fields is the phone number as GET /{phone_number_id} shows it. The
// newer-version and coexistence fields appear only when asked for with
// ?fields=, as on the provider.
func (p *phone) fields(extended bool) map[string]any {
	m := map[string]any{
		"id":                   p.id,
		"verified_name":        p.verifiedName,
		"display_phone_number": p.display,
		"quality_rating":       p.qualityRating,
		"platform_type":        p.platformType,
		"throughput":           map[string]string{"level": p.throughputLevel},
		"messaging_limit_tier": p.messagingLimit,
	}
	if extended {
		if p.bmMessagingLimit != "" {
			m["whatsapp_business_manager_messaging_limit"] = p.bmMessagingLimit
		}
		m["is_on_biz_app"] = p.isOnBizApp
		m["code_verification_status"] = "VERIFIED"
		m["name_status"] = "APPROVED"
		m["status"] = cond(p.registered, "CONNECTED", "PENDING")
	}
	return m
}

// handlePhoneNumbers serves GET /{version}/{waba_id}/phone_numbers.
func (s *Simulator) handlePhoneNumbers(w http.ResponseWriter, r *http.Request) {
	fields := queryFields(r.URL.Query())
	s.mu.Lock()
	wb, aerr := objectAs[*waba](s, r, r.PathValue("id"), "phone_numbers")
	data := []map[string]any{}
	if aerr == nil {
		for _, p := range wb.phones {
			data = append(data, selectFields(p.fields(fields != nil), fields))
		}
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

var pinRE = regexp.MustCompile(`^[0-9]{6}$`)

// registerErrors are the provider's messages for the registration failures
// a phone number can be seeded with.
var registerErrors = map[int]string{
	133004: "Server Temporarily Unavailable",
	133005: "Two step verification PIN Mismatch",
	133006: "Phone number needs to be verified before registering",
	133008: "Too Many two step verification PIN Guesses",
	133009: "Two step verification PIN Guessed Too Fast",
	133010: "Phone number Not Registered",
	133015: "Please wait a few minutes before attempting to register this phone number",
	133016: "Account register deregister rate limit exceeded",
}

// handleRegister serves POST /{version}/{phone_number_id}/register.
func (s *Simulator) handleRegister(w http.ResponseWriter, r *http.Request) {
	body := requestBody(r)
	var in struct {
		MessagingProduct string `json:"messaging_product"`
		Pin              string `json:"pin"`
	}
	parseErr := decodeBody(body, &in)
	s.mu.Lock()
	ph, aerr := objectAs[*phone](s, r, r.PathValue("id"), "register")
	switch {
	case aerr != nil:
	case parseErr != nil:
		aerr = parseErr
	case in.MessagingProduct != "whatsapp":
		aerr = errInvalid("messaging_product must be \"whatsapp\"")
	case in.Pin == "":
		aerr = errMissing("pin")
	case !pinRE.MatchString(in.Pin):
		aerr = errParamValue("pin must be 6 digits")
	case ph.registerErrorCode != 0:
		msg := cmpOr(registerErrors[ph.registerErrorCode], "Registration failed")
		aerr = newError(http.StatusBadRequest, ph.registerErrorCode, msg, msg+" (seeded in the simulator)")
	default:
		ph.registered = true
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, success)
}

// handleDeregister serves POST /{version}/{phone_number_id}/deregister.
func (s *Simulator) handleDeregister(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ph, aerr := objectAs[*phone](s, r, r.PathValue("id"), "deregister")
	if aerr == nil {
		ph.registered = false
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, success)
}

// handleSubscribedApps serves GET, POST and DELETE
// /{version}/{waba_id}/subscribed_apps; the subscribed app is always the
// simulator's own.
func (s *Simulator) handleSubscribedApps(w http.ResponseWriter, r *http.Request) {
	appID := s.config().AppID
	s.mu.Lock()
	wb, aerr := objectAs[*waba](s, r, r.PathValue("id"), "subscribed_apps")
	var out any = success
	if aerr == nil {
		switch r.Method {
		case http.MethodPost:
			if !slices.Contains(wb.subscribedApps, appID) {
				wb.subscribedApps = append(wb.subscribedApps, appID)
			}
		case http.MethodDelete:
			wb.subscribedApps = slices.DeleteFunc(wb.subscribedApps, func(a string) bool { return a == appID })
		default:
			data := []map[string]any{}
			for _, a := range wb.subscribedApps {
				data = append(data, map[string]any{"whatsapp_business_api_data": map[string]string{
					"id": a, "name": "Wharf (simulated app)", "link": "https://example.invalid/app/" + a}})
			}
			out = map[string]any{"data": data}
		}
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleAccessToken serves GET /{version}/oauth/access_token: the code
// exchange of embedded signup. Codes are single-use.
func (s *Simulator) handleAccessToken(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cfg := s.config()
	if q.Get("client_id") != cfg.AppID || q.Get("client_secret") != cfg.AppSecret {
		writeError(w, newError(http.StatusBadRequest, 101, "Error validating client secret",
			"client_id and client_secret must be the simulator's app id and app secret"))
		return
	}
	code := q.Get("code")
	if code == "" {
		writeError(w, errMissing("code"))
		return
	}
	s.mu.Lock()
	c, ok := s.codes[code]
	if ok {
		delete(s.codes, code)
		s.grantLocked(c.AccessToken, c.WABAIDs, c.SharedWABAIDs, true)
	}
	s.mu.Unlock()
	if !ok {
		e := newError(http.StatusBadRequest, 100, "This authorization code has expired.",
			"the code was never issued or has already been used")
		e.subcode = 36007
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": c.AccessToken, "token_type": "bearer", "expires_in": 5183944})
}

// handleDebugToken serves GET /{version}/debug_token?input_token=, which
// needs the app token (app_id|app_secret).
func (s *Simulator) handleDebugToken(w http.ResponseWriter, r *http.Request) {
	cfg := s.config()
	if bearerToken(r) != cfg.AppID+"|"+cfg.AppSecret {
		writeError(w, errInvalidToken())
		return
	}
	input := r.URL.Query().Get("input_token")
	if input == "" {
		writeError(w, errMissing("input_token"))
		return
	}
	data := map[string]any{"app_id": cfg.AppID, "application": "Wharf (simulated app)", "expires_at": 0,
		"data_access_expires_at": 0}
	s.mu.Lock()
	g := s.tokens[input]
	if g == nil {
		data["type"] = "USER"
		data["is_valid"] = false
		data["scopes"] = []string{}
		data["error"] = map[string]any{"code": 190, "message": "Invalid OAuth access token."}
	} else {
		data["type"] = "USER"
		data["is_valid"] = true
		data["user_id"] = "100000000000009"
		data["scopes"] = []string{"whatsapp_business_management", "whatsapp_business_messaging", "business_management", "public_profile"}
		data["granular_scopes"] = []map[string]any{
			granularScope("whatsapp_business_management", g.granular),
			granularScope("whatsapp_business_messaging", g.granular),
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

// granularScope leaves target_ids out when there are none, which is how the
// provider reports a grant without specific targets (the client then falls
// back to listing shared accounts).
func granularScope(scope string, ids []string) map[string]any {
	m := map[string]any{"scope": scope}
	if len(ids) > 0 {
		m["target_ids"] = slices.Clone(ids)
	}
	return m
}

// handleSharedAccounts serves GET /{version}/me/whatsapp_business_accounts,
// the fallback we defined for tokens whose debug_token has no targets: the
// business accounts shared with the token.
func (s *Simulator) handleSharedAccounts(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	g, aerr := s.authLocked(r)
	data := []map[string]string{}
	if aerr == nil {
		for _, id := range g.shared {
			if wb, ok := s.objects[id].(*waba); ok {
				data = append(data, map[string]string{"id": wb.id, "name": wb.name})
			}
		}
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}
