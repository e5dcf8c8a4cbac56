package campaigns

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/templates"
	"wharf/jobs"
	"wharf/models"
)

// Fields every recipient has, besides the imported extra fields.
var builtinFields = []string{"name", "phone_number"}

// checkReady verifies what a run needs: an active account, an APPROVED
// template, recipients, and a variable mapping that fills every placeholder
// with a field the recipients have.
func (s *Service) checkReady(ctx context.Context, c *models.Campaign) error {
	if c.AccountID == nil {
		return apperr.Invalidf("the campaign has no account (it was deleted)")
	}
	a, err := s.accounts.Get(ctx, c.OrganizationID, *c.AccountID)
	if err != nil {
		if apperr.Is(err, apperr.NotFound) {
			return apperr.Invalidf("the campaign's account no longer exists")
		}
		return err
	}
	if a.Status != models.AccountActive {
		// The account's last error is the cause an admin can act on (the
		// provider's refusal that disconnected it): a lane that finds the
		// account already marked by another lane's send pauses with it too.
		if a.LastError != "" {
			return apperr.Invalidf("account %q is %s, not active: %s", a.Name, a.Status, a.LastError)
		}
		return apperr.Invalidf("account %q is %s, not active", a.Name, a.Status)
	}
	if c.TemplateID == nil {
		return apperr.Invalidf("the campaign's template was deleted: choose another one")
	}
	t, err := s.templates.Sendable(ctx, c.OrganizationID, c.AccountID, c.TemplateID, "")
	if err != nil {
		return err
	}
	if fromAudience(c) {
		// Its recipients and their fields exist once the start resolves
		// the audience, which checks them then (startFromAudience).
		return nil
	}
	var has bool
	if err := s.db.WithContext(ctx).Raw(hasRecipientsSQL, c.ID).Scan(&has).Error; err != nil {
		return err
	}
	if !has {
		return apperr.Invalidf("the campaign has no recipients: import them first")
	}
	return s.checkMapping(ctx, s.db, c, t)
}

// hasRecipientsSQL answers whether a campaign has a recipient, from the
// first entry of its index. checkReady runs at every start and whenever a
// lane loads its run (every lane of every worker at once when a campaign
// starts, again after runCacheTTL): a count of the recipients read all of
// them each time (nine counts of 20,000 in a 4.5-s campaign were 15% of
// PostgreSQL's time; at a million recipients each is seconds).
const hasRecipientsSQL = `SELECT EXISTS (SELECT 1 FROM campaign_recipients WHERE campaign_id = ?)`

// checkMapping verifies that the variable mapping fills every placeholder
// of t, and only those, with a field the campaign's recipients have (read
// through db: the starting transaction sees the recipients it resolved).
func (s *Service) checkMapping(ctx context.Context, db *gorm.DB, c *models.Campaign, t *models.Template) error {
	slots := templates.Keys(templates.Slots(t))
	m := c.VariableMapping.V
	var missing []string
	for _, k := range slots {
		if m[k] == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return apperr.Invalidf("variable_mapping leaves template placeholders unfilled: %s (map each to name, phone_number or an imported field)",
			strings.Join(missing, ", "))
	}
	for k, field := range m {
		if !slices.Contains(slots, k) {
			return apperr.Invalidf("variable_mapping names %q, which is not a placeholder of template %s (placeholders: %s)",
				k, t.Name, strings.Join(slots, ", "))
		}
		if slices.Contains(builtinFields, field) {
			continue
		}
		var has bool
		if err := db.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM campaign_recipients WHERE campaign_id = ? AND jsonb_exists(data, ?))`,
			c.ID, field).Scan(&has).Error; err != nil {
			return err
		}
		if !has {
			return apperr.Invalidf("variable_mapping.%s names field %q, which no recipient has", k, field)
		}
	}
	return nil
}

// returningAll fills the model with the updated row (PostgreSQL RETURNING *).
var returningAll = clause.Returning{}

// transition moves a campaign from one of from to the target with a
// compare-and-set; when another request won the race, it answers 409 with
// the state it found.
func (s *Service) transition(ctx context.Context, orgID, id uuid.UUID, from []models.CampaignStatus, action string, set map[string]any) (*models.Campaign, error) {
	set["updated_at"] = s.now()
	var c models.Campaign
	res := s.db.WithContext(ctx).Model(&c).Where("id = ? AND organization_id = ? AND status IN ?", id, orgID, from).
		Clauses(returningAll).Updates(set)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		cur, err := s.Get(ctx, orgID, id)
		if err != nil {
			return nil, err
		}
		return nil, apperr.Conflictf("cannot %s a campaign that is %s", action, cur.Status)
	}
	s.announce(ctx, &c)
	return &c, nil
}

// Start runs a draft campaign (or schedules it, when scheduled_at is in the
// future), and resumes a paused one. Two concurrent starts get one winner.
func (s *Service) Start(ctx context.Context, orgID, id uuid.UUID) (*models.Campaign, error) {
	c, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	switch c.Status {
	case models.CampaignDraft, models.CampaignPaused:
	case models.CampaignScheduled:
		return nil, apperr.Conflictf("the campaign is scheduled for %s; cancel it to stop it", c.ScheduledAt.UTC().Format("2006-01-02T15:04:05Z"))
	default:
		return nil, apperr.Conflictf("cannot start a campaign that is %s", c.Status)
	}
	if err := s.checkReady(ctx, c); err != nil {
		return nil, err
	}
	if isSeries(c) {
		return s.startSeries(ctx, c)
	}
	now := s.now()
	if c.Status == models.CampaignDraft && c.ScheduledAt != nil && c.ScheduledAt.After(now) {
		return s.transition(ctx, orgID, id, []models.CampaignStatus{models.CampaignDraft}, "schedule", map[string]any{"status": models.CampaignScheduled})
	}
	set := map[string]any{
		"status": models.CampaignSending, "started_at": gorm.Expr("COALESCE(started_at, ?)", now), "paused_at": nil,
		"pause_reason": "", "run_generation": gorm.Expr("run_generation + 1")}
	var started *models.Campaign
	if fromAudience(c) {
		started, err = s.startFromAudience(ctx, c, c.Status, set)
	} else {
		started, err = s.transition(ctx, orgID, id, []models.CampaignStatus{c.Status}, "start", set)
	}
	if err != nil {
		return nil, err
	}
	s.enqueueLanes(ctx, started)
	return started, nil
}

// Pause stops a sending campaign; its lanes stop within a second. A
// recurring series pauses too: no occurrence fires until it is resumed
// (its runs already sending go on).
func (s *Service) Pause(ctx context.Context, orgID, id uuid.UUID) (*models.Campaign, error) {
	return s.transition(ctx, orgID, id, []models.CampaignStatus{models.CampaignSending, models.CampaignRecurring}, "pause",
		map[string]any{"status": models.CampaignPaused, "paused_at": s.now(), "pause_reason": "", "next_run_at": gorm.Expr("CASE WHEN status = 'recurring' THEN NULL ELSE next_run_at END")})
}

// Cancel stops a campaign for good. Recipients not sent stay pending.
func (s *Service) Cancel(ctx context.Context, orgID, id uuid.UUID) (*models.Campaign, error) {
	return s.transition(ctx, orgID, id,
		[]models.CampaignStatus{models.CampaignDraft, models.CampaignScheduled, models.CampaignSending, models.CampaignPaused, models.CampaignRecurring}, "cancel",
		map[string]any{"status": models.CampaignCancelled, "cancelled_at": s.now(), "next_run_at": nil})
}

// StartDue starts the scheduled campaigns whose time has come. A campaign
// that is no longer ready is paused, with the reason in the log, so an admin
// can fix and resume it.
func (s *Service) StartDue(ctx context.Context) (int, error) {
	var due []models.Campaign
	if err := s.db.WithContext(ctx).Where("status = ? AND scheduled_at <= ?", models.CampaignScheduled, s.now()).
		Order("scheduled_at").Limit(100).Find(&due).Error; err != nil {
		return 0, err
	}
	started := 0
	for i := range due {
		c := &due[i]
		set := map[string]any{"status": models.CampaignSending, "started_at": s.now(), "run_generation": gorm.Expr("run_generation + 1")}
		if err := s.checkReady(ctx, c); err != nil {
			s.log.Warn("scheduled campaign not ready; paused", "campaign_id", c.ID, "reason", err)
			set = map[string]any{"status": models.CampaignPaused, "paused_at": s.now(), "pause_reason": apperr.Clip(err.Error(), 500)}
		}
		var (
			run *models.Campaign
			err error
		)
		if set["status"] == models.CampaignSending && fromAudience(c) {
			run, err = s.startFromAudience(ctx, c, models.CampaignScheduled, set)
			if apperr.Is(err, apperr.Invalid) {
				// No contact matches now, the segment is gone, a field
				// is missing: paused with the reason, like any campaign
				// that is not ready.
				s.log.Warn("scheduled campaign's audience not ready; paused", "campaign_id", c.ID, "reason", err)
				run, err = s.transition(ctx, c.OrganizationID, c.ID, []models.CampaignStatus{models.CampaignScheduled}, "start",
					map[string]any{"status": models.CampaignPaused, "paused_at": s.now(), "pause_reason": apperr.Clip(err.Error(), 500)})
			}
		} else {
			run, err = s.transition(ctx, c.OrganizationID, c.ID, []models.CampaignStatus{models.CampaignScheduled}, "start", set)
		}
		if apperr.Is(err, apperr.Conflict) {
			continue // cancelled meanwhile, or another replica started it
		}
		if err != nil {
			return started, err
		}
		if run.Status == models.CampaignSending {
			s.enqueueLanes(ctx, run)
			started++
		}
	}
	return started, nil
}

// enqueueLanes starts the lanes of the campaign's current run. Their task
// ids are deterministic, so a repeated call starts nothing twice.
func (s *Service) enqueueLanes(ctx context.Context, c *models.Campaign) {
	for lane := 0; lane < s.lanesFor(ctx, c); lane++ {
		_, err := s.enq.Enqueue(context.WithoutCancel(ctx), jobs.CampaignLane{OrganizationID: c.OrganizationID, CampaignID: c.ID,
			Generation: c.RunGeneration, Lane: lane})
		if err != nil && !errors.Is(err, jobs.ErrDuplicate) {
			s.log.Warn("cannot enqueue a campaign lane; the sweeper will retry", "campaign_id", c.ID, "lane", lane, "error", err)
		}
	}
}

// lanesFor is how many lanes a run gets: CAMPAIGN_LANES for an unpaced
// campaign, whose throughput grows with parallel sends; pacedLanes for a
// paced one, whose lanes send what the pace allows concurrently anyway.
func (s *Service) lanesFor(ctx context.Context, c *models.Campaign) int {
	if c.AccountID == nil {
		return 1 // it will pause itself with the reason
	}
	a, err := s.accounts.Get(ctx, c.OrganizationID, *c.AccountID)
	if err != nil || accounts.Rate(&a.PlatformAccount) == 0 {
		return s.cfg.Lanes
	}
	return min(s.cfg.Lanes, pacedLanes)
}

// ResendUnknown puts a campaign's unknown recipients (a worker died between
// the provider call and recording it, so the provider may or may not have
// their message) back to pending, for an admin who prefers a possible
// duplicate to a possible gap. A completed campaign becomes paused, so that
// resuming it sends them; a sending one is refused (pause it first), and so
// are cancelled ones and campaigns that never ran.
func (s *Service) ResendUnknown(ctx context.Context, orgID, id uuid.UUID) (int64, *models.Campaign, error) {
	var n int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		c, err := get(ctx, tx.Clauses(clause.Locking{Strength: "UPDATE"}), orgID, id)
		if err != nil {
			return err
		}
		switch c.Status {
		case models.CampaignPaused, models.CampaignCompleted:
		case models.CampaignSending:
			return apperr.Conflictf("the campaign is sending: pause it before resending its unknown recipients")
		default:
			return apperr.Conflictf("cannot resend the unknown recipients of a campaign that is %s", c.Status)
		}
		res := tx.Exec(`UPDATE campaign_recipients SET status = 'pending', claim_id = NULL, send_started_at = NULL,
			error_code = NULL, error_title = '', error_detail = '', updated_at = now()
			WHERE campaign_id = ? AND status = 'unknown'`, id)
		if res.Error != nil {
			return res.Error
		}
		n = res.RowsAffected
		if n > 0 && c.Status == models.CampaignCompleted {
			return tx.Exec(`UPDATE campaigns SET status = 'paused', paused_at = now(), completed_at = NULL,
				pause_reason = 'unknown recipients requeued: resume to send them', updated_at = now() WHERE id = ?`, id).Error
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	if err := s.Recount(ctx, orgID, id); err != nil {
		return 0, nil, err
	}
	c, err := s.Get(ctx, orgID, id)
	return n, c, err
}
