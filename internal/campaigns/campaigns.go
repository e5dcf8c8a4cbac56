// Package campaigns owns bulk template sends: campaigns, their recipients,
// the state machine (every transition a compare-and-set), and the sending
// pipeline: lanes in the worker that claim recipients, send them through
// the outbound.Sender (paced per account by messaging tier, from the budget
// every kind of send shares, after replies and API sends), and settle each
// recipient exactly once. docs/CAMPAIGNS.md explains it for operators.
package campaigns

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/live"
	"wharf/internal/infra/metrics"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/ratelimit"
	"wharf/internal/infra/statuses"
	"wharf/internal/infra/tenant"
	"wharf/internal/outbound"
	"wharf/internal/templates"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// Config tunes the pipeline (see config.Campaigns).
type Config struct {
	Lanes           int
	CounterInterval time.Duration
	SendingTimeout  time.Duration
	StallAfter      time.Duration
}

// Service manages campaigns.
type Service struct {
	db        *gorm.DB
	accounts  *accounts.Service
	templates *templates.Service
	sender    *outbound.Sender
	enq       *jobs.Enqueuer
	statuses  *statuses.Applier
	metrics   *metrics.Set
	cfg       Config
	log       *slog.Logger
	now       func() time.Time

	outbox    Outbox    // nil: no campaign is projected (project.go)
	optOuts   OptOuts   // nil: no recipient is skipped for an opt-out
	audiences Audiences // nil: campaigns cannot take their recipients from contacts
	timezones Timezones // nil: recurrences are evaluated in UTC
	tests     TestSender
	live      live.Publisher

	recounts sync.Map // campaign id -> last recount bucket requested by this process
	runs     sync.Map // campaign id -> *cachedRun loaded by this process

	// projected caches whether a campaign is projected (project.go);
	// projectedSize counts its entries (it starts over past a bound).
	projected     sync.Map
	projectedSize atomic.Int64
}

// Deps are the collaborators of the campaigns domain.
type Deps struct {
	DB        *gorm.DB
	Accounts  *accounts.Service
	Templates *templates.Service
	Provider  *platform.Client
	// Sender is the one way messages leave (internal/outbound), shared
	// with the other domains that send; nil: one over Provider, Limiter,
	// Accounts and Metrics.
	Sender   *outbound.Sender
	Enqueuer *jobs.Enqueuer
	Limiter  *ratelimit.Limiter
	Metrics  *metrics.Set // sends by outcome and lane waits (nil: none)
	Config   Config
	Log      *slog.Logger
	// Live publishes the event stream's campaign.progress events (nil:
	// none): after each recount and change of status.
	Live live.Publisher
	// Outbox records the changes of projected campaigns (a bulk message's)
	// for their projector (webhooks.Service; nil: none are recorded).
	Outbox Outbox
	// OptOuts tell which recipients opted out of marketing (contacts;
	// nil: none did).
	OptOuts OptOuts
	// Tests sends test messages (testsend.go; nil: test sends are refused).
	Tests TestSender
	// Audiences compiles contact filters (contacts; nil: campaigns cannot
	// take their recipients from contacts).
	Audiences Audiences
	// Timezones gives the organization's timezone, which recurring
	// campaigns' cron expressions are evaluated in (nil: UTC).
	Timezones Timezones
}

// NewService wires the campaigns domain.
func NewService(d Deps) *Service {
	if d.Sender == nil {
		d.Sender = outbound.New(outbound.Deps{Provider: d.Provider, Limiter: d.Limiter, Accounts: d.Accounts, Metrics: d.Metrics, Log: d.Log})
	}
	s := &Service{db: d.DB, accounts: d.Accounts, templates: d.Templates, sender: d.Sender, enq: d.Enqueuer,
		statuses: statuses.NewApplier(recipientStatuses), metrics: d.Metrics, cfg: d.Config, log: d.Log,
		outbox: d.Outbox, optOuts: d.OptOuts, tests: d.Tests, audiences: d.Audiences, timezones: d.Timezones, live: live.Or(d.Live), now: func() time.Time { return time.Now().UTC() }}
	return s
}

// Filter narrows a campaign list.
type Filter struct {
	Status    string
	AccountID *uuid.UUID
	// SeriesID: only the runs of this recurring campaign.
	SeriesID *uuid.UUID
}

// List returns a page of campaigns, newest first.
func (s *Service) List(ctx context.Context, orgID uuid.UUID, f Filter, pg paging.Params) ([]models.Campaign, int64, error) {
	q := s.db.WithContext(ctx).Model(&models.Campaign{}).Scopes(tenant.Scope(orgID))
	if f.Status != "" {
		q = q.Where("status = ?", strings.ToLower(f.Status))
	}
	if f.AccountID != nil {
		q = q.Where("account_id = ?", *f.AccountID)
	}
	if f.SeriesID != nil {
		q = q.Where("series_id = ?", *f.SeriesID)
	}
	return paging.Find[models.Campaign](q, pg, "created_at DESC, id")
}

// Get returns one campaign.
func (s *Service) Get(ctx context.Context, orgID, id uuid.UUID) (*models.Campaign, error) {
	return get(ctx, s.db, orgID, id)
}

func get(ctx context.Context, db *gorm.DB, orgID, id uuid.UUID) (*models.Campaign, error) {
	return tenant.Get[models.Campaign](ctx, db, orgID, id, "campaign not found")
}

// Input creates or changes a campaign; nil fields are unchanged.
type Input struct {
	Name            *string
	AccountID       *uuid.UUID
	TemplateID      *uuid.UUID
	VariableMapping *map[string]string
	ScheduledAt     **time.Time // set to a nil pointer to clear
	// Audience: recipients from contacts (audience.go); set to a nil
	// pointer to go back to uploaded recipients.
	Audience **models.CampaignAudience
	// Recurrence makes the campaign recurring (recurrence.go); set to a
	// nil pointer to make it a single send again.
	Recurrence **models.Recurrence
}

// Create adds a draft campaign. The template must be an APPROVED template of
// the account.
func (s *Service) Create(ctx context.Context, orgID uuid.UUID, createdBy uuid.UUID, in Input) (*models.Campaign, error) {
	if in.Name == nil || in.AccountID == nil || in.TemplateID == nil {
		return nil, apperr.Invalidf("name, account_id and template_id are required")
	}
	c := models.Campaign{OrganizationID: orgID, Status: models.CampaignDraft, CreatedBy: &createdBy}
	c.VariableMapping.V = map[string]string{}
	if err := s.applyInput(ctx, orgID, &c, in); err != nil {
		return nil, err
	}
	if err := checkSeriesShape(&c); err != nil {
		return nil, err
	}
	if err := s.db.WithContext(ctx).Create(&c).Error; err != nil {
		return nil, err
	}
	return &c, nil
}

// applyInput validates in and sets its fields on c (nil fields unchanged):
// the account and template must be the organization's, the template
// sendable from the account.
func (s *Service) applyInput(ctx context.Context, orgID uuid.UUID, c *models.Campaign, in Input) error {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" || len([]rune(name)) > 200 {
			return apperr.Invalidf("name is required (at most 200 characters)")
		}
		c.Name = name
	}
	if in.AccountID != nil {
		if _, err := s.accounts.Get(ctx, orgID, *in.AccountID); err != nil {
			if apperr.Is(err, apperr.NotFound) {
				return apperr.Invalidf("account_id does not name an account of this organization")
			}
			return err
		}
		c.AccountID = in.AccountID
	}
	if in.TemplateID != nil || in.AccountID != nil {
		id := c.TemplateID
		if in.TemplateID != nil {
			id = in.TemplateID
		}
		if id == nil {
			return apperr.Invalidf("template_id is required")
		}
		t, err := s.templates.Sendable(ctx, orgID, c.AccountID, id, "")
		if apperr.Is(err, apperr.NotFound) {
			return apperr.Invalidf("template_id does not name a template of this organization")
		}
		if err != nil {
			return err
		}
		c.TemplateID, c.TemplateName = &t.ID, t.Name
	}
	if in.VariableMapping != nil {
		m := map[string]string{}
		for k, v := range *in.VariableMapping {
			if strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" {
				return apperr.Invalidf("variable_mapping keys and values must be non-empty")
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		c.VariableMapping.V = m
	}
	if in.ScheduledAt != nil {
		c.ScheduledAt = *in.ScheduledAt
	}
	if in.Audience != nil {
		if err := s.applyAudience(ctx, c, *in.Audience); err != nil {
			return err
		}
	}
	if in.Recurrence != nil {
		if err := s.applyRecurrence(ctx, c, *in.Recurrence); err != nil {
			return err
		}
	}
	return nil
}

// Update changes a draft campaign.
func (s *Service) Update(ctx context.Context, orgID, id uuid.UUID, in Input) (*models.Campaign, error) {
	c, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if c.Status != models.CampaignDraft {
		return nil, apperr.Conflictf("only draft campaigns can be updated; this one is %s", c.Status)
	}
	if err := s.applyInput(ctx, orgID, c, in); err != nil {
		return nil, err
	}
	if err := checkSeriesShape(c); err != nil {
		return nil, err
	}
	res := s.db.WithContext(ctx).Model(&models.Campaign{}).Where("id = ? AND status = ?", c.ID, models.CampaignDraft).
		Updates(map[string]any{"name": c.Name, "account_id": c.AccountID, "template_id": c.TemplateID, "template_name": c.TemplateName,
			"variable_mapping": c.VariableMapping, "scheduled_at": c.ScheduledAt, "audience": c.Audience, "recurrence": c.Recurrence, "updated_at": s.now()})
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, apperr.Conflictf("the campaign left draft while it was being updated")
	}
	return s.Get(ctx, orgID, id)
}

// Delete removes a campaign that is not sending, with its recipients.
func (s *Service) Delete(ctx context.Context, orgID, id uuid.UUID) error {
	res := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Where("status <> ?", models.CampaignSending).
		Delete(&models.Campaign{}, "id = ?", id)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		if _, err := s.Get(ctx, orgID, id); err != nil {
			return err
		}
		return apperr.Conflictf("the campaign is sending: pause or cancel it before deleting it")
	}
	return nil
}

// OptOuts tell which numbers belong to contacts opted out of marketing
// (contacts.Service).
type OptOuts interface {
	OptedOutAmong(ctx context.Context, orgID uuid.UUID, numbers []string) (map[string]bool, error)
}
