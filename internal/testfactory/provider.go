package testfactory

import (
	"net/http/httptest"
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
	return &Provider{Sim: sim, Client: platform.New(srv.URL, "", nil), WABA: waba}
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
