package testfactory

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/testenv"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

// Provider is an in-process provider simulator and a client of it, for
// domain tests of code that calls the provider. Its webhooks go nowhere.
type Provider struct {
	Sim    *platformsim.Simulator
	Client *platform.Client
	// URL is the simulator's address, for a test's own client.
	URL string
	// WABA is a business account with one phone number, whose token is
	// Token: the token of the factory's accounts.
	WABA platformsim.BusinessAccount
}

// Provider starts a simulator until the test ends; configure may change its
// configuration (nil keeps the defaults: statuses at once, templates
// decided only by SetTemplateStatus).
func (f *Factory) Provider(configure func(*platformsim.Config)) *Provider {
	f.t.Helper()
	return startProvider(f.t, configure)
}

func startProvider(t testing.TB, configure func(*platformsim.Config)) *Provider {
	cfg := platformsim.Config{Logger: testenv.Quiet(), TemplateApprovalDelay: -1, ThroughputPerSecond: -1}
	if configure != nil {
		configure(&cfg)
	}
	sim := platformsim.New(cfg)
	srv := httptest.NewServer(sim)
	sim.SetBaseURL(srv.URL)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	waba := sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Acme", AccessToken: Token,
		PhoneNumbers: []platformsim.PhoneNumber{{VerifiedName: "Acme"}}})
	return &Provider{Sim: sim, Client: platform.New(srv.URL, "", nil), URL: srv.URL, WABA: waba}
}

// PhoneNumberID is the id of the business account's phone number.
func (p *Provider) PhoneNumberID() string { return p.WABA.PhoneNumbers[0].ID }

// AccountAt creates an account of the organization for the provider's
// phone number (verified and active unless an option says otherwise): its
// calls to the provider work.
func (f *Factory) AccountAt(p *Provider, orgID uuid.UUID, opts ...func(*models.PlatformAccount)) models.PlatformAccount {
	f.t.Helper()
	at := func(a *models.PlatformAccount) {
		a.PhoneNumberID, a.BusinessAccountID = p.PhoneNumberID(), p.WABA.ID
		a.PhoneNumber = p.WABA.PhoneNumbers[0].DisplayPhoneNumber
	}
	return f.Account(orgID, append([]func(*models.PlatformAccount){at}, opts...)...)
}

// TemplateAt creates an APPROVED template with positional placeholders at
// the provider for the account's business account, and stores it like
// Template does: sends of it are accepted.
func (f *Factory) TemplateAt(p *Provider, acc models.PlatformAccount, body string, opts ...func(*models.Template)) models.Template {
	f.t.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("template_%d", f.next())
	comp := map[string]any{"type": "BODY", "text": body}
	if n := len(placeholder.FindAllString(body, -1)); n > 0 {
		row := make([]string, n)
		for i := range row {
			row[i] = "x"
		}
		comp["example"] = map[string]any{"body_text": [][]string{row}}
	}
	comps, _ := json.Marshal([]any{comp})
	creds := platform.Creds{AccessToken: Token, BusinessAccountID: acc.BusinessAccountID}
	created, err := p.Client.CreateTemplate(ctx, creds, platform.TemplateDefinition{Name: name, Language: "en_US", Category: "UTILITY",
		ParameterFormat: "POSITIONAL", Components: comps})
	if err != nil {
		f.t.Fatalf("testfactory: template at the provider: %v", err)
	}
	// The review's webhook goes nowhere; the status is set all the same.
	_, _ = p.Sim.SetTemplateStatus(ctx, created.ID, models.TemplateApproved, "")
	at := func(t *models.Template) { t.Name, t.ProviderTemplateID = name, created.ID }
	return f.Template(acc, body, append([]func(*models.Template){at}, opts...)...)
}

var placeholder = regexp.MustCompile(`\{\{\s*[0-9]+\s*\}\}`)
