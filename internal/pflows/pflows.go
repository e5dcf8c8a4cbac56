// Package pflows owns platform-native flows ("platform flows"): forms the
// provider renders inside the chat, defined by a flow JSON, created here as
// drafts and then saved to, published at and deprecated at the provider.
// They are not the chatbot's conversation flows.
//
// States: a flow is DRAFT from its creation; publish moves it to PUBLISHED
// and deprecate to DEPRECATED, which is final. Only a DRAFT is changed
// (update, save to the provider): the provider refuses to change a
// published flow, so the row would show what users do not get. A refused
// transition is answered 409 here and never reaches the provider. Each
// provider operation holds the flow's row lock while it calls the provider,
// so two saves of one flow never create it twice at the provider and two
// transitions never cross.
//
// Files: pflows.go (the service, reads, create, update, delete),
// provider.go (save to the provider, publish, deprecate, sync), send.go
// (what a flow message needs).
package pflows

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/tenant"
	"wharf/models"
	"wharf/platform"
)

// Categories the provider accepts for a flow.
var Categories = []string{"SIGN_UP", "SIGN_IN", "APPOINTMENT_BOOKING", "LEAD_GENERATION", "CONTACT_US",
	"CUSTOMER_SUPPORT", "SURVEY", "OTHER"}

// Statuses a flow can have; the list filter accepts them.
var Statuses = []string{models.FlowDraft, models.FlowPublished, models.FlowDeprecated, models.FlowBlocked, models.FlowThrottled}

// maxName is the provider's limit on a flow's name.
const maxName = 200

const msgNotFound = "flow not found"

// Accounts opens an organization's platform account with its credentials
// (the accounts domain).
type Accounts interface {
	Get(ctx context.Context, orgID, id uuid.UUID) (*accounts.Account, error)
}

// Service manages platform flows.
type Service struct {
	db       *gorm.DB
	accounts Accounts
	provider *platform.Client
	now      func() time.Time
}

// NewService wires the platform flows domain.
func NewService(db *gorm.DB, accts Accounts, provider *platform.Client) *Service {
	return &Service{db: db, accounts: accts, provider: provider, now: func() time.Time { return time.Now().UTC() }}
}

// Filter narrows a list.
type Filter struct {
	Status    string
	AccountID *uuid.UUID
}

// List answers a page of the organization's flows, newest first.
func (s *Service) List(ctx context.Context, orgID uuid.UUID, f Filter, pg paging.Params) ([]models.PlatformFlow, int64, error) {
	q := s.db.WithContext(ctx).Model(&models.PlatformFlow{}).Scopes(tenant.Scope(orgID))
	if f.Status != "" {
		status := strings.ToUpper(strings.TrimSpace(f.Status))
		if !slices.Contains(Statuses, status) {
			return nil, 0, apperr.Invalidf("status must be one of %s", strings.Join(Statuses, ", "))
		}
		q = q.Where("status = ?", status)
	}
	if f.AccountID != nil {
		q = q.Where("account_id = ?", *f.AccountID)
	}
	return paging.Find[models.PlatformFlow](q, pg, "created_at DESC, id")
}

// Get answers one flow of the organization.
func (s *Service) Get(ctx context.Context, orgID, id uuid.UUID) (*models.PlatformFlow, error) {
	return tenant.Get[models.PlatformFlow](ctx, s.db, orgID, id, msgNotFound)
}

// Input creates or changes a flow; nil fields are left as they are.
type Input struct {
	AccountID      *uuid.UUID
	Name           *string
	Categories     *[]string
	JSONDefinition map[string]any
}

// Create stores a DRAFT flow for one of the organization's accounts. It
// reaches the provider only when saved (SaveToProvider).
func (s *Service) Create(ctx context.Context, orgID uuid.UUID, in Input) (*models.PlatformFlow, error) {
	if in.AccountID == nil {
		return nil, apperr.Invalidf("account_id is required")
	}
	if in.Name == nil {
		return nil, apperr.Invalidf("name is required")
	}
	if in.Categories == nil {
		return nil, apperr.Invalidf("categories are required (one or more of %s)", strings.Join(Categories, ", "))
	}
	f := models.PlatformFlow{ID: uuid.New(), OrganizationID: orgID, Status: models.FlowDraft, NeedsSave: true}
	if err := apply(&f, in); err != nil {
		return nil, err
	}
	if f.JSONDefinition.V == nil {
		f.JSONDefinition.V = map[string]any{}
	}
	f.ValidationErrors.V = []map[string]any{}
	// The account is checked after the body, so that a bad body is a 400
	// whatever the account.
	if _, err := s.accounts.Get(ctx, orgID, *in.AccountID); err != nil {
		return nil, err
	}
	f.AccountID = *in.AccountID
	if err := s.db.WithContext(ctx).Create(&f).Error; err != nil {
		return nil, err
	}
	return s.Get(ctx, orgID, f.ID)
}

// Update changes a DRAFT flow's name, categories or definition. The change
// is here only until the flow is saved to the provider again.
func (s *Service) Update(ctx context.Context, orgID, id uuid.UUID, in Input) (*models.PlatformFlow, error) {
	if in.AccountID != nil {
		return nil, apperr.Invalidf("account_id cannot be changed")
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		f, err := s.locked(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		if f.Status != models.FlowDraft {
			return apperr.Conflictf("only DRAFT flows can be changed; this one is %s", f.Status)
		}
		if err := apply(f, in); err != nil {
			return err
		}
		return tx.Model(f).Updates(map[string]any{"name": f.Name, "categories": f.Categories, "json_definition": f.JSONDefinition,
			"needs_save": true, "updated_at": s.now()}).Error
	})
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, orgID, id)
}

// Delete removes a flow. A DRAFT saved to the provider is deleted there
// first (the provider deletes only drafts); a PUBLISHED flow is refused
// (deprecate it first: contacts may be filling it in); a DEPRECATED (or
// provider-blocked) one is removed here only, and a later sync brings it
// back while the provider still lists it.
func (s *Service) Delete(ctx context.Context, orgID, id uuid.UUID) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		f, err := s.locked(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		if f.Status == models.FlowPublished {
			return apperr.Conflictf("a PUBLISHED flow cannot be deleted; deprecate it first")
		}
		if f.Status == models.FlowDraft && f.ProviderFlowID != nil {
			a, err := s.accounts.Get(ctx, orgID, f.AccountID)
			if err != nil {
				return err
			}
			// A flow the provider no longer knows (code 100) is deleted here anyway.
			if err := s.provider.DeleteFlow(ctx, a.Creds(), *f.ProviderFlowID); err != nil {
				if pe, ok := platform.AsError(err); !ok || pe.Code != 100 {
					return providerError("deleting the flow", err)
				}
			}
		}
		return tx.Delete(f).Error
	})
}

// locked reads the flow under a row lock, for the length of tx.
func (s *Service) locked(ctx context.Context, tx *gorm.DB, orgID, id uuid.UUID) (*models.PlatformFlow, error) {
	return tenant.Get[models.PlatformFlow](ctx, tx.Clauses(forUpdate), orgID, id, msgNotFound)
}

func apply(f *models.PlatformFlow, in Input) error {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" {
			return apperr.Invalidf("name is required")
		}
		if len([]rune(name)) > maxName {
			return apperr.Invalidf("name must be at most %d characters", maxName)
		}
		f.Name = name
	}
	if in.Categories != nil {
		cats, err := checkCategories(*in.Categories)
		if err != nil {
			return err
		}
		f.Categories.V = cats
	}
	if in.JSONDefinition != nil {
		f.JSONDefinition.V = in.JSONDefinition
	}
	return nil
}

// checkCategories normalises categories (upper case, no repeats) and checks
// them against the provider's list.
func checkCategories(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for _, c := range in {
		c = strings.ToUpper(strings.TrimSpace(c))
		if !slices.Contains(Categories, c) {
			return nil, apperr.Invalidf("categories must be one or more of %s", strings.Join(Categories, ", "))
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, apperr.Invalidf("categories are required (one or more of %s)", strings.Join(Categories, ", "))
	}
	return out, nil
}

// providerError turns the provider's refusal into a 400 with its words, and
// its failure into a 502.
func providerError(step string, err error) error {
	pe, ok := platform.AsError(err)
	if !ok {
		return err
	}
	if pe.Class == platform.Permanent {
		return apperr.Invalidf("the provider refused %s: %s", step, pe.Error())
	}
	return apperr.Upstreamf("the provider failed while %s: %s", step, pe.Error())
}
