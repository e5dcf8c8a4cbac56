package campaigns

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/robfig/cron/v3"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// Recurring campaigns. A campaign with a recurrence is a series: starting
// it makes it recurring (it sends nothing itself), and each occurrence of
// its cron expression, in the organization's timezone, creates a run: a
// normal campaign with the series' account, template, mapping and
// audience, its series_id and occurrence_at, created scheduled for now so
// that StartDue, in the same scheduler tick, resolves its audience afresh
// and starts it like any scheduled campaign (a run that is not ready is
// paused with the reason). Each run has its own recipients and counters.
//
// An occurrence fires once: the series' row is locked while it fires and
// next_run_at moves past it in the same transaction, and the unique index
// on (series_id, occurrence_at) refuses a second run of it whatever fires
// it (a second scheduler, a retried job).
//
// Missed occurrences (the scheduler was down): when FireDue finds several
// due, only the latest runs, and only if it is at most grace late; the
// others are counted in skipped_occurrences. Pausing the series stops its
// occurrences (its runs go on unless paused themselves); resuming starts
// from the next occurrence after now: the ones missed while paused are not
// replayed (nor counted as skipped).

// Recurrence limits.
const (
	MaxRecurrenceRuns    = 1000
	DefaultGraceMinutes  = 60
	MaxGraceMinutes      = 24 * 60
	MinInterval          = time.Hour
	recurrenceCheckCount = 100 // occurrences checked against the minimum interval
)

// Timezones gives an organization's timezone name (orgsettings).
type Timezones interface {
	Timezone(ctx context.Context, orgID uuid.UUID) (string, error)
}

// location is the organization's timezone, UTC when it has none (or no
// settings are wired).
func (s *Service) location(ctx context.Context, orgID uuid.UUID) (*time.Location, error) {
	if s.timezones == nil {
		return time.UTC, nil
	}
	name, err := s.timezones.Timezone(ctx, orgID)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return time.UTC, nil
	}
	return loc, nil
}

// parseCron reads a 5-field cron expression (minute hour day-of-month
// month day-of-week). Descriptors (@daily, @every) and a TZ= prefix are
// refused: the timezone is the organization's, and one syntax is easier to
// show and edit.
func parseCron(expr string) (cron.Schedule, error) {
	expr = strings.TrimSpace(expr)
	if strings.HasPrefix(expr, "@") || strings.Contains(expr, "TZ=") || len(strings.Fields(expr)) != 5 {
		return nil, apperr.Invalidf("recurrence.cron %q is not a 5-field cron expression (minute hour day-of-month month day-of-week, e.g. \"0 9 * * 1\")", expr)
	}
	sch, err := cron.ParseStandard(expr)
	if err != nil {
		return nil, apperr.Invalidf("recurrence.cron %q is not a valid cron expression: %s", expr, err.Error())
	}
	return sch, nil
}

// schedule is a checked recurrence with its timezone.
type schedule struct {
	r   models.Recurrence
	sch cron.Schedule
	loc *time.Location
}

// next is the first occurrence strictly after t (UTC), or the zero time.
func (sc schedule) next(t time.Time) time.Time {
	n := sc.sch.Next(t.In(sc.loc))
	if n.IsZero() {
		return n
	}
	return n.UTC()
}

// within tells whether an occurrence at t may still run after runs runs.
func (sc schedule) within(t time.Time, runs int) bool {
	if t.IsZero() {
		return false
	}
	if sc.r.EndsAt != nil && t.After(*sc.r.EndsAt) {
		return false
	}
	return sc.r.MaxRuns == nil || runs < *sc.r.MaxRuns
}

func (sc schedule) grace() time.Duration { return time.Duration(sc.r.GraceMinutes) * time.Minute }

// checkRecurrence validates r (filling its default grace) at now, in the
// organization's timezone.
func (s *Service) checkRecurrence(ctx context.Context, orgID uuid.UUID, r *models.Recurrence) (schedule, error) {
	sch, err := parseCron(r.Cron)
	if err != nil {
		return schedule{}, err
	}
	r.Cron = strings.Join(strings.Fields(r.Cron), " ")
	if r.EndsAt == nil && r.MaxRuns == nil {
		return schedule{}, apperr.Invalidf("recurrence needs an end: ends_at, max_runs or both")
	}
	if r.MaxRuns != nil && (*r.MaxRuns < 1 || *r.MaxRuns > MaxRecurrenceRuns) {
		return schedule{}, apperr.Invalidf("recurrence.max_runs must be between 1 and %d", MaxRecurrenceRuns)
	}
	now := s.now()
	if r.EndsAt != nil {
		e := r.EndsAt.UTC()
		r.EndsAt = &e
		if !e.After(now) {
			return schedule{}, apperr.Invalidf("recurrence.ends_at is in the past")
		}
	}
	if r.GraceMinutes == 0 {
		r.GraceMinutes = DefaultGraceMinutes
	}
	if r.GraceMinutes < 1 || r.GraceMinutes > MaxGraceMinutes {
		return schedule{}, apperr.Invalidf("recurrence.grace_minutes must be between 1 and %d", MaxGraceMinutes)
	}
	loc, err := s.location(ctx, orgID)
	if err != nil {
		return schedule{}, err
	}
	sc := schedule{r: *r, sch: sch, loc: loc}
	first := sc.next(now)
	if first.IsZero() {
		return schedule{}, apperr.Invalidf("recurrence.cron %q never occurs", r.Cron)
	}
	if !sc.within(first, 0) {
		return schedule{}, apperr.Invalidf("recurrence.cron %q has no occurrence before ends_at", r.Cron)
	}
	// The shortest gap among the next occurrences: "0,30 9 * * *" is as
	// frequent as "*/30 * * * *", only on fewer hours.
	min := s.minInterval()
	prev := first
	for i := 0; i < recurrenceCheckCount; i++ {
		n := sc.next(prev)
		if n.IsZero() {
			break
		}
		if n.Sub(prev) < min {
			return schedule{}, apperr.Invalidf("recurrence.cron %q runs every %s at times; occurrences must be at least %s apart",
				r.Cron, n.Sub(prev), min)
		}
		prev = n
	}
	return sc, nil
}

// minInterval is the shortest gap allowed between occurrences: a
// campaign to the same audience more often than hourly is a mistake (and
// the test suites need no shorter one: they make occurrences due by moving
// next_run_at).
func (s *Service) minInterval() time.Duration { return MinInterval }

// PreviewRecurrence checks r as a campaign's recurrence would be, and
// gives its next n occurrences from now (within its end) and the timezone
// they are computed in.
func (s *Service) PreviewRecurrence(ctx context.Context, orgID uuid.UUID, r models.Recurrence, n int) ([]time.Time, string, error) {
	sc, err := s.checkRecurrence(ctx, orgID, &r)
	if err != nil {
		return nil, "", err
	}
	var out []time.Time
	t := s.now()
	for len(out) < n {
		t = sc.next(t)
		if !sc.within(t, len(out)) {
			break
		}
		out = append(out, t)
	}
	return out, sc.loc.String(), nil
}

// applyRecurrence sets (or, with nil, clears) a draft's recurrence.
func (s *Service) applyRecurrence(ctx context.Context, c *models.Campaign, r *models.Recurrence) error {
	if r == nil {
		c.Recurrence.V = nil
		return nil
	}
	if _, err := s.checkRecurrence(ctx, c.OrganizationID, r); err != nil {
		return err
	}
	c.Recurrence.V = r
	return nil
}

// checkSeriesShape refuses what a series cannot be: its recipients must
// come from contacts (each run resolves them afresh; an uploaded list would
// be sent again and again), and its times are its recurrence's.
func checkSeriesShape(c *models.Campaign) error {
	if c.Recurrence.V == nil {
		return nil
	}
	if c.SeriesID != nil {
		return apperr.Invalidf("a run of a recurring campaign cannot recur itself")
	}
	if c.Audience.V == nil {
		return apperr.Invalidf("only a campaign whose recipients come from contacts (audience) can recur: uploaded recipients would be sent the same list every time")
	}
	if c.ScheduledAt != nil {
		return apperr.Invalidf("a recurring campaign runs on its recurrence: clear scheduled_at")
	}
	return nil
}

// isSeries tells whether c is a recurring campaign's series.
func isSeries(c *models.Campaign) bool { return c.Recurrence.V != nil }

// seriesSchedule rebuilds a stored series' schedule (its recurrence was
// checked when set; the organization's timezone is read now, so a changed
// timezone moves the next occurrences).
func (s *Service) seriesSchedule(ctx context.Context, c *models.Campaign) (schedule, error) {
	sch, err := parseCron(c.Recurrence.V.Cron)
	if err != nil {
		return schedule{}, err
	}
	loc, err := s.location(ctx, c.OrganizationID)
	if err != nil {
		return schedule{}, err
	}
	r := *c.Recurrence.V
	if r.GraceMinutes == 0 {
		r.GraceMinutes = DefaultGraceMinutes
	}
	return schedule{r: r, sch: sch, loc: loc}, nil
}

// startSeries makes a draft or paused series recurring from the next
// occurrence after now: a resumed series does not replay the occurrences
// it missed while paused.
func (s *Service) startSeries(ctx context.Context, c *models.Campaign) (*models.Campaign, error) {
	sc, err := s.seriesSchedule(ctx, c)
	if err != nil {
		return nil, err
	}
	next := sc.next(s.now())
	if !sc.within(next, c.Runs) {
		return nil, apperr.Invalidf("the recurring campaign has no occurrence left (ends_at or max_runs reached)")
	}
	set := map[string]any{"status": models.CampaignRecurring, "next_run_at": next, "paused_at": nil, "pause_reason": "",
		"started_at": gorm.Expr("COALESCE(started_at, ?)", s.now())}
	return s.transition(ctx, c.OrganizationID, c.ID, []models.CampaignStatus{c.Status}, "start", set)
}

// FireDue fires the due occurrences of the recurring series: for each, at
// most one run (the latest due occurrence, if within its grace), the
// others skipped. It returns the runs created; StartDue starts them.
func (s *Service) FireDue(ctx context.Context) (int, error) {
	var due []models.Campaign
	if err := s.db.WithContext(ctx).Where("status = ? AND next_run_at <= ?", models.CampaignRecurring, s.now()).
		Order("next_run_at").Limit(100).Find(&due).Error; err != nil {
		return 0, err
	}
	fired := 0
	for i := range due {
		ok, err := s.fire(ctx, &due[i])
		if err != nil {
			return fired, err
		}
		if ok {
			fired++
		}
	}
	return fired, nil
}

// fire handles one due series in one transaction, under its row lock.
func (s *Service) fire(ctx context.Context, c *models.Campaign) (bool, error) {
	sc, err := s.seriesSchedule(ctx, c)
	if err != nil {
		s.log.Warn("recurring campaign's schedule unreadable", "campaign_id", c.ID, "error", err)
		return false, nil
	}
	created := false
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		cur, err := get(ctx, tx.Clauses(clause.Locking{Strength: "UPDATE"}), c.OrganizationID, c.ID)
		if err != nil {
			return err
		}
		now := s.now()
		if cur.Status != models.CampaignRecurring || cur.NextRunAt == nil || cur.NextRunAt.After(now) {
			return nil // paused, cancelled, or fired by another scheduler meanwhile
		}
		// The due occurrences: next_run_at and those after it up to now;
		// only the latest may run.
		latest, skipped := cur.NextRunAt.UTC(), 0
		for {
			n := sc.next(latest)
			if n.IsZero() || n.After(now) || !sc.within(n, cur.Runs) {
				break
			}
			latest, skipped = n, skipped+1
		}
		runs := cur.Runs
		set := map[string]any{"updated_at": now}
		switch {
		case !sc.within(latest, runs):
			skipped++ // past the end (ends_at moved behind it cannot happen; kept safe)
		case now.Sub(latest) > sc.grace():
			skipped++
			s.log.Warn("recurring campaign's occurrence missed past its grace; skipped", "campaign_id", cur.ID, "occurrence_at", latest)
		default:
			run := models.Campaign{OrganizationID: cur.OrganizationID, AccountID: cur.AccountID, TemplateID: cur.TemplateID,
				TemplateName: cur.TemplateName, Name: runName(cur.Name, latest, sc.loc), Status: models.CampaignScheduled,
				VariableMapping: cur.VariableMapping, Audience: cur.Audience, ScheduledAt: &now, CreatedBy: cur.CreatedBy,
				SeriesID: &cur.ID, OccurrenceAt: &latest}
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&run)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 1 {
				runs++
				created = true
			}
		}
		next := sc.next(latest)
		if sc.within(next, runs) {
			set["next_run_at"] = next
		} else {
			set["next_run_at"] = nil
			set["status"] = models.CampaignCompleted
			set["completed_at"] = now
		}
		set["runs"] = runs
		if skipped > 0 {
			set["skipped_occurrences"] = gorm.Expr("skipped_occurrences + ?", skipped)
			set["last_skipped_at"] = now
		}
		return tx.Model(&models.Campaign{}).Where("id = ?", cur.ID).Updates(set).Error
	})
	if err != nil {
		var pg interface{ SQLState() string }
		if errors.As(err, &pg) && pg.SQLState() == "23505" {
			return false, nil // the occurrence's run exists already
		}
		return false, err
	}
	if got, err := s.Get(ctx, c.OrganizationID, c.ID); err == nil {
		s.announce(ctx, got)
	}
	return created, nil
}

// runName names a run after its series and occurrence (local time).
func runName(series string, at time.Time, loc *time.Location) string {
	suffix := " · " + at.In(loc).Format("2006-01-02 15:04")
	r := []rune(series)
	if len(r)+len([]rune(suffix)) > 200 {
		r = r[:200-len([]rune(suffix))]
	}
	return string(r) + suffix
}
