package campaigns_test

import (
	"context"
	"strings"
	"testing"

	"wharf/internal/campaigns"
	"wharf/internal/infra/apperr"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platformsim"
)

// A run sends each pending recipient exactly once, stops with its campaign,
// and the counters and sweeps settle what it leaves.
func TestRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f        *testfactory.Factory
		provider *testfactory.Provider
		org      *testfactory.Org
		template models.Template
	}
	setup := func(t *testing.T) (*campaigns.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		p := f.Provider(nil)
		svc, _ := newService(t, f, p)
		org := f.Org()
		acc := f.AccountAt(p, org.ID, func(a *models.PlatformAccount) { a.MessagingTierOverride = "TIER_UNLIMITED" })
		return svc, &testBundle{f: f, provider: p, org: org, template: f.TemplateAt(p, acc, "Hi {{1}}, order {{2}}")}
	}
	campaign := func(t *testing.T, svc *campaigns.Service, bundle *testBundle, n int) models.Campaign {
		t.Helper()
		c, _ := bundle.f.Campaign(bundle.template, n, func(c *models.Campaign) {
			c.VariableMapping.V = map[string]string{"1": "name", "2": "order_id"}
		})
		started, err := svc.Start(ctx, bundle.org.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		return *started
	}
	sends := func(bundle *testBundle) map[string]int {
		out := map[string]int{}
		for _, m := range bundle.provider.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: bundle.provider.PhoneNumberID()}) {
			out["+"+m.To]++
		}
		return out
	}

	t.Run("LanesSendEachRecipientOnceThenTheRecountCompletes", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		c := campaign(t, svc, bundle, 40)
		bundle.f.DB.Exec(`UPDATE campaign_recipients SET data = '{}' WHERE phone_number = '+15550300007'`) // no order_id
		done := make(chan error, 3)
		for range 3 { // three lanes of the run at once
			go func() { done <- svc.RunLane(ctx, bundle.org.ID, c.ID, c.RunGeneration) }()
		}
		for range 3 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		got := sends(bundle)
		if len(got) != 39 || got["+15550300007"] != 0 {
			t.Fatalf("%d recipients reached: want every one but the one without a value", len(got))
		}
		for to, n := range got {
			if n != 1 {
				t.Errorf("%s got %d messages", to, n)
			}
		}
		var failed models.CampaignRecipient
		bundle.f.DB.Take(&failed, "phone_number = '+15550300007'")
		if failed.Status != models.RecipientFailed || !strings.Contains(failed.ErrorDetail, "2 (field order_id)") || failed.Attempts != 0 {
			t.Errorf("recipient without a value %+v: want failed, naming the field, not an attempt", failed)
		}
		if err := svc.Recount(ctx, bundle.org.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		row := load(t, bundle.f, c.ID)
		if row.Status != models.CampaignCompleted || row.CompletedAt == nil || row.SentCount != 39 || row.FailedCount != 1 || row.PendingCount != 0 {
			t.Errorf("campaign %+v: want completed with 39 sent and 1 failed", row)
		}
	})

	t.Run("ALaneOfAStoppedOrOlderRunSendsNothing", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		c := campaign(t, svc, bundle, 5)
		if _, err := svc.Pause(ctx, bundle.org.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		if err := svc.RunLane(ctx, bundle.org.ID, c.ID, c.RunGeneration); err != nil {
			t.Fatal(err)
		}
		resumed, err := svc.Start(ctx, bundle.org.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.RunLane(ctx, bundle.org.ID, c.ID, c.RunGeneration); err != nil { // the first run's lane, late
			t.Fatal(err)
		}
		if n := len(sends(bundle)); n != 0 {
			t.Fatalf("%d sends by lanes of a paused or replaced run", n)
		}
		if err := svc.RunLane(ctx, bundle.org.ID, c.ID, resumed.RunGeneration); err != nil {
			t.Fatal(err)
		}
		if n := len(sends(bundle)); n != 5 {
			t.Errorf("%d sends by the current run, want 5", n)
		}
	})

	t.Run("AnAccountTheProviderRefusesPausesTheCampaignAndFailsNobody", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		c := campaign(t, svc, bundle, 5)
		if err := bundle.provider.Sim.SetSendError(bundle.provider.PhoneNumberID(), 131031); err != nil {
			t.Fatal(err)
		}
		if err := svc.RunLane(ctx, bundle.org.ID, c.ID, c.RunGeneration); err != nil {
			t.Fatal(err)
		}
		row := load(t, bundle.f, c.ID)
		if row.Status != models.CampaignPaused || !strings.Contains(row.PauseReason, "131031") {
			t.Errorf("campaign %+v: want paused, naming the provider's code", row)
		}
		if got := byStatus(t, bundle.f, c.ID); got[models.RecipientPending] != 5 {
			t.Errorf("recipients %v: want all pending again", got)
		}
		var acc models.PlatformAccount
		bundle.f.DB.Take(&acc, "id = ?", *c.AccountID)
		if acc.Status != models.AccountDisconnected || !strings.Contains(acc.LastError, "131031") {
			t.Errorf("account %+v: want it disconnected with the reason", acc)
		}
	})

	t.Run("TheSweepCallsAbandonedSendsUnknownAndRestartsStalledRuns", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		c := campaign(t, svc, bundle, 4)
		bundle.f.DB.Exec(`UPDATE campaign_recipients SET status = 'sending', send_started_at = now() - interval '2 minutes'
			WHERE phone_number = '+15550300000'`)
		bundle.f.DB.Exec(`UPDATE campaign_recipients SET status = 'sending', send_started_at = now() - interval '10 seconds'
			WHERE phone_number = '+15550300001'`)
		bundle.f.DB.Exec(`UPDATE campaigns SET started_at = now() - interval '5 minutes' WHERE id = ?`, c.ID)
		res, err := svc.Sweep(ctx)
		if err != nil || res.Unknown != 1 || res.Restarted != 0 {
			t.Fatalf("sweep %+v, %v: want the abandoned send unknown, no restart (a claim was recent)", res, err)
		}
		var r models.CampaignRecipient
		bundle.f.DB.Take(&r, "phone_number = '+15550300000'")
		if r.Status != models.RecipientUnknown || !strings.Contains(r.ErrorDetail, "not resent") {
			t.Errorf("abandoned recipient %+v", r)
		}
		bundle.f.DB.Exec(`UPDATE campaign_recipients SET send_started_at = now() - interval '3 minutes' WHERE phone_number = '+15550300001'`)
		bundle.f.DB.Exec(`UPDATE campaign_recipients SET status = 'sent' WHERE phone_number = '+15550300001'`)
		if res, err = svc.Sweep(ctx); err != nil || res.Restarted != 1 {
			t.Fatalf("second sweep %+v, %v: want the stalled run restarted", res, err)
		}
		if got := load(t, bundle.f, c.ID); got.RunGeneration != c.RunGeneration+1 || got.Status != models.CampaignSending {
			t.Errorf("campaign %+v: want a new run", got)
		}
	})

	t.Run("ResendingUnknownRecipientsIsForPausedOrCompletedCampaigns", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		c := campaign(t, svc, bundle, 2)
		bundle.f.DB.Exec(`UPDATE campaign_recipients SET status = 'unknown', claim_id = gen_random_uuid(), send_started_at = now()
			WHERE phone_number = '+15550300000'`)
		bundle.f.DB.Exec(`UPDATE campaign_recipients SET status = 'sent', sent_at = now() WHERE phone_number = '+15550300001'`)
		_, _, err := svc.ResendUnknown(ctx, bundle.org.ID, c.ID)
		testfactory.WantError(t, err, apperr.Conflict, "pause it before resending")
		if err := svc.Recount(ctx, bundle.org.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		if got := load(t, bundle.f, c.ID); got.Status != models.CampaignCompleted || got.UnknownCount != 1 {
			t.Fatalf("campaign %+v: an unknown recipient must not keep it open", got)
		}
		n, got, err := svc.ResendUnknown(ctx, bundle.org.ID, c.ID)
		if err != nil || n != 1 || got.Status != models.CampaignPaused || got.UnknownCount != 0 || got.PendingCount != 1 || got.PauseReason == "" {
			t.Fatalf("resend: %d, %+v, %v; want one requeued and the campaign paused to resume", n, got, err)
		}
		if n, got, err = svc.ResendUnknown(ctx, bundle.org.ID, c.ID); err != nil || n != 0 || got.Status != models.CampaignPaused {
			t.Errorf("second resend: %d, %+v, %v", n, got, err)
		}
		draft, _ := bundle.f.Campaign(bundle.template, 1)
		_, _, err = svc.ResendUnknown(ctx, bundle.org.ID, draft.ID)
		testfactory.WantError(t, err, apperr.Conflict, "cannot resend the unknown recipients of a campaign that is draft")
	})
}
