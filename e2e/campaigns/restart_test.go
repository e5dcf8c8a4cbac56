package campaigns_test

import (
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/internal/testenv"
)

// Restarting PostgreSQL the hard way in the middle of a campaign costs
// seconds, not recipients: sends the provider accepted are recorded once the
// database is back, recipients claimed while it went away are sent, the
// lanes carry on by themselves, and nobody is left unknown (the sweep would
// call a recipient stuck in sending unknown after 10 s here).
//
// Not parallel: it restarts PostgreSQL.
func TestDatabaseRestartMidCampaign(t *testing.T) {
	pg := testenv.PrivatePostgres(t)
	const n = 3000
	f := newFixture(t, "TIER_UNLIMITED", map[string]string{"DATABASE_URL": pg.DatabaseURL("wharf"),
		"CAMPAIGN_SENDING_TIMEOUT": "10s", "CAMPAIGN_STALL_AFTER": "30s"}, noCap)
	f.StartWorker()
	f.StartScheduler()
	c := f.campaign(n, nil)
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, f.Admin.Auth()).Expect(t, 200)
	start := time.Now()
	apptest.Eventually(t, 60*time.Second, "a sixth sent", func() bool { return f.requests() >= n/6 })
	before := f.requests()
	pg.RestartImmediately()
	restarted := time.Now()
	t.Logf("restarted PostgreSQL after %d sends in %s", before, restarted.Sub(start).Round(time.Millisecond))
	apptest.Eventually(t, 60*time.Second, "sends again", func() bool { return f.requests() > before })
	t.Logf("sending again %s after the restart", time.Since(restarted).Round(time.Millisecond))

	f.waitStatus(c.ID, "completed", 60*time.Second)
	t.Logf("completed %s after the restart", time.Since(restarted).Round(100*time.Millisecond))
	f.lastCampaign = c.ID
	f.expectEachOnce(n)
	by := f.recipientsBy(c.ID)
	if by["unknown"]+by["failed"]+by["pending"]+by["sending"] != 0 {
		t.Fatalf("recipients by status %v", by)
	}
	if got := f.requests(); got != n {
		t.Fatalf("%d send requests for %d recipients", got, n)
	}
}
