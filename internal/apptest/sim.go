package apptest

import (
	"context"
	"maps"
	"net/http/httptest"
	"testing"
	"time"

	"encoding/json"

	"github.com/google/uuid"

	"wharf/internal/templates"
	"wharf/internal/testenv"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

// SimEnv is a system wired to an in-process provider simulator whose
// webhooks come back to the system's /api/webhook.
type SimEnv struct {
	*Env
	Sim       *platformsim.Simulator
	SimServer *httptest.Server
	AppSecret string
	WABA      platformsim.BusinessAccount
}

// FastStatuses makes the simulator report sent, delivered and read quickly.
func FastStatuses(c *platformsim.Config) {
	c.SentAfter, c.DeliveredAfter, c.ReadAfter = 20*time.Millisecond, 40*time.Millisecond, 60*time.Millisecond
}

// NewWithSim starts a simulator and a system using it. simConfig may adjust
// the simulator's configuration (delays, throughput...).
func NewWithSim(t testing.TB, overrides map[string]string, simConfig func(*platformsim.Config)) *SimEnv {
	t.Helper()
	secret := testenv.RandomKey()
	cfg := platformsim.Config{AppSecret: secret, Logger: testenv.Quiet(), TemplateApprovalDelay: 50 * time.Millisecond}
	FastStatuses(&cfg)
	if simConfig != nil {
		simConfig(&cfg)
	}
	sim := platformsim.New(cfg)
	srv := httptest.NewServer(sim)
	sim.SetBaseURL(srv.URL)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	env := map[string]string{
		"PLATFORM_API_URL":       srv.URL,
		"PLATFORM_APP_SECRET":    secret,
		"OUTBOUND_ALLOW_PRIVATE": "true",
		// The browser tests never load the provider's own script.
		"EMBEDDED_SIGNUP_SCRIPT_URL": srv.URL + "/_sim/embedded_signup/sdk.js",
		"EMBEDDED_SIGNUP_ORIGINS":    srv.URL,
	}
	maps.Copy(env, overrides)
	e := &SimEnv{Env: New(t, env), Sim: sim, SimServer: srv, AppSecret: secret}
	sim.SetWebhookURL(e.Server.URL + "/api/webhook")
	e.WABA = sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Acme Support", AccessToken: "token-" + testenv.RandomKey()[:16],
		PhoneNumbers: []platformsim.PhoneNumber{{DisplayPhoneNumber: "+1 555-010-0001", VerifiedName: "Acme"}}})
	return e
}

// PhoneNumberID is the simulator's seeded phone number id.
func (e *SimEnv) PhoneNumberID() string { return e.WABA.PhoneNumbers[0].ID }

// ConnectAccount connects the seeded phone number to the caller's
// organization and returns the account id; the account is active.
func (e *SimEnv) ConnectAccount(auth Auth, name string) string {
	e.T.Helper()
	var a struct {
		ID string `json:"id"`
	}
	e.Do("POST", "/api/accounts", map[string]any{"name": name, "phone_number_id": e.PhoneNumberID(),
		"business_account_id": e.WABA.ID, "access_token": e.WABA.AccessToken, "webhook_verify_token": "verify-" + name},
		auth).Expect(e.T, 201).Into(e.T, &a)
	var test struct {
		Connected bool `json:"connected"`
	}
	e.Do("POST", "/api/accounts/"+a.ID+"/test", nil, auth).Expect(e.T, 200).Into(e.T, &test)
	if !test.Connected {
		e.T.Fatalf("account %s did not connect", name)
	}
	return a.ID
}

// SeedTemplate creates a template at the simulator, waits for its approval,
// and stores it APPROVED for the account, as a sync from the provider would.
func (e *SimEnv) SeedTemplate(orgID, accountID, name, body string, named bool) models.Template {
	e.T.Helper()
	ctx := context.Background()
	client := platform.New(e.SimServer.URL, "", nil)
	creds := platform.Creds{AccessToken: e.WABA.AccessToken, BusinessAccountID: e.WABA.ID}
	format := "POSITIONAL"
	example := map[string]any{}
	params := templates.Placeholders(body)
	if named {
		format = "NAMED"
		var ex []map[string]string
		for _, p := range params {
			ex = append(ex, map[string]string{"param_name": p, "example": "x"})
		}
		example["body_text_named_params"] = ex
	} else if len(params) > 0 {
		row := make([]string, len(params))
		for i := range row {
			row[i] = "x"
		}
		example["body_text"] = [][]string{row}
	}
	comp := map[string]any{"type": "BODY", "text": body}
	if len(params) > 0 {
		comp["example"] = example
	}
	comps, _ := json.Marshal([]any{comp})
	created, err := client.CreateTemplate(ctx, creds, platform.TemplateDefinition{Name: name, Language: "en_US", Category: "UTILITY",
		ParameterFormat: format, Components: comps})
	if err != nil {
		e.T.Fatalf("create template at the simulator: %v", err)
	}
	Eventually(e.T, 5*time.Second, "template approval", func() bool {
		all, err := client.AllTemplates(ctx, creds)
		if err != nil {
			return false
		}
		for _, d := range all {
			if d.ID == created.ID {
				return d.Status == models.TemplateApproved
			}
		}
		return false
	})
	t := models.Template{ID: uuid.New(), OrganizationID: uuid.MustParse(orgID), AccountID: uuid.MustParse(accountID),
		ProviderTemplateID: created.ID, Name: name, Language: "en_US", Category: "UTILITY", Status: models.TemplateApproved,
		ParameterFormat: "positional"}
	if named {
		t.ParameterFormat = "named"
	}
	t.Components.V = []map[string]any{{"type": "BODY", "text": body}}
	t.SampleValues.V = []map[string]any{}
	if err := e.DB.WithContext(context.Background()).Create(&t).Error; err != nil {
		e.T.Fatal(err)
	}
	return t
}

// Incoming makes the simulator deliver a message from a user and fails the
// test unless the system accepted the webhook.
func (e *SimEnv) Incoming(in platformsim.Incoming) string {
	e.T.Helper()
	if in.PhoneNumberID == "" {
		in.PhoneNumberID = e.PhoneNumberID()
	}
	id, status, err := e.Sim.Incoming(context.Background(), in)
	if err != nil || status != 200 {
		e.T.Fatalf("incoming webhook: status %d, %v", status, err)
	}
	return id
}
