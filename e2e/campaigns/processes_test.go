package campaigns_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platformsim"
)

// A scheduled campaign starts within a second or two of its time, exactly
// once, with two scheduler replicas running.
//
// Not parallel: it measures when the campaign starts (allowed
// apptest.WaitSlack times the two seconds: a busy machine is slower at
// everything; never before its time).
func TestScheduledCampaignStartsOnceWithTwoSchedulers(t *testing.T) {
	f := newFixture(t, "TIER_UNLIMITED", map[string]string{"SCHEDULER_LEADER_TTL": "1s"}, noCap)
	f.StartWorker()
	c := f.campaign(10, nil)
	at := time.Now().Add(3 * time.Second).UTC().Truncate(time.Second)
	f.Do("PUT", "/api/campaigns/"+c.ID, map[string]any{"scheduled_at": at.Format(time.RFC3339)}, f.Admin.Auth()).Expect(t, 200)
	var s campaignOut
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, f.Admin.Auth()).Expect(t, 200).Into(t, &s)
	if s.Status != "scheduled" {
		t.Fatalf("status %s, want scheduled", s.Status)
	}
	if r := f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, f.Admin.Auth()).Expect(t, 409); !strings.Contains(r.Message, "scheduled") {
		t.Fatalf("start of a scheduled campaign: %q", r.Message)
	}
	f.StartScheduler()
	f.StartScheduler()
	f.waitStatus(c.ID, "completed", 20*time.Second)
	var row models.Campaign
	f.DB.Take(&row, "id = ?", c.ID)
	if row.RunGeneration != 1 {
		t.Fatalf("started %d times", row.RunGeneration)
	}
	d := row.StartedAt.Sub(at)
	t.Logf("started %s after scheduled_at", d)
	if d < 0 || d > apptest.WaitSlack*2*time.Second {
		t.Fatalf("started %s after scheduled_at, want within 2 s", d)
	}
	for to, n := range f.sends() {
		if n != 1 {
			t.Fatalf("%s got %d", to, n)
		}
	}
	if len(f.sends()) != 10 {
		t.Fatalf("%d sent", len(f.sends()))
	}
}

// Two worker processes on a TIER_1K account together send at 10 msg/s, not
// 20: the pace is kept in Redis.
//
// Not parallel: it measures a rate. The claim is the limit: 100 messages
// take at least 8 s (10 a second, after at most the two seconds' worth
// the pace lets accrue while the lanes fall behind; 20 a second would take
// 4 to 5). Slower is no failure: a busy machine cannot keep up with the
// tier, and the test then waits longer.
func TestTwoWorkerProcessesShareTheTierRate(t *testing.T) {
	f := newFixture(t, "TIER_1K", nil, noCap)
	f.StartWorkerProcess(nil)
	f.StartWorkerProcess(nil)
	c := f.campaign(400, nil)
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, f.Admin.Auth()).Expect(t, 200)
	apptest.Eventually(t, 30*time.Second, "sending", func() bool { return f.requests() >= 5 })
	time.Sleep(2 * time.Second) // warm up: the bucket's burst is spent
	from := time.Now()
	var sentAt []time.Time // of the messages sent since from
	apptest.Await(t, 15*time.Second, "100 messages sent", func() (bool, string) {
		sentAt = sentAt[:0]
		for _, m := range f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID()}) {
			if !m.SentAt.Before(from) {
				sentAt = append(sentAt, m.SentAt)
			}
		}
		return len(sentAt) >= 101, fmt.Sprintf("%d in %s", len(sentAt), time.Since(from).Round(time.Millisecond))
	})
	f.Do("POST", "/api/campaigns/"+c.ID+"/cancel", nil, f.Admin.Auth()).Expect(t, 200)
	slices.SortFunc(sentAt, time.Time.Compare)
	took := sentAt[100].Sub(sentAt[0]) // 100 intervals between the 101 first
	if took < 8*time.Second {
		t.Fatalf("100 messages in %s, want at least 8 s at 10 msg/s", took.Round(time.Millisecond))
	}
	// Both processes took part.
	servers, err := f.Inspector().Servers()
	if err != nil {
		t.Fatal(err)
	}
	pids := map[int]bool{}
	for _, s := range servers {
		if _, ok := s.Queues["campaigns"]; ok {
			pids[s.PID] = true
		}
	}
	if len(pids) < 2 {
		t.Fatalf("campaign servers of %d processes", len(pids))
	}
	t.Logf("100 messages in %s from %d worker processes", took.Round(time.Millisecond), len(pids))
}

// A worker killed mid-campaign sends no recipient twice and loses none. The
// recipients it had claimed become unknown (the provider may have their
// message); a provider status settles those it did send, so what stays
// unknown is what the provider never got: at most the chunks in flight
// when it died (8 lanes of 16). Which ones those are depends on where the
// kill lands, so the test does not expect none: it expects exactly the
// numbers the provider never saw, then the admin's "resend unknown" and a
// resume send each of them once.
//
// Not parallel: it kills a worker process.
func TestKilledWorkerMidCampaignSendsEachRecipientOnce(t *testing.T) {
	f := newFixture(t, "TIER_10K", map[string]string{"CAMPAIGN_SENDING_TIMEOUT": "3s", "CAMPAIGN_STALL_AFTER": "3s", "CAMPAIGN_LANES": "8"}, noCap)
	first := f.StartWorkerProcess(nil)
	c := f.campaign(300, nil)
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, f.Admin.Auth()).Expect(t, 200)
	apptest.Eventually(t, 30*time.Second, "a third sent", func() bool { return f.requests() >= 100 })
	first.Kill()
	killedAt := f.requests()
	f.StartScheduler() // its sweep notices the stalled campaign
	f.StartWorkerProcess(nil)
	f.waitStatus(c.ID, "completed", 90*time.Second)
	checkOnce := func() (none []string) {
		t.Helper()
		sends := f.sends()
		var twice []string
		for i := 0; i < 300; i++ {
			switch sends[number(i)] {
			case 0:
				none = append(none, number(i))
			case 1:
			default:
				twice = append(twice, number(i))
			}
		}
		if len(twice) > 0 {
			t.Fatalf("sent twice to %v", twice)
		}
		return none
	}
	none := checkOnce()
	if len(none) > 8*16 {
		t.Fatalf("%d recipients never sent, more than the killed worker had in flight", len(none))
	}
	// The unknown recipients the provider did get are settled by its
	// statuses; those left are exactly the ones it never got.
	apptest.AwaitProgress(t, 30*time.Second, "the unknown recipients settled", func() (bool, string) {
		var unknown []string
		f.DB.Raw(`SELECT phone_number FROM campaign_recipients WHERE campaign_id = ? AND status = 'unknown' ORDER BY phone_number`, c.ID).Scan(&unknown)
		return slices.Equal(unknown, none), fmt.Sprintf("unknown %v, never sent %v", unknown, none)
	})
	if len(none) > 0 {
		var out struct{ Requeued int64 }
		f.Do("POST", "/api/campaigns/"+c.ID+"/resend-unknown", nil, f.Admin.Auth()).Expect(t, 200).Into(t, &out)
		f.Do("POST", "/api/campaigns/"+c.ID+"/resume", nil, f.Admin.Auth()).Expect(t, 200)
		f.waitStatus(c.ID, "completed", 60*time.Second)
		if left := checkOnce(); len(left) > 0 {
			t.Fatalf("never sent after resending the unknown ones: %v", left)
		}
	}
	apptest.AwaitProgress(t, 30*time.Second, "counters", func() (bool, string) {
		got := f.get(c.ID)
		return got.SentCount == 300 && got.ReadCount == 300 && got.UnknownCount == 0,
			fmt.Sprintf("counters %+v, recipients %v", got, f.recipientsBy(c.ID))
	})
	t.Logf("killed after %d sends; %d requests in all; %d never sent before the resend", killedAt, f.requests(), len(none))
}
