package campaigns_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/campaigns"
	"wharf/internal/contacts"
	"wharf/internal/infra/safehttp"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
	"wharf/jobs"
	"wharf/models"
	"wharf/platformsim"
)

// A marketing campaign skips the recipients whose contacts opted out of
// marketing: skipped with the reason, counted as skipped (not failed), and
// never sent; a utility campaign to the same numbers reaches everyone.
func TestOptedOutRecipientsAreSkipped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	svc, _ := newServiceWith(t, f, p, nil, contacts.NewService(f.DB, webhooks.NewService(f.DB, f.Box, nil, safehttp.Policy{}, nil, testenv.Quiet()), nil, nil))
	org := f.Org()
	acc := f.AccountAt(p, org.ID, func(a *models.PlatformAccount) { a.MessagingTierOverride = "TIER_UNLIMITED" })
	promo := f.TemplateAt(p, acc, "Hi {{1}}, our sale starts", func(t *models.Template) { t.Category = "MARKETING" })
	notice := f.TemplateAt(p, acc, "Hi {{1}}, your order shipped")
	// Recipients +15550300001 and +15550300003 are contacts who opted out;
	// +15550300002 is a contact who did not.
	for _, n := range []string{"+15550300001", "+15550300003"} {
		f.Contact(org.ID, &acc.ID, func(c *models.Contact) { c.PhoneNumber, c.MarketingOptOut = n, true })
	}
	f.Contact(org.ID, &acc.ID, func(c *models.Contact) { c.PhoneNumber = "+15550300002" })

	run := func(tmpl models.Template) models.Campaign {
		t.Helper()
		c, _ := f.Campaign(tmpl, 5)
		started, err := svc.Start(ctx, org.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.RunLane(ctx, org.ID, c.ID, started.RunGeneration); err != nil {
			t.Fatal(err)
		}
		if err := svc.Recount(ctx, org.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		return load(t, f, c.ID)
	}
	sent := func(to string) int {
		return p.Sim.MessageCount(platformsim.MessageFilter{PhoneNumberID: p.PhoneNumberID(), To: to})
	}

	c := run(promo)
	if got := byStatus(t, f, c.ID); got[models.RecipientSkipped] != 2 || got[models.RecipientSent] != 3 || got[models.RecipientFailed] != 0 {
		t.Fatalf("recipients by status %v: want 2 skipped, 3 sent", got)
	}
	if c.Status != models.CampaignCompleted || c.SkippedCount != 2 || c.SentCount != 3 || c.FailedCount != 0 {
		t.Fatalf("campaign %+v: want completed, 3 sent, 2 skipped, none failed", c)
	}
	var skipped models.CampaignRecipient
	f.DB.Take(&skipped, "campaign_id = ? AND phone_number = '+15550300001'", c.ID)
	if skipped.Status != models.RecipientSkipped || skipped.ErrorTitle != "opted out of marketing" || skipped.SentAt != nil || skipped.Attempts != 0 {
		t.Fatalf("skipped recipient %+v", skipped)
	}
	if sent("15550300001") != 0 || sent("15550300003") != 0 || sent("15550300002") != 1 {
		t.Fatal("the provider got a marketing template for an opted-out contact, or none for one who did not opt out")
	}
	pr, err := svc.Progress(ctx, org.ID, c.ID)
	if err != nil || pr.Skipped != 2 || pr.Failed != 0 || campaigns.Counted(&c).Skipped != 2 {
		t.Fatalf("progress %+v, %v: want 2 skipped", pr, err)
	}

	c = run(notice)
	if c.SentCount != 5 || c.SkippedCount != 0 || sent("15550300001") != 1 {
		t.Fatalf("a utility campaign %+v: want all 5 sent", c)
	}
}

type brokenOptOuts struct{}

func (brokenOptOuts) OptedOutAmong(context.Context, uuid.UUID, []string) (map[string]bool, error) {
	return nil, errors.New("connection refused")
}

// A lane that cannot read its chunk's opt-outs sends nobody: the chunk
// goes back to pending and the lane waits; nothing fails.
func TestUnreadableOptOutsSendNobody(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	svc, _ := newServiceWith(t, f, p, nil, brokenOptOuts{})
	org := f.Org()
	acc := f.AccountAt(p, org.ID, func(a *models.PlatformAccount) { a.MessagingTierOverride = "TIER_UNLIMITED" })
	promo := f.TemplateAt(p, acc, "Hi {{1}}, our sale starts", func(t *models.Template) { t.Category = "MARKETING" })
	c, _ := f.Campaign(promo, 3)
	started, err := svc.Start(ctx, org.ID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	err = svc.RunLane(ctx, org.ID, c.ID, started.RunGeneration)
	var limited *jobs.RateLimited
	if !errors.As(err, &limited) || !strings.Contains(limited.Reason, "cannot read the recipients' opt-outs") {
		t.Fatalf("the lane: %v, want a wait that says why", err)
	}
	if got := byStatus(t, f, c.ID); got[models.RecipientPending] != 3 || p.Sim.MessageCount(platformsim.MessageFilter{}) != 0 {
		t.Fatalf("recipients %v, %d sends: want all pending, none sent", got, p.Sim.MessageCount(platformsim.MessageFilter{}))
	}
}
