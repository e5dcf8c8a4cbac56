package campaigns_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"wharf/internal/campaigns"
	"wharf/internal/inbound"
	"wharf/internal/infra/statuses"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// Provider statuses settle campaign recipients forward only, also when the
// send's answer was lost, and ask for a recount of the touched campaigns.
func TestRecipientStatuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f          *testfactory.Factory
		queue      *testenv.Queue
		account    models.PlatformAccount
		campaign   models.Campaign
		recipients []models.CampaignRecipient
	}
	setup := func(t *testing.T) (*campaigns.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc, q := newService(t, f, f.Provider(nil))
		acc := f.Account(f.Org().ID)
		c, recs := f.Campaign(f.Template(acc, "Hi {{1}}"), 3, func(c *models.Campaign) { c.Status = models.CampaignSending })
		return svc, &testBundle{f: f, queue: q, account: acc, campaign: c, recipients: recs}
	}
	// sent marks recipient i as accepted by the provider with id pid.
	sent := func(t *testing.T, bundle *testBundle, i int, pid string) {
		t.Helper()
		if err := bundle.f.DB.Exec(`UPDATE campaign_recipients SET status = 'sent', platform_message_id = ?, sent_at = now() WHERE id = ?`,
			pid, bundle.recipients[i].ID).Error; err != nil {
			t.Fatal(err)
		}
	}
	apply := func(t *testing.T, svc *campaigns.Service, bundle *testBundle, sts ...platform.Status) (int, func(context.Context)) {
		t.Helper()
		for i := range sts {
			sts[i].Timestamp = "1700000000"
		}
		var res inbound.StatusResult
		err := bundle.f.DB.Transaction(func(tx *gorm.DB) error {
			var err error
			res, err = svc.ApplyStatuses(ctx, tx, inbound.StatusBatch{OrganizationID: bundle.account.OrganizationID, AccountID: bundle.account.ID,
				Outcomes: statuses.Reduce(sts, time.Now())})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Unmatched), res.AfterCommit
	}
	status := func(t *testing.T, bundle *testBundle, i int) models.CampaignRecipient {
		t.Helper()
		var r models.CampaignRecipient
		bundle.f.DB.Take(&r, "id = ?", bundle.recipients[i].ID)
		return r
	}

	t.Run("ForwardOnlyAndFailedOnlyBeforeDelivery", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		sent(t, bundle, 0, "wamid.0")
		sent(t, bundle, 1, "wamid.1")
		failed := platform.Status{ID: "wamid.1", Status: "failed", Errors: []platform.StatusError{{Code: 131026, Title: "Undeliverable"}}}
		apply(t, svc, bundle, platform.Status{ID: "wamid.0", Status: "read"}, failed)
		apply(t, svc, bundle, platform.Status{ID: "wamid.0", Status: "delivered"}, platform.Status{ID: "wamid.1", Status: "delivered"})
		apply(t, svc, bundle, platform.Status{ID: "wamid.0", Status: "failed"})
		if r := status(t, bundle, 0); r.Status != models.RecipientRead || r.DeliveredAt == nil || r.FailedAt != nil {
			t.Errorf("recipient 0 %+v: want read, delivered at set, never failed", r)
		}
		if r := status(t, bundle, 1); r.Status != models.RecipientFailed || r.ErrorCode == nil || *r.ErrorCode != 131026 {
			t.Errorf("recipient 1 %+v: want failed with the code, a late delivered ignored", r)
		}
	})

	t.Run("ALostAnswerIsSettledThroughTheCallbackData", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		bundle.f.DB.Exec(`UPDATE campaign_recipients SET status = 'unknown', error_title = 'send outcome unknown' WHERE id = ?`, bundle.recipients[2].ID)
		unmatched, after := apply(t, svc, bundle, platform.Status{ID: "wamid.late", Status: "delivered",
			BizOpaqueCallbackData: campaigns.CallbackPrefix + bundle.recipients[2].ID.String()})
		r := status(t, bundle, 2)
		if unmatched != 0 || r.Status != models.RecipientDelivered || r.PlatformMessageID == nil || *r.PlatformMessageID != "wamid.late" || r.ErrorTitle != "" {
			t.Errorf("recipient %+v (%d unmatched): want delivered with the provider's id and no error", r, unmatched)
		}
		if after == nil {
			t.Fatal("no recount requested")
		}
		after(ctx)
		if got := bundle.queue.TaskTypes(t); got[jobs.TypeCampaignRecount] != 1 {
			t.Errorf("queued %v, want a recount of the campaign", got)
		}
	})

	t.Run("OtherOrganizationsRecipientsAndPlainMessageIdsArePassedOn", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		theirs, recs := bundle.f.Campaign(bundle.f.Template(bundle.f.Account(bundle.f.Org().ID), "Hi {{1}}"), 1)
		unmatched, _ := apply(t, svc, bundle,
			platform.Status{ID: "wamid.x", Status: "read", BizOpaqueCallbackData: campaigns.CallbackPrefix + recs[0].ID.String()},
			platform.Status{ID: "wamid.y", Status: "read", BizOpaqueCallbackData: bundle.recipients[0].ID.String()}) // no r: prefix
		if unmatched != 2 {
			t.Errorf("%d unmatched, want both passed on", unmatched)
		}
		if got := byStatus(t, bundle.f, theirs.ID); got[models.RecipientPending] != 1 || byStatus(t, bundle.f, bundle.campaign.ID)[models.RecipientPending] != 3 {
			t.Error("a recipient was settled by a status that is not its")
		}
	})
}
