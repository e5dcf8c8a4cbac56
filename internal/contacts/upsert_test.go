package contacts_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/contacts"
	"wharf/internal/infra/apperr"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/jobs"
	"wharf/models"
)

// Contacts created by an incoming message or a send: found or created
// once, and announced (contact.created) only when created and only to
// organizations listening.
func TestUpsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f     *testfactory.Factory
		org   *testfactory.Org
		queue *testenv.Queue
	}
	setup := func(t *testing.T) (*contacts.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc, q := newService(t, f)
		return svc, &testBundle{f: f, org: f.Org(), queue: q}
	}
	listen := func(t *testing.T, bundle *testBundle, orgID uuid.UUID, events ...string) {
		t.Helper()
		w := models.Webhook{OrganizationID: orgID, Name: "hook", URL: "http://127.0.0.1:1/hook", IsActive: true}
		w.Events.V, w.Headers.V = events, map[string]string{}
		if err := bundle.f.DB.Create(&w).Error; err != nil {
			t.Fatal(err)
		}
	}

	t.Run("CreatesOnceAndKeepsTheProfileNameAndFirstAccount", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		first, second := bundle.f.Account(bundle.org.ID), bundle.f.Account(bundle.org.ID)
		run := func(accountID *uuid.UUID, profile string) (*models.Contact, uuid.UUID) {
			t.Helper()
			var c *models.Contact
			var ev uuid.UUID
			err := bundle.f.DB.Transaction(func(tx *gorm.DB) error {
				var err error
				c, ev, err = svc.Upsert(ctx, tx, bundle.org.ID, "+15550103000", accountID, profile, "incoming")
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return c, ev
		}
		listen(t, bundle, bundle.org.ID, "contact.created")
		c1, ev1 := run(&first.ID, "Ada")
		c2, ev2 := run(&second.ID, "")
		c3, ev3 := run(nil, "Ada L.")
		if c1.ID != c2.ID || c2.ID != c3.ID || bundle.f.Count("contacts", "") != 1 {
			t.Fatal("the same number made several contacts")
		}
		if ev1 == uuid.Nil || ev2 != uuid.Nil || ev3 != uuid.Nil || bundle.f.Count("events", "event = 'contact.created'") != 1 {
			t.Errorf("events %v %v %v: want contact.created for the creation only", ev1, ev2, ev3)
		}
		if c2.ProfileName != "Ada" || c3.ProfileName != "Ada L." || c3.AccountID == nil || *c3.AccountID != first.ID {
			t.Errorf("contact %+v: want the latest non-empty profile name and the first account", c3)
		}
	})

	// A known contact that needs no change is read, not written: no new row
	// version (its xmin stays), so no index entry and no trigger; a new
	// profile name or a first account is written.
	t.Run("WritesTheContactOnlyWhenItChanges", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		acc := bundle.f.Account(bundle.org.ID)
		version := func() (xmin string) {
			t.Helper()
			if err := bundle.f.DB.Raw(`SELECT xmin::text FROM contacts WHERE organization_id = ?`, bundle.org.ID).Scan(&xmin).Error; err != nil {
				t.Fatal(err)
			}
			return xmin
		}
		run := func(accountID *uuid.UUID, profile string) *models.Contact {
			t.Helper()
			var c *models.Contact
			if err := bundle.f.DB.Transaction(func(tx *gorm.DB) error {
				var err error
				c, _, err = svc.Upsert(ctx, tx, bundle.org.ID, "+15550103002", accountID, profile, "incoming")
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return c
		}
		run(nil, "Ada")
		v := version()
		for _, c := range []*models.Contact{run(nil, "Ada"), run(nil, "")} {
			if c.ProfileName != "Ada" || version() != v {
				t.Fatalf("an unchanged contact %+v was written (xmin %s, was %s)", c, version(), v)
			}
		}
		if c := run(&acc.ID, ""); c.AccountID == nil || *c.AccountID != acc.ID || version() == v {
			t.Fatalf("the first account was not written: %+v", c)
		}
		v = version()
		if c := run(&acc.ID, "Ada L."); c.ProfileName != "Ada L." || version() == v {
			t.Fatalf("a new profile name was not written: %+v", c)
		}
	})

	t.Run("FindOrCreateAnnouncesOnlyToListeners", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		other := bundle.f.Org()
		listen(t, bundle, bundle.org.ID, "contact.created")
		listen(t, bundle, other.ID, "message.incoming") // listens, but not to this event
		if _, err := svc.FindOrCreate(ctx, other.ID, "+15550103001", nil); err != nil {
			t.Fatal(err)
		}
		if n := bundle.f.Count("events", ""); n != 0 {
			t.Fatalf("%d events for an organization not listening to contact.created", n)
		}
		c, err := svc.FindOrCreate(ctx, bundle.org.ID, "1 555 010 3001", nil)
		if err != nil || c.PhoneNumber != "+15550103001" {
			t.Fatalf("find or create: %+v, %v", c, err)
		}
		if again, err := svc.FindOrCreate(ctx, bundle.org.ID, "+15550103001", nil); err != nil || again.ID != c.ID {
			t.Fatalf("second find: %+v, %v; want the same contact", again, err)
		}
		var ev models.Event
		if err := bundle.f.DB.Take(&ev, "organization_id = ?", bundle.org.ID).Error; err != nil || bundle.f.Count("events", "") != 1 {
			t.Fatalf("want one contact.created event: %v", err)
		}
		if got := bundle.queue.TaskTypes(t); got[jobs.TypeWebhookDispatch] != 1 {
			t.Errorf("queued %v, want one dispatch of the event", got)
		}
		_, err = svc.FindOrCreate(ctx, bundle.org.ID, "not a number", nil)
		testfactory.WantError(t, err, apperr.Invalid, "phone_number: ")
	})
}
