package contacts

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
)

// Who may see which contacts (issue 22, docs/API.md "Inbox"): a user
// whose role holds contacts:read sees every contact of the organization;
// one without it (who reaches a contact through messages:read) sees only
// the contacts assigned to them and those whose active transfer they hold,
// the rule the event stream already applies to message events
// (internal/live, Audience.ContactScoped). Every lookup of one contact by
// such a user answers 404 for the others, as a lookup in another
// organization does: the id tells nothing.

// Viewer is who reads contacts.
type Viewer struct {
	UserID uuid.UUID
	// All: the viewer holds contacts:read and sees every contact.
	All bool
}

// ViewerOf is the viewer of a user with permission check can.
func ViewerOf(userID uuid.UUID, can func(string) bool) Viewer {
	return Viewer{UserID: userID, All: can("contacts:read")}
}

// EveryContact sees every contact (internal callers).
var EveryContact = Viewer{All: true}

// mineCondition narrows a contact query to v's own contacts: assigned to v,
// or with an active transfer v holds. It is written as a semi-join on one
// small set (the union) rather than an OR with a subquery, so that the
// planner can start from the viewer's few contacts instead of filtering
// every row of the organization's list.
func mineCondition(orgID uuid.UUID, v Viewer) (string, []any) {
	return `contacts.id IN (SELECT m.id FROM contacts m WHERE m.organization_id = ? AND m.assigned_to = ?
		UNION SELECT t.contact_id FROM agent_transfers t WHERE t.organization_id = ? AND t.agent_id = ? AND t.status = 'active')`,
		[]any{orgID, v.UserID, orgID, v.UserID}
}

// scoped narrows q (over contacts) to what v may see.
func scoped(q *gorm.DB, orgID uuid.UUID, v Viewer) *gorm.DB {
	if v.All {
		return q
	}
	cond, args := mineCondition(orgID, v)
	return q.Where(cond, args...)
}

// CheckVisible answers nil when v may see the contact, else 404 contact not
// found. A viewer of every contact is not checked here: the routes that
// call it look the contact up in the organization themselves (and answer
// the same 404).
func (s *Service) CheckVisible(ctx context.Context, orgID uuid.UUID, v Viewer, id uuid.UUID) error {
	if v.All {
		return nil
	}
	var n int64
	q := s.db.WithContext(ctx).Table("contacts").Where("contacts.organization_id = ? AND contacts.id = ?", orgID, id)
	if err := scoped(q, orgID, v).Count(&n).Error; err != nil {
		return err
	}
	if n == 0 {
		return apperr.NotFoundf("contact not found")
	}
	return nil
}
