// Package tenant is the one place that scopes queries to an organization.
// Every row that belongs to an organization carries organization_id, and
// every domain query over such rows goes through Scope (or Get), so that a
// forgotten WHERE cannot leak another tenant's data.
package tenant

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wharf/internal/infra/apperr"
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

// Get loads the organization's row of type T with this id. A row that does
// not exist and a row of another organization are the same answer, an
// apperr.NotFound with msg ("campaign not found"), so that callers cannot
// probe other tenants' ids. db may carry clauses (a row lock).
func Get[T any](ctx context.Context, db *gorm.DB, orgID, id uuid.UUID, msg string) (*T, error) {
	var row T
	err := db.WithContext(ctx).Scopes(Scope(orgID)).Take(&row, "id = ?", id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, apperr.NotFoundf("%s", msg)
	}
	if err != nil {
		return nil, err
	}
	return &row, nil
}
