package campaigns

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/models"
)

type fixedZone string

func (z fixedZone) Timezone(context.Context, uuid.UUID) (string, error) { return string(z), nil }

// The schedule's rules at a fixed clock: occurrences in the organization's
// timezone (across a DST change), the end, the minimum interval.
func TestRecurrenceScheduleAtAFixedClock(t *testing.T) {
	now := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC) // a Saturday; New York moves to DST on Sunday 8 March
	s := &Service{now: func() time.Time { return now }, timezones: fixedZone("America/New_York")}
	ctx := context.Background()
	runs, tz, err := s.PreviewRecurrence(ctx, uuid.Nil, models.Recurrence{Cron: "0 9 * * *", MaxRuns: ptrTo(10)}, 3)
	if err != nil || tz != "America/New_York" {
		t.Fatal(err, tz)
	}
	want := []time.Time{ // 09:00 EST (14:00 UTC), then 09:00 EDT (13:00 UTC)
		time.Date(2026, 3, 7, 14, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 8, 13, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC),
	}
	for i := range want {
		if !runs[i].Equal(want[i]) {
			t.Fatalf("runs %v, want %v", runs, want)
		}
	}
	// ends_at cuts the preview.
	ends := time.Date(2026, 3, 8, 20, 0, 0, 0, time.UTC)
	runs, _, _ = s.PreviewRecurrence(ctx, uuid.Nil, models.Recurrence{Cron: "0 9 * * *", EndsAt: &ends}, 3)
	if len(runs) != 2 {
		t.Fatalf("runs before ends_at: %v", runs)
	}
	// The minimum interval: hourly passes, more often does not.
	if _, _, err := s.PreviewRecurrence(ctx, uuid.Nil, models.Recurrence{Cron: "0 * * * *", MaxRuns: ptrTo(3)}, 3); err != nil {
		t.Fatalf("hourly refused: %v", err)
	}
	for _, expr := range []string{"0,59 * * * *", "*/59 * * * *", "0,59 9 * * *"} {
		if _, _, err := s.PreviewRecurrence(ctx, uuid.Nil, models.Recurrence{Cron: expr, MaxRuns: ptrTo(3)}, 3); err == nil {
			t.Errorf("%q accepted", expr)
		}
	}
	// ends_at before the first occurrence.
	soon := now.Add(time.Hour)
	if _, _, err := s.PreviewRecurrence(ctx, uuid.Nil, models.Recurrence{Cron: "0 9 * * *", EndsAt: &soon}, 3); err == nil || !strings.Contains(err.Error(), "no occurrence before ends_at") {
		t.Fatalf("ends_at before the first occurrence: %v", err)
	}
	// ends_at exactly now is in the past.
	if _, _, err := s.PreviewRecurrence(ctx, uuid.Nil, models.Recurrence{Cron: "0 9 * * *", EndsAt: &now}, 3); err == nil || !strings.Contains(err.Error(), "in the past") {
		t.Fatalf("ends_at now: %v", err)
	}
}

// Missed occurrences at a fixed clock: the latest due within grace is the
// one that may run; the others are skipped.
func TestRecurrenceWithinAndGrace(t *testing.T) {
	sc := schedule{r: models.Recurrence{Cron: "0 9 * * *", MaxRuns: ptrTo(2), GraceMinutes: 30}, loc: time.UTC}
	sch, err := parseCron(sc.r.Cron)
	if err != nil {
		t.Fatal(err)
	}
	sc.sch = sch
	if !sc.within(time.Now(), 1) || sc.within(time.Now(), 2) {
		t.Fatal("max_runs bound")
	}
	if sc.grace() != 30*time.Minute {
		t.Fatal("grace")
	}
	if sc.within(time.Time{}, 0) {
		t.Fatal("zero time is within")
	}
}

func ptrTo[T any](v T) *T { return &v }
