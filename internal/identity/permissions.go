package identity

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// System role names. They are created with every organization and cannot be
// edited or deleted.
const (
	RoleAdmin   = "Admin"
	RoleManager = "Manager"
	RoleAgent   = "Agent"
)

// systemRoles is the permission matrix of the system roles; docs/API.md shows
// it. Admin holds every permission. Agent is the default role for new users:
// the least privilege that lets someone work the inbox.
var systemRoles = []struct {
	Name        string
	Description string
	IsDefault   bool
	Permissions []string // nil means all
}{
	{RoleAdmin, "Full access to the organization", false, nil},
	// Creating, changing and deleting teams is the Admin's (the spec's
	// matrix); a Manager manages the teams they are made manager of
	// (internal/teams).
	{RoleManager, "Runs messaging, campaigns, chatbot and teams; no access to users' roles, accounts, webhooks or API keys", false, []string{
		"users:read", "roles:read",
		"teams:read",
		"canned_responses:read", "canned_responses:create", "canned_responses:update", "canned_responses:delete",
		"custom_actions:read", "custom_actions:execute", "custom_actions:create", "custom_actions:update", "custom_actions:delete",
		"transfers:read", "transfers:write", "transfers:assign",
		"contacts:read", "contacts:create", "contacts:update", "contacts:delete", "contacts:export", "contacts:import",
		"tags:export", "tags:import",
		"messages:read", "messages:create",
		"templates:read", "templates:create", "templates:update", "templates:delete",
		"campaigns:read", "campaigns:create", "campaigns:update", "campaigns:delete",
		"chatbot:read", "chatbot:update",
		"flows:read", "flows:create", "flows:update", "flows:delete",
		"catalogs:read", "catalogs:create", "catalogs:update", "catalogs:delete",
		"settings:read", "accounts:read", "webhooks:read", "analytics:read", "analytics:share",
		"call_logs:read", "call_transfers:read", "call_transfers:write",
		"outgoing_calls:read", "outgoing_calls:write",
	}},
	{RoleAgent, "Handles conversations and calls", true, []string{
		"contacts:read", "contacts:create", "contacts:update",
		"messages:read", "messages:create",
		"templates:read", "chatbot:read", "flows:read", "teams:read", "canned_responses:read", "catalogs:read",
		"custom_actions:read", "custom_actions:execute",
		"transfers:read", "transfers:write",
		"call_logs:read", "call_transfers:read", "call_transfers:write",
		"outgoing_calls:read", "outgoing_calls:write",
	}},
}

// SystemRolePermissions returns the keys a system role holds (nil for Admin,
// meaning all); tests and docs use it.
func SystemRolePermissions(name string) []string {
	for _, r := range systemRoles {
		if r.Name == name {
			return slices.Clone(r.Permissions)
		}
	}
	return nil
}

// Permissions lists the permission catalogue ordered by resource and action.
func (s *Service) Permissions(ctx context.Context) ([]models.Permission, error) {
	var out []models.Permission
	err := s.db.WithContext(ctx).Order("resource, action").Find(&out).Error
	return out, err
}

// resolvePermissionKeys maps `resource:action` keys to permission rows; any
// unknown key is a 400 that names it.
func resolvePermissionKeys(ctx context.Context, db *gorm.DB, keys []string) ([]models.Permission, error) {
	var all []models.Permission
	if err := db.WithContext(ctx).Find(&all).Error; err != nil {
		return nil, err
	}
	byKey := make(map[string]models.Permission, len(all))
	for _, p := range all {
		byKey[p.Key()] = p
	}
	var out []models.Permission
	var unknown []string
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		p, ok := byKey[k]
		if !ok {
			unknown = append(unknown, k)
			continue
		}
		out = append(out, p)
	}
	if len(unknown) > 0 {
		return nil, apperr.Invalidf("unknown permission keys: %s (GET /api/permissions lists the valid ones)", strings.Join(unknown, ", "))
	}
	return out, nil
}

// createSystemRoles creates Admin, Manager and Agent for a new organization
// and returns the Admin role.
func createSystemRoles(ctx context.Context, tx *gorm.DB, orgID uuid.UUID) (*models.Role, error) {
	var all []models.Permission
	if err := tx.WithContext(ctx).Find(&all).Error; err != nil {
		return nil, err
	}
	var admin *models.Role
	for _, sr := range systemRoles {
		role := &models.Role{OrganizationID: orgID, Name: sr.Name, Description: sr.Description, IsSystem: true, IsDefault: sr.IsDefault}
		if err := tx.Create(role).Error; err != nil {
			return nil, err
		}
		perms := all
		if sr.Permissions != nil {
			var err error
			if perms, err = resolvePermissionKeys(ctx, tx, sr.Permissions); err != nil {
				return nil, err
			}
		}
		if err := setRolePermissions(tx, role.ID, perms); err != nil {
			return nil, err
		}
		if sr.Name == RoleAdmin {
			admin = role
		}
	}
	return admin, nil
}

func setRolePermissions(tx *gorm.DB, roleID uuid.UUID, perms []models.Permission) error {
	if err := tx.Where("role_id = ?", roleID).Delete(&models.RolePermission{}).Error; err != nil {
		return err
	}
	if len(perms) == 0 {
		return nil
	}
	rows := make([]models.RolePermission, len(perms))
	for i, p := range perms {
		rows[i] = models.RolePermission{RoleID: roleID, PermissionID: p.ID}
	}
	return tx.Create(&rows).Error
}
