package outbound_test

import (
	"context"
	"errors"
	"testing"

	"wharf/internal/accounts"
	"wharf/internal/contacts"
	"wharf/internal/infra/safehttp"
	"wharf/internal/orgsettings"
	"wharf/internal/outbound"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

// The marketing opt-out rule: a marketing template to an opted-out
// contact is refused before it leaves (read from the contact, or from the
// caller's OptedOut); other sends to it still go; the provider's 131050 on
// a send opts the number out (a new contact for a number without one).
func TestMarketingOptOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	q := testenv.NewQueue(t)
	accts := accounts.NewService(f.DB, f.Box, p.Client, orgsettings.NewService(f.DB, f.Box, nil, nil), q.Enqueuer, testenv.Quiet())
	cts := contacts.NewService(f.DB, webhooks.NewService(f.DB, f.Box, q.Enqueuer, safehttp.Policy{}, nil, testenv.Quiet()), nil, nil)
	org := f.Org()
	acc := f.AccountAt(p, org.ID)
	a := &accounts.Account{PlatformAccount: acc, AccessToken: testfactory.Token}
	s := outbound.New(outbound.Deps{Provider: p.Client, Accounts: accts, OptOuts: cts, Log: testenv.Quiet()})
	out := f.Contact(org.ID, &acc.ID, func(c *models.Contact) { c.MarketingOptOut = true })
	in := f.Contact(org.ID, &acc.ID)
	promo := f.TemplateAt(p, acc, "Our sale starts today")
	tmpl := func(to string) platform.Message {
		m := platform.NewMessage(to[1:], "template")
		m.Template = &platform.Template{Name: promo.Name, Language: platform.TemplateLanguage{Code: "en_US"}}
		return m
	}
	before := p.Sim.MessageCount(platformsim.MessageFilter{})
	r := s.Send(ctx, outbound.Message{Account: a, Priority: outbound.API, Message: tmpl(out.PhoneNumber), Marketing: true})
	if r.Outcome != outbound.Refused || !errors.Is(r.Err, outbound.ErrOptedOut) {
		t.Fatalf("a marketing template to an opted-out contact: %+v", r)
	}
	no := false
	if r := s.Send(ctx, outbound.Message{Account: a, Priority: outbound.Campaign, Message: tmpl(out.PhoneNumber), Marketing: true, OptedOut: &no}); r.Outcome != outbound.Accepted {
		t.Fatalf("the caller's OptedOut is the rule's answer: %+v", r)
	}
	yes := true
	if r := s.Send(ctx, outbound.Message{Account: a, Priority: outbound.Campaign, Message: tmpl(in.PhoneNumber), Marketing: true, OptedOut: &yes}); !errors.Is(r.Err, outbound.ErrOptedOut) {
		t.Fatalf("OptedOut true refuses: %+v", r)
	}
	if r := s.Send(ctx, outbound.Message{Account: a, Priority: outbound.API, Message: tmpl(out.PhoneNumber)}); r.Outcome != outbound.Accepted {
		t.Fatalf("a utility template to an opted-out contact is sent: %+v", r)
	}
	if r := s.Send(ctx, outbound.Message{Account: a, Priority: outbound.API, Message: tmpl(in.PhoneNumber), Marketing: true}); r.Outcome != outbound.Accepted {
		t.Fatalf("a marketing template to a contact who did not opt out is sent: %+v", r)
	}
	if got := p.Sim.MessageCount(platformsim.MessageFilter{}) - before; got != 3 {
		t.Fatalf("the provider got %d messages, want 3 (two refused)", got)
	}

	// 131050 on the send: the number without a contact gets one, opted out.
	if err := p.Sim.InjectFault(platformsim.Fault{Method: "POST", Path: "/messages", Code: outbound.CodeMarketingOptOut, Times: 1}); err != nil {
		t.Fatal(err)
	}
	r = s.Send(ctx, outbound.Message{Account: a, Priority: outbound.API, Message: tmpl("+15550009999"), Marketing: true})
	if r.Outcome != outbound.Rejected || r.ProviderError() == nil || r.ProviderError().Code != 131050 {
		t.Fatalf("131050: %+v", r)
	}
	var c models.Contact
	if err := f.DB.Take(&c, "organization_id = ? AND phone_number = ?", org.ID, "+15550009999").Error; err != nil {
		t.Fatal(err)
	}
	if !c.MarketingOptOut || c.OptOutSource != models.OptOutProvider || c.OptedOutAt == nil || c.OptOutChangedBy != nil {
		t.Fatalf("the contact after 131050: %+v", c)
	}
	if r := s.Send(ctx, outbound.Message{Account: a, Priority: outbound.API, Message: tmpl("+15550009999"), Marketing: true}); !errors.Is(r.Err, outbound.ErrOptedOut) {
		t.Fatalf("the next marketing send after 131050: %+v", r)
	}
}
