package campaigns_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
)

type seriesOut struct {
	campaignOut
	Recurrence *struct {
		Cron         string  `json:"cron"`
		EndsAt       *string `json:"ends_at"`
		MaxRuns      *int    `json:"max_runs"`
		GraceMinutes int     `json:"grace_minutes"`
	} `json:"recurrence"`
	NextRunAt          *time.Time `json:"next_run_at"`
	Runs               int        `json:"runs"`
	SkippedOccurrences int        `json:"skipped_occurrences"`
	SeriesID           *string    `json:"series_id"`
	OccurrenceAt       *time.Time `json:"occurrence_at"`
}

func (f *fixture) series(id string) seriesOut {
	var c seriesOut
	f.Do("GET", "/api/campaigns/"+id, nil, f.Admin.Auth()).Expect(f.t, 200).Into(f.t, &c)
	return c
}

func (f *fixture) runsOf(id string) []seriesOut {
	var page struct {
		Items []seriesOut `json:"items"`
	}
	f.Do("GET", "/api/campaigns?series_id="+id, nil, f.Admin.Auth()).Expect(f.t, 200).Into(f.t, &page)
	return page.Items
}

// newSeries creates and starts a recurring campaign to the vip contacts
// (Ana, Bo, Di and Flo) with recurrence rec.
func (f *fixture) newSeries(t *testing.T, rec map[string]any) seriesOut {
	t.Helper()
	var c seriesOut
	f.Do("POST", "/api/campaigns", map[string]any{"name": "Weekly", "account_id": f.AccountID, "template_id": f.templateID,
		"variable_mapping": map[string]string{"1": "name"}, "recurrence": rec,
		"audience": map[string]any{"tags_any": []string{"vip"}, "values": map[string]string{"2": "WEEKLY"}}}, f.Admin.Auth()).
		Expect(t, 201).Into(t, &c)
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, f.Admin.Auth()).Expect(t, 200).Into(t, &c)
	if c.Status != "recurring" || c.NextRunAt == nil || !c.NextRunAt.After(time.Now()) {
		t.Fatalf("the started series: %s, next run %v", c.campaignOut, c.NextRunAt)
	}
	return c
}

// dailyAt is the daily cron expression of t's minute in loc.
func dailyAt(t time.Time, loc *time.Location) string {
	t = t.In(loc)
	return fmt.Sprintf("%d %d * * *", t.Minute(), t.Hour())
}

// makeDue moves a series' next occurrence to at, as if the scheduler had
// been down since then.
func (f *fixture) makeDue(id string, at time.Time) {
	f.t.Helper()
	if err := f.DB.Exec(`UPDATE campaigns SET next_run_at = ? WHERE id = ?`, at, id).Error; err != nil {
		f.t.Fatal(err)
	}
}

// Every refusal of a recurrence, and the preview of the next runs in the
// organization's timezone.
func TestRecurrenceRefusalsAndPreview(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_UNLIMITED", nil, noCap)
	audienceContacts(t, f)
	a := f.Admin.Auth()
	f.Do("PUT", "/api/org/settings", map[string]string{"timezone": "Asia/Tokyo"}, a).Expect(t, 200)
	ends := time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339)
	audience := map[string]any{"tags_any": []string{"vip"}, "values": map[string]string{"2": "X"}}
	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"recurrence": map[string]any{"cron": "0 9 * * 1", "max_runs": 3}}, "only a campaign whose recipients come from contacts"},
		{map[string]any{"audience": audience, "recurrence": map[string]any{"cron": "0 9 * *", "max_runs": 3}}, `recurrence.cron "0 9 * *" is not a 5-field cron expression`},
		{map[string]any{"audience": audience, "recurrence": map[string]any{"cron": "0 25 * * *", "max_runs": 3}}, `recurrence.cron "0 25 * * *" is not a valid cron expression`},
		{map[string]any{"audience": audience, "recurrence": map[string]any{"cron": "@daily", "max_runs": 3}}, `recurrence.cron "@daily" is not a 5-field`},
		{map[string]any{"audience": audience, "recurrence": map[string]any{"cron": "*/30 * * * *", "max_runs": 3}}, "occurrences must be at least 1h0m0s apart"},
		{map[string]any{"audience": audience, "recurrence": map[string]any{"cron": "0,30 9 * * *", "max_runs": 3}}, "runs every 30m0s at times"},
		{map[string]any{"audience": audience, "recurrence": map[string]any{"cron": "0 9 * * *"}}, "recurrence needs an end: ends_at, max_runs or both"},
		{map[string]any{"audience": audience, "recurrence": map[string]any{"cron": "0 9 * * *", "max_runs": 1001}}, "recurrence.max_runs must be between 1 and 1000"},
		{map[string]any{"audience": audience, "recurrence": map[string]any{"cron": "0 9 * * *", "max_runs": 0}}, "recurrence.max_runs must be between 1 and 1000"},
		{map[string]any{"audience": audience, "recurrence": map[string]any{"cron": "0 9 * * *", "ends_at": "2020-01-01T00:00:00Z"}}, "recurrence.ends_at is in the past"},
		{map[string]any{"audience": audience, "recurrence": map[string]any{"cron": "0 9 * * *", "max_runs": 3, "grace_minutes": 1441}}, "recurrence.grace_minutes must be between 1 and 1440"},
		{map[string]any{"audience": audience, "recurrence": map[string]any{"cron": "0 9 * * *", "max_runs": 3, "grace_minutes": -1}}, "recurrence.grace_minutes must be between 1 and 1440"},
		{map[string]any{"audience": audience, "recurrence": map[string]any{"cron": "0 9 * * *", "max_run": 3}}, `unknown field "max_run"`},
		{map[string]any{"audience": audience, "scheduled_at": ends, "recurrence": map[string]any{"cron": "0 9 * * *", "max_runs": 3}}, "clear scheduled_at"},
		{map[string]any{"audience": audience, "recurrence": map[string]any{"cron": "0 9 30 2 *", "max_runs": 3}}, "never occurs"},
	} {
		body := map[string]any{"name": "R", "account_id": f.AccountID, "template_id": f.templateID, "variable_mapping": map[string]string{"1": "name", "2": "order_id"}}
		for k, v := range c.body {
			body[k] = v
		}
		if _, ok := c.body["audience"]; ok {
			delete(body["variable_mapping"].(map[string]string), "2")
		}
		r := f.Do("POST", "/api/campaigns", body, a).Expect(t, 400)
		if !strings.Contains(r.Message, c.want) {
			t.Errorf("%v: %q, want %q", c.body, r.Message, c.want)
		}
	}
	// An uploaded-recipient draft cannot take a recurrence later either.
	up := f.campaign(2, nil)
	if r := f.Do("PUT", "/api/campaigns/"+up.ID, map[string]any{"recurrence": map[string]any{"cron": "0 9 * * 1", "max_runs": 3}}, a).Expect(t, 400); !strings.Contains(r.Message, "only a campaign whose recipients come from contacts") {
		t.Errorf("an uploaded campaign made recurring: %q", r.Message)
	}

	// The preview: the next three 09:00 in Tokyo (00:00 UTC), and fewer
	// when max_runs ends first; refusals as for a campaign.
	var p struct {
		NextRuns []time.Time `json:"next_runs"`
		Timezone string      `json:"timezone"`
	}
	f.Do("POST", "/api/campaigns/recurrence/preview", map[string]any{"cron": "0 9 * * *", "ends_at": ends}, a).Expect(t, 200).Into(t, &p)
	if p.Timezone != "Asia/Tokyo" || len(p.NextRuns) != 3 {
		t.Fatalf("preview: %+v", p)
	}
	for i, r := range p.NextRuns {
		if r.UTC().Hour() != 0 || r.Minute() != 0 || !r.After(time.Now()) || (i > 0 && r.Sub(p.NextRuns[i-1]) != 24*time.Hour) {
			t.Fatalf("preview run %d: %s (of %v)", i, r, p.NextRuns)
		}
	}
	f.Do("POST", "/api/campaigns/recurrence/preview", map[string]any{"cron": "0 9 * * *", "max_runs": 2}, a).Expect(t, 200).Into(t, &p)
	if len(p.NextRuns) != 2 {
		t.Fatalf("preview with max_runs 2: %v", p.NextRuns)
	}
	if r := f.Do("POST", "/api/campaigns/recurrence/preview", map[string]any{"cron": "*/5 * * * *", "max_runs": 2}, a).Expect(t, 400); !strings.Contains(r.Message, "at least 1h0m0s apart") {
		t.Fatalf("preview of a too frequent cron: %q", r.Message)
	}
	// A draft series answers its recurrence, with the default grace.
	var c seriesOut
	f.Do("POST", "/api/campaigns", map[string]any{"name": "R", "account_id": f.AccountID, "template_id": f.templateID,
		"variable_mapping": map[string]string{"1": "name"}, "audience": audience,
		"recurrence": map[string]any{"cron": " 0  9 * * 1 ", "max_runs": 3}}, a).Expect(t, 201).Into(t, &c)
	if c.Recurrence == nil || c.Recurrence.Cron != "0 9 * * 1" || c.Recurrence.GraceMinutes != 60 || *c.Recurrence.MaxRuns != 3 || c.NextRunAt != nil {
		t.Fatalf("the draft series: %+v", c)
	}
	// Null makes it a single send again.
	f.Do("PUT", "/api/campaigns/"+c.ID, json.RawMessage(`{"recurrence": null}`), a).Expect(t, 200).Into(t, &c)
	if c.Recurrence != nil {
		t.Fatalf("recurrence after null: %+v", c.Recurrence)
	}
}

// A due occurrence fires once with two schedulers running, as a run of its
// own (its audience resolved then, its own counters), listed by series_id;
// firing the same occurrence again (a retried job) creates nothing.
//
// Not parallel: it runs schedulers.
func TestRecurringOccurrenceFiresOnceWithTwoSchedulers(t *testing.T) {
	f := newFixture(t, "TIER_UNLIMITED", map[string]string{"SCHEDULER_LEADER_TTL": "1s"}, noCap)
	audienceContacts(t, f)
	a := f.Admin.Auth()
	f.Do("PUT", "/api/org/settings", map[string]string{"timezone": "America/New_York"}, a).Expect(t, 200)
	ny, _ := time.LoadLocation("America/New_York")
	occ := time.Now().Add(-time.Minute).Truncate(time.Minute)
	s := f.newSeries(t, map[string]any{"cron": dailyAt(occ, ny), "max_runs": 5, "grace_minutes": 5})
	if want := occ.Add(24 * time.Hour); !s.NextRunAt.Equal(want) && !s.NextRunAt.Equal(want.Add(time.Hour)) && !s.NextRunAt.Equal(want.Add(-time.Hour)) {
		t.Fatalf("next run %s, want tomorrow's %s in New York", s.NextRunAt, want)
	}
	tomorrow := *s.NextRunAt
	f.makeDue(s.ID, occ)
	f.StartWorker()
	f.StartScheduler()
	f.StartScheduler()
	var runs []seriesOut
	apptest.Await(t, 20*time.Second, "the occurrence's run", func() (bool, string) {
		runs = f.runsOf(s.ID)
		return len(runs) == 1, fmt.Sprintf("%d runs", len(runs))
	})
	run := f.waitStatus(runs[0].ID, "completed", 20*time.Second)
	// Ana, Bo, Di and Flo (opted out of marketing only: the template is
	// not marketing).
	if run.TotalRecipients != 4 || run.SentCount != 4 {
		t.Fatalf("the run: %s", run)
	}
	if !runs[0].OccurrenceAt.Equal(occ) || *runs[0].SeriesID != s.ID || runs[0].Recurrence != nil {
		t.Fatalf("the run's series fields: %+v", runs[0])
	}
	got := f.series(s.ID)
	if got.Status != "recurring" || got.Runs != 1 || got.SkippedOccurrences != 0 || !got.NextRunAt.Equal(tomorrow) {
		t.Fatalf("the series after its run: %s runs %d skipped %d next %v", got.Status, got.Runs, got.SkippedOccurrences, got.NextRunAt)
	}
	// The same occurrence due again (a retried or duplicated fire): the
	// unique occurrence key refuses a second run.
	f.makeDue(s.ID, occ)
	apptest.Await(t, 20*time.Second, "the repeated occurrence handled", func() (bool, string) {
		got = f.series(s.ID)
		return got.NextRunAt != nil && got.NextRunAt.Equal(tomorrow), fmt.Sprintf("next %v", got.NextRunAt)
	})
	if n := len(f.runsOf(s.ID)); n != 1 || got.Runs != 1 {
		t.Fatalf("%d runs (series says %d) after firing the same occurrence twice", n, got.Runs)
	}
	for to, n := range f.sends() {
		if n != 1 {
			t.Fatalf("%s got %d messages", to, n)
		}
	}
}

// Missed occurrences: one past its grace is skipped and recorded; of
// several missed, only the latest within grace runs (and, the last of
// max_runs, completes its series). Pausing stops the
// occurrences; resuming does not replay those missed while paused.
//
// Not parallel: it runs a scheduler.
func TestRecurringMissedOccurrencesAndPause(t *testing.T) {
	f := newFixture(t, "TIER_UNLIMITED", nil, noCap)
	audienceContacts(t, f)
	now := time.Now()
	late := now.Add(-2 * time.Hour).Truncate(time.Minute)
	past := f.newSeries(t, map[string]any{"cron": dailyAt(late, time.UTC), "max_runs": 10, "grace_minutes": 60})
	recent := now.Add(-10 * time.Minute).Truncate(time.Minute)
	several := f.newSeries(t, map[string]any{"cron": dailyAt(recent, time.UTC), "max_runs": 1, "grace_minutes": 30})
	paused := f.newSeries(t, map[string]any{"cron": dailyAt(recent, time.UTC), "max_runs": 10})
	var p seriesOut
	f.Do("POST", "/api/campaigns/"+paused.ID+"/pause", nil, f.Admin.Auth()).Expect(t, 200).Into(t, &p)
	if p.Status != "paused" || p.NextRunAt != nil {
		t.Fatalf("the paused series: %s next %v", p.Status, p.NextRunAt)
	}
	f.makeDue(past.ID, late)
	f.makeDue(several.ID, recent.Add(-48*time.Hour)) // three missed: 2 days ago, yesterday, today
	f.makeDue(paused.ID, recent)                     // due, but paused
	f.StartWorker()
	f.StartScheduler()
	var s seriesOut
	apptest.Await(t, 20*time.Second, "the late occurrence skipped", func() (bool, string) {
		s = f.series(past.ID)
		return s.SkippedOccurrences == 1, fmt.Sprintf("%s runs %d skipped %d next %v", s.Status, s.Runs, s.SkippedOccurrences, s.NextRunAt)
	})
	if s.Runs != 0 || s.Status != "recurring" || !s.NextRunAt.Equal(late.Add(24*time.Hour)) || len(f.runsOf(past.ID)) != 0 {
		t.Fatalf("the series past grace: %s runs %d next %v", s.Status, s.Runs, s.NextRunAt)
	}
	var runs []seriesOut
	apptest.Await(t, 20*time.Second, "the latest missed occurrence's run", func() (bool, string) {
		runs = f.runsOf(several.ID)
		return len(runs) == 1, fmt.Sprintf("%d runs", len(runs))
	})
	f.waitStatus(runs[0].ID, "completed", 20*time.Second)
	s = f.series(several.ID)
	// Its only run (max_runs 1) completed the series.
	if !runs[0].OccurrenceAt.Equal(recent) || s.Runs != 1 || s.SkippedOccurrences != 2 || s.Status != "completed" || s.NextRunAt != nil {
		t.Fatalf("several missed: run at %v, series %s runs %d skipped %d next %v", runs[0].OccurrenceAt, s.Status, s.Runs, s.SkippedOccurrences, s.NextRunAt)
	}
	// The paused series fired nothing; resumed, it waits for its next
	// occurrence (tomorrow), not the one missed while paused.
	time.Sleep(2 * time.Second)
	if n := len(f.runsOf(paused.ID)); n != 0 {
		t.Fatalf("a paused series fired %d runs", n)
	}
	f.Do("POST", "/api/campaigns/"+paused.ID+"/resume", nil, f.Admin.Auth()).Expect(t, 200).Into(t, &p)
	if p.Status != "recurring" || !p.NextRunAt.Equal(recent.Add(24*time.Hour)) {
		t.Fatalf("the resumed series: %s next %v", p.Status, p.NextRunAt)
	}
	time.Sleep(2 * time.Second)
	if n := len(f.runsOf(paused.ID)); n != 0 {
		t.Fatalf("a resumed series replayed %d runs", n)
	}
	// Cancelled, it is over; starting it again is refused.
	f.Do("POST", "/api/campaigns/"+paused.ID+"/cancel", nil, f.Admin.Auth()).Expect(t, 200).Into(t, &p)
	if p.Status != "cancelled" || p.NextRunAt != nil {
		t.Fatalf("the cancelled series: %s next %v", p.Status, p.NextRunAt)
	}
	f.Do("POST", "/api/campaigns/"+paused.ID+"/start", nil, f.Admin.Auth()).Expect(t, 409)
	// Another organization's series lists nothing.
	var orgB struct{ ID string }
	f.Do("POST", "/api/organizations", map[string]string{"name": "Org B"}, f.Admin.Auth()).Expect(t, 201).Into(t, &orgB)
	var inB apptest.Session
	f.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, f.Admin.Auth()).Expect(t, 200).Into(t, &inB)
	other := f.CreateUser(inB.Auth(), "b-admin@x.com", "Admin").Auth()
	var page struct {
		Items []seriesOut `json:"items"`
	}
	f.Do("GET", "/api/campaigns?series_id="+several.ID, nil, other).Expect(t, 200).Into(t, &page)
	if len(page.Items) != 0 {
		t.Fatalf("another organization sees %d runs", len(page.Items))
	}
	f.Do("POST", "/api/campaigns/"+several.ID+"/pause", nil, other).Expect(t, 404)
	f.Do("GET", "/api/campaigns?series_id=nope", nil, f.Admin.Auth()).Expect(t, 400)
}
