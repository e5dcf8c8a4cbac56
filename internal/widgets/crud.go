package widgets

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

// visible scopes to the widgets the caller sees: its own and the
// organization's shared ones.
func visible(c Caller) func(*gorm.DB) *gorm.DB {
	return func(tx *gorm.DB) *gorm.DB {
		return tx.Scopes(tenant.Scope(c.OrgID)).Where("(created_by = ? OR is_shared)", c.UserID)
	}
}

// List answers the caller's dashboard: its own widgets and the shared ones,
// in display order (then oldest first).
func (s *Service) List(ctx context.Context, c Caller) ([]models.DashboardWidget, error) {
	var rows []models.DashboardWidget
	err := s.db.WithContext(ctx).Scopes(visible(c)).Order("display_order, created_at, id").Find(&rows).Error
	return rows, err
}

// Get answers a widget the caller sees (404 otherwise, also for another
// user's private widget: its existence is not the caller's business).
func (s *Service) Get(ctx context.Context, c Caller, id uuid.UUID) (*models.DashboardWidget, error) {
	var w models.DashboardWidget
	err := s.db.WithContext(ctx).Scopes(visible(c)).Take(&w, "id = ?", id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, apperr.NotFoundf(msgNotFound)
	}
	return &w, err
}

// owned answers a widget the caller may change: 404 when the caller does
// not see it, 403 when it is another user's shared widget.
func (s *Service) owned(ctx context.Context, db *gorm.DB, c Caller, id uuid.UUID) (*models.DashboardWidget, error) {
	var w models.DashboardWidget
	err := db.WithContext(ctx).Scopes(visible(c)).Take(&w, "id = ?", id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, apperr.NotFoundf(msgNotFound)
	}
	if err != nil {
		return nil, err
	}
	if w.CreatedBy != c.UserID {
		return nil, apperr.Forbiddenf("only the widget's owner can change it")
	}
	return &w, nil
}

// MaxPerUser bounds a user's widgets in an organization: a dashboard's
// figures are computed together (GET /api/widgets/data), one statement or
// two each, so the tiles of one dashboard must stay few.
const MaxPerUser = 50

// Create stores a widget of the caller's, after the caller's other widgets;
// a caller who has MaxPerUser widgets in the organization gets a 409 and
// nothing is stored.
func (s *Service) Create(ctx context.Context, c Caller, in Input) (*models.DashboardWidget, error) {
	w := models.DashboardWidget{OrganizationID: c.OrgID, CreatedBy: c.UserID, ShowChange: true}
	if in.Name == nil {
		return nil, apperr.Invalidf("name is required")
	}
	if err := apply(&w, in, true); err != nil {
		return nil, err
	}
	if err := checkShare(c, false, in.IsShared); err != nil {
		return nil, err
	}
	if in.IsShared != nil {
		w.IsShared = *in.IsShared
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// One creation per user and organization at a time, so that two
		// neither take the same place nor both pass the bound (locking the
		// caller's rows would not do: a concurrent creation's new row is
		// not among them, nor is anything for a user with none yet).
		if err := tx.Exec(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`,
			"dashboard_widgets/"+c.OrgID.String()+"/"+c.UserID.String()).Error; err != nil {
			return err
		}
		var mine struct {
			N    int
			Last *int
		}
		if err := tx.Raw(`SELECT count(*) AS n, max(display_order) AS last FROM dashboard_widgets
			WHERE organization_id = ? AND created_by = ?`, c.OrgID, c.UserID).Scan(&mine).Error; err != nil {
			return err
		}
		if mine.N >= MaxPerUser {
			return apperr.Conflictf("you have %d widgets, the most a user may have; delete one first", MaxPerUser)
		}
		if mine.Last != nil {
			w.DisplayOrder = *mine.Last + 1
		}
		return tx.Create(&w).Error
	})
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// checkShare refuses making a widget shared without analytics:share;
// keeping a shared widget shared, or unsharing it, needs nothing more.
func checkShare(c Caller, wasShared bool, want *bool) error {
	if want != nil && *want && !wasShared && !c.CanShare {
		return apperr.Forbiddenf("sharing a widget needs the analytics:share permission")
	}
	return nil
}

// Update changes the caller's own widget.
func (s *Service) Update(ctx context.Context, c Caller, id uuid.UUID, in Input) (*models.DashboardWidget, error) {
	w, err := s.owned(ctx, s.db, c, id)
	if err != nil {
		return nil, err
	}
	if err := apply(w, in, false); err != nil {
		return nil, err
	}
	if err := checkShare(c, w.IsShared, in.IsShared); err != nil {
		return nil, err
	}
	if in.IsShared != nil {
		w.IsShared = *in.IsShared
	}
	w.UpdatedAt = s.now()
	res := s.db.WithContext(ctx).Model(w).Where("organization_id = ? AND created_by = ?", c.OrgID, c.UserID).
		Select("name", "description", "data_source", "metric", "field", "filters", "display_type", "chart_type", "group_by_field",
			"show_change", "color", "size", "grid_x", "grid_y", "grid_w", "grid_h", "config", "is_shared", "updated_at").Updates(w)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, apperr.NotFoundf(msgNotFound)
	}
	return w, nil
}

// Delete removes the caller's own widget.
func (s *Service) Delete(ctx context.Context, c Caller, id uuid.UUID) error {
	if _, err := s.owned(ctx, s.db, c, id); err != nil {
		return err
	}
	res := s.db.WithContext(ctx).Where("organization_id = ? AND created_by = ?", c.OrgID, c.UserID).Delete(&models.DashboardWidget{}, "id = ?", id)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf(msgNotFound)
	}
	return nil
}
