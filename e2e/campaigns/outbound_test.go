package campaigns_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// apiKey creates an API key of the fixture's admin.
func (f *fixture) apiKey() apptest.Auth {
	f.t.Helper()
	var key struct{ Key string }
	f.Do("POST", "/api/api-keys", map[string]any{"name": "shop"}, f.Admin.Auth()).Expect(f.t, 201).Into(f.t, &key)
	return apptest.APIKey(key.Key)
}

// A paced campaign's first second is no faster than its tier: 25
// recipients on TIER_1K (10 a second) take more than two seconds, not the
// half second a budget that started full gave them.
//
// Not parallel: it measures a rate (a lower bound: slowness passes).
func TestPacedCampaignStartsAtTheTierRate(t *testing.T) {
	f := newFixture(t, "TIER_1K", nil, noCap)
	f.StartWorker()
	c := f.campaign(25, nil)
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, f.Admin.Auth()).Expect(t, 200)
	f.waitStatus(c.ID, "completed", 30*time.Second)
	var at []time.Time
	for _, m := range f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID()}) {
		at = append(at, m.SentAt)
	}
	slices.SortFunc(at, time.Time.Compare)
	if len(at) != 25 {
		t.Fatalf("%d sends", len(at))
	}
	first := 0
	for _, x := range at {
		if x.Sub(at[0]) < time.Second {
			first++
		}
	}
	// Ten tokens a second give 10 sends in any second, and 11 when the first
	// send reached the provider late (its connection was opened under load:
	// the provider's clock then sees the next ten within a second of it). A
	// budget that started full, the fault this guards against, gives 20.
	if first > 11 {
		t.Fatalf("%d sends in the campaign's first second at 10 msg/s", first)
	}
	if took := at[24].Sub(at[0]); took < 1400*time.Millisecond {
		t.Fatalf("25 sends in %s at 10 msg/s", took.Round(time.Millisecond))
	}
}

// A campaign and API-key template sends (50 at once) on the same TIER_1K
// account share its budget: in no three seconds do more requests reach the
// provider than one budget hands out (the rate, 10 a second, times three,
// plus one second's burst: 40), and every API send is accepted. Two budgets,
// one per kind of send, would hand out about 80 in the first three seconds.
// The bound has headroom (52) because requests taken apart can arrive
// bunched when the machine is busy; a three-second window, rather than the
// provider's one-second throttle, keeps that bunching from deciding the
// test (a one-second cap of 25 failed a CI run with three 130429).
//
// Not parallel: it measures a rate.
func TestCampaignAndAPISendsShareTheTier(t *testing.T) {
	f := newFixture(t, "TIER_1K", nil, noCap)
	f.StartWorker()
	key := f.apiKey()
	c := f.campaign(40, nil)
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, f.Admin.Auth()).Expect(t, 200)
	apptest.Eventually(t, 20*time.Second, "the campaign sending", func() bool { return f.requests() >= 3 })
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.Do("POST", "/api/messages/template", map[string]any{"phone_number": fmt.Sprintf("+1555810%04d", i),
				"template_name": "order_update", "template_params": map[string]any{"1": "Jo", "2": "A-1"}}, key).Expect(t, 202)
		}()
	}
	wg.Wait()
	f.waitStatus(c.ID, "completed", 60*time.Second)
	apptest.AwaitProgress(t, 20*time.Second, "the API sends accepted", func() (bool, string) {
		n := len(f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID()}))
		return n == 90, fmt.Sprintf("%d of 90 accepted", n)
	})
	var at []time.Time
	for _, r := range f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: f.PhoneNumberID() + "/messages"}) {
		at = append(at, r.At)
	}
	slices.SortFunc(at, time.Time.Compare)
	most, from := 0, 0
	for to := range at {
		for at[to].Sub(at[from]) >= 3*time.Second {
			from++
		}
		most = max(most, to-from+1)
	}
	if most > 52 {
		t.Fatalf("%d sends reached the provider within three seconds at 10 msg/s", most)
	}
}

// An API-key template send whose provider answer is an account fault (the
// business account restricted, 131031) marks the account disconnected with
// the provider's reason, as a campaign lane does.
func TestAPISendAccountFaultMarksTheAccount(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_1K", nil, noCap)
	f.StartWorker()
	key := f.apiKey()
	// The fault is the send's only: a revoked token would also fail the
	// account's own background calls after connecting (subscribe, template
	// sync), which could mark the account before the API send is accepted.
	if err := f.Sim.SetSendError(f.PhoneNumberID(), 131031); err != nil {
		t.Fatal(err)
	}
	f.Do("POST", "/api/messages/template", map[string]any{"phone_number": "+15558200000", "template_name": "order_update",
		"template_params": map[string]any{"1": "Jo", "2": "A-1"}}, key).Expect(t, 202)
	var a accountOut
	apptest.Await(t, 10*time.Second, "the account disconnected", func() (bool, string) {
		a = f.account()
		return a.Status == "disconnected", fmt.Sprintf("%+v", a)
	})
	if !strings.Contains(a.LastError, "131031") {
		t.Fatalf("account %+v", a)
	}
}

// An agent's reply while a TIER_1K campaign paces its account goes first:
// the campaign leaves it a token, so it waits at most one token interval
// (100 ms) for the pace. The bound asserted is a second, with
// apptest.WaitSlack headroom for a busy machine: the speed itself is
// measured in bench/.
//
// Not parallel: it measures a latency.
func TestAgentReplyIsNotDelayedByACampaign(t *testing.T) {
	f := newFixture(t, "TIER_1K", nil, noCap)
	f.StartWorker()
	var contact struct{ ID string }
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15558300000", "name": "Ann"}, f.Admin.Auth()).Expect(t, 201).Into(t, &contact)
	if err := f.DB.Exec(`UPDATE contacts SET last_inbound_at = now() WHERE id = ?`, contact.ID).Error; err != nil {
		t.Fatal(err)
	}
	c := f.campaign(300, nil)
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, f.Admin.Auth()).Expect(t, 200)
	apptest.Eventually(t, 20*time.Second, "the campaign sending", func() bool { return f.requests() >= 15 })
	var worst time.Duration
	for i := range 5 {
		start := time.Now()
		f.Do("POST", "/api/contacts/"+contact.ID+"/messages", map[string]any{"type": "text", "text": fmt.Sprintf("reply %d", i)},
			f.Admin.Auth()).Expect(t, 201)
		worst = max(worst, time.Since(start))
		time.Sleep(300 * time.Millisecond)
	}
	if got := f.get(c.ID); got.Status != "sending" {
		t.Fatalf("the campaign was not running beside the replies: %s", got.Status)
	}
	t.Logf("slowest reply beside the campaign: %s", worst.Round(time.Millisecond))
	if worst > apptest.WaitSlack*time.Second {
		t.Fatalf("a reply beside the campaign took %s", worst.Round(time.Millisecond))
	}
	f.Do("POST", "/api/campaigns/"+c.ID+"/cancel", nil, f.Admin.Auth()).Expect(t, 200)
}
