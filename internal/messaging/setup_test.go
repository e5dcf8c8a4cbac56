package messaging_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/contacts"
	"wharf/internal/infra/safehttp"
	"wharf/internal/infra/storage"
	"wharf/internal/messaging"
	"wharf/internal/orgsettings"
	"wharf/internal/templates"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
	"wharf/models"
)

func ptr[T any](v T) *T { return &v }

// newService builds the messaging domain and the domains it sends
// through, on the factory's database, with the simulator as the provider
// and a queue of the test's own.
func newService(t *testing.T, f *testfactory.Factory, p *testfactory.Provider) (*messaging.Service, *testenv.Queue) {
	t.Helper()
	svc, q, _ := newStoringService(t, f, p)
	return svc, q
}

// newStoringService is newService with its file store (a directory of the
// test's own).
func newStoringService(t *testing.T, f *testfactory.Factory, p *testfactory.Provider) (*messaging.Service, *testenv.Queue, storage.Store) {
	t.Helper()
	store, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	q := testenv.NewQueue(t)
	policy := safehttp.Policy{AllowPrivate: true}
	wh := webhooks.NewService(f.DB, f.Box, q.Enqueuer, policy, nil, testenv.Quiet())
	accts := accounts.NewService(f.DB, f.Box, p.Client, orgsettings.NewService(f.DB, f.Box, nil, nil), q.Enqueuer, testenv.Quiet())
	return messaging.NewService(messaging.Deps{DB: f.DB, Accounts: accts, Contacts: contacts.NewService(f.DB, wh, nil, nil),
		Templates: templates.NewService(f.DB, accts, p.Client, q.Enqueuer, testenv.Quiet()), Webhooks: wh, Provider: p.Client,
		Enqueuer: q.Enqueuer, Policy: policy, Store: store, Log: testenv.Quiet()}), q, store
}

// listen subscribes the organization to events with an active webhook.
func listen(t *testing.T, f *testfactory.Factory, orgID uuid.UUID, events ...string) {
	t.Helper()
	w := models.Webhook{OrganizationID: orgID, Name: "hook", URL: "http://127.0.0.1:1/hook", IsActive: true}
	w.Events.V, w.Headers.V = events, map[string]string{}
	if err := f.DB.Create(&w).Error; err != nil {
		t.Fatal(err)
	}
}

// wrote makes the contact's last incoming message d ago.
func wrote(t *testing.T, f *testfactory.Factory, c models.Contact, d time.Duration) {
	t.Helper()
	if err := f.DB.Model(&models.Contact{}).Where("id = ?", c.ID).Update("last_inbound_at", time.Now().Add(-d)).Error; err != nil {
		t.Fatal(err)
	}
}

// outgoing stores a message sent to the contact from its account, with
// provider id pid ("" for a send whose answer was lost) and status.
func outgoing(t *testing.T, f *testfactory.Factory, c models.Contact, pid string, status models.MessageStatus) models.Message {
	t.Helper()
	m := models.Message{ID: uuid.New(), OrganizationID: c.OrganizationID, ContactID: c.ID, AccountID: c.AccountID,
		Direction: models.DirectionOutgoing, Type: "text", Status: status, OccurredAt: time.Now()}
	if pid != "" {
		m.PlatformMessageID = &pid
	}
	m.Content.V = map[string]any{"text": "hi"}
	if err := f.DB.Create(&m).Error; err != nil {
		t.Fatal(err)
	}
	return m
}

func reload(t *testing.T, db *gorm.DB, id uuid.UUID) models.Message {
	t.Helper()
	var m models.Message
	if err := db.WithContext(context.Background()).Take(&m, "id = ?", id).Error; err != nil {
		t.Fatal(err)
	}
	return m
}
