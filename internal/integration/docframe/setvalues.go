package docframe

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// SetValues writes fields of a stored document directly, as Frappe's
// frappe.db.set_value does: no hooks, no events, no permission check, and
// allowed on a submitted document. It is for fields the integration keeps
// in step with something outside the document (a bulk message's status
// and counters follow its campaign), which users never edit. Values are
// coerced by field type and Select values checked; Table and Password
// fields cannot be set this way. db is the caller's transaction (nil: the
// framework's own connection). A missing document is a DoesNotExistError.
func (s *Service) SetValues(ctx context.Context, db *gorm.DB, orgID uuid.UUID, doctype, name string, values map[string]any) error {
	if db == nil {
		db = s.db
	}
	// Through the cache even when db is the caller's transaction: no
	// caller's transaction writes DocTypes (metacache.go).
	m, err := s.meta(ctx, db, orgID, doctype)
	if err != nil {
		return err
	}
	patch := make(map[string]any, len(values))
	for k, v := range values {
		f, ok := m.byName[k]
		if !ok || f.kind() == kindNone || f.kind() == kindTable || f.kind() == kindPassword {
			return Validationf("%s has no field %s that can be set directly", doctype, show(k))
		}
		cv, err := coerce(f, v)
		if err != nil {
			return err
		}
		if s, ok := cv.(string); ok && f.Fieldtype == TypeSelect && !slices.Contains(f.selectOptions(), s) {
			return Validationf("%s cannot be %s", f.label(), show(s))
		}
		patch[k] = cv
	}
	body, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	res := db.WithContext(ctx).Exec(`UPDATE docframe_documents SET data = data || CAST(? AS jsonb), modified = ?
		WHERE organization_id = ? AND doctype = ? AND name = ?`, string(body), s.now(), orgID, m.Name, name)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return notFoundf("%s %s not found", m.Name, name)
	}
	return nil
}
