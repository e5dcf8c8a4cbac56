package campaigns_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/campaigns"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/jobs"
	"wharf/models"
)

// The campaign state machine: draft -> (scheduled ->) sending <-> paused ->
// completed, and cancelled from any state but completed; every transition
// is a compare-and-set, and a run needs a ready campaign.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f        *testfactory.Factory
		queue    *testenv.Queue
		org      *testfactory.Org
		account  models.PlatformAccount
		template models.Template
	}
	setup := func(t *testing.T) (*campaigns.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc, q := newService(t, f, f.Provider(nil))
		org := f.Org()
		acc := f.Account(org.ID)
		return svc, &testBundle{f: f, queue: q, org: org, account: acc, template: f.Template(acc, "Hi {{1}}")}
	}
	lanes := func(t *testing.T, bundle *testBundle) int { return bundle.queue.TaskTypes(t)[jobs.TypeCampaignLane] }

	t.Run("CreateNeedsTheOrganizationsAccountAndAnApprovedTemplateOfIt", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		other := bundle.f.Org()
		theirAccount := bundle.f.Account(other.ID)
		pending := bundle.f.Template(bundle.account, "Hi", func(t *models.Template) { t.Status = models.TemplatePending })
		otherAccount := bundle.f.Account(bundle.org.ID)
		for _, c := range []struct {
			in  campaigns.Input
			msg string
		}{
			{campaigns.Input{Name: ptr("x"), AccountID: &bundle.account.ID}, "name, account_id and template_id are required"},
			{campaigns.Input{Name: ptr(strings.Repeat("n", 201)), AccountID: &bundle.account.ID, TemplateID: &bundle.template.ID}, "name is required (at most 200"},
			{campaigns.Input{Name: ptr("x"), AccountID: &theirAccount.ID, TemplateID: &bundle.template.ID}, "account_id does not name an account of this organization"},
			{campaigns.Input{Name: ptr("x"), AccountID: &bundle.account.ID, TemplateID: &pending.ID}, "only APPROVED templates can be sent"},
			{campaigns.Input{Name: ptr("x"), AccountID: &otherAccount.ID, TemplateID: &bundle.template.ID}, "belongs to another account"},
			{campaigns.Input{Name: ptr("x"), AccountID: &bundle.account.ID, TemplateID: ptr(uuid.New())}, "template_id does not name a template of this organization"},
			{campaigns.Input{Name: ptr("x"), AccountID: &bundle.account.ID, TemplateID: &bundle.template.ID,
				VariableMapping: &map[string]string{"1": " "}}, "variable_mapping keys and values must be non-empty"},
		} {
			_, err := svc.Create(ctx, bundle.org.ID, uuid.Nil, c.in)
			testfactory.WantError(t, err, apperr.Invalid, c.msg)
		}
		if n := bundle.f.Count("campaigns", ""); n != 0 {
			t.Errorf("%d campaigns stored by refused creates", n)
		}
		admin := bundle.f.User(bundle.org, "Admin")
		c, err := svc.Create(ctx, bundle.org.ID, admin.ID, campaigns.Input{Name: ptr(" Spring "), AccountID: &bundle.account.ID,
			TemplateID: &bundle.template.ID})
		if err != nil || c.Status != models.CampaignDraft || c.Name != "Spring" || c.TemplateName != bundle.template.Name || *c.CreatedBy != admin.ID {
			t.Fatalf("created %+v, %v", c, err)
		}
	})

	t.Run("StartNeedsAReadyCampaign", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		two := bundle.f.Template(bundle.account, "Hi {{1}}, order {{2}}")
		start := func(c models.Campaign) error {
			_, err := svc.Start(ctx, bundle.org.ID, c.ID)
			return err
		}
		empty, _ := bundle.f.Campaign(bundle.template, 0)
		testfactory.WantError(t, start(empty), apperr.Invalid, "the campaign has no recipients: import them first")
		unfilled, _ := bundle.f.Campaign(two, 2)
		testfactory.WantError(t, start(unfilled), apperr.Invalid, "variable_mapping leaves template placeholders unfilled: 2")
		unknown, _ := bundle.f.Campaign(two, 2, func(c *models.Campaign) {
			c.VariableMapping.V = map[string]string{"1": "name", "2": "order_id", "9": "x"}
		})
		testfactory.WantError(t, start(unknown), apperr.Invalid, `variable_mapping names "9", which is not a placeholder`)
		missing, _ := bundle.f.Campaign(two, 2, func(c *models.Campaign) { c.VariableMapping.V = map[string]string{"1": "name", "2": "coupon"} })
		testfactory.WantError(t, start(missing), apperr.Invalid, `variable_mapping.2 names field "coupon", which no recipient has`)
		ready, _ := bundle.f.Campaign(two, 2, func(c *models.Campaign) { c.VariableMapping.V = map[string]string{"1": "name", "2": "order_id"} })
		bundle.f.DB.Model(&models.PlatformAccount{}).Where("id = ?", bundle.account.ID).Update("status", models.AccountDisconnected)
		testfactory.WantError(t, start(ready), apperr.Invalid, "is disconnected, not active")
		// The provider's refusal that disconnected it is the reason given.
		bundle.f.DB.Model(&models.PlatformAccount{}).Where("id = ?", bundle.account.ID).Update("last_error", "provider error 131042: payment issue")
		testfactory.WantError(t, start(ready), apperr.Invalid, "is disconnected, not active: provider error 131042: payment issue")
		bundle.f.DB.Model(&models.PlatformAccount{}).Where("id = ?", bundle.account.ID).Updates(map[string]any{"status": models.AccountActive, "last_error": ""})
		bundle.f.DB.Model(&models.Template{}).Where("id = ?", two.ID).Update("status", models.TemplateRejected)
		testfactory.WantError(t, start(ready), apperr.Invalid, "is REJECTED: only APPROVED templates can be sent")
		for _, c := range []models.Campaign{empty, unfilled, unknown, missing, ready} {
			if got := load(t, bundle.f, c.ID); got.Status != models.CampaignDraft || got.RunGeneration != 0 {
				t.Errorf("campaign %s left draft: %s", c.Name, got.Status)
			}
		}
		if lanes(t, bundle) != 0 {
			t.Error("lanes were queued for a campaign that is not ready")
		}
	})

	t.Run("TransitionsFollowTheStateMachine", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		c, _ := bundle.f.Campaign(bundle.template, 3)
		started, err := svc.Start(ctx, bundle.org.ID, c.ID)
		if err != nil || started.Status != models.CampaignSending || started.RunGeneration != 1 || started.StartedAt == nil {
			t.Fatalf("start: %+v, %v", started, err)
		}
		// A paced tier (TIER_1K) runs two lanes.
		if n := lanes(t, bundle); n != 2 {
			t.Errorf("%d lanes queued, want 2", n)
		}
		_, err = svc.Start(ctx, bundle.org.ID, c.ID)
		testfactory.WantError(t, err, apperr.Conflict, "cannot start a campaign that is sending")
		_, err = svc.Update(ctx, bundle.org.ID, c.ID, campaigns.Input{Name: ptr("x")})
		testfactory.WantError(t, err, apperr.Conflict, "only draft campaigns can be updated; this one is sending")
		_, err = svc.Import(ctx, bundle.org.ID, c.ID, []campaigns.RecipientInput{{"phone_number": "+15550106000"}})
		testfactory.WantError(t, err, apperr.Conflict, "recipients can only be imported into a draft campaign")
		testfactory.WantError(t, svc.Delete(ctx, bundle.org.ID, c.ID), apperr.Conflict, "the campaign is sending: pause or cancel it")

		paused, err := svc.Pause(ctx, bundle.org.ID, c.ID)
		if err != nil || paused.Status != models.CampaignPaused || paused.PausedAt == nil {
			t.Fatalf("pause: %+v, %v", paused, err)
		}
		_, err = svc.Pause(ctx, bundle.org.ID, c.ID)
		testfactory.WantError(t, err, apperr.Conflict, "cannot pause a campaign that is paused")
		resumed, err := svc.Start(ctx, bundle.org.ID, c.ID)
		if err != nil || resumed.Status != models.CampaignSending || resumed.RunGeneration != 2 || resumed.PausedAt != nil ||
			!resumed.StartedAt.Equal(*started.StartedAt) {
			t.Fatalf("resume: %+v, %v; want a new run, the first start kept", resumed, err)
		}
		if n := lanes(t, bundle); n != 4 {
			t.Errorf("%d lanes queued after the resume, want two per run", n)
		}
		cancelled, err := svc.Cancel(ctx, bundle.org.ID, c.ID)
		if err != nil || cancelled.Status != models.CampaignCancelled || cancelled.CancelledAt == nil {
			t.Fatalf("cancel: %+v, %v", cancelled, err)
		}
		for action, run := range map[string]func() error{
			"start":  func() error { _, err := svc.Start(ctx, bundle.org.ID, c.ID); return err },
			"pause":  func() error { _, err := svc.Pause(ctx, bundle.org.ID, c.ID); return err },
			"cancel": func() error { _, err := svc.Cancel(ctx, bundle.org.ID, c.ID); return err },
		} {
			testfactory.WantError(t, run(), apperr.Conflict, "cannot "+action+" a campaign that is cancelled")
		}
		if err := svc.Delete(ctx, bundle.org.ID, c.ID); err != nil {
			t.Fatalf("delete a cancelled campaign: %v", err)
		}
		if bundle.f.Count("campaign_recipients", "") != 0 {
			t.Error("the recipients outlived their campaign")
		}
	})

	t.Run("TwoConcurrentStartsHaveOneWinner", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		c, _ := bundle.f.Campaign(bundle.template, 3)
		errs := make([]error, 4)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() { defer wg.Done(); _, errs[i] = svc.Start(ctx, bundle.org.ID, c.ID) }()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !apperr.Is(err, apperr.Conflict):
				t.Errorf("a losing start answered %v, want a conflict", err)
			}
		}
		if got := load(t, bundle.f, c.ID); won != 1 || got.RunGeneration != 1 {
			t.Errorf("%d starts won, generation %d; want one run", won, got.RunGeneration)
		}
	})

	t.Run("AScheduledCampaignStartsWhenDueOrPausesWhenNotReady", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		later := time.Now().Add(time.Hour)
		c, _ := bundle.f.Campaign(bundle.template, 2, func(c *models.Campaign) { c.ScheduledAt = &later })
		got, err := svc.Start(ctx, bundle.org.ID, c.ID)
		if err != nil || got.Status != models.CampaignScheduled || lanes(t, bundle) != 0 {
			t.Fatalf("start of a future campaign: %+v, %v; want it scheduled, no lanes", got, err)
		}
		_, err = svc.Start(ctx, bundle.org.ID, c.ID)
		testfactory.WantError(t, err, apperr.Conflict, "the campaign is scheduled for")
		if n, err := svc.StartDue(ctx); err != nil || n != 0 {
			t.Fatalf("start due before its time: %d, %v", n, err)
		}
		broken, _ := bundle.f.Campaign(bundle.template, 0, func(c *models.Campaign) { c.Status = models.CampaignScheduled })
		bundle.f.DB.Exec(`UPDATE campaigns SET scheduled_at = now() - interval '1 second' WHERE id IN (?, ?)`, c.ID, broken.ID)
		if n, err := svc.StartDue(ctx); err != nil || n != 1 {
			t.Fatalf("start due: %d, %v; want one started", n, err)
		}
		if got := load(t, bundle.f, c.ID); got.Status != models.CampaignSending || got.RunGeneration != 1 || lanes(t, bundle) != 2 {
			t.Errorf("due campaign %+v: want it sending with its lanes", got)
		}
		if got := load(t, bundle.f, broken.ID); got.Status != models.CampaignPaused || !strings.Contains(got.PauseReason, "no recipients") {
			t.Errorf("campaign that is not ready %+v: want it paused with the reason", got)
		}
		if n, _ := svc.StartDue(ctx); n != 0 {
			t.Errorf("a second pass started %d again", n)
		}
	})

	t.Run("AnotherOrganizationsCampaignIsNotFound", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		other := bundle.f.Org()
		theirs, _ := bundle.f.Campaign(bundle.f.Template(bundle.f.Account(other.ID), "Hi {{1}}"), 2)
		org := bundle.org.ID
		for name, err := range map[string]error{
			"get":      second(svc.Get(ctx, org, theirs.ID)),
			"update":   second(svc.Update(ctx, org, theirs.ID, campaigns.Input{Name: ptr("x")})),
			"start":    second(svc.Start(ctx, org, theirs.ID)),
			"pause":    second(svc.Pause(ctx, org, theirs.ID)),
			"cancel":   second(svc.Cancel(ctx, org, theirs.ID)),
			"import":   second(svc.Import(ctx, org, theirs.ID, []campaigns.RecipientInput{{"phone_number": "+15550106000"}})),
			"progress": second(svc.Progress(ctx, org, theirs.ID)),
			"delete":   svc.Delete(ctx, org, theirs.ID),
		} {
			if !apperr.Is(err, apperr.NotFound) || err.Error() != "campaign not found" {
				t.Errorf("%s: %v, want campaign not found", name, err)
			}
		}
		if _, _, err := svc.Recipients(ctx, org, theirs.ID, "", paging.Params{Page: 1, Limit: 10}); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("recipients: %v", err)
		}
		if _, _, err := svc.ResendUnknown(ctx, org, theirs.ID); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("resend unknown: %v", err)
		}
		if got := load(t, bundle.f, theirs.ID); got.Status != models.CampaignDraft || got.Name != theirs.Name || bundle.f.Count("campaign_recipients", "") != 2 {
			t.Error("another organization's campaign changed")
		}
	})
}

// second drops a result and keeps the error.
func second[T any](_ T, err error) error { return err }
