package messaging_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/inbound"
	"wharf/internal/infra/statuses"
	"wharf/internal/messaging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
	"wharf/models"
	"wharf/platform"
)

// The provider's statuses move outbound messages forward only, once, and
// only the messages of the account they came for.
func TestStatuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f       *testfactory.Factory
		account models.PlatformAccount
		contact models.Contact
	}
	setup := func(t *testing.T) (*messaging.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc, _ := newService(t, f, f.Provider(nil))
		org := f.Org()
		acc := f.Account(org.ID)
		return svc, &testBundle{f: f, account: acc, contact: f.Contact(org.ID, &acc.ID)}
	}
	// apply applies statuses (id, status[, error code]) as one batch of the
	// bundle's account and returns the provider ids nobody matched.
	apply := func(t *testing.T, svc *messaging.Service, bundle *testBundle, sts ...platform.Status) []string {
		t.Helper()
		for i := range sts {
			if sts[i].Timestamp == "" {
				sts[i].Timestamp = "1700000000"
			}
		}
		var res inbound.StatusResult
		err := bundle.f.DB.Transaction(func(tx *gorm.DB) error {
			var err error
			res, err = svc.ApplyStatuses(ctx, tx, inbound.StatusBatch{OrganizationID: bundle.account.OrganizationID,
				AccountID: bundle.account.ID, Outcomes: statuses.Reduce(sts, time.Now())})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range res.Unmatched {
			out = append(out, o.PlatformID)
		}
		return out
	}
	failed := func(id string) platform.Status {
		s := platform.Status{ID: id, Status: "failed"}
		s.Errors = append(s.Errors, platform.StatusError{Code: 131026, Title: "Message undeliverable"})
		return s
	}

	t.Run("StatusesOnlyMoveForward", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		m := outgoing(t, bundle.f, bundle.contact, "wamid.1", models.StatusSent)
		apply(t, svc, bundle, platform.Status{ID: "wamid.1", Status: "read"})
		apply(t, svc, bundle, platform.Status{ID: "wamid.1", Status: "delivered"}, platform.Status{ID: "wamid.1", Status: "sent"})
		apply(t, svc, bundle, failed("wamid.1"))
		got := reload(t, bundle.f.DB, m.ID)
		if got.Status != models.StatusRead || got.ReadAt == nil || got.DeliveredAt == nil || got.FailedAt != nil || got.ErrorCode != nil {
			t.Errorf("message %+v: want read (a read implies delivered), never failed after delivery", got)
		}
	})

	t.Run("AFailureBeforeDeliveryKeepsTheProvidersError", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		m := outgoing(t, bundle.f, bundle.contact, "wamid.1", models.StatusSent)
		apply(t, svc, bundle, failed("wamid.1"))
		got := reload(t, bundle.f.DB, m.ID)
		if got.Status != models.StatusFailed || got.ErrorCode == nil || *got.ErrorCode != 131026 || got.ErrorTitle != "Message undeliverable" {
			t.Errorf("message %+v: want failed with the provider's error", got)
		}
		apply(t, svc, bundle, platform.Status{ID: "wamid.1", Status: "delivered"})
		if got = reload(t, bundle.f.DB, m.ID); got.Status != models.StatusFailed {
			t.Errorf("a failed message became %s", got.Status)
		}
	})

	t.Run("ABatchAppliedTwiceChangesNothingMore", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		m := outgoing(t, bundle.f, bundle.contact, "wamid.1", models.StatusSent)
		apply(t, svc, bundle, platform.Status{ID: "wamid.1", Status: "delivered", Timestamp: "1700000100"})
		first := reload(t, bundle.f.DB, m.ID)
		apply(t, svc, bundle, platform.Status{ID: "wamid.1", Status: "delivered", Timestamp: "1700000200"})
		second := reload(t, bundle.f.DB, m.ID)
		if second.Status != models.StatusDelivered || first.DeliveredAt == nil || !second.DeliveredAt.Equal(*first.DeliveredAt) {
			t.Errorf("delivered at %v then %v: want the first time kept", first.DeliveredAt, second.DeliveredAt)
		}
	})

	t.Run("ASendWhoseAnswerWasLostIsFoundByItsCallbackData", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		m := outgoing(t, bundle.f, bundle.contact, "", models.StatusPending)
		rest := apply(t, svc, bundle, platform.Status{ID: "wamid.lost", Status: "delivered", BizOpaqueCallbackData: m.ID.String()})
		got := reload(t, bundle.f.DB, m.ID)
		if len(rest) != 0 || got.Status != models.StatusDelivered || got.PlatformMessageID == nil || *got.PlatformMessageID != "wamid.lost" {
			t.Errorf("message %+v, unmatched %v: want it delivered with the provider's id", got, rest)
		}
	})

	// A status that changes a message a framework document projects
	// records message.changed in the batch (one per message changed); an
	// ordinary message's, or a status that changes nothing, records none.
	t.Run("OnlyProjectedMessagesRecordTheirChange", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		org := bundle.account.OrganizationID
		outgoing(t, bundle.f, bundle.contact, "wamid.plain", models.StatusSent)
		projected := outgoing(t, bundle.f, bundle.contact, "wamid.projected", models.StatusSent)
		lost := outgoing(t, bundle.f, bundle.contact, "", models.StatusFailed) // the sweep gave up on its send
		for _, id := range []uuid.UUID{projected.ID, lost.ID} {
			if err := svc.Project(ctx, bundle.f.DB, org, id); err != nil {
				t.Fatal(err)
			}
		}
		changes := func() map[string]int {
			var ids []string
			bundle.f.DB.Raw(`SELECT data ->> 'message_id' FROM events WHERE organization_id = ? AND event = ?`,
				org, webhooks.EventMessageChanged).Scan(&ids)
			out := map[string]int{}
			for _, id := range ids {
				out[id]++
			}
			return out
		}
		apply(t, svc, bundle, platform.Status{ID: "wamid.plain", Status: "delivered"}, platform.Status{ID: "wamid.projected", Status: "delivered"})
		if got := changes(); len(got) != 1 || got[projected.ID.String()] != 1 {
			t.Fatalf("message.changed events %v, want one for the projected message", got)
		}
		apply(t, svc, bundle, platform.Status{ID: "wamid.plain", Status: "sent"}, platform.Status{ID: "wamid.projected", Status: "sent"})
		apply(t, svc, bundle, platform.Status{ID: "wamid.plain", Status: "read"})
		if got := changes(); len(got) != 1 || got[projected.ID.String()] != 1 {
			t.Fatalf("message.changed events %v, want still one", got)
		}
		// A late status gives a failed message its provider id, no status:
		// the document must learn the id too.
		apply(t, svc, bundle, platform.Status{ID: "wamid.late", Status: "delivered", BizOpaqueCallbackData: lost.ID.String()})
		if got := changes(); len(got) != 2 || got[lost.ID.String()] != 1 {
			t.Fatalf("message.changed events %v, want one for the message that got its id", got)
		}
		if m := reload(t, bundle.f.DB, lost.ID); m.Status != models.StatusFailed || m.PlatformMessageID == nil || *m.PlatformMessageID != "wamid.late" {
			t.Fatalf("the late message %+v", m)
		}
	})

	t.Run("OtherAccountsMessagesAndUnknownIdsArePassedOn", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		otherAcc := bundle.f.Account(bundle.account.OrganizationID)
		other := outgoing(t, bundle.f, bundle.f.Contact(bundle.account.OrganizationID, &otherAcc.ID), "wamid.other", models.StatusSent)
		foreign := outgoing(t, bundle.f, bundle.f.Contact(bundle.f.Org().ID, nil), "", models.StatusPending)
		rest := apply(t, svc, bundle, platform.Status{ID: "wamid.other", Status: "read"}, platform.Status{ID: "wamid.campaign", Status: "read"},
			platform.Status{ID: "wamid.forged", Status: "read", BizOpaqueCallbackData: foreign.ID.String()})
		if len(rest) != 3 {
			t.Errorf("unmatched %v: want all three passed on", rest)
		}
		if reload(t, bundle.f.DB, other.ID).Status != models.StatusSent || reload(t, bundle.f.DB, foreign.ID).Status != models.StatusPending {
			t.Error("a status changed a message of another account or organization")
		}
	})
}
