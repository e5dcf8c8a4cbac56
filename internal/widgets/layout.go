package widgets

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
)

// maxLayout bounds a layout request (a dashboard has far fewer tiles).
const maxLayout = 200

// Placement is where a widget goes on the grid.
type Placement struct {
	ID                         uuid.UUID
	GridX, GridY, GridW, GridH int
}

// Layout places the caller's widgets, all or none: the array's order
// becomes their display order. A widget's place is a column of its row, so
// only its owner moves it (another user's shared widget: 403; one the
// caller does not see: 404), and one refused id leaves every widget as it
// was.
func (s *Service) Layout(ctx context.Context, c Caller, layout []Placement) error {
	if len(layout) == 0 {
		return apperr.Invalidf("layout must be a non-empty array of {id, grid_x, grid_y, grid_w, grid_h}")
	}
	if len(layout) > maxLayout {
		return apperr.Invalidf("layout has more than %d widgets", maxLayout)
	}
	seen := make(map[uuid.UUID]bool, len(layout))
	ids := make([]uuid.UUID, len(layout))
	for i, p := range layout {
		if seen[p.ID] {
			return apperr.Invalidf("layout names widget %s twice", p.ID)
		}
		seen[p.ID] = true
		ids[i] = p.ID
		if p.GridX < 0 || p.GridY < 0 || p.GridX > maxGrid || p.GridY > maxGrid ||
			p.GridW < 1 || p.GridH < 1 || p.GridW > maxGrid || p.GridH > maxGrid {
			return apperr.Invalidf("layout of widget %s: grid_x and grid_y must be 0 to %d, grid_w and grid_h 1 to %d", p.ID, maxGrid, maxGrid)
		}
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rows []struct {
			ID        uuid.UUID
			CreatedBy uuid.UUID
		}
		if err := tx.Raw(`SELECT id, created_by FROM dashboard_widgets WHERE organization_id = ? AND id IN ?
			AND (created_by = ? OR is_shared) ORDER BY id FOR UPDATE`, c.OrgID, ids, c.UserID).Scan(&rows).Error; err != nil {
			return err
		}
		found := make(map[uuid.UUID]uuid.UUID, len(rows))
		for _, r := range rows {
			found[r.ID] = r.CreatedBy
		}
		for _, id := range ids {
			owner, ok := found[id]
			if !ok {
				return apperr.NotFoundf("Widget not found: %s", id)
			}
			if owner != c.UserID {
				return apperr.Forbiddenf("only the widget's owner can move it: %s", id)
			}
		}
		values := make([]string, len(layout))
		args := make([]any, 0, len(layout)*6+2)
		for i, p := range layout {
			values[i] = "(?::uuid, ?::int, ?::int, ?::int, ?::int, ?::int)"
			args = append(args, p.ID.String(), p.GridX, p.GridY, p.GridW, p.GridH, i)
		}
		args = append(args, c.OrgID, c.UserID)
		return tx.Exec(`UPDATE dashboard_widgets w SET grid_x = v.x, grid_y = v.y, grid_w = v.w, grid_h = v.h,
			display_order = v.ord, updated_at = now()
			FROM (VALUES `+strings.Join(values, ", ")+`) v (id, x, y, w, h, ord)
			WHERE w.id = v.id AND w.organization_id = ? AND w.created_by = ?`, args...).Error
	})
}
