package campaigns

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"wharf/internal/apperr"
	"wharf/internal/phone"
	"wharf/internal/templates"
	"wharf/models"
	"wharf/platform"
)

// Lane tuning.
const (
	statusCheckEvery = 250 * time.Millisecond // how soon a lane notices a pause
	maxAttempts      = 5                      // provider failures before a recipient fails
)

// CallbackPrefix marks campaign recipients in biz_opaque_callback_data (the
// messaging domain uses bare message ids).
const CallbackPrefix = "r:"

// run is what a lane needs for one campaign run.
type run struct {
	campaign *models.Campaign
	creds    platform.Creds
	tmpl     *models.Template
	rate     int
	rateKey  string
}

// RunLane is the campaign:lane job. It sends to pending recipients one at a
// time until none is left, the campaign stops (pause, cancel) or a newer run
// takes over, or ctx ends (worker shutdown: the task goes back to the queue).
//
// Per recipient: wait for the account's rate (in Redis, shared by every
// worker), then claim the next pending recipient with a compare-and-set
// (pending -> sending), send, and settle it. Claiming after the wait keeps
// the window in which a crash leaves a recipient "sending" to the send
// itself.
func (s *Service) RunLane(ctx context.Context, orgID, campaignID uuid.UUID, generation int) error {
	r, err := s.prepare(ctx, orgID, campaignID, generation)
	if err != nil || r == nil {
		return err
	}
	lastCheck := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Since(lastCheck) >= statusCheckEvery {
			if !s.stillRunning(ctx, orgID, campaignID, generation) {
				return nil
			}
			lastCheck = time.Now()
		}
		if r.rate > 0 {
			if err := s.limiter.Pace(ctx, r.rateKey, r.rate); err != nil {
				return err
			}
		}
		rec, err := s.claim(ctx, campaignID)
		if err != nil {
			return err
		}
		if rec == nil {
			s.RequestRecount(ctx, orgID, campaignID)
			return nil
		}
		backoff := s.send(ctx, r, rec)
		s.RequestRecount(ctx, orgID, campaignID)
		if backoff > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(backoff):
			}
		}
	}
}

// prepare loads what the run needs, or returns nil when the lane has nothing
// to do (the campaign stopped or a newer run exists). A campaign whose
// account or template stopped being usable is paused.
func (s *Service) prepare(ctx context.Context, orgID, id uuid.UUID, generation int) (*run, error) {
	c, err := s.Get(ctx, orgID, id)
	if apperr.Is(err, apperr.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if c.Status != models.CampaignSending || c.RunGeneration != generation {
		return nil, nil
	}
	if err := s.checkReady(ctx, c); err != nil {
		s.log.Warn("campaign can no longer send; paused", "campaign_id", id, "reason", err)
		_, _ = s.Pause(ctx, orgID, id)
		return nil, nil
	}
	a, err := s.accounts.Get(ctx, orgID, *c.AccountID)
	if err != nil {
		return nil, err
	}
	t, err := s.templates.ForSend(ctx, orgID, c.AccountID, c.TemplateID, "")
	if err != nil {
		return nil, err
	}
	return &run{campaign: c, creds: a.Creds(), tmpl: t, rate: RateFor(EffectiveTier(&a.PlatformAccount)),
		rateKey: "wharf:campaign-rate:" + a.ID.String()}, nil
}

func (s *Service) stillRunning(ctx context.Context, orgID, id uuid.UUID, generation int) bool {
	var cur struct {
		Status        string
		RunGeneration int
	}
	err := s.db.WithContext(ctx).Raw(`SELECT status, run_generation FROM campaigns WHERE id = ? AND organization_id = ?`, id, orgID).
		Scan(&cur).Error
	return err == nil && cur.Status == models.CampaignSending && cur.RunGeneration == generation
}

// claim moves the next pending recipient (in import order) to sending. SKIP
// LOCKED lets parallel lanes claim different recipients without waiting;
// the status condition makes a recipient claimable once.
func (s *Service) claim(ctx context.Context, campaignID uuid.UUID) (*models.CampaignRecipient, error) {
	var rec models.CampaignRecipient
	err := s.db.WithContext(ctx).Raw(`UPDATE campaign_recipients SET status = 'sending', send_started_at = now(),
		attempts = attempts + 1, updated_at = now()
		WHERE id = (SELECT id FROM campaign_recipients WHERE campaign_id = ? AND status = 'pending'
		            ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING *`, campaignID).Scan(&rec).Error
	if err != nil || rec.ID == uuid.Nil {
		return nil, err
	}
	return &rec, nil
}

// send makes one send and settles the recipient; it returns how long the
// lane should wait before the next one (the provider asked us to slow down).
func (s *Service) send(ctx context.Context, r *run, rec *models.CampaignRecipient) time.Duration {
	values, missing := s.values(r.campaign, r.tmpl, rec)
	if len(missing) > 0 {
		s.settle(ctx, rec.ID, "failed", nil, "missing values for the template",
			fmt.Sprintf("the recipient has no value for: %s", strings.Join(missing, ", ")), "")
		return 0
	}
	t, err := templates.Build(r.tmpl, values)
	if err != nil {
		s.settle(ctx, rec.ID, "failed", nil, "cannot build the template", err.Error(), "")
		return 0
	}
	msg := platform.NewMessage(phone.Digits(rec.PhoneNumber), "template")
	msg.Template = &t
	msg.BizOpaqueCallbackData = CallbackPrefix + rec.ID.String()
	// The send is not cancelled with the lane: once the request may have
	// left, finishing it and recording the answer beats guessing later.
	res, err := s.provider.Send(context.WithoutCancel(ctx), r.creds, msg)
	if err == nil {
		s.settle(ctx, rec.ID, "sent", nil, "", "", res.MessageID)
		return 0
	}
	pe, ok := platform.AsError(err)
	switch {
	case !ok:
		s.settle(ctx, rec.ID, "failed", nil, "cannot send", err.Error(), "")
	case pe.Code == 0 && pe.Class == platform.Transient:
		// The connection broke: the provider may have the message.
		s.settle(ctx, rec.ID, models.RecipientUnknown, nil, "send outcome unknown",
			"the connection to the provider broke during the send ("+pe.Error()+"); a provider status will settle it if the message "+
				"was accepted; it is not resent, to avoid a duplicate", "")
	case pe.Class == platform.Throttled:
		s.release(ctx, rec.ID)
		return max(pe.RetryAfter, time.Second)
	case pe.Class == platform.Transient && rec.Attempts < maxAttempts:
		s.release(ctx, rec.ID)
		return time.Duration(rec.Attempts) * time.Second
	default:
		code := pe.Code
		s.settle(ctx, rec.ID, "failed", &code, pe.Message, pe.Details, "")
	}
	return 0
}

// values maps the template's placeholders to the recipient's fields.
func (s *Service) values(c *models.Campaign, t *models.Template, rec *models.CampaignRecipient) (map[string]string, []string) {
	values := map[string]string{}
	var missing []string
	for _, key := range templates.Keys(templates.Slots(t)) {
		field := c.VariableMapping.V[key]
		var v string
		switch field {
		case "name":
			v = rec.Name
		case "phone_number":
			v = rec.PhoneNumber
		default:
			if x, ok := rec.Data.V[field]; ok && x != nil {
				v = strings.TrimSpace(fmt.Sprint(x))
			}
		}
		if v == "" {
			missing = append(missing, fmt.Sprintf("%s (field %s)", key, field))
			continue
		}
		values[key] = v
	}
	return values, missing
}

// settle records the outcome of a send. A status webhook may have settled
// the recipient already (its answer came back before ours was recorded), so
// the update only moves a recipient that is still sending, and fills the
// provider id only when missing.
func (s *Service) settle(ctx context.Context, id uuid.UUID, status string, code *int, title, detail, platformID string) {
	db := s.db.WithContext(context.WithoutCancel(ctx))
	var err error
	if status == "sent" {
		err = db.Exec(`UPDATE campaign_recipients SET platform_message_id = COALESCE(platform_message_id, ?),
			status = CASE WHEN status IN ('sending', 'unknown') THEN 'sent' ELSE status END,
			sent_at = COALESCE(sent_at, now()), updated_at = now() WHERE id = ?`, platformID, id).Error
	} else {
		err = db.Exec(`UPDATE campaign_recipients SET status = ?, error_code = ?, error_title = ?, error_detail = ?,
			failed_at = CASE WHEN ? = 'failed' THEN now() ELSE failed_at END, updated_at = now()
			WHERE id = ? AND status = 'sending'`, status, code, apperr.Clip(title, 300), apperr.Clip(detail, 1000), status, id).Error
	}
	if err != nil {
		s.log.Error("cannot record a campaign send; the sweeper will settle it", "recipient_id", id, "error", err)
	}
}

// release gives a claimed recipient back: the provider certainly did not
// take the message (rate limit, or an error answer).
func (s *Service) release(ctx context.Context, id uuid.UUID) {
	err := s.db.WithContext(context.WithoutCancel(ctx)).Exec(`UPDATE campaign_recipients SET status = 'pending', send_started_at = NULL,
		updated_at = now() WHERE id = ? AND status = 'sending'`, id).Error
	if err != nil {
		s.log.Error("cannot release a campaign recipient", "recipient_id", id, "error", err)
	}
}
