package campaigns_test

import (
	"fmt"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

type campaignOut struct {
	ID              string  `json:"id"`
	Status          string  `json:"status"`
	TotalRecipients int     `json:"total_recipients"`
	SentCount       int     `json:"sent_count"`
	DeliveredCount  int     `json:"delivered_count"`
	ReadCount       int     `json:"read_count"`
	FailedCount     int     `json:"failed_count"`
	UnknownCount    int     `json:"unknown_count"`
	SkippedCount    int     `json:"skipped_count"`
	CompletedAt     *string `json:"completed_at"`
}

// String describes the campaign without pointers, so that a description
// changes only with the campaign (apptest.AwaitProgress).
func (c campaignOut) String() string {
	done := "not completed"
	if c.CompletedAt != nil {
		done = "completed at " + *c.CompletedAt
	}
	return fmt.Sprintf("{%s %s: %d recipients, sent %d, delivered %d, read %d, failed %d, unknown %d, skipped %d, %s}", c.ID, c.Status,
		c.TotalRecipients, c.SentCount, c.DeliveredCount, c.ReadCount, c.FailedCount, c.UnknownCount, c.SkippedCount, done)
}

type fixture struct {
	*apptest.Fixture
	t          *testing.T
	templateID string
	// lastCampaign names the campaign a failure message describes.
	lastCampaign string
}

// systems bounds the campaign systems of this package running at once.
// Each holds up to about 20 PostgreSQL connections (two pools, and more
// while the simulator's status webhooks pour in), and the test server's
// max_connections (100) is shared with the other packages running at the
// same time: parallel tests wait here for a slot.
var systems = make(chan struct{}, 2)

// newFixture: a connected account with the given tier and an approved
// template "order_update" with two placeholders.
func newFixture(t *testing.T, tier string, overrides map[string]string, sim func(*platformsim.Config)) *fixture {
	systems <- struct{}{}
	t.Cleanup(func() { <-systems }) // after the system's own cleanups
	env := map[string]string{"CAMPAIGN_COUNTER_INTERVAL": "1s", "CAMPAIGN_SWEEP_INTERVAL": "1s"}
	for k, v := range overrides {
		env[k] = v
	}
	f := &fixture{Fixture: apptest.NewFixture(t, env, sim), t: t}
	f.Do("PUT", "/api/accounts/"+f.AccountID, map[string]any{"messaging_tier": tier}, f.Admin.Auth()).Expect(t, 200)
	tmpl := f.SeedTemplate(f.OrgID, f.AccountID, "order_update", "Hi {{1}}, your order {{2}} shipped", false)
	f.templateID = tmpl.ID.String()
	return f
}

// campaign creates a draft campaign with n recipients (+1555 7xx xxxx).
func (f *fixture) campaign(n int, mapping map[string]string) campaignOut {
	f.t.Helper()
	if mapping == nil {
		mapping = map[string]string{"1": "name", "2": "order_id"}
	}
	var c campaignOut
	f.Do("POST", "/api/campaigns", map[string]any{"name": "Spring", "account_id": f.AccountID, "template_id": f.templateID,
		"variable_mapping": mapping}, f.Admin.Auth()).Expect(f.t, 201).Into(f.t, &c)
	recipients := make([]map[string]any, n)
	for i := range recipients {
		recipients[i] = map[string]any{"phone_number": number(i), "name": fmt.Sprintf("Customer %d", i), "order_id": fmt.Sprintf("A-%05d", i)}
	}
	for start := 0; start < n; start += 10000 {
		f.Do("POST", "/api/campaigns/"+c.ID+"/recipients/import", map[string]any{"recipients": recipients[start:min(start+10000, n)]},
			f.Admin.Auth()).Expect(f.t, 200)
	}
	return c
}

func number(i int) string { return fmt.Sprintf("+1555%07d", 7000000+i) }

func (f *fixture) get(id string) campaignOut {
	var c campaignOut
	f.Do("GET", "/api/campaigns/"+id, nil, f.Admin.Auth()).Expect(f.t, 200).Into(f.t, &c)
	return c
}

// waitStatus waits for the campaign to reach status while its recipients
// and counters progress, failing after timeout (with apptest's slack)
// without progress.
func (f *fixture) waitStatus(id, status string, timeout time.Duration) campaignOut {
	f.t.Helper()
	var c campaignOut
	apptest.AwaitProgress(f.t, timeout, "campaign "+status, func() (bool, string) {
		c = f.get(id)
		return c.Status == status, fmt.Sprintf("%+v, recipients by status %v", c, f.recipientsBy(id))
	})
	return c
}

// stopped waits until the provider has had no send request for a second
// after a pause or a cancel, fails when the last one came more than
// apptest.WaitSlack seconds after it (the sends stop within a second on an
// idle machine), and returns the number of requests.
func (f *fixture) stopped(t *testing.T, after string) int {
	t.Helper()
	since := time.Now()
	last, lastAt := f.requests(), since
	apptest.Await(t, 5*time.Second, "the sends to stop after the "+after, func() (bool, string) {
		if n := f.requests(); n != last {
			last, lastAt = n, time.Now()
		}
		return time.Since(lastAt) >= time.Second, fmt.Sprintf("%d requests, the last %s ago", last, time.Since(lastAt).Round(time.Millisecond))
	})
	took := lastAt.Sub(since)
	t.Logf("the last send came %s after the %s", took.Round(time.Millisecond), after)
	if took > apptest.WaitSlack*time.Second {
		t.Fatalf("sends went on for %s after the %s", took.Round(time.Millisecond), after)
	}
	return last
}

// sends counts the provider's accepted template messages per recipient.
func (f *fixture) sends() map[string]int {
	out := map[string]int{}
	for _, m := range f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID()}) {
		if m.Type == "template" {
			out["+"+m.To]++
		}
	}
	return out
}

// requests counts the send requests the provider received (accepted or not).
func (f *fixture) requests() int {
	return f.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: f.PhoneNumberID() + "/messages"})
}

func (f *fixture) recipientsBy(id string) map[string]int64 {
	var rows []struct {
		Status string
		N      int64
	}
	f.DB.Raw(`SELECT status, count(*) AS n FROM campaign_recipients WHERE campaign_id = ? GROUP BY status`, id).Scan(&rows)
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out
}
