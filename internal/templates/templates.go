// Package templates owns message templates: lookup for sends, the
// placeholders a send must fill, and building the provider's template
// components from a caller's values.
package templates

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/memo"
	"wharf/internal/infra/tenant"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// Service manages templates: locally, and mirrored to the provider.
type Service struct {
	db       *gorm.DB
	accounts *accounts.Service
	provider *platform.Client
	enq      *jobs.Enqueuer
	log      *slog.Logger
	now      func() time.Time
	// recent serves RecentSendable; every change made through this Service
	// clears it.
	recent *memo.Cache[sendableKey, models.Template]
}

// NewService wires the templates domain.
func NewService(db *gorm.DB, accts *accounts.Service, provider *platform.Client, enq *jobs.Enqueuer, log *slog.Logger) *Service {
	return &Service{db: db, accounts: accts, provider: provider, enq: enq, log: log, now: func() time.Time { return time.Now().UTC() },
		recent: memo.New[sendableKey, models.Template](RecentTTL, 10_000)}
}

// Sendable finds the template to send by id, or by name for the account
// (preferring an approved one), and insists that it is APPROVED. With an id
// and no account, the template's own account is the one to send from.
func (s *Service) Sendable(ctx context.Context, orgID uuid.UUID, accountID *uuid.UUID, id *uuid.UUID, name string) (*models.Template, error) {
	var t models.Template
	q := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID))
	var err error
	switch {
	case id != nil:
		err = q.Take(&t, "id = ?", *id).Error
	case strings.TrimSpace(name) != "" && accountID != nil:
		err = q.Where("account_id = ? AND name = ?", *accountID, strings.TrimSpace(name)).
			Order("status = 'APPROVED' DESC, updated_at DESC").Take(&t).Error
	default:
		return nil, apperr.Invalidf("template_name or template_id is required")
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, apperr.NotFoundf("template not found")
	}
	if err != nil {
		return nil, err
	}
	if err := CheckSendable(&t, accountID); err != nil {
		return nil, err
	}
	return &t, nil
}

// CheckSendable applies Sendable's rules to a template row read elsewhere
// (the worker's send claim reads it with the message): it must belong to
// the account, when one is given, and be APPROVED.
func CheckSendable(t *models.Template, accountID *uuid.UUID) error {
	if accountID != nil && t.AccountID != *accountID {
		return apperr.Invalidf("template %q belongs to another account", t.Name)
	}
	if t.Status != models.TemplateApproved {
		return apperr.Invalidf("template %q is %s: only APPROVED templates can be sent", t.Name, t.Status)
	}
	return nil
}

// RecentTTL is how long RecentSendable may answer from memory.
const RecentTTL = 2 * time.Second

type sendableKey struct {
	org, account, id uuid.UUID
	name             string
}

// RecentSendable is Sendable answered from this process's memory for up to
// RecentTTL: for the template send path, whose worker calls Sendable again
// before it sends, so that a template paused or deleted on another replica
// (or by a review webhook) within the last seconds fails the message there
// instead of refusing the request. Refusals are not remembered.
func (s *Service) RecentSendable(ctx context.Context, orgID uuid.UUID, accountID *uuid.UUID, id *uuid.UUID, name string) (*models.Template, error) {
	k := sendableKey{org: orgID, name: strings.TrimSpace(name)}
	if accountID != nil {
		k.account = *accountID
	}
	if id != nil {
		k.id = *id
	}
	if t, ok := s.recent.Get(k); ok {
		return &t, nil
	}
	t, err := s.Sendable(ctx, orgID, accountID, id, name)
	if err != nil {
		return nil, err
	}
	s.recent.Put(k, *t)
	return t, nil
}

// IsMarketing tells whether the template is of the MARKETING category,
// which contacts opted out of marketing are not sent (internal/outbound).
func IsMarketing(t *models.Template) bool {
	return strings.EqualFold(strings.TrimSpace(t.Category), "MARKETING")
}
