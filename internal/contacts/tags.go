package contacts

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

// Tag rules from the spec.
const MaxTagName = 50

// TagColors are the allowed colors; empty means gray.
var TagColors = []string{"blue", "red", "green", "yellow", "purple", "gray"}

func normalizeTag(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", apperr.Invalidf("tag name is required")
	}
	if len([]rune(name)) > MaxTagName {
		return "", apperr.Invalidf("tag name must be at most %d characters", MaxTagName)
	}
	return name, nil
}

func normalizeColor(color string) (string, error) {
	color = strings.ToLower(strings.TrimSpace(color))
	if color == "" {
		return "gray", nil
	}
	if !slices.Contains(TagColors, color) {
		return "", apperr.Invalidf("color must be one of %s", strings.Join(TagColors, ", "))
	}
	return color, nil
}

// ListTags returns a page of tags; search matches name or color.
func (s *Service) ListTags(ctx context.Context, orgID uuid.UUID, search string, pg paging.Params) ([]models.Tag, int64, error) {
	q := s.db.WithContext(ctx).Model(&models.Tag{}).Scopes(tenant.Scope(orgID))
	if search = strings.TrimSpace(search); search != "" {
		p := paging.Contains(search)
		q = q.Where("name ILIKE ? OR color ILIKE ?", p, p)
	}
	return paging.Find[models.Tag](q, pg, "lower(name)")
}

// TagInput creates or changes a tag; nil fields are unchanged.
type TagInput struct {
	Name, Color, Description *string
}

// CreateTag adds a tag.
func (s *Service) CreateTag(ctx context.Context, orgID uuid.UUID, in TagInput) (*models.Tag, error) {
	if in.Name == nil {
		return nil, apperr.Invalidf("name is required")
	}
	name, err := normalizeTag(*in.Name)
	if err != nil {
		return nil, err
	}
	color := ""
	if in.Color != nil {
		color = *in.Color
	}
	if color, err = normalizeColor(color); err != nil {
		return nil, err
	}
	t := models.Tag{OrganizationID: orgID, Name: name, Color: color}
	if in.Description != nil {
		t.Description = strings.TrimSpace(*in.Description)
	}
	if err := s.db.WithContext(ctx).Create(&t).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, apperr.Conflictf("a tag with this name already exists")
		}
		return nil, err
	}
	return &t, nil
}

func (s *Service) tagByName(ctx context.Context, db *gorm.DB, orgID uuid.UUID, name string) (*models.Tag, error) {
	var t models.Tag
	err := db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Where("lower(name) = lower(?)", strings.TrimSpace(name)).Take(&t).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, apperr.NotFoundf("tag not found")
	}
	return &t, err
}

// UpdateTag renames or recolors a tag. Contacts reference tags by id, so a
// rename shows on every contact at once.
func (s *Service) UpdateTag(ctx context.Context, orgID uuid.UUID, name string, in TagInput) (*models.Tag, error) {
	t, err := s.tagByName(ctx, s.db, orgID, name)
	if err != nil {
		return nil, err
	}
	if in.Name != nil && strings.TrimSpace(*in.Name) != "" {
		if t.Name, err = normalizeTag(*in.Name); err != nil {
			return nil, err
		}
	}
	if in.Color != nil {
		if t.Color, err = normalizeColor(*in.Color); err != nil {
			return nil, err
		}
	}
	if in.Description != nil {
		t.Description = strings.TrimSpace(*in.Description)
	}
	t.UpdatedAt = s.now()
	if err := s.db.WithContext(ctx).Save(t).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, apperr.Conflictf("a tag with this name already exists")
		}
		return nil, err
	}
	return t, nil
}

// DeleteTag removes a tag from the organization and from every contact.
func (s *Service) DeleteTag(ctx context.Context, orgID uuid.UUID, name string) error {
	t, err := s.tagByName(ctx, s.db, orgID, name)
	if err != nil {
		return err
	}
	return s.db.WithContext(ctx).Delete(t).Error
}

// SetTags replaces the contact's tags with names. Names that are not tags yet
// are created (gray), so tagging from a conversation needs no detour.
func (s *Service) SetTags(ctx context.Context, orgID, contactID uuid.UUID, names []string) (*View, error) {
	clean := make([]string, 0, len(names))
	for _, n := range names {
		n, err := normalizeTag(n)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(clean, func(c string) bool { return strings.EqualFold(c, n) }) {
			clean = append(clean, n)
		}
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := s.get(ctx, tx, orgID, contactID); err != nil {
			return err
		}
		var ids []uuid.UUID
		for _, n := range clean {
			t := models.Tag{OrganizationID: orgID, Name: n, Color: "gray"}
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&t).Error; err != nil {
				return err
			}
			existing, err := s.tagByName(ctx, tx, orgID, n)
			if err != nil {
				return err
			}
			ids = append(ids, existing.ID)
		}
		if err := tx.Where("contact_id = ?", contactID).Delete(&models.ContactTag{}).Error; err != nil {
			return err
		}
		for _, id := range ids {
			if err := tx.Create(&models.ContactTag{ContactID: contactID, TagID: id}).Error; err != nil {
				if errors.Is(err, gorm.ErrDuplicatedKey) { // a concurrent change of the same contact's tags
					return apperr.Conflictf("the contact's tags were changed at the same time; retry")
				}
				return err
			}
		}
		return tx.Model(&models.Contact{}).Where("id = ?", contactID).Update("updated_at", s.now()).Error
	})
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, orgID, contactID)
}
