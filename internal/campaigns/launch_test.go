package campaigns_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/campaigns"
	"wharf/internal/inbound"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/safehttp"
	"wharf/internal/infra/statuses"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

// outbox records projected campaigns' changes in the events table
// (webhooks.Service.Record) and counts what is published.
type outbox struct {
	*webhooks.Service
	published atomic.Int64
}

func (o *outbox) Publish(_ context.Context, _ uuid.UUID, ids ...uuid.UUID) {
	o.published.Add(int64(len(ids)))
}

// changes reads the campaign.changed events recorded for a campaign.
func changes(t *testing.T, f *testfactory.Factory, id uuid.UUID) []campaigns.Change {
	t.Helper()
	var rows []string
	if err := f.DB.Raw(`SELECT data::text FROM events WHERE event = ? AND data->>'campaign_id' = ? ORDER BY created_at`,
		webhooks.EventCampaignChanged, id.String()).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := make([]campaigns.Change, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal([]byte(r), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// A launch creates a sending campaign with its recipients in the caller's
// transaction (or nothing, when it rolls back or is refused); a projected
// one records campaign.changed in the outbox for each chunk's accepted
// sends (naming them) and each recount, and an ordinary one records
// nothing; RetryFailed really resends the failed recipients once and the
// campaign completes again.
func TestLaunchProjectAndRetryFailed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	obs := &outbox{Service: webhooks.NewService(f.DB, f.Box, nil, safehttp.Policy{}, nil, testenv.Quiet())}
	svc, _ := newServiceWith(t, f, p, obs, nil)
	org := f.Org()
	acc := f.AccountAt(p, org.ID, func(a *models.PlatformAccount) { a.MessagingTierOverride = "TIER_UNLIMITED" })
	tmpl := f.TemplateAt(p, acc, "Hi {{1}}, order {{2}}")
	other := f.Org()
	recipients := func(n int) []campaigns.RecipientInput {
		out := make([]campaigns.RecipientInput, n)
		for i := range out {
			out[i] = campaigns.RecipientInput{"phone_number": fmt.Sprintf("+1555040%04d", i),
				"name": "R", "order_id": "A-1"}
		}
		return out
	}
	launch := func(l campaigns.Launch, rollback bool) (*models.Campaign, error) {
		var c *models.Campaign
		err := f.DB.Transaction(func(tx *gorm.DB) error {
			var err error
			if c, err = svc.LaunchTx(ctx, tx, org.ID, l); err != nil {
				return err
			}
			if rollback {
				return gorm.ErrInvalidTransaction
			}
			return nil
		})
		return c, err
	}
	mapping := map[string]string{"1": "name", "2": "order_id"}
	base := func() campaigns.Launch {
		return campaigns.Launch{Name: "bulk", AccountID: acc.ID, TemplateID: tmpl.ID, VariableMapping: mapping, Recipients: recipients(10),
			Projected: true}
	}
	for want, change := range map[string]func(*campaigns.Launch){
		"not a valid phone number": func(l *campaigns.Launch) { l.Recipients[3]["phone_number"] = "12" },
		"appears more than once":   func(l *campaigns.Launch) { l.Recipients[3]["phone_number"] = l.Recipients[2]["phone_number"] },
		"recipient 5 (+15550400004) has no value for 2 (field order_id)": func(l *campaigns.Launch) { delete(l.Recipients[4], "order_id") },
		"placeholder {{2}} has no value":                                 func(l *campaigns.Launch) { l.VariableMapping = map[string]string{"1": "name"} },
		"has no placeholder {{3}}":                                       func(l *campaigns.Launch) { l.VariableMapping = map[string]string{"1": "name", "2": "x", "3": "y"} },
		"there are no recipients":                                        func(l *campaigns.Launch) { l.Recipients = nil },
		"not an account of this organization":                            func(l *campaigns.Launch) { l.AccountID = f.Account(other.ID).ID },
	} {
		l := base()
		change(&l)
		_, err := launch(l, false)
		testfactory.WantError(t, err, apperr.Invalid, want)
	}
	if _, err := launch(base(), true); err == nil {
		t.Fatal("the rolled back transaction succeeded")
	}
	if n := f.Count("campaigns", "organization_id = ?", org.ID); n != 0 {
		t.Fatalf("%d campaigns after refusals and a rollback", n)
	}

	c, err := launch(base(), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != models.CampaignSending || c.RunGeneration != 1 || c.TotalRecipients != 10 || byStatus(t, f, c.ID)["pending"] != 10 {
		t.Fatalf("launched %+v, recipients %v", c, byStatus(t, f, c.ID))
	}
	if err := svc.RunLane(ctx, org.ID, c.ID, 1); err != nil {
		t.Fatal(err)
	}
	if err := svc.Recount(ctx, org.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	if last := load(t, f, c.ID); !last.Projected || last.Status != models.CampaignCompleted || last.SentCount != 10 {
		t.Fatalf("after the recount %+v", last)
	}
	named, counted := map[uuid.UUID]bool{}, 0
	evs := changes(t, f, c.ID)
	for _, ch := range evs {
		for _, id := range ch.RecipientIDs {
			named[id] = true
		}
		if ch.Counted {
			counted++
		}
	}
	if len(named) != 10 || counted != 1 || obs.published.Load() != int64(len(evs)) {
		t.Fatalf("campaign.changed events %+v: want the 10 accepted sends named and one recount, each published (%d)", evs, obs.published.Load())
	}
	ids := make([]uuid.UUID, 0, len(named))
	for id := range named {
		ids = append(ids, id)
	}
	if sends, err := svc.Sends(ctx, org.ID, c.ID, ids, nil); err != nil || len(sends) != 10 || sends[0].PlatformMessageID == "" ||
		sends[0].PhoneNumber == "" || sends[0].Status != models.RecipientSent {
		t.Fatalf("sends %+v %v: want 10 with numbers, provider ids and sent", sends, err)
	}
	// A provider failure after acceptance (as the status webhook records it).
	failing := "+15550400003"
	f.DB.Exec(`UPDATE campaign_recipients SET status = 'failed', failed_at = now(), error_code = 131026 WHERE phone_number = ?`, failing)
	if _, _, err := svc.RetryFailed(ctx, other.ID, c.ID); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("retry from another organization: %v", err)
	}
	n, rerun, err := svc.RetryFailed(ctx, org.ID, c.ID)
	if err != nil || n != 1 || rerun.Status != models.CampaignSending || rerun.RunGeneration != 2 {
		t.Fatalf("retry: %d %+v %v", n, rerun, err)
	}
	if _, _, err := svc.RetryFailed(ctx, org.ID, c.ID); !apperr.Is(err, apperr.Conflict) {
		t.Fatalf("retry of a sending campaign: %v", err)
	}
	// The retry's change carries the send it resets, as it was.
	var retried []campaigns.Send
	for _, ch := range changes(t, f, c.ID) {
		retried = append(retried, ch.Retried...)
	}
	if len(retried) != 1 || retried[0].PhoneNumber != failing || retried[0].Status != models.RecipientFailed || retried[0].PlatformMessageID == "" {
		t.Fatalf("the retry's change carries %+v, want the failed send", retried)
	}
	if err := svc.RunLane(ctx, org.ID, c.ID, 2); err != nil {
		t.Fatal(err)
	}
	if err := svc.Recount(ctx, org.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	sends := map[string]int{}
	for _, m := range p.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: p.PhoneNumberID()}) {
		sends["+"+m.To]++
	}
	if len(sends) != 10 || sends[failing] != 2 || sends["+15550400000"] != 1 {
		t.Fatalf("sends %v: want the failed recipient twice, the others once", sends)
	}
	pr, err := svc.Progress(ctx, org.ID, c.ID)
	if err != nil || pr.Campaign.Status != models.CampaignCompleted || pr.Accepted != 10 || pr.Failed != 0 {
		t.Fatalf("after the retry: %+v %v", pr, err)
	}

	// A provider status of a projected campaign's recipient records the
	// change, naming the send by its provider id.
	var pid string
	f.DB.Raw(`SELECT platform_message_id FROM campaign_recipients WHERE campaign_id = ? AND phone_number = '+15550400000'`, c.ID).Scan(&pid)
	var res inbound.StatusResult
	if err := f.DB.Transaction(func(tx *gorm.DB) error {
		var err error
		res, err = svc.ApplyStatuses(ctx, tx, inbound.StatusBatch{OrganizationID: org.ID, AccountID: acc.ID,
			Outcomes: statuses.Reduce([]platform.Status{{ID: pid, Status: "delivered", Timestamp: "1700000000"}}, time.Now())})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	res.AfterCommit(ctx)
	evs = changes(t, f, c.ID)
	if last := evs[len(evs)-1]; pid == "" || len(last.MessageIDs) != 1 || last.MessageIDs[0] != pid {
		t.Fatalf("after a status: last change %+v, want the send %q named", last, pid)
	}
	// An ordinary campaign of the same service records nothing.
	plain := base()
	plain.Projected = false
	for i, r := range plain.Recipients {
		r["phone_number"] = fmt.Sprintf("+1555042%04d", i)
	}
	ordinary, err := launch(plain, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.RunLane(ctx, org.ID, ordinary.ID, 1); err != nil {
		t.Fatal(err)
	}
	if err := svc.Recount(ctx, org.ID, ordinary.ID); err != nil {
		t.Fatal(err)
	}
	if got := load(t, f, ordinary.ID); got.Projected || got.Status != models.CampaignCompleted {
		t.Fatalf("ordinary campaign %+v", got)
	}
	if evs := changes(t, f, ordinary.ID); len(evs) != 0 {
		t.Fatalf("an ordinary campaign recorded %+v", evs)
	}

	// A launch for later is scheduled, not started.
	l := base()
	at := time.Now().Add(time.Hour)
	l.ScheduledAt = &at
	later, err := launch(l, false)
	if err != nil || later.Status != models.CampaignScheduled || later.RunGeneration != 0 {
		t.Fatalf("scheduled launch %+v %v", later, err)
	}
}

// A template with a DOCUMENT header takes its link from the recipients'
// header_media_url (the default mapping) and its file name from their
// header_media_filename, which is optional.
func TestLaunchWithADocumentHeader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	svc, _ := newService(t, f, p)
	org := f.Org()
	acc := f.AccountAt(p, org.ID, func(a *models.PlatformAccount) { a.MessagingTierOverride = "TIER_UNLIMITED" })
	tmpl := f.TemplateAt(p, acc, "Your invoice {{1}}", func(t *models.Template) {
		t.Components.V = append([]map[string]any{{"type": "HEADER", "format": "DOCUMENT"}}, t.Components.V...)
	})
	rows := []campaigns.RecipientInput{
		{"phone_number": "+15550410001", "1": "A-1", "header_media_url": "https://files.test/a.pdf", "header_media_filename": "A-1.pdf"},
		{"phone_number": "+15550410002", "1": "B-2", "header_media_url": "https://files.test/b.pdf"},
	}
	var c *models.Campaign
	if err := f.DB.Transaction(func(tx *gorm.DB) error {
		var err error
		c, err = svc.LaunchTx(ctx, tx, org.ID, campaigns.Launch{Name: "docs", AccountID: acc.ID, TemplateID: tmpl.ID, Recipients: rows})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := svc.RunLane(ctx, org.ID, c.ID, 1); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"15550410001": `"document":{"link":"https://files.test/a.pdf","filename":"A-1.pdf"}`,
		"15550410002": `"document":{"link":"https://files.test/b.pdf"}`,
	}
	for _, m := range p.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: p.PhoneNumberID()}) {
		if w, ok := want[m.To]; ok && strings.Contains(string(m.Body), w) {
			delete(want, m.To)
		}
	}
	if len(want) != 0 {
		t.Fatalf("not sent as expected: %v", want)
	}
	// A recipient without the link is refused at the launch, naming it.
	rows[1] = campaigns.RecipientInput{"phone_number": "+15550410003", "1": "C-3"}
	err := f.DB.Transaction(func(tx *gorm.DB) error {
		_, err := svc.LaunchTx(ctx, tx, org.ID, campaigns.Launch{Name: "docs", AccountID: acc.ID, TemplateID: tmpl.ID, Recipients: rows})
		return err
	})
	testfactory.WantError(t, err, apperr.Invalid, "has no value for header_media_url")
}
