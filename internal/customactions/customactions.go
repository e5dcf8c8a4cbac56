// Package customactions owns custom actions: buttons an organization adds
// to the conversation view to reach its own systems for a contact. A
// webhook action is called by the service (through the SSRF-safe client),
// a URL action is opened by the user's browser through a one-time redirect
// of this service, and a javascript action is handed to the browser with
// its context and never run here. URLs, headers and bodies take variables
// of the contact, the user and the organization, escaped for where they
// stand.
package customactions

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/safehttp"
	"wharf/internal/infra/tenant"
	"wharf/internal/orgsettings"
	"wharf/models"
)

// maxName bounds a button's label.
const maxName = 100

const (
	msgNotFound      = "Custom action not found"
	msgDuplicateName = "Custom action with this name already exists"
)

// Contacts reads a contact of the organization (the contacts domain).
type Contacts interface {
	Contact(ctx context.Context, orgID, id uuid.UUID) (*models.Contact, error)
}

// Settings gives an organization's name and its phone-number masker
// (orgsettings).
type Settings interface {
	Get(ctx context.Context, orgID uuid.UUID) (string, orgsettings.Settings, error)
	Masker(ctx context.Context, orgID uuid.UUID) (orgsettings.Masker, error)
}

// Service manages and runs custom actions.
type Service struct {
	db       *gorm.DB
	redis    *redis.Client
	contacts Contacts
	settings Settings
	policy   safehttp.Policy
	http     *http.Client
	log      *slog.Logger
	now      func() time.Time
}

// Deps are the custom actions' collaborators.
type Deps struct {
	DB       *gorm.DB
	Redis    *redis.Client // one-time redirect tokens of URL actions
	Contacts Contacts
	Settings Settings
	Policy   safehttp.Policy // the outbound address rule webhook actions are held to (OUTBOUND_ALLOW_PRIVATE)
	Log      *slog.Logger
}

// NewService wires the custom actions domain.
func NewService(d Deps) *Service {
	return &Service{db: d.DB, redis: d.Redis, contacts: d.Contacts, settings: d.Settings, policy: d.Policy,
		http: d.Policy.Client(webhookTimeout), log: d.Log, now: func() time.Time { return time.Now().UTC() }}
}

// Input is a create or update; nil fields are left as they are (on create:
// defaults).
type Input struct {
	Name         *string
	Icon         *string
	ActionType   *string
	Config       map[string]any // nil: unchanged; on update a given config replaces the stored one
	IsActive     *bool
	DisplayOrder *int
}

// List answers the organization's custom actions in the order their
// buttons show: display_order, then name.
func (s *Service) List(ctx context.Context, orgID uuid.UUID) ([]models.CustomAction, error) {
	var rows []models.CustomAction
	err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Order("display_order, lower(name), id").Find(&rows).Error
	return rows, err
}

// Get answers one custom action of the organization.
func (s *Service) Get(ctx context.Context, orgID, id uuid.UUID) (*models.CustomAction, error) {
	var a models.CustomAction
	err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Take(&a, "id = ?", id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, apperr.NotFoundf(msgNotFound)
	}
	return &a, err
}

// Create stores a custom action: active and first in order unless said
// otherwise, with the zap icon when none is given (the spec requires none).
func (s *Service) Create(ctx context.Context, orgID uuid.UUID, by *uuid.UUID, in Input) (*models.CustomAction, error) {
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return nil, apperr.Invalidf("name is required")
	}
	if in.ActionType == nil || strings.TrimSpace(*in.ActionType) == "" {
		return nil, apperr.Invalidf("action_type is required")
	}
	if in.Config == nil {
		return nil, apperr.Invalidf("config is required")
	}
	cfg, err := keepSecrets(in.Config, nil) // a mask on create has nothing to keep
	if err != nil {
		return nil, err
	}
	in.Config = cfg
	a := models.CustomAction{OrganizationID: orgID, Icon: "zap", IsActive: true, CreatedBy: by}
	if err := s.apply(&a, in); err != nil {
		return nil, err
	}
	if err := s.db.WithContext(ctx).Create(&a).Error; err != nil {
		return nil, duplicate(err)
	}
	return &a, nil
}

// Update changes the fields given and checks the result as a whole: a new
// action_type without a new config re-checks the stored config as the new
// type's.
func (s *Service) Update(ctx context.Context, orgID, id uuid.UUID, in Input) (*models.CustomAction, error) {
	a, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if in.Config != nil {
		if in.Config, err = keepSecrets(in.Config, a.Config.V); err != nil {
			return nil, err
		}
	} else if in.ActionType != nil {
		in.Config = a.Config.V
	}
	if err := s.apply(a, in); err != nil {
		return nil, err
	}
	a.UpdatedAt = s.now()
	err = s.db.WithContext(ctx).Select("name", "icon", "action_type", "config", "is_active", "display_order", "updated_at").Save(a).Error
	if err != nil {
		return nil, duplicate(err)
	}
	return a, nil
}

// Delete removes a custom action.
func (s *Service) Delete(ctx context.Context, orgID, id uuid.UUID) error {
	res := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Delete(&models.CustomAction{}, "id = ?", id)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf(msgNotFound)
	}
	return nil
}

// apply validates and copies the given fields.
func (s *Service) apply(a *models.CustomAction, in Input) error {
	if in.Name != nil {
		a.Name = strings.TrimSpace(*in.Name)
		if a.Name == "" {
			return apperr.Invalidf("name is required")
		}
		if len([]rune(a.Name)) > maxName {
			return apperr.Invalidf("name is longer than %d characters", maxName)
		}
	}
	if in.Icon != nil {
		a.Icon = strings.TrimSpace(*in.Icon)
		if a.Icon == "" {
			a.Icon = "zap"
		}
		if !slices.Contains(Icons, a.Icon) {
			return apperr.Invalidf("icon must be one of %s", strings.Join(Icons, ", "))
		}
	}
	if in.ActionType != nil {
		a.ActionType = strings.TrimSpace(*in.ActionType)
		if !slices.Contains(ActionTypes, a.ActionType) {
			return apperr.Invalidf("action_type must be one of %s", strings.Join(ActionTypes, ", "))
		}
	}
	if in.Config != nil {
		cfg, err := normalize(a.ActionType, in.Config, s.policy)
		if err != nil {
			return err
		}
		a.Config.V = cfg
	}
	if in.IsActive != nil {
		a.IsActive = *in.IsActive
	}
	if in.DisplayOrder != nil {
		if *in.DisplayOrder < math.MinInt32 || *in.DisplayOrder > math.MaxInt32 {
			return apperr.Invalidf("display_order is out of range")
		}
		a.DisplayOrder = *in.DisplayOrder
	}
	return nil
}

// duplicate turns the name's unique violation into the conflict it is.
func duplicate(err error) error {
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return apperr.Conflictf(msgDuplicateName)
	}
	return err
}
