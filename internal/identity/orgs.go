package identity

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"unicode"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/orgsettings"
	"wharf/models"
)

// MaxOrgNameLen bounds organization names.
const MaxOrgNameLen = 100

// CreateOrganization creates an organization with its system roles and makes
// the creator its admin.
func (s *Service) CreateOrganization(ctx context.Context, p *Principal, name string) (*models.Organization, error) {
	if err := sessionOnly(p, "create organizations"); err != nil {
		return nil, err
	}
	var org *models.Organization
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var admin *models.Role
		var err error
		if org, admin, err = createOrganization(ctx, tx, name, true); err != nil {
			return err
		}
		return tx.Create(&models.OrganizationMember{OrganizationID: org.ID, UserID: p.UserID, RoleID: admin.ID}).Error
	})
	return org, err
}

// createOrganization creates the organization and its system roles;
// selfRegistration is the initial self_registration_enabled setting.
func createOrganization(ctx context.Context, tx *gorm.DB, name string, selfRegistration bool) (*models.Organization, *models.Role, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, nil, apperr.Invalidf("name is required")
	}
	if len([]rune(name)) > MaxOrgNameLen {
		return nil, nil, apperr.Invalidf("name must be at most %d characters", MaxOrgNameLen)
	}
	org := &models.Organization{Name: name, Slug: slugify(name), Settings: orgsettings.Initial(selfRegistration)}
	if err := tx.WithContext(ctx).Create(org).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) { // the slug's random suffix repeated
			return nil, nil, apperr.Conflictf("an organization with this slug already exists; retry")
		}
		return nil, nil, err
	}
	admin, err := createSystemRoles(ctx, tx, org.ID)
	if err != nil {
		return nil, nil, err
	}
	return org, admin, nil
}

// slugify derives the slug from the name plus a short random suffix, so two
// organizations of the same name get distinct slugs.
func slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	base := strings.Trim(b.String(), "-")
	if base == "" {
		base = "org"
	}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	return base + "-" + hex.EncodeToString(suffix)
}

// ListOrganizations lists every organization for a super admin, and the
// caller's own organizations for anyone else holding organizations:read:
// tenants do not see each other.
func (s *Service) ListOrganizations(ctx context.Context, p *Principal) ([]models.Organization, error) {
	q := s.db.WithContext(ctx).Order("name, created_at")
	if !p.IsSuperAdmin {
		q = q.Where("id IN (SELECT organization_id FROM organization_members WHERE user_id = ?)", p.UserID)
	}
	var out []models.Organization
	return out, q.Find(&out).Error
}

// Organization returns one organization by id.
func (s *Service) Organization(ctx context.Context, id uuid.UUID) (*models.Organization, error) {
	var o models.Organization
	if err := s.db.WithContext(ctx).Take(&o, "id = ?", id).Error; err != nil {
		return nil, notFound(err, "organization not found")
	}
	return &o, nil
}
