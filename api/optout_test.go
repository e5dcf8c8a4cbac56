package api_test

import (
	"strings"
	"testing"

	"wharf/internal/apptest"
)

// The opt-out keyword settings through the API: the defaults, refusals in
// the error envelope that change nothing, and a change read back.
func TestOptOutKeywordSettings(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	type keywords struct {
		Settings struct {
			OptOutKeywords     []string `json:"opt_out_keywords"`
			OptInKeywords      []string `json:"opt_in_keywords"`
			OptOutConfirmation string   `json:"opt_out_confirmation"`
			OptInConfirmation  string   `json:"opt_in_confirmation"`
		} `json:"settings"`
	}
	var s keywords
	e.Do("GET", "/api/org/settings", nil, admin.Auth()).Expect(t, 200).Into(t, &s)
	if strings.Join(s.Settings.OptOutKeywords, ",") != "STOP,UNSUBSCRIBE,STOPP,BAJA,CANCELAR,PARAR,ARRET,ARRÊT" ||
		strings.Join(s.Settings.OptInKeywords, ",") != "START,ALTA,INICIAR" || s.Settings.OptOutConfirmation != "" {
		t.Fatalf("defaults %+v", s.Settings)
	}
	for _, c := range []struct {
		body map[string]any
		msg  string
	}{
		{map[string]any{"opt_out_keywords": []string{}}, "opt_out_keywords must have at least one keyword"},
		{map[string]any{"opt_out_keywords": []string{"STOP", " "}}, "opt_out_keywords[1] is empty"},
		{map[string]any{"opt_in_keywords": []string{strings.Repeat("x", 31)}}, "opt_in_keywords[0] must be at most 30 characters"},
		{map[string]any{"opt_in_keywords": make([]string, 21)}, "opt_in_keywords must have at most 20 keywords"},
		{map[string]any{"opt_in_keywords": []string{"Stop"}}, `"Stop" cannot be both an opt-out and an opt-in keyword`},
		{map[string]any{"opt_out_confirmation": strings.Repeat("x", 1025), "timezone": "Europe/Paris"}, "opt_out_confirmation must be at most 1024 characters"},
	} {
		r := e.Do("PUT", "/api/org/settings", c.body, admin.Auth()).Expect(t, 400)
		if r.Outcome != "error" || !strings.Contains(r.Message, c.msg) || string(r.Data) != "null" {
			t.Errorf("%v: %s, want the error envelope with %q", c.body, r.Body, c.msg)
		}
	}
	var short struct {
		Settings struct {
			Timezone string `json:"timezone"`
		} `json:"settings"`
	}
	e.Do("GET", "/api/organizations/settings", nil, admin.Auth()).Expect(t, 200).Into(t, &short)
	e.Do("GET", "/api/org/settings", nil, admin.Auth()).Expect(t, 200).Into(t, &s)
	if len(s.Settings.OptOutKeywords) != 8 || short.Settings.Timezone != "UTC" {
		t.Fatalf("a refused update changed the settings: %+v %+v", s.Settings, short)
	}
	e.Do("PUT", "/api/org/settings", map[string]any{"opt_out_keywords": []string{" Quit ", "STOP"}, "opt_in_keywords": []string{"RESUME"},
		"opt_out_confirmation": "Done: no more offers."}, admin.Auth()).Expect(t, 200)
	e.Do("GET", "/api/org/settings", nil, admin.Auth()).Expect(t, 200).Into(t, &s)
	if strings.Join(s.Settings.OptOutKeywords, ",") != "Quit,STOP" || strings.Join(s.Settings.OptInKeywords, ",") != "RESUME" ||
		s.Settings.OptOutConfirmation != "Done: no more offers." {
		t.Fatalf("after the update %+v", s.Settings)
	}
	// settings:update is the route's permission.
	agent := e.CreateUser(admin.Auth(), "optout-agent@example.com", "Agent")
	e.Do("PUT", "/api/org/settings", map[string]any{"opt_out_keywords": []string{"X"}}, agent.Auth()).Expect(t, 403)
}

// A contact's opt-out through the API: shown in the contact's answer,
// changed with PUT /api/contacts/:id/opt-out (contacts:update), recorded
// with the user; a missing field is refused.
func TestContactOptOutThroughTheAPI(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	type contact struct {
		ID              string  `json:"id"`
		MarketingOptOut bool    `json:"marketing_opt_out"`
		OptedOutAt      *string `json:"opted_out_at"`
		OptOutSource    string  `json:"opt_out_source"`
		OptOutChangedAt *string `json:"opt_out_changed_at"`
		OptOutChangedBy *string `json:"opt_out_changed_by"`
	}
	var c contact
	e.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550104321", "name": "Ada"}, admin.Auth()).Expect(t, 201).Into(t, &c)
	if c.MarketingOptOut || c.OptedOutAt != nil || c.OptOutSource != "" || c.OptOutChangedBy != nil {
		t.Fatalf("a new contact %+v: want opted in, never changed", c)
	}
	path := "/api/contacts/" + c.ID + "/opt-out"
	r := e.Do("PUT", path, map[string]any{}, admin.Auth()).Expect(t, 400)
	if !strings.Contains(r.Message, "marketing_opt_out is required") {
		t.Fatalf("missing field: %s", r.Body)
	}
	e.Do("PUT", path, map[string]any{"marketing_opt_out": true}, admin.Auth()).Expect(t, 200).Into(t, &c)
	if !c.MarketingOptOut || c.OptedOutAt == nil || c.OptOutSource != "user" || c.OptOutChangedBy == nil || *c.OptOutChangedBy != admin.User.ID {
		t.Fatalf("opted out %+v: want the admin recorded", c)
	}
	e.Do("GET", "/api/contacts/"+c.ID, nil, admin.Auth()).Expect(t, 200).Into(t, &c)
	if !c.MarketingOptOut || c.OptOutChangedAt == nil {
		t.Fatalf("GET after the change: %+v", c)
	}
	e.Do("PUT", "/api/contacts/00000000-0000-0000-0000-000000000001/opt-out", map[string]any{"marketing_opt_out": true}, admin.Auth()).Expect(t, 404)
	// A role without contacts:update may read the state but not change it.
	var role struct {
		ID string `json:"id"`
	}
	e.Do("POST", "/api/roles", map[string]any{"name": "Reader", "permissions": []string{"contacts:read"}}, admin.Auth()).Expect(t, 201).Into(t, &role)
	reader := e.CreateUser(admin.Auth(), "optout-reader@example.com", "Reader")
	e.Do("GET", "/api/contacts/"+c.ID, nil, reader.Auth()).Expect(t, 200)
	e.Do("PUT", path, map[string]any{"marketing_opt_out": false}, reader.Auth()).Expect(t, 403)
	agent := e.CreateUser(admin.Auth(), "optout-agent2@example.com", "Agent")
	e.Do("PUT", path, map[string]any{"marketing_opt_out": false}, agent.Auth()).Expect(t, 200).Into(t, &c)
	if c.MarketingOptOut || c.OptedOutAt != nil || c.OptOutChangedBy == nil || *c.OptOutChangedBy != agent.User.ID {
		t.Fatalf("opted back in by the agent: %+v", c)
	}
}
