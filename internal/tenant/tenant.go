// Package tenant is the one place that scopes queries and contexts to an
// organization. Every row that belongs to an organization carries
// organization_id, and every domain query over such rows goes through Scope,
// so that a forgotten WHERE cannot leak another tenant's data.
package tenant

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Scope restricts a gorm query to one organization's rows. The column is
// qualified with the statement's table so the scope stays correct in joins.
func Scope(orgID uuid.UUID) func(*gorm.DB) *gorm.DB {
	return func(tx *gorm.DB) *gorm.DB {
		return tx.Where(clause.Eq{
			Column: clause.Column{Table: clause.CurrentTable, Name: "organization_id"},
			Value:  orgID,
		})
	}
}

type ctxKey struct{}

// WithOrg returns a context carrying the organization a job or request acts for.
func WithOrg(ctx context.Context, orgID uuid.UUID) context.Context {
	return context.WithValue(ctx, ctxKey{}, orgID)
}

// OrgFrom returns the organization carried by ctx.
func OrgFrom(ctx context.Context) (uuid.UUID, bool) {
	id, ok := ctx.Value(ctxKey{}).(uuid.UUID)
	return id, ok
}
