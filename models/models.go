// Package models holds the gorm row structs and enums. It carries no HTTP
// concerns and no business rules: domain packages under internal/ own the
// queries and the rules, the api package owns the JSON shapes.
package models

import (
	"time"

	"github.com/google/uuid"
)

// Organization is a tenant. Settings is the raw JSON of the optional
// settings; internal/orgsettings applies the defaults.
type Organization struct {
	ID                   uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	Name                 string
	Slug                 string
	Settings             []byte `gorm:"type:jsonb;default:'{}'"`
	ProviderAppSecretEnc []byte
	CreatedAt            time.Time
	UpdatedAt            time.Time
}

// Permission is one `resource:action` key from the fixed catalogue seeded by
// the first migration.
type Permission struct {
	ID          uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	Resource    string
	Action      string
	Description string
}

// Key renders the permission as `resource:action`.
func (p Permission) Key() string { return p.Resource + ":" + p.Action }

// Role belongs to one organization. System roles (Admin, Manager, Agent) are
// created with the organization and are immutable.
type Role struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	Name           string
	Description    string
	IsSystem       bool
	IsDefault      bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// RolePermission links a role to a permission.
type RolePermission struct {
	RoleID       uuid.UUID `gorm:"type:uuid;primaryKey"`
	PermissionID uuid.UUID `gorm:"type:uuid;primaryKey"`
}

// User is a person who logs in. OrganizationID is the organization that
// created the user (the home organization).
type User struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	Email          string
	PasswordHash   string
	FullName       string
	IsActive       bool
	IsAvailable    bool
	IsSuperAdmin   bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// OrganizationMember gives a user a role in an organization.
type OrganizationMember struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	UserID         uuid.UUID `gorm:"type:uuid"`
	RoleID         uuid.UUID `gorm:"type:uuid"`
	IsDefault      bool
	CreatedAt      time.Time
}

// RefreshToken is stored as a SHA-256 hash; the token itself is only ever
// held by the client.
type RefreshToken struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	TokenHash      []byte
	FamilyID       uuid.UUID `gorm:"type:uuid"`
	UserID         uuid.UUID `gorm:"type:uuid"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	ExpiresAt      time.Time
	UsedAt         *time.Time
	RevokedAt      *time.Time
	CreatedAt      time.Time
}

// APIKey is stored as a SHA-256 hash of the full key; KeyPrefix (the first 8
// characters) lets people tell their keys apart.
type APIKey struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	UserID         uuid.UUID `gorm:"type:uuid"`
	Name           string
	KeyHash        []byte
	KeyPrefix      string
	ExpiresAt      *time.Time
	LastUsedAt     *time.Time
	CreatedAt      time.Time
}
