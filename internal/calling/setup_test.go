package calling_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/accounts"
	"wharf/internal/calling"
	"wharf/internal/contacts"
	"wharf/internal/identity"
	"wharf/internal/infra/safehttp"
	"wharf/internal/messaging"
	"wharf/internal/orgsettings"
	"wharf/internal/teams"
	"wharf/internal/templates"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
	"wharf/models"
)

// The real domains satisfy what calling asks of them.
var (
	_ calling.Accounts = (*accounts.Service)(nil)
	_ calling.Contacts = (*contacts.Service)(nil)
	_ calling.Settings = (*orgsettings.Service)(nil)
	_ calling.Messages = (*messaging.Service)(nil)
)

type testBundle struct {
	f        *testfactory.Factory
	provider *testfactory.Provider
	settings *orgsettings.Service
	org      *testfactory.Org
	account  models.PlatformAccount
}

// setup builds the calling domain on the real accounts, contacts, settings
// and messaging domains, with the simulator as the provider. store may be
// nil (no object storage).
func setup(t *testing.T, cfg calling.Config, store calling.Store) (*calling.Service, *testBundle) {
	t.Helper()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	q := testenv.NewQueue(t)
	settings := orgsettings.NewService(f.DB, f.Box, nil, nil)
	policy := safehttp.Policy{AllowPrivate: true}
	wh := webhooks.NewService(f.DB, f.Box, q.Enqueuer, policy, nil, testenv.Quiet())
	accts := accounts.NewService(f.DB, f.Box, p.Client, settings, q.Enqueuer, testenv.Quiet())
	ids := identity.NewService(f.DB, nil, nil, testenv.Quiet())
	cs := contacts.NewService(f.DB, wh, nil, ids)
	msgs := messaging.NewService(messaging.Deps{DB: f.DB, Accounts: accts, Contacts: cs,
		Templates: templates.NewService(f.DB, accts, p.Client, q.Enqueuer, testenv.Quiet()), Webhooks: wh, Provider: p.Client,
		Enqueuer: q.Enqueuer, Policy: policy, Log: testenv.Quiet()})
	d := calling.Deps{DB: f.DB, Accounts: accts, Contacts: cs, People: ids, Teams: teams.NewService(f.DB, ids), Settings: settings, Messages: msgs, Provider: p.Client,
		Config: cfg, Log: testenv.Quiet()}
	if store != nil {
		d.Store = store
	}
	org := f.Org()
	return calling.NewService(d), &testBundle{f: f, provider: p, settings: settings, org: org, account: f.AccountAt(p, org.ID)}
}

// call inserts a call log of the organization, created at `at`; opts edit
// it first.
func (b *testBundle) call(t *testing.T, orgID uuid.UUID, at time.Time, opts ...func(*models.CallLog)) models.CallLog {
	t.Helper()
	l := models.CallLog{ID: uuid.New(), OrganizationID: orgID, PlatformAccount: "Main", PlatformCallID: "wacid." + uuid.NewString(),
		CallerPhone: "+15550100000", Direction: "incoming", Status: models.CallCompleted, StartedAt: at, CreatedAt: at, UpdatedAt: at}
	for _, o := range opts {
		o(&l)
	}
	if err := b.f.DB.Create(&l).Error; err != nil {
		t.Fatal(err)
	}
	return l
}

// transfer inserts a transfer of the call, created at `at`.
func (b *testBundle) transfer(t *testing.T, l models.CallLog, status string, at time.Time) models.CallTransfer {
	t.Helper()
	tr := models.CallTransfer{ID: uuid.New(), OrganizationID: l.OrganizationID, CallLogID: l.ID, PlatformCallID: l.PlatformCallID,
		CallerPhone: l.CallerPhone, ContactID: l.ContactID, PlatformAccount: l.PlatformAccount, Status: status, TransferredAt: at,
		CreatedAt: at, UpdatedAt: at}
	if err := b.f.DB.Create(&tr).Error; err != nil {
		t.Fatal(err)
	}
	return tr
}

// memStore is a recordings store in memory that signs URLs the way a
// presigning store does (key and expiry in the URL) and remembers the
// lifetimes it was asked for.
type memStore struct {
	mu      sync.Mutex
	objects map[string][]byte
	ttls    []time.Duration
}

func (s *memStore) Put(_ context.Context, key string, r io.Reader) (int64, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.objects == nil {
		s.objects = map[string][]byte{}
	}
	s.objects[key] = data
	return int64(len(data)), nil
}

func (s *memStore) SignedURL(_ context.Context, key string, ttl time.Duration) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[key]; !ok {
		return "", time.Time{}, fmt.Errorf("no object %q", key)
	}
	s.ttls = append(s.ttls, ttl)
	exp := time.Now().Add(ttl)
	return fmt.Sprintf("https://store.example/%s?expires=%d", key, exp.Unix()), exp, nil
}
