package identity

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// BootstrapInput names the first admin and organization.
type BootstrapInput struct {
	Email, Password, OrgName string
}

// ErrBootstrapPasswordMissing is returned when there is no user yet and no
// BOOTSTRAP_ADMIN_PASSWORD to create the first one with.
var ErrBootstrapPasswordMissing = errors.New("no user exists yet: set BOOTSTRAP_ADMIN_PASSWORD (at least 8 characters) to create the first admin")

// Bootstrap creates the first organization and its super admin when no user
// exists. It is safe to run on every start and from concurrent replicas: a
// transaction-level advisory lock makes one of them do the work.
func (s *Service) Bootstrap(ctx context.Context, in BootstrapInput) (created bool, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", int64(0x57686172662b)).Error; err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&models.User{}).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if in.Password == "" {
			return ErrBootstrapPasswordMissing
		}
		user, err := s.newUser(ctx, in.Email, in.Password, "Administrator")
		if err != nil {
			var ae *apperr.Error
			if errors.As(err, &ae) {
				return errors.New("BOOTSTRAP_ADMIN_EMAIL / BOOTSTRAP_ADMIN_PASSWORD: " + ae.Message)
			}
			return err
		}
		user.IsSuperAdmin = true
		// The bootstrap organization is closed to self-registration: on a
		// fresh install anyone who learns its id could otherwise join the
		// operator's own organization.
		org, admin, err := createOrganization(ctx, tx, in.OrgName, false)
		if err != nil {
			return err
		}
		if err := insertUserWithMembership(tx, user, org.ID, admin.ID); err != nil {
			return err
		}
		created = true
		return nil
	})
	return created, err
}
