// Package canned owns canned responses: saved replies that agents insert
// into a conversation, found by name, content or shortcut, with
// {{contact_name}} and {{phone_number}} filled in for a contact when used.
package canned

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/tenant"
	"wharf/internal/orgsettings"
	"wharf/models"
)

// Categories a canned response can have; empty means general.
var Categories = []string{"greeting", "support", "sales", "closing", "general"}

// Limits on the fields: content is a message body (the provider's text
// limit), name and shortcut are picked from lists.
const (
	maxName     = 100
	maxShortcut = 50
	maxContent  = 4096
)

// The spec's error messages.
const (
	msgRequired      = "name and content are required"
	msgNotFound      = "Canned response not found"
	msgDuplicateName = "Canned response with this name already exists"
)

// Contacts reads a contact of the organization (the contacts domain).
type Contacts interface {
	Contact(ctx context.Context, orgID, id uuid.UUID) (*models.Contact, error)
}

// Maskers gives an organization's phone-number masker (orgsettings).
type Maskers interface {
	Masker(ctx context.Context, orgID uuid.UUID) (orgsettings.Masker, error)
}

// Service manages canned responses.
type Service struct {
	db       *gorm.DB
	contacts Contacts
	maskers  Maskers
	now      func() time.Time
}

// NewService wires the canned responses domain.
func NewService(db *gorm.DB, contacts Contacts, maskers Maskers) *Service {
	return &Service{db: db, contacts: contacts, maskers: maskers, now: func() time.Time { return time.Now().UTC() }}
}

// Input is a create or update; nil fields are left as they are (on create:
// defaults).
type Input struct {
	Name     *string
	Content  *string
	Shortcut *string
	Category *string
	IsActive *bool
}

// Filter narrows the list.
type Filter struct {
	Category   string
	Search     string // in name, content or shortcut, case-insensitive
	ActiveOnly bool
}

// List answers the organization's canned responses, most used first (what
// an agent most likely wants), then by name.
func (s *Service) List(ctx context.Context, orgID uuid.UUID, f Filter) ([]models.CannedResponse, error) {
	q := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID))
	if f.Category != "" {
		if !slices.Contains(Categories, f.Category) {
			return nil, apperr.Invalidf("category must be one of %s", strings.Join(Categories, ", "))
		}
		q = q.Where("category = ?", f.Category)
	}
	if term := strings.TrimSpace(f.Search); term != "" {
		like := paging.Contains(term)
		q = q.Where("(name ILIKE ? OR content ILIKE ? OR shortcut ILIKE ?)", like, like, like)
	}
	if f.ActiveOnly {
		q = q.Where("is_active")
	}
	var rows []models.CannedResponse
	err := q.Order("usage_count DESC, lower(name), id").Find(&rows).Error
	return rows, err
}

// Get answers one canned response of the organization.
func (s *Service) Get(ctx context.Context, orgID, id uuid.UUID) (*models.CannedResponse, error) {
	var r models.CannedResponse
	err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Take(&r, "id = ?", id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, apperr.NotFoundf(msgNotFound)
	}
	return &r, err
}

// Create stores a canned response: active, never used.
func (s *Service) Create(ctx context.Context, orgID uuid.UUID, by *uuid.UUID, in Input) (*models.CannedResponse, error) {
	r := models.CannedResponse{OrganizationID: orgID, Category: "general", IsActive: true, CreatedBy: by}
	if in.Name == nil || in.Content == nil {
		return nil, apperr.Invalidf(msgRequired)
	}
	if err := apply(&r, in); err != nil {
		return nil, err
	}
	if err := s.db.WithContext(ctx).Create(&r).Error; err != nil {
		return nil, s.duplicate(ctx, &r, err)
	}
	return &r, nil
}

// Update changes the fields given.
func (s *Service) Update(ctx context.Context, orgID, id uuid.UUID, in Input) (*models.CannedResponse, error) {
	r, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if err := apply(r, in); err != nil {
		return nil, err
	}
	r.UpdatedAt = s.now()
	if err := s.db.WithContext(ctx).Select("name", "content", "shortcut", "category", "is_active", "updated_at").Save(r).Error; err != nil {
		return nil, s.duplicate(ctx, r, err)
	}
	return r, nil
}

// Delete removes a canned response.
func (s *Service) Delete(ctx context.Context, orgID, id uuid.UUID) error {
	res := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Delete(&models.CannedResponse{}, "id = ?", id)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf(msgNotFound)
	}
	return nil
}

// Use counts a use of an active canned response (atomically: concurrent
// uses are all counted) and answers its content, with {{contact_name}} and
// {{phone_number}} filled for contactID when given. The number is shown
// masked when the organization masks numbers: the agent inserting it must
// not learn it that way.
func (s *Service) Use(ctx context.Context, orgID, id uuid.UUID, contactID *uuid.UUID) (*models.CannedResponse, string, error) {
	var c *models.Contact
	if contactID != nil {
		var err error
		if c, err = s.contacts.Contact(ctx, orgID, *contactID); err != nil {
			return nil, "", err
		}
	}
	var r models.CannedResponse
	res := s.db.WithContext(ctx).Raw(`UPDATE canned_responses SET usage_count = usage_count + 1
		WHERE id = ? AND organization_id = ? AND is_active RETURNING *`, id, orgID).Scan(&r)
	if res.Error != nil {
		return nil, "", res.Error
	}
	if res.RowsAffected == 0 {
		if _, err := s.Get(ctx, orgID, id); err != nil {
			return nil, "", err
		}
		return nil, "", apperr.Invalidf("this canned response is inactive")
	}
	content := r.Content
	if c != nil {
		m, err := s.maskers.Masker(ctx, orgID)
		if err != nil {
			return nil, "", err
		}
		name := c.Name
		if name == "" {
			name = c.ProfileName
		}
		content = strings.NewReplacer("{{contact_name}}", m.Name(name), "{{phone_number}}", m.Phone(c.PhoneNumber)).Replace(content)
	}
	return &r, content, nil
}

// apply validates and copies the given fields.
func apply(r *models.CannedResponse, in Input) error {
	if in.Name != nil {
		r.Name = strings.TrimSpace(*in.Name)
	}
	if in.Content != nil {
		r.Content = strings.TrimSpace(*in.Content)
	}
	if r.Name == "" || r.Content == "" {
		return apperr.Invalidf(msgRequired)
	}
	if len([]rune(r.Name)) > maxName {
		return apperr.Invalidf("name is longer than %d characters", maxName)
	}
	if len([]rune(r.Content)) > maxContent {
		return apperr.Invalidf("content is longer than %d characters", maxContent)
	}
	if in.Shortcut != nil {
		r.Shortcut = strings.TrimSpace(*in.Shortcut)
		if len([]rune(r.Shortcut)) > maxShortcut || strings.ContainsAny(r.Shortcut, " \t\n") {
			return apperr.Invalidf("shortcut must be one word of at most %d characters", maxShortcut)
		}
	}
	if in.Category != nil {
		r.Category = strings.TrimSpace(*in.Category)
		if r.Category == "" {
			r.Category = "general"
		}
		if !slices.Contains(Categories, r.Category) {
			return apperr.Invalidf("category must be one of %s", strings.Join(Categories, ", "))
		}
	}
	if in.IsActive != nil {
		r.IsActive = *in.IsActive
	}
	return nil
}

// duplicate turns a unique violation into the spec's conflict about the
// name, or into one about the shortcut (unique too, which the spec does not
// show: a shortcut must name one response to be of use) when another
// response has that shortcut.
func (s *Service) duplicate(ctx context.Context, r *models.CannedResponse, err error) error {
	if !errors.Is(err, gorm.ErrDuplicatedKey) {
		return err
	}
	var taken bool
	if r.Shortcut != "" {
		s.db.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM canned_responses WHERE organization_id = ? AND id <> ?
			AND lower(shortcut) = lower(?))`, r.OrganizationID, r.ID, r.Shortcut).Scan(&taken)
	}
	if taken {
		return apperr.Conflictf("Canned response with this shortcut already exists")
	}
	return apperr.Conflictf(msgDuplicateName)
}
