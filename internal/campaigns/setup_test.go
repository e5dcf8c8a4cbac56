package campaigns_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/accounts"
	"wharf/internal/campaigns"
	"wharf/internal/infra/ratelimit"
	"wharf/internal/orgsettings"
	"wharf/internal/templates"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

func ptr[T any](v T) *T { return &v }

// config is the pipeline's tuning in these tests: four lanes, and a sweep
// that calls a recipient unknown after a minute and a campaign stalled after
// two.
var config = campaigns.Config{Lanes: 4, CounterInterval: time.Second, SendingTimeout: time.Minute, StallAfter: 2 * time.Minute}

// newService builds the campaigns domain and the accounts and templates
// domains it reads, on the factory's database, with the simulator as the
// provider and a Redis database of the test's own (queue and pace).
func newService(t *testing.T, f *testfactory.Factory, p *testfactory.Provider) (*campaigns.Service, *testenv.Queue) {
	t.Helper()
	return newServiceWith(t, f, p, nil, nil)
}

// newServiceWith is newService with an outbox for projected campaigns'
// changes and the recipients' opt-outs.
func newServiceWith(t *testing.T, f *testfactory.Factory, p *testfactory.Provider, outbox campaigns.Outbox, optOuts campaigns.OptOuts) (*campaigns.Service, *testenv.Queue) {
	t.Helper()
	q := testenv.NewQueue(t)
	accts := accounts.NewService(f.DB, f.Box, p.Client, orgsettings.NewService(f.DB, f.Box, nil, nil), q.Enqueuer, testenv.Quiet())
	return campaigns.NewService(campaigns.Deps{DB: f.DB, Accounts: accts, Templates: templates.NewService(f.DB, accts, p.Client, q.Enqueuer, testenv.Quiet()),
		Provider: p.Client, Enqueuer: q.Enqueuer, Limiter: ratelimit.New(testenv.Redis(t, testenv.RedisURL(t))), Config: config,
		Log: testenv.Quiet(), Outbox: outbox, OptOuts: optOuts}), q
}

func load(t *testing.T, f *testfactory.Factory, id uuid.UUID) models.Campaign {
	t.Helper()
	var c models.Campaign
	if err := f.DB.WithContext(context.Background()).Take(&c, "id = ?", id).Error; err != nil {
		t.Fatal(err)
	}
	return c
}

// byStatus counts a campaign's recipients by status.
func byStatus(t *testing.T, f *testfactory.Factory, id uuid.UUID) map[models.RecipientStatus]int {
	t.Helper()
	var rows []struct {
		Status models.RecipientStatus
		N      int
	}
	if err := f.DB.Raw(`SELECT status, count(*) AS n FROM campaign_recipients WHERE campaign_id = ? GROUP BY status`, id).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[models.RecipientStatus]int{}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out
}
